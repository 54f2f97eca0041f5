//! Skills in Python (componentize-py) and JavaScript (ComponentizeJS) in the same sandbox as
//! the Rust ones: the allowlist, the environment, the time, memory and output limits, and a
//! crash, each checked against a test skill in both languages (`tests/skills/misbehave-py`,
//! `tests/skills/misbehave-js`), plus the bundled `data` and `feeds` skills end to end.

use agent_reach::ErrorCode;
use agent_reach_tests::guests::{self, Guest};
use agent_reach_tests::{TestServer, Workspace, call};
use serde_json::json;
use std::time::{Duration, Instant};

const LANGUAGES: [(Guest, &str); 2] = [
    (guests::TEST_SKILL_MISBEHAVE_PY, "misbehave_py"),
    (guests::TEST_SKILL_MISBEHAVE_JS, "misbehave_js"),
];

fn ws(guest: Guest) -> Workspace {
    let ws = Workspace::new();
    ws.install(guest);
    ws
}

fn table(skill: &str, extra: &str) -> String {
    format!("[skills.{skill}]\nlevel = \"auto\"\n{extra}\n")
}

#[tokio::test]
async fn an_interpreter_component_instantiates_under_the_pooling_allocator() {
    for (guest, skill) in LANGUAGES {
        let ws = ws(guest);
        let host = ws.host(&table(skill, "")).await;
        assert!(host.runtime().is_pooled(), "the tests' runtime pools instances");
        let out = call(&host, &format!("{skill}.flood"), json!({"kib": 1})).await;
        assert_eq!(out.expect("a call in a pooled slot").len(), 1024, "{skill}");
    }
}

#[tokio::test]
async fn only_granted_hosts_are_reachable() {
    let server = TestServer::start();
    for (guest, skill) in LANGUAGES {
        let ws = ws(guest);
        let granted = ws.host(&table(skill, &format!("net = [\"{}\"]", server.addr))).await;
        let out = call(&granted, &format!("{skill}.fetch"), json!({"url": server.url("/page")}))
            .await
            .unwrap_or_else(|e| panic!("{skill}: {e}"));
        assert!(out.contains("200") && out.contains("hello from /page"), "{skill}: {out}");

        let none = ws.host(&table(skill, "")).await;
        let err = call(&none, &format!("{skill}.fetch"), json!({"url": server.url("/")}))
            .await
            .unwrap_err();
        assert_eq!(err.code, ErrorCode::Denied, "{skill}: {err}");
        assert!(err.message.contains(&server.addr.to_string()), "{skill} names it: {err}");
        assert!(err.message.contains("net"), "{skill} says what the operator can add: {err}");
    }
}

#[tokio::test]
#[expect(unsafe_code, reason = "set_var: the names are unique to this test")]
async fn only_granted_environment_variables_are_visible() {
    // SAFETY: no other test reads or writes these variables.
    unsafe {
        std::env::set_var("REACH_TEST_LANG_VISIBLE", "visible-value");
        std::env::set_var("REACH_TEST_LANG_SECRET", "do-not-leak");
    }
    for (guest, skill) in LANGUAGES {
        let ws = ws(guest);
        let host = ws.host(&table(skill, "env = [\"REACH_TEST_LANG_VISIBLE\"]")).await;
        let env = format!("{skill}.env");
        let seen = call(&host, &env, json!({"variable": "REACH_TEST_LANG_VISIBLE"})).await;
        assert_eq!(seen.unwrap_or_else(|e| panic!("{skill}: {e}")), "visible-value");
        for hidden in ["REACH_TEST_LANG_SECRET", "PATH", "HOME"] {
            let err = call(&host, &env, json!({"variable": hidden})).await.unwrap_err();
            assert_eq!(err.code, ErrorCode::NotFound, "{skill} {hidden}: {err}");
            assert!(!err.message.contains("do-not-leak"), "{skill}: {err}");
        }
    }
}

#[tokio::test]
async fn a_runaway_loop_and_a_long_wait_stop_at_the_time_limit() {
    for (guest, skill) in LANGUAGES {
        let ws = ws(guest);
        let host = ws.host(&table(skill, "timeout_ms = 300")).await;
        for (tool, args) in [("spin", json!({})), ("sleep", json!({"ms": 60_000}))] {
            let started = Instant::now();
            let err = call(&host, &format!("{skill}.{tool}"), args).await.unwrap_err();
            assert_eq!(err.code, ErrorCode::Timeout, "{skill}.{tool}: {err}");
            assert!(err.message.contains("300 ms"), "{skill}.{tool}: {err}");
            assert!(started.elapsed() < Duration::from_secs(5), "{skill}.{tool} stops");
        }
    }
}

#[tokio::test]
async fn memory_past_the_limit_is_a_structured_error_and_within_it_works() {
    for (guest, skill) in LANGUAGES {
        let ws = ws(guest);
        let host = ws.host(&table(skill, "memory_mb = 32")).await;
        let alloc = format!("{skill}.alloc");
        let err = call(&host, &alloc, json!({"mib": 64})).await.unwrap_err();
        // The interpreters catch the failed growth themselves (MemoryError, a JS
        // exception) and fail the call; the host knows its limiter refused the growth
        // and says so, with the same code a Rust skill's trap gets.
        assert_eq!(err.code, ErrorCode::OutOfMemory, "{skill}: {err}");
        assert!(err.message.contains("memory limit of 32 MiB (memory_mb)"), "{skill}: {err}");
        let ok = call(&host, &alloc, json!({"mib": 4})).await;
        assert_eq!(ok.unwrap_or_else(|e| panic!("{skill}: {e}")), "allocated 4 MiB");
    }
}

#[tokio::test]
async fn output_past_the_limit_is_refused() {
    for (guest, skill) in LANGUAGES {
        let ws = ws(guest);
        let host = ws.host(&table(skill, "max_output_kb = 16")).await;
        let flood = format!("{skill}.flood");
        let err = call(&host, &flood, json!({"kib": 17})).await.unwrap_err();
        assert_eq!(err.code, ErrorCode::OutputTooLarge, "{skill}: {err}");
        assert_eq!(call(&host, &flood, json!({"kib": 15})).await.unwrap().len(), 15 * 1024);
    }
}

#[tokio::test]
async fn a_crash_is_a_trap_an_exception_a_failure_and_the_host_keeps_working() {
    for (guest, skill) in LANGUAGES {
        let ws = ws(guest);
        let host = ws.host(&table(skill, "")).await;
        let crash = format!("{skill}.crash");
        let err = call(&host, &crash, json!({"how": "trap"})).await.unwrap_err();
        assert_eq!(err.code, ErrorCode::Trap, "{skill}: {err}");
        let err = call(&host, &crash, json!({"how": "error"})).await.unwrap_err();
        assert_eq!(err.code, ErrorCode::Failed, "{skill}: {err}");
        assert!(!err.message.contains("Traceback"), "{skill}: no traceback noise: {err}");
        let ok = call(&host, &format!("{skill}.flood"), json!({"kib": 1})).await;
        assert!(ok.is_ok(), "{skill} answers after a crash: {ok:?}");
    }
}

#[tokio::test]
async fn python_reads_and_writes_only_where_the_table_says() {
    let ws = ws(guests::TEST_SKILL_MISBEHAVE_PY);
    let docs = ws.write("docs/a.txt", "alpha\n");
    let out = ws.mkdir("out");
    ws.write("secret/key.txt", "do-not-leak");
    let host = ws.host(&table("misbehave_py", "read = [\"./docs\"]\nwrite = [\"./out\"]")).await;
    let read = |path: std::path::PathBuf| {
        let host = &host;
        async move { call(host, "misbehave_py.read", json!({"path": path.display().to_string()})).await }
    };
    assert_eq!(read(docs.clone()).await.unwrap(), "alpha\n");
    let err = read(ws.path("secret/key.txt")).await.unwrap_err();
    assert_eq!(err.code, ErrorCode::Denied, "{err}");
    assert!(!err.message.contains("do-not-leak"));
    let write = |path: std::path::PathBuf| {
        let host = &host;
        async move {
            let args = json!({"path": path.display().to_string(), "content": "x"});
            call(host, "misbehave_py.write", args).await
        }
    };
    let err = write(ws.path("docs/new.txt")).await.unwrap_err();
    assert_eq!(err.code, ErrorCode::Denied, "a read-only folder: {err}");
    assert!(err.message.contains("is read-only"), "names the write it refused: {err}");
    assert!(!ws.path("docs/new.txt").exists());
    write(out.join("new.txt")).await.expect("a writable folder");
    assert_eq!(std::fs::read_to_string(out.join("new.txt")).unwrap(), "x");
}

#[tokio::test]
async fn data_answers_over_a_granted_csv_and_names_the_line_of_a_malformed_one() {
    let ws = Workspace::new();
    ws.install(guests::SKILL_DATA);
    ws.write("tables/sales.csv", "region,amount\nNorth,10.5\nSouth,20\nNorth,5\n");
    ws.write("tables/broken.csv", "a,b\n1,2\n3,4,5\n");
    let host = ws.host_here("[skills.data]\nlevel = \"auto\"\nread = [\"./tables\"]\n").await;
    let args = json!({"path": "tables/sales.csv", "op": "sum", "column": "amount",
        "group_by": ["region"]});
    let out: serde_json::Value =
        serde_json::from_str(&call(&host, "data.aggregate", args).await.unwrap()).unwrap();
    assert_eq!(
        out["results"],
        json!([{"region": "South", "value": 20, "rows": 1},
               {"region": "North", "value": 15.5, "rows": 2}])
    );
    let err = call(&host, "data.describe", json!({"path": "tables/broken.csv"})).await.unwrap_err();
    assert!(err.message.contains("line 3"), "{err}");
    let err = call(
        &host,
        "data.query",
        json!({"path": "tables/sales.csv",
        "where": [{"column": "regoin", "op": "=", "value": "North"}]}),
    )
    .await
    .unwrap_err();
    assert!(err.message.contains("region"), "an unknown column lists the columns: {err}");
}

#[tokio::test]
async fn feeds_reads_a_served_feed_newest_first_and_only_from_granted_hosts() {
    let feed = std::fs::read_to_string(
        agent_reach_tests::workspace().join("evals/fixtures/feeds/status.rss"),
    )
    .unwrap();
    let server = agent_reach_tests::server::Server::start(move |request| {
        use agent_reach_tests::server::Response;
        match request.target.as_str() {
            "/status.rss" => Response::new(200)
                .header("Content-Type", "application/rss+xml")
                .close()
                .body(feed.clone()),
            _ => Response::new(404).close(),
        }
    });
    let ws = Workspace::new();
    ws.install(guests::SKILL_FEEDS);
    let host = ws.host(&table("feeds", &format!("net = [\"{}\"]", server.addr))).await;
    let args = json!({"url": server.url("/status.rss"), "limit": 2});
    let out: serde_json::Value =
        serde_json::from_str(&call(&host, "feeds.read", args).await.unwrap()).unwrap();
    assert_eq!(out["feed"]["title"], "Northwind Outdoor status");
    assert_eq!(out["total"], 3);
    let entries = out["entries"].as_array().unwrap();
    assert_eq!(entries.len(), 2);
    assert_eq!(entries[0]["title"], "Scheduled maintenance: patching the edge proxies");
    assert_eq!(entries[0]["date"], "2024-06-12T21:00:00Z");
    let summary = entries[0]["summary"].as_str().unwrap();
    assert!(summary.starts_with("On 13 June") && !summary.contains("<p>"), "{summary}");

    let err = call(&host, "feeds.read", json!({"url": server.url("/gone.rss")})).await.unwrap_err();
    assert_eq!(err.code, ErrorCode::NotFound, "{err}");
    let none = ws.host(&table("feeds", "")).await;
    let err =
        call(&none, "feeds.read", json!({"url": server.url("/status.rss")})).await.unwrap_err();
    assert_eq!(err.code, ErrorCode::Denied, "{err}");
}
