//! The `top` tool: the most frequent values of one field — error messages,
//! statuses, endpoints, client addresses — with counts, in one pass.
//!
//! Messages and endpoints are grouped by their normalised form (numbers,
//! ids, UUIDs, addresses replaced by placeholders, see `normalize`), so
//! `user 42 not found` and `user 7 not found` count as one entry, shown with
//! the first original text as its example.

use crate::groups::{Groups, MAX_GROUPS};
use crate::level::Level;
use crate::normalize::{MAX_KEY, normalize};
use crate::pattern;
use crate::reader::LineReader;
use crate::record::{Format, Record};
use crate::source::read_log;
use crate::text::{MAX_TEXT, cut, is_zero, json_len, shown};
use agent_reach_sdk::prelude::*;
use regex::bytes::Regex;
use std::borrow::Cow;
use std::io::{self, Read};

/// Entries returned when the call gives no `limit`.
const DEFAULT_LIMIT: usize = 10;
/// Most entries one call returns.
const MAX_LIMIT: usize = 100;
/// Most text of values and examples in one answer, JSON-escaped: a hundred
/// entries of binary junk could otherwise pass the host's output limit.
const MAX_SHOWN: usize = 128 * 1024;

/// What `top` counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Field {
    /// The message, normalised. Access logs have none: their "message" is
    /// `METHOD /path STATUS`.
    Message,
    /// The HTTP status code.
    Status,
    /// The request path without query string, normalised.
    Endpoint,
    /// The client address.
    Ip,
    /// The HTTP method.
    Method,
    /// The client's User-Agent.
    UserAgent,
    /// The level (error, warn, …).
    Level,
}

impl Field {
    fn name(self) -> &'static str {
        match self {
            Field::Message => "message",
            Field::Status => "status",
            Field::Endpoint => "endpoint",
            Field::Ip => "ip",
            Field::Method => "method",
            Field::UserAgent => "user_agent",
            Field::Level => "level",
        }
    }
}

/// The least severe level a line must have to be counted.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(untagged)]
pub(crate) enum MinLevel {
    /// `any`: every line, with or without a level.
    Any(AnyLevel),
    /// This level or a more severe one.
    At(Level),
}

/// The word `any`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub(crate) enum AnyLevel {
    Any,
}

impl MinLevel {
    fn level(self) -> Option<Level> {
        match self {
            MinLevel::Any(_) => None,
            MinLevel::At(level) => Some(level),
        }
    }
}

/// Arguments of `top`.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct TopArgs {
    /// The log file: absolute, or relative to the host's working directory.
    pub path: String,
    /// What to count (default `message`): `message` (error messages, grouped),
    /// `status`, `endpoint` (request paths, grouped), `ip`, `method`,
    /// `user_agent` or `level`.
    pub field: Option<Field>,
    /// How many entries to return (default 10, at most 100).
    #[schemars(range(min = 1, max = 100), extend("default" = DEFAULT_LIMIT))]
    pub limit: Option<usize>,
    /// Count only lines at this level or more severe (`any` counts every
    /// line). Default: `error` when `field` is `message`, else `any`.
    /// In access logs 5xx is error, 4xx warn, the rest info.
    pub level: Option<MinLevel>,
    /// Count only lines containing this text (or matching it as a regular
    /// expression when `regex` is true), e.g. an endpoint or an error word.
    pub pattern: Option<String>,
    /// Treat `pattern` as a regular expression; default false.
    #[serde(default)]
    pub regex: bool,
    /// Whether `pattern` must match case exactly (default true).
    #[schemars(extend("default" = true))]
    pub case_sensitive: Option<bool>,
    /// Group messages and endpoints that differ only in numbers, hex ids,
    /// UUIDs and IP addresses (default true). False counts exact values.
    #[schemars(extend("default" = true))]
    pub normalize: Option<bool>,
    /// Read the file as this format instead of recognising it from its first lines.
    pub format: Option<Format>,
}

/// How one `top` pass counts.
pub(crate) struct Options {
    pub field: Field,
    pub limit: usize,
    pub min_level: Option<Level>,
    pub pattern: Option<Regex>,
    pub normalize: bool,
}

/// What `top` returns.
#[derive(Serialize, Debug)]
pub(crate) struct Ranking {
    /// The file, as an absolute path.
    pub path: String,
    pub format: &'static str,
    pub field: &'static str,
    /// The level filter applied, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub min_level: Option<&'static str>,
    /// Lines in the file.
    pub lines: u64,
    /// Lines that passed the level and pattern filters.
    pub matched: u64,
    /// Matched lines without a value for `field`.
    #[serde(skip_serializing_if = "is_zero")]
    pub missing: u64,
    /// Distinct values in the table: all of them, unless `max_undercount`
    /// is set.
    pub distinct: usize,
    /// The most frequent values, most frequent first.
    pub top: Vec<Entry>,
    /// When more than 20,000 distinct values were met: the most each count
    /// may be below the truth (the counts are then lower bounds).
    #[serde(skip_serializing_if = "is_zero")]
    pub max_undercount: u64,
    /// What to know about this answer, when anything.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// One value and its count.
#[derive(Serialize, Debug)]
pub(crate) struct Entry {
    pub count: u64,
    pub value: String,
    /// The first original text of the group, when normalising changed it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub example: Option<String>,
}

/// Count the values of one field.
pub(crate) fn top(args: TopArgs) -> Result<String, ToolError> {
    let field = args.field.unwrap_or(Field::Message);
    let default_level = if field == Field::Message {
        MinLevel::At(Level::Error)
    } else {
        MinLevel::Any(AnyLevel::Any)
    };
    let options = Options {
        field,
        limit: args.limit.unwrap_or(DEFAULT_LIMIT).clamp(1, MAX_LIMIT),
        min_level: args.level.unwrap_or(default_level).level(),
        pattern: pattern::compile_optional(
            "top",
            args.pattern.as_deref(),
            args.regex,
            args.case_sensitive,
        )?,
        normalize: args.normalize.unwrap_or(true),
    };
    let (mut ranking, path) =
        read_log("top", &args.path, args.format, |lines, format| rank(lines, format, &options))?;
    ranking.path = path;
    Ok(serde_json::to_string(&ranking)?)
}

/// Read every line of `lines` as `format` and rank the values of the field.
/// `path` is left empty.
pub(crate) fn rank<R: Read>(
    lines: &mut LineReader<R>,
    format: Format,
    options: &Options,
) -> io::Result<Ranking> {
    let mut groups = Groups::new(MAX_GROUPS);
    let (mut matched, mut missing) = (0, 0);
    // Reused for every line, so counting allocates only for new values.
    let mut key = Vec::with_capacity(MAX_KEY);
    let mut scratch = Vec::new();

    while let Some(line) = lines.next_line()? {
        if options.pattern.as_ref().is_some_and(|p| !p.is_match(line.text)) {
            continue;
        }
        let (record, _) = format.parse(line.text);
        if options.min_level.is_some_and(|min| record.level.is_none_or(|l| l < min)) {
            continue;
        }
        matched += 1;
        if options.field == Field::Message
            && record.message.is_none()
            && let Some(status) = record.status
        {
            request_key(&record, status, options.normalize, &mut scratch, &mut key);
            groups.add(&key, &scratch);
            continue;
        }
        let Some(value) = value_of(&record, options.field, &mut scratch) else {
            missing += 1;
            continue;
        };
        let value = cut(value, MAX_TEXT);
        let grouped =
            matches!(options.field, Field::Message | Field::Endpoint) && options.normalize;
        if grouped {
            normalize(value, &mut key);
            groups.add(&key, value);
        } else {
            groups.add(cut(value, MAX_KEY), value);
        }
    }

    let mut top = Vec::new();
    let mut size = 0;
    for (value, group) in groups.top(options.limit) {
        if size > MAX_SHOWN {
            break;
        }
        let entry = Entry {
            count: group.count,
            value: shown(value, MAX_KEY),
            example: group.example.as_deref().map(|e| shown(e, MAX_TEXT)),
        };
        size += json_len(&entry.value) + entry.example.as_deref().map_or(0, json_len);
        top.push(entry);
    }
    let mut ranking = Ranking {
        path: String::new(),
        format: format.name(),
        field: options.field.name(),
        min_level: options.min_level.map(Level::name),
        lines: lines.lines(),
        matched,
        missing,
        distinct: groups.len(),
        top,
        max_undercount: groups.max_undercount,
        note: None,
    };
    ranking.note = note(&ranking, groups.capped(), options.limit, options.pattern.is_some());
    Ok(ranking)
}

/// The "message" of a request line, which has none: `METHOD /path STATUS`
/// in `original`, and in `key` the same with the path normalised (the
/// status is kept as it is: it is the point of the entry).
fn request_key(
    record: &Record<'_>,
    status: u16,
    normalise: bool,
    original: &mut Vec<u8>,
    key: &mut Vec<u8>,
) {
    original.clear();
    original.extend_from_slice(record.method.as_deref().unwrap_or(b"-"));
    original.push(b' ');
    original.extend_from_slice(record.endpoint.as_deref().map_or(&b"-"[..], |e| cut(e, MAX_TEXT)));
    if normalise {
        normalize(original, key);
    } else {
        key.clear();
        key.extend_from_slice(cut(original, MAX_KEY));
    }
    for text in [original, key] {
        text.push(b' ');
        text.extend_from_slice(&status_digits(status));
    }
}

/// The value of `field` in `record`; `scratch` holds it when it has to be
/// put together (a status as text).
fn value_of<'a>(
    record: &'a Record<'a>,
    field: Field,
    scratch: &'a mut Vec<u8>,
) -> Option<&'a [u8]> {
    let text = |v: &'a Option<Cow<'a, [u8]>>| v.as_deref();
    match field {
        Field::Message => text(&record.message),
        Field::Status => {
            let status = record.status?;
            scratch.clear();
            scratch.extend_from_slice(&status_digits(status));
            Some(&scratch[..])
        }
        Field::Endpoint => text(&record.endpoint),
        Field::Ip => text(&record.ip),
        Field::Method => text(&record.method),
        Field::UserAgent => text(&record.user_agent),
        Field::Level => record.level.map(|l| l.name().as_bytes()),
    }
}

/// A status as its three digits, without going through `fmt` per line.
fn status_digits(status: u16) -> [u8; 3] {
    let digit = |n: u16| b'0' + (n % 10) as u8;
    [digit(status / 100), digit(status / 10), digit(status)]
}

/// Advice for answers that are empty, partial or surprising.
fn note(r: &Ranking, capped: bool, limit: usize, pattern: bool) -> Option<String> {
    if r.top.len() < limit.min(r.distinct) {
        return Some(format!(
            "only {} entries fit in one answer (their values are long); use a `pattern` to narrow \
             them",
            r.top.len()
        ));
    }
    if capped {
        return Some(format!(
            "more than {MAX_GROUPS} distinct values: counts are lower bounds, each at most {0} \
             short, and values with at most {0} lines may be missing; narrow with `pattern` or \
             `level` for exact counts",
            r.max_undercount
        ));
    }
    if r.matched == 0 && pattern {
        // The pattern is text looked for in each line; a model often writes
        // a description there ("5xx") instead.
        let level = r.min_level.map_or(String::new(), |l| format!(" at level {l} or worse"));
        return Some(format!(
            "no line{level} contains the `pattern` text; drop `pattern` to count every such line \
             (in access logs `level: \"error\"` alone selects 5xx responses and `\"warn\"` 4xx)"
        ));
    }
    if r.matched == 0 {
        return Some(match r.min_level {
            Some(level) => format!(
                "no line is at level {level} or worse; try `level: \"warn\"` or `\"any\"`, or \
                 `scan` for the level counts"
            ),
            None => "no line matched the `pattern`".to_owned(),
        });
    }
    (r.missing == r.matched)
        .then(|| format!("no matched line has a {} in this {} log", r.field, r.format))
}

#[cfg(test)]
mod tests {
    use super::{Field, Options, rank};
    use crate::level::Level;
    use crate::pattern;
    use crate::reader::LineReader;
    use crate::record::Format;

    fn options(field: Field, min_level: Option<Level>) -> Options {
        Options { field, limit: 10, min_level, pattern: None, normalize: true }
    }

    fn ranked(log: &str, format: Format, options: &Options) -> super::Ranking {
        rank(&mut LineReader::new(log.as_bytes()), format, options).unwrap()
    }

    const PLAIN: &str = "2024-01-01T10:00:00Z ERROR user 42 not found\n\
        2024-01-01T10:00:01Z ERROR db timeout after 30s\n\
        2024-01-01T10:00:02Z INFO user 9 logged in\n\
        2024-01-01T10:00:03Z ERROR user 7 not found\n\
        2024-01-01T10:00:04Z FATAL user 8 not found\n\
        2024-01-01T10:00:05Z WARN user 1 not found\n";

    #[test]
    fn error_messages_group_with_an_example() {
        let r = ranked(PLAIN, Format::Plain, &options(Field::Message, Some(Level::Error)));
        assert_eq!((r.matched, r.distinct), (4, 2));
        assert_eq!((r.top[0].count, r.top[0].value.as_str()), (3, "user <n> not found"));
        assert_eq!(r.top[0].example.as_deref(), Some("user 42 not found"));
        assert_eq!((r.top[1].count, r.top[1].value.as_str()), (1, "db timeout after <n>s"));
        assert!(r.note.is_none());
    }

    #[test]
    fn exact_values_without_normalising() {
        let mut o = options(Field::Message, None);
        o.normalize = false;
        o.pattern = Some(pattern::compile("top", "not found", false, true).unwrap());
        let r = ranked(PLAIN, Format::Plain, &o);
        assert_eq!((r.matched, r.distinct), (4, 4));
        assert!(r.top.iter().all(|e| e.count == 1 && e.example.is_none()));
    }

    const ACCESS: &str = "1.1.1.1 - - [01/Jan/2024:00:00:00 +0000] \"GET /api/users/1 HTTP/1.1\" \
                          500 1 \"-\" \"x\"\n\
                          2.2.2.2 - - [01/Jan/2024:00:00:01 +0000] \"GET /api/users/2?v=1 \
                          HTTP/1.1\" 500 1 \"-\" \"x\"\n\
                          1.1.1.1 - - [01/Jan/2024:00:00:02 +0000] \"POST /login HTTP/1.1\" 200 1 \
                          \"-\" \"y\"\n\
                          1.1.1.1 - - [01/Jan/2024:00:00:03 +0000] \"GET /health HTTP/1.1\" 404 1 \
                          \"-\" \"y\"\n";

    #[test]
    fn access_log_fields() {
        let r = ranked(ACCESS, Format::Access, &options(Field::Status, None));
        let statuses: Vec<(&str, u64)> =
            r.top.iter().map(|e| (e.value.as_str(), e.count)).collect();
        assert_eq!(statuses, [("500", 2), ("200", 1), ("404", 1)]);

        let r = ranked(ACCESS, Format::Access, &options(Field::Endpoint, None));
        assert_eq!((r.top[0].value.as_str(), r.top[0].count), ("/api/users/<n>", 2));
        assert_eq!(r.top[0].example.as_deref(), Some("/api/users/1"));

        let r = ranked(ACCESS, Format::Access, &options(Field::Ip, None));
        assert_eq!((r.top[0].value.as_str(), r.top[0].count), ("1.1.1.1", 3));

        let r = ranked(ACCESS, Format::Access, &options(Field::Message, Some(Level::Error)));
        assert_eq!((r.top[0].value.as_str(), r.top[0].count), ("GET /api/users/<n> 500", 2));
        assert_eq!(r.top[0].example.as_deref(), Some("GET /api/users/1 500"));
    }

    #[test]
    fn long_junk_values_are_cut_to_fit_one_answer() {
        let log: String = (0..100).map(|i| format!("{i:03}{}\n", "\u{1}".repeat(500))).collect();
        let mut o = options(Field::Message, None);
        (o.limit, o.normalize) = (100, false);
        let r = ranked(&log, Format::Plain, &o);
        assert_eq!(r.distinct, 100);
        assert!(r.top.len() < 100);
        assert!(r.note.as_deref().unwrap().starts_with("only"), "{:?}", r.note);
        assert!(serde_json::to_string(&r).unwrap().len() < 256 * 1024);
    }

    #[test]
    fn level_arguments() {
        let level = |json: &str| {
            serde_json::from_str::<super::MinLevel>(json).map(super::MinLevel::level).ok()
        };
        assert_eq!(level(r#""any""#), Some(None));
        assert_eq!(level(r#""warn""#), Some(Some(Level::Warn)));
        assert_eq!(level(r#""fatal""#), Some(Some(Level::Fatal)));
        assert_eq!(level(r#""loud""#), None);
    }

    #[test]
    fn notes_explain_empty_answers() {
        let r = ranked(
            "2024-01-01T10:00:00Z INFO fine\n",
            Format::Plain,
            &options(Field::Message, Some(Level::Error)),
        );
        assert_eq!(r.matched, 0);
        assert!(r.note.unwrap().contains("no line is at level error"));
        let narrowed = Options {
            pattern: Some(crate::pattern::compile("top", "5xx", false, true).unwrap()),
            ..options(Field::Endpoint, Some(Level::Error))
        };
        let r = ranked(
            "10.0.0.1 - - [01/Jan/2024:10:00:00 +0000] \"GET /a HTTP/1.1\" 500 1 \"-\" \"x\"\n",
            Format::Access,
            &narrowed,
        );
        assert!(
            r.note.unwrap().contains("no line at level error or worse contains the `pattern` text")
        );
        let r = ranked(PLAIN, Format::Plain, &options(Field::Ip, None));
        assert_eq!(r.missing, 6);
        assert!(r.note.unwrap().contains("no matched line has a ip"));
    }
}
