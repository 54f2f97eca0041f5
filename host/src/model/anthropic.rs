//! A [`Model`] for Anthropic's Messages API. The conversation changes shape
//! on the way: system messages become the top-level `system` field, tool
//! calls become `tool_use` blocks, and tool results become `tool_result`
//! blocks of a user message.

use super::api_key::{self, ApiKey};
use super::retry::RetryPolicy;
use super::transport::{Endpoint, Parsed, excerpt, secret_header};
use super::{ChatFuture, ChatRequest, Message, Model, ModelError, Role, ToolCall, ToolSpec, Usage};
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use serde::Deserialize;
use serde_json::{Map, Value, json};
use std::time::Duration;

/// The base URL used when `ANTHROPIC_BASE_URL` is not set.
pub const ANTHROPIC_DEFAULT_BASE_URL: &str = "https://api.anthropic.com";

/// The API version this client speaks (the `anthropic-version` header).
pub const ANTHROPIC_VERSION: &str = "2023-06-01";

/// How to reach Anthropic's Messages API. [`AnthropicConfig::new`] gives the
/// defaults; change fields after it.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct AnthropicConfig {
    /// The API root without `/v1` (a trailing slash is fine); requests go to
    /// `{base_url}/v1/messages`.
    pub base_url: String,
    /// Sent as `x-api-key`. Never printed: `Debug` redacts it.
    pub api_key: Option<ApiKey>,
    /// The model, e.g. `claude-sonnet-4-5`.
    pub model: String,
    /// The answer's token limit, which the API requires (default 4096).
    pub max_tokens: u32,
    /// Sampling temperature (default 0.1); `None` leaves it to the server.
    pub temperature: Option<f32>,
    /// Timeout of one whole request, answer included (default 120 s).
    pub timeout: Duration,
    /// When to ask again after a failure.
    pub retry: RetryPolicy,
}

impl AnthropicConfig {
    /// `model` at [`ANTHROPIC_DEFAULT_BASE_URL`] with `api_key` and the
    /// defaults above.
    pub fn new(api_key: impl Into<ApiKey>, model: impl Into<String>) -> AnthropicConfig {
        AnthropicConfig {
            base_url: ANTHROPIC_DEFAULT_BASE_URL.into(),
            api_key: Some(api_key.into()),
            model: model.into(),
            max_tokens: 4096,
            temperature: Some(0.1),
            timeout: Duration::from_secs(120),
            retry: RetryPolicy::default(),
        }
    }

    /// `model` with the key in `ANTHROPIC_API_KEY`, at `ANTHROPIC_BASE_URL`
    /// if set. Empty variables count as unset.
    pub fn from_env(model: impl Into<String>) -> Result<AnthropicConfig, ModelError> {
        AnthropicConfig::from_lookup(model, |name| std::env::var(name).ok())
    }

    /// [`AnthropicConfig::from_env`] reading variables through `lookup`, so
    /// it can be tested without touching the process environment.
    pub fn from_lookup(
        model: impl Into<String>,
        lookup: impl Fn(&str) -> Option<String>,
    ) -> Result<AnthropicConfig, ModelError> {
        let (base_url, api_key) =
            api_key::from_lookup(lookup, "ANTHROPIC_BASE_URL", "ANTHROPIC_API_KEY");
        // A gateway may hold the key itself; Anthropic never answers without one.
        if base_url.is_none() && api_key.is_none() {
            return Err(ModelError::Config("set ANTHROPIC_API_KEY to use Anthropic's API".into()));
        }
        let mut config = AnthropicConfig::new("", model);
        config.api_key = api_key;
        if let Some(base_url) = base_url {
            config.base_url = base_url;
        }
        Ok(config)
    }
}

/// A client for one model on Anthropic's Messages API.
#[derive(Debug)]
pub struct AnthropicClient {
    config: AnthropicConfig,
    endpoint: Endpoint,
}

impl AnthropicClient {
    /// A client for `config`; fails on a base URL that is not http(s) or a
    /// key that cannot be sent in a header.
    pub fn new(config: AnthropicConfig) -> Result<AnthropicClient, ModelError> {
        let mut headers = HeaderMap::new();
        headers.insert(
            HeaderName::from_static("anthropic-version"),
            HeaderValue::from_static(ANTHROPIC_VERSION),
        );
        if let Some(key) = &config.api_key {
            headers.insert(HeaderName::from_static("x-api-key"), secret_header(key.expose())?);
        }
        let endpoint = Endpoint::new(
            &config.base_url,
            "ANTHROPIC_BASE_URL",
            "v1/messages",
            headers,
            config.timeout,
            &config.retry,
        )?;
        Ok(AnthropicClient { config, endpoint })
    }

    /// A client for `model` configured from the environment
    /// ([`AnthropicConfig::from_env`]).
    pub fn from_env(model: impl Into<String>) -> Result<AnthropicClient, ModelError> {
        AnthropicClient::new(AnthropicConfig::from_env(model)?)
    }

    /// The configuration it was built with.
    pub fn config(&self) -> &AnthropicConfig {
        &self.config
    }
}

impl Model for AnthropicClient {
    fn chat<'a>(&'a self, request: ChatRequest<'a>) -> ChatFuture<'a> {
        Box::pin(self.endpoint.chat(
            request_body(&self.config, request),
            parse_response,
            &self.config.model,
        ))
    }

    fn name(&self) -> &str {
        &self.config.model
    }
}

/// The Messages API request for `request`.
fn request_body(config: &AnthropicConfig, request: ChatRequest<'_>) -> Value {
    let system: Vec<&str> = request
        .messages
        .iter()
        .filter(|m| m.role == Role::System && !m.content.is_empty())
        .map(|m| m.content.as_str())
        .collect();
    let mut body = json!({
        "model": config.model,
        "max_tokens": config.max_tokens,
        "messages": wire_messages(request.messages),
    });
    if !system.is_empty() {
        body["system"] = json!(system.join("\n\n"));
    }
    if let Some(temperature) = config.temperature {
        body["temperature"] = json!(temperature);
    }
    if !request.tools.is_empty() {
        body["tools"] = request.tools.iter().map(wire_tool).collect();
        body["tool_choice"] = json!({"type": "auto"});
    }
    body
}

fn wire_tool(tool: &ToolSpec) -> Value {
    json!({"name": tool.name, "description": tool.description, "input_schema": tool.parameters})
}

/// The conversation as alternating user/assistant turns of content blocks.
/// Consecutive messages that land on the same side are merged into one
/// turn: the API wants all results of one assistant turn's calls in the
/// single user message that follows it.
fn wire_messages(messages: &[Message]) -> Vec<Value> {
    let mut turns: Vec<(&str, Vec<Value>)> = Vec::new();
    for message in messages {
        let (role, blocks) = match message.role {
            Role::System => continue,
            Role::User => ("user", text_block(&message.content).into_iter().collect()),
            Role::Tool => (
                "user",
                vec![json!({
                    "type": "tool_result",
                    "tool_use_id": message.tool_call_id.as_deref().unwrap_or_default(),
                    "content": message.content,
                })],
            ),
            Role::Assistant => {
                let mut blocks: Vec<Value> = text_block(&message.content).into_iter().collect();
                blocks.extend(message.tool_calls.iter().map(|call| {
                    json!({
                        "type": "tool_use",
                        "id": call.id,
                        "name": call.name,
                        "input": tool_input(&call.arguments),
                    })
                }));
                ("assistant", blocks)
            }
        };
        // The API rejects empty turns, and an empty message says nothing;
        // dropping it before merging keeps the turns alternating.
        if blocks.is_empty() {
            continue;
        }
        match turns.last_mut() {
            Some((last, existing)) if *last == role => existing.extend(blocks),
            _ => turns.push((role, blocks)),
        }
    }
    turns.into_iter().map(|(role, blocks)| json!({"role": role, "content": blocks})).collect()
}

/// A text block, or none for empty text (the API rejects empty text blocks).
fn text_block(text: &str) -> Option<Value> {
    (!text.is_empty()).then(|| json!({"type": "text", "text": text}))
}

/// A tool call's arguments as the object `tool_use.input` must be. Text the
/// model wrote that is not a JSON object (broken JSON the loop had to
/// repair) becomes `{}`: the API accepts nothing else, and the tool result
/// that follows already tells the model what was wrong with it.
fn tool_input(arguments: &str) -> Value {
    match serde_json::from_str::<Value>(arguments) {
        Ok(Value::Object(object)) => Value::Object(object),
        _ => Value::Object(Map::new()),
    }
}

#[derive(Deserialize)]
struct WireResponse {
    #[serde(default)]
    model: Option<String>,
    #[serde(default)]
    content: Option<Vec<Value>>,
    #[serde(default)]
    usage: Option<WireUsage>,
    #[serde(default)]
    error: Option<Value>,
}

#[derive(Deserialize)]
struct WireUsage {
    #[serde(default)]
    input_tokens: Option<u64>,
    #[serde(default)]
    output_tokens: Option<u64>,
    #[serde(default)]
    cache_creation_input_tokens: Option<u64>,
    #[serde(default)]
    cache_read_input_tokens: Option<u64>,
}

fn parse_response(text: &str) -> Result<Parsed, String> {
    let wire: WireResponse = serde_json::from_str(text)
        .map_err(|e| format!("not a Messages response ({e}): {}", excerpt(text)))?;
    let Some(blocks) = wire.content else {
        return Err(match wire.error {
            Some(error) => format!("error: {}", excerpt(&error.to_string())),
            None => format!("no content: {}", excerpt(text)),
        });
    };
    let mut content = String::new();
    let mut tool_calls = Vec::new();
    for block in &blocks {
        match block.get("type").and_then(Value::as_str) {
            Some("text") => {
                content.push_str(block.get("text").and_then(Value::as_str).unwrap_or_default())
            }
            Some("tool_use") => {
                let name = block
                    .get("name")
                    .and_then(Value::as_str)
                    .ok_or("a tool_use block without a name")?;
                let id = match block.get("id").and_then(Value::as_str) {
                    Some(id) if !id.is_empty() => id.to_owned(),
                    _ => format!("toolu_{}", tool_calls.len()),
                };
                let arguments =
                    block.get("input").map_or_else(|| "{}".to_owned(), Value::to_string);
                tool_calls.push(ToolCall { id, name: name.to_owned(), arguments });
            }
            // Thinking and other blocks are not part of the answer.
            _ => {}
        }
    }
    // Cached prompt tokens are still tokens the model read; the API counts
    // them apart from `input_tokens`.
    let usage =
        wire.usage.filter(|u| u.input_tokens.is_some() || u.output_tokens.is_some()).map(|u| {
            Usage {
                input_tokens: u.input_tokens.unwrap_or(0)
                    + u.cache_creation_input_tokens.unwrap_or(0)
                    + u.cache_read_input_tokens.unwrap_or(0),
                output_tokens: u.output_tokens.unwrap_or(0),
                estimated: false,
            }
        });
    Ok(Parsed {
        message: Message::assistant(content, tool_calls),
        usage,
        model: wire.model.filter(|m| !m.is_empty()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn from_lookup_needs_a_key_unless_a_gateway_is_set() {
        let err = AnthropicConfig::from_lookup("m", |_| None).unwrap_err().to_string();
        assert!(err.contains("ANTHROPIC_API_KEY"), "{err}");
        let config =
            AnthropicConfig::from_lookup("m", |n| (n == "ANTHROPIC_API_KEY").then(|| "k".into()))
                .unwrap();
        assert_eq!(
            (config.base_url.as_str(), config.api_key.as_ref().map(ApiKey::expose)),
            (ANTHROPIC_DEFAULT_BASE_URL, Some("k"))
        );
    }

    #[test]
    fn debug_redacts_the_key() {
        let config = AnthropicConfig::new("sk-ant-very-secret", "m");
        assert!(!format!("{config:?}").contains("sk-ant-very-secret"));
        let client = AnthropicClient::new(config).unwrap();
        assert!(!format!("{client:?}").contains("sk-ant-very-secret"));
    }

    #[test]
    fn broken_arguments_become_an_empty_input_object() {
        assert_eq!(tool_input(r#"{"path":"a"}"#), json!({"path": "a"}));
        assert_eq!(tool_input(r#"{"path": "a""#), json!({}));
        assert_eq!(tool_input("[1]"), json!({}));
    }

    #[test]
    fn empty_messages_make_no_empty_turns() {
        let wire = wire_messages(&[
            Message::user("a"),
            Message::assistant("", vec![]),
            Message::user("b"),
        ]);
        let blocks = json!([{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]);
        assert_eq!(wire, vec![json!({"role": "user", "content": blocks})]);
    }

    #[test]
    fn cached_tokens_count_as_input() {
        let parsed = parse_response(concat!(
            r#"{"content": [], "usage": {"input_tokens": 5, "cache_read_input_tokens": "#,
            r#"100, "output_tokens": 7}}"#
        ))
        .ok()
        .unwrap();
        assert_eq!(
            parsed.usage,
            Some(Usage { input_tokens: 105, output_tokens: 7, estimated: false })
        );
    }
}
