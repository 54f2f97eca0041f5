//! The one HTTP server of the tests: hyper on an ephemeral port of
//! 127.0.0.1, answering each request with what a test's handler returns.
//! The scripted model servers, the web fixture pages and the recording
//! servers are handlers over it, so no test code parses HTTP itself.
//!
//! It runs on a thread of its own with its own runtime, so synchronous tests
//! (the CLI's, which run `reach` as a process) and async ones use it alike;
//! the thread ends with the test process.

use bytes::Bytes;
use http_body_util::combinators::WithTrailers;
use http_body_util::{BodyExt as _, Full};
use hyper::body::Incoming;
use hyper_util::rt::TokioIo;
use std::convert::Infallible;
use std::future::Ready;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

/// A request as the server received it.
#[derive(Clone, Debug)]
pub struct Request {
    /// `GET`, `POST`, …
    pub method: String,
    /// Path and query, as sent.
    pub target: String,
    /// Header names in lower case, in the order received (values of one
    /// name together); values not in UTF-8 are read lossily.
    pub headers: Vec<(String, String)>,
    /// The whole body.
    pub body: Vec<u8>,
    /// The address the request came in on (the server's own).
    pub server: SocketAddr,
}

impl Request {
    /// The first value of header `name` (lower case).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
    }

    /// The request line and header lines, each ending in CRLF, as a server
    /// that echoes the request back shows them.
    pub fn head(&self) -> String {
        let mut head = format!("{} {} HTTP/1.1\r\n", self.method, self.target);
        for (name, value) in &self.headers {
            head.push_str(&format!("{name}: {value}\r\n"));
        }
        head
    }
}

/// What the server answers.
#[derive(Clone, Debug)]
pub struct Response {
    status: u16,
    headers: Vec<(String, Vec<u8>)>,
    body: Vec<u8>,
    trailers: Vec<(String, String)>,
    delay: Duration,
    silent: bool,
}

impl Response {
    /// `status` with no header and an empty body; hyper adds
    /// `Content-Length` (or chunks a body with trailers).
    pub fn new(status: u16) -> Self {
        Response {
            status,
            headers: Vec::new(),
            body: Vec::new(),
            trailers: Vec::new(),
            delay: Duration::ZERO,
            silent: false,
        }
    }

    /// Read the request, then say nothing for `delay` and close the
    /// connection: a server that hangs.
    pub fn silence(delay: Duration) -> Self {
        Response { silent: true, ..Response::new(500).after(delay) }
    }

    /// Add a header. The value is bytes, so a test can send one that is not
    /// ASCII.
    pub fn header(mut self, name: &str, value: impl Into<Vec<u8>>) -> Self {
        self.headers.push((name.to_owned(), value.into()));
        self
    }

    /// `Connection: close`: one request per connection.
    pub fn close(self) -> Self {
        self.header("Connection", "close")
    }

    /// The body.
    pub fn body(mut self, body: impl Into<Vec<u8>>) -> Self {
        self.body = body.into();
        self
    }

    /// Send the body chunked, followed by this trailer (declared in a
    /// `Trailer` header). The server sends trailers on the first request of
    /// a connection whether or not the client asked for them (`TE:
    /// trailers`), as servers may: tests check what the host does with them.
    pub fn trailer(mut self, name: &str, value: &str) -> Self {
        if self.trailers.is_empty() {
            self = self.header("Transfer-Encoding", "chunked");
        }
        self.trailers.push((name.to_owned(), value.to_owned()));
        self.header("Trailer", name)
    }

    /// Answer only after `delay`.
    pub fn after(mut self, delay: Duration) -> Self {
        self.delay = delay;
        self
    }
}

/// Decides the answer to each request.
type Handler = Arc<dyn Fn(&Request) -> Response + Send + Sync>;

type Body = WithTrailers<Full<Bytes>, Ready<Option<Result<http::HeaderMap, Infallible>>>>;

/// A running server.
pub struct Server {
    /// Where it listens.
    pub addr: SocketAddr,
}

impl Server {
    /// Serve every request with `handler` on an ephemeral port, each
    /// connection on its own task.
    ///
    /// # Panics
    /// When 127.0.0.1 has no port to give.
    pub fn start(handler: impl Fn(&Request) -> Response + Send + Sync + 'static) -> Server {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1");
        listener.set_nonblocking(true).expect("non-blocking listener");
        let addr = listener.local_addr().expect("addr");
        let handler: Handler = Arc::new(handler);
        std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("test server runtime");
            runtime.block_on(accept(listener, handler, addr));
        });
        Server { addr }
    }

    /// `http://127.0.0.1:PORT<path>`.
    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }
}

async fn accept(listener: std::net::TcpListener, handler: Handler, addr: SocketAddr) {
    let listener = tokio::net::TcpListener::from_std(listener).expect("tokio listener");
    loop {
        let Ok((stream, _)) = listener.accept().await else { continue };
        let handler = Arc::clone(&handler);
        let first = Arc::new(AtomicBool::new(true));
        let service = hyper::service::service_fn(move |request| {
            let asked = !first.swap(false, Ordering::SeqCst);
            respond(Arc::clone(&handler), request, addr, asked)
        });
        tokio::spawn(async move {
            // A client that gives up mid-answer is the test's business.
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(TrailersAllowed::new(stream)), service)
                .await;
        });
    }
}

/// The server has no answer to give (a silent reply, or a handler that
/// panicked): hyper closes the connection.
#[derive(Debug)]
struct Silent;

impl std::fmt::Display for Silent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("silent by script")
    }
}

impl std::error::Error for Silent {}

/// Read `request`, ask the handler, answer. `client_asked` is false on a
/// connection's first request, whose `TE: trailers` the server added
/// itself (see [`TrailersAllowed`]) and the handler must not see.
async fn respond(
    handler: Handler,
    request: hyper::Request<Incoming>,
    server: SocketAddr,
    client_asked: bool,
) -> Result<hyper::Response<Body>, Silent> {
    let (parts, body) = request.into_parts();
    let body = body.collect().await.map_err(|_| Silent)?.to_bytes().to_vec();
    let mut headers: Vec<(String, String)> = parts
        .headers
        .iter()
        .map(|(n, v)| (n.as_str().to_owned(), String::from_utf8_lossy(v.as_bytes()).into_owned()))
        .collect();
    if !client_asked && let Some(at) = headers.iter().position(|(n, _)| n == "te") {
        headers.remove(at);
    }
    let target = parts.uri.path_and_query().map_or("/", |p| p.as_str()).to_owned();
    let request = Request { method: parts.method.to_string(), target, headers, body, server };
    // A handler may block (a scripted model "thinking"): on a thread of
    // its own, so the other connections are answered meanwhile, as by a
    // real server.
    let answer =
        tokio::task::spawn_blocking(move || handler(&request)).await.map_err(|_| Silent)?;
    tokio::time::sleep(answer.delay).await;
    if answer.silent {
        return Err(Silent);
    }
    let mut trailers = http::HeaderMap::new();
    for (name, value) in &answer.trailers {
        trailers.append(
            http::HeaderName::from_bytes(name.as_bytes()).expect("trailer name"),
            http::HeaderValue::from_str(value).expect("trailer value"),
        );
    }
    let trailers = (!trailers.is_empty()).then_some(Ok(trailers));
    let mut response = hyper::Response::builder().status(answer.status);
    for (name, value) in &answer.headers {
        response = response.header(name, http::HeaderValue::from_bytes(value).expect("header"));
    }
    let body = Full::new(Bytes::from(answer.body)).with_trailers(std::future::ready(trailers));
    Ok(response.body(body).expect("a valid response"))
}

/// hyper writes trailers only to a client that sent `TE: trailers`; a
/// connection whose first request line gets that header added right after
/// it, so a test can send trailers to a client that did not ask.
struct TrailersAllowed<S> {
    stream: S,
    /// Bytes read until the end of the first line, then those bytes with the
    /// header added, handed out before reading on.
    held: Vec<u8>,
    added: bool,
}

impl<S> TrailersAllowed<S> {
    fn new(stream: S) -> Self {
        TrailersAllowed { stream, held: Vec::new(), added: false }
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for TrailersAllowed<S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let this = &mut *self;
        while !this.added {
            let mut chunk = [0u8; 1024];
            let mut read = ReadBuf::new(&mut chunk);
            std::task::ready!(Pin::new(&mut this.stream).poll_read(cx, &mut read))?;
            let got = read.filled();
            if got.is_empty() {
                // The client closed before a whole line: hand over what came.
                this.added = true;
                break;
            }
            this.held.extend_from_slice(got);
            if let Some(end) = this.held.iter().position(|&b| b == b'\n') {
                this.held.splice(end + 1..end + 1, b"te: trailers\r\n".iter().copied());
                this.added = true;
            }
        }
        if !this.held.is_empty() {
            let n = this.held.len().min(buf.remaining());
            buf.put_slice(&this.held[..n]);
            this.held.drain(..n);
            return Poll::Ready(Ok(()));
        }
        Pin::new(&mut this.stream).poll_read(cx, buf)
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for TrailersAllowed<S> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.stream).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.stream).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.stream).poll_shutdown(cx)
    }
}
