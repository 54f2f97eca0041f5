//! Credentials the host adds to a skill's outgoing requests at egress.
//!
//! The table binds a secret (a host environment variable or a file) to one
//! host and a way of injecting it (a header or a query parameter). The skill
//! never holds the value: the host reads it when a matching request leaves,
//! and redacts it from what comes back. See [`Credential`].

use std::fmt;
use std::net::IpAddr;
use std::path::PathBuf;

/// Header names a credential may not set: they frame the request itself.
const RESERVED_HEADERS: &[&str] = &[
    "host",
    "content-length",
    "transfer-encoding",
    "connection",
    "upgrade",
    "te",
    "trailer",
    "keep-alive",
];

/// One `[[skills.NAME.credentials]]` entry, checked.
///
/// ```toml
/// [[skills.http_api.credentials]]
/// host   = "api.example.com"   # exact host, optionally host:port
/// env    = "EXAMPLE_TOKEN"     # or: file = "/run/secrets/example"
/// header = "Authorization"     # or: query = "api_key"
/// prefix = "Bearer "           # optional, put before the value
/// allow_http = false           # only for loopback test hosts
/// ```
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Credential {
    /// The host, lower case, without brackets or a trailing dot.
    pub host: String,
    /// Only this port, when the table wrote `host:port`.
    pub port: Option<u16>,
    /// Where the secret is read from.
    pub source: SecretSource,
    /// How it is added to the request.
    pub inject: Injection,
    /// Also inject over plain `http` (loopback hosts only).
    pub allow_http: bool,
}

/// Where a credential's value comes from. Read at each request, so a
/// rotated secret is used without a restart.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum SecretSource {
    /// A host environment variable, by name.
    Env(String),
    /// A file; one trailing newline is dropped.
    File(PathBuf),
}

/// How a credential travels.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Injection {
    /// A request header, replacing any header of that name the skill set.
    Header {
        /// The header name, lower case.
        name: String,
        /// Text put before the value, e.g. `Bearer `.
        prefix: String,
    },
    /// A query parameter, appended to the URL.
    Query {
        /// The parameter name.
        name: String,
        /// Text put before the value.
        prefix: String,
    },
}

/// A secret value. Its `Debug` and `Display` never show it.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    /// The value, for the one place that sends it.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Secret([REDACTED])")
    }
}

impl fmt::Display for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("[REDACTED]")
    }
}

impl Credential {
    /// Check one table entry. `host` is `name`, `name:port`, an IP address or
    /// `[v6]:port`; exactly one of `env`/`file` and one of `header`/`query`.
    /// Errors are sentences naming the fix, without the key (the caller adds it).
    pub fn new(
        host: &str,
        source: SecretSource,
        inject: Injection,
        allow_http: bool,
    ) -> Result<Credential, String> {
        let (host, port) = split_host(host)?;
        if allow_http && !is_loopback(&host) {
            return Err(format!(
                "allow_http is only for loopback test hosts (127.0.0.1, [::1], localhost), not \
                 {host:?}: a credential sent over plain http can be read on the network; use https"
            ));
        }
        match &source {
            SecretSource::Env(name) if !super::raw::is_env_name(name) => {
                return Err(format!(
                    "{name:?} is not an environment variable name; use letters, digits and \"_\", \
                     not starting with a digit"
                ));
            }
            SecretSource::File(path) if !path.is_absolute() => {
                return Err(format!("{} must be an absolute path", path.display()));
            }
            _ => {}
        }
        let inject = match inject {
            Injection::Header { name, prefix } => {
                let lower = name.to_ascii_lowercase();
                if http::HeaderName::from_bytes(lower.as_bytes()).is_err() {
                    return Err(format!("{name:?} is not a valid HTTP header name"));
                }
                if RESERVED_HEADERS.contains(&lower.as_str()) {
                    return Err(format!(
                        "{name:?} frames the request and cannot carry a credential; use e.g. \
                         \"Authorization\""
                    ));
                }
                check_prefix(&prefix)?;
                Injection::Header { name: lower, prefix }
            }
            Injection::Query { name, prefix } => {
                if name.is_empty()
                    || !name.bytes().all(|b| b.is_ascii_alphanumeric() || b"-_.~".contains(&b))
                {
                    return Err(format!(
                        "{name:?} is not a plain query parameter name; use letters, digits, '-', \
                         '_', '.' or '~'"
                    ));
                }
                check_prefix(&prefix)?;
                Injection::Query { name, prefix }
            }
        };
        Ok(Credential { host, port, source, inject, allow_http })
    }

    /// `host` or `host:port`, as written in messages and the skill's view.
    pub fn target(&self) -> String {
        let host = self.target_host();
        match self.port {
            Some(port) => format!("{host}:{port}"),
            None => host,
        }
    }

    /// The host as a URL writes it (IPv6 in brackets), without the port.
    pub fn target_host(&self) -> String {
        if self.host.contains(':') { format!("[{}]", self.host) } else { self.host.clone() }
    }

    /// True when a request to `host` (as the URL wrote it) on `port` is for
    /// this credential, whatever the scheme.
    pub fn matches_host(&self, host: &str, port: u16) -> bool {
        normalise(host).is_some_and(|h| h == self.host) && self.port.is_none_or(|p| p == port)
    }

    /// True when the credential may travel over `scheme` (`https`, or
    /// `http` with `allow_http`).
    pub fn allows_scheme(&self, scheme: &str) -> bool {
        scheme.eq_ignore_ascii_case("https")
            || (self.allow_http && scheme.eq_ignore_ascii_case("http"))
    }

    /// Read the secret now. The error says which variable or file is missing,
    /// never a value.
    pub fn secret(&self) -> Result<Secret, String> {
        let value = match &self.source {
            SecretSource::Env(name) => std::env::var(name).map_err(|_| {
                format!(
                    "the credential for {} comes from ${name}, which is not set on the host",
                    self.target()
                )
            })?,
            SecretSource::File(path) => {
                let mut text = std::fs::read_to_string(path).map_err(|e| {
                    format!(
                        "the credential for {} comes from {}, which cannot be read: {e}",
                        self.target(),
                        path.display()
                    )
                })?;
                if text.ends_with('\n') {
                    text.pop();
                    if text.ends_with('\r') {
                        text.pop();
                    }
                }
                text
            }
        };
        if value.is_empty() {
            return Err(format!("the credential for {} is empty", self.target()));
        }
        if value.chars().any(char::is_control) {
            return Err(format!(
                "the credential for {} contains control characters",
                self.target()
            ));
        }
        Ok(Secret(value))
    }
}

fn check_prefix(prefix: &str) -> Result<(), String> {
    if prefix.chars().any(char::is_control) {
        return Err("prefix must not contain control characters (such as a newline)".to_owned());
    }
    Ok(())
}

/// Split `host[:port]`, normalising the host.
fn split_host(text: &str) -> Result<(String, Option<u16>), String> {
    let bad = || {
        format!(
            "{text:?} is not a host; write an exact host such as \"api.example.com\" or \
             \"127.0.0.1:8080\" (no scheme, path or wildcard)"
        )
    };
    let (host, port) = if let Some(rest) = text.strip_prefix('[') {
        let (inner, after) = rest.split_once(']').ok_or_else(bad)?;
        let port = match after {
            "" => None,
            _ => Some(after.strip_prefix(':').ok_or_else(bad)?),
        };
        (inner, port)
    } else if text.parse::<IpAddr>().is_ok() {
        (text, None)
    } else {
        match text.rsplit_once(':') {
            Some((h, p)) => (h, Some(p)),
            None => (text, None),
        }
    };
    let port =
        port.map(|p| p.parse::<u16>().ok().filter(|p| *p != 0).ok_or_else(bad)).transpose()?;
    let host = normalise(host).ok_or_else(bad)?;
    Ok((host, port))
}

/// Lower case, no trailing dot or brackets, canonical IP; `None` when it is
/// not a plain name or address.
fn normalise(host: &str) -> Option<String> {
    let host = host.strip_prefix('[').and_then(|h| h.strip_suffix(']')).unwrap_or(host);
    if let Ok(ip) = host.parse::<IpAddr>() {
        return Some(ip.to_canonical().to_string());
    }
    let name = host.strip_suffix('.').unwrap_or(host).to_ascii_lowercase();
    let plain = !name.is_empty()
        && name.split('.').all(|l| {
            !l.is_empty() && l.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        });
    plain.then_some(name)
}

fn is_loopback(host: &str) -> bool {
    host == "localhost" || host.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header() -> Injection {
        Injection::Header { name: "Authorization".into(), prefix: "Bearer ".into() }
    }

    fn env() -> SecretSource {
        SecretSource::Env("TOKEN".into())
    }

    #[test]
    fn hosts_are_normalised_and_matched_exactly() {
        let c = Credential::new("API.Example.com.", env(), header(), false).unwrap();
        assert_eq!(c.host, "api.example.com");
        assert!(c.matches_host("api.example.com", 443));
        assert!(c.matches_host("API.EXAMPLE.COM", 8443), "no port written: any port");
        assert!(!c.matches_host("evil.api.example.com", 443));
        assert!(!c.matches_host("example.com", 443));
        let c = Credential::new("[::1]:8080", env(), header(), true).unwrap();
        assert_eq!(c.target(), "[::1]:8080");
        assert!(c.matches_host("[::1]", 8080));
        assert!(!c.matches_host("[::1]", 8081));
        let c = Credential::new("127.0.0.1:9", env(), header(), true).unwrap();
        assert!(c.matches_host("127.0.0.1", 9));
    }

    #[test]
    fn bad_entries_say_what_to_write() {
        for (host, why) in [
            ("*.example.com", "not a host"),
            ("https://api.example.com", "not a host"),
            ("api.example.com/v1", "not a host"),
            ("api.example.com:0", "not a host"),
            ("", "not a host"),
        ] {
            let err = Credential::new(host, env(), header(), false).unwrap_err();
            assert!(err.contains(why), "{host}: {err}");
        }
        let err = Credential::new("api.example.com", env(), header(), true).unwrap_err();
        assert!(err.contains("loopback"), "{err}");
        let err = Credential::new("a.com", SecretSource::File("rel/token".into()), header(), false)
            .unwrap_err();
        assert!(err.contains("absolute"), "{err}");
        let err =
            Credential::new("a.com", SecretSource::Env("1X".into()), header(), false).unwrap_err();
        assert!(err.contains("environment variable name"), "{err}");
        let host = Injection::Header { name: "Host".into(), prefix: String::new() };
        assert!(
            Credential::new("a.com", env(), host, false)
                .unwrap_err()
                .contains("frames the request")
        );
        let bad = Injection::Header { name: "Bad Header".into(), prefix: String::new() };
        assert!(
            Credential::new("a.com", env(), bad, false)
                .unwrap_err()
                .contains("not a valid HTTP header")
        );
        let q = Injection::Query { name: "a&b".into(), prefix: String::new() };
        assert!(Credential::new("a.com", env(), q, false).unwrap_err().contains("query parameter"));
        let nl = Injection::Header { name: "X-Key".into(), prefix: "a\nb".into() };
        assert!(Credential::new("a.com", env(), nl, false).unwrap_err().contains("control"));
    }

    #[test]
    fn scheme_rules() {
        let https_only = Credential::new("localhost", env(), header(), false).unwrap();
        assert!(https_only.allows_scheme("https") && !https_only.allows_scheme("http"));
        let test = Credential::new("localhost", env(), header(), true).unwrap();
        assert!(test.allows_scheme("HTTP"));
    }

    #[test]
    fn secrets_come_from_files_without_the_newline_and_never_print() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("token");
        std::fs::write(&path, "s3cr3t-value\n").unwrap();
        let c =
            Credential::new("a.com", SecretSource::File(path.clone()), header(), false).unwrap();
        let secret = c.secret().unwrap();
        assert_eq!(secret.expose(), "s3cr3t-value");
        assert_eq!(format!("{secret} {secret:?}"), "[REDACTED] Secret([REDACTED])");
        std::fs::remove_file(&path).unwrap();
        let err = c.secret().unwrap_err();
        assert!(err.contains("cannot be read") && err.contains("a.com"), "{err}");
        let missing = Credential::new(
            "a.com",
            SecretSource::Env("AGENT_REACH_TEST_SURELY_UNSET".into()),
            header(),
            false,
        )
        .unwrap();
        assert!(
            missing
                .secret()
                .unwrap_err()
                .contains("$AGENT_REACH_TEST_SURELY_UNSET, which is not set")
        );
    }
}
