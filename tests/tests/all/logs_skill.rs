//! The `logs` skill in the real sandbox: logs generated here with known
//! counts, a read-only grant of their folder, and the answers a user would
//! check (counts, top entries, lines with context), plus the refusals.

use agent_reach::{ErrorCode, Host, ToolFailure};
use agent_reach_tests::guests;
use agent_reach_tests::{Workspace, call};
use serde_json::{Value, json};
use std::fmt::Write as _;

const POLICY: &str = "[skills.logs]\nlevel = \"auto\"\nread = [\"./logs\"]\n";

/// 3000 access-log lines: every 50th is a 502 on `POST /api/orders/<i>/pay`
/// from 203.0.113.9 (60), every other 20th a 404 on `/favicon.ico` (120),
/// the rest 200s on `/` (1470), `/health` (750) and `/api/users/<i>` (600).
fn access_log() -> String {
    let mut log = String::new();
    for i in 0..3000 {
        let (method, path, status) = if i % 50 == 0 {
            ("POST", format!("/api/orders/{i}/pay?attempt=1"), 502)
        } else if i % 20 == 0 {
            ("GET", "/favicon.ico".to_owned(), 404)
        } else {
            let path = match i % 4 {
                0 => format!("/api/users/{i}"),
                3 => "/health".to_owned(),
                _ => "/".to_owned(),
            };
            ("GET", path, 200)
        };
        let ip = if i % 50 == 0 {
            "203.0.113.9".to_owned()
        } else if i % 3 == 0 {
            "10.0.0.1".to_owned()
        } else {
            format!("10.0.0.{}", i % 7 + 2)
        };
        let ua = if i % 2 == 0 { "curl/8.5.0" } else { "Mozilla/5.0 (X11; Linux x86_64)" };
        writeln!(
            log,
            r#"{ip} - - [01/Mar/2024:10:{:02}:{:02} +0000] "{method} {path} HTTP/1.1" {status} {} "-" "{ua}""#,
            (i / 60) % 60,
            i % 60,
            100 + i
        )
        .unwrap();
    }
    log
}

/// 2000 JSON lines and one panic line after the 1000th: errors every 10th
/// line (100 payment failures with varying ids, 100 db timeouts), warnings
/// every 10th from the 5th (200), the rest info (1600).
fn json_log() -> String {
    let mut log = String::new();
    for i in 0..2000 {
        let time = format!("2024-03-01T12:{:02}:{:02}.000Z", (i / 60) % 60, i % 60);
        let line = match i % 10 {
            0 if i % 20 == 0 => {
                json!({
                    "time": time, "level": "error",
                    "msg": format!(
                        "payment {} failed: card \"declined\" \
                         (order {:08x}-aaaa-bbbb-cccc-{:012x})",
                        9000 + i,
                        i * 7919,
                        i
                    ),
                    "error": {"code": 402}
                })
            }
            0 => {
                json!({
                    "time": time, "level": "error",
                    "msg": format!("db timeout after {}ms on shard{}", 100 + i % 30, i % 4)
                })
            }
            5 => {
                json!({
                    "timestamp": time, "severity": "WARNING",
                    "message": format!("slow request {}ms", 500 + i)
                })
            }
            _ => json!({"time": time, "level": "info", "msg": "request ok", "status": 200}),
        };
        writeln!(log, "{line}").unwrap();
        if i == 999 {
            log.push_str(
                "panic: runtime error: invalid memory address or nil pointer dereference\n",
            );
        }
    }
    log
}

/// 2500 plain-text entries: every 25th an ERROR followed by two stack-trace
/// lines (100 errors, 200 lines without a level), every 10th from the 3rd a
/// WARN (250), the rest INFO (2150); entry 1234 is the only one about alice,
/// on line 1335.
fn plain_log() -> String {
    let mut log = String::new();
    for i in 0..2500 {
        let time = format!("2024-03-02 08:{:02}:{:02},{:03}", (i / 60) % 60, i % 60, i % 1000);
        let (level, message) = if i % 25 == 0 {
            (
                "ERROR",
                format!(
                    "Failed to connect to 10.1.{}.{}:5432 after {} retries",
                    i % 4,
                    i % 9,
                    i % 5
                ),
            )
        } else if i % 10 == 3 {
            ("WARN", format!("cache miss for key user:{i}"))
        } else if i == 1234 {
            ("INFO", "user alice logged in from 192.0.2.1".to_owned())
        } else {
            ("INFO", format!("handled request {i} in {}ms", i % 100))
        };
        writeln!(log, "{time} [worker-{}] {level} com.example.Service - {message}", i % 3).unwrap();
        if level == "ERROR" {
            log.push_str(
                "\tat com.example.Db.connect(Db.java:42)\n\
                 \tat com.example.Service.run(Service.java:7)\n",
            );
        }
    }
    log
}

/// A workspace with the skill and the three logs under `logs/`.
fn setup() -> Workspace {
    let ws = Workspace::new();
    ws.install(guests::SKILL_LOGS);
    ws.write("logs/access.log", &access_log());
    ws.write("logs/app.jsonl", &json_log());
    ws.write("logs/service.log", &plain_log());
    ws.write("secret/other.log", "2024-01-01T00:00:00Z ERROR secret\n");
    ws
}

async fn ok(ws: &Workspace, tool: &str, args: Value) -> Value {
    let host = ws.host(POLICY).await;
    let out = call(&host, tool, args).await.unwrap_or_else(|e| panic!("{tool}: {e:?}"));
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("{tool} returned no JSON ({e}): {out}"))
}

/// Call a tool that must fail with `code` and a message containing `text`.
async fn refused(host: &Host, tool: &str, args: Value, code: ErrorCode, text: &str) -> ToolFailure {
    let err = call(host, tool, args).await.expect_err("the call must fail");
    assert_eq!(err.code, code, "{tool}: {err:?}");
    assert!(err.message.contains(text), "{tool}: {err:?} should mention {text:?}");
    err
}

/// `[(value, count)]` of a `top` answer.
fn entries(top: &Value) -> Vec<(String, u64)> {
    top["top"]
        .as_array()
        .unwrap_or_else(|| panic!("no top: {top}"))
        .iter()
        .map(|e| (e["value"].as_str().unwrap().to_owned(), e["count"].as_u64().unwrap()))
        .collect()
}

fn pairs(rows: &[(&str, u64)]) -> Vec<(String, u64)> {
    rows.iter().map(|(v, c)| ((*v).to_owned(), *c)).collect()
}

#[tokio::test]
async fn scan_of_an_access_log_counts_statuses_as_levels() {
    let ws = setup();
    let s =
        ok(&ws, "logs.scan", json!({"path": ws.path("logs/access.log"), "pattern": "curl/"})).await;
    assert_eq!(s["format"], "access", "{s}");
    assert_eq!(s["lines"], 3000);
    assert_eq!(s["bytes"], access_log().len() as u64);
    assert_eq!(
        s["levels"],
        json!({
            "fatal": 0, "error": 60, "warn": 120, "info": 2820, "debug": 0, "trace": 0, "unknown": 0
        })
    );
    assert_eq!(s["statuses"], json!({"2xx": 2820, "4xx": 120, "5xx": 60}));
    assert_eq!(s["first_timestamp"], "01/Mar/2024:10:00:00 +0000");
    assert_eq!(s["last_timestamp"], "01/Mar/2024:10:49:59 +0000");
    assert_eq!(
        (s["first_error_line"].as_u64(), s["last_error_line"].as_u64()),
        (Some(1), Some(2951))
    );
    assert_eq!(s["pattern_matches"], 1500, "every other line is from curl");
}

#[tokio::test]
async fn scan_of_json_lines_reads_levels_severities_and_stray_text() {
    let ws = setup();
    let s = ok(&ws, "logs.scan", json!({"path": ws.path("logs/app.jsonl")})).await;
    assert_eq!(s["format"], "json", "{s}");
    assert_eq!(s["lines"], 2001);
    assert_eq!(
        s["levels"],
        json!({
            "fatal": 1, "error": 200, "warn": 200, "info": 1600, "debug": 0, "trace": 0,
            "unknown": 0
        })
    );
    assert_eq!(s["unparsed"], 1, "the panic line is not JSON: {s}");
    assert_eq!(s["first_timestamp"], "2024-03-01T12:00:00.000Z");
    assert_eq!(s["last_timestamp"], "2024-03-01T12:33:19.000Z");
}

#[tokio::test]
async fn scan_of_a_plain_log_leaves_stack_traces_without_level() {
    let ws = setup();
    let s = ok(
        &ws,
        "logs.scan",
        json!({"path": ws.path("logs/service.log"), "pattern": "RETRIES", "case_sensitive": false}),
    )
    .await;
    assert_eq!(s["format"], "plain", "{s}");
    assert_eq!(s["lines"], 2700);
    assert_eq!(
        s["levels"],
        json!({
            "fatal": 0, "error": 100, "warn": 250, "info": 2150, "debug": 0, "trace": 0,
            "unknown": 200
        })
    );
    assert_eq!(s["first_timestamp"], "2024-03-02 08:00:00,000");
    assert_eq!(s["last_timestamp"], "2024-03-02 08:41:39,499");
    assert_eq!(s["pattern_matches"], 100);
    assert!(s.get("unparsed").is_none(), "plain text has nothing unparsed: {s}");
}

#[tokio::test]
async fn top_groups_error_messages_that_differ_only_in_ids() {
    let ws = setup();
    let t = ok(&ws, "logs.top", json!({"path": ws.path("logs/app.jsonl")})).await;
    assert_eq!(t["min_level"], "error", "messages default to errors: {t}");
    assert_eq!(
        t["matched"], 201,
        "200 errors and the panic (fatal, its level word is not in the message)"
    );
    assert_eq!(
        entries(&t),
        pairs(&[
            ("db timeout after <n>ms on shard<n>", 100),
            ("payment <n> failed: card \"declined\" (order <uuid>)", 100),
            ("runtime error: invalid memory address or nil pointer dereference", 1),
        ])
    );
    assert_eq!(
        t["top"][1]["example"],
        "payment 9000 failed: card \"declined\" (order 00000000-aaaa-bbbb-cccc-000000000000)"
    );

    let t = ok(&ws, "logs.top", json!({"path": ws.path("logs/service.log"), "limit": 1})).await;
    assert_eq!(
        entries(&t),
        pairs(&[("com.example.Service - Failed to connect to <ip>:<n> after <n> retries", 100)])
    );
    assert_eq!(
        t["top"][0]["example"],
        "com.example.Service - Failed to connect to 10.1.0.0:5432 after 0 retries"
    );
    assert_eq!(t["distinct"], 1);
}

#[tokio::test]
async fn top_counts_statuses_endpoints_and_clients_of_an_access_log() {
    let ws = setup();
    let log = ws.path("logs/access.log");
    let t = ok(&ws, "logs.top", json!({"path": log, "field": "status"})).await;
    assert_eq!(entries(&t), pairs(&[("200", 2820), ("404", 120), ("502", 60)]));

    let t = ok(&ws, "logs.top", json!({"path": log, "field": "endpoint", "limit": 4})).await;
    assert_eq!(
        entries(&t),
        pairs(&[("/", 1470), ("/health", 750), ("/api/users/<n>", 600), ("/favicon.ico", 120)])
    );
    assert_eq!(t["distinct"], 5);

    let t = ok(&ws, "logs.top", json!({"path": log, "field": "ip", "limit": 1})).await;
    assert_eq!(entries(&t), pairs(&[("10.0.0.1", 980)]));

    let t = ok(&ws, "logs.top", json!({"path": log})).await;
    assert_eq!(
        entries(&t),
        pairs(&[("POST /api/orders/<n>/pay 502", 60)]),
        "the errors of an access log are its 5xx requests"
    );
    assert_eq!(t["top"][0]["example"], "POST /api/orders/0/pay 502");

    let t = ok(
        &ws,
        "logs.top",
        json!({"path": log, "field": "endpoint", "level": "warn", "normalize": false, "limit": 2}),
    )
    .await;
    assert_eq!(entries(&t), pairs(&[("/favicon.ico", 120), ("/api/orders/0/pay", 1)]));

    let t =
        ok(&ws, "logs.top", json!({"path": log, "field": "user_agent", "pattern": "GET / HTTP"}))
            .await;
    assert_eq!(t["matched"], 1470);
    assert_eq!(
        entries(&t),
        pairs(&[("Mozilla/5.0 (X11; Linux x86_64)", 750), ("curl/8.5.0", 720)])
    );
}

#[tokio::test]
async fn top_finds_a_late_flood_among_more_clients_than_it_keeps() {
    let ws = setup();
    let line = |ip: &str| {
        format!("{ip} - - [01/Mar/2024:10:00:00 +0000] \"GET / HTTP/1.1\" 200 5 \"-\" \"x\"\n")
    };
    let mut log: String = (0..30_000u32)
        .map(|i| line(&format!("10.{}.{}.{}", i >> 16, (i >> 8) & 255, i & 255)))
        .collect();
    log.push_str(&line("198.51.100.66").repeat(300));
    ws.write("logs/flood.log", &log);
    let t =
        ok(&ws, "logs.top", json!({"path": ws.path("logs/flood.log"), "field": "ip", "limit": 1}))
            .await;
    assert_eq!(entries(&t), pairs(&[("198.51.100.66", 300)]), "{t}");
    assert_eq!(t["max_undercount"], 1, "30,000 clients overflow the 20,000 kept: {t}");
    assert!(t["note"].as_str().unwrap().contains("lower bounds"), "{t}");
}

#[tokio::test]
async fn grep_shows_line_numbers_and_context() {
    let ws = setup();
    let g = ok(&ws, "logs.grep", json!({"path": ws.path("logs/service.log"), "pattern": "alice"}))
        .await;
    assert_eq!(g["total_matches"], 1, "{g}");
    let m = &g["matches"][0];
    assert_eq!(m["line"], 1335);
    assert!(
        m["text"]
            .as_str()
            .unwrap()
            .ends_with("INFO com.example.Service - user alice logged in from 192.0.2.1"),
        "{m}"
    );
    assert_eq!(m["before"].as_array().unwrap().len(), 2);
    assert!(
        m["before"][1]
            .as_str()
            .unwrap()
            .ends_with("WARN com.example.Service - cache miss for key user:1233"),
        "{m}"
    );
    assert!(m["after"][0].as_str().unwrap().ends_with("handled request 1235 in 35ms"), "{m}");
    assert_eq!(g["truncated"], false);
}

#[tokio::test]
async fn grep_caps_the_matches_shown_and_says_how_many_more_there_are() {
    let ws = setup();
    let args = json!({
        "path": ws.path("logs/service.log"), "pattern": r"Failed to connect to \S+:5432",
        "regex": true, "context": 1, "max_matches": 5
    });
    let g = ok(&ws, "logs.grep", args).await;
    assert_eq!(g["total_matches"], 100);
    let matches = g["matches"].as_array().unwrap();
    assert_eq!(
        matches.iter().map(|m| m["line"].as_u64().unwrap()).collect::<Vec<_>>(),
        [1, 28, 55, 82, 109]
    );
    assert!(matches[0].get("before").is_none(), "nothing before line 1");
    assert_eq!(matches[1]["after"], json!(["\tat com.example.Db.connect(Db.java:42)"]));
    assert_eq!(g["truncated"], true);
    assert!(
        g["note"]
            .as_str()
            .unwrap()
            .starts_with("95 more matching lines not shown (showing 5 of 100)"),
        "{g}"
    );
}

#[tokio::test]
async fn a_path_outside_the_grant_is_denied_with_the_grants_listed() {
    let ws = setup();
    let host = ws.host(POLICY).await;
    let grant = format!("(readable: {}; writable: none)", ws.path("logs").display());
    for tool in ["logs.scan", "logs.top", "logs.grep"] {
        let args = json!({"path": ws.path("secret/other.log"), "pattern": "secret"});
        let err = refused(&host, tool, args, ErrorCode::Denied, &grant).await;
        assert!(!err.message.contains("ERROR secret"), "{err:?}");
    }
    let sneaky = format!("{}/../secret/other.log", ws.path("logs").display());
    refused(&host, "logs.scan", json!({"path": sneaky}), ErrorCode::Denied, "is not granted").await;
}

#[tokio::test]
async fn a_missing_file_is_not_found_and_a_folder_is_refused() {
    let ws = setup();
    let host = ws.host(POLICY).await;
    refused(
        &host,
        "logs.scan",
        json!({"path": ws.path("logs/nope.log")}),
        ErrorCode::NotFound,
        "no such file",
    )
    .await;
    refused(
        &host,
        "logs.top",
        json!({"path": ws.path("logs")}),
        ErrorCode::InvalidArgs,
        "is a folder",
    )
    .await;
}

#[tokio::test]
async fn bad_patterns_and_compressed_logs_are_invalid_arguments() {
    let ws = setup();
    std::fs::write(ws.path("logs/old.log.gz"), [0x1f, 0x8b, 0x08, 0x00, 0x00]).unwrap();
    let host = ws.host(POLICY).await;
    let args = json!({"path": ws.path("logs/service.log"), "pattern": "(", "regex": true});
    refused(&host, "logs.grep", args, ErrorCode::InvalidArgs, "not a valid regular expression")
        .await;
    refused(
        &host,
        "logs.scan",
        json!({"path": ws.path("logs/old.log.gz")}),
        ErrorCode::InvalidArgs,
        "compressed",
    )
    .await;
}

#[tokio::test]
async fn a_huge_line_and_binary_garbage_do_not_break_the_tools() {
    let ws = setup();
    let mut bytes = b"2024-01-01T00:00:00Z INFO start\n".to_vec();
    bytes.extend(std::iter::repeat_n(b'x', 3 << 20)); // one 3 MiB line
    bytes.extend_from_slice(b" ERROR at the end of a huge line\n");
    // Pseudo-random bytes: NULs, invalid UTF-8, stray `\r`, a few newlines.
    let mut seed = 0x2545_f491_u32;
    for _ in 0..200_000 {
        seed ^= seed << 13;
        seed ^= seed >> 17;
        seed ^= seed << 5;
        let b = (seed >> 24) as u8;
        bytes.push(if b == b'\n' { 0 } else { b });
    }
    bytes.extend_from_slice(b"\n2024-01-01T00:00:09Z ERROR after the garbage \xff\xfe\n");
    std::fs::write(ws.path("logs/weird.log"), &bytes).unwrap();

    let s = ok(&ws, "logs.scan", json!({"path": ws.path("logs/weird.log"), "pattern": "garbage"}))
        .await;
    assert_eq!(s["lines"], 4, "{s}");
    assert_eq!(s["bytes"], bytes.len() as u64);
    assert_eq!(s["long_lines"], 1);
    assert_eq!(s["levels"]["error"], 1, "{s}");
    assert_eq!(s["last_timestamp"], "2024-01-01T00:00:09Z");
    assert_eq!(s["pattern_matches"], 1);

    let g = ok(
        &ws,
        "logs.grep",
        json!({"path": ws.path("logs/weird.log"), "pattern": "after the garbage", "context": 3}),
    )
    .await;
    assert_eq!(g["matches"][0]["line"], 4, "{g}");
    assert_eq!(
        g["matches"][0]["text"],
        "2024-01-01T00:00:09Z ERROR after the garbage \u{fffd}\u{fffd}"
    );
    let before = g["matches"][0]["before"].as_array().unwrap();
    assert_eq!(before.len(), 3);
    assert!(before[1].as_str().unwrap().len() < 2000, "context lines are cut");

    let t = ok(
        &ws,
        "logs.top",
        json!({"path": ws.path("logs/weird.log"), "level": "any", "field": "level"}),
    )
    .await;
    assert_eq!(t["lines"], 4, "{t}");
}

#[tokio::test]
async fn the_format_can_be_forced() {
    let ws = setup();
    let s =
        ok(&ws, "logs.scan", json!({"path": ws.path("logs/access.log"), "format": "plain"})).await;
    assert_eq!(s["format"], "plain");
    assert_eq!(
        s["levels"]["unknown"], 3000,
        "read as plain text, access lines have no level word: {s}"
    );
    let args = json!({"path": ws.path("logs/access.log"), "format": "csv"});
    refused(&ws.host(POLICY).await, "logs.scan", args, ErrorCode::InvalidArgs, "/format").await;
}
