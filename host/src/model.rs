//! The model layer: what the harness loop needs from a language model, with
//! no vendor in it. A [`Model`] takes the conversation and the offered tools
//! and answers with an assistant message (text and/or tool calls) and the
//! tokens it used. Clients for OpenAI-compatible Chat Completions servers
//! and for Anthropic's Messages API implement it.

use std::future::Future;
use std::pin::Pin;

mod anthropic;
mod api_key;
pub(crate) mod constrained;
pub(crate) mod context;
mod openai;
mod retry;
mod tokens;
mod transport;

pub use anthropic::{
    ANTHROPIC_DEFAULT_BASE_URL, ANTHROPIC_VERSION, AnthropicClient, AnthropicConfig,
};
pub use api_key::ApiKey;
pub use openai::{OPENAI_DEFAULT_BASE_URL, OpenAiClient, OpenAiConfig};
pub use retry::{RetryPolicy, parse_retry_after, retryable_status};
pub use tokens::{CHARS_PER_TOKEN, estimate_tokens, estimate_usage};

/// Who wrote a message.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// Instructions from the harness.
    System,
    /// The person's task (and the harness speaking for them).
    User,
    /// The model.
    Assistant,
    /// A tool's result, answering one tool call.
    Tool,
}

/// One tool call the model asked for.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ToolCall {
    /// The provider's id for the call, echoed back with its result. Clients
    /// make one up when the server gives none.
    pub id: String,
    /// The tool's name as offered (e.g. `files__read`).
    pub name: String,
    /// The arguments exactly as the model wrote them: JSON text, possibly
    /// broken — the loop repairs and validates it.
    pub arguments: String,
}

/// One message of the conversation.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Message {
    /// Who wrote it.
    pub role: Role,
    /// Its text; may be empty for an assistant message with only tool calls.
    pub content: String,
    /// Tool calls (assistant messages only).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCall>,
    /// The call this message answers (tool messages only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
}

impl Message {
    /// A system message.
    pub fn system(content: impl Into<String>) -> Message {
        Message {
            role: Role::System,
            content: content.into(),
            tool_calls: Vec::new(),
            tool_call_id: None,
        }
    }

    /// A user message.
    pub fn user(content: impl Into<String>) -> Message {
        Message {
            role: Role::User,
            content: content.into(),
            tool_calls: Vec::new(),
            tool_call_id: None,
        }
    }

    /// An assistant message with text and the calls it made.
    pub fn assistant(content: impl Into<String>, tool_calls: Vec<ToolCall>) -> Message {
        Message { role: Role::Assistant, content: content.into(), tool_calls, tool_call_id: None }
    }

    /// The result of tool call `id`.
    pub fn tool(id: impl Into<String>, content: impl Into<String>) -> Message {
        Message {
            role: Role::Tool,
            content: content.into(),
            tool_calls: Vec::new(),
            tool_call_id: Some(id.into()),
        }
    }
}

/// A tool offered to the model.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct ToolSpec {
    /// Name every provider accepts: `[a-zA-Z0-9_-]{1,64}`.
    pub name: String,
    /// What it does, for the model.
    pub description: String,
    /// JSON Schema of its arguments.
    pub parameters: serde_json::Value,
}

/// How tools are offered to an OpenAI-compatible server and how its calls
/// come back.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ToolFormat {
    /// The API's own `tools` and `tool_calls`: the chat template decides
    /// how the model sees the tools and writes its calls.
    #[default]
    Native,
    /// Tools listed in the system message, and every reply constrained to
    /// a JSON Schema that allows exactly a call to an offered tool or the
    /// final answer, read back into tool calls. For servers that constrain
    /// decoding (llama.cpp, vLLM); a server that rejects the schema gets
    /// native requests instead.
    Constrained,
}

impl std::str::FromStr for ToolFormat {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "native" => Ok(ToolFormat::Native),
            "constrained" => Ok(ToolFormat::Constrained),
            other => Err(format!("unknown tool format `{other}`: use `native` or `constrained`")),
        }
    }
}

/// Tokens a request used.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Usage {
    /// Tokens read (the prompt).
    pub input_tokens: u64,
    /// Tokens written (the answer).
    pub output_tokens: u64,
    /// True when the server gave no usage and these are estimates.
    pub estimated: bool,
}

impl Usage {
    /// Input plus output.
    pub fn total(&self) -> u64 {
        self.input_tokens + self.output_tokens
    }
}

/// One request to a model.
#[derive(Clone, Copy, Debug)]
pub struct ChatRequest<'a> {
    /// The conversation so far, system message first.
    pub messages: &'a [Message],
    /// The tools it may call.
    pub tools: &'a [ToolSpec],
}

/// A model's answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChatResponse {
    /// The assistant message: text and/or tool calls.
    pub message: Message,
    /// Tokens used.
    pub usage: Usage,
    /// The model that answered, as the server named it.
    pub model: String,
}

/// Why a model request failed, after any retries.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ModelError {
    /// The server answered with an error status.
    #[error("{endpoint} answered HTTP {status} after {attempts} attempt(s): {body}")]
    Status {
        /// The URL called.
        endpoint: String,
        /// The last HTTP status.
        status: u16,
        /// The start of the last response body.
        body: String,
        /// How many requests were made.
        attempts: u32,
    },
    /// No answer: connection refused, timeout, TLS…
    #[error("could not reach {endpoint} after {attempts} attempt(s): {reason}")]
    Unreachable {
        /// The URL called.
        endpoint: String,
        /// What went wrong the last time.
        reason: String,
        /// How many requests were made.
        attempts: u32,
    },
    /// The server answered 2xx with something that is not a chat response.
    #[error("{endpoint} answered with an unexpected body: {reason}")]
    Protocol {
        /// The URL called.
        endpoint: String,
        /// What was wrong.
        reason: String,
    },
    /// The client is not configured (no base URL, no key…); says how to fix it.
    #[error("{0}")]
    Config(String),
    /// Any other failure, e.g. of an embedder's own [`Model`].
    #[error(transparent)]
    Other(Box<dyn std::error::Error + Send + Sync>),
}

/// The future a [`Model`] returns.
pub type ChatFuture<'a> =
    Pin<Box<dyn Future<Output = Result<ChatResponse, ModelError>> + Send + 'a>>;

/// The future [`Model::context_tokens`] returns.
pub type ContextFuture<'a> = Pin<Box<dyn Future<Output = Option<u64>> + Send + 'a>>;

/// A language model that can call tools.
///
/// The harness sends the whole conversation on every request (system
/// message first, then the task, the model's earlier replies and the tools'
/// results) with the tools on offer, and expects the next assistant
/// message: tool calls to make, or the final answer as text. Implement it
/// to bring a model the bundled clients do not speak to (an in-process
/// engine, another vendor's API, a scripted model for tests).
///
/// ```
/// use agent_reach::model::{
///     ChatFuture, ChatRequest, ChatResponse, Message, Model, Role, ToolCall, estimate_usage,
/// };
///
/// /// Lists the current folder, then answers with what it found.
/// struct Lister;
///
/// impl Model for Lister {
///     fn chat<'a>(&'a self, request: ChatRequest<'a>) -> ChatFuture<'a> {
///         Box::pin(async move {
///             let result = request.messages.iter().rev().find(|m| m.role == Role::Tool);
///             let message = match result {
///                 None => Message::assistant("", vec![ToolCall {
///                     id: "call-1".into(),
///                     name: "files__list".into(),
///                     arguments: r#"{"path": "."}"#.into(),
///                 }]),
///                 Some(listing) => Message::assistant(
///                     format!("The folder holds: {}", listing.content),
///                     Vec::new(),
///                 ),
///             };
///             // No server to count tokens: estimated from the text (token budgets still work).
///             let sent = serde_json::to_string(request.messages).unwrap_or_default();
///             let usage = estimate_usage(&sent, &message);
///             Ok(ChatResponse { message, usage, model: self.name().to_owned() })
///         })
///     }
///
///     fn name(&self) -> &str {
///         "lister"
///     }
/// }
/// ```
pub trait Model: Send + Sync {
    /// Send the conversation and tools; get the assistant's next message.
    /// A tool call names a tool of `request.tools`; its arguments may be
    /// loose JSON (the harness repairs what it can). An `Err` stops the run
    /// ([`Stop::ModelError`](crate::harness::Stop::ModelError)): retry
    /// what is worth retrying before returning one.
    fn chat<'a>(&'a self, request: ChatRequest<'a>) -> ChatFuture<'a>;

    /// How many tokens the model can read at once, when its server says
    /// (the OpenAI-compatible client reads the server's model listing). The
    /// default says nothing.
    fn context_tokens(&self) -> ContextFuture<'_> {
        Box::pin(async { None })
    }

    /// The model's name, for logs and the audit trail.
    fn name(&self) -> &str;
}

impl<M: Model + ?Sized> Model for Box<M> {
    fn chat<'a>(&'a self, request: ChatRequest<'a>) -> ChatFuture<'a> {
        (**self).chat(request)
    }

    fn context_tokens(&self) -> ContextFuture<'_> {
        (**self).context_tokens()
    }

    fn name(&self) -> &str {
        (**self).name()
    }
}

impl<M: Model + ?Sized> Model for std::sync::Arc<M> {
    fn chat<'a>(&'a self, request: ChatRequest<'a>) -> ChatFuture<'a> {
        (**self).chat(request)
    }

    fn context_tokens(&self) -> ContextFuture<'_> {
        (**self).context_tokens()
    }

    fn name(&self) -> &str {
        (**self).name()
    }
}
