//! A [`Model`] for any OpenAI-compatible Chat Completions server: OpenAI
//! itself, or a local one (llama.cpp, vLLM, Ollama, LM Studio…) at a base
//! URL such as `http://127.0.0.1:8080/v1`.

use super::api_key::{self, ApiKey};
use super::retry::RetryPolicy;
use super::transport::{Endpoint, Parsed, excerpt, secret_header};
use super::{
    ChatFuture, ChatRequest, ChatResponse, Message, Model, ModelError, Role, ToolCall, ToolFormat,
    ToolSpec, Usage, constrained,
};
use reqwest::header::{AUTHORIZATION, HeaderMap};
use serde::Deserialize;
use serde_json::{Value, json};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

/// The base URL used when `OPENAI_BASE_URL` is not set.
pub const OPENAI_DEFAULT_BASE_URL: &str = "https://api.openai.com/v1";

/// How to reach an OpenAI-compatible server. [`OpenAiConfig::new`] gives the
/// defaults; change fields after it.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct OpenAiConfig {
    /// The API root, up to and including `/v1` (a trailing slash is fine);
    /// requests go to `{base_url}/chat/completions`.
    pub base_url: String,
    /// Sent as `Authorization: Bearer …` when set; local servers often need
    /// none. Never printed: `Debug` redacts it.
    pub api_key: Option<ApiKey>,
    /// The model to ask for, e.g. `gpt-4.1-mini` or whatever a local server
    /// serves.
    pub model: String,
    /// Sampling temperature (default 0.1: tool calling wants steady
    /// answers); `None` leaves it to the server, for models that refuse it.
    pub temperature: Option<f32>,
    /// The answer's token limit; `None` (the default) leaves it to the server.
    pub max_tokens: Option<u32>,
    /// Timeout of one whole request, answer included (default 120 s).
    pub timeout: Duration,
    /// When to ask again after a failure.
    pub retry: RetryPolicy,
    /// How tools are offered and calls come back (default native).
    pub tool_format: ToolFormat,
}

impl OpenAiConfig {
    /// `model` at `base_url`, no key, and the defaults above.
    pub fn new(base_url: impl Into<String>, model: impl Into<String>) -> OpenAiConfig {
        OpenAiConfig {
            base_url: base_url.into(),
            api_key: None,
            model: model.into(),
            temperature: Some(0.1),
            max_tokens: None,
            timeout: Duration::from_secs(120),
            retry: RetryPolicy::default(),
            tool_format: ToolFormat::Native,
        }
    }

    /// `model` at `OPENAI_BASE_URL` (default [`OPENAI_DEFAULT_BASE_URL`])
    /// with the key in `OPENAI_API_KEY`. Empty variables count as unset.
    pub fn from_env(model: impl Into<String>) -> Result<OpenAiConfig, ModelError> {
        OpenAiConfig::from_lookup(model, |name| std::env::var(name).ok())
    }

    /// [`OpenAiConfig::from_env`] reading variables through `lookup`, so it
    /// can be tested without touching the process environment.
    pub fn from_lookup(
        model: impl Into<String>,
        lookup: impl Fn(&str) -> Option<String>,
    ) -> Result<OpenAiConfig, ModelError> {
        let (base_url, api_key) = api_key::from_lookup(lookup, "OPENAI_BASE_URL", "OPENAI_API_KEY");
        // A local server needs no key, but OpenAI itself does: say so now
        // rather than relay a 401 on the first step.
        if base_url.is_none() && api_key.is_none() {
            return Err(ModelError::Config(
                "set OPENAI_API_KEY for api.openai.com, or OPENAI_BASE_URL for another \
                 OpenAI-compatible server (e.g. http://127.0.0.1:8080/v1)"
                    .into(),
            ));
        }
        let mut config =
            OpenAiConfig::new(base_url.unwrap_or_else(|| OPENAI_DEFAULT_BASE_URL.into()), model);
        config.api_key = api_key;
        Ok(config)
    }
}

/// A client for one model on an OpenAI-compatible server.
#[derive(Debug)]
pub struct OpenAiClient {
    config: OpenAiConfig,
    endpoint: Endpoint,
    /// Set when the server refused a constrained request: native from then on.
    native_only: AtomicBool,
    /// Ids for the calls of constrained replies, unique per client.
    next_call: AtomicU64,
}

impl OpenAiClient {
    /// A client for `config`; fails on a base URL that is not http(s) or a
    /// key that cannot be sent in a header.
    pub fn new(config: OpenAiConfig) -> Result<OpenAiClient, ModelError> {
        let mut headers = HeaderMap::new();
        if let Some(key) = &config.api_key {
            headers.insert(AUTHORIZATION, secret_header(&format!("Bearer {}", key.expose()))?);
        }
        let endpoint = Endpoint::new(
            &config.base_url,
            "OPENAI_BASE_URL",
            "chat/completions",
            headers,
            config.timeout,
            &config.retry,
        )?;
        Ok(OpenAiClient {
            config,
            endpoint,
            native_only: AtomicBool::new(false),
            next_call: AtomicU64::new(1),
        })
    }

    /// A client for `model` configured from the environment
    /// ([`OpenAiConfig::from_env`]).
    pub fn from_env(model: impl Into<String>) -> Result<OpenAiClient, ModelError> {
        OpenAiClient::new(OpenAiConfig::from_env(model)?)
    }

    /// The configuration it was built with.
    pub fn config(&self) -> &OpenAiConfig {
        &self.config
    }
}

impl OpenAiClient {
    /// One request with the tools in the system message and the reply
    /// constrained to a call or the answer. `None` when the server refused
    /// the schema (a 400 or 422): the caller asks natively instead.
    async fn chat_constrained(
        &self,
        request: ChatRequest<'_>,
    ) -> Option<Result<ChatResponse, ModelError>> {
        let mut body =
            base_body(&self.config, constrained::wire_messages(request.messages, request.tools));
        body["response_format"] = json!({
            "type": "json_schema",
            "json_schema": {"name": "reply", "schema": constrained::reply_schema(request.tools)},
        });
        match self.endpoint.chat(body, parse_response, &self.config.model).await {
            Err(ModelError::Status { status: 400 | 422, body, .. }) => {
                tracing::warn!(
                    model = %self.config.model,
                    reason = %excerpt(&body),
                    "the server refused a constrained reply; offering tools natively from now on"
                );
                self.native_only.store(true, Ordering::Relaxed);
                None
            }
            Err(err) => Some(Err(err)),
            Ok(mut response) => {
                let id = format!("call_{}", self.next_call.fetch_add(1, Ordering::Relaxed));
                response.message = constrained::from_reply(response.message, id);
                Some(Ok(response))
            }
        }
    }
}

impl Model for OpenAiClient {
    fn chat<'a>(&'a self, request: ChatRequest<'a>) -> ChatFuture<'a> {
        Box::pin(async move {
            let constrained = self.config.tool_format == ToolFormat::Constrained
                && !request.tools.is_empty()
                && !self.native_only.load(Ordering::Relaxed);
            if constrained && let Some(answer) = self.chat_constrained(request).await {
                return answer;
            }
            self.endpoint
                .chat(request_body(&self.config, request), parse_response, &self.config.model)
                .await
        })
    }

    fn context_tokens(&self) -> super::ContextFuture<'_> {
        Box::pin(async move {
            let listing = self.endpoint.get_json("models").await?;
            super::context::from_models_listing(&listing, &self.config.model)
        })
    }

    fn name(&self) -> &str {
        &self.config.model
    }
}

/// The Chat Completions request for `request`.
fn request_body(config: &OpenAiConfig, request: ChatRequest<'_>) -> Value {
    let mut body = base_body(config, request.messages.iter().map(wire_message).collect());
    // Some servers reject an empty `tools` array, and `tool_choice` without
    // tools: send neither when there is nothing to call.
    if !request.tools.is_empty() {
        body["tools"] = request.tools.iter().map(wire_tool).collect();
        body["tool_choice"] = json!("auto");
    }
    body
}

/// Model, messages (already in wire form) and sampling settings: what every
/// request has, whatever the tool format.
fn base_body(config: &OpenAiConfig, messages: Vec<Value>) -> Value {
    let mut body = json!({"model": config.model, "messages": messages});
    if let Some(temperature) = config.temperature {
        body["temperature"] = json!(temperature);
    }
    if let Some(max_tokens) = config.max_tokens {
        body["max_tokens"] = json!(max_tokens);
    }
    body
}

fn wire_tool(tool: &ToolSpec) -> Value {
    json!({
        "type": "function",
        "function": {
            "name": tool.name,
            "description": tool.description,
            "parameters": tool.parameters,
        },
    })
}

fn wire_message(message: &Message) -> Value {
    match message.role {
        Role::System => json!({"role": "system", "content": message.content}),
        Role::User => json!({"role": "user", "content": message.content}),
        Role::Assistant if message.tool_calls.is_empty() => {
            json!({"role": "assistant", "content": message.content})
        }
        Role::Assistant => {
            let calls: Vec<Value> = message
                .tool_calls
                .iter()
                .map(|call| {
                    let function = json!({"name": call.name, "arguments": call.arguments});
                    json!({"id": call.id, "type": "function", "function": function})
                })
                .collect();
            // The API wants `null`, not "", for a message that only calls tools.
            let content =
                if message.content.is_empty() { Value::Null } else { json!(message.content) };
            json!({"role": "assistant", "content": content, "tool_calls": calls})
        }
        Role::Tool => json!({
            "role": "tool",
            "tool_call_id": message.tool_call_id.as_deref().unwrap_or_default(),
            "content": message.content,
        }),
    }
}

#[derive(Deserialize)]
struct WireResponse {
    #[serde(default)]
    model: Option<String>,
    #[serde(default)]
    choices: Vec<WireChoice>,
    #[serde(default)]
    usage: Option<WireUsage>,
    #[serde(default)]
    error: Option<Value>,
}

#[derive(Deserialize)]
struct WireChoice {
    message: WireMessage,
}

#[derive(Deserialize)]
struct WireMessage {
    #[serde(default)]
    content: Option<Value>,
    #[serde(default)]
    tool_calls: Option<Vec<WireToolCall>>,
}

#[derive(Deserialize)]
struct WireToolCall {
    #[serde(default)]
    id: Option<String>,
    function: WireFunction,
}

#[derive(Deserialize)]
struct WireFunction {
    name: String,
    #[serde(default)]
    arguments: Option<Value>,
}

#[derive(Deserialize)]
struct WireUsage {
    #[serde(default)]
    prompt_tokens: Option<u64>,
    #[serde(default)]
    completion_tokens: Option<u64>,
}

fn parse_response(text: &str) -> Result<Parsed, String> {
    let wire: WireResponse = serde_json::from_str(text)
        .map_err(|e| format!("not a chat completion ({e}): {}", excerpt(text)))?;
    let Some(choice) = wire.choices.into_iter().next() else {
        // Some proxies answer 200 with an error object instead of a status.
        return Err(match wire.error {
            Some(error) => format!("error: {}", excerpt(&error.to_string())),
            None => format!("no choices: {}", excerpt(text)),
        });
    };
    let tool_calls = choice
        .message
        .tool_calls
        .unwrap_or_default()
        .into_iter()
        .enumerate()
        .map(|(i, call)| ToolCall {
            id: call.id.filter(|id| !id.is_empty()).unwrap_or_else(|| format!("call_{i}")),
            name: call.function.name,
            arguments: arguments_text(call.function.arguments),
        })
        .collect();
    let message = Message::assistant(content_text(choice.message.content), tool_calls);
    // A server that reports neither count reported nothing: estimate.
    let usage = wire
        .usage
        .filter(|u| u.prompt_tokens.is_some() || u.completion_tokens.is_some())
        .map(|u| Usage {
            input_tokens: u.prompt_tokens.unwrap_or(0),
            output_tokens: u.completion_tokens.unwrap_or(0),
            estimated: false,
        });
    Ok(Parsed { message, usage, model: wire.model.filter(|m| !m.is_empty()) })
}

/// Arguments as JSON text: the spec says a string, but some servers send
/// the object itself.
fn arguments_text(arguments: Option<Value>) -> String {
    match arguments {
        Some(Value::String(text)) => text,
        None | Some(Value::Null) => "{}".into(),
        Some(other) => other.to_string(),
    }
}

/// Message content as text: a string, `null`, or (some servers) an array of
/// `{"type":"text","text":…}` parts.
fn content_text(content: Option<Value>) -> String {
    match content {
        Some(Value::String(text)) => text,
        Some(Value::Array(parts)) => {
            parts.iter().filter_map(|part| part.get("text")?.as_str()).collect()
        }
        _ => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn from_lookup_needs_a_key_or_a_base_url() {
        let err = OpenAiConfig::from_lookup("m", |_| None).unwrap_err().to_string();
        assert!(err.contains("OPENAI_API_KEY") && err.contains("OPENAI_BASE_URL"), "{err}");

        let base =
            |n: &str| (n == "OPENAI_BASE_URL").then(|| "http://127.0.0.1:8080/v1".to_owned());
        let local = OpenAiConfig::from_lookup("m", base).unwrap();
        assert_eq!(
            (local.base_url.as_str(), local.api_key.as_ref().map(ApiKey::expose)),
            ("http://127.0.0.1:8080/v1", None)
        );

        let hosted = OpenAiConfig::from_lookup("m", |n| match n {
            "OPENAI_API_KEY" => Some("sk-secret".into()),
            "OPENAI_BASE_URL" => Some("  ".into()),
            _ => None,
        });
        let hosted = hosted.unwrap();
        assert_eq!(
            (hosted.base_url.as_str(), hosted.api_key.as_ref().map(ApiKey::expose)),
            (OPENAI_DEFAULT_BASE_URL, Some("sk-secret"))
        );
    }

    #[test]
    fn debug_redacts_the_key() {
        let mut config = OpenAiConfig::new("http://h/v1", "m");
        config.api_key = Some("sk-very-secret".into());
        let printed = format!("{config:?}");
        assert!(!printed.contains("sk-very-secret"), "{printed}");
        assert!(printed.contains("api_key: Some(<redacted>)"), "{printed}");
        let client = OpenAiClient::new(config).unwrap();
        assert!(!format!("{client:?}").contains("sk-very-secret"));
    }

    #[test]
    fn arguments_given_as_an_object_become_text() {
        assert_eq!(arguments_text(Some(json!({"path": "a"}))), r#"{"path":"a"}"#);
        assert_eq!(arguments_text(Some(json!("{\"path\": broken"))), "{\"path\": broken");
        assert_eq!(arguments_text(None), "{}");
    }

    #[test]
    fn content_parts_are_joined() {
        let parts = json!([
            {"type": "text", "text": "a"},
            {"type": "image_url"},
            {"type": "text", "text": "b"},
        ]);
        assert_eq!(content_text(Some(parts)), "ab");
        assert_eq!(content_text(Some(Value::Null)), "");
    }

    #[test]
    fn a_200_with_an_error_object_is_a_protocol_error() {
        let err = parse_response(r#"{"error": {"message": "model not loaded"}}"#).err().unwrap();
        assert!(err.contains("model not loaded"), "{err}");
        let err = parse_response("<html>").err().unwrap();
        assert!(err.contains("<html>"), "{err}");
    }
}
