//! The network capability: every outgoing `wasi:http` request of a skill
//! passes through [`NetGuard::send_request`], which
//!
//! 1. allows only http/https to hosts on the skill's allowlist,
//! 2. resolves the name itself and refuses internal addresses (loopback,
//!    private, link-local, cloud metadata…) unless the table names that
//!    address explicitly — the SSRF guard,
//! 3. connects to exactly the address it checked, so a DNS answer cannot
//!    change between the check and the connection,
//! 4. adds the credential the table binds to that host (https only, unless
//!    `allow_http` for a loopback test host) and masks its value in the
//!    response, so the skill never holds it.
//!
//! Redirects are not followed here: the guest sees the 3xx and, if it
//! follows it, sends a new request that is checked again from step 1.

use super::redact::{RedactingBody, Redactor};
use crate::policy::{Credential, Injection, NetAllowlist, Secret, is_internal_address};
use http::uri::Scheme;
use http_body_util::BodyExt;
use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;
use tokio::net::TcpStream;
use wasmtime_wasi_http::io::TokioIo;
use wasmtime_wasi_http::{Error, RequestOptions, WasiBody, WasiHttpHooks};

type IoFuture = Box<dyn Future<Output = Result<(), Error>> + Send>;
type SendFuture = Box<dyn Future<Output = Result<(http::Response<WasiBody>, IoFuture), Error>> + Send>;

const CONNECT_TIMEOUT: Duration = Duration::from_secs(30);

/// The per-call network policy of one skill.
pub(crate) struct NetGuard {
    skill: Arc<str>,
    allow: Arc<NetAllowlist>,
    credentials: Arc<[Credential]>,
    /// Refusals during this call, appended to a `denied` error so the model
    /// and the operator see exactly what was refused and what is allowed.
    pub(crate) denials: Arc<Mutex<Vec<String>>>,
}

impl NetGuard {
    pub(crate) fn new(skill: &str, allow: NetAllowlist, credentials: &[Credential]) -> Self {
        NetGuard { skill: skill.into(), allow: Arc::new(allow), credentials: credentials.into(), denials: Arc::default() }
    }
}

fn allowed_list(allow: &NetAllowlist) -> String {
    if allow.is_empty() { "nothing is allowed".to_owned() } else { format!("allowed: {allow}") }
}

fn deny(skill: &str, denials: &Mutex<Vec<String>>, reason: String) {
    tracing::warn!(skill, capability = "net", "denied: {reason}");
    denials.lock().unwrap_or_else(|e| e.into_inner()).push(format!("net: {reason}"));
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
        Box::new(async move {
            let mut request = request;
            let uri = request.uri().clone();
            let scheme = uri.scheme().cloned().unwrap_or(Scheme::HTTPS);
            let https = scheme == Scheme::HTTPS;
            let Some(host) = uri.host().map(|h| h.trim_start_matches('[').trim_end_matches(']').to_owned()) else {
                return Err(Error::HttpRequestUriInvalid);
            };
            let port = uri.port_u16().unwrap_or(if https { 443 } else { 80 });
            let target = format!("{} {scheme}://{}", request.method(), uri.authority().map_or("", |a| a.as_str()));
            if scheme != Scheme::HTTP && scheme != Scheme::HTTPS {
                deny(&skill, &denials, format!("{target}: only http and https are allowed"));
                return Err(Error::HttpRequestDenied);
            }
            let Some(pattern) = allow.allows(scheme.as_str(), &host, port) else {
                deny(&skill, &denials, format!("{target} is not granted ({})", allowed_list(&allow)));
                return Err(Error::HttpRequestDenied);
            };
            tracing::debug!(skill = &*skill, capability = "net", %pattern, "granted: {target}");

            let addr = resolve(&host, port).await?;
            if is_internal_address(addr.ip()) && !allow.names_address_explicitly(addr.ip(), port) {
                deny(
                    &skill,
                    &denials,
                    format!(
                        "{target} resolves to the internal address {}, which the permission table does not name (add \"{}\" to `net` to allow it)",
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
                        "not sent over {scheme}: credentials travel over https only (allow_http = true is for loopback test hosts)"
                    );
                    None
                }
                Some(cred) => {
                    let secret = cred.secret().map_err(|why| {
                        deny(&skill, &denials, format!("{target}: {why}"));
                        Error::HttpRequestDenied
                    })?;
                    let sent = inject(&mut request, cred, &secret)?;
                    // The value itself is never logged; only that it was added.
                    tracing::info!(skill = &*skill, capability = "credential", host = %cred.target(), "added at egress: {target}");
                    Some(Arc::new(Redactor::new(secret_forms(secret.expose(), &sent))))
                }
            };
            let (response, io) = send(request, addr, https, &host, options).await?;
            match redactor {
                Some(redactor) => Ok((mask_response(response, redactor), io)),
                None => Ok((response, io)),
            }
        })
    }
}

/// Add the credential to the request; returns the exact text sent (prefix
/// and value), which is masked in the response along with the bare value.
fn inject(request: &mut http::Request<WasiBody>, cred: &Credential, secret: &Secret) -> Result<String, Error> {
    match &cred.inject {
        Injection::Header { name, prefix } => {
            let text = format!("{prefix}{}", secret.expose());
            let name = http::HeaderName::from_bytes(name.as_bytes()).map_err(|_| Error::HttpRequestDenied)?;
            let mut value = http::HeaderValue::from_str(&text).map_err(|_| Error::HttpRequestDenied)?;
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
            parts.path_and_query = Some(format!("{path}?{query}").parse().map_err(|_| Error::HttpRequestUriInvalid)?);
            *request.uri_mut() = http::Uri::from_parts(parts).map_err(|_| Error::HttpRequestUriInvalid)?;
            Ok(text)
        }
    }
}

/// The ways a secret can appear: bare, as sent (with its prefix), and
/// percent-encoded as in a query string.
pub(crate) fn secret_forms(bare: &str, sent: &str) -> [String; 3] {
    [bare.to_owned(), sent.to_owned(), percent_encode(sent)]
}

/// The masks for every credential of a skill whose value can be read now:
/// applied to results and errors before they reach the model or a log.
pub(crate) fn credential_redactor(credentials: &[Credential]) -> Redactor {
    Redactor::new(credentials.iter().filter_map(|c| c.secret().ok().map(|s| (c, s))).flat_map(|(c, s)| {
        let prefix = match &c.inject {
            Injection::Header { prefix, .. } | Injection::Query { prefix, .. } => prefix,
        };
        secret_forms(s.expose(), &format!("{prefix}{}", s.expose()))
    }))
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

/// Mask the credential in the response's headers and body. The length may
/// change, so `Content-Length` goes.
fn mask_response(response: http::Response<WasiBody>, redactor: Arc<Redactor>) -> http::Response<WasiBody> {
    let (mut parts, body) = response.into_parts();
    parts.headers.remove(http::header::CONTENT_LENGTH);
    for value in parts.headers.values_mut() {
        let masked = value.to_str().ok().map(|text| redactor.text(text).into_owned());
        if let Some(masked) = masked.filter(|m| m.as_bytes() != value.as_bytes()) {
            *value = http::HeaderValue::from_str(&masked).unwrap_or_else(|_| http::HeaderValue::from_static("[REDACTED]"));
        }
    }
    http::Response::from_parts(parts, RedactingBody::new(body, redactor).boxed_unsync())
}

/// Resolve `host` to one address (IP literals need no lookup).
async fn resolve(host: &str, port: u16) -> Result<SocketAddr, Error> {
    if let Ok(ip) = host.parse::<IpAddr>() {
        return Ok(SocketAddr::new(ip, port));
    }
    let mut addrs = tokio::net::lookup_host((host, port))
        .await
        .map_err(|_| Error::DnsError { rcode: None, info_code: None })?;
    addrs.next().ok_or(Error::DestinationNotFound)
}

fn tls_config() -> Arc<rustls::ClientConfig> {
    static CONFIG: OnceLock<Arc<rustls::ClientConfig>> = OnceLock::new();
    CONFIG
        .get_or_init(|| {
            let roots = rustls::RootCertStore { roots: webpki_roots::TLS_SERVER_ROOTS.into() };
            let provider = Arc::new(rustls::crypto::ring::default_provider());
            let config = rustls::ClientConfig::builder_with_provider(provider)
                .with_safe_default_protocol_versions()
                .expect("ring supports the default TLS versions")
                .with_root_certificates(roots)
                .with_no_client_auth();
            Arc::new(config)
        })
        .clone()
}

trait Stream: tokio::io::AsyncRead + tokio::io::AsyncWrite + Send + Unpin + 'static {}
impl<T: tokio::io::AsyncRead + tokio::io::AsyncWrite + Send + Unpin + 'static> Stream for T {}

/// Connect to the checked address and exchange one HTTP/1.1 request.
async fn send(
    mut request: http::Request<WasiBody>,
    addr: SocketAddr,
    https: bool,
    host: &str,
    options: Option<RequestOptions>,
) -> Result<(http::Response<WasiBody>, IoFuture), Error> {
    let connect_timeout = options.and_then(|o| o.connect_timeout).unwrap_or(CONNECT_TIMEOUT);
    let first_byte_timeout = options.and_then(|o| o.first_byte_timeout).unwrap_or(CONNECT_TIMEOUT);
    let tcp = tokio::time::timeout(connect_timeout, TcpStream::connect(addr))
        .await
        .map_err(|_| Error::ConnectionTimeout)?
        .map_err(|e| match e.kind() {
            std::io::ErrorKind::ConnectionRefused => Error::ConnectionRefused,
            _ => Error::Connect(e),
        })?;
    let stream: Box<dyn Stream> = if https {
        let name = rustls::pki_types::ServerName::try_from(host.to_owned()).map_err(|_| Error::HttpRequestUriInvalid)?;
        let tls = tokio_rustls::TlsConnector::from(tls_config())
            .connect(name, tcp)
            .await
            .map_err(Error::Tls)?;
        Box::new(tls)
    } else {
        Box::new(tcp)
    };
    let (mut sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream)).await?;
    // hyper sends the URI as given; an origin server expects only path and query.
    let path = request.uri().path_and_query().map_or("/", |p| p.as_str()).to_owned();
    *request.uri_mut() = path.parse().map_err(|_| Error::HttpRequestUriInvalid)?;

    let conn = tokio::spawn(conn);
    let response = tokio::time::timeout(first_byte_timeout, sender.send_request(request))
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
