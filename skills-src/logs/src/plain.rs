//! Plain-text log lines: `2024-01-01T10:00:00Z ERROR something`, and the
//! many shapes around it (Java, Python, nginx error logs, logfmt, syslog).
//!
//! The level is a word near the start of the line. To keep message words
//! ("connection error") from being taken for levels, a word after the first
//! counts only when it looks like a level field: upper case (`ERROR`),
//! bracketed (`[error]`, `<warn>`) or a value (`level=error`).

use crate::find::find_byte;
use crate::level::Level;
use crate::record::Record;
use crate::timestamp;
use std::borrow::Cow;

/// Words looked at for a level after the timestamp.
const LEVEL_WORDS: usize = 6;
/// Bytes looked at for a level after the timestamp.
const LEVEL_WINDOW: usize = 120;

/// Parse a plain-text line. Every line parses: one without a level or
/// timestamp (a stack-trace line, say) simply has none.
pub(crate) fn parse(line: &[u8]) -> Record<'_> {
    let mut record = Record::default();
    let rest = match timestamp::find(line) {
        Some((start, end)) => {
            record.timestamp = Some(Cow::Borrowed(&line[start..end]));
            // A leading timestamp is skipped; one found further in (after a
            // container prefix, say) leaves the text before it to search too.
            if start <= 1 { &line[end..] } else { line }
        }
        None => line,
    };
    if let Some((level, after)) = level_word(rest) {
        record.level = Some(level);
        record.message = Some(Cow::Borrowed(message(&rest[after..])));
    } else {
        record.message = Some(Cow::Borrowed(trim_separators(rest)));
    }
    record
}

/// The level word near the start of `text`, and where the text after it starts.
fn level_word(text: &[u8]) -> Option<(Level, usize)> {
    let window = &text[..text.len().min(LEVEL_WINDOW)];
    let mut i = 0;
    let mut words = 0;
    while i < window.len() && words < LEVEL_WORDS {
        if !window[i].is_ascii_alphabetic() {
            i += 1;
            continue;
        }
        let start = i;
        while i < window.len() && window[i].is_ascii_alphabetic() {
            i += 1;
        }
        // A word glued to digits or `_` (`E0101`, `log_error`) is an
        // identifier, not a level.
        let glued = |b: Option<&u8>| b.is_some_and(|&b| b.is_ascii_digit() || b == b'_');
        if glued(window.get(i)) || (start > 0 && glued(window.get(start - 1))) {
            words += 1;
            continue;
        }
        let word = &window[start..i];
        if let Some(level) = Level::from_word(word) {
            let before = start.checked_sub(1).map(|p| window[p]);
            let shaped = word.iter().all(u8::is_ascii_uppercase)
                || matches!(before, Some(b'[' | b'<' | b'='));
            if words == 0 || shaped {
                return Some((level, i));
            }
        }
        words += 1;
    }
    None
}

/// The message after the level word: logfmt's `msg=` value when there is
/// one, else the text with leading separators (`]`, `:`, `-`, `|`) removed.
fn message(text: &[u8]) -> &[u8] {
    logfmt_message(text).unwrap_or_else(|| trim_separators(text))
}

/// Remove the punctuation and spaces that sit between a level or timestamp
/// and the message.
fn trim_separators(text: &[u8]) -> &[u8] {
    let start = text.iter().position(|b| !b" \t]>:-|".contains(b)).unwrap_or(text.len());
    &text[start..]
}

/// The value of logfmt's `msg=` (or `message=`): quoted (without the
/// quotes, escapes left as they are) or up to the next space.
fn logfmt_message(text: &[u8]) -> Option<&[u8]> {
    // Found through its `=`: lines rarely have many, and looking for a
    // byte is far cheaper than looking for a word at every position.
    let mut from = 0;
    while let Some(at) = find_byte(&text[from..], b'=') {
        let eq = from + at;
        from = eq + 1;
        let key_start = text[..eq].iter().rposition(|&b| b == b' ').map_or(0, |space| space + 1);
        if !matches!(&text[key_start..eq], b"msg" | b"message") {
            continue;
        }
        let value = &text[eq + 1..];
        return Some(match value.strip_prefix(b"\"") {
            Some(quoted) => {
                let mut end = 0;
                while end < quoted.len() && quoted[end] != b'"' {
                    end += if quoted[end] == b'\\' { 2 } else { 1 };
                }
                &quoted[..end.min(quoted.len())]
            }
            None => &value[..find_byte(value, b' ').unwrap_or(value.len())],
        });
    }
    None
}

#[cfg(test)]
mod tests {
    use super::parse;
    use crate::level::Level;
    use crate::record::lossy;

    fn parsed(line: &str) -> (Option<Level>, Option<String>, String) {
        let r = parse(line.as_bytes());
        (r.level, lossy(&r.timestamp), lossy(&r.message).unwrap_or_default())
    }

    #[test]
    fn common_shapes() {
        let rows: &[(&str, Option<Level>, Option<&str>, &str)] = &[
            (
                "2024-01-01T10:00:00Z ERROR something broke",
                Some(Level::Error),
                Some("2024-01-01T10:00:00Z"),
                "something broke",
            ),
            (
                "2024-01-01 10:00:00,123 [main] WARN c.e.Pool - pool low",
                Some(Level::Warn),
                Some("2024-01-01 10:00:00,123"),
                "c.e.Pool - pool low",
            ),
            (
                "2024-01-01 10:00:00,123 - app.db - ERROR - lost connection",
                Some(Level::Error),
                Some("2024-01-01 10:00:00,123"),
                "lost connection",
            ),
            (
                "2024/03/05 07:08:09 [error] 12#0: *5 open() failed",
                Some(Level::Error),
                Some("2024/03/05 07:08:09"),
                "12#0: *5 open() failed",
            ),
            (
                "[2024-01-01 10:00:00] info: started",
                Some(Level::Info),
                Some("2024-01-01 10:00:00"),
                "started",
            ),
            (
                "time=2024-01-01T10:00:00Z level=warn msg=\"disk almost full\" pct=91",
                Some(Level::Warn),
                Some("2024-01-01T10:00:00Z"),
                "disk almost full",
            ),
            (
                "2024-01-01T10:00:00Z level=error component=db message=timeout retry=3",
                Some(Level::Error),
                Some("2024-01-01T10:00:00Z"),
                "timeout",
            ),
            ("INFO:root:hello", Some(Level::Info), None, "root:hello"),
            (
                "Jan  5 10:00:00 host sshd[1]: <crit> out of memory",
                Some(Level::Fatal),
                Some("Jan  5 10:00:00"),
                "out of memory",
            ),
            (
                "2024-01-01T10:00:00Z Connection error from 10.0.0.1",
                None,
                Some("2024-01-01T10:00:00Z"),
                "Connection error from 10.0.0.1",
            ),
            (
                "2024-01-01T10:00:00Z E0101 glog style",
                None,
                Some("2024-01-01T10:00:00Z"),
                "E0101 glog style",
            ),
            (
                "\tat com.example.Main(Main.java:10)",
                None,
                None,
                "at com.example.Main(Main.java:10)",
            ),
            ("", None, None, ""),
        ];
        for (line, level, ts, msg) in rows {
            let (l, t, m) = parsed(line);
            assert_eq!(l, *level, "level of {line:?}");
            assert_eq!(t.as_deref(), *ts, "timestamp of {line:?}");
            assert_eq!(m, *msg, "message of {line:?}");
        }
    }

    #[test]
    fn non_utf8_bytes_do_not_matter() {
        let r = parse(b"2024-01-01T10:00:00Z ERROR bad \xff\xfe bytes");
        assert_eq!(r.level, Some(Level::Error));
        assert_eq!(r.message.as_deref(), Some(&b"bad \xff\xfe bytes"[..]));
    }
}
