//! `reach mcp` on stdio driven line by line, for what the independent
//! clients cannot show: a cancelled call stops in the sandbox, every call
//! and refusal is in the server's audit log, a table that stops loading
//! closes the server, results are masked with the serving host's secrets,
//! and only the skills the table names are served.

use crate::support::mcp::Workspace;
use crate::support::stdio::StdioServer as Server;
use agent_reach_tests::guests;
use serde_json::{Value, json};
use std::time::{Duration, Instant};

/// The records of the server's one audit log, once `done` holds for them
/// (polled: the server writes as calls finish).
fn audit(ws: &Workspace, within: Duration, done: impl Fn(&[Value]) -> bool) -> Vec<Value> {
    let deadline = Instant::now() + within;
    loop {
        let records: Vec<Value> = std::fs::read_dir(ws.path(".reach/runs"))
            .into_iter()
            .flatten()
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().starts_with("mcp-"))
            .flat_map(|e| {
                std::fs::read_to_string(e.path())
                    .unwrap_or_default()
                    .lines()
                    .map(|l| serde_json::from_str(l).unwrap())
                    .collect::<Vec<Value>>()
            })
            .collect();
        if done(&records) || Instant::now() > deadline {
            return records;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn a_cancelled_call_stops_running_in_the_sandbox() {
    let ws = Workspace::new(
        "[skills.echo]\nlevel = \"auto\"\ntimeout_ms = 60000\n",
        &[guests::TEST_SKILL_ECHO],
    );
    let mut server = Server::start(&ws);
    server.call(2, "echo__wait", json!({"ms": 30000}));
    std::thread::sleep(Duration::from_millis(700));
    server.send(json!({
        "jsonrpc": "2.0", "method": "notifications/cancelled",
        "params": {"requestId": 2, "reason": "the user pressed stop"}
    }));
    // The server goes on answering.
    server.call(3, "echo__echo", json!({"still": "here"}));
    assert_eq!(server.response(3)["result"]["structuredContent"], json!({"still": "here"}));
    // The 30-second call ended long before its time, as a cancelled call.
    let waited = |records: &[Value]| {
        records.iter().any(|r| r["event"] == "tool_call" && r["tool"] == "echo.wait")
    };
    let records = audit(&ws, Duration::from_secs(10), waited);
    let wait = records.iter().find(|r| r["event"] == "tool_call" && r["tool"] == "echo.wait");
    let wait = wait.unwrap_or_else(|| {
        panic!("echo.wait still running 10 s after it was cancelled: {records:#?}")
    });
    assert_eq!(wait["outcome"], "error", "{wait}");
    assert!(wait["duration_ms"].as_u64().unwrap() < 10_000, "{wait}");
}

#[test]
fn every_call_and_refusal_is_in_the_audit_log_with_the_client_named() {
    let policy = "[skills.files]\n\
                  level = \"auto\"\n\
                  read = [\"./docs\"]\n\
                  [skills.files.tools.write]\n\
                  level = \"confirm\"\n";
    let ws = Workspace::new(policy, &[guests::SKILL_FILES]);
    let mut server = Server::start(&ws);
    server.call(2, "files__read", json!({"path": "docs/a.txt"}));
    assert_eq!(server.response(2)["result"]["isError"], json!(false));
    server.call(3, "files__read", json!({"path": "/etc/hostname"}));
    assert_eq!(server.response(3)["result"]["structuredContent"]["error_code"], "DENIED");
    // No elicitation capability: refused before anything runs.
    server.call(4, "files__write", json!({"path": "docs/b.txt", "content": "x"}));
    assert_eq!(server.response(4)["result"]["structuredContent"]["error_code"], "DENIED");
    server.call(5, "files__nope", json!({}));
    assert_eq!(server.response(5)["result"]["structuredContent"]["error_code"], "NO_SUCH_TOOL");

    let records = audit(&ws, Duration::from_secs(5), |r| {
        r.iter().filter(|r| r["event"] == "tool_call").count() >= 4
    });
    assert_eq!(records[0]["event"], "run_started", "{records:#?}");
    assert_eq!(records[0]["kind"], "mcp");
    let started: Vec<&Value> =
        records.iter().filter(|r| r["event"] == "tool_call_started").collect();
    assert_eq!(started.len(), 2, "only the two reads ran: {records:#?}");
    assert!(
        started.iter().all(|r| r["client"] == "line-test" && r["skill"] == "files"),
        "{started:#?}"
    );
    let calls: Vec<&Value> = records.iter().filter(|r| r["event"] == "tool_call").collect();
    let outcomes: Vec<(&str, &str)> = calls
        .iter()
        .map(|r| (r["tool"].as_str().unwrap(), r["outcome"].as_str().unwrap()))
        .collect();
    assert_eq!(
        outcomes,
        [
            ("files.read", "ok"),
            ("files.read", "error"),
            ("files.write", "refused"),
            ("files__nope", "refused")
        ],
        "{calls:#?}"
    );
    assert!(calls[2]["error"].as_str().unwrap().contains("elicitation"), "{}", calls[2]);

    // The client hangs up: the log ends with the server's finish, then the
    // signed head, and verifies.
    assert!(server.hang_up().success());
    let records = audit(&ws, Duration::from_secs(5), |r| {
        r.last().is_some_and(|r| r["event"] == "log_sealed")
    });
    let finished = &records[records.len() - 2];
    assert_eq!(
        (&finished["event"], &finished["tool_calls"]),
        (&json!("run_finished"), &json!(2)),
        "{records:#?}"
    );
    let verify = crate::support::isolated(env!("CARGO_BIN_EXE_reach"), &ws.path(""))
        .args(["runs", "verify", "--all", "--json"])
        .output()
        .expect("reach runs verify");
    let report: Value = serde_json::from_slice(&verify.stdout).expect("json");
    assert_eq!(verify.status.code(), Some(0), "{report:#}");
    assert_eq!(report["runs"][0]["verdict"], "intact");
}

/// The structured error of a failed call.
fn error(response: &Value) -> &Value {
    assert_eq!(response["result"]["isError"], json!(true), "expected a failed call: {response}");
    &response["result"]["structuredContent"]
}

/// Replace `path` the way editors save: a new file renamed over it.
fn save(path: &std::path::Path, text: &str) {
    let tmp = path.with_extension("tmp");
    std::fs::write(&tmp, text).unwrap();
    std::fs::rename(&tmp, path).unwrap();
}

/// Regression: a table edited into one that does not load left the old,
/// broader table serving, and clients were not told.
#[test]
fn a_table_that_stops_loading_closes_the_server_until_one_loads() {
    let ws = Workspace::new("[skills.echo]\nlevel = \"auto\"\n", &[guests::TEST_SKILL_ECHO]);
    let mut server = Server::start_with(&ws, &["mcp"], &[]);
    assert!(server.tools(2).contains(&"echo__wait".to_owned()));

    // `wait` meant to be denied, its name misspelt: the table is refused.
    save(
        &ws.path("reach.toml"),
        "[skills.echo]\nlevel = \"auto\"\n[skills.echo.tools.wiat]\nlevel = \"deny\"\n",
    );
    assert!(
        server.notified("notifications/tools/list_changed", Duration::from_secs(30)),
        "clients are told the server closed"
    );
    assert_eq!(server.tools(3), Vec::<String>::new(), "nothing is listed while closed");
    let refused = server.called(4, "echo__wait", json!({"ms": 0}));
    let refused = error(&refused);
    assert_eq!(refused["error_code"], "UNAVAILABLE", "{refused}");
    let message = refused["error"].as_str().unwrap();
    assert!(
        message.contains("reach.toml:3: [skills.echo.tools.wiat]: skill echo has no tool `wiat`"),
        "names the table's error: {message}"
    );
    assert!(message.contains("reopens as soon as it loads"), "says how to fix it: {message}");

    save(
        &ws.path("reach.toml"),
        "[skills.echo]\nlevel = \"auto\"\n[skills.echo.tools.wait]\nlevel = \"deny\"\n",
    );
    assert!(
        server.notified("notifications/tools/list_changed", Duration::from_secs(30)),
        "clients are told it opened again"
    );
    let listed = server.tools(5);
    assert!(
        listed.contains(&"echo__echo".to_owned()) && !listed.contains(&"echo__wait".to_owned()),
        "{listed:?}"
    );
    assert_eq!(
        server.called(6, "echo__echo", json!({"back": true}))["result"]["structuredContent"],
        json!({"back": true})
    );

    let records = audit(&ws, Duration::from_secs(5), |r| {
        r.iter().filter(|r| r["event"] == "tool_call").count() >= 2
    });
    let refusal =
        records.iter().find(|r| r["event"] == "tool_call" && r["error_code"] == "UNAVAILABLE");
    assert!(
        refusal.is_some_and(|r| r["outcome"] == "refused"),
        "the refusal is on record: {records:#?}"
    );
}

/// Regression: MCP answered with granted environment values in full (a
/// run masks them), and the audit log masked only what was granted at start.
#[test]
fn results_errors_and_the_audit_log_are_masked_with_the_serving_hosts_secrets() {
    const FIRST: &str = "first-granted-value-7c1e";
    const LATER: &str = "granted-after-reload-93ab";
    let table = |env: &str| {
        format!(
            "[skills.probe]\nlevel = \"auto\"\nenv = [{env}]\n[skills.echo]\nlevel = \"auto\"\n"
        )
    };
    let ws = Workspace::new(
        &table("\"REACH_TEST_FIRST\""),
        &[guests::TEST_SKILL_PROBE, guests::TEST_SKILL_ECHO],
    );
    let mut server = Server::start_with(
        &ws,
        &["mcp"],
        &[("REACH_TEST_FIRST", FIRST), ("REACH_TEST_LATER", LATER)],
    );

    let read = server.called(2, "probe__env", json!({"name": "REACH_TEST_FIRST"}));
    assert!(
        !read.to_string().contains(FIRST) && read.to_string().contains("[REDACTED]"),
        "the result: {read}"
    );
    // An error quoting the value (the schema's message shows what it got).
    let invalid = server.called(3, "echo__wait", json!({"ms": FIRST}));
    assert_eq!(error(&invalid)["error_code"], "INVALID_ARGS");
    assert!(!invalid.to_string().contains(FIRST), "the error: {invalid}");
    // Not granted (yet): nothing to mask.
    let other = server.called(4, "echo__echo", json!({"v": LATER}));
    assert!(other.to_string().contains(LATER), "{other}");

    save(&ws.path("reach.toml"), &table("\"REACH_TEST_FIRST\", \"REACH_TEST_LATER\""));
    assert!(
        server.notified("notifications/tools/list_changed", Duration::from_secs(30)),
        "the new table loads"
    );
    let read = server.called(5, "probe__env", json!({"name": "REACH_TEST_LATER"}));
    assert!(
        !read.to_string().contains(LATER) && read.to_string().contains("[REDACTED]"),
        "the result: {read}"
    );
    let echoed = server.called(6, "echo__echo", json!({"v": LATER}));
    assert!(!echoed.to_string().contains(LATER), "the result: {echoed}");

    // The log masks the value granted at start, and the one granted since.
    // Calls 1 and 2 ran before the reload, 3 and 4 after it.
    let records = audit(&ws, Duration::from_secs(5), |r| {
        r.iter().any(|r| r["event"] == "tool_call" && r["call"] == 4)
    });
    let after_reload: Vec<&Value> =
        records.iter().filter(|r| r["call"].as_u64() >= Some(3)).collect();
    assert!(
        after_reload
            .iter()
            .any(|r| r["tool"] == "echo.echo" && r["arguments"]["v"] == "[REDACTED]"),
        "{after_reload:#?}"
    );
    let log = serde_json::to_string(&after_reload).unwrap();
    assert!(!log.contains(LATER), "{log}");
    let log = serde_json::to_string(&records).unwrap();
    assert!(!log.contains(FIRST), "{log}");
}

/// Regression: MCP listed every installed skill, those the table does not
/// name among them (at the table's default level, with nothing granted).
#[test]
fn only_the_skills_the_table_names_are_served() {
    let policy = "[defaults]\nlevel = \"auto\"\n[skills.echo]\nlevel = \"auto\"\n";
    let ws = Workspace::new(policy, &[guests::TEST_SKILL_PROBE, guests::TEST_SKILL_ECHO]);
    let mut server = Server::start(&ws);
    let listed = server.tools(2);
    assert!(listed.contains(&"echo__echo".to_owned()), "{listed:?}");
    assert!(
        !listed.iter().any(|t| t.starts_with("probe__")),
        "a skill the table does not name is listed: {listed:?}"
    );
    let refused = server.called(3, "probe__env", json!({"name": "HOME"}));
    let refused = error(&refused);
    assert_eq!(refused["error_code"], "NO_SUCH_TOOL", "{refused}");
    assert!(
        refused["error"].as_str().unwrap().contains("does not name skill `probe` ([skills.probe])"),
        "{refused}"
    );
    drop(server);

    // No table at all: every skill, each asking a person first.
    std::fs::remove_file(ws.path("reach.toml")).unwrap();
    let mut server = Server::start(&ws);
    let listed = server.tools(2);
    assert!(
        listed.contains(&"probe__env".to_owned()) && listed.contains(&"echo__echo".to_owned()),
        "{listed:?}"
    );
}
