//! The network capability: every outgoing `wasi:http` request of a skill
//! passes through [`NetGuard::send_request`], which
//!
//! 1. refuses more than [`MAX_REQUESTS_IN_FLIGHT`] requests of one call at
//!    a time, URLs with a user name or password (`user:pass@host`), and a
//!    plain-http request after an https response of this call redirected
//!    to plain http (a downgrade the skill would otherwise follow),
//! 2. allows only http/https to hosts on the skill's allowlist,
//! 3. resolves the name itself and refuses internal addresses (loopback,
//!    private, link-local, cloud metadata…) unless the table names that
//!    address explicitly — the SSRF guard,
//! 4. connects to exactly the address it checked, so a DNS answer cannot
//!    change between the check and the connection; DNS, connect and TLS
//!    all end at the call's deadline,
//! 5. adds the credential the table binds to that host (https only, unless
//!    `allow_http` for a loopback test host), asks for an uncompressed
//!    answer, refuses a compressed one, and masks the value in the response
//!    headers, body and trailers, so the skill never holds it.
//!
//! Redirects are not followed here: the guest sees the 3xx and, if it
//! follows it, sends a new request that is checked again from step 1.

use super::net_tape;
use super::redact::{RedactingBody, Redactor};
use crate::policy::{Credential, Injection, NetAllowlist, Secret, is_internal_address};
use crate::tape::{Mode, TapeScope};
use bytes::Bytes;
use http::uri::Scheme;
use http_body::{Body, Frame};
use http_body_util::BodyExt;
use std::net::{IpAddr, SocketAddr};
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};
use tokio::net::TcpStream;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use wasmtime_wasi_http::io::TokioIo;
use wasmtime_wasi_http::{Error, RequestOptions, WasiBody, WasiHttpHooks};

type IoFuture = Box<dyn Future<Output = Result<(), Error>> + Send>;
type SendFuture =
    Box<dyn Future<Output = Result<(http::Response<WasiBody>, IoFuture), Error>> + Send>;

const CONNECT_TIMEOUT: Duration = Duration::from_secs(30);

/// Requests one call may have in flight at once (from sending until its
/// response body ends or is dropped). One more is refused at once rather
/// than queued: a guest that holds eight bodies open and waits for a ninth
/// would wait forever, and a queue would be a host resource the guest grows.
pub(crate) const MAX_REQUESTS_IN_FLIGHT: usize = 8;

/// The per-call network policy of one skill.
pub(crate) struct NetGuard {
    skill: Arc<str>,
    allow: Arc<NetAllowlist>,
    credentials: Arc<[Credential]>,
    /// When the call's time is up: DNS and connects give up then too.
    deadline: Instant,
    in_flight: Arc<Semaphore>,
    downgrade: Arc<Mutex<Option<String>>>,
    /// Refusals during this call, appended to a `denied` error so the model
    /// and the operator see exactly what was refused and what is allowed.
    pub(crate) denials: Arc<Mutex<Denials>>,
    /// The run's recording this call's responses go to, or come from.
    tape: Option<TapeScope>,
}

impl NetGuard {
    /// The guard for one call of `skill` that must end by `deadline`.
    pub(crate) fn new(
        skill: &str,
        allow: NetAllowlist,
        credentials: &[Credential],
        deadline: Instant,
    ) -> Self {
        NetGuard {
            skill: skill.into(),
            allow: Arc::new(allow),
            credentials: credentials.into(),
            deadline,
            in_flight: Arc::new(Semaphore::new(MAX_REQUESTS_IN_FLIGHT)),
            downgrade: Arc::default(),
            denials: Arc::default(),
            tape: crate::tape::current(),
        }
    }
}

fn allowed_list(allow: &NetAllowlist) -> String {
    if allow.is_empty() { "nothing is allowed".to_owned() } else { format!("allowed: {allow}") }
}

fn deny(skill: &str, denials: &Mutex<Denials>, reason: String) {
    denials.lock().unwrap_or_else(|e| e.into_inner()).push(skill, reason);
}

/// The refusals of one call: the first [`Denials::KEPT`] kept (each cut to
/// [`Denials::REASON_BYTES`]) and logged, the rest only counted, so a skill
/// that loops on refused requests grows neither the host's memory nor its
/// log.
#[derive(Debug, Default)]
pub(crate) struct Denials {
    kept: Vec<String>,
    more: usize,
}

impl Denials {
    /// Refusals kept and logged per call.
    pub(crate) const KEPT: usize = 8;
    /// Longest reason kept (a refused URL can be long).
    const REASON_BYTES: usize = 512;

    fn push(&mut self, skill: &str, reason: String) {
        if self.kept.len() >= Self::KEPT {
            self.more += 1;
            if self.more == 1 {
                tracing::warn!(
                    skill,
                    capability = "net",
                    "further refusals in this call are counted, not logged"
                );
            }
            return;
        }
        let reason = crate::text::shorten_bytes(&reason, Self::REASON_BYTES);
        tracing::warn!(skill, capability = "net", "denied: {reason}");
        self.kept.push(format!("net: {reason}"));
    }

    /// `net: …; net: …; and N more refused`, or `None` when nothing was.
    pub(crate) fn summary(&self) -> Option<String> {
        if self.kept.is_empty() {
            return None;
        }
        let more =
            if self.more > 0 { format!("; and {} more refused", self.more) } else { String::new() };
        Some(format!("{}{more}", self.kept.join("; ")))
    }
}

/// `GET https://host:port`, for messages: never the user info, path or query.
fn describe(request: &http::Request<WasiBody>) -> String {
    let uri = request.uri();
    let scheme = uri.scheme_str().unwrap_or("https");
    // The user info may be a password: it is left out even when refusing it.
    let host = uri.authority().map_or("", |a| a.as_str().rsplit('@').next().unwrap_or(""));
    format!("{} {scheme}://{host}", request.method())
}

impl WasiHttpHooks for NetGuard {
    fn send_request(
        &mut self,
        request: http::Request<WasiBody>,
        options: Option<RequestOptions>,
        _fut: IoFuture,
    ) -> SendFuture {
        let skill = self.skill.clone();
        let allow = self.allow.clone();
        let denials = self.denials.clone();
        let credentials = self.credentials.clone();
        let downgrade = self.downgrade.clone();
        let deadline = self.deadline;
        let target = describe(&request);
        let tape = self.tape.clone();
        let key = net_tape::key(&request);
        // Taken here, when the guest sends, not when the future first runs,
        // so the count is exact however the guest interleaves its requests.
        let permit = self.in_flight.clone().try_acquire_owned();
        Box::new(async move {
            let Ok(permit) = permit else {
                deny(
                    &skill,
                    &denials,
                    format!(
                        "{target}: this call already has {MAX_REQUESTS_IN_FLIGHT} requests in \
                         flight, the most one call may have; read or drop a response before \
                         sending another"
                    ),
                );
                return Err(Error::ConnectionLimitReached);
            };
            let mut request = request;
            let uri = request.uri().clone();
            if uri.authority().is_some_and(|a| a.as_str().contains('@')) {
                deny(
                    &skill,
                    &denials,
                    format!(
                        "{target}: the URL carries a user name or password (user:pass@host), which \
                         is refused; credentials are added by the host from the permission table, \
                         never written in URLs"
                    ),
                );
                return Err(Error::HttpRequestDenied);
            }
            let scheme = uri.scheme().cloned().unwrap_or(Scheme::HTTPS);
            let https = scheme == Scheme::HTTPS;
            let Some(host) =
                uri.host().map(|h| h.trim_start_matches('[').trim_end_matches(']').to_owned())
            else {
                return Err(Error::HttpRequestUriInvalid);
            };
            let port = uri.port_u16().unwrap_or(if https { 443 } else { 80 });
            if scheme != Scheme::HTTP && scheme != Scheme::HTTPS {
                deny(&skill, &denials, format!("{target}: only http and https are allowed"));
                return Err(Error::HttpRequestDenied);
            }
            let Some(pattern) = allow.allows(scheme.as_str(), &host, port) else {
                deny(
                    &skill,
                    &denials,
                    format!("{target} is not granted ({})", allowed_list(&allow)),
                );
                return Err(Error::HttpRequestDenied);
            };
            if !https
                && let Some(from) = downgrade.lock().unwrap_or_else(|e| e.into_inner()).as_deref()
            {
                // Following an https → http redirect would send this request,
                // and read its answer, in clear text on the network.
                deny(
                    &skill,
                    &denials,
                    format!(
                        "{target}: earlier in this call {from} redirected from https to plain \
                         http; such a redirect is never followed, so this call makes no more \
                         plain-http requests"
                    ),
                );
                return Err(Error::HttpRequestDenied);
            }
            tracing::debug!(skill = &*skill, capability = "net", %pattern, "granted: {target}");
            if let Some(TapeScope { mode: Some(Mode::Replay(tape)), call, .. }) = &tape {
                // A replay sends nothing: the table's checks above still
                // apply, and the answer is the one the run got.
                let (method, url) = &key;
                return match net_tape::replay(tape, call, method, url) {
                    Ok(response) => {
                        tracing::debug!(skill = &*skill, capability = "net", "replayed: {target}");
                        let response = response
                            .map(|body| InFlight { body, permit: Some(permit) }.boxed_unsync());
                        Ok((response, Box::new(async { Ok(()) }) as IoFuture))
                    }
                    Err(why) => {
                        tape.missed(call, method, url);
                        deny(&skill, &denials, format!("{target}: {why}"));
                        Err(Error::HttpRequestDenied)
                    }
                };
            }

            let addr = resolve(&host, port, deadline).await?;
            if is_internal_address(addr.ip())
                && !allow.names_address_explicitly(scheme.as_str(), addr.ip(), port)
            {
                deny(
                    &skill,
                    &denials,
                    format!(
                        "{target} resolves to the internal address {}, which the permission table \
                         does not name (add \"{}\" to `net` to allow it)",
                        addr.ip(),
                        SocketAddr::new(addr.ip(), port)
                    ),
                );
                return Err(Error::DestinationIpProhibited);
            }

            let redactor = match credentials.iter().find(|c| c.matches_host(&host, port)) {
                None => None,
                Some(cred) if !cred.allows_scheme(scheme.as_str()) => {
                    tracing::warn!(
                        skill = &*skill, capability = "credential", host = %cred.target(),
                        "not sent over {scheme}: credentials travel over https only (allow_http = \
                         true is for loopback test hosts)"
                    );
                    None
                }
                Some(cred) => {
                    let secret = cred.secret().map_err(|why| {
                        deny(&skill, &denials, format!("{target}: {why}"));
                        Error::HttpRequestDenied
                    })?;
                    let sent = inject(&mut request, cred, &secret)?;
                    ask_for_a_maskable_answer(request.headers_mut());
                    // The value itself is never logged; only that it was added.
                    tracing::info!(
                        skill = &*skill,
                        capability = "credential",
                        host = %cred.target(),
                        "added at egress: {target}"
                    );
                    Some(Arc::new(Redactor::new([secret.expose(), sent.as_str()])))
                }
            };
            let (response, io) = send(request, addr, https, &host, options, deadline).await?;
            if https && let Some(to) = plain_http_location(&response) {
                // The location is the server's text: it may echo the credential.
                let to = match &redactor {
                    Some(r) => r.text(&to).into_owned(),
                    None => to,
                };
                tracing::warn!(
                    skill = &*skill,
                    capability = "net",
                    "{target} redirects to plain http ({to}); plain http is refused for the rest \
                     of this call"
                );
                remember_downgrade(&downgrade, &target, &to);
            }
            let response = match redactor {
                None => response,
                Some(redactor) => {
                    if let Some(coding) = unmaskable_coding(response.headers()) {
                        let coding: String = redactor.text(&coding).chars().take(60).collect();
                        deny(
                            &skill,
                            &denials,
                            format!(
                                "{target}: the answer is encoded ({coding}) although the host \
                                 asked for none; a response to a credentialed request is masked \
                                 before the skill reads it, and an encoded body cannot be — \
                                 refused"
                            ),
                        );
                        return Err(Error::HttpResponseContentCoding(Some(coding)));
                    }
                    mask_response(response, redactor)
                }
            };
            let response = match &tape {
                Some(TapeScope { mode: Some(Mode::Record(recorder)), call, .. }) => {
                    net_tape::record(response, recorder.clone(), call, &skill, key)
                }
                _ => response,
            };
            Ok((response.map(|body| InFlight { body, permit: Some(permit) }.boxed_unsync()), io))
        })
    }
}

/// On a credentialed request, the host decides the encodings: the response
/// must come back as plain bytes so the credential can be masked in it.
/// Decoding gzip/br/zstd here instead would mean a decompressor (and its
/// bomb-sized outputs) on every credentialed response; asking for identity
/// costs nothing, and a server that compresses anyway is refused.
fn ask_for_a_maskable_answer(headers: &mut http::HeaderMap) {
    headers.insert(http::header::ACCEPT_ENCODING, http::HeaderValue::from_static("identity"));
    // Transfer codings other than chunked, asked for with `TE`, would
    // compress the same way.
    headers.remove(http::header::TE);
    // A byte range of an echo is a slice of the credential that no mask
    // recognises; several ranges would rebuild it.
    headers.remove(http::header::RANGE);
    headers.remove(http::header::IF_RANGE);
}

/// The coding of a response that is not plain bytes (`Content-Encoding`
/// other than identity, or a transfer coding other than chunked), if any.
fn unmaskable_coding(headers: &http::HeaderMap) -> Option<String> {
    let codings = |name, plain: &[&str]| {
        headers.get_all(&name).iter().find_map(|value| {
            let text = String::from_utf8_lossy(value.as_bytes()).into_owned();
            let odd = text
                .split(',')
                .map(str::trim)
                .any(|c| !c.is_empty() && !plain.iter().any(|p| c.eq_ignore_ascii_case(p)));
            odd.then(|| format!("{name}: {text}"))
        })
    };
    codings(http::header::CONTENT_ENCODING, &["identity"])
        .or_else(|| codings(http::header::TRANSFER_ENCODING, &["chunked", "identity"]))
}

/// Note that `target` (an https request) redirected to `to` (plain http);
/// the first such redirect is the one named in later refusals.
fn remember_downgrade(downgrade: &Mutex<Option<String>>, target: &str, to: &str) {
    downgrade
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .get_or_insert_with(|| format!("{target} (to {to})"));
}

/// The `Location` of a redirect, when it leads to plain http.
fn plain_http_location<B>(response: &http::Response<B>) -> Option<String> {
    if !response.status().is_redirection() {
        return None;
    }
    let location = response.headers().get(http::header::LOCATION)?;
    let text = String::from_utf8_lossy(location.as_bytes());
    // Relative and scheme-relative (`//host/`) locations stay on https.
    let scheme = text.trim_start().split_once(':').map(|(scheme, _)| scheme)?;
    scheme.eq_ignore_ascii_case("http").then(|| text.trim().to_owned())
}

/// Add the credential to the request; returns the exact text sent (prefix
/// and value), which is masked in the response along with the bare value.
fn inject(
    request: &mut http::Request<WasiBody>,
    cred: &Credential,
    secret: &Secret,
) -> Result<String, Error> {
    match &cred.inject {
        Injection::Header { name, prefix } => {
            let text = format!("{prefix}{}", secret.expose());
            let name = http::HeaderName::from_bytes(name.as_bytes())
                .map_err(|_| Error::HttpRequestDenied)?;
            let mut value =
                http::HeaderValue::from_str(&text).map_err(|_| Error::HttpRequestDenied)?;
            value.set_sensitive(true);
            // Replaces whatever the skill put under that name.
            request.headers_mut().insert(name, value);
            Ok(text)
        }
        Injection::Query { name, prefix } => {
            let text = format!("{prefix}{}", secret.expose());
            let uri = request.uri();
            let path = uri.path();
            let query = match uri.query() {
                Some(q) if !q.is_empty() => format!("{q}&{name}={}", percent_encode(&text)),
                _ => format!("{name}={}", percent_encode(&text)),
            };
            let mut parts = uri.clone().into_parts();
            parts.path_and_query =
                Some(format!("{path}?{query}").parse().map_err(|_| Error::HttpRequestUriInvalid)?);
            *request.uri_mut() =
                http::Uri::from_parts(parts).map_err(|_| Error::HttpRequestUriInvalid)?;
            Ok(text)
        }
    }
}

/// The masks for every credential of a skill whose value can be read now:
/// applied to results and errors before they reach the model or a log.
/// Each value is masked bare and as sent (with its prefix), in every
/// spelling the [`Redactor`] knows (escaped, percent-encoded, base64).
pub(crate) fn credential_redactor(credentials: &[Credential]) -> Redactor {
    Redactor::new(credentials.iter().filter_map(|c| c.secret().ok().map(|s| (c, s))).flat_map(
        |(c, s)| {
            let prefix = match &c.inject {
                Injection::Header { prefix, .. } | Injection::Query { prefix, .. } => prefix,
            };
            [s.expose().to_owned(), format!("{prefix}{}", s.expose())]
        },
    ))
}

/// RFC 3986 percent-encoding of everything but unreserved characters.
fn percent_encode(text: &str) -> String {
    let mut out = String::with_capacity(text.len() * 3);
    for b in text.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// Mask the credential in the response's headers, body and trailers. The
/// length may change, so `Content-Length` goes.
fn mask_response(
    response: http::Response<WasiBody>,
    redactor: Arc<Redactor>,
) -> http::Response<WasiBody> {
    let (mut parts, body) = response.into_parts();
    parts.headers.remove(http::header::CONTENT_LENGTH);
    redactor.headers(&mut parts.headers);
    http::Response::from_parts(parts, RedactingBody::new(body, redactor).boxed_unsync())
}

/// A response body that holds one of the call's in-flight slots until it
/// ends, fails or is dropped.
struct InFlight {
    body: WasiBody,
    permit: Option<OwnedSemaphorePermit>,
}

impl Body for InFlight {
    type Data = Bytes;
    type Error = Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Error>>> {
        let polled = Pin::new(&mut self.body).poll_frame(cx);
        if matches!(polled, Poll::Ready(None | Some(Err(_)))) {
            self.permit = None;
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.body.size_hint()
    }
}

/// What is left of the call's time, for a step that must end with it.
fn remaining(deadline: Instant) -> Duration {
    deadline.saturating_duration_since(Instant::now())
}

/// Resolve `host` to one address (IP literals need no lookup), giving up at
/// `deadline`: the system resolver has no timeout of its own.
async fn resolve(host: &str, port: u16, deadline: Instant) -> Result<SocketAddr, Error> {
    if let Ok(ip) = host.parse::<IpAddr>() {
        return Ok(SocketAddr::new(ip, port));
    }
    let left = remaining(deadline);
    if left.is_zero() {
        return Err(Error::DnsTimeout);
    }
    let mut addrs = tokio::time::timeout(left, tokio::net::lookup_host((host, port)))
        .await
        .map_err(|_| Error::DnsTimeout)?
        .map_err(|_| Error::DnsError { rcode: None, info_code: None })?;
    addrs.next().ok_or(Error::DestinationNotFound)
}

trait Stream: tokio::io::AsyncRead + tokio::io::AsyncWrite + Send + Unpin + 'static {}
impl<T: tokio::io::AsyncRead + tokio::io::AsyncWrite + Send + Unpin + 'static> Stream for T {}

type Sender = hyper::client::conn::http1::SendRequest<WasiBody>;
type Connection = hyper::client::conn::http1::Connection<TokioIo<Box<dyn Stream>>, WasiBody>;

/// TCP, TLS for https, and the HTTP/1.1 handshake with the checked address.
async fn connect(addr: SocketAddr, https: bool, host: &str) -> Result<(Sender, Connection), Error> {
    let tcp = TcpStream::connect(addr).await.map_err(|e| match e.kind() {
        std::io::ErrorKind::ConnectionRefused => Error::ConnectionRefused,
        _ => Error::Connect(e),
    })?;
    let stream: Box<dyn Stream> = if https {
        let name = rustls::pki_types::ServerName::try_from(host.to_owned())
            .map_err(|_| Error::HttpRequestUriInvalid)?;
        let tls = tokio_rustls::TlsConnector::from(crate::tls::client_config())
            .connect(name, tcp)
            .await
            .map_err(Error::Tls)?;
        Box::new(tls)
    } else {
        Box::new(tcp)
    };
    Ok(hyper::client::conn::http1::handshake(TokioIo::new(stream)).await?)
}

/// Connect to the checked address and exchange one HTTP/1.1 request, each
/// step bounded by the guest's timeouts and the call's deadline.
async fn send(
    mut request: http::Request<WasiBody>,
    addr: SocketAddr,
    https: bool,
    host: &str,
    options: Option<RequestOptions>,
    deadline: Instant,
) -> Result<(http::Response<WasiBody>, IoFuture), Error> {
    let connect_timeout = options.and_then(|o| o.connect_timeout).unwrap_or(CONNECT_TIMEOUT);
    let first_byte_timeout = options.and_then(|o| o.first_byte_timeout).unwrap_or(CONNECT_TIMEOUT);
    // The whole connection set-up, TLS included: a server that accepts and
    // then stays silent must not hold the request past the call.
    let (mut sender, conn) =
        tokio::time::timeout(connect_timeout.min(remaining(deadline)), connect(addr, https, host))
            .await
            .map_err(|_| Error::ConnectionTimeout)??;
    // hyper sends the URI as given; an origin server expects only path and query.
    let path = request.uri().path_and_query().map_or("/", |p| p.as_str()).to_owned();
    *request.uri_mut() = path.parse().map_err(|_| Error::HttpRequestUriInvalid)?;

    let conn = tokio::spawn(conn);
    let response = tokio::time::timeout(
        first_byte_timeout.min(remaining(deadline)),
        sender.send_request(request),
    )
    .await
    .map_err(|_| Error::ConnectionReadTimeout)??;
    let response = response.map(|body| body.map_err(Error::from).boxed_unsync());
    let io: IoFuture = Box::new(async move {
        match conn.await {
            Ok(result) => result.map_err(Error::from),
            Err(_) => Err(Error::ConnectionTerminated),
        }
    });
    Ok((response, io))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn redirect(status: u16, location: &str) -> http::Response<()> {
        http::Response::builder().status(status).header("location", location).body(()).unwrap()
    }

    #[test]
    fn only_a_redirect_to_plain_http_counts_as_a_downgrade() {
        for (status, location, downgrade) in [
            (302, "http://example.com/a", true),
            (301, "HTTP://Example.com:8080/", true),
            (307, " http://10.0.0.1/", true),
            (308, "http://user@example.com/", true),
            (302, "https://example.com/a", false),
            (302, "//example.com/a", false),
            (302, "/relative?x=http://a", false),
            (302, "relative:path", false),
            (200, "http://example.com/", false),
            (304, "", false),
        ] {
            let got = plain_http_location(&redirect(status, location));
            assert_eq!(got.is_some(), downgrade, "{status} {location:?}");
        }
    }

    fn guard(deadline: Instant) -> NetGuard {
        let allow: NetAllowlist =
            ["127.0.0.1:*", "example.com"].iter().map(|p| p.parse().unwrap()).collect();
        NetGuard::new("probe", allow, &[], deadline)
    }

    fn request(url: &str) -> http::Request<WasiBody> {
        let body =
            http_body_util::Empty::<Bytes>::new().map_err(|never| match never {}).boxed_unsync();
        http::Request::get(url).body(body).unwrap()
    }

    async fn send_through(
        guard: &mut NetGuard,
        url: &str,
    ) -> Result<http::Response<WasiBody>, Error> {
        let future = guard.send_request(request(url), None, Box::new(async { Ok(()) }));
        Pin::from(future).await.map(|(response, _io)| response)
    }

    #[tokio::test]
    async fn after_an_https_to_http_redirect_plain_http_is_refused() {
        // No TLS server can be trusted in a test, so the https hop is
        // recorded as the guard records it after a 3xx; what counts is the
        // refusal of the next plain-http request.
        let server = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = server.local_addr().unwrap();
        tokio::spawn(async move {
            while let Ok((mut socket, _)) = server.accept().await {
                tokio::spawn(async move {
                    use tokio::io::{AsyncReadExt, AsyncWriteExt};
                    let mut buf = [0; 1024];
                    let _ = socket.read(&mut buf).await;
                    let _ = socket
                        .write_all(
                            b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok",
                        )
                        .await;
                });
            }
        });
        let mut guard = guard(Instant::now() + Duration::from_secs(10));
        let url = format!("http://{addr}/");
        assert!(send_through(&mut guard, &url).await.is_ok(), "plain http before any downgrade");
        let response = redirect(302, &format!("http://{addr}/landing"));
        let to = plain_http_location(&response).unwrap();
        remember_downgrade(&guard.downgrade, "GET https://example.com", &to);
        let err = send_through(&mut guard, &format!("http://{addr}/landing")).await.unwrap_err();
        assert!(matches!(err, Error::HttpRequestDenied), "{err:?}");
        let denials = guard.denials.lock().unwrap().summary().unwrap_or_default();
        assert!(
            denials.contains("redirected from https to plain http")
                && denials.contains("example.com"),
            "{denials}"
        );
        let err = send_through(&mut guard, &format!("http://{addr}/elsewhere")).await.unwrap_err();
        assert!(
            matches!(err, Error::HttpRequestDenied),
            "any plain http, not only the target: {err:?}"
        );
    }

    #[tokio::test]
    async fn dns_obeys_the_calls_deadline() {
        let err = resolve("localhost", 80, Instant::now()).await.unwrap_err();
        assert!(matches!(err, Error::DnsTimeout), "{err:?}");
        let addr =
            resolve("127.0.0.1", 80, Instant::now()).await.expect("a literal needs no lookup");
        assert_eq!(addr.port(), 80);
    }

    #[tokio::test]
    async fn a_silent_tls_server_cannot_hold_a_request_past_the_deadline() {
        // Accepts, then never speaks: today's connect timeout covered only
        // TCP, and the TLS handshake waited forever.
        let server = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = server.local_addr().unwrap();
        let _keep = tokio::spawn(async move {
            let mut open = Vec::new();
            while let Ok((socket, _)) = server.accept().await {
                open.push(socket);
            }
        });
        let started = Instant::now();
        let outcome = tokio::time::timeout(
            Duration::from_secs(5),
            send(
                request("https://localhost/"),
                addr,
                true,
                "localhost",
                None,
                started + Duration::from_millis(300),
            ),
        )
        .await
        .expect("gave up by the deadline, not by the test's own timeout");
        assert!(matches!(outcome, Err(Error::ConnectionTimeout)), "{:?}", outcome.err());
        assert!(started.elapsed() < Duration::from_secs(2), "{:?}", started.elapsed());
    }

    #[test]
    fn compressed_or_transfer_coded_answers_cannot_be_masked() {
        let headers = |pairs: &[(&str, &str)]| {
            let mut map = http::HeaderMap::new();
            for (k, v) in pairs {
                map.append(http::HeaderName::from_bytes(k.as_bytes()).unwrap(), v.parse().unwrap());
            }
            map
        };
        assert_eq!(unmaskable_coding(&headers(&[])), None);
        assert_eq!(
            unmaskable_coding(&headers(&[
                ("content-encoding", "identity"),
                ("transfer-encoding", "chunked")
            ])),
            None
        );
        assert_eq!(
            unmaskable_coding(&headers(&[("content-encoding", "gzip")])).as_deref(),
            Some("content-encoding: gzip")
        );
        assert!(unmaskable_coding(&headers(&[("content-encoding", "identity, br")])).is_some());
        assert!(unmaskable_coding(&headers(&[("transfer-encoding", "gzip, chunked")])).is_some());
        let mut sent =
            headers(&[("accept-encoding", "gzip, br"), ("te", "gzip"), ("range", "bytes=4-8")]);
        ask_for_a_maskable_answer(&mut sent);
        assert_eq!(sent["accept-encoding"], "identity");
        assert!(sent.get("te").is_none() && sent.get("range").is_none());
    }
}

#[cfg(test)]
mod denial_tests {
    use super::*;

    #[test]
    fn refusals_in_a_loop_are_counted_not_kept() {
        // Regression: every refusal was kept (and logged) whole, so a skill
        // looping on refused requests with long URLs grew the host without
        // bound, outside its memory limit.
        let mut denials = Denials::default();
        for _ in 0..100_000 {
            denials.push(
                "probe",
                format!("GET http://{}.example/ is not granted", "a".repeat(60_000)),
            );
        }
        assert_eq!(denials.kept.len(), Denials::KEPT);
        assert!(denials.kept.iter().all(|r| r.len() <= Denials::REASON_BYTES + 16));
        assert!(denials.summary().unwrap().ends_with("; and 99992 more refused"));
    }
}
