//! Network grants: host patterns and the allowlist built from them.
//!
//! A pattern names a host and a port; a request is allowed when some pattern
//! matches its host, its port and an `http`/`https` scheme. Matching works on
//! the URL's host *name*; what that name resolves to is checked separately
//! by the SSRF guard ([`is_internal_address`](super::is_internal_address)).

use std::fmt;
use std::net::{IpAddr, Ipv6Addr};
use std::str::FromStr;

mod parse;

/// What every host-pattern error ends with, so the operator sees the fix.
const ACCEPTED: &str = r#"use "host", "host:port" or "*.domain""#;

/// One entry of a skill's `net` list, parsed and normalised.
///
/// | written            | allows                                              |
/// |--------------------|-----------------------------------------------------|
/// | `example.com`      | exactly that host, on the scheme's default port     |
/// | `example.com:8080` | that host on port 8080 only                         |
/// | `example.com:*`    | that host on any port                               |
/// | `*.example.com`    | any subdomain, at any depth, not `example.com`      |
/// | `10.0.0.5`, `[::1]:8080` | that IP address (IPv4-mapped IPv6 is the IPv4) |
///
/// Names compare case-insensitively and ignore one trailing dot.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct HostPattern {
    host: HostMatch,
    port: PortMatch,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum HostMatch {
    /// A DNS name, lower case, without a trailing dot.
    Name(String),
    /// The part after `*.`, lower case, at least two labels.
    Subdomains(String),
    /// An address in canonical form (IPv4-mapped IPv6 becomes IPv4).
    Ip(IpAddr),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum PortMatch {
    /// 80 for `http`, 443 for `https`: the port a bare host in a URL means.
    SchemeDefault,
    Exact(u16),
    Any,
}

/// The host of a request URL, normalised the same way patterns are.
enum RequestHost {
    Name(String),
    Ip(IpAddr),
}

impl HostPattern {
    /// Parse one `net` entry.
    ///
    /// The error is a whole sentence: what was wrong and what is accepted,
    /// e.g. `"*." is not a valid host pattern: a wildcard needs a domain
    /// after "*."; use "host", "host:port" or "*.domain"`.
    pub fn parse(text: &str) -> Result<HostPattern, String> {
        parse::pattern(text)
            .map_err(|why| format!("{text:?} is not a valid host pattern: {why}; {ACCEPTED}"))
    }

    /// True when a request to `scheme://host:port` is covered by this pattern.
    ///
    /// `scheme` must be `http` or `https` (any case); `host` is as the URL
    /// wrote it, possibly upper case, with a trailing dot, or a bracketed
    /// IPv6 literal.
    pub fn allows(&self, scheme: &str, host: &str, port: u16) -> bool {
        match (default_port(scheme), RequestHost::parse(host)) {
            (Some(default), Some(host)) => self.matches(default, &host, port),
            _ => false,
        }
    }

    fn matches(&self, default_port: u16, host: &RequestHost, port: u16) -> bool {
        let port_ok = match self.port {
            PortMatch::SchemeDefault => port == default_port,
            PortMatch::Exact(p) => port == p,
            PortMatch::Any => true,
        };
        port_ok
            && match (&self.host, host) {
                (HostMatch::Name(want), RequestHost::Name(got)) => want == got,
                (HostMatch::Subdomains(suffix), RequestHost::Name(got)) => got
                    .strip_suffix(suffix.as_str())
                    // The label boundary is what keeps `evil-example.com` out,
                    // and the non-empty rest what keeps `example.com` itself out.
                    .and_then(|rest| rest.strip_suffix('.'))
                    .is_some_and(|rest| !rest.is_empty()),
                (HostMatch::Ip(want), RequestHost::Ip(got)) => want == got,
                _ => false,
            }
    }

    /// True when every request `other` allows, this pattern allows too:
    /// whether a grant answers a skill's request for `other`.
    pub fn covers(&self, other: &HostPattern) -> bool {
        if self == other {
            return true;
        }
        let port_ok = match (self.port, other.port) {
            (PortMatch::Any, _) => true,
            (mine, theirs) => mine == theirs,
        };
        port_ok
            && match (&self.host, &other.host) {
                (HostMatch::Name(a), HostMatch::Name(b)) => a == b,
                (HostMatch::Ip(a), HostMatch::Ip(b)) => a == b,
                (HostMatch::Subdomains(suffix), HostMatch::Name(name)) => {
                    is_subdomain(name, suffix)
                }
                (HostMatch::Subdomains(suffix), HostMatch::Subdomains(other)) => {
                    other == suffix || is_subdomain(other, suffix)
                }
                _ => false,
            }
    }

    /// True when this pattern lets a request reach `addr` and nothing else:
    /// that IP literal (IPv4-mapped IPv6 is the IPv4 address) with that
    /// exact port. A name never counts, not even `localhost` — DNS decides
    /// where a name leads — nor does a bare address (two ports, 80 and 443)
    /// or `:*`. For confining a table to one known server (`reach eval`).
    pub fn allows_only(&self, addr: std::net::SocketAddr) -> bool {
        matches!(self.host, HostMatch::Ip(ip) if ip == addr.ip().to_canonical())
            && self.port == PortMatch::Exact(addr.port())
    }
}

/// Whether `name` lies strictly below `suffix` (`a.example.com` below
/// `example.com`; not `example.com` itself, nor `evil-example.com`).
fn is_subdomain(name: &str, suffix: &str) -> bool {
    name.strip_suffix(suffix)
        .and_then(|rest| rest.strip_suffix('.'))
        .is_some_and(|rest| !rest.is_empty())
}

impl FromStr for HostPattern {
    type Err = String;

    fn from_str(s: &str) -> Result<HostPattern, String> {
        HostPattern::parse(s)
    }
}

impl fmt::Display for HostPattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.host {
            HostMatch::Name(name) => f.write_str(name)?,
            HostMatch::Subdomains(suffix) => write!(f, "*.{suffix}")?,
            HostMatch::Ip(IpAddr::V4(v4)) => write!(f, "{v4}")?,
            HostMatch::Ip(IpAddr::V6(v6)) => write!(f, "[{v6}]")?,
        }
        match self.port {
            PortMatch::SchemeDefault => Ok(()),
            PortMatch::Exact(port) => write!(f, ":{port}"),
            PortMatch::Any => f.write_str(":*"),
        }
    }
}

impl serde::Serialize for HostPattern {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

/// A skill's `net` list: the hosts it may reach. Empty means no network.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
#[serde(transparent)]
pub struct NetAllowlist {
    patterns: Vec<HostPattern>,
}

impl NetAllowlist {
    /// An allowlist of `patterns`, in order, without repeats.
    pub fn new(patterns: impl IntoIterator<Item = HostPattern>) -> NetAllowlist {
        let mut unique: Vec<HostPattern> = Vec::new();
        for pattern in patterns {
            if !unique.contains(&pattern) {
                unique.push(pattern);
            }
        }
        NetAllowlist { patterns: unique }
    }

    /// The patterns, in the order the file gave them.
    pub fn patterns(&self) -> &[HostPattern] {
        &self.patterns
    }

    /// True when the skill may reach no host at all.
    pub fn is_empty(&self) -> bool {
        self.patterns.is_empty()
    }

    /// The first pattern that allows `scheme://host:port`, if any; see
    /// [`HostPattern::allows`].
    pub fn allows(&self, scheme: &str, host: &str, port: u16) -> Option<&HostPattern> {
        let default = default_port(scheme)?;
        let host = RequestHost::parse(host)?;
        self.patterns.iter().find(|p| p.matches(default, &host, port))
    }

    /// True when the table names this resolved address itself, so the SSRF
    /// guard may let an internal address through: some pattern is that IP
    /// literal and accepts `port` for `scheme` — a pattern without a port
    /// accepts only the scheme's default port (80 for http, 443 for https),
    /// exactly as [`allows`](Self::allows) reads it.
    ///
    /// A name pattern never counts, not even `localhost`: DNS (or
    /// `/etc/hosts`) decides what it resolves to, and the operator vouched
    /// for a name, not an address. To reach a local service, grant
    /// `127.0.0.1:PORT`.
    pub fn names_address_explicitly(&self, scheme: &str, ip: IpAddr, port: u16) -> bool {
        let Some(default) = default_port(scheme) else { return false };
        let ip = RequestHost::Ip(ip.to_canonical());
        self.patterns
            .iter()
            .any(|p| matches!(p.host, HostMatch::Ip(_)) && p.matches(default, &ip, port))
    }
}

impl FromIterator<HostPattern> for NetAllowlist {
    fn from_iter<I: IntoIterator<Item = HostPattern>>(iter: I) -> NetAllowlist {
        NetAllowlist::new(iter)
    }
}

impl fmt::Display for NetAllowlist {
    /// `a.com, *.b.org:*`, or `none` when empty; for refusal messages.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.patterns.is_empty() {
            return f.write_str("none");
        }
        for (i, pattern) in self.patterns.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            write!(f, "{pattern}")?;
        }
        Ok(())
    }
}

/// The port a URL without one means; `None` for schemes we never allow.
fn default_port(scheme: &str) -> Option<u16> {
    if scheme.eq_ignore_ascii_case("http") {
        Some(80)
    } else if scheme.eq_ignore_ascii_case("https") {
        Some(443)
    } else {
        None
    }
}

impl RequestHost {
    /// Normalise a URL host; `None` for anything that is neither an IP
    /// literal nor a plain DNS name, which then matches nothing.
    fn parse(host: &str) -> Option<RequestHost> {
        if let Some(inner) = host.strip_prefix('[') {
            let v6: Ipv6Addr = inner.strip_suffix(']')?.parse().ok()?;
            return Some(RequestHost::Ip(IpAddr::V6(v6).to_canonical()));
        }
        if let Ok(ip) = host.parse::<IpAddr>() {
            return Some(RequestHost::Ip(ip.to_canonical()));
        }
        let name = host.strip_suffix('.').unwrap_or(host).to_ascii_lowercase();
        let plain =
            name.split('.').all(|label| !label.is_empty() && label.bytes().all(is_label_byte));
        plain.then_some(RequestHost::Name(name))
    }
}

fn is_label_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'-' || b == b'_'
}

#[cfg(test)]
mod tests {
    use super::*;

    /// (pattern, scheme, request host, request port, allowed?)
    const ALLOWS: &[(&str, &str, &str, u16, bool)] = &[
        // A bare host means the scheme's own default port, nothing else.
        ("example.com", "https", "example.com", 443, true),
        ("example.com", "http", "example.com", 80, true),
        ("example.com", "https", "example.com", 80, false),
        ("example.com", "http", "example.com", 443, false),
        ("example.com", "https", "example.com", 8443, false),
        // Case and one trailing dot are spelling, not a different host.
        ("example.com", "https", "EXAMPLE.COM", 443, true),
        ("example.com", "https", "Example.Com.", 443, true),
        ("example.com", "https", "example.com.", 443, true),
        ("example.com", "https", "example.com..", 443, false),
        ("EXAMPLE.COM", "https", "example.com", 443, true),
        ("example.com.", "https", "example.com", 443, true),
        // Look-alikes.
        ("example.com", "https", "evil-example.com", 443, false),
        ("example.com", "https", "example.com.evil.net", 443, false),
        ("example.com", "https", "www.example.com", 443, false),
        ("example.com", "https", "notexample.com", 443, false),
        ("example.com", "https", "example.co", 443, false),
        ("example.com", "https", "example.com:443", 443, false),
        ("example.com", "https", "[example.com]", 443, false),
        ("example.com", "https", "", 443, false),
        // Only http and https, in any case.
        ("example.com", "HTTPS", "example.com", 443, true),
        ("example.com", "ftp", "example.com", 21, false),
        ("example.com", "ftp", "example.com", 443, false),
        ("example.com", "ws", "example.com", 80, false),
        ("example.com", "", "example.com", 443, false),
        // Explicit and any port.
        ("example.com:8080", "http", "example.com", 8080, true),
        ("example.com:8080", "https", "example.com", 8080, true),
        ("example.com:8080", "http", "example.com", 80, false),
        ("example.com:8080", "https", "example.com", 443, false),
        ("example.com:443", "http", "example.com", 443, true),
        ("example.com:*", "https", "example.com", 1, true),
        ("example.com:*", "http", "example.com", 65535, true),
        ("example.com:*", "ftp", "example.com", 21, false),
        ("example.com:*", "https", "sub.example.com", 443, false),
        // Wildcards: subdomains at any depth, never the apex or a look-alike.
        ("*.example.com", "https", "a.example.com", 443, true),
        ("*.example.com", "https", "a.b.c.example.com", 443, true),
        ("*.example.com", "https", "A.EXAMPLE.COM.", 443, true),
        ("*.example.com", "https", "example.com", 443, false),
        ("*.example.com", "https", "evil-example.com", 443, false),
        ("*.example.com", "https", "a.evil-example.com", 443, false),
        ("*.example.com", "https", "aexample.com", 443, false),
        ("*.example.com", "https", ".example.com", 443, false),
        ("*.example.com", "https", "a..example.com", 443, false),
        ("*.example.com", "https", "a.example.com.evil.net", 443, false),
        ("*.example.com", "https", "*.example.com", 443, false),
        ("*.example.com", "http", "a.example.com", 8080, false),
        ("*.example.com:8443", "https", "api.example.com", 8443, true),
        ("*.example.com:*", "http", "api.example.com", 3000, true),
        // localhost is a name; it does not match loopback literals.
        ("localhost", "http", "localhost", 80, true),
        ("localhost", "http", "LOCALHOST.", 80, true),
        ("localhost", "http", "127.0.0.1", 80, false),
        ("localhost", "http", "localhost", 3000, false),
        ("localhost:3000", "http", "localhost", 3000, true),
        // IP literals, with IPv4-mapped IPv6 being the IPv4 address.
        ("127.0.0.1", "http", "127.0.0.1", 80, true),
        ("127.0.0.1", "http", "localhost", 80, false),
        ("127.0.0.1", "http", "127.0.0.2", 80, false),
        ("127.0.0.1", "http", "2130706433", 80, false),
        ("127.0.0.1", "http", "127.1", 80, false),
        ("127.0.0.1:8080", "http", "127.0.0.1", 8080, true),
        ("127.0.0.1", "http", "::ffff:127.0.0.1", 80, true),
        ("127.0.0.1", "http", "[::ffff:127.0.0.1]", 80, true),
        ("::ffff:127.0.0.1", "http", "127.0.0.1", 80, true),
        ("10.0.0.5:*", "https", "10.0.0.5", 9000, true),
        ("10.0.0.5", "https", "10.0.0.50", 443, false),
        ("[::1]", "http", "[::1]", 80, true),
        ("[::1]", "http", "::1", 80, true),
        ("::1", "http", "[::1]", 80, true),
        ("[::1]", "http", "[0:0:0:0:0:0:0:1]", 80, true),
        ("[::1]", "http", "127.0.0.1", 80, false),
        ("[::1]", "http", "[::1", 80, false),
        ("[::1]:8080", "http", "[::1]", 8080, true),
        ("[::1]:8080", "http", "[::1]", 80, false),
        ("[2001:db8::1]", "https", "[2001:DB8::1]", 443, true),
        // Names with underscores and punycode are ordinary names.
        ("my_host.internal", "http", "my_host.internal", 80, true),
        ("xn--bcher-kva.example", "https", "XN--BCHER-KVA.example", 443, true),
    ];

    #[test]
    fn allows_table() {
        for &(pattern, scheme, host, port, expected) in ALLOWS {
            let parsed = HostPattern::parse(pattern).expect(pattern);
            assert_eq!(
                parsed.allows(scheme, host, port),
                expected,
                "{pattern:?} allows {scheme}://{host}:{port}"
            );
            let list = NetAllowlist::new([parsed.clone()]);
            assert_eq!(list.allows(scheme, host, port).is_some(), expected, "list of {pattern:?}");
        }
    }

    #[test]
    fn allowlist_reports_the_matching_pattern_and_dedupes() {
        let list: NetAllowlist = ["api.example.com", "*.example.com:*", "API.example.com."]
            .into_iter()
            .map(|p| HostPattern::parse(p).expect(p))
            .collect();
        assert_eq!(list.patterns().len(), 2);
        assert_eq!(list.to_string(), "api.example.com, *.example.com:*");
        let hit = list.allows("https", "api.example.com", 443).map(ToString::to_string);
        assert_eq!(hit.as_deref(), Some("api.example.com"));
        let hit = list.allows("https", "api.example.com", 8443).map(ToString::to_string);
        assert_eq!(hit.as_deref(), Some("*.example.com:*"));
        assert!(list.allows("https", "example.com", 443).is_none());
        assert!(NetAllowlist::default().is_empty());
        assert_eq!(NetAllowlist::default().to_string(), "none");
        assert!(NetAllowlist::default().allows("https", "example.com", 443).is_none());
    }

    /// (pattern, address, allows that address and nothing else?)
    const ONLY: &[(&str, &str, bool)] = &[
        ("127.0.0.1:8080", "127.0.0.1:8080", true),
        ("127.0.0.1:8081", "127.0.0.1:8080", false),
        ("127.0.0.2:8080", "127.0.0.1:8080", false),
        ("::ffff:127.0.0.1:8080", "127.0.0.1:8080", false),
        ("[::ffff:127.0.0.1]:8080", "127.0.0.1:8080", true),
        ("127.0.0.1:8080", "[::ffff:127.0.0.1]:8080", true),
        ("[::1]:8080", "[::1]:8080", true),
        ("[::1]:8080", "127.0.0.1:8080", false),
        // Every port, or the two default ports: more than one address.
        ("127.0.0.1:*", "127.0.0.1:8080", false),
        ("127.0.0.1", "127.0.0.1:80", false),
        ("127.0.0.1", "127.0.0.1:443", false),
        // A name is wherever DNS says, even localhost.
        ("localhost:8080", "127.0.0.1:8080", false),
        ("LOCALHOST:8080", "127.0.0.1:8080", false),
        ("*.localhost:8080", "127.0.0.1:8080", false),
        ("example.com:8080", "127.0.0.1:8080", false),
        ("2130706433:8080", "127.0.0.1:8080", false),
    ];

    #[test]
    fn allows_only_table() {
        for &(pattern, addr, expected) in ONLY {
            let Ok(parsed) = HostPattern::parse(pattern) else {
                assert!(!expected, "{pattern:?} does not parse");
                continue;
            };
            let addr: std::net::SocketAddr = addr.parse().expect(addr);
            assert_eq!(parsed.allows_only(addr), expected, "{pattern:?} allows only {addr}");
        }
    }

    /// (patterns, scheme, resolved address, port, named explicitly?)
    const EXPLICIT: &[(&[&str], &str, &str, u16, bool)] = &[
        (&["127.0.0.1:8080"], "http", "127.0.0.1", 8080, true),
        (&["127.0.0.1:8080"], "https", "127.0.0.1", 8080, true),
        (&["127.0.0.1:8080"], "http", "127.0.0.1", 9090, false),
        // Without a port: the scheme's own default port, nothing else.
        (&["127.0.0.1"], "http", "127.0.0.1", 80, true),
        (&["127.0.0.1"], "https", "127.0.0.1", 443, true),
        (&["127.0.0.1"], "https", "127.0.0.1", 80, false),
        (&["127.0.0.1"], "http", "127.0.0.1", 443, false),
        (&["127.0.0.1"], "HTTP", "127.0.0.1", 80, true),
        (&["127.0.0.1"], "ftp", "127.0.0.1", 80, false),
        (&["127.0.0.1"], "http", "127.0.0.1", 8080, false),
        (&["127.0.0.1"], "http", "::ffff:127.0.0.1", 80, true),
        (&["[::1]"], "https", "::1", 443, true),
        (&["[::1]"], "https", "::1", 80, false),
        (&["127.0.0.1:*"], "http", "127.0.0.2", 80, false),
        (&["127.0.0.1:*"], "https", "127.0.0.1", 80, true),
        (&["localhost:3000"], "http", "127.0.0.1", 3000, false),
        (&["localhost:3000"], "http", "127.0.0.53", 3000, false),
        (&["localhost:3000"], "http", "::1", 3000, false),
        (&["127.0.0.1:3000"], "http", "127.0.0.1", 3000, true),
        (&["127.0.0.1:3000"], "http", "127.0.0.1", 3001, false),
        (&["[::1]:3000"], "http", "::1", 3000, true),
        (&["localhost:3000"], "http", "10.0.0.1", 3000, false),
        (&["localhost:*"], "http", "169.254.169.254", 80, false),
        (&["[::1]:*"], "http", "::1", 5000, true),
        (&["10.0.0.5"], "https", "10.0.0.5", 443, true),
        (&["10.0.0.5"], "http", "10.0.0.5", 443, false),
        (&["intranet.example.com"], "https", "10.0.0.5", 443, false),
        (&["*.example.com:*"], "https", "10.0.0.5", 443, false),
        (&["metadata.google.internal"], "http", "169.254.169.254", 80, false),
        (&["example.com", "169.254.169.254"], "http", "169.254.169.254", 80, true),
        (&["example.com:*", "169.254.169.254"], "https", "169.254.169.254", 80, false),
        (&[], "http", "127.0.0.1", 80, false),
    ];

    #[test]
    fn names_address_explicitly_table() {
        for &(patterns, scheme, ip, port, expected) in EXPLICIT {
            let list: NetAllowlist =
                patterns.iter().map(|p| HostPattern::parse(p).expect(p)).collect();
            let ip: IpAddr = ip.parse().expect(ip);
            assert_eq!(
                list.names_address_explicitly(scheme, ip, port),
                expected,
                "{patterns:?} names {scheme}://{ip} port {port}"
            );
        }
    }

    #[test]
    fn serializes_as_canonical_strings() {
        let list: NetAllowlist =
            ["EXAMPLE.com", "::1"].iter().map(|p| HostPattern::parse(p).expect(p)).collect();
        let value = toml::Value::try_from(&list).expect("serialize");
        assert_eq!(value.to_string(), r#"["example.com", "[::1]"]"#);
    }

    mod properties {
        use super::*;
        use proptest::prelude::*;

        /// A DNS label: letters, digits, `-` inside, `_`; never all digits.
        fn label() -> impl Strategy<Value = String> {
            "[a-z][a-z0-9_-]{0,10}[a-z0-9]".prop_map(String::from)
        }

        /// A name of two to four labels.
        fn name() -> impl Strategy<Value = String> {
            proptest::collection::vec(label(), 2..5).prop_map(|labels| labels.join("."))
        }

        fn scheme() -> impl Strategy<Value = &'static str> {
            prop_oneof![Just("http"), Just("https")]
        }

        fn default_of(scheme: &str) -> u16 {
            if scheme == "https" { 443 } else { 80 }
        }

        proptest! {
            #[test]
            fn a_bare_name_allows_itself_on_the_default_port_only(
                name in name(), scheme in scheme(), port in 1u16..,
            ) {
                let pattern = HostPattern::parse(&name).unwrap();
                prop_assert_eq!(pattern.allows(scheme, &name, port), port == default_of(scheme));
                // Spelling does not matter: case and one trailing dot.
                let port = default_of(scheme);
                let shouted = format!("{}.", name.to_ascii_uppercase());
                prop_assert!(pattern.allows(scheme, &shouted, port));
                // Look-alikes never match.
                for other in [
                    format!("x{name}"),
                    format!("{name}x"),
                    format!("a.{name}"),
                    format!("{name}.evil.net"),
                ] {
                    prop_assert!(
                        !pattern.allows(scheme, &other, port),
                        "{} allowed {}",
                        name,
                        other
                    );
                }
                prop_assert!(!pattern.allows("ftp", &name, port));
            }

            #[test]
            fn a_wildcard_allows_subdomains_never_the_apex_or_a_look_alike(
                name in name(), sub in proptest::collection::vec(label(), 1..3), scheme in scheme(),
            ) {
                let pattern = HostPattern::parse(&format!("*.{name}")).unwrap();
                let port = default_of(scheme);
                let inside = format!("{}.{name}", sub.join("."));
                prop_assert!(pattern.allows(scheme, &inside, port), "{}", inside);
                prop_assert!(!pattern.allows(scheme, &name, port));
                let glued = format!("{}{name}", sub.join(""));
                let dashed = format!("{}-{name}", sub[0]);
                let elsewhere = format!("{}.{name}.evil.net", sub[0]);
                for other in [glued, dashed, elsewhere] {
                    prop_assert!(
                        !pattern.allows(scheme, &other, port),
                        "*.{} allowed {}",
                        name,
                        other
                    );
                }
            }

            #[test]
            fn parsing_never_panics_and_what_parses_round_trips(text in "\\PC{0,40}") {
                if let Ok(pattern) = HostPattern::parse(&text) {
                    let shown = pattern.to_string();
                    prop_assert_eq!(HostPattern::parse(&shown), Ok(pattern));
                } else {
                    prop_assert!(HostPattern::parse(&text).unwrap_err().ends_with(ACCEPTED));
                }
            }

            #[test]
            fn an_ip_pattern_names_its_address_on_its_port_only(
                ip in any::<IpAddr>(),
                port in prop::option::of(1u16..),
                asked in 1u16..,
                scheme in scheme(),
            ) {
                let ip = ip.to_canonical();
                let written = match (ip, port) {
                    (IpAddr::V4(v4), Some(p)) => format!("{v4}:{p}"),
                    (IpAddr::V4(v4), None) => v4.to_string(),
                    (IpAddr::V6(v6), Some(p)) => format!("[{v6}]:{p}"),
                    (IpAddr::V6(v6), None) => format!("[{v6}]"),
                };
                let list = NetAllowlist::new([HostPattern::parse(&written).unwrap()]);
                let wanted = port.unwrap_or(default_of(scheme));
                prop_assert_eq!(list.names_address_explicitly(scheme, ip, asked), asked == wanted);
                prop_assert_eq!(list.names_address_explicitly(scheme, ip, wanted), true);
                // A name pattern never names an address, whatever the port.
                let names = NetAllowlist::new([HostPattern::parse("localhost:*").unwrap()]);
                prop_assert!(!names.names_address_explicitly(scheme, ip, asked));
            }
        }
    }
}
