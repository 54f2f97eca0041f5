//! The fixture server a case's pages are served from: HTTP/1.1 on
//! 127.0.0.1, a port of its own, answering each configured path with its
//! status, content type and body, and 404 for anything else. It records
//! every request so a report can show what the skills asked for.
//!
//! Any local process can reach it, so it holds no more than it must: a
//! request's head must arrive within [`HEADER_TIMEOUT`] (which also closes
//! idle kept-alive connections), a body may be [`MAX_BODY`] bytes (413
//! beyond), a connection lives [`CONNECTION_LIFETIME`] at most, and at most
//! [`MAX_CONNECTIONS`] are open at once — one more is answered 503 and
//! closed, not queued, so a skill sees at once why its request failed.

use super::case::PageSpec;
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::{Request, Response, body::Incoming};
use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Largest request body kept in the record.
const RECORDED_BODY: usize = 4096;

/// Most requests kept in the record; later ones are answered, not kept, so
/// a flood of requests cannot grow the runner's memory without bound.
const RECORDED_REQUESTS: usize = 1000;

/// Time for a request's head (request line and headers) to arrive, and for
/// the next one on a kept-alive connection. A skill on the same machine
/// sends its head at once; a client that dribbles it holds a connection.
pub const HEADER_TIMEOUT: Duration = Duration::from_secs(5);

/// Largest request body: case APIs take small JSON bodies; a bigger one is
/// answered 413 without being read to the end.
pub const MAX_BODY: usize = 1024 * 1024;

/// Longest a connection stays open, whatever it is doing: a client that
/// sends a body slowly or never reads the answer is cut off. Fixture pages
/// come from memory over loopback in well under a second.
pub const CONNECTION_LIFETIME: Duration = Duration::from_secs(60);

/// Most connections open at once. Skills make one request at a time (the
/// `parallel` probe a handful); each connection is a task and a file
/// descriptor of the runner, shared with every other run.
pub const MAX_CONNECTIONS: usize = 32;

/// What one server allows.
#[derive(Clone, Copy, Debug)]
struct Limits {
    header_timeout: Duration,
    lifetime: Duration,
    max_body: usize,
    max_connections: usize,
}

/// The limits of every server [`FixtureServer::start`] starts.
const LIMITS: Limits = Limits {
    header_timeout: HEADER_TIMEOUT,
    lifetime: CONNECTION_LIFETIME,
    max_body: MAX_BODY,
    max_connections: MAX_CONNECTIONS,
};

/// The answer to a connection past [`MAX_CONNECTIONS`], written before it
/// is closed.
const TOO_MANY: &[u8] =
    b"HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain\r\nContent-Length: 49\r\n\
      Connection: close\r\n\r\nthe fixture server has too many open connections\n";

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
        FixtureServer::start_with(LIMITS).await
    }

    /// [`FixtureServer::start`] with other limits (tests use short ones).
    async fn start_with(limits: Limits) -> std::io::Result<FixtureServer> {
        let routes: Routes = Arc::default();
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0)).await?;
        let addr = listener.local_addr()?;
        let seen = Arc::new(Mutex::new(Vec::new()));
        let (serving, record) = (Arc::clone(&routes), Arc::clone(&seen));
        let open = Arc::new(tokio::sync::Semaphore::new(limits.max_connections));
        let task = tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                let Ok(permit) = Arc::clone(&open).try_acquire_owned() else {
                    // Refused, not queued: the answer fits an empty send
                    // buffer, so writing it never waits.
                    let _ = stream.try_write(TOO_MANY);
                    continue;
                };
                let routes = Arc::clone(&serving);
                let record = Arc::clone(&record);
                tokio::spawn(async move {
                    let service = hyper::service::service_fn(move |req| {
                        answer(req, Arc::clone(&routes), Arc::clone(&record), limits.max_body)
                    });
                    let io = hyper_util::rt::TokioIo::new(stream);
                    let connection = hyper::server::conn::http1::Builder::new()
                        .timer(hyper_util::rt::TokioTimer::new())
                        .header_read_timeout(limits.header_timeout)
                        .serve_connection(io, service);
                    // A client that hangs up mid-request, or is cut off, is its own business.
                    let _ = tokio::time::timeout(limits.lifetime, connection).await;
                    drop(permit);
                });
            }
        });
        Ok(FixtureServer { addr, routes, seen, task })
    }

    /// Serve `pages` (bodies from `fixtures` where a page names a fixture file).
    pub fn set_pages(
        &self,
        pages: &BTreeMap<String, PageSpec>,
        fixtures: &Path,
    ) -> std::io::Result<()> {
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

    /// The address it listens on: 127.0.0.1 and [`port`](Self::port).
    pub fn addr(&self) -> SocketAddr {
        self.addr
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
        let bytes = std::fs::read(&file).map_err(|e| {
            std::io::Error::new(e.kind(), format!("fixture {}: {e}", file.display()))
        })?;
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

async fn answer(
    req: Request<Incoming>,
    routes: Routes,
    seen: Arc<Mutex<Vec<Seen>>>,
    max_body: usize,
) -> Result<Response<Full<Bytes>>, hyper::Error> {
    let method = req.method().as_str().to_owned();
    let full = req.uri().path_and_query().map_or("/", |p| p.as_str()).to_owned();
    let path = req.uri().path().to_owned();
    let declared = req
        .headers()
        .get(hyper::header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok()?.parse::<u64>().ok());
    // A declared length over the limit is refused before a byte is read;
    // a chunked body is read up to the limit and refused past it.
    let body = match declared {
        Some(n) if n > max_body as u64 => None,
        _ => match http_body_util::Limited::new(req.into_body(), max_body).collect().await {
            Ok(body) => Some(body.to_bytes()),
            Err(e) if e.is::<http_body_util::LengthLimitError>() => None,
            // The client hung up mid-body; the answer goes nowhere.
            Err(_) => Some(Bytes::new()),
        },
    };
    let Some(body) = body else {
        let text = format!("the request body is larger than {max_body} bytes");
        return Ok(record_and_answer(
            &seen,
            Seen { method, path: full, status: 413, body: String::new() },
            "text/plain".to_owned(),
            Bytes::from(text),
        ));
    };
    let found = {
        let routes = routes.read().unwrap_or_else(|e| e.into_inner());
        routes.get(&full).or_else(|| routes.get(&path)).cloned()
    };
    let (status, content_type, bytes) = match found {
        Some(page) if page.method.as_deref().is_some_and(|m| m != method) => {
            (405, "text/plain".to_owned(), Bytes::from(format!("method {method} not allowed here")))
        }
        Some(page) => (page.status, page.content_type.clone(), page.body.clone()),
        None => (
            404,
            "text/html; charset=utf-8".to_owned(),
            Bytes::from_static(b"<html><body><h1>404 Not Found</h1></body></html>"),
        ),
    };
    let kept = String::from_utf8_lossy(&body[..body.len().min(RECORDED_BODY)]).into_owned();
    Ok(record_and_answer(
        &seen,
        Seen { method, path: full, status, body: kept },
        content_type,
        bytes,
    ))
}

/// Keep `request` in the record (while there is room) and answer it.
fn record_and_answer(
    seen: &Mutex<Vec<Seen>>,
    request: Seen,
    content_type: String,
    bytes: Bytes,
) -> Response<Full<Bytes>> {
    let status = request.status;
    let mut record = seen.lock().unwrap_or_else(|e| e.into_inner());
    if record.len() < RECORDED_REQUESTS {
        record.push(request);
    }
    drop(record);
    Response::builder()
        .status(status)
        .header("Content-Type", content_type)
        .body(Full::new(bytes))
        .unwrap_or_else(|_| Response::new(Full::new(Bytes::new())))
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio::net::TcpStream;

    /// Short limits, so that waiting them out is quick.
    const SHORT: Limits = Limits {
        header_timeout: Duration::from_millis(500),
        lifetime: Duration::from_secs(2),
        max_body: 1000,
        max_connections: 4,
    };

    /// Longest a test waits for the server to act; far past every limit in [`SHORT`].
    const PATIENCE: Duration = Duration::from_secs(10);

    /// A server with [`SHORT`] limits that answers `POST /api` with 201.
    async fn server() -> FixtureServer {
        let server = FixtureServer::start_with(SHORT).await.unwrap();
        let api = PageSpec {
            content: Some("created".into()),
            status: Some(201),
            method: Some("POST".into()),
            ..PageSpec::default()
        };
        server.set_pages(&BTreeMap::from([("/api".to_owned(), api)]), Path::new(".")).unwrap();
        server
    }

    /// Everything the server sends until it closes the connection; `None`
    /// when it is still open after [`PATIENCE`].
    async fn until_closed(stream: &mut TcpStream) -> Option<String> {
        let mut got = Vec::new();
        match tokio::time::timeout(PATIENCE, stream.read_to_end(&mut got)).await {
            Ok(_) => Some(String::from_utf8_lossy(&got).into_owned()),
            Err(_) => None,
        }
    }

    #[tokio::test]
    async fn a_request_head_sent_slowly_is_cut_off_and_an_idle_connection_closed() {
        let server = server().await;
        let mut slow = TcpStream::connect(server.addr()).await.unwrap();
        slow.write_all(b"POST /api HTTP/1.1\r\nHost: fixture\r\n").await.unwrap();
        let started = std::time::Instant::now();
        assert!(
            until_closed(&mut slow).await.is_some(),
            "a head that never ends holds the connection open"
        );
        assert!(started.elapsed() >= SHORT.header_timeout, "closed after {:?}", started.elapsed());

        let mut idle = TcpStream::connect(server.addr()).await.unwrap();
        idle.write_all(b"POST /api HTTP/1.1\r\nHost: fixture\r\nContent-Length: 0\r\n\r\n")
            .await
            .unwrap();
        let answered = until_closed(&mut idle)
            .await
            .expect("a kept-alive connection that sends nothing more is closed");
        assert!(
            answered.starts_with("HTTP/1.1 201"),
            "the request itself was answered: {answered}"
        );
    }

    #[tokio::test]
    async fn a_body_over_the_limit_is_refused_with_413() {
        let server = server().await;
        let big = "x".repeat(SHORT.max_body + 1);
        let declared = format!(
            "POST /api HTTP/1.1\r\nHost: fixture\r\nContent-Length: {}\r\nConnection: close\r\n\r\n\
             {big}",
            big.len()
        );
        let chunked = format!(
            "POST /api HTTP/1.1\r\nHost: fixture\r\nTransfer-Encoding: chunked\r\n\
             Connection: close\r\n\r\n{:x}\r\n{big}\r\n0\r\n\r\n",
            big.len()
        );
        let fits = format!(
            "POST /api HTTP/1.1\r\nHost: fixture\r\nContent-Length: {0}\r\nConnection: close\r\n\
             \r\n{1}",
            SHORT.max_body,
            &big[1..]
        );
        for (request, status) in [(declared, "413"), (chunked, "413"), (fits, "201")] {
            let mut stream = TcpStream::connect(server.addr()).await.unwrap();
            // The server may answer and close before the whole body is sent.
            let _ = stream.write_all(request.as_bytes()).await;
            let answer = until_closed(&mut stream).await.expect("answered and closed");
            assert!(
                answer.starts_with(&format!("HTTP/1.1 {status}")),
                "{}…: {answer}",
                &request[..80]
            );
        }
        let statuses: Vec<u16> = server.seen().iter().map(|s| s.status).collect();
        assert_eq!(statuses, [413, 413, 201]);
    }

    #[tokio::test]
    async fn connections_past_the_cap_are_answered_503_and_served_again_once_one_closes() {
        let server = server().await;
        let mut held = Vec::new();
        for _ in 0..SHORT.max_connections {
            held.push(TcpStream::connect(server.addr()).await.unwrap());
        }
        let mut one_more = TcpStream::connect(server.addr()).await.unwrap();
        let answer = until_closed(&mut one_more).await.expect("refused at once");
        assert!(
            answer.starts_with("HTTP/1.1 503") && answer.ends_with("too many open connections\n"),
            "{answer}"
        );

        held.clear();
        let request =
            b"POST /api HTTP/1.1\r\nHost: fixture\r\nContent-Length: 0\r\nConnection: close\r\n\
              \r\n";
        let deadline = std::time::Instant::now() + PATIENCE;
        loop {
            let mut stream = TcpStream::connect(server.addr()).await.unwrap();
            let _ = stream.write_all(request).await;
            let answer = until_closed(&mut stream).await.unwrap_or_default();
            if answer.starts_with("HTTP/1.1 201") {
                break;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "still refused after the held connections closed: {answer}"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    #[tokio::test]
    async fn a_connection_is_closed_after_its_lifetime_whatever_it_does() {
        let server = server().await;
        let mut stream = TcpStream::connect(server.addr()).await.unwrap();
        // A head, then a body that never comes: the head timeout is over.
        stream
            .write_all(b"POST /api HTTP/1.1\r\nHost: fixture\r\nContent-Length: 10\r\n\r\nxx")
            .await
            .unwrap();
        let started = std::time::Instant::now();
        assert!(
            until_closed(&mut stream).await.is_some(),
            "a body that never ends holds the connection open"
        );
        assert!(
            started.elapsed() >= SHORT.lifetime - Duration::from_millis(200),
            "closed after {:?}",
            started.elapsed()
        );
    }

    #[test]
    fn types_come_from_the_extension() {
        assert_eq!(guess_type("/a.json?x=1"), "application/json");
        assert_eq!(guess_type("/feed.xml"), "application/xml");
        assert_eq!(guess_type("/docs/"), "text/html; charset=utf-8");
        assert_eq!(guess_type("/robots.txt"), "text/plain; charset=utf-8");
    }
}
