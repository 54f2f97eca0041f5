//! Turning a message into the key of its group, so that the same message
//! about different requests, users or times counts as one.
//!
//! Variable parts become placeholders: UUIDs `<uuid>`, IPv4 addresses
//! `<ip>`, hex ids (`0x1f`, `a3f9c2e1…`) `<hex>`, numbers `<n>` (also
//! inside words: `shard12` → `shard<n>`, so `shard12`/`shard13` group).
//! Everything else is kept byte for byte.

use crate::text::cut;

/// Longest key, in bytes; the rest of a longer message is left out of the
/// key (messages that differ only after this point group together).
pub(crate) const MAX_KEY: usize = 200;
/// Shortest run of hex digits taken for an id when it has no `0x`.
const MIN_HEX: usize = 8;

/// Write the group key of `text` into `out` (cleared first).
pub(crate) fn normalize(text: &[u8], out: &mut Vec<u8>) {
    out.clear();
    let mut i = 0;
    while i < text.len() && out.len() < MAX_KEY {
        let b = text[i];
        let at_boundary = i == 0 || !is_word(text[i - 1]);
        if at_boundary
            && b.is_ascii_hexdigit()
            && let Some((len, placeholder)) = identifier(&text[i..])
        {
            out.extend_from_slice(placeholder);
            i += len;
            continue;
        }
        if b.is_ascii_digit() {
            out.extend_from_slice(b"<n>");
            i += number(&text[i..]);
            continue;
        }
        out.push(b);
        i += 1;
    }
    let whole = cut(out, MAX_KEY).len();
    out.truncate(whole);
}

/// A UUID, IPv4 address or hex id starting `text` and ending at a word
/// boundary: its length and placeholder.
fn identifier(text: &[u8]) -> Option<(usize, &'static [u8])> {
    let ends_word = |len: usize| text.get(len).is_none_or(|&b| !is_word(b));
    if is_uuid(text) && ends_word(36) {
        return Some((36, b"<uuid>"));
    }
    if let Some(len) = ipv4(text).filter(|&len| ends_word(len)) {
        return Some((len, b"<ip>"));
    }
    if let Some(digits) = text.strip_prefix(b"0x") {
        let len = 2 + hex_run(digits);
        if len > 2 && ends_word(len) {
            return Some((len, b"<hex>"));
        }
    }
    let len = hex_run(text);
    let hex = &text[..len];
    // Needs a digit and a letter: all digits is a number, all letters a
    // word ("deadbeef", "accepted").
    let mixed = hex.iter().any(u8::is_ascii_digit) && hex.iter().any(u8::is_ascii_alphabetic);
    (len >= MIN_HEX && mixed && ends_word(len)).then_some((len, b"<hex>"))
}

/// `8-4-4-4-12` hex digits.
fn is_uuid(text: &[u8]) -> bool {
    text.len() >= 36
        && text[..36].iter().enumerate().all(|(i, &b)| match i {
            8 | 13 | 18 | 23 => b == b'-',
            _ => b.is_ascii_hexdigit(),
        })
}

/// Length of a dotted quad (`10.0.0.1`) starting `text`.
fn ipv4(text: &[u8]) -> Option<usize> {
    let mut len = 0;
    for part in 0..4 {
        if part > 0 {
            if text.get(len) != Some(&b'.') {
                return None;
            }
            len += 1;
        }
        let digits = text[len..].iter().take(4).take_while(|b| b.is_ascii_digit()).count();
        if !(1..=3).contains(&digits) {
            return None;
        }
        len += digits;
    }
    Some(len)
}

/// Length of a number starting `text`: digits with at most one decimal part.
fn number(text: &[u8]) -> usize {
    let int = text.iter().take_while(|b| b.is_ascii_digit()).count();
    let frac = match text.get(int) {
        Some(b'.') => text[int + 1..].iter().take_while(|b| b.is_ascii_digit()).count(),
        _ => 0,
    };
    if frac > 0 { int + 1 + frac } else { int }
}

/// Length of the run of hex digits starting `text`.
fn hex_run(text: &[u8]) -> usize {
    text.iter().take_while(|b| b.is_ascii_hexdigit()).count()
}

/// Letters, digits and `_`: what a placeholder must not cut through.
fn is_word(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

#[cfg(test)]
mod tests {
    use super::{MAX_KEY, normalize};

    fn key(text: &str) -> String {
        let mut out = Vec::new();
        normalize(text.as_bytes(), &mut out);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn placeholders() {
        let rows = [
            ("user 42 not found", "user <n> not found"),
            ("timeout after 30.5s", "timeout after <n>s"),
            ("request 3f2504e0-4f89-11d3-9a0c-0305e82c3301 failed", "request <uuid> failed"),
            ("connect 10.0.0.12:5432 refused", "connect <ip>:<n> refused"),
            ("bad pointer 0x7ffe12ab", "bad pointer <hex>"),
            ("commit a3f9c2e1b7 missing", "commit <hex> missing"),
            ("shard12 is down", "shard<n> is down"),
            ("deadbeef and accepted stay words", "deadbeef and accepted stay words"),
            ("at 2024-01-01T10:00:00Z", "at <n>-<n>-<n>T<n>:<n>:<n>Z"),
            ("version 1.2.3", "version <n>.<n>"),
            ("no digits here", "no digits here"),
            ("", ""),
        ];
        for (text, want) in rows {
            assert_eq!(key(text), want, "{text}");
        }
    }

    #[test]
    fn the_same_message_with_other_ids_has_one_key() {
        assert_eq!(
            key("order 1001 failed for user 7 (req 9b1c2d3e4f)"),
            key("order 2 failed for user 12345 (req 0a0b0c0d0e)")
        );
        assert_ne!(key("disk full"), key("disk slow"));
    }

    #[test]
    fn keys_are_bounded_and_bytes_pass_through() {
        assert_eq!(key(&"x".repeat(1000)).len(), MAX_KEY);
        assert!(
            key(&"é".repeat(1000)).len() <= MAX_KEY,
            "cut between characters (key() checks UTF-8)"
        );
        let mut out = Vec::new();
        normalize(b"bad \xff byte 12", &mut out);
        assert_eq!(out, b"bad \xff byte <n>");
    }
}
