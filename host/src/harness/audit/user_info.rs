//! User names and passwords written into URLs (`https://user:pass@host/`),
//! masked in what the audit log keeps.
//!
//! The model may write such a URL into a tool's arguments, and a person into
//! a task. Skills refuse it (the SDK, and the host at egress), but the
//! record of what was asked is written before anything runs, so the password
//! would stay in the log, in `reach runs show` and in the events an embedder
//! prints. These are not secrets the host knows in advance, so they are
//! found by form, not by value: the user info of every `scheme://…@` in a
//! string, and a whole value of the form `user:pass@host…` (the `web` skill
//! accepts URLs without a scheme).

use crate::runtime::redact::MASK;
use serde_json::Value;
use std::borrow::Cow;

/// `value` with the user info of every URL in its strings and keys masked.
pub(super) fn mask_value(value: Value) -> Value {
    match value {
        Value::String(text) => match mask(&text) {
            Cow::Borrowed(_) => Value::String(text),
            Cow::Owned(masked) => Value::String(masked),
        },
        Value::Array(items) => Value::Array(items.into_iter().map(mask_value).collect()),
        Value::Object(map) => Value::Object(
            map.into_iter().map(|(k, v)| (mask(&k).into_owned(), mask_value(v))).collect(),
        ),
        other => other,
    }
}

/// `text` with the user info of every URL in it replaced by [`MASK`].
pub(super) fn mask(text: &str) -> Cow<'_, str> {
    // In order: a scheme-less value's user info ends before its first `/`,
    // so before any `://`.
    let spans: Vec<(usize, usize)> =
        schemeless_user_info(text)
            .into_iter()
            .chain(text.match_indices("://").filter_map(|(at, _)| {
                user_info_len(&text[at + 3..]).map(|len| (at + 3, at + 3 + len))
            }))
            .collect();
    if spans.is_empty() {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut copied = 0;
    for (start, end) in spans {
        // A span inside one already masked (`a://b://c@d`) adds nothing.
        if start < copied {
            continue;
        }
        out.push_str(&text[copied..start]);
        out.push_str(MASK);
        copied = end;
    }
    out.push_str(&text[copied..]);
    Cow::Owned(out)
}

/// The length of the user info at the start of `rest` (what follows `://`),
/// up to but without its `@`; `None` when there is none.
fn user_info_len(rest: &str) -> Option<usize> {
    // Where a URL written in prose or JSON ends.
    let token = &rest[..rest
        .find(|c: char| c.is_whitespace() || c.is_control() || "\"'<>`".contains(c))
        .unwrap_or(rest.len())];
    let authority = &token[..token.find(['/', '\\', '?', '#']).unwrap_or(token.len())];
    if let Some(at) = authority.rfind('@') {
        return Some(at);
    }
    // `user:pa/ss@host` is no valid URL, but a password may hold a `/`: when
    // what precedes the first `/` cannot be `host:port`, the user info runs
    // to the last `@` before any query or fragment.
    let is_host_and_port = authority.starts_with('[')
        || authority
            .rsplit_once(':')
            .is_none_or(|(_, port)| port.bytes().all(|b| b.is_ascii_digit()));
    if is_host_and_port {
        return None;
    }
    token[..token.find(['?', '#']).unwrap_or(token.len())].rfind('@')
}

/// For a whole value `user:pass@host…` (no scheme, no spaces): where
/// `user:pass` starts and ends. A bare `name@host` is an e-mail address, and
/// `mailto:` is a scheme whose `:` is not a password's.
fn schemeless_user_info(text: &str) -> Option<(usize, usize)> {
    let lead = text.len() - text.trim_start().len();
    let value = text.trim();
    if value.is_empty()
        || value.contains(char::is_whitespace)
        || value.get(..7).is_some_and(|s| s.eq_ignore_ascii_case("mailto:"))
    {
        return None;
    }
    let authority = &value[..value.find(['/', '\\', '?', '#']).unwrap_or(value.len())];
    let at = authority.rfind('@')?;
    authority[..at].contains(':').then_some((lead, lead + at))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_user_info_of_urls_is_masked_and_nothing_else() {
        let rows = [
            // (text, logged)
            ("https://me:hunter2@example.com/a", "https://[REDACTED]@example.com/a"),
            ("http://me@example.com:8080/", "http://[REDACTED]@example.com:8080/"),
            ("http://:hunter2@[::1]:8443/x", "http://[REDACTED]@[::1]:8443/x"),
            (
                "fetch http://a:hunter2@h/x and https://b:hunter3@k/y please",
                "fetch http://[REDACTED]@h/x and https://[REDACTED]@k/y please",
            ),
            (r#"{"url":"http://a:hunter2@h/"}"#, r#"{"url":"http://[REDACTED]@h/"}"#),
            ("postgres://app:hunter2@db:5432/main", "postgres://[REDACTED]@db:5432/main"),
            ("http://me:p@ss@example.com/", "http://[REDACTED]@example.com/"),
            ("http://me:hun/ter2@example.com/", "http://[REDACTED]@example.com/"),
            ("me:hunter2@example.com/a", "[REDACTED]@example.com/a"),
            ("  me:hunter2@127.0.0.1:8080", "  [REDACTED]@127.0.0.1:8080"),
            // No user info.
            ("https://medium.com/@someone", "https://medium.com/@someone"),
            (
                "https://example.com/?mail=me@example.org#top",
                "https://example.com/?mail=me@example.org#top",
            ),
            ("http://127.0.0.1:8080/a@b", "http://127.0.0.1:8080/a@b"),
            ("write to me@example.com", "write to me@example.com"),
            ("me@example.com", "me@example.com"),
            ("mailto:me@example.com", "mailto:me@example.com"),
            ("time: 10:30 @ home", "time: 10:30 @ home"),
            ("http://", "http://"),
            ("", ""),
        ];
        for (text, logged) in rows {
            assert_eq!(mask(text), logged, "{text:?}");
        }
    }

    #[test]
    fn every_string_and_key_of_a_record_is_masked() {
        let record = json!({
            "arguments": {
                "url": "http://a:hunter2@h/", "n": 1, "list": ["x", "https://b:hunter3@k"]
            },
            "http://c:hunter4@m/": true
        });
        let masked = mask_value(record).to_string();
        assert!(!masked.contains("hunter"), "{masked}");
        assert_eq!(masked.matches("[REDACTED]@").count(), 3, "{masked}");
    }
}
