//! HTTP(S) requests over `wasi:http`, to the hosts the operator granted.
//!
//! Every request — and every redirect hop, which this client follows itself —
//! goes through the host, which checks it against the permission table's
//! network allowlist and refuses internal addresses that the table does not
//! name. A refusal comes back as [`HttpError::Denied`]. A redirect from
//! https to plain http is never followed.
//!
//! A URL with a user name or password (`https://user:pass@host/`) is refused
//! before anything is sent, and so is a redirect to one: the host refuses
//! such a request too, and credentials are the host's to add. No message,
//! error or [`Response::url`] of this module ever repeats a password; skills
//! build their own messages about a URL with [`redact_url`].

use crate::ToolError;
use std::time::Duration;
use wasi::http::outgoing_handler;
use wasi::http::types::{
    ErrorCode, Fields, IncomingBody, Method, OutgoingBody, OutgoingRequest, RequestOptions, Scheme,
};
use wasi::io::streams::StreamError;

/// A browser-like User-Agent: many sites serve bots a different page.
pub const BROWSER_USER_AGENT: &str = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, \
                                      like Gecko) Chrome/131.0 Safari/537.36";

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
        refuse_user_info(&self.method, &url, None)?;
        let mut method = self.method.clone();
        let mut body = self.body.clone();
        for _ in 0..=self.max_redirects {
            let response = self.send_once(&method, &url, body.as_deref())?;
            let location = response.header("location").map(str::to_owned);
            match (response.status, location) {
                (301 | 302 | 303 | 307 | 308, Some(location)) if self.max_redirects > 0 => {
                    let next = url.join(&location).map_err(|e| {
                        HttpError::Failed(format!(
                            "{} redirected to an invalid location {:?}: {e}",
                            shown(&url),
                            redact_url(&location)
                        ))
                    })?;
                    check_scheme(&next)?;
                    refuse_user_info(&method, &next, Some(&url))?;
                    // An https page that sends us to plain http would have the
                    // next request, and its answer, travel unencrypted. The host
                    // refuses that hop too; this says why before it is sent.
                    if url.scheme() == "https" && next.scheme() == "http" {
                        return Err(HttpError::Denied(format!(
                            "net: {} redirected from https to plain http ({}); such a redirect is \
                             not followed",
                            shown(&url),
                            shown(&next)
                        )));
                    }
                    // 303, and 301/302 after POST, switch to GET as browsers do.
                    if response.status == 303
                        || (matches!(response.status, 301 | 302) && method == "POST")
                    {
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
            redact_url(&self.url),
            self.max_redirects
        )))
    }

    fn send_once(
        &self,
        method: &str,
        url: &url::Url,
        body: Option<&[u8]>,
    ) -> Result<Response, HttpError> {
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
        let Some(authority) = authority(url) else {
            return Err(HttpError::InvalidUrl(format!("{} has no host", shown(url))));
        };
        let _ = request.set_authority(Some(&authority));
        let path = match url.query() {
            Some(q) => format!("{}?{q}", url.path()),
            None => url.path().to_owned(),
        };
        let _ = request.set_path_with_query(Some(&path));

        let outgoing =
            request.body().map_err(|()| HttpError::Failed("request body unavailable".into()))?;
        if let Some(bytes) = body {
            let stream = outgoing
                .write()
                .map_err(|()| HttpError::Failed("request body stream unavailable".into()))?;
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

        // From here on the URL goes into messages: it has no user info (refused
        // above), and `shown` would drop it if it had.
        let pending =
            outgoing_handler::handle(request, Some(options)).map_err(|e| map_error(url, e))?;
        OutgoingBody::finish(outgoing, None).map_err(|e| map_error(url, e))?;
        pending.subscribe().block();
        let incoming = match pending.get() {
            Some(Ok(Ok(response))) => response,
            Some(Ok(Err(e))) => return Err(map_error(url, e)),
            Some(Err(())) | None => {
                return Err(HttpError::Failed(format!("{}: no response", shown(url))));
            }
        };

        let status = incoming.status();
        let headers = incoming
            .headers()
            .entries()
            .into_iter()
            .map(|(k, v)| (k.to_ascii_lowercase(), String::from_utf8_lossy(&v).into_owned()))
            .collect();
        let body_handle = incoming
            .consume()
            .map_err(|()| HttpError::Failed("response body unavailable".into()))?;
        let stream = body_handle
            .stream()
            .map_err(|()| HttpError::Failed("response body stream unavailable".into()))?;
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
                    return Err(HttpError::Failed(format!(
                        "{}: reading the body: {}",
                        shown(url),
                        e.to_debug_string()
                    )));
                }
            }
        }
        drop(stream);
        if !truncated {
            let _ = IncomingBody::finish(body_handle);
        }
        Ok(Response { status, headers, body, truncated, url: shown(url) })
    }
}

fn parse(url: &str) -> Result<url::Url, HttpError> {
    let parsed = url::Url::parse(url)
        .map_err(|e| HttpError::InvalidUrl(format!("{:?}: {e}", redact_url(url))))?;
    check_scheme(&parsed)?;
    Ok(parsed)
}

fn check_scheme(url: &url::Url) -> Result<(), HttpError> {
    match url.scheme() {
        "http" | "https" => Ok(()),
        other => Err(HttpError::InvalidUrl(format!(
            "{}: scheme {other:?} is not supported; use http or https",
            shown(url)
        ))),
    }
}

/// `host` or `host:port` (the port only when the URL names one), as sent.
fn authority(url: &url::Url) -> Option<String> {
    match (url.host_str(), url.port()) {
        (Some(h), Some(p)) => Some(format!("{h}:{p}")),
        (Some(h), None) => Some(h.to_owned()),
        (None, _) => None,
    }
}

/// Refuse a URL that carries a user name or password, before it is sent.
///
/// The host refuses such a request at egress; but this client builds the
/// request from the URL's host and port only, so the user info would be
/// dropped on the way and the page fetched as if it had not been there — and
/// the URL, password included, echoed back in the result. Refused here in
/// the host's own words (`net: GET https://host: the URL carries …`), so the
/// model is told one thing whichever refused it. The message names the
/// scheme and host only, never the user info.
fn refuse_user_info(
    method: &str,
    url: &url::Url,
    redirected_from: Option<&url::Url>,
) -> Result<(), HttpError> {
    if url.username().is_empty() && url.password().is_none() {
        return Ok(());
    }
    let target = format!("{method} {}://{}", url.scheme(), authority(url).unwrap_or_default());
    let via = redirected_from
        .map(|from| format!(" (a redirect from {})", shown(from)))
        .unwrap_or_default();
    Err(HttpError::Denied(format!(
        "net: {target}{via}: the URL carries a user name or password (user:pass@host), which is \
         refused; credentials are added by the host from the permission table, never written in \
         URLs"
    )))
}

/// What replaces the user info of a URL in text ([`redact_url`]), the mask
/// the host uses for secrets.
const MASK: &str = "[REDACTED]";

/// `url` as it may appear in a message, a result or a log: its user name and
/// password (`user:pass@`) replaced by `[REDACTED]`, everything else as it
/// was. Text that does not parse as a URL with a host (`user:pass@host`
/// without a scheme parses as the scheme `user`) loses everything between
/// its scheme (`https://`, or the start) and its last `@`, since there is
/// no telling which part is a password.
///
/// ```
/// use agent_reach_sdk::http::redact_url;
///
/// assert_eq!(redact_url("https://me:hunter2@example.com/a"), "https://[REDACTED]@example.com/a");
/// assert_eq!(redact_url("https://example.com/@me"), "https://example.com/@me");
/// assert_eq!(redact_url("me:hunter2@example.com/a"), "[REDACTED]@example.com/a");
/// ```
pub fn redact_url(url: &str) -> String {
    if let Ok(mut parsed) = url::Url::parse(url)
        && parsed.has_host()
    {
        if parsed.username().is_empty() && parsed.password().is_none() {
            return url.to_owned();
        }
        if parsed.set_username("").is_ok() && parsed.set_password(None).is_ok() {
            let mut text = parsed.to_string();
            if let Some(at) = text.find("://") {
                text.insert_str(at + 3, &format!("{MASK}@"));
            }
            return text;
        }
    }
    let start = url.find("://").map_or(0, |i| i + 3);
    match url[start..].rfind('@') {
        Some(at) => format!("{}{MASK}{}", &url[..start], &url[start + at..]),
        None => url.to_owned(),
    }
}

/// A parsed URL for messages: without user info, whatever it held.
fn shown(url: &url::Url) -> String {
    redact_url(url.as_str())
}

fn map_error(url: &url::Url, code: ErrorCode) -> HttpError {
    let url = shown(url);
    match code {
        ErrorCode::HttpRequestDenied => HttpError::Denied(format!(
            "net: request to {url} is not granted by the permission table (ask the operator to add \
             its host to `net`)"
        )),
        ErrorCode::DestinationIpProhibited => HttpError::Denied(format!(
            "net: {url} resolves to an internal address, which the permission table does not name"
        )),
        ErrorCode::ConnectionTimeout
        | ErrorCode::ConnectionReadTimeout
        | ErrorCode::HttpResponseTimeout => HttpError::Timeout(format!("{url}: timed out")),
        ErrorCode::DnsError(_) | ErrorCode::DestinationNotFound => {
            HttpError::Failed(format!("{url}: the host name could not be resolved"))
        }
        ErrorCode::ConnectionRefused => HttpError::Failed(format!("{url}: connection refused")),
        ErrorCode::HttpResponseContentCoding(_) => HttpError::Denied(format!(
            "net: {url}: the host refused the answer: it came compressed, and a response to a \
             request with a credential must be readable to be masked"
        )),
        ErrorCode::ConnectionLimitReached => HttpError::Failed(format!(
            "{url}: too many requests of this call are in flight; finish reading one response \
             before sending another"
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
        Some((host, port))
            if !port.is_empty()
                && port.bytes().all(|b| b.is_ascii_digit())
                && (!host.contains(':') || host.ends_with(']')) =>
        {
            (host, Some(port))
        }
        _ => (text, None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redact_url_never_repeats_a_user_name_or_password() {
        let rows = [
            // (text, shown)
            ("https://me:hunter2@example.com/a?b=c", "https://[REDACTED]@example.com/a?b=c"),
            ("http://me@example.com:8080/", "http://[REDACTED]@example.com:8080/"),
            ("http://:hunter2@example.com/", "http://[REDACTED]@example.com/"),
            ("http://me:p%40ss@127.0.0.1:9/x", "http://[REDACTED]@127.0.0.1:9/x"),
            ("https://me:hunter2@[::1]:8443/", "https://[REDACTED]@[::1]:8443/"),
            // Not parsed as URLs with a host: everything up to the last `@` goes.
            ("me:hunter2@example.com/a", "[REDACTED]@example.com/a"),
            ("http://me:hun/ter2@example.com/", "http://[REDACTED]@example.com/"),
            ("http://me:hunter2@exa mple.com/", "http://[REDACTED]@exa mple.com/"),
            // Nothing to hide: as written.
            ("https://example.com/@me", "https://example.com/@me"),
            (
                "https://example.com/?mail=me@example.org",
                "https://example.com/?mail=me@example.org",
            ),
            ("HTTPS://Example.COM/a", "HTTPS://Example.COM/a"),
            ("not a url", "not a url"),
        ];
        for (text, shown) in rows {
            assert_eq!(redact_url(text), shown, "{text}");
            assert!(
                !redact_url(text).contains("hunter2") && !redact_url(text).contains("ter2"),
                "{text}"
            );
        }
    }

    #[test]
    fn a_url_with_user_info_is_refused_in_the_hosts_words() {
        let url = url::Url::parse("http://admin:hunter2@127.0.0.1:8080/login").unwrap();
        let err = refuse_user_info("GET", &url, None).unwrap_err();
        assert_eq!(
            err,
            HttpError::Denied(
                "net: GET http://127.0.0.1:8080: the URL carries a user name or password \
                 (user:pass@host), which is refused; credentials are added by the host from the \
                 permission table, never written in URLs"
                    .into()
            )
        );
        assert_eq!(ToolError::from(err).code, crate::ErrorCode::Denied);
        let user_only = url::Url::parse("https://admin@example.com/").unwrap();
        let from = url::Url::parse("https://example.com/start").unwrap();
        let err = refuse_user_info("GET", &user_only, Some(&from)).unwrap_err().to_string();
        assert!(
            err.starts_with(
                "net: GET https://example.com (a redirect from https://example.com/start): the URL \
                 carries"
            ),
            "{err}"
        );
        assert!(!err.contains("admin"), "{err}");
        refuse_user_info("GET", &from, None).expect("no user info");
    }

    #[test]
    fn an_unparsable_url_is_not_repeated_with_its_password() {
        let err = parse("http://admin:hunter2@127.0.0.1:notaport/").unwrap_err();
        assert!(matches!(err, HttpError::InvalidUrl(_)), "{err}");
        assert!(!err.to_string().contains("hunter2"), "{err}");
        let err = parse("ftp://admin:hunter2@example.com/").unwrap_err();
        assert!(err.to_string().contains("ftp://[REDACTED]@example.com/"), "{err}");
    }
}
