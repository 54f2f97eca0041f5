//! `reach mcp` on stdio, driven line by line: started in a [`Workspace`],
//! initialized, its stdout read on a thread of its own so a test can wait
//! for a message with a deadline; killed when dropped.

use super::mcp::Workspace;
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

pub struct StdioServer {
    child: Child,
    stdin: Option<ChildStdin>,
    /// Lines from the server's stdout, read on their own thread so a test
    /// can wait for one with a deadline.
    lines: mpsc::Receiver<String>,
}

impl StdioServer {
    /// `reach mcp --no-watch`, initialized.
    pub fn start(ws: &Workspace) -> StdioServer {
        StdioServer::start_with(ws, &["mcp", "--no-watch"], &[])
    }

    /// `reach ARGS…` with `env` added, initialized.
    pub fn start_with(ws: &Workspace, args: &[&str], env: &[(&str, &str)]) -> StdioServer {
        let mut child = ws
            .reach(args)
            .envs(env.iter().copied())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start reach mcp");
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in stdout.lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let mut server = StdioServer { child, stdin: Some(stdin), lines };
        let init = json!({
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "line-test", "version": "1"}
        });
        server.send(json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": init}));
        server.response(1);
        server.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        server
    }

    /// Send one line as it is (which need not be JSON).
    pub fn send_line(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().expect("not hung up");
        writeln!(stdin, "{line}").unwrap();
        stdin.flush().unwrap();
    }

    /// Whether the process is still running.
    pub fn is_running(&mut self) -> bool {
        self.child.try_wait().unwrap().is_none()
    }

    /// The server's process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    pub fn send(&mut self, message: Value) {
        let stdin = self.stdin.as_mut().expect("not hung up");
        writeln!(stdin, "{message}").unwrap();
        stdin.flush().unwrap();
    }

    pub fn call(&mut self, id: u64, name: &str, arguments: Value) {
        self.send(json!({
            "jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": name, "arguments": arguments}
        }));
    }

    /// The response to a `tools/call` (the whole JSON-RPC message).
    pub fn called(&mut self, id: u64, name: &str, arguments: Value) -> Value {
        self.call(id, name, arguments);
        self.response(id)
    }

    /// The names `tools/list` returns.
    pub fn tools(&mut self, id: u64) -> Vec<String> {
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": "tools/list"}));
        let listed = self.response(id);
        let tools = listed["result"]["tools"]
            .as_array()
            .unwrap_or_else(|| panic!("no tools array: {listed}"));
        tools.iter().map(|t| t["name"].as_str().unwrap().to_owned()).collect()
    }

    /// Close stdin, as a client that goes away does; the server's exit.
    pub fn hang_up(&mut self) -> std::process::ExitStatus {
        self.stdin = None;
        self.child.wait().unwrap()
    }

    /// The next message, within a minute.
    fn next(&mut self, waiting_for: &str) -> Value {
        let line = self
            .lines
            .recv_timeout(Duration::from_secs(60))
            .unwrap_or_else(|e| panic!("no {waiting_for} from reach mcp: {e}"));
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON-RPC ({e}): {line}"))
    }

    /// Lines until the response to `id`.
    pub fn response(&mut self, id: u64) -> Value {
        loop {
            let message = self.next(&format!("answer to {id}"));
            if message["id"] == json!(id) {
                return message;
            }
        }
    }

    /// Lines until a notification `method`, within `within`; false if none came.
    pub fn notified(&mut self, method: &str, within: Duration) -> bool {
        let deadline = Instant::now() + within;
        while let Some(left) = deadline.checked_duration_since(Instant::now()) {
            let Ok(line) = self.lines.recv_timeout(left) else { return false };
            let message: Value = serde_json::from_str(&line)
                .unwrap_or_else(|e| panic!("not JSON-RPC ({e}): {line}"));
            if message["method"] == method {
                return true;
            }
        }
        false
    }
}

impl Drop for StdioServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
