//! Turning log bytes into the short strings a result shows.
//!
//! Logs are not always UTF-8 and lines can be megabytes long; whatever goes
//! into a result is converted lossily (invalid bytes become `�`) and cut,
//! with `…` marking the cut.

/// Longest line text in results, in bytes (before lossy conversion).
pub(crate) const MAX_TEXT: usize = 400;

/// `bytes` as text, cut to at most `max` bytes.
pub(crate) fn shown(bytes: &[u8], max: usize) -> String {
    excerpt(bytes, 0, max)
}

/// A window of at most `max` bytes of `line` that includes `focus` (a match
/// deep in a long line stays visible), as text.
pub(crate) fn excerpt(line: &[u8], focus: usize, max: usize) -> String {
    if line.len() <= max {
        return String::from_utf8_lossy(line).into_owned();
    }
    // Keep some text before the focus for context, and never start or end
    // inside a UTF-8 sequence (that would show a stray `�`).
    let start = char_start(line, focus.saturating_sub(max / 4).min(line.len() - max), true);
    let end = char_start(line, start + max, false);
    let mut out = String::with_capacity(max + 8);
    if start > 0 {
        out.push('…');
    }
    out.push_str(&String::from_utf8_lossy(&line[start..end]));
    if end < line.len() {
        out.push('…');
    }
    out
}

/// At most `max` bytes of `bytes`, not ending inside a UTF-8 character
/// (a cut key or example would otherwise show a stray `�`).
pub(crate) fn cut(bytes: &[u8], max: usize) -> &[u8] {
    if bytes.len() <= max {
        return bytes;
    }
    &bytes[..char_start(bytes, max, false)]
}

/// For `skip_serializing_if`: counts that are zero are left out of answers.
pub(crate) fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// Bytes `text` takes in a JSON string: control characters become
/// `\u00XX` (six bytes), so a line of binary garbage can grow sixfold;
/// budgets on answer size must count this, not `len()`.
pub(crate) fn json_len(text: &str) -> usize {
    text.bytes()
        .map(|b| match b {
            b'"' | b'\\' | b'\n' | b'\r' | b'\t' | 0x08 | 0x0c => 2,
            0..0x20 => 6,
            _ => 1,
        })
        .sum()
}

/// The nearest position at or after (`forward`) or at or before `at` that
/// does not fall inside a UTF-8 sequence.
fn char_start(bytes: &[u8], mut at: usize, forward: bool) -> usize {
    // At most three continuation bytes follow a lead byte; past that the
    // bytes are not UTF-8 anyway and any cut is as good as another.
    for _ in 0..3 {
        if at == 0 || at >= bytes.len() || bytes[at] & 0xC0 != 0x80 {
            break;
        }
        if forward { at += 1 } else { at -= 1 }
    }
    at
}

#[cfg(test)]
mod tests {
    use super::{cut, excerpt, json_len, shown};

    #[test]
    fn short_text_is_whole() {
        assert_eq!(shown(b"hello", 10), "hello");
        assert_eq!(shown(b"bad \xff", 10), "bad \u{fffd}");
    }

    #[test]
    fn long_text_is_cut_at_character_boundaries() {
        let text = "é".repeat(100);
        let cut = shown(text.as_bytes(), 11);
        assert_eq!(cut, format!("{}…", "é".repeat(5)));
        assert!(!cut.contains('\u{fffd}'));
    }

    #[test]
    fn cuts_keep_characters_whole() {
        assert_eq!(cut("aé".as_bytes(), 2), b"a");
        assert_eq!(cut("aé".as_bytes(), 3), "aé".as_bytes());
        assert_eq!(cut(b"abc", 2), b"ab");
        assert_eq!(cut(b"\xff\xff\xff", 2), b"\xff\xff", "not UTF-8: cut anywhere");
    }

    #[test]
    fn json_length_counts_escapes() {
        for text in
            ["plain", "quote \" and \\", "tab\tnew\nline", "nul \0 bell \u{7} esc \u{1b}", "é ☃"]
        {
            assert_eq!(json_len(text), serde_json::to_string(text).unwrap().len() - 2, "{text:?}");
        }
    }

    #[test]
    fn the_focus_stays_visible() {
        let mut line = "a".repeat(1000);
        line.push_str("NEEDLE");
        line.push_str(&"b".repeat(1000));
        let out = excerpt(line.as_bytes(), 1000, 100);
        assert!(out.contains("NEEDLE") && out.starts_with('…') && out.ends_with('…'), "{out}");
        assert!(out.len() <= 100 + 2 * '…'.len_utf8());
    }
}
