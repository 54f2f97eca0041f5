//! The fixture server a case's pages are served from: HTTP/1.1 on
//! 127.0.0.1, a port of its own, answering each configured path with its
//! status, content type and body, and 404 for anything else. It records
//! every request so a report can show what the skills asked for.

use super::case::PageSpec;
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::{Request, Response, body::Incoming};
use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::Path;
use std::sync::{Arc, Mutex};

/// Largest request body kept in the record.
const RECORDED_BODY: usize = 4096;

/// One configured answer.
#[derive(Clone, Debug)]
struct Page {
    status: u16,
    content_type: String,
    body: Bytes,
    method: Option<String>,
}

/// A request the server received.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Seen {
    /// `GET`, `POST`…
    pub method: String,
    /// Path and query.
    pub path: String,
    /// The status answered.
    pub status: u16,
    /// The start of the request body.
    pub body: String,
}

/// The routes, set once the case's placeholders (which need the port) are filled.
type Routes = Arc<std::sync::RwLock<BTreeMap<String, Page>>>;

/// A running fixture server; stops when dropped.
pub struct FixtureServer {
    addr: SocketAddr,
    routes: Routes,
    seen: Arc<Mutex<Vec<Seen>>>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for FixtureServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl FixtureServer {
    /// Bind 127.0.0.1 on a free port and answer 404 to everything until
    /// [`FixtureServer::set_pages`].
    pub async fn start() -> std::io::Result<FixtureServer> {
        let routes: Routes = Arc::default();
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0)).await?;
        let addr = listener.local_addr()?;
        let seen = Arc::new(Mutex::new(Vec::new()));
        let (serving, record) = (Arc::clone(&routes), Arc::clone(&seen));
        let task = tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                let routes = Arc::clone(&serving);
                let record = Arc::clone(&record);
                tokio::spawn(async move {
                    let service = hyper::service::service_fn(move |req| answer(req, Arc::clone(&routes), Arc::clone(&record)));
                    let io = hyper_util::rt::TokioIo::new(stream);
                    // A client that hangs up mid-request is its own business.
                    let _ = hyper::server::conn::http1::Builder::new().serve_connection(io, service).await;
                });
            }
        });
        Ok(FixtureServer { addr, routes, seen, task })
    }

    /// Serve `pages` (bodies from `fixtures` where a page names a fixture file).
    pub fn set_pages(&self, pages: &BTreeMap<String, PageSpec>, fixtures: &Path) -> std::io::Result<()> {
        let mut routes = BTreeMap::new();
        for (path, spec) in pages {
            routes.insert(path.clone(), page(path, spec, fixtures)?);
        }
        *self.routes.write().unwrap_or_else(|e| e.into_inner()) = routes;
        Ok(())
    }

    /// The port it listens on.
    pub fn port(&self) -> u16 {
        self.addr.port()
    }

    /// Every request so far.
    pub fn seen(&self) -> Vec<Seen> {
        self.seen.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }
}

fn page(path: &str, spec: &PageSpec, fixtures: &Path) -> std::io::Result<Page> {
    let (body, default_type) = if let Some(text) = &spec.content {
        (Bytes::from(text.clone()), guess_type(path))
    } else if let Some(json) = &spec.json {
        (Bytes::from(json.to_string()), "application/json")
    } else if let Some(name) = &spec.fixture {
        let file = fixtures.join(name);
        let bytes = std::fs::read(&file).map_err(|e| std::io::Error::new(e.kind(), format!("fixture {}: {e}", file.display())))?;
        (Bytes::from(bytes), guess_type(name))
    } else {
        (Bytes::new(), "text/plain")
    };
    Ok(Page {
        status: spec.status.unwrap_or(200),
        content_type: spec.content_type.clone().unwrap_or_else(|| default_type.to_owned()),
        body,
        method: spec.method.as_ref().map(|m| m.to_ascii_uppercase()),
    })
}

/// A content type from a path's extension; pages without one are HTML.
pub(crate) fn guess_type(path: &str) -> &'static str {
    let path = path.split(['?', '#']).next().unwrap_or(path);
    let ext = path.rsplit_once('.').map(|(_, e)| e.to_ascii_lowercase()).unwrap_or_default();
    match ext.as_str() {
        "json" => "application/json",
        "txt" | "log" | "md" | "csv" => "text/plain; charset=utf-8",
        "xml" | "rss" | "atom" => "application/xml",
        _ => "text/html; charset=utf-8",
    }
}

async fn answer(req: Request<Incoming>, routes: Routes, seen: Arc<Mutex<Vec<Seen>>>) -> Result<Response<Full<Bytes>>, hyper::Error> {
    let method = req.method().as_str().to_owned();
    let full = req.uri().path_and_query().map_or("/", |p| p.as_str()).to_owned();
    let path = req.uri().path().to_owned();
    // The body is read (bounded by the client) so the request is complete.
    let body = req.into_body().collect().await.map(|b| b.to_bytes()).unwrap_or_default();
    let found = {
        let routes = routes.read().unwrap_or_else(|e| e.into_inner());
        routes.get(&full).or_else(|| routes.get(&path)).cloned()
    };
    let (status, content_type, bytes) = match found {
        Some(page) if page.method.as_deref().is_some_and(|m| m != method) => {
            (405, "text/plain".to_owned(), Bytes::from(format!("method {method} not allowed here")))
        }
        Some(page) => (page.status, page.content_type.clone(), page.body.clone()),
        None => (404, "text/html; charset=utf-8".to_owned(), Bytes::from_static(b"<html><body><h1>404 Not Found</h1></body></html>")),
    };
    let kept = String::from_utf8_lossy(&body[..body.len().min(RECORDED_BODY)]).into_owned();
    seen.lock().unwrap_or_else(|e| e.into_inner()).push(Seen { method, path: full, status, body: kept });
    let response = Response::builder()
        .status(status)
        .header("Content-Type", content_type)
        .body(Full::new(bytes))
        .unwrap_or_else(|_| Response::new(Full::new(Bytes::new())));
    Ok(response)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn types_come_from_the_extension() {
        assert_eq!(guess_type("/a.json?x=1"), "application/json");
        assert_eq!(guess_type("/feed.xml"), "application/xml");
        assert_eq!(guess_type("/docs/"), "text/html; charset=utf-8");
        assert_eq!(guess_type("/robots.txt"), "text/plain; charset=utf-8");
    }
}
