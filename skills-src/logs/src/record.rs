//! One log line as the tools see it, whatever its format, and how the format
//! of a file is recognised.

use crate::level::Level;
use crate::{access, json, plain};
use agent_reach_sdk::prelude::*;
use std::borrow::Cow;

/// Non-empty lines looked at to recognise a format.
const SAMPLE_LINES: usize = 20;

/// A log format.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Format {
    /// nginx or Apache access log, common or combined format.
    Access,
    /// JSON lines: one object per line.
    Json,
    /// Plain text, e.g. `2024-01-01T10:00:00Z ERROR something`.
    Plain,
}

/// What a line says, borrowed from it where possible. Fields a format does
/// not have are `None`.
#[derive(Debug, Default)]
pub(crate) struct Record<'a> {
    /// The severity, from a level word or field, or from the HTTP status.
    pub level: Option<Level>,
    /// The timestamp as written in the line.
    pub timestamp: Option<Cow<'a, [u8]>>,
    /// The message text (plain and JSON logs).
    pub message: Option<Cow<'a, [u8]>>,
    /// The HTTP status (access logs and JSON request logs).
    pub status: Option<u16>,
    /// The HTTP method.
    pub method: Option<Cow<'a, [u8]>>,
    /// The request path, without query string.
    pub endpoint: Option<Cow<'a, [u8]>>,
    /// The client address.
    pub ip: Option<Cow<'a, [u8]>>,
    /// The client's User-Agent.
    pub user_agent: Option<Cow<'a, [u8]>>,
}

impl Format {
    /// The name used in results.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Format::Access => "access",
            Format::Json => "json",
            Format::Plain => "plain",
        }
    }

    /// Parse `line`. A line that does not fit the format (a panic printed
    /// into a JSON log, say) is read as plain text, so its level still
    /// counts; the second value is `false` for such lines.
    pub(crate) fn parse(self, line: &[u8]) -> (Record<'_>, bool) {
        let parsed = match self {
            Format::Access => access::parse(line),
            Format::Json => json::parse(line),
            Format::Plain => return (plain::parse(line), true),
        };
        match parsed {
            Some(record) => (record, true),
            None => (plain::parse(line), false),
        }
    }

    /// The format most of the first non-empty lines of `head` have. `head`
    /// is the start of a file; its last line may be cut off, so it is only
    /// used when it is the only one.
    pub(crate) fn detect(head: &[u8]) -> Format {
        let mut lines: Vec<&[u8]> = head.split(|&b| b == b'\n').collect();
        if lines.len() > 1 {
            lines.pop();
        }
        let (mut json_votes, mut access_votes, mut plain_votes) = (0, 0, 0);
        for line in
            lines.into_iter().map(<[u8]>::trim_ascii).filter(|l| !l.is_empty()).take(SAMPLE_LINES)
        {
            if json::parse(line).is_some() {
                json_votes += 1;
            } else if access::parse(line).is_some() {
                access_votes += 1;
            } else {
                plain_votes += 1;
            }
        }
        if json_votes > 0 && json_votes >= access_votes && json_votes >= plain_votes {
            Format::Json
        } else if access_votes > 0 && access_votes >= plain_votes {
            Format::Access
        } else {
            Format::Plain
        }
    }
}

/// The path of a request target or URL: no scheme and host, no query
/// string or fragment (`https://h/a/b?c` → `/a/b`).
pub(crate) fn path_only(target: &[u8]) -> &[u8] {
    let mut path = target;
    // Most targets are paths; only others can be absolute URLs.
    if path.first() != Some(&b'/')
        && let Some(at) = path.windows(3).position(|w| w == b"://")
    {
        let after = &path[at + 3..];
        path = after.iter().position(|&b| b == b'/').map_or(&b"/"[..], |slash| &after[slash..]);
    }
    let end = path.iter().position(|&b| b == b'?' || b == b'#').unwrap_or(path.len());
    &path[..end]
}

/// A field as text, for assertions.
#[cfg(test)]
pub(crate) fn lossy(field: &Option<Cow<'_, [u8]>>) -> Option<String> {
    field.as_ref().map(|t| String::from_utf8_lossy(t).into_owned())
}

#[cfg(test)]
mod tests {
    use super::{Format, path_only};
    use crate::level::Level;

    #[test]
    fn detects_each_format_from_its_first_lines() {
        let access =
            b"1.2.3.4 - - [01/Jan/2024:00:00:00 +0000] \"GET / HTTP/1.1\" 200 5 \"-\" \"curl\"\n"
                .repeat(3);
        assert_eq!(Format::detect(&access), Format::Access);
        let json = b"\n{\"level\":\"info\",\"msg\":\"a\"}\n{\"level\":\"warn\",\"msg\":\"b\"}\n";
        assert_eq!(Format::detect(json), Format::Json);
        assert_eq!(Format::detect(b"2024-01-01T10:00:00Z INFO up\nplain\n"), Format::Plain);
        assert_eq!(Format::detect(b""), Format::Plain, "an empty file is plain");
        assert_eq!(
            Format::detect(b"{\"level\":\"info\"}"),
            Format::Json,
            "a single unterminated line counts"
        );
    }

    #[test]
    fn a_cut_off_last_line_does_not_vote() {
        let mut head = b"{\"level\":\"info\"}\n".repeat(2);
        head.extend_from_slice(b"{\"level\":\"in");
        assert_eq!(Format::detect(&head), Format::Json);
    }

    #[test]
    fn lines_off_format_are_read_as_plain_text() {
        let (record, fits) = Format::Json.parse(b"panic: runtime error: index out of range");
        assert!(!fits);
        assert_eq!(record.level, Some(Level::Fatal));
        let (record, fits) = Format::Access.parse(b"garbage");
        assert!(!fits && record.level.is_none());
    }

    #[test]
    fn paths_lose_host_and_query() {
        let rows: &[(&[u8], &[u8])] = &[
            (b"/a/b?c=1", b"/a/b"),
            (b"/a#frag", b"/a"),
            (b"https://example.com/x/y?z", b"/x/y"),
            (b"http://example.com", b"/"),
            (b"*", b"*"),
        ];
        for (target, want) in rows {
            assert_eq!(path_only(target), *want);
        }
    }
}
