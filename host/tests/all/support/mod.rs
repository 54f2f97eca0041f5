//! A real HTTP server on 127.0.0.1 that answers from a script and records
//! every request, shared by the test binaries that talk to a model.
#![allow(dead_code)] // each test binary uses its own part of it

use serde_json::{Value, json};
use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
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

pub struct Server {
    pub base: String,
    requests: Arc<Mutex<Vec<Recorded>>>,
}

impl Server {
    /// A server that answers its requests with `script` in order, then with
    /// 418 (not retried), so a test that asks too often fails visibly.
    pub fn start(script: Vec<Reply>) -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let requests = Arc::new(Mutex::new(Vec::new()));
        let recorded = Arc::clone(&requests);
        let mut script = VecDeque::from(script);
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { continue };
                serve(stream, &mut script, &recorded);
            }
        });
        Server { base, requests }
    }

    pub fn requests(&self) -> std::sync::MutexGuard<'_, Vec<Recorded>> {
        self.requests.lock().unwrap()
    }
}

/// Reads one request, records it, then answers: recording first, so a test
/// that counts requests as soon as its client returns sees them all.
/// A `GET` (a client asking `/models` what the server serves) is answered
/// 404 without using a scripted reply or being recorded.
fn serve(
    stream: TcpStream,
    script: &mut VecDeque<Reply>,
    recorded: &Mutex<Vec<Recorded>>,
) -> Option<()> {
    let mut reader = BufReader::new(stream.try_clone().ok()?);
    let mut line = String::new();
    reader.read_line(&mut line).ok()?;
    let first = line.clone();
    let path = line.split_whitespace().nth(1)?.to_owned();
    let mut headers = Vec::new();
    loop {
        line.clear();
        reader.read_line(&mut line).ok()?;
        let Some((name, value)) = line.trim_end().split_once(':') else { break };
        headers.push((name.to_ascii_lowercase(), value.trim().to_owned()));
    }
    let length: usize =
        headers.iter().find(|(n, _)| n == "content-length").map_or(0, |(_, v)| v.parse().unwrap());
    let mut body = vec![0; length];
    reader.read_exact(&mut body).ok()?;
    let reply = if line_is_get(&first) {
        status(404, "not found")
    } else {
        recorded.lock().unwrap().push(Recorded {
            path,
            headers,
            body: String::from_utf8(body).ok()?,
        });
        script.pop_front().unwrap_or_else(|| status(418, "no scripted reply left"))
    };
    let mut stream = stream;
    match reply {
        Reply::Http(code, extra, body) => {
            let mut head = format!(
                "HTTP/1.1 {code} Scripted\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n",
                body.len()
            );
            for (name, value) in extra {
                head.push_str(&format!("{name}: {value}\r\n"));
            }
            let _ = stream.write_all(format!("{head}\r\n{body}").as_bytes());
        }
        Reply::Silent(delay) => std::thread::sleep(delay),
    }
    Some(())
}

/// A Chat Completions response body carrying `message`, with `usage` if given.
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

/// A built skill component (`just test-skills` builds them).
pub fn wasm(crate_name: &str) -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("target"));
    let path = target.join("wasm32-wasip2/release").join(format!("{crate_name}.wasm"));
    assert!(path.exists(), "{} is missing: run `just test-skills` first", path.display());
    path
}

fn line_is_get(request_line: &str) -> bool {
    request_line.starts_with("GET ")
}
