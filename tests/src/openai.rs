//! A scripted OpenAI Chat Completions server on 127.0.0.1: the harness
//! talks real HTTP to it, and it answers each `POST …/chat/completions`
//! with the next scripted reply, recording every request body. This stands
//! in for a hosted model, which cannot run here.

use serde_json::{Value, json};
use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener};
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
            .map(|(i, (name, args))| json!({"id": format!("call_{i}"), "type": "function", "function": {"name": name, "arguments": args}}))
            .collect();
        Reply::Ok(completion(json!({"role": "assistant", "content": null, "tool_calls": calls})))
    }
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
}

impl ScriptedModel {
    /// Serve `replies` in order; after the last, answer 500 "script exhausted".
    pub fn start(replies: Vec<Reply>) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1");
        let addr = listener.local_addr().expect("addr");
        let requests = Arc::new(Mutex::new(Vec::new()));
        let remaining = Arc::new(Mutex::new(VecDeque::from(replies)));
        let (req, rem) = (requests.clone(), remaining.clone());
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { continue };
                let (req, rem) = (req.clone(), rem.clone());
                std::thread::spawn(move || {
                    let mut reader = BufReader::new(stream.try_clone().expect("clone"));
                    loop {
                        let mut length = 0usize;
                        let mut first = String::new();
                        if reader.read_line(&mut first).map_or(true, |n| n == 0) {
                            return;
                        }
                        loop {
                            let mut line = String::new();
                            if reader.read_line(&mut line).map_or(true, |n| n == 0) || line == "\r\n" {
                                break;
                            }
                            if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                                length = v.trim().parse().unwrap_or(0);
                            }
                        }
                        let mut body = vec![0; length];
                        if reader.read_exact(&mut body).is_err() {
                            return;
                        }
                        req.lock().expect("lock").push(serde_json::from_slice(&body).unwrap_or(Value::Null));
                        let reply = rem.lock().expect("lock").pop_front();
                        let (status, text, retry) = match reply {
                            Some(Reply::Ok(v)) => (200, v.to_string(), None),
                            Some(Reply::Status(s, b, r)) => (s, b, r),
                            None => (500, "{\"error\":\"script exhausted\"}".to_owned(), None),
                        };
                        let retry = retry.map_or(String::new(), |s| format!("Retry-After: {s}\r\n"));
                        let head = format!(
                            "HTTP/1.1 {status} X\r\nContent-Type: application/json\r\n{retry}Content-Length: {}\r\n\r\n",
                            text.len()
                        );
                        if stream.write_all(head.as_bytes()).and_then(|()| stream.write_all(text.as_bytes())).is_err() {
                            return;
                        }
                    }
                });
            }
        });
        ScriptedModel { addr, requests, remaining }
    }

    /// `http://127.0.0.1:PORT/v1`, the base URL a client wants.
    pub fn base_url(&self) -> String {
        format!("http://{}/v1", self.addr)
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
