//! The `logs` skill: read-only analysis of log files in the folders the
//! operator granted, so that a model learns what a log says without pulling
//! it into its context.
//!
//! Every tool streams the file once with bounded memory (`reader`), so
//! multi-GB logs work inside the sandbox's memory limit. Lines are parsed as
//! one of three formats (`record`: `access` for nginx/Apache, `json`,
//! `plain`) into the same borrowed `record::Record`, which the tools
//! `scan`, `top` and `grep` (one module each) count, rank or show. As in the
//! `files` skill, the runtime enforces the grants; `source` only turns its
//! refusals into errors that list them.

use agent_reach_sdk::prelude::*;
use serde_json::json;

mod access;
mod find;
mod grep;
mod groups;
mod json;
mod json_object;
mod level;
mod normalize;
mod pattern;
mod plain;
mod reader;
mod record;
mod scan;
mod source;
mod text;
mod timestamp;
mod top;

/// For the model choosing among skills.
const DESCRIPTION: &str = "Analyse log files on the host without reading them whole: counts by \
level and status, most frequent errors, endpoints or clients, and matching lines with context. \
Works on nginx/Apache access logs, JSON-lines logs and plain text logs of any size. Read-only; \
only granted folders are reachable.";

/// Shown when a model asks for this skill.
const INSTRUCTIONS: &str = r#"# Analysing logs

Use these tools instead of reading a log: each reads the whole file once, however large, and
answers in a few hundred bytes to a few KB. For a small file you want to read as it is, or to
page through a region you have found, use `files.read` (start near the line `grep` or `scan`
reported).

## A good order
1. `scan {path}` — format, size, lines, counts per level (and per HTTP status class), the
   first and last timestamps, and the first and last error line. Add `pattern` to count lines
   with some text at the same time.
2. `top {path}` — the most frequent error messages, grouped: numbers, hex ids, UUIDs and IP
   addresses are replaced by `<n>`, `<hex>`, `<uuid>`, `<ip>`, and each group shows one
   original `example`. Other views: `field: "status"`, `"endpoint"` (paths, grouped the same
   way), `"ip"`, `"method"`, `"user_agent"`, `"level"`. Narrow with `level` (least severe level
   counted; `"any"` for all lines) and `pattern`.
3. `grep {path, pattern}` — the actual lines, with line numbers and `context` lines around
   each (default 2). At most `max_matches` are shown (default 50); `total_matches` counts all
   of them and `note` says how many more there are.

## Formats
Recognised from the first non-empty lines; force one with `format` if the guess (in every
answer as `format`) is wrong.
- `access`: nginx/Apache common or combined format. There is no level word, so 5xx counts as
  `error`, 4xx as `warn`, the rest as `info`; a request's "message" for `top` is
  `METHOD /path STATUS`.
- `json`: one object per line; top-level fields `level`/`severity` (words or pino/syslog
  numbers), `msg`/`message` (else `error`/`err`), `time`/`timestamp`/`ts`, `status`,
  `path`/`url`, `method`, `ip`/`remote_addr`, `user_agent`. Without a level, `status` decides;
  without either, the message is read as a plain line (Docker's `{"log":"… ERROR …"}`).
- `plain`: a timestamp (ISO 8601, `2024/01/02 10:00:00`, syslog `Jan  2 10:00:00`) and a level
  word near the start (`ERROR`, `[warn]`, `level=info`). Lines without one (stack traces)
  count as `unknown`.
Lines that do not fit the format are read as plain text and counted in `unparsed`.

## Limits
- Lines longer than 1 MiB are looked at only in their first MiB (`long_lines` in `scan`).
- Invalid UTF-8 never fails a call; it shows as `�`.
- `top` keeps at most 20,000 distinct values. Past that, counts become lower bounds:
  `max_undercount` says how far each may be short, and values rarer than that may be missing
  (frequent ones never are). Narrow with `pattern` or `level` for exact counts.
- Compressed logs (`.gz`, `.zst`, `.bz2`) are refused; folders are refused (`files.list`
  shows what a folder holds).
- A multi-GB file takes seconds per call; if a call times out, the operator can raise the
  skill's `timeout_ms`.
- Paths are absolute or relative to the host's working directory. A `denied` error lists
  the granted folders: do not retry other spellings of the path, ask the user instead.
"#;

/// The skill type exported to the host.
struct Logs;

impl Skill for Logs {
    fn define() -> Definition {
        Definition::new("logs", env!("CARGO_PKG_VERSION"), DESCRIPTION)
            .instructions(INSTRUCTIONS)
            .tool(
                "scan",
                "Overview of one log file in a single pass: detected format, bytes, lines, lines \
                 per level (fatal/error/warn/info/debug/trace/unknown; for access logs by status: \
                 5xx error, 4xx warn), lines per HTTP status class, first and last timestamps, \
                 first and last error line, and with `pattern` the number of lines matching it. \
                 Use it for an overview of a log; it never returns log lines. To rank values \
                 (which IP, endpoint, status or error is most frequent) use `top`; to see lines \
                 use `grep`; to read a small file whole use files.read.",
                scan::scan,
            )
            .example(
                "How many errors are in the app log, and how many mention timeouts?",
                json!({
                    "path": "/var/log/app/app.log",
                    "pattern": "timeout",
                    "case_sensitive": false,
                }),
                Some(concat!(
                    r#"{"path":"/var/log/app/app.log","format":"plain","bytes":52428800,"#,
                    r#""lines":401230,"levels":{"fatal":0,"error":1204,"warn":3310,"#,
                    r#""info":396700,"debug":0,"trace":0,"unknown":16},"#,
                    r#""first_error_line":88,"last_error_line":401100,"#,
                    r#""first_timestamp":"2024-05-01T00:00:02Z","#,
                    r#""last_timestamp":"2024-05-01T23:59:58Z","pattern_matches":977}"#
                )),
            )
            .tool(
                "top",
                "Rank the most frequent values of one field in a log file, with counts (which IP \
                 made the most requests, which endpoint failed most, which errors are most \
                 common): by default the error messages (level error or worse), grouped so that \
                 messages differing only in numbers, ids, UUIDs or IP addresses count as one, each \
                 with an original example. `field` also counts `status`, `endpoint` (request \
                 paths), `ip`, `method`, `user_agent` or `level`; `level` and `pattern` narrow the \
                 lines counted. Use it to find what goes wrong most, or who or what is hit most; \
                 then `grep` for the lines themselves.",
                top::top,
            )
            .example(
                "Which endpoints return server errors most often?",
                json!({
                    "path": "/var/log/nginx/access.log",
                    "field": "endpoint",
                    "level": "error",
                    "limit": 5,
                }),
                Some(concat!(
                    r#"{"path":"/var/log/nginx/access.log","format":"access","#,
                    r#""field":"endpoint","min_level":"error","lines":1200000,"#,
                    r#""matched":4210,"distinct":12,"top":[{"count":3900,"#,
                    r#""value":"/api/orders/<n>","example":"/api/orders/1881"},"#,
                    r#"{"count":210,"value":"/login"}]}"#
                )),
            )
            .tool(
                "grep",
                "Lines of one log file that contain a text (or match a regular expression with \
                 `regex: true`), with 1-based line numbers and `context` lines before and after \
                 each (default 2, at most 20). Shows at most `max_matches` (default 50, at most \
                 500) and counts every match in `total_matches`, with a `note` when more matched \
                 than are shown. Use it after `scan` or `top` to see particular lines; for a whole \
                 small file use files.read, to search a folder tree use files.search.",
                grep::grep,
            )
            .example(
                "Show the lines around each out-of-memory error.",
                json!({
                    "path": "logs/worker.log",
                    "pattern": "OutOfMemory",
                    "context": 3,
                    "max_matches": 10,
                }),
                Some(concat!(
                    r#"{"path":"/srv/app/logs/worker.log","lines":90211,"#,
                    r#""total_matches":1,"matches":[{"line":4410,"#,
                    r#""text":"2024-05-01T10:00:03Z ERROR java.lang.OutOfMemoryError: "#,
                    r#"Java heap space","before":["2024-05-01T10:00:01Z WARN heap at "#,
                    r#"97%","2024-05-01T10:00:02Z INFO gc pause 2.1s","#,
                    r#""2024-05-01T10:00:02Z WARN heap at 99%"],"after":["\tat "#,
                    r#"com.example.Cache.put(Cache.java:88)","\tat "#,
                    r#"com.example.Api.handle(Api.java:41)","2024-05-01T10:00:04Z INFO "#,
                    r#"worker restarted"]}],"truncated":false}"#
                )),
            )
    }
}

export_skill!(Logs);
