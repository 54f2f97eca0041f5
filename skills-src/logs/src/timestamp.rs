//! Recognising the timestamp of a plain-text log line.
//!
//! Timestamps are reported as written, not converted: the model reads them
//! better in the log's own form, and converting every line would cost time
//! for nothing. What matters here is finding where one starts and ends.

/// Months as syslog writes them.
const MONTHS: [&[u8; 3]; 12] = [
    b"Jan", b"Feb", b"Mar", b"Apr", b"May", b"Jun", b"Jul", b"Aug", b"Sep", b"Oct", b"Nov", b"Dec",
];
/// How far into a line a timestamp is looked for when it does not start
/// the line (`[main] 2024-…`, `app | 2024-…`, `time=2024-…`).
const SEARCH_WINDOW: usize = 48;

/// The timestamp in `line` as `(start, end)`, if there is one at the start
/// (possibly after `[`) or a date-time starting within the first few bytes.
pub(crate) fn find(line: &[u8]) -> Option<(usize, usize)> {
    let lead = usize::from(line.first() == Some(&b'['));
    if let Some(len) = at(&line[lead..]) {
        return Some((lead, lead + len));
    }
    let window = &line[..line.len().min(SEARCH_WINDOW)];
    (1..window.len())
        .filter(|&i| window[i].is_ascii_digit() && !window[i - 1].is_ascii_alphanumeric())
        .find_map(|i| date_time(&line[i..]).map(|len| (i, i + len)))
}

/// Length of the timestamp that `text` starts with: an ISO-8601-like date
/// and time, or a syslog `Mmm dd hh:mm:ss`.
fn at(text: &[u8]) -> Option<usize> {
    date_time(text).or_else(|| syslog(text))
}

/// `YYYY-MM-DD` or `YYYY/MM/DD`, then `T` or a space, `hh:mm:ss`, optional
/// fraction (`.123` or `,123`) and optional zone (`Z`, `+02:00`, `-0700`).
fn date_time(text: &[u8]) -> Option<usize> {
    let sep = *text.get(4)?;
    if !(digits(text, 0, 4)
        && (sep == b'-' || sep == b'/')
        && digits(text, 5, 2)
        && text.get(7) == Some(&sep))
        || !digits(text, 8, 2)
    {
        return None;
    }
    if !matches!(text.get(10), Some(b'T' | b' ')) {
        return None;
    }
    let mut len = 11 + clock(&text[11..])?;
    if matches!(text.get(len), Some(b'.' | b','))
        && text.get(len + 1).is_some_and(u8::is_ascii_digit)
    {
        len += 1;
        while text.get(len).is_some_and(u8::is_ascii_digit) {
            len += 1;
        }
    }
    Some(len + zone(&text[len..]))
}

/// Syslog's `Mmm dd hh:mm:ss` (day padded with a space or a zero).
fn syslog(text: &[u8]) -> Option<usize> {
    let month = text.get(..3)?;
    if !MONTHS.iter().any(|m| &m[..] == month) || text.get(3) != Some(&b' ') {
        return None;
    }
    let day_ok = digits(text, 4, 2) || (text.get(4) == Some(&b' ') && digits(text, 5, 1));
    if !day_ok || text.get(6) != Some(&b' ') {
        return None;
    }
    Some(7 + clock(&text[7..])?)
}

/// Length of `hh:mm:ss` at the start of `text`.
fn clock(text: &[u8]) -> Option<usize> {
    let ok = digits(text, 0, 2)
        && text.get(2) == Some(&b':')
        && digits(text, 3, 2)
        && text.get(5) == Some(&b':')
        && digits(text, 6, 2);
    ok.then_some(8)
}

/// Length of a time zone at the start of `text`: `Z`, `+hh:mm` or `+hhmm`.
fn zone(text: &[u8]) -> usize {
    match text.first() {
        Some(b'Z') => 1,
        Some(b'+' | b'-') if digits(text, 1, 2) => {
            if text.get(3) == Some(&b':') && digits(text, 4, 2) {
                6
            } else if digits(text, 3, 2) {
                5
            } else {
                0
            }
        }
        _ => 0,
    }
}

/// Whether `text[at..at + n]` exists and is all ASCII digits.
fn digits(text: &[u8], at: usize, n: usize) -> bool {
    text.get(at..at + n).is_some_and(|d| d.iter().all(u8::is_ascii_digit))
}

#[cfg(test)]
mod tests {
    use super::find;

    fn shown(line: &str) -> Option<&str> {
        find(line.as_bytes()).map(|(a, b)| &line[a..b])
    }

    #[test]
    fn recognised_forms() {
        let rows = [
            ("2024-01-01T10:00:00Z ERROR x", Some("2024-01-01T10:00:00Z")),
            ("2024-01-01 10:00:00,123 [main] INFO", Some("2024-01-01 10:00:00,123")),
            ("2024-01-01T10:00:00.123456+02:00 x", Some("2024-01-01T10:00:00.123456+02:00")),
            ("2024-01-01T10:00:00-0700 x", Some("2024-01-01T10:00:00-0700")),
            ("2024/03/05 07:08:09 [error] 12#0: x", Some("2024/03/05 07:08:09")),
            ("[2024-01-01 10:00:00] ERROR x", Some("2024-01-01 10:00:00")),
            ("Jan  5 10:00:00 host sshd[1]: x", Some("Jan  5 10:00:00")),
            ("Dec 25 23:59:59 host x", Some("Dec 25 23:59:59")),
            ("time=2024-01-01T10:00:00Z level=info", Some("2024-01-01T10:00:00Z")),
            ("web_1  | 2024-01-01 10:00:00 INFO", Some("2024-01-01 10:00:00")),
            ("2024-01-01 nothing", None),
            ("2024-01-01T10:00 short", None),
            ("2024-01/01 10:00:00 mixed separators", None),
            ("\tat com.example.Main(Main.java:10)", None),
            ("Foo  5 10:00:00", None),
            ("", None),
            ("id12024-01-01T10:00:00Z glued to a word", None),
        ];
        for (line, want) in rows {
            assert_eq!(shown(line), want, "{line}");
        }
    }
}
