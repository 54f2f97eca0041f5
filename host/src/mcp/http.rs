//! `reach mcp --http`: the MCP server over streamable HTTP at `/mcp`.
//!
//! Locked down by default: it listens on loopback, accepts only loopback
//! `Host` names (a web page cannot reach it through DNS rebinding), rejects
//! every request carrying an `Origin` other than its own address or one
//! explicitly allowed (the SDK checks `Origin` only when told to), and
//! requires a bearer token before it
//! will listen on any other address.
//!
//! Clients on protocol 2026-07-28 are served statelessly: any instance
//! behind a load balancer can answer any request. Older clients get a
//! session held by the instance that created it.

use super::McpServer;
use bytes::Bytes;
use http_body_util::{BodyExt as _, Full, combinators::BoxBody};
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

/// The path the server answers on.
pub const PATH: &str = "/mcp";

/// Environment variable holding the bearer token.
pub const TOKEN_ENV: &str = "REACH_MCP_TOKEN";

/// How to serve MCP over HTTP.
#[derive(Clone, Debug)]
pub struct HttpOptions {
    /// Address to listen on; port 0 picks a free one.
    pub addr: SocketAddr,
    /// When set, every request must carry `Authorization: Bearer <token>`.
    /// Required unless `addr` is a loopback address.
    pub token: Option<String>,
    /// `Host` names accepted besides `localhost`, `127.0.0.1` and `::1`
    /// (the names clients use to reach a server on another address).
    pub allowed_hosts: Vec<String>,
    /// Browser origins allowed (`scheme://host:port`); any other `Origin`
    /// header is refused with 403.
    pub allowed_origins: Vec<String>,
}

impl HttpOptions {
    /// Loopback at `addr`, the token from [`TOKEN_ENV`] if set, no extra
    /// hosts or origins.
    pub fn new(addr: SocketAddr) -> HttpOptions {
        let token = std::env::var(TOKEN_ENV).ok().filter(|t| !t.is_empty());
        HttpOptions { addr, token, allowed_hosts: Vec::new(), allowed_origins: Vec::new() }
    }
}

/// Why the HTTP server did not start.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum HttpError {
    /// A non-loopback address without a token.
    #[error(
        "refusing to serve MCP on {0} without a bearer token: anyone who can reach that address could run your skills; \
         set {TOKEN_ENV} to a long random secret (clients send it as `Authorization: Bearer …`), or listen on 127.0.0.1"
    )]
    NeedsToken(SocketAddr),
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
pub async fn serve(server: McpServer, options: HttpOptions, shutdown: CancellationToken, ready: impl FnOnce(SocketAddr)) -> Result<(), HttpError> {
    if !options.addr.ip().is_loopback() && options.token.is_none() {
        return Err(HttpError::NeedsToken(options.addr));
    }
    let listener = tokio::net::TcpListener::bind(options.addr).await.map_err(|source| HttpError::Bind { addr: options.addr, source })?;
    let bound = listener.local_addr().map_err(|source| HttpError::Bind { addr: options.addr, source })?;
    let mut hosts = vec!["localhost".to_owned(), "127.0.0.1".to_owned(), "::1".to_owned(), "[::1]".to_owned()];
    hosts.extend(options.allowed_hosts.iter().cloned());
    if !bound.ip().is_loopback() && !bound.ip().is_unspecified() {
        hosts.push(bound.ip().to_string());
    }
    // Our own origin (the address we answer on) is allowed: we serve no
    // pages, so no script can carry it but a client of ours; a page of any
    // other site or port — a local dev server included — is refused.
    let port = bound.port();
    let mut origins = vec![format!("http://127.0.0.1:{port}"), format!("http://localhost:{port}"), format!("http://[::1]:{port}")];
    if !bound.ip().is_loopback() {
        origins.push(format!("http://{bound}"));
    }
    origins.extend(options.allowed_origins.iter().cloned());
    let config = StreamableHttpServerConfig::default()
        .with_allowed_hosts(hosts)
        .with_allowed_origins(origins)
        .enforce_origin_validation()
        .with_cancellation_token(shutdown.child_token());
    let service = Arc::new(StreamableHttpService::new(move || Ok(server.clone()), Arc::new(LocalSessionManager::default()), config));
    let token: Option<Arc<[u8; 32]>> = options.token.as_deref().map(|t| Arc::new(*blake3::hash(t.as_bytes()).as_bytes()));
    tracing::info!(addr = %bound, token = token.is_some(), origins = ?options.allowed_origins, "serving MCP over HTTP");
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
        let service = service.clone();
        let token = token.clone();
        tokio::spawn(async move {
            let handle = hyper::service::service_fn(move |request: Request<hyper::body::Incoming>| {
                let service = service.clone();
                let token = token.clone();
                async move { Ok::<_, Infallible>(route(&service, token.as_deref(), request).await) }
            });
            if let Err(err) = hyper::server::conn::http1::Builder::new().serve_connection(TokioIo::new(stream), handle).await {
                tracing::debug!(%peer, error = %err, "MCP connection ended with an error");
            }
        });
    }
}

type Body = BoxBody<Bytes, Infallible>;

async fn route(service: &StreamableHttpService<McpServer, LocalSessionManager>, token: Option<&[u8; 32]>, request: Request<hyper::body::Incoming>) -> Response<Body> {
    if request.uri().path() != PATH {
        return plain(StatusCode::NOT_FOUND, "not found: the MCP endpoint is /mcp");
    }
    if let Some(expected) = token
        && !authorized(&request, expected)
    {
        tracing::warn!(path = %request.uri().path(), "MCP request refused: missing or wrong bearer token");
        let mut response = plain(StatusCode::UNAUTHORIZED, "a bearer token is required (Authorization: Bearer …)");
        response.headers_mut().insert(hyper::header::WWW_AUTHENTICATE, hyper::header::HeaderValue::from_static("Bearer"));
        return response;
    }
    let response = service.handle(request).await;
    if response.status() == StatusCode::FORBIDDEN {
        tracing::warn!("MCP request refused: Host or Origin not allowed");
    }
    response
}

/// The request's bearer token matches: compared as BLAKE3 digests, so the
/// comparison's time says nothing about the secret.
fn authorized(request: &Request<hyper::body::Incoming>, expected: &[u8; 32]) -> bool {
    let Some(value) = request.headers().get(hyper::header::AUTHORIZATION).and_then(|v| v.to_str().ok()) else {
        return false;
    };
    let Some(given) = value.strip_prefix("Bearer ").or_else(|| value.strip_prefix("bearer ")) else {
        return false;
    };
    blake3::hash(given.trim().as_bytes()) == blake3::Hash::from_bytes(*expected)
}

fn plain(status: StatusCode, text: &'static str) -> Response<Body> {
    let mut response = Response::new(Full::new(Bytes::from_static(text.as_bytes())).boxed());
    *response.status_mut() = status;
    response
}
