//! The shipped example configuration for many instances, run as operators
//! would run it (`deploy/many-instances/`): two `reach mcp --http` behind
//! HAProxy with its `haproxy.cfg`, both on the table `reach.toml` whose
//! memory is one PostgreSQL database (a throwaway cluster here). Only the
//! addresses are replaced. Calls are spread over both instances; a
//! confirmation asked through the balancer is answered through it at the
//! other instance and runs once; what one machine remembers the other
//! recalls; with one instance killed, the balancer keeps serving.

use crate::mcp_http::stateless_write_at;
use crate::memory_postgres::cluster::{Cluster, PASSWORD};
use crate::support::mcp::{HttpServer, Response, Workspace};
use agent_reach_tests::guests;
use serde_json::Value;
use std::net::SocketAddr;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const HAPROXY_CFG: &str = include_str!("../../../deploy/many-instances/haproxy.cfg");
const TABLE: &str = include_str!("../../../deploy/many-instances/reach.toml");
const TOKEN: &str = "the-instances-shared-token-for-this-test";

/// HAProxy on the shipped configuration, stopped when dropped.
struct Balancer {
    child: Child,
    addr: SocketAddr,
}

impl Drop for Balancer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Balancer {
    /// `haproxy.cfg` with its three addresses replaced: the balancer's and
    /// the instances'. Returns once it accepts connections.
    fn start(dir: &std::path::Path, a: SocketAddr, b: SocketAddr) -> Balancer {
        let listen = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap();
        let mut config = HAPROXY_CFG.to_owned();
        for (shipped, here) in
            [("127.0.0.1:8080", listen), ("127.0.0.1:8701", a), ("127.0.0.1:8702", b)]
        {
            assert!(config.contains(shipped), "haproxy.cfg no longer names {shipped}");
            config = config.replace(shipped, &here.to_string());
        }
        let path = dir.join("haproxy.cfg");
        std::fs::write(&path, config).unwrap();
        let child = Command::new("haproxy")
            .env("REACH_MCP_TOKEN", TOKEN)
            .arg("-db")
            .arg("-f")
            .arg(&path)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("haproxy runs (apt-get install haproxy; .ci/setup installs it)");
        let start = Instant::now();
        while std::net::TcpStream::connect(listen).is_err() {
            assert!(start.elapsed() < Duration::from_secs(10), "haproxy did not listen");
            std::thread::sleep(Duration::from_millis(50));
        }
        Balancer { child, addr: listen }
    }
}

/// A stateless `files__write` through `addr` with the instances' token,
/// answering a confirmation with `answer` (a request state).
fn write_via(addr: SocketAddr, path: &str, answer: Option<&str>) -> (Response, Value) {
    let authorization = format!("Bearer {TOKEN}");
    let answer = answer.map(|state| ("accept", state));
    stateless_write_at(addr, Some(&authorization), "operator", path, answer)
}

/// Which instance answered (`a` or `b`), from the header the configuration sets.
fn served_by(response: &Response) -> String {
    response.header("x-served-by").unwrap_or_default().to_owned()
}

#[test]
fn two_instances_behind_haproxy_share_confirmations_and_postgresql_shares_memory() {
    let url = Cluster::shared().database();
    let table = TABLE.replace("postgres://reach@db.internal:5432/reach", &url);
    assert_ne!(table, TABLE, "reach.toml no longer names its example database");
    let ws = Workspace::new(&table, &[guests::SKILL_FILES]);
    std::fs::create_dir_all(ws.path("docs")).unwrap();
    std::fs::create_dir_all(ws.path("notes")).unwrap();
    let approvals = ws.path("approvals.db");
    let env = [
        ("REACH_MCP_TOKEN", TOKEN),
        ("REACH_MCP_STATE_KEY", "the instances' shared state key"),
        ("REACH_MCP_APPROVALS", approvals.to_str().unwrap()),
        ("REACH_MEMORY_PASSWORD", PASSWORD),
    ];
    let start = |runs: &str| -> HttpServer { ws.serve_http(&["--runs-dir", runs], &env) };
    let (a, b) = (start("runs-a"), start("runs-b"));
    let balancer = Balancer::start(&ws.path(""), a.addr, b.addr);

    // Up once HAProxy's checks pass; round robin then alternates.
    let started = Instant::now();
    let mut seen = std::collections::BTreeSet::new();
    while seen.len() < 2 {
        assert!(started.elapsed() < Duration::from_secs(20), "both instances up: {seen:?}");
        let (response, asked) = write_via(balancer.addr, "notes/probe.md", None);
        assert_eq!(asked["resultType"], "input_required", "{asked}");
        seen.insert(served_by(&response));
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_eq!(seen.into_iter().collect::<Vec<_>>(), ["a", "b"]);

    // Asked at one instance, answered through the balancer at the other: runs once.
    let (asked_at, asked) = write_via(balancer.addr, "notes/confirmed.md", None);
    let state = asked["requestState"].as_str().expect("a request state").to_owned();
    let (answered_at, done) = write_via(balancer.addr, "notes/confirmed.md", Some(&state));
    assert_ne!(served_by(&asked_at), served_by(&answered_at), "round robin: the other instance");
    assert_eq!(done["isError"], false, "{done}");
    assert!(ws.path("notes/confirmed.md").exists());
    for _ in 0..2 {
        let (_, again) = write_via(balancer.addr, "notes/confirmed.md", Some(&state));
        assert_ne!(again["isError"], false, "a yes is good once, at any instance: {again}");
    }

    // Memory: what one machine's host adds, another's finds (two folders on one table).
    let memory = |args: &[&str]| {
        let out = ws.reach(args).env("REACH_MEMORY_PASSWORD", PASSWORD).output().unwrap();
        assert!(out.status.success(), "{out:?}");
        String::from_utf8(out.stdout).unwrap()
    };
    let note = concat!(
        r#"{"id":1,"kind":"fact","subject":"deploys","text":"deploys go out on Tuesdays","#,
        r#""task_type":null,"provenance":{"source":"user"},"created":"2026-12-07T10:00:00.000Z","#,
        r#""last_used":null,"use_count":0,"supersedes":null,"superseded_by":null}"#
    );
    std::fs::write(ws.path("note.jsonl"), note).unwrap();
    memory(&["memory", "import", "note.jsonl"]);
    let other = tempfile::tempdir().unwrap();
    std::fs::write(other.path().join("reach.toml"), &table).unwrap();
    let out = crate::support::isolated(env!("CARGO_BIN_EXE_reach"), other.path())
        .args(["memory", "search", "when do deploys go out", "--json"])
        .env("REACH_MEMORY_PASSWORD", PASSWORD)
        .output()
        .unwrap();
    let found: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(found["entries"][0]["text"], "deploys go out on Tuesdays", "{found}");

    // One instance killed: the balancer serves every call from the other.
    let killed = served_by(&write_via(balancer.addr, "notes/probe.md", None).0);
    let survivor = if killed == "a" {
        drop(a);
        b
    } else {
        drop(b);
        a
    };
    for i in 0..10 {
        let (response, asked) = write_via(balancer.addr, &format!("notes/after-{i}.md"), None);
        assert_eq!(asked["resultType"], "input_required", "call {i}: {asked}");
        assert_ne!(served_by(&response), killed, "call {i} went to the killed instance");
    }
    let (_, still) = write_via(survivor.addr, "notes/direct.md", None);
    assert_eq!(still["resultType"], "input_required", "{still}");

    // Each instance kept its own audit log, in its own folder (collect both).
    for runs in ["runs-a", "runs-b"] {
        let logs: Vec<_> = std::fs::read_dir(ws.path(runs)).unwrap().flatten().collect();
        assert!(
            logs.iter().any(|e| e.file_name().to_string_lossy().starts_with("mcp-")),
            "{runs} has the instance's log"
        );
    }
}
