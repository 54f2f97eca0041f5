//! HTTP(S) requests over `wasi:http`, to the hosts the operator granted.
//!
//! Every request — and every redirect hop, which this client follows itself —
//! goes through the host, which checks it against the permission table's
//! network allowlist and refuses internal addresses that the table does not
//! name. A refusal comes back as [`HttpError::Denied`]. A redirect from
//! https to plain http is never followed.

use crate::ToolError;
use std::time::Duration;
use wasi::http::outgoing_handler;
use wasi::http::types::{
    ErrorCode, Fields, IncomingBody, Method, OutgoingBody, OutgoingRequest, RequestOptions, Scheme,
};
use wasi::io::streams::StreamError;

/// A browser-like User-Agent: many sites serve bots a different page.
pub const BROWSER_USER_AGENT: &str = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0 Safari/537.36";

/// A request to send with [`Request::send`].
#[derive(Clone, Debug)]
pub struct Request {
    method: String,
    url: String,
    headers: Vec<(String, String)>,
    body: Option<Vec<u8>>,
    max_body_bytes: usize,
    max_redirects: u32,
    timeout: Duration,
}

/// A response: status, headers and the body read up to the size cap.
#[derive(Clone, Debug)]
pub struct Response {
    /// HTTP status code.
    pub status: u16,
    /// Response headers, names in lower case.
    pub headers: Vec<(String, String)>,
    /// The body, at most the request's `max_body_bytes`.
    pub body: Vec<u8>,
    /// Whether the body was cut at the cap.
    pub truncated: bool,
    /// The URL that answered, after redirects.
    pub url: String,
}

impl Response {
    /// The first header with this (case-insensitive) name.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }

    /// The body as text (invalid UTF-8 replaced).
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
}

/// Why a request failed.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum HttpError {
    /// The URL could not be parsed or uses a scheme other than http/https.
    InvalidUrl(String),
    /// The host's network policy refused the request (not allowlisted, or an internal address).
    Denied(String),
    /// DNS, connection, TLS or protocol failure.
    Failed(String),
    /// No answer within the timeout.
    Timeout(String),
    /// More redirects than allowed.
    TooManyRedirects(String),
}

impl std::fmt::Display for HttpError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            HttpError::InvalidUrl(m) => write!(f, "invalid URL: {m}"),
            HttpError::Denied(m) => write!(f, "{m}"),
            HttpError::Failed(m) => write!(f, "{m}"),
            HttpError::Timeout(m) => write!(f, "{m}"),
            HttpError::TooManyRedirects(m) => write!(f, "{m}"),
        }
    }
}

impl std::error::Error for HttpError {}

impl From<HttpError> for ToolError {
    fn from(err: HttpError) -> Self {
        match err {
            HttpError::InvalidUrl(_) => ToolError::invalid_arguments(err.to_string()),
            HttpError::Denied(_) => ToolError::denied(err.to_string()),
            _ => ToolError::failed(err.to_string()),
        }
    }
}

/// `GET url` with the default settings.
pub fn get(url: &str) -> Result<Response, HttpError> {
    Request::new("GET", url).send()
}

impl Request {
    /// A request with a browser User-Agent, a 10 MiB body cap, up to 5
    /// redirects and a 30 s timeout.
    pub fn new(method: &str, url: &str) -> Self {
        Request {
            method: method.to_ascii_uppercase(),
            url: url.to_owned(),
            headers: vec![("user-agent".to_owned(), BROWSER_USER_AGENT.to_owned())],
            body: None,
            max_body_bytes: 10 << 20,
            max_redirects: 5,
            timeout: Duration::from_secs(30),
        }
    }

    /// Add or replace a header.
    pub fn header(mut self, name: &str, value: &str) -> Self {
        self.headers.retain(|(k, _)| !k.eq_ignore_ascii_case(name));
        self.headers.push((name.to_ascii_lowercase(), value.to_owned()));
        self
    }

    /// Set the request body.
    pub fn body(mut self, body: impl Into<Vec<u8>>) -> Self {
        self.body = Some(body.into());
        self
    }

    /// Read at most this many body bytes; the rest is dropped and the
    /// response marked `truncated`.
    pub fn max_body_bytes(mut self, bytes: usize) -> Self {
        self.max_body_bytes = bytes;
        self
    }

    /// Follow at most this many redirects (0: return the 3xx response).
    pub fn max_redirects(mut self, n: u32) -> Self {
        self.max_redirects = n;
        self
    }

    /// Connect and first-byte timeout, and the pause allowed between body chunks.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// Send the request, following redirects (each hop is checked by the host again).
    pub fn send(self) -> Result<Response, HttpError> {
        let mut url = parse(&self.url)?;
        let mut method = self.method.clone();
        let mut body = self.body.clone();
        for _ in 0..=self.max_redirects {
            let response = self.send_once(&method, &url, body.as_deref())?;
            let location = response.header("location").map(str::to_owned);
            match (response.status, location) {
                (301 | 302 | 303 | 307 | 308, Some(location)) if self.max_redirects > 0 => {
                    let next = url.join(&location).map_err(|e| {
                        HttpError::Failed(format!("{url} redirected to an invalid location {location:?}: {e}"))
                    })?;
                    check_scheme(&next)?;
                    // An https page that sends us to plain http would have the
                    // next request, and its answer, travel unencrypted. The host
                    // refuses that hop too; this says why before it is sent.
                    if url.scheme() == "https" && next.scheme() == "http" {
                        return Err(HttpError::Denied(format!(
                            "net: {url} redirected from https to plain http ({next}); such a redirect is not followed"
                        )));
                    }
                    // 303, and 301/302 after POST, switch to GET as browsers do.
                    if response.status == 303 || (matches!(response.status, 301 | 302) && method == "POST") {
                        method = "GET".to_owned();
                        body = None;
                    }
                    url = next;
                }
                _ => return Ok(response),
            }
        }
        Err(HttpError::TooManyRedirects(format!(
            "{} redirected more than {} times",
            self.url, self.max_redirects
        )))
    }

    fn send_once(&self, method: &str, url: &url::Url, body: Option<&[u8]>) -> Result<Response, HttpError> {
        let headers = Fields::new();
        for (name, value) in &self.headers {
            headers
                .append(name, value.as_bytes())
                .map_err(|e| HttpError::Failed(format!("header {name}: {e:?}")))?;
        }
        let request = OutgoingRequest::new(headers);
        let method = match method {
            "GET" => Method::Get,
            "HEAD" => Method::Head,
            "POST" => Method::Post,
            "PUT" => Method::Put,
            "DELETE" => Method::Delete,
            "PATCH" => Method::Patch,
            "OPTIONS" => Method::Options,
            other => Method::Other(other.to_owned()),
        };
        let _ = request.set_method(&method);
        let scheme = if url.scheme() == "https" { Scheme::Https } else { Scheme::Http };
        let _ = request.set_scheme(Some(&scheme));
        let authority = match (url.host_str(), url.port()) {
            (Some(h), Some(p)) => format!("{h}:{p}"),
            (Some(h), None) => h.to_owned(),
            (None, _) => return Err(HttpError::InvalidUrl(format!("{url} has no host"))),
        };
        let _ = request.set_authority(Some(&authority));
        let path = match url.query() {
            Some(q) => format!("{}?{q}", url.path()),
            None => url.path().to_owned(),
        };
        let _ = request.set_path_with_query(Some(&path));

        let outgoing = request.body().map_err(|()| HttpError::Failed("request body unavailable".into()))?;
        if let Some(bytes) = body {
            let stream = outgoing.write().map_err(|()| HttpError::Failed("request body stream unavailable".into()))?;
            for chunk in bytes.chunks(4096) {
                stream
                    .blocking_write_and_flush(chunk)
                    .map_err(|e| HttpError::Failed(format!("sending the request body: {e:?}")))?;
            }
        }
        let options = RequestOptions::new();
        let nanos = u64::try_from(self.timeout.as_nanos()).unwrap_or(u64::MAX);
        let _ = options.set_connect_timeout(Some(nanos));
        let _ = options.set_first_byte_timeout(Some(nanos));
        let _ = options.set_between_bytes_timeout(Some(nanos));

        let pending = outgoing_handler::handle(request, Some(options)).map_err(|e| map_error(url, e))?;
        OutgoingBody::finish(outgoing, None).map_err(|e| map_error(url, e))?;
        pending.subscribe().block();
        let incoming = match pending.get() {
            Some(Ok(Ok(response))) => response,
            Some(Ok(Err(e))) => return Err(map_error(url, e)),
            Some(Err(())) | None => return Err(HttpError::Failed(format!("{url}: no response"))),
        };

        let status = incoming.status();
        let headers = incoming
            .headers()
            .entries()
            .into_iter()
            .map(|(k, v)| (k.to_ascii_lowercase(), String::from_utf8_lossy(&v).into_owned()))
            .collect();
        let body_handle = incoming.consume().map_err(|()| HttpError::Failed("response body unavailable".into()))?;
        let stream = body_handle.stream().map_err(|()| HttpError::Failed("response body stream unavailable".into()))?;
        let mut body = Vec::new();
        let mut truncated = false;
        loop {
            match stream.blocking_read(64 * 1024) {
                Ok(chunk) => {
                    let room = self.max_body_bytes.saturating_sub(body.len());
                    if chunk.len() > room {
                        body.extend_from_slice(&chunk[..room]);
                        truncated = true;
                        break;
                    }
                    body.extend_from_slice(&chunk);
                }
                Err(StreamError::Closed) => break,
                Err(StreamError::LastOperationFailed(e)) => {
                    return Err(HttpError::Failed(format!("{url}: reading the body: {}", e.to_debug_string())));
                }
            }
        }
        drop(stream);
        if !truncated {
            let _ = IncomingBody::finish(body_handle);
        }
        Ok(Response { status, headers, body, truncated, url: url.to_string() })
    }
}

fn parse(url: &str) -> Result<url::Url, HttpError> {
    let parsed = url::Url::parse(url).map_err(|e| HttpError::InvalidUrl(format!("{url:?}: {e}")))?;
    check_scheme(&parsed)?;
    Ok(parsed)
}

fn check_scheme(url: &url::Url) -> Result<(), HttpError> {
    match url.scheme() {
        "http" | "https" => Ok(()),
        other => Err(HttpError::InvalidUrl(format!("{url}: scheme {other:?} is not supported; use http or https"))),
    }
}

fn map_error(url: &url::Url, code: ErrorCode) -> HttpError {
    match code {
        ErrorCode::HttpRequestDenied => HttpError::Denied(format!(
            "net: request to {url} is not granted by the permission table (ask the operator to add its host to `net`)"
        )),
        ErrorCode::DestinationIpProhibited => HttpError::Denied(format!(
            "net: {url} resolves to an internal address, which the permission table does not name"
        )),
        ErrorCode::ConnectionTimeout | ErrorCode::ConnectionReadTimeout | ErrorCode::HttpResponseTimeout => {
            HttpError::Timeout(format!("{url}: timed out"))
        }
        ErrorCode::DnsError(_) | ErrorCode::DestinationNotFound => {
            HttpError::Failed(format!("{url}: the host name could not be resolved"))
        }
        ErrorCode::ConnectionRefused => HttpError::Failed(format!("{url}: connection refused")),
        ErrorCode::HttpResponseContentCoding(_) => HttpError::Denied(format!(
            "net: {url}: the host refused the answer: it came compressed, and a response to a request with a credential must be readable to be masked"
        )),
        ErrorCode::ConnectionLimitReached => HttpError::Failed(format!(
            "{url}: too many requests of this call are in flight; finish reading one response before sending another"
        )),
        other => HttpError::Failed(format!("{url}: {other:?}")),
    }
}

/// The environment variable in which the host lists, comma-separated, the
/// hosts (`host` or `host:port`) it adds a credential to.
const CREDENTIALS_ENV: &str = "AGENT_REACH_CREDENTIALS";

/// Whether the operator bound a credential to `host` (`"api.example.com"`,
/// or `"127.0.0.1:8080"`), which the host then adds to requests there.
///
/// This is all a skill can learn about a credential: the host holds the
/// value, adds it at egress and masks it in responses. Use it to say "no API
/// key is configured for …" instead of sending a request that gets a 401.
pub fn credential_configured(host: &str) -> bool {
    let Ok(list) = std::env::var(CREDENTIALS_ENV) else { return false };
    let (name, port) = split_port(host);
    list.split(',').any(|entry| {
        let (entry_name, entry_port) = split_port(entry.trim());
        entry_name.eq_ignore_ascii_case(name) && (entry_port.is_none() || entry_port == port)
    })
}

/// `host:port` → (host, Some(port)); IPv6 literals keep their brackets.
fn split_port(text: &str) -> (&str, Option<&str>) {
    match text.rsplit_once(':') {
        Some((host, port)) if !port.is_empty() && port.bytes().all(|b| b.is_ascii_digit()) && (!host.contains(':') || host.ends_with(']')) => {
            (host, Some(port))
        }
        _ => (text, None),
    }
}
