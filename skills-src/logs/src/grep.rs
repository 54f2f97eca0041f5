//! The `grep` tool: matching lines with line numbers and context, capped,
//! while still counting every match in the file.
//!
//! No line is shown twice: context stops at the previous or next shown
//! line, so close matches read as one stretch of log, like `grep -C`.

use crate::pattern;
use crate::reader::LineReader;
use crate::source::read_log;
use crate::text::{MAX_TEXT, cut, excerpt, json_len, shown};
use agent_reach_sdk::prelude::*;
use regex::bytes::Regex;
use std::collections::VecDeque;
use std::io::{self, Read};

/// Matches shown when the call gives no `max_matches`.
const DEFAULT_MATCHES: usize = 50;
/// Most matches one call shows.
const MAX_MATCHES: usize = 500;
/// Context lines when the call gives no `context`.
const DEFAULT_CONTEXT: usize = 2;
/// Most context lines on each side.
const MAX_CONTEXT: usize = 20;
/// Most text one answer shows, in bytes as JSON-escaped. Checked before
/// each match is added, so one more match with full context (41 lines of
/// at most 2.4 KB escaped) can follow; the total stays below the host's
/// default output limit of 256 KiB.
const MAX_SHOWN: usize = 128 * 1024;

/// Arguments of `grep`.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct GrepArgs {
    /// The log file: absolute, or relative to the host's working directory.
    pub path: String,
    /// The text to find in each line (a regular expression, Rust `regex`
    /// syntax, when `regex` is true).
    pub pattern: String,
    /// Treat `pattern` as a regular expression; default false (plain text).
    #[serde(default)]
    pub regex: bool,
    /// Whether upper and lower case must match exactly (default true).
    #[schemars(extend("default" = true))]
    pub case_sensitive: Option<bool>,
    /// Lines of context before and after each match (default 2, at most 20).
    #[schemars(range(max = 20), extend("default" = DEFAULT_CONTEXT))]
    pub context: Option<usize>,
    /// Most matches to show (default 50, at most 500); the rest are counted.
    #[schemars(range(min = 1, max = 500), extend("default" = DEFAULT_MATCHES))]
    pub max_matches: Option<usize>,
}

/// What `grep` returns.
#[derive(Serialize, Debug)]
pub(crate) struct Found {
    /// The file, as an absolute path.
    pub path: String,
    /// Lines in the file.
    pub lines: u64,
    /// Matching lines in the whole file.
    pub total_matches: u64,
    /// The matches shown, in file order.
    pub matches: Vec<Match>,
    /// Whether fewer matches are shown than there are.
    pub truncated: bool,
    /// Why matches are missing and what to do, when they are.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// One matching line and its context.
#[derive(Serialize, Debug)]
pub(crate) struct Match {
    /// 1-based line number.
    pub line: u64,
    /// The line, cut to 400 bytes around the match.
    pub text: String,
    /// The lines just before it (lines `line - before.len()` to `line - 1`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub before: Vec<String>,
    /// The lines just after it (from `line + 1`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub after: Vec<String>,
}

/// How one `grep` pass searches.
pub(crate) struct Options {
    pub pattern: Regex,
    pub context: usize,
    pub max_matches: usize,
}

/// Find matching lines in a log file.
pub(crate) fn grep(args: GrepArgs) -> Result<String, ToolError> {
    let options = Options {
        pattern: pattern::compile(
            "grep",
            &args.pattern,
            args.regex,
            args.case_sensitive.unwrap_or(true),
        )?,
        context: args.context.unwrap_or(DEFAULT_CONTEXT).min(MAX_CONTEXT),
        max_matches: args.max_matches.unwrap_or(DEFAULT_MATCHES).clamp(1, MAX_MATCHES),
    };
    // The format does not matter here; recognising it reads a few lines.
    let (mut found, path) =
        read_log("grep", &args.path, None, |lines, _format| search(lines, &options))?;
    found.path = path;
    Ok(serde_json::to_string(&found)?)
}

/// Search every line of `lines`. `path` is left empty.
pub(crate) fn search<R: Read>(lines: &mut LineReader<R>, options: &Options) -> io::Result<Found> {
    let mut matches: Vec<Match> = Vec::new();
    let mut total = 0;
    // Lines since the last shown one, at most `context`; their buffers are
    // recycled so that keeping context does not allocate per line.
    let mut recent: VecDeque<Vec<u8>> = VecDeque::with_capacity(options.context);
    let mut after_left = 0;
    let mut shown_bytes = 0;
    let mut full = false;

    while let Some(line) = lines.next_line()? {
        if let Some(found) = options.pattern.find(line.text) {
            total += 1;
            after_left = 0;
            full = full || matches.len() == options.max_matches || shown_bytes > MAX_SHOWN;
            if full {
                continue;
            }
            let before: Vec<String> = recent.iter().map(|l| shown(l, MAX_TEXT)).collect();
            recent.clear();
            let text = excerpt(line.text, found.start(), MAX_TEXT);
            shown_bytes += json_len(&text) + before.iter().map(|l| json_len(l)).sum::<usize>();
            matches.push(Match { line: line.number, text, before, after: Vec::new() });
            after_left = options.context;
        } else if after_left > 0 {
            let text = shown(line.text, MAX_TEXT);
            shown_bytes += json_len(&text);
            if let Some(last) = matches.last_mut() {
                last.after.push(text);
            }
            after_left -= 1;
        } else if options.context > 0 && !full {
            let mut kept = if recent.len() == options.context {
                recent.pop_front().unwrap_or_default()
            } else {
                Vec::new()
            };
            kept.clear();
            kept.extend_from_slice(cut(line.text, MAX_TEXT));
            recent.push_back(kept);
        }
    }

    let shown_count = matches.len() as u64;
    let note = (total > shown_count).then(|| {
        let why = if matches.len() < options.max_matches {
            "the answer reached its size limit; use less `context` or a narrower `pattern`"
        } else {
            "narrow the `pattern`, or raise `max_matches` (at most 500)"
        };
        format!(
            "{} more matching lines not shown (showing {shown_count} of {total}); {why}",
            total - shown_count
        )
    });
    Ok(Found {
        path: String::new(),
        lines: lines.lines(),
        total_matches: total,
        matches,
        truncated: note.is_some(),
        note,
    })
}

#[cfg(test)]
mod tests {
    use super::{Options, search};
    use crate::pattern;
    use crate::reader::LineReader;

    fn grep(log: &str, pattern: &str, context: usize, max_matches: usize) -> super::Found {
        let options = Options {
            pattern: pattern::compile("grep", pattern, false, true).unwrap(),
            context,
            max_matches,
        };
        search(&mut LineReader::new(log.as_bytes()), &options).unwrap()
    }

    fn numbered(n: usize, hits: &[usize]) -> String {
        (1..=n)
            .map(
                |i| {
                    if hits.contains(&i) {
                        format!("line {i} HIT\n")
                    } else {
                        format!("line {i}\n")
                    }
                },
            )
            .collect()
    }

    #[test]
    fn matches_with_context_on_both_sides() {
        let found = grep(&numbered(20, &[10]), "HIT", 2, 50);
        assert_eq!((found.total_matches, found.lines, found.truncated), (1, 20, false));
        let m = &found.matches[0];
        assert_eq!((m.line, m.text.as_str()), (10, "line 10 HIT"));
        assert_eq!(m.before, ["line 8", "line 9"]);
        assert_eq!(m.after, ["line 11", "line 12"]);
    }

    #[test]
    fn close_matches_do_not_repeat_lines() {
        let found = grep(&numbered(20, &[5, 7, 8]), "HIT", 2, 50);
        let m: Vec<(u64, &[String], &[String])> =
            found.matches.iter().map(|m| (m.line, &m.before[..], &m.after[..])).collect();
        assert_eq!(
            m[0],
            (5, &["line 3".to_owned(), "line 4".to_owned()][..], &["line 6".to_owned()][..])
        );
        assert_eq!(m[1], (7, &[][..], &[][..]));
        assert_eq!(m[2], (8, &[][..], &["line 9".to_owned(), "line 10".to_owned()][..]));
    }

    #[test]
    fn context_at_the_edges_of_the_file() {
        let found = grep(&numbered(3, &[1, 3]), "HIT", 5, 50);
        assert!(found.matches[0].before.is_empty());
        assert_eq!(found.matches[0].after, ["line 2"]);
        assert!(found.matches[1].after.is_empty());
    }

    #[test]
    fn the_cap_shows_the_first_matches_and_counts_the_rest() {
        let hits: Vec<usize> = (1..=100).filter(|i| i % 10 == 0).collect();
        let found = grep(&numbered(100, &hits), "HIT", 1, 3);
        assert_eq!(found.matches.iter().map(|m| m.line).collect::<Vec<_>>(), [10, 20, 30]);
        assert_eq!(found.matches[2].after, ["line 31"], "the last shown match keeps its context");
        assert_eq!(found.total_matches, 10);
        assert!(found.truncated);
        assert!(
            found.note.unwrap().starts_with("7 more matching lines not shown (showing 3 of 10)")
        );
    }

    #[test]
    fn answers_stay_under_the_output_limit_even_for_control_characters() {
        let line = format!("{}HIT\n", "\u{1}".repeat(500));
        let found = grep(&line.repeat(2000), "HIT", 20, 500);
        assert_eq!(found.total_matches, 2000);
        assert!(found.matches.len() < 500, "stopped by size, not by count");
        assert!(found.note.as_deref().unwrap().contains("size limit"));
        assert!(serde_json::to_string(&found).unwrap().len() < 256 * 1024);
    }

    #[test]
    fn no_match_is_an_empty_answer() {
        let found = grep("a\nb\n", "zzz", 2, 50);
        assert_eq!((found.total_matches, found.matches.len(), found.truncated), (0, 0, false));
        assert!(found.note.is_none());
    }
}
