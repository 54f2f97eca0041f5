//! A fixture web server on 127.0.0.1 for the `web` skill's tests: each
//! route answers with a status, headers and a body (usually a file from
//! `tests/fixtures/web/`), and every request's path and headers are recorded
//! so tests can check what the skill sent.

use crate::server::{Response, Server};
use std::collections::HashMap;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

/// The folder of the web fixtures.
pub fn fixtures() -> PathBuf {
    crate::workspace().join("tests/fixtures/web")
}

/// A fixture file's bytes.
///
/// # Panics
/// When the file does not exist.
pub fn fixture(name: &str) -> Vec<u8> {
    let path = fixtures().join(name);
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// One answer of the server.
#[derive(Clone, Debug)]
pub struct Route {
    path: String,
    status: u16,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl Route {
    /// `path` answers 200 with `body` and this `Content-Type` (`None`: no header).
    pub fn bytes(path: &str, content_type: Option<&str>, body: impl Into<Vec<u8>>) -> Self {
        let headers = content_type
            .map(|ct| vec![("Content-Type".to_owned(), ct.to_owned())])
            .unwrap_or_default();
        Route { path: path.to_owned(), status: 200, headers, body: body.into() }
    }

    /// `path` answers 200 with a file from `tests/fixtures/web/`.
    pub fn file(path: &str, name: &str, content_type: &str) -> Self {
        Self::bytes(path, Some(content_type), fixture(name))
    }

    /// `path` answers 302 with `Location: to`. In `to`, `{port}` becomes the
    /// server's port, so a test can name another address on the same port.
    pub fn redirect(path: &str, to: &str) -> Self {
        Route {
            path: path.to_owned(),
            status: 302,
            headers: vec![("Location".to_owned(), to.to_owned())],
            body: Vec::new(),
        }
    }

    /// Answer with this status instead of 200.
    pub fn status(mut self, status: u16) -> Self {
        self.status = status;
        self
    }
}

/// A request the server received.
#[derive(Clone, Debug)]
pub struct Received {
    /// Path and query.
    pub path: String,
    /// Header names in lower case.
    pub headers: HashMap<String, String>,
}

/// The server. Paths without a route answer 404 with a short HTML page.
pub struct Pages {
    /// Where it listens.
    pub addr: SocketAddr,
    received: Arc<Mutex<Vec<Received>>>,
}

impl Pages {
    /// Serve `routes` on an ephemeral port of 127.0.0.1.
    pub fn start(routes: Vec<Route>) -> Self {
        let routes: HashMap<String, Route> =
            routes.into_iter().map(|r| (r.path.clone(), r)).collect();
        let received = Arc::new(Mutex::new(Vec::new()));
        let log = Arc::clone(&received);
        let server = Server::start(move |request| {
            let path = request.target.clone();
            let headers = request.headers.iter().cloned().collect();
            log.lock().expect("lock").push(Received { path: path.clone(), headers });
            let missing;
            let route = match routes.get(&path) {
                Some(route) => route,
                None => {
                    missing = Route::bytes(
                        &path,
                        Some("text/html; charset=utf-8"),
                        "<html><body><h1>404</h1></body></html>",
                    )
                    .status(404);
                    &missing
                }
            };
            let port = request.server.port().to_string();
            let mut answer = Response::new(route.status).close();
            for (name, value) in &route.headers {
                answer = answer.header(name, value.replace("{port}", &port));
            }
            answer.body(route.body.clone())
        });
        Pages { addr: server.addr, received }
    }

    /// `http://127.0.0.1:PORT<path>`.
    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    /// The `net` grant for this server: `127.0.0.1:PORT`.
    pub fn grant(&self) -> String {
        self.addr.to_string()
    }

    /// Requests received so far, oldest first.
    pub fn received(&self) -> Vec<Received> {
        self.received.lock().expect("lock").clone()
    }
}
