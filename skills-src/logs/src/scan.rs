//! The `scan` tool: one pass over a log, counting lines by level (and HTTP
//! status class), optionally lines matching a pattern, and noting the first
//! and last timestamps — the overview a model needs before deciding what to
//! look at, at the cost of a few hundred bytes of context.

use crate::level::Level;
use crate::pattern;
use crate::reader::LineReader;
use crate::record::Format;
use crate::source::read_log;
use crate::text::{is_zero, shown};
use agent_reach_sdk::prelude::*;
use regex::bytes::Regex;
use std::collections::BTreeMap;
use std::io::{self, Read};

/// Longest timestamp shown, in bytes.
const MAX_TIMESTAMP: usize = 64;

/// Arguments of `scan`.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ScanArgs {
    /// The log file: absolute, or relative to the host's working directory.
    pub path: String,
    /// Also count the lines containing this text (case-sensitive unless
    /// `case_sensitive` is false), or matching it as a regular expression
    /// when `regex` is true.
    pub pattern: Option<String>,
    /// Treat `pattern` as a regular expression (Rust `regex` syntax); default false.
    #[serde(default)]
    pub regex: bool,
    /// Whether `pattern` must match upper and lower case exactly (default true).
    #[schemars(extend("default" = true))]
    pub case_sensitive: Option<bool>,
    /// Read the file as this format instead of recognising it from its first lines.
    pub format: Option<Format>,
}

/// What `scan` returns.
#[derive(Serialize, Debug)]
pub(crate) struct Summary {
    /// The file, as an absolute path.
    pub path: String,
    /// `access`, `json` or `plain`.
    pub format: &'static str,
    /// Size read, in bytes.
    pub bytes: u64,
    /// Lines in the file.
    pub lines: u64,
    /// Lines per level, most severe first.
    pub levels: LevelCounts,
    /// Lines per HTTP status class (`2xx`, `4xx`, …), when the log has statuses.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub statuses: BTreeMap<String, u64>,
    /// Line numbers of the first and last lines at level error or worse.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub first_error_line: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_error_line: Option<u64>,
    /// The first and last timestamps in the file, as written.
    pub first_timestamp: Option<String>,
    pub last_timestamp: Option<String>,
    /// Lines matching `pattern`, when one was given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pattern_matches: Option<u64>,
    /// Lines that did not fit the format and were read as plain text.
    #[serde(skip_serializing_if = "is_zero")]
    pub unparsed: u64,
    /// Lines longer than 1 MiB, of which only the first MiB was looked at.
    #[serde(skip_serializing_if = "is_zero")]
    pub long_lines: u64,
}

/// Lines per level, in the order a reader scans them: most severe first.
#[derive(Serialize, Debug, Default, PartialEq, Eq)]
pub(crate) struct LevelCounts {
    pub fatal: u64,
    pub error: u64,
    pub warn: u64,
    pub info: u64,
    pub debug: u64,
    pub trace: u64,
    /// Lines without a level (continuation lines of stack traces, say).
    pub unknown: u64,
}

impl LevelCounts {
    fn add(&mut self, level: Option<Level>) {
        *match level {
            Some(Level::Fatal) => &mut self.fatal,
            Some(Level::Error) => &mut self.error,
            Some(Level::Warn) => &mut self.warn,
            Some(Level::Info) => &mut self.info,
            Some(Level::Debug) => &mut self.debug,
            Some(Level::Trace) => &mut self.trace,
            None => &mut self.unknown,
        } += 1;
    }
}

/// Summarise a log file.
pub(crate) fn scan(args: ScanArgs) -> Result<String, ToolError> {
    let pattern = pattern::compile_optional(
        "scan",
        args.pattern.as_deref(),
        args.regex,
        args.case_sensitive,
    )?;
    let (mut summary, path) = read_log("scan", &args.path, args.format, |lines, format| {
        summarise(lines, format, pattern.as_ref())
    })?;
    summary.path = path;
    Ok(serde_json::to_string(&summary)?)
}

/// Read every line of `lines` as `format` and count. `path` is left empty.
pub(crate) fn summarise<R: Read>(
    lines: &mut LineReader<R>,
    format: Format,
    pattern: Option<&Regex>,
) -> io::Result<Summary> {
    let mut levels = LevelCounts::default();
    let mut statuses = [0u64; 6];
    let (mut first_error, mut last_error) = (None, None);
    let mut first_ts: Option<Vec<u8>> = None;
    // Overwritten for every line with a timestamp; reused, so no allocation.
    let mut last_ts = Vec::new();
    let (mut matches, mut unparsed, mut long_lines) = (0, 0, 0);

    while let Some(line) = lines.next_line()? {
        long_lines += u64::from(line.cut);
        if pattern.is_some_and(|p| p.is_match(line.text)) {
            matches += 1;
        }
        let (record, fits) = format.parse(line.text);
        unparsed += u64::from(!fits);
        levels.add(record.level);
        if record.level >= Some(Level::Error) {
            first_error.get_or_insert(line.number);
            last_error = Some(line.number);
        }
        if let Some(status) = record.status {
            statuses[usize::from(status / 100).min(5)] += 1;
        }
        if let Some(ts) = record.timestamp {
            if first_ts.is_none() {
                first_ts = Some(ts.to_vec());
            }
            last_ts.clear();
            last_ts.extend_from_slice(&ts);
        }
    }

    Ok(Summary {
        path: String::new(),
        format: format.name(),
        bytes: lines.bytes(),
        lines: lines.lines(),
        levels,
        statuses: (1..6)
            .filter(|&c| statuses[c] > 0)
            .map(|c| (format!("{c}xx"), statuses[c]))
            .collect(),
        first_error_line: first_error,
        last_error_line: last_error,
        last_timestamp: first_ts.as_ref().map(|_| shown(&last_ts, MAX_TIMESTAMP)),
        first_timestamp: first_ts.map(|ts| shown(&ts, MAX_TIMESTAMP)),
        pattern_matches: pattern.map(|_| matches),
        unparsed: if format == Format::Plain { 0 } else { unparsed },
        long_lines,
    })
}

#[cfg(test)]
mod tests {
    use super::{LevelCounts, summarise};
    use crate::pattern;
    use crate::reader::LineReader;
    use crate::record::Format;

    const PLAIN: &str = "2024-01-01T10:00:00Z INFO started\n\
        2024-01-01T10:00:01Z ERROR db timeout after 30s\n\
        \tat db.Pool.get(Pool.java:12)\n\
        2024-01-01T10:00:02Z WARN retrying\n\
        2024-01-01T10:00:03Z ERROR db timeout after 31s\n\
        2024-01-01T10:00:04Z DEBUG done\n";

    #[test]
    fn counts_levels_timestamps_and_matches() {
        let re = pattern::compile("scan", "timeout", false, true).unwrap();
        let s =
            summarise(&mut LineReader::new(PLAIN.as_bytes()), Format::Plain, Some(&re)).unwrap();
        assert_eq!((s.lines, s.bytes), (6, PLAIN.len() as u64));
        let want = LevelCounts {
            error: 2,
            warn: 1,
            info: 1,
            debug: 1,
            unknown: 1,
            ..LevelCounts::default()
        };
        assert_eq!(s.levels, want, "the stack-trace line has no level");
        assert_eq!((s.first_error_line, s.last_error_line), (Some(2), Some(5)));
        assert_eq!(s.first_timestamp.as_deref(), Some("2024-01-01T10:00:00Z"));
        assert_eq!(s.last_timestamp.as_deref(), Some("2024-01-01T10:00:04Z"));
        assert_eq!(s.pattern_matches, Some(2));
        assert!(s.statuses.is_empty());
    }

    #[test]
    fn access_logs_count_status_classes() {
        let log = "1.1.1.1 - - [01/Jan/2024:00:00:00 +0000] \"GET / HTTP/1.1\" 200 1 \"-\" \"x\"\n\
            1.1.1.1 - - [01/Jan/2024:00:00:01 +0000] \"GET /a HTTP/1.1\" 404 1 \"-\" \"x\"\n\
            not an access line\n\
            1.1.1.1 - - [01/Jan/2024:00:00:02 +0000] \"GET /b HTTP/1.1\" 502 1 \"-\" \"x\"\n";
        let s = summarise(&mut LineReader::new(log.as_bytes()), Format::Access, None).unwrap();
        assert_eq!(s.statuses.get("2xx"), Some(&1));
        assert_eq!(s.statuses.get("4xx"), Some(&1));
        assert_eq!(s.statuses.get("5xx"), Some(&1));
        assert_eq!((s.levels.error, s.levels.warn, s.levels.info, s.levels.unknown), (1, 1, 1, 1));
        assert_eq!(s.unparsed, 1);
        assert_eq!(s.last_timestamp.as_deref(), Some("01/Jan/2024:00:00:02 +0000"));
        assert_eq!(s.pattern_matches, None);
    }

    #[test]
    fn an_empty_file_has_nothing() {
        let s = summarise(&mut LineReader::new(&b""[..]), Format::Plain, None).unwrap();
        assert_eq!((s.lines, s.bytes, s.first_timestamp), (0, 0, None));
    }
}
