//! An HTTP server on 127.0.0.1 that records the head of every request it
//! gets, for tests that must check what actually reached the server (for
//! example that the host added a credential, or that it did not).
//!
//! Routes: `/redirect?to=URL` answers 302 to URL; anything else answers 200
//! with a JSON body `{"path": …, "head": …}` echoing the request back, the
//! way "show my headers" endpoints do.

use std::io::{BufRead, BufReader, Write};
use std::net::{SocketAddr, TcpListener};
use std::sync::{Arc, Mutex};

/// A running recording server; the thread ends with the test process.
pub struct Recorder {
    /// Where it listens.
    pub addr: SocketAddr,
    heads: Arc<Mutex<Vec<String>>>,
}

impl Recorder {
    /// Start serving on an ephemeral port.
    pub fn start() -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1");
        let addr = listener.local_addr().expect("addr");
        let heads = Arc::new(Mutex::new(Vec::new()));
        let record = heads.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { continue };
                let record = record.clone();
                std::thread::spawn(move || {
                    let mut reader = BufReader::new(stream.try_clone().expect("clone"));
                    let mut head = String::new();
                    loop {
                        let mut line = String::new();
                        if reader.read_line(&mut line).map_or(true, |n| n == 0) || line == "\r\n" {
                            break;
                        }
                        head.push_str(&line);
                    }
                    // Drain a chunked or sized body so the client is not cut off.
                    let lower = head.to_ascii_lowercase();
                    if let Some(len) = lower.lines().find_map(|l| l.strip_prefix("content-length:")) {
                        let mut body = vec![0; len.trim().parse().unwrap_or(0)];
                        let _ = std::io::Read::read_exact(&mut reader, &mut body);
                    } else if lower.contains("transfer-encoding: chunked") {
                        loop {
                            let mut size = String::new();
                            if reader.read_line(&mut size).map_or(true, |n| n == 0) {
                                break;
                            }
                            let n = usize::from_str_radix(size.trim(), 16).unwrap_or(0);
                            let mut chunk = vec![0; n + 2];
                            let _ = std::io::Read::read_exact(&mut reader, &mut chunk);
                            if n == 0 {
                                break;
                            }
                        }
                    }
                    record.lock().expect("lock").push(head.clone());
                    let path = head.split_whitespace().nth(1).unwrap_or("/").to_owned();
                    let response = if let Some(to) = path.strip_prefix("/redirect?to=") {
                        format!("HTTP/1.1 302 Found\r\nLocation: {to}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
                    } else {
                        let body = serde_json::json!({"path": path, "head": head}).to_string();
                        format!(
                            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nX-Echo-Head: {}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                            head.lines().find(|l| l.to_ascii_lowercase().starts_with("authorization:")).unwrap_or("none"),
                            body.len()
                        )
                    };
                    let _ = stream.write_all(response.as_bytes());
                });
            }
        });
        Recorder { addr, heads }
    }

    /// `http://127.0.0.1:PORT<path>`.
    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    /// The heads of the requests received so far, in order.
    pub fn heads(&self) -> Vec<String> {
        self.heads.lock().expect("lock").clone()
    }
}
