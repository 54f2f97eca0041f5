//! `reach mcp --http`: the MCP server over streamable HTTP at `/mcp`.
//!
//! Locked down by default: every request needs the bearer token, on
//! loopback too (any local process can reach loopback; `reach mcp` makes a
//! token in [`token::TOKEN_FILE`] when none is set, and serving without one
//! is an explicit choice, [`HttpOptions::no_auth`], for loopback only); it
//! listens on loopback, accepts only loopback `Host` names (a web page
//! cannot reach it through DNS rebinding), and rejects every request
//! carrying an `Origin` other than its own address or one explicitly
//! allowed (the SDK checks `Origin` only when told to).
//!
//! Bounded against a local process that opens connections and holds them:
//! headers must arrive within [`HEADER_TIMEOUT`], a body within
//! [`BODY_TIMEOUT`] and [`MAX_BODY_BYTES`], and at most
//! [`MAX_SESSIONS`] sessions are open.
//!
//! Clients on protocol 2026-07-28 are served statelessly: any instance
//! behind a load balancer can answer any request. Older clients get a
//! session held by the instance that created it.

mod sessions;
pub mod token;

pub use sessions::MAX_SESSIONS;

use super::McpServer;
use bytes::Bytes;
use http_body_util::{BodyExt as _, Full, Limited, combinators::BoxBody};
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::{TokioIo, TokioTimer};
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use sessions::CappedSessions;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// The path the server answers on.
pub const PATH: &str = "/mcp";

/// Environment variable holding the bearer token.
pub const TOKEN_ENV: &str = "REACH_MCP_TOKEN";

/// How long a client has to send a request's headers (and how long an idle
/// kept-alive connection stays open). A client sends them at once, in well
/// under a second; ten seconds leaves room for a loaded machine or a proxy,
/// and bounds how long a connection that never finishes them holds a socket.
pub const HEADER_TIMEOUT: Duration = Duration::from_secs(10);

/// How long a client has to send a request's body once its headers are in.
/// The largest body allowed crosses loopback in milliseconds and a slow
/// link (2 Mbit/s) in about half of this.
pub const BODY_TIMEOUT: Duration = Duration::from_secs(30);

/// The largest request body accepted (4 MiB, the SDK's own default): one
/// JSON-RPC message, whose size is mostly a tool's arguments, such as a
/// file to write. Larger bodies get 413 before they are read.
pub const MAX_BODY_BYTES: usize = 4 * 1024 * 1024;

/// How to serve MCP over HTTP.
#[derive(Clone, Debug)]
pub struct HttpOptions {
    /// Address to listen on; port 0 picks a free one.
    pub addr: SocketAddr,
    /// Every request must carry `Authorization: Bearer <token>`. Without
    /// one the server does not start, unless `no_auth` is chosen.
    pub token: Option<String>,
    /// Serve without a token: only on a loopback address, where any process
    /// of any user on this machine can then call the tools and answer
    /// their confirmation questions. Off by default.
    pub no_auth: bool,
    /// `Host` names accepted besides `localhost`, `127.0.0.1` and `::1`
    /// (the names clients use to reach a server on another address).
    pub allowed_hosts: Vec<String>,
    /// Browser origins allowed (`scheme://host:port`); any other `Origin`
    /// header is refused with 403.
    pub allowed_origins: Vec<String>,
}

impl HttpOptions {
    /// Loopback at `addr`, the token from [`TOKEN_ENV`] if set (else none:
    /// set one, or choose `no_auth`), no extra hosts or origins.
    pub fn new(addr: SocketAddr) -> HttpOptions {
        let token = std::env::var(TOKEN_ENV).ok().filter(|t| !t.is_empty());
        HttpOptions {
            addr,
            token,
            no_auth: false,
            allowed_hosts: Vec::new(),
            allowed_origins: Vec::new(),
        }
    }
}

/// Why the HTTP server did not start.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum HttpError {
    /// A non-loopback address without a token.
    #[error(
        "refusing to serve MCP on {0} without a bearer token: anyone who can reach that address \
         could run your skills; set {TOKEN_ENV} to a long random secret (clients send it as \
         `Authorization: Bearer …`), or listen on 127.0.0.1"
    )]
    NeedsToken(SocketAddr),
    /// A loopback address without a token, and `no_auth` not chosen.
    #[error(
        "refusing to serve MCP on {0} without a bearer token: any process on this machine could \
         run your skills and answer their confirmation questions; give a token (`reach mcp` makes \
         one in {file}, or set {TOKEN_ENV}), or choose to serve without one (--no-auth)",
        file = token::TOKEN_FILE
    )]
    NeedsTokenOnLoopback(SocketAddr),
    /// The address could not be bound.
    #[error("could not listen on {addr}: {source}")]
    Bind {
        /// The address.
        addr: SocketAddr,
        /// Why.
        source: std::io::Error,
    },
}

/// Listen and serve until `shutdown` is cancelled. `ready` is called with
/// the bound address (useful with port 0) once connections are accepted.
pub async fn serve(
    server: McpServer,
    options: HttpOptions,
    shutdown: CancellationToken,
    ready: impl FnOnce(SocketAddr),
) -> Result<(), HttpError> {
    if options.token.is_none() {
        // Off loopback a token is needed whatever was chosen.
        if !options.addr.ip().is_loopback() {
            return Err(HttpError::NeedsToken(options.addr));
        }
        if !options.no_auth {
            return Err(HttpError::NeedsTokenOnLoopback(options.addr));
        }
        tracing::warn!(
            addr = %options.addr,
            "serving MCP without a bearer token (--no-auth): any process on this machine can call \
             the tools and answer their confirmation questions"
        );
    }
    let listener = tokio::net::TcpListener::bind(options.addr)
        .await
        .map_err(|source| HttpError::Bind { addr: options.addr, source })?;
    let bound =
        listener.local_addr().map_err(|source| HttpError::Bind { addr: options.addr, source })?;
    let mut hosts =
        vec!["localhost".to_owned(), "127.0.0.1".to_owned(), "::1".to_owned(), "[::1]".to_owned()];
    hosts.extend(options.allowed_hosts.iter().cloned());
    if !bound.ip().is_loopback() && !bound.ip().is_unspecified() {
        hosts.push(bound.ip().to_string());
    }
    // Our own origin (the address we answer on) is allowed: we serve no
    // pages, so no script can carry it but a client of ours; a page of any
    // other site or port — a local dev server included — is refused.
    let port = bound.port();
    let mut origins = vec![
        format!("http://127.0.0.1:{port}"),
        format!("http://localhost:{port}"),
        format!("http://[::1]:{port}"),
    ];
    if !bound.ip().is_loopback() {
        origins.push(format!("http://{bound}"));
    }
    origins.extend(options.allowed_origins.iter().cloned());
    let config = StreamableHttpServerConfig::default()
        .with_allowed_hosts(hosts)
        .with_allowed_origins(origins)
        .enforce_origin_validation()
        .with_max_request_body_bytes(MAX_BODY_BYTES)
        .with_cancellation_token(shutdown.child_token());
    let sessions = Arc::new(CappedSessions::new(MAX_SESSIONS));
    let service =
        StreamableHttpService::new(move || Ok(server.clone()), Arc::clone(&sessions), config);
    let token = options.token.as_deref().map(|t| *blake3::hash(t.as_bytes()).as_bytes());
    let served = Arc::new(Served { service, sessions, token });
    tracing::info!(
        addr = %bound,
        token = token.is_some(),
        origins = ?options.allowed_origins,
        "serving MCP over HTTP"
    );
    ready(bound);
    loop {
        let (stream, peer) = tokio::select! {
            () = shutdown.cancelled() => return Ok(()),
            accepted = listener.accept() => match accepted {
                Ok(pair) => pair,
                Err(err) => {
                    tracing::warn!(error = %err, "accepting an MCP connection failed");
                    continue;
                }
            },
        };
        // An answer goes out in pieces (the headers with the first event, then the end of the
        // stream). With Nagle's algorithm the last piece waits until the client acknowledges
        // the first, and clients delay that acknowledgement: 40 ms added to every call.
        if let Err(err) = stream.set_nodelay(true) {
            tracing::debug!(%peer, error = %err, "could not set TCP_NODELAY");
        }
        let served = Arc::clone(&served);
        tokio::spawn(async move {
            let handle =
                hyper::service::service_fn(move |request: Request<hyper::body::Incoming>| {
                    let served = Arc::clone(&served);
                    async move { Ok::<_, Infallible>(served.route(request).await) }
                });
            let mut builder = hyper::server::conn::http1::Builder::new();
            builder.timer(TokioTimer::new()).header_read_timeout(HEADER_TIMEOUT);
            if let Err(err) = builder.serve_connection(TokioIo::new(stream), handle).await {
                tracing::debug!(%peer, error = %err, "MCP connection ended with an error");
            }
        });
    }
}

type Body = BoxBody<Bytes, Infallible>;

/// What every connection shares.
struct Served {
    service: StreamableHttpService<McpServer, CappedSessions>,
    sessions: Arc<CappedSessions>,
    /// BLAKE3 of the token, when there is one.
    token: Option<[u8; 32]>,
}

impl Served {
    /// Path, token, body limits, session cap — each checked before anything
    /// is handed to the SDK, in that order, so an unauthenticated request
    /// costs no more than its headers.
    async fn route(&self, request: Request<hyper::body::Incoming>) -> Response<Body> {
        if request.uri().path() != PATH {
            return plain(StatusCode::NOT_FOUND, "not found: the MCP endpoint is /mcp".to_owned());
        }
        if let Some(expected) = &self.token
            && !authorized(&request, expected)
        {
            tracing::warn!(
                path = %request.uri().path(),
                "MCP request refused: missing or wrong bearer token"
            );
            let mut response = plain(
                StatusCode::UNAUTHORIZED,
                "a bearer token is required (Authorization: Bearer …)".to_owned(),
            );
            response.headers_mut().insert(
                hyper::header::WWW_AUTHENTICATE,
                hyper::header::HeaderValue::from_static("Bearer"),
            );
            return response;
        }
        let (parts, body) = request.into_parts();
        let body = match read_body(&parts, body).await {
            Ok(body) => body,
            Err(refused) => return refused,
        };
        if self.opens_a_session(&parts, &body) && self.sessions.full().await {
            tracing::warn!(max = MAX_SESSIONS, "MCP session refused: too many open");
            let text = sessions::SessionsError::Full { max: MAX_SESSIONS }.to_string();
            let mut response = plain(StatusCode::SERVICE_UNAVAILABLE, text);
            response
                .headers_mut()
                .insert(hyper::header::RETRY_AFTER, hyper::header::HeaderValue::from_static("60"));
            return response;
        }
        let response = self.service.handle(Request::from_parts(parts, Full::new(body))).await;
        if response.status() == StatusCode::FORBIDDEN {
            tracing::warn!("MCP request refused: Host or Origin not allowed");
        }
        response
    }

    /// An `initialize` without a session: the SDK opens a session for it.
    fn opens_a_session(&self, parts: &http::request::Parts, body: &Bytes) -> bool {
        #[derive(serde::Deserialize)]
        struct Method {
            method: Option<String>,
        }
        parts.method == hyper::Method::POST
            && !parts.headers.contains_key("mcp-session-id")
            && serde_json::from_slice::<Method>(body)
                .is_ok_and(|m| m.method.as_deref() == Some("initialize"))
    }
}

/// The whole body, at most [`MAX_BODY_BYTES`], within [`BODY_TIMEOUT`]; or
/// the response refusing it.
async fn read_body(
    parts: &http::request::Parts,
    body: hyper::body::Incoming,
) -> Result<Bytes, Response<Body>> {
    let too_large = || {
        tracing::warn!(max = MAX_BODY_BYTES, "MCP request refused: body too large");
        plain(
            StatusCode::PAYLOAD_TOO_LARGE,
            format!(
                "the request body is over {} MiB, the most this server reads; send smaller tool \
                 arguments (a large file in several writes)",
                MAX_BODY_BYTES >> 20
            ),
        )
    };
    // Refused before reading a byte of it when it says so itself.
    let declared = parts
        .headers
        .get(hyper::header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|n| n > MAX_BODY_BYTES as u64) {
        return Err(too_large());
    }
    match tokio::time::timeout(BODY_TIMEOUT, Limited::new(body, MAX_BODY_BYTES).collect()).await {
        Ok(Ok(collected)) => Ok(collected.to_bytes()),
        Ok(Err(err)) if err.is::<http_body_util::LengthLimitError>() => Err(too_large()),
        Ok(Err(err)) => {
            Err(plain(StatusCode::BAD_REQUEST, format!("could not read the request body: {err}")))
        }
        Err(_) => {
            tracing::warn!(seconds = BODY_TIMEOUT.as_secs(), "MCP request refused: body too slow");
            Err(plain(
                StatusCode::REQUEST_TIMEOUT,
                format!("the request body did not arrive within {} s", BODY_TIMEOUT.as_secs()),
            ))
        }
    }
}

/// The request's bearer token matches: compared as BLAKE3 digests, so the
/// comparison's time says nothing about the secret.
fn authorized(request: &Request<hyper::body::Incoming>, expected: &[u8; 32]) -> bool {
    let Some(value) =
        request.headers().get(hyper::header::AUTHORIZATION).and_then(|v| v.to_str().ok())
    else {
        return false;
    };
    let Some(given) = value.strip_prefix("Bearer ").or_else(|| value.strip_prefix("bearer "))
    else {
        return false;
    };
    blake3::hash(given.trim().as_bytes()) == blake3::Hash::from_bytes(*expected)
}

fn plain(status: StatusCode, text: String) -> Response<Body> {
    let mut response = Response::new(Full::new(Bytes::from(text)).boxed());
    *response.status_mut() = status;
    response
}
