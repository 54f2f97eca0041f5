//! A scripted OpenAI Chat Completions server on 127.0.0.1: the harness
//! talks real HTTP to it, and it answers each `POST …/chat/completions`
//! with the next scripted reply, recording every request body. This stands
//! in for a hosted model, which cannot run here.

use crate::server::{Response, Server};
use serde_json::{Value, json};
use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

/// One scripted reply.
#[derive(Clone, Debug)]
pub enum Reply {
    /// HTTP 200 with this chat completion body.
    Ok(Value),
    /// This status and body (e.g. 429 or 500), with an optional `Retry-After`.
    Status(u16, String, Option<u64>),
}

impl Reply {
    /// An assistant message with text only.
    pub fn text(content: &str) -> Reply {
        Reply::Ok(completion(json!({"role": "assistant", "content": content})))
    }

    /// An assistant message calling `name` with `arguments` (raw text, so
    /// tests can send broken JSON).
    pub fn call(name: &str, arguments: &str) -> Reply {
        Reply::calls(&[(name, arguments)])
    }

    /// An assistant message with several calls.
    pub fn calls(calls: &[(&str, &str)]) -> Reply {
        let calls: Vec<Value> = calls
            .iter()
            .enumerate()
            .map(|(i, (name, args))| {
                json!({
                    "id": format!("call_{i}"), "type": "function",
                    "function": {"name": name, "arguments": args}
                })
            })
            .collect();
        Reply::Ok(completion(json!({"role": "assistant", "content": null, "tool_calls": calls})))
    }
}

impl Reply {
    /// This reply with the usage a server would report for it.
    pub fn with_usage(self, prompt_tokens: u64, completion_tokens: u64) -> Reply {
        match self {
            Reply::Ok(mut v) => {
                v["usage"] = json!({
                    "prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                    "total_tokens": prompt_tokens + completion_tokens
                });
                Reply::Ok(v)
            }
            other => other,
        }
    }
}

/// Decides the reply to each chat request from its body.
pub type Responder = Arc<dyn Fn(&Value) -> Reply + Send + Sync>;

/// The first user message of a request: the task, or a worker's brief.
pub fn brief(body: &Value) -> String {
    body["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|m| m["role"] == "user")
        .and_then(|m| m["content"].as_str())
        .unwrap_or("")
        .to_owned()
}

/// The tool results a request carries, in order.
pub fn results(body: &Value) -> Vec<String> {
    body["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["content"].as_str().unwrap_or("").to_owned())
        .collect()
}

/// The arguments of an `agents__delegate` call asking `agent` to do
/// `task` and answer `{"text": …}`.
pub fn delegate(agent: &str, task: &str) -> String {
    json!({
        "agent": agent, "task": task, "expected_output": "the text",
        "return_format": {
            "type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]
        }
    })
    .to_string()
}

fn completion(message: Value) -> Value {
    json!({
        "id": "chatcmpl-test", "object": "chat.completion", "model": "scripted",
        "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120}
    })
}

/// The running server.
pub struct ScriptedModel {
    /// Where it listens.
    pub addr: SocketAddr,
    requests: Arc<Mutex<Vec<Value>>>,
    remaining: Arc<Mutex<VecDeque<Reply>>>,
    models: Arc<Mutex<Option<Value>>>,
}

impl ScriptedModel {
    /// Serve `replies` in order; after the last, answer 500 "script exhausted".
    pub fn start(replies: Vec<Reply>) -> Self {
        Self::serve(replies, None)
    }

    /// Answer every chat request with `respond(request body)`: for runs
    /// too long or too dependent on what the harness sends to script in order.
    pub fn start_with(respond: impl Fn(&Value) -> Reply + Send + Sync + 'static) -> Self {
        Self::serve(Vec::new(), Some(Arc::new(respond)))
    }

    fn serve(replies: Vec<Reply>, responder: Option<Responder>) -> Self {
        let requests = Arc::new(Mutex::new(Vec::new()));
        let remaining = Arc::new(Mutex::new(VecDeque::from(replies)));
        let models = Arc::new(Mutex::new(None));
        let (req, rem, listed) = (requests.clone(), remaining.clone(), models.clone());
        let server = Server::start(move |request| {
            let json = |status: u16, text: String| {
                Response::new(status).header("Content-Type", "application/json").body(text)
            };
            if request.method == "GET" {
                // `GET /v1/models`: what the server says about its
                // model. Not a chat request: no scripted reply used.
                let listing: Option<Value> = listed.lock().expect("lock").clone();
                return match listing {
                    Some(v) if request.target.contains("/models") => json(200, v.to_string()),
                    _ => json(404, "{\"error\":\"not found\"}".to_owned()),
                };
            }
            let body: Value = serde_json::from_slice(&request.body).unwrap_or(Value::Null);
            req.lock().expect("lock").push(body.clone());
            let reply = match &responder {
                Some(respond) => Some(respond(&body)),
                None => rem.lock().expect("lock").pop_front(),
            };
            match reply {
                Some(Reply::Ok(v)) => json(200, v.to_string()),
                Some(Reply::Status(status, text, retry)) => {
                    let answer = json(status, text);
                    match retry {
                        Some(s) => answer.header("Retry-After", s.to_string()),
                        None => answer,
                    }
                }
                None => json(500, "{\"error\":\"script exhausted\"}".to_owned()),
            }
        });
        ScriptedModel { addr: server.addr, requests, remaining, models }
    }

    /// Answer `GET /v1/models` with `listing` (by default: 404, as a server
    /// that says nothing about its model).
    pub fn set_models(&self, listing: Value) {
        *self.models.lock().expect("lock") = Some(listing);
    }

    /// `http://127.0.0.1:PORT/v1`, the base URL a client wants.
    pub fn base_url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    /// A client for this server, retrying at once (a test waits for nothing).
    pub fn client(&self) -> agent_reach::model::OpenAiClient {
        let mut config = agent_reach::model::OpenAiConfig::new(self.base_url(), "scripted");
        config.retry.base_delay = std::time::Duration::from_millis(1);
        config.retry.max_delay = std::time::Duration::from_millis(5);
        config.retry.max_retry_after = std::time::Duration::from_millis(5);
        agent_reach::model::OpenAiClient::new(config).expect("client")
    }

    /// Every request body received, in order.
    pub fn requests(&self) -> Vec<Value> {
        self.requests.lock().expect("lock").clone()
    }

    /// Scripted replies not yet used.
    pub fn unused(&self) -> usize {
        self.remaining.lock().expect("lock").len()
    }
}
