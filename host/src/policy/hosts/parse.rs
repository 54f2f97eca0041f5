//! The syntax of host patterns: strict, so that a pattern never allows
//! more than it appears to.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use super::{HostMatch, HostPattern, PortMatch, is_label_byte};

/// Parse a pattern; the error says what is wrong, without the pattern itself
/// or the list of accepted forms, which [`HostPattern::parse`] adds.
pub(super) fn pattern(text: &str) -> Result<HostPattern, String> {
    if text.is_empty() {
        return Err("it is empty".into());
    }
    if text.chars().any(char::is_whitespace) {
        return Err("it contains whitespace".into());
    }
    if text.contains("://") {
        return Err(r#"write the host without a scheme such as "https://""#.into());
    }
    if text.contains('/') {
        return Err("paths are not supported, only hosts".into());
    }
    if text.contains('@') {
        return Err("user names are not supported, only hosts".into());
    }
    if !text.is_ascii() {
        return Err("write international names in their ASCII form (xn--…)".into());
    }

    if let Some(rest) = text.strip_prefix('[') {
        let (inside, after) =
            rest.split_once(']').ok_or(r#"an address opened with "[" needs a closing "]""#)?;
        let v6: Ipv6Addr =
            inside.parse().map_err(|_| format!("{inside:?} is not an IPv6 address"))?;
        let port = match after {
            "" => PortMatch::SchemeDefault,
            _ => parse_port(after.strip_prefix(':').ok_or(r#"only ":port" may follow "]""#)?)?,
        };
        let host = HostMatch::Ip(IpAddr::V6(v6).to_canonical());
        return Ok(HostPattern { host, port });
    }
    if text.matches(':').count() > 1 {
        let v6: Ipv6Addr = text.parse().map_err(
            |_| r#"it has several ":"; write IPv6 addresses in brackets, like "[::1]:8080""#,
        )?;
        let host = HostMatch::Ip(IpAddr::V6(v6).to_canonical());
        return Ok(HostPattern { host, port: PortMatch::SchemeDefault });
    }

    let (host, port) = match text.split_once(':') {
        Some((host, port)) => (host, parse_port(port)?),
        None => (text, PortMatch::SchemeDefault),
    };
    Ok(HostPattern { host: parse_host(host)?, port })
}

fn parse_port(text: &str) -> Result<PortMatch, String> {
    if text == "*" {
        return Ok(PortMatch::Any);
    }
    if text.is_empty() {
        return Err(r#"the port after ":" is missing"#.into());
    }
    if !text.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!(r#"port {text:?} is not a number from 1 to 65535 or "*""#));
    }
    match text.parse::<u16>() {
        Ok(port) if port > 0 => Ok(PortMatch::Exact(port)),
        _ => Err(format!("port {text} is out of range; ports are 1 to 65535")),
    }
}

fn parse_host(text: &str) -> Result<HostMatch, String> {
    if text.is_empty() {
        return Err("the host is missing".into());
    }
    if text == "*" {
        return Err(r#"a bare "*" would allow every host; name the hosts"#.into());
    }
    // One trailing dot is the fully-qualified spelling of the same name.
    let lower = text.to_ascii_lowercase();
    let strip_dot = |name: &str| name.strip_suffix('.').unwrap_or(name).to_owned();
    if let Some(suffix) = lower.strip_prefix("*.").map(strip_dot) {
        let suffix = suffix.as_str();
        if suffix.is_empty() {
            return Err(r#"a wildcard needs a domain after "*.""#.into());
        }
        if suffix.parse::<Ipv4Addr>().is_ok() {
            return Err("wildcards do not apply to IP addresses".into());
        }
        check_dns_name(suffix)?;
        if !suffix.contains('.') {
            return Err(format!(
                "\"*.{suffix}\" would cover a whole top-level domain; use at least two labels \
                 after \"*.\", like \"*.example.{suffix}\""
            ));
        }
        return Ok(HostMatch::Subdomains(suffix.to_owned()));
    }
    let host = strip_dot(&lower);
    if let Ok(v4) = host.parse::<Ipv4Addr>() {
        return Ok(HostMatch::Ip(IpAddr::V4(v4)));
    }
    check_dns_name(&host)?;
    Ok(HostMatch::Name(host))
}

fn check_dns_name(name: &str) -> Result<(), String> {
    if name.contains('*') {
        return Err(r#""*" may only be the whole first label, as in "*.example.com""#.into());
    }
    if name.len() > 253 {
        return Err("the name is longer than 253 characters".into());
    }
    for label in name.split('.') {
        if label.is_empty() {
            return Err("it has an empty label".into());
        }
        if label.len() > 63 {
            return Err(format!("label {label:?} is longer than 63 characters"));
        }
        if let Some(c) = label.chars().find(|&c| !c.is_ascii() || !is_label_byte(c as u8)) {
            return Err(format!("{c:?} is not allowed in a host name"));
        }
        if label.starts_with('-') || label.ends_with('-') {
            return Err(format!(r#"label {label:?} starts or ends with "-""#));
        }
    }
    // Resolvers read things like `127.1` or `0x7f.1` as IPv4 addresses;
    // a name ending in a numeric label is a mistyped address, not a name.
    let last = name.rsplit('.').next().unwrap_or(name);
    let hex = last.strip_prefix("0x").is_some_and(|h| h.bytes().all(|b| b.is_ascii_hexdigit()));
    if hex || last.bytes().all(|b| b.is_ascii_digit()) {
        return Err("it looks like an IPv4 address but is not a valid one".into());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::ACCEPTED;
    use super::*;

    /// Patterns refused at load time; each would be either useless or far
    /// broader than it looks.
    const REJECTED: &[&str] = &[
        "",
        " ",
        "*",
        "*:443",
        "*.",
        "*.com",
        "*.com.",
        "*.*.example.com",
        "a.*.com",
        "example.*",
        "ex*ample.com",
        "http://example.com",
        "https://example.com:443",
        "example.com/path",
        "example.com/",
        "user@example.com",
        "u:p@example.com",
        "example.com:0",
        "example.com:65536",
        "example.com:99999999999",
        "example.com:http",
        "example.com:",
        "example.com:-1",
        "example.com:+80",
        "example.com:8080:1",
        ":80",
        "example .com",
        " example.com",
        "example.com\t",
        "exa!mple.com",
        "bücher.de",
        "example..com",
        ".example.com",
        "example.com..",
        "-example.com",
        "example-.com",
        "[::1",
        "[::1]x",
        "[::1]:",
        "[example.com]",
        "[1.2.3.4]",
        "1:2:3",
        "127.1",
        "0x7f000001",
        "10.0.0.256",
        "*.10.0.0.1",
        "*.0x7f.1",
    ];

    #[test]
    fn rejects_table() {
        for &pattern in REJECTED {
            let err = HostPattern::parse(pattern).expect_err(pattern);
            assert!(err.ends_with(ACCEPTED), "{pattern:?}: {err}");
        }
        let too_long_label = format!("{}.com", "a".repeat(64));
        assert!(HostPattern::parse(&too_long_label).is_err());
        let too_long_name = ["abcdefghi"; 26].join(".");
        assert!(HostPattern::parse(&too_long_name).is_err());
    }

    /// (written, canonical form)
    const CANONICAL: &[(&str, &str)] = &[
        ("example.com", "example.com"),
        ("EXAMPLE.com.", "example.com"),
        ("example.com:*", "example.com:*"),
        ("example.com:080", "example.com:80"),
        ("*.Example.COM:443", "*.example.com:443"),
        ("*.co.uk", "*.co.uk"),
        ("localhost", "localhost"),
        ("10.0.0.1:8080", "10.0.0.1:8080"),
        ("::ffff:127.0.0.1", "127.0.0.1"),
        ("::1", "[::1]"),
        ("[0:0::1]", "[::1]"),
        ("[::1]:8080", "[::1]:8080"),
        ("[2001:DB8::1]:*", "[2001:db8::1]:*"),
    ];

    #[test]
    fn display_is_canonical_and_round_trips() {
        for &(written, canonical) in CANONICAL {
            let pattern = HostPattern::parse(written).expect(written);
            assert_eq!(pattern.to_string(), canonical, "display of {written:?}");
            assert_eq!(canonical.parse::<HostPattern>().as_ref(), Ok(&pattern));
        }
    }

    #[test]
    fn error_messages() {
        let err = |p: &str| HostPattern::parse(p).unwrap_err();
        insta::assert_snapshot!(err("*."), @r#""*." is not a valid host pattern: a wildcard needs a domain after "*."; use "host", "host:port" or "*.domain""#);
        insta::assert_snapshot!(err("*.com"), @r#""*.com" is not a valid host pattern: "*.com" would cover a whole top-level domain; use at least two labels after "*.", like "*.example.com"; use "host", "host:port" or "*.domain""#);
        insta::assert_snapshot!(err("https://api.example.com"), @r#""https://api.example.com" is not a valid host pattern: write the host without a scheme such as "https://"; use "host", "host:port" or "*.domain""#);
        insta::assert_snapshot!(err("example.com:0"), @r#""example.com:0" is not a valid host pattern: port 0 is out of range; ports are 1 to 65535; use "host", "host:port" or "*.domain""#);
        insta::assert_snapshot!(err("a.*.com"), @r#""a.*.com" is not a valid host pattern: "*" may only be the whole first label, as in "*.example.com"; use "host", "host:port" or "*.domain""#);
    }
}
