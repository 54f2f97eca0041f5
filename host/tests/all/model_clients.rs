//! The model clients against a real HTTP server on 127.0.0.1 that answers
//! from a script and records every request: what goes over the wire, what
//! comes back, and how failures are retried and reported.

use crate::support::{Reply, Server, completion, ok, status};
use agent_reach::model::{
    AnthropicClient, AnthropicConfig, ApiKey, ChatRequest, Message, Model, ModelError,
    OpenAiClient, OpenAiConfig, RetryPolicy, ToolCall, ToolSpec, Usage,
};
use serde_json::{Value, json};
use std::net::TcpListener;
use std::time::{Duration, Instant};

/// Retries without real waiting: a test that sleeps is a slow test.
fn fast_retry(max_retries: u32) -> RetryPolicy {
    RetryPolicy {
        max_retries,
        base_delay: Duration::from_millis(1),
        max_delay: Duration::from_millis(2),
        max_retry_after: Duration::from_millis(2),
    }
}

fn openai(server: &Server, key: Option<&str>) -> OpenAiClient {
    // The trailing slash is deliberate: operators write it.
    let mut config = OpenAiConfig::new(format!("{}/v1/", server.base), "local-model");
    config.api_key = key.map(ApiKey::from);
    config.retry = fast_retry(3);
    OpenAiClient::new(config).unwrap()
}

fn read_tool() -> ToolSpec {
    ToolSpec {
        name: "files__read".into(),
        description: "Read a file.".into(),
        parameters: json!({
            "type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]
        }),
    }
}

fn openai_tool_call_reply() -> Reply {
    let call = json!({
        "id": "call_abc", "type": "function",
        "function": {"name": "files__read", "arguments": "{\"path\":\"a.md\"}"}
    });
    ok(completion(
        json!({"role": "assistant", "content": null, "tool_calls": [call]}),
        Some(json!({"prompt_tokens": 120, "completion_tokens": 15, "total_tokens": 135})),
    ))
}

fn openai_text_reply() -> Reply {
    ok(completion(
        json!({"role": "assistant", "content": "It says hello."}),
        Some(json!({"prompt_tokens": 160, "completion_tokens": 5})),
    ))
}

/// The tool-calling conversation both OpenAI shape tests run: task, call,
/// result, answer.
async fn run_tool_conversation(client: &OpenAiClient) {
    let tools = [read_tool()];
    let mut messages = vec![Message::system("You are careful."), Message::user("What is in a.md?")];
    let first = client.chat(ChatRequest { messages: &messages, tools: &tools }).await.unwrap();
    messages.push(first.message.clone());
    messages.push(Message::tool("call_abc", "hello"));
    client.chat(ChatRequest { messages: &messages, tools: &tools }).await.unwrap();
}

#[tokio::test]
async fn openai_tool_call_then_text() {
    let server = Server::start(vec![openai_tool_call_reply(), openai_text_reply()]);
    let client = openai(&server, Some("sk-test"));
    let tools = [read_tool()];
    let messages = [Message::user("What is in a.md?")];

    let first = client.chat(ChatRequest { messages: &messages, tools: &tools }).await.unwrap();
    let call = ToolCall {
        id: "call_abc".into(),
        name: "files__read".into(),
        arguments: r#"{"path":"a.md"}"#.into(),
    };
    assert_eq!(first.message, Message::assistant("", vec![call]));
    assert_eq!(first.usage, Usage { input_tokens: 120, output_tokens: 15, estimated: false });
    assert_eq!(first.model, "served-model");

    let second = client.chat(ChatRequest { messages: &messages, tools: &tools }).await.unwrap();
    assert_eq!(second.message, Message::assistant("It says hello.", vec![]));
    assert_eq!(second.usage.total(), 165);
    assert_eq!(client.name(), "local-model");
}

#[tokio::test]
async fn openai_request_carries_tools_tool_messages_and_bearer() {
    let server = Server::start(vec![openai_tool_call_reply(), openai_text_reply()]);
    run_tool_conversation(&openai(&server, Some("sk-test"))).await;

    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    let second = &requests[1];
    assert_eq!(second.path, "/v1/chat/completions");
    assert_eq!(second.header("authorization"), Some("Bearer sk-test"));
    assert_eq!(second.header("content-type"), Some("application/json"));
    let body = second.json();
    assert_eq!(body["model"], "local-model");
    assert_eq!(body["tool_choice"], "auto");
    assert!((body["temperature"].as_f64().unwrap() - 0.1).abs() < 1e-6, "{body}");
    assert_eq!(
        body["tools"],
        json!([{"type": "function", "function": {
            "name": "files__read",
            "description": "Read a file.",
            "parameters": read_tool().parameters,
        }}])
    );
    assert_eq!(
        body["messages"],
        json!([
            {"role": "system", "content": "You are careful."},
            {"role": "user", "content": "What is in a.md?"},
            {
                "role": "assistant",
                "content": null,
                "tool_calls": [
                    {
                        "id": "call_abc",
                        "type": "function",
                        "function": {"name": "files__read", "arguments": "{\"path\":\"a.md\"}"}
                    }
                ]
            },
            {"role": "tool", "tool_call_id": "call_abc", "content": "hello"}
        ])
    );
}

#[tokio::test]
async fn openai_without_tools_or_key_sends_neither() {
    let server = Server::start(vec![openai_text_reply()]);
    let client = openai(&server, None);
    client.chat(ChatRequest { messages: &[Message::user("hi")], tools: &[] }).await.unwrap();

    let requests = server.requests();
    assert_eq!(requests[0].header("authorization"), None);
    let body = requests[0].json();
    assert!(body.get("tools").is_none() && body.get("tool_choice").is_none(), "{body}");
}

#[tokio::test]
async fn openai_arguments_object_is_reserialised_and_missing_id_made_up() {
    let call = json!({
        "type": "function", "function": {"name": "files__read", "arguments": {"path": "b.md"}}
    });
    let reply =
        completion(json!({"role": "assistant", "content": "Reading.", "tool_calls": [call]}), None);
    let server = Server::start(vec![ok(reply)]);
    let answer = openai(&server, None)
        .chat(ChatRequest { messages: &[Message::user("b?")], tools: &[read_tool()] })
        .await
        .unwrap();
    let call = &answer.message.tool_calls[0];
    assert_eq!(call.arguments, r#"{"path":"b.md"}"#);
    assert!(!call.id.is_empty());
    assert_eq!(answer.message.content, "Reading.");
}

#[tokio::test]
async fn openai_usage_is_estimated_when_the_server_gives_none() {
    let server = Server::start(vec![ok(completion(
        json!({"role": "assistant", "content": "x".repeat(40)}),
        None,
    ))]);
    let answer = openai(&server, None)
        .chat(ChatRequest { messages: &[Message::user("hi")], tools: &[read_tool()] })
        .await
        .unwrap();

    let sent = server.requests()[0].body.chars().count() as u64;
    assert_eq!(
        answer.usage,
        Usage { input_tokens: sent.div_ceil(4), output_tokens: 10, estimated: true }
    );
}

#[tokio::test]
async fn rate_limit_429_waits_as_retry_after_says_then_succeeds() {
    let limited =
        Reply::Http(429, vec![("Retry-After", "1".into())], r#"{"error":"slow down"}"#.into());
    let server = Server::start(vec![limited, openai_text_reply()]);
    let mut config = OpenAiConfig::new(&server.base, "m");
    // Backoff alone would wait ~1 ms; the server's wait (1 s, capped here
    // to 150 ms to keep the test fast) must win.
    config.retry = RetryPolicy { max_retry_after: Duration::from_millis(150), ..fast_retry(3) };
    let client = OpenAiClient::new(config).unwrap();

    let started = Instant::now();
    let answer =
        client.chat(ChatRequest { messages: &[Message::user("hi")], tools: &[] }).await.unwrap();
    let waited = started.elapsed();

    assert_eq!(answer.message.content, "It says hello.");
    assert_eq!(server.requests().len(), 2);
    assert!(waited >= Duration::from_millis(150), "retried after only {waited:?}");
    assert!(waited < Duration::from_secs(1), "Retry-After was not capped: {waited:?}");
}

#[tokio::test]
async fn server_error_three_times_fails_with_status_body_and_attempts() {
    let boom = || status(500, r#"{"error":{"message":"upstream exploded"}}"#);
    let server = Server::start(vec![boom(), boom(), boom(), openai_text_reply()]);
    let mut config = OpenAiConfig::new(&server.base, "m");
    config.retry = fast_retry(2);
    let client = OpenAiClient::new(config).unwrap();

    let err = client
        .chat(ChatRequest { messages: &[Message::user("hi")], tools: &[] })
        .await
        .unwrap_err();
    let text = err.to_string();
    match err {
        ModelError::Status { status, body, attempts, endpoint } => {
            assert_eq!((status, attempts), (500, 3));
            assert!(body.contains("upstream exploded"), "{body}");
            assert!(endpoint.ends_with("/chat/completions"), "{endpoint}");
        }
        other => panic!("expected a status error, got {other:?}"),
    }
    assert!(
        text.contains("HTTP 500")
            && text.contains("3 attempt")
            && text.contains("upstream exploded"),
        "{text}"
    );
    assert_eq!(server.requests().len(), 3, "it must stop after the last retry");
}

#[tokio::test]
async fn client_error_is_not_retried() {
    let server = Server::start(vec![status(401, r#"{"error":"bad key"}"#), openai_text_reply()]);
    let err = openai(&server, Some("sk-wrong"))
        .chat(ChatRequest { messages: &[Message::user("hi")], tools: &[] })
        .await
        .unwrap_err();
    assert!(matches!(err, ModelError::Status { status: 401, attempts: 1, .. }), "{err:?}");
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn connection_refused_is_unreachable_after_retries() {
    // Bind and drop: the port is then (almost certainly) closed.
    let port = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let mut config = OpenAiConfig::new(format!("http://127.0.0.1:{port}/v1"), "m");
    config.retry = fast_retry(2);
    let err = OpenAiClient::new(config)
        .unwrap()
        .chat(ChatRequest { messages: &[Message::user("hi")], tools: &[] })
        .await
        .unwrap_err();
    match &err {
        ModelError::Unreachable { attempts, reason, .. } => {
            assert_eq!(*attempts, 3);
            assert!(reason.to_lowercase().contains("refused"), "{reason}");
        }
        other => panic!("expected Unreachable, got {other:?}"),
    }
}

#[tokio::test]
async fn silent_server_times_out_as_unreachable() {
    let silence = || Reply::Silent(Duration::from_millis(600));
    let server = Server::start(vec![silence(), silence()]);
    let mut config = OpenAiConfig::new(&server.base, "m");
    config.timeout = Duration::from_millis(150);
    config.retry = fast_retry(1);
    let err = OpenAiClient::new(config)
        .unwrap()
        .chat(ChatRequest { messages: &[Message::user("hi")], tools: &[] })
        .await
        .unwrap_err();
    assert!(
        matches!(
            &err,
            ModelError::Unreachable { attempts: 2, reason, .. } if reason.contains("timed out")
        ),
        "{err:?}"
    );
}

#[tokio::test]
async fn a_200_that_is_not_a_completion_is_a_protocol_error() {
    let server = Server::start(vec![status(200, "<html>gateway login</html>")]);
    let err = openai(&server, None)
        .chat(ChatRequest { messages: &[Message::user("hi")], tools: &[] })
        .await
        .unwrap_err();
    assert!(
        matches!(&err, ModelError::Protocol { reason, .. } if reason.contains("gateway login")),
        "{err:?}"
    );
}

fn anthropic(server: &Server) -> AnthropicClient {
    let mut config = AnthropicConfig::new("sk-ant-test", "claude-test");
    config.base_url = format!("{}/", server.base);
    config.retry = fast_retry(3);
    AnthropicClient::new(config).unwrap()
}

fn anthropic_reply(content: Value, usage: Option<Value>) -> Reply {
    let mut body = json!({
        "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-served",
        "content": content, "stop_reason": "tool_use",
    });
    if let Some(usage) = usage {
        body["usage"] = usage;
    }
    ok(body)
}

#[tokio::test]
async fn anthropic_request_has_system_field_blocks_and_headers() {
    let server = Server::start(vec![anthropic_reply(
        json!([{"type": "text", "text": "Both say hi."}]),
        None,
    )]);
    let calls = vec![
        ToolCall {
            id: "toolu_1".into(),
            name: "files__read".into(),
            arguments: r#"{"path":"a.md"}"#.into(),
        },
        ToolCall {
            id: "toolu_2".into(),
            name: "files__read".into(),
            arguments: r#"{"path":"b.md"}"#.into(),
        },
    ];
    let messages = [
        Message::system("You are careful."),
        Message::system("Answer briefly."),
        Message::user("What do a.md and b.md say?"),
        Message::assistant("Reading both.", calls),
        Message::tool("toolu_1", "hi from a"),
        Message::tool("toolu_2", "hi from b"),
    ];
    anthropic(&server)
        .chat(ChatRequest { messages: &messages, tools: &[read_tool()] })
        .await
        .unwrap();

    let requests = server.requests();
    let request = &requests[0];
    assert_eq!(request.path, "/v1/messages");
    assert_eq!(request.header("x-api-key"), Some("sk-ant-test"));
    assert_eq!(request.header("anthropic-version"), Some("2023-06-01"));
    assert_eq!(request.header("authorization"), None);
    let body = request.json();
    assert_eq!(body["model"], "claude-test");
    assert_eq!(body["max_tokens"], 4096);
    assert_eq!(body["system"], "You are careful.\n\nAnswer briefly.");
    assert_eq!(body["tool_choice"], json!({"type": "auto"}));
    assert_eq!(
        body["tools"],
        json!([
            {
                "name": "files__read", "description": "Read a file.",
                "input_schema": read_tool().parameters
            }
        ])
    );
    assert_eq!(
        body["messages"],
        json!([
            {"role": "user", "content": [{"type": "text", "text": "What do a.md and b.md say?"}]},
            {
                "role": "assistant",
                "content": [
                    {"type": "text", "text": "Reading both."},
                    {
                        "type": "tool_use", "id": "toolu_1", "name": "files__read",
                        "input": {"path": "a.md"}
                    },
                    {
                        "type": "tool_use", "id": "toolu_2", "name": "files__read",
                        "input": {"path": "b.md"}
                    }
                ]
            },
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": "toolu_1", "content": "hi from a"},
                    {"type": "tool_result", "tool_use_id": "toolu_2", "content": "hi from b"}
                ]
            }
        ])
    );
}

#[tokio::test]
async fn anthropic_response_text_tool_use_and_usage() {
    let content = json!([
        {"type": "thinking", "thinking": "hmm", "signature": "s"},
        {"type": "text", "text": "Let me look."},
        {"type": "tool_use", "id": "toolu_9", "name": "files__read", "input": {"path": "c.md"}},
    ]);
    let server = Server::start(vec![anthropic_reply(
        content,
        Some(json!({"input_tokens": 321, "output_tokens": 45})),
    )]);
    let client = anthropic(&server);
    let answer = client
        .chat(ChatRequest { messages: &[Message::user("c?")], tools: &[read_tool()] })
        .await
        .unwrap();

    let call = ToolCall {
        id: "toolu_9".into(),
        name: "files__read".into(),
        arguments: r#"{"path":"c.md"}"#.into(),
    };
    assert_eq!(answer.message, Message::assistant("Let me look.", vec![call]));
    assert_eq!(answer.usage, Usage { input_tokens: 321, output_tokens: 45, estimated: false });
    assert_eq!(answer.model, "claude-served");
    assert_eq!(client.name(), "claude-test");
}

#[tokio::test]
async fn anthropic_overloaded_529_is_retried() {
    let overloaded = status(529, r#"{"type":"error","error":{"type":"overloaded_error"}}"#);
    let server = Server::start(vec![
        overloaded,
        anthropic_reply(json!([{"type": "text", "text": "ok"}]), None),
    ]);
    let answer = anthropic(&server)
        .chat(ChatRequest { messages: &[Message::user("hi")], tools: &[] })
        .await
        .unwrap();
    assert_eq!(answer.message.content, "ok");
    assert!(answer.usage.estimated);
    assert_eq!(server.requests().len(), 2);
}
