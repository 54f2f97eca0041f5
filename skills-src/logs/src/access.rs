//! nginx and Apache access logs, in the common and combined formats:
//!
//! ```text
//! 203.0.113.7 - alice [10/Oct/2023:13:55:36 +0000] "GET /a?b=1 HTTP/1.1" 200 2326 "https://ref/" "curl/8.0"
//! ```
//!
//! Parsed by position with byte slices, in one pass and without allocating,
//! because on access logs this runs for every line of a multi-GB file.

use crate::find::find_byte;
use crate::level::Level;
use crate::record::Record;
use std::borrow::Cow;

/// Parse an access-log line, or `None` when it does not have the shape
/// (`ip ident user [time] "request" status …`).
pub(crate) fn parse(line: &[u8]) -> Option<Record<'_>> {
    let mut rest = line;
    let ip = word(&mut rest)?;
    word(&mut rest)?; // identd, nearly always `-`
    let open = find_byte(rest, b'[')?;
    // The user is one word (usually `-`) right before the bracket.
    let user = rest[..open].strip_suffix(b" ")?;
    if user.is_empty() || user.contains(&b' ') {
        return None;
    }
    let close = open + find_byte(&rest[open..], b']')?;
    let time = &rest[open + 1..close];
    rest = rest[close + 1..].strip_prefix(b" \"")?;
    let (request, after) = quoted(rest)?;
    rest = after.strip_prefix(b" ")?;
    let status = status(word(&mut rest)?)?;
    word(&mut rest); // bytes sent
    let user_agent = rest.strip_prefix(b"\"").and_then(quoted).and_then(|(_referer, after)| {
        after.strip_prefix(b" \"").and_then(quoted).map(|(ua, _)| ua)
    });

    let mut parts = request.splitn(3, |&b| b == b' ');
    let method = parts.next().filter(|m| !m.is_empty() && m.iter().all(u8::is_ascii_uppercase));
    let target = method.and_then(|_| parts.next());
    Some(Record {
        level: Some(Level::from_status(status)),
        timestamp: Some(Cow::Borrowed(time)),
        message: None,
        status: Some(status),
        method: method.map(Cow::Borrowed),
        endpoint: target.map(|t| Cow::Borrowed(crate::record::path_only(t))),
        ip: Some(Cow::Borrowed(ip)),
        user_agent: user_agent.filter(|ua| *ua != b"-").map(Cow::Borrowed),
    })
}

/// The next space-delimited word of `rest`, advancing past it and its space.
fn word<'a>(rest: &mut &'a [u8]) -> Option<&'a [u8]> {
    let end = find_byte(rest, b' ').unwrap_or(rest.len());
    let found = &rest[..end];
    *rest = rest.get(end + 1..).unwrap_or_default();
    (!found.is_empty()).then_some(found)
}

/// The text up to the closing `"` (nginx escapes inner quotes as `\x22`,
/// Apache as `\"`), and what follows the quote.
fn quoted(text: &[u8]) -> Option<(&[u8], &[u8])> {
    let mut from = 0;
    loop {
        let at = from + find_byte(&text[from..], b'"')?;
        // Escaped when preceded by an odd number of backslashes.
        let backslashes = text[..at].iter().rev().take_while(|&&b| b == b'\\').count();
        if backslashes % 2 == 0 {
            return Some((&text[..at], &text[at + 1..]));
        }
        from = at + 1;
    }
}

/// A three-digit HTTP status.
fn status(text: &[u8]) -> Option<u16> {
    match text {
        [a @ b'1'..=b'5', b, c] if b.is_ascii_digit() && c.is_ascii_digit() => {
            Some(u16::from(a - b'0') * 100 + u16::from(b - b'0') * 10 + u16::from(c - b'0'))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::parse;
    use crate::level::Level;
    use crate::record::lossy as text;

    #[test]
    fn combined_format() {
        let line = concat!(
            r#"203.0.113.7 - alice [10/Oct/2023:13:55:36 +0000] "GET /api/users/42?x=1 HTTP/1.1" "#,
            r#"503 12 "https://ref.example/" "Mozilla/5.0 (X11)""#
        );
        let r = parse(line.as_bytes()).expect("parses");
        assert_eq!(r.status, Some(503));
        assert_eq!(r.level, Some(Level::Error));
        assert_eq!(text(&r.ip).as_deref(), Some("203.0.113.7"));
        assert_eq!(text(&r.timestamp).as_deref(), Some("10/Oct/2023:13:55:36 +0000"));
        assert_eq!(text(&r.method).as_deref(), Some("GET"));
        assert_eq!(text(&r.endpoint).as_deref(), Some("/api/users/42"));
        assert_eq!(text(&r.user_agent).as_deref(), Some("Mozilla/5.0 (X11)"));
    }

    #[test]
    fn common_format_and_odd_requests() {
        let r = parse(br#"::1 - - [01/Jan/2024:00:00:00 +0100] "POST /login HTTP/2.0" 404 -"#)
            .expect("common");
        assert_eq!((r.status, r.level), (Some(404), Some(Level::Warn)));
        assert_eq!(text(&r.endpoint).as_deref(), Some("/login"));
        assert!(r.user_agent.is_none());

        // Scanners send garbage request lines; nginx logs them escaped.
        let r = parse(
            br#"1.2.3.4 - - [01/Jan/2024:00:00:00 +0000] "\x16\x03\x01 \"junk\"" 400 0 "-" "-""#,
        )
        .expect("junk");
        assert_eq!(r.status, Some(400));
        assert!(r.method.is_none() && r.endpoint.is_none() && r.user_agent.is_none());
    }

    #[test]
    fn not_access_lines() {
        for line in [
            &b"2024-01-01T10:00:00Z ERROR something"[..],
            b"{\"level\":\"info\"}",
            b"1.2.3.4 - - [01/Jan/2024:00:00:00 +0000] \"GET / HTTP/1.1\" OK 0",
            b"1.2.3.4 - - [unterminated",
            b"",
        ] {
            assert!(parse(line).is_none(), "{}", String::from_utf8_lossy(line));
        }
    }
}
