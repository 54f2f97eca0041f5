//! What the CLI tests share: a scripted model server on 127.0.0.1 that
//! records every request, and the `reach mcp` tests' workspace and clients
//! ([`mcp`]).

pub mod mcp;
pub mod registry;
pub mod stdio;

use agent_reach_tests::server::Response;
use serde_json::{Value, json};
use std::collections::VecDeque;
use std::path::Path;
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// One scripted answer.
pub enum Reply {
    /// This status, extra headers and body.
    Http(u16, Vec<(&'static str, String)>, String),
    /// Read the request, then say nothing for this long.
    Silent(Duration),
}

pub fn ok(body: Value) -> Reply {
    Reply::Http(200, Vec::new(), body.to_string())
}

pub fn status(code: u16, body: &str) -> Reply {
    Reply::Http(code, Vec::new(), body.to_owned())
}

/// A request as the server saw it.
#[derive(Debug)]
pub struct Recorded {
    pub path: String,
    /// Header names in lower case.
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl Recorded {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
    }

    pub fn json(&self) -> Value {
        serde_json::from_str(&self.body).expect("request body is JSON")
    }
}

/// A scripted model server: [`agent_reach_tests::server`] answering from a
/// script.
pub struct Server {
    pub base: String,
    requests: Arc<Mutex<Vec<Recorded>>>,
}

impl Server {
    /// A server that answers its requests with `script` in order, then with
    /// 418 (not retried), so a test that asks too often fails visibly.
    /// A request is recorded before it is answered, so a test that counts
    /// requests as soon as its client returns sees them all. A `GET` (a
    /// client asking `/models` what the server serves) is answered 404
    /// without using a scripted reply or being recorded.
    pub fn start(script: Vec<Reply>) -> Server {
        let requests = Arc::new(Mutex::new(Vec::new()));
        let recorded = Arc::clone(&requests);
        let script = Mutex::new(VecDeque::from(script));
        let server = agent_reach_tests::server::Server::start(move |request| {
            let reply = if request.method == "GET" {
                status(404, "not found")
            } else {
                recorded.lock().unwrap().push(Recorded {
                    path: request.target.clone(),
                    headers: request.headers.clone(),
                    body: String::from_utf8(request.body.clone()).expect("a UTF-8 body"),
                });
                let next = script.lock().unwrap().pop_front();
                next.unwrap_or_else(|| status(418, "no scripted reply left"))
            };
            match reply {
                Reply::Http(code, extra, body) => {
                    let mut answer = Response::new(code)
                        .header("Content-Type", "application/json")
                        .close()
                        .body(body);
                    for (name, value) in extra {
                        answer = answer.header(name, value);
                    }
                    answer
                }
                Reply::Silent(delay) => Response::silence(delay),
            }
        });
        Server { base: format!("http://{}", server.addr), requests }
    }

    pub fn requests(&self) -> std::sync::MutexGuard<'_, Vec<Recorded>> {
        self.requests.lock().unwrap()
    }
}

/// A Chat Completions response body carrying `message`, with `usage` if given.
/// The scripted model asks for `tool` with `arguments`.
pub fn call(tool: &str, arguments: Value) -> Reply {
    let call = json!({
        "id": "call_1", "type": "function",
        "function": {"name": tool, "arguments": arguments.to_string()}
    });
    ok(completion(
        json!({"role": "assistant", "content": null, "tool_calls": [call]}),
        Some(json!({"prompt_tokens": 900, "completion_tokens": 20})),
    ))
}

/// The scripted model answers in text.
pub fn answer(text: &str) -> Reply {
    ok(completion(
        json!({"role": "assistant", "content": text}),
        Some(json!({"prompt_tokens": 950, "completion_tokens": 10})),
    ))
}

/// `program` run in `dir` with none of the caller's reach or model
/// settings (a developer's `OPENAI_API_KEY` must not reach a test's run),
/// and the tests' shared compile cache.
pub fn isolated(program: impl AsRef<std::ffi::OsStr>, dir: &Path) -> Command {
    let mut command = Command::new(program);
    command.current_dir(dir).env(
        "REACH_CACHE_DIR",
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/test-compile-cache"),
    );
    for name in [
        "REACH_POLICY",
        "REACH_SKILLS",
        "REACH_MCP_TOKEN",
        "OPENAI_BASE_URL",
        "OPENAI_API_KEY",
        "ANTHROPIC_API_KEY",
        "REACH_MODEL",
        "REACH_PROVIDER",
    ] {
        command.env_remove(name);
    }
    command
}

pub fn completion(message: Value, usage: Option<Value>) -> Value {
    let mut body = json!({
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "model": "served-model",
        "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
    });
    if let Some(usage) = usage {
        body["usage"] = usage;
    }
    body
}

/// `reach ARGS` in `dir`, [`isolated`], stdin closed.
pub fn reach(dir: &Path, args: &[&str]) -> std::process::Output {
    isolated(env!("CARGO_BIN_EXE_reach"), dir)
        .args(args)
        .stdin(std::process::Stdio::null())
        .output()
        .expect("run reach")
}
