//! `tools/call` round trip over stdio: `reach mcp` as a child process, a
//! client that writes one JSON-RPC line and reads one back (nothing else of
//! its own), calling `files__read` on a small file. Against the same call made
//! in-process with `Host::invoke`, measured in the same run.
//!
//! Needs the skills: `just bench` builds them first. Prints the figures the
//! book's Performance chapter (docs/src/performance.md) quotes.

mod common;

use agent_reach::policy::Policy;
use agent_reach::runtime::RuntimeConfig;
use agent_reach::{AlwaysConfirm, Host};
use agent_reach_tests::guests;
use common::{median, root};
use criterion::{Criterion, criterion_group};
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

const POLICY: &str =
    "[skills.files]\nlevel = \"auto\"\nread = [\"./data\"]\n[skills.echo]\nlevel = \"auto\"\n";

struct Workspace {
    dir: tempfile::TempDir,
}

impl Workspace {
    fn new() -> Workspace {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("skills")).unwrap();
        std::fs::create_dir_all(dir.path().join("data")).unwrap();
        for guest in [guests::SKILL_FILES, guests::TEST_SKILL_ECHO] {
            std::fs::copy(guest.path(), dir.path().join("skills").join(guest.file_name()))
                .expect("copy skill");
        }
        std::fs::write(
            dir.path().join("data/small.txt"),
            "A small file read over MCP.\n".repeat(8),
        )
        .unwrap();
        std::fs::write(dir.path().join("reach.toml"), POLICY).unwrap();
        Workspace { dir }
    }

    fn arguments(&self) -> String {
        serde_json::json!({"path": self.dir.path().join("data/small.txt")}).to_string()
    }
}

/// `reach mcp` on stdio, past the handshake.
struct Client {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    next: u64,
    line: String,
}

impl Client {
    fn start(ws: &Workspace) -> Client {
        let mut child = Command::new(env!("CARGO_BIN_EXE_reach"))
            .args(["--policy", "reach.toml", "--skills", "skills", "mcp", "--no-watch"])
            .current_dir(ws.dir.path())
            .env("REACH_CACHE_DIR", root().join("target/bench-compile-cache"))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start reach mcp");
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        let mut client = Client { child, stdin, stdout, next: 1, line: String::new() };
        let init = serde_json::json!({
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "bench", "version": "0"},
        });
        client.request("initialize", &init.to_string());
        client
            .stdin
            .write_all(b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n")
            .unwrap();
        client
    }

    /// Send one request and read lines until its response; returns it.
    fn request(&mut self, method: &str, params: &str) -> &str {
        let id = self.next;
        self.next += 1;
        writeln!(
            self.stdin,
            "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"{method}\",\"params\":{params}}}"
        )
        .unwrap();
        let tag = format!("\"id\":{id}");
        loop {
            self.line.clear();
            assert!(self.stdout.read_line(&mut self.line).unwrap() > 0, "reach mcp closed stdout");
            if self.line.contains(&tag) {
                return &self.line;
            }
        }
    }
}

impl Drop for Client {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn benches(c: &mut Criterion) {
    let ws = Workspace::new();
    let params = format!("{{\"name\":\"files__read\",\"arguments\":{}}}", ws.arguments());
    let mut client = Client::start(&ws);
    let first = client.request("tools/call", &params).to_owned();
    assert!(first.contains("A small file") && !first.contains("\"isError\":true"), "{first}");

    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let policy = Policy::parse(POLICY, &ws.dir.path().join("reach.toml"), ws.dir.path())
        .unwrap()
        .with_working_dir(ws.dir.path());
    let config =
        RuntimeConfig { cache_dir: Some(root().join("target/bench-compile-cache")), pooling: true };
    let host = rt.block_on(Host::load(config, policy, &ws.dir.path().join("skills"))).unwrap();
    let arguments = ws.arguments();
    let in_process = || {
        let out = rt.block_on(host.invoke("files", "read", &arguments, &AlwaysConfirm)).unwrap();
        assert!(out.contains("A small file"));
    };

    let mut group = c.benchmark_group("mcp");
    group.bench_function("tools/call files__read over stdio", |b| {
        b.iter(|| client.request("tools/call", &params).len())
    });
    group.bench_function("Host::invoke files.read in process", |b| b.iter(in_process));
    group.finish();

    // The floor for any stdio server on this machine: one line through
    // `cat` and back (two pipe hops, two process wake-ups, no work).
    let mut cat =
        Command::new("cat").stdin(Stdio::piped()).stdout(Stdio::piped()).spawn().expect("cat");
    let (mut cat_in, mut cat_out) =
        (cat.stdin.take().unwrap(), BufReader::new(cat.stdout.take().unwrap()));
    let mut echoed = String::new();
    let mut pipe_round_trip = || {
        cat_in.write_all(params.as_bytes()).and_then(|()| cat_in.write_all(b"\n")).unwrap();
        echoed.clear();
        assert!(cat_out.read_line(&mut echoed).unwrap() > 0);
    };

    // The figures the book's Performance chapter (docs/src/performance.md)
    // quotes: medians of the same calls, this run.
    let n = 2001;
    let stdio = median(|| assert!(!client.request("tools/call", &params).is_empty()), n);
    let direct = median(in_process, n);
    // The same with a tool that touches no file: MCP's own share, and the
    // sandbox's without the blocking pool.
    let echo_params = r#"{"name":"echo__echo","arguments":{"path":"data/small.txt"}}"#;
    let echo_stdio = median(|| assert!(!client.request("tools/call", echo_params).is_empty()), n);
    let echo_direct = median(
        || {
            drop(
                rt.block_on(host.invoke(
                    "echo",
                    "echo",
                    r#"{"path":"data/small.txt"}"#,
                    &AlwaysConfirm,
                ))
                .unwrap(),
            )
        },
        n,
    );
    let floor = median(&mut pipe_round_trip, n);
    let _ = cat.kill();
    let _ = cat.wait();
    println!(
        "\nMCP tools/call round trip over stdio (files__read, {} B file), median of {n}:",
        8 * 28
    );
    println!("  over stdio:  {:>8.1} µs", stdio.as_secs_f64() * 1e6);
    println!("  in process:  {:>8.1} µs", direct.as_secs_f64() * 1e6);
    println!(
        "  a line through `cat` and back (the floor of any stdio server): {:>6.1} µs",
        floor.as_secs_f64() * 1e6
    );
    println!(
        "  echo__echo (no file touched): over stdio {:.1} µs, in process {:.1} µs",
        echo_stdio.as_secs_f64() * 1e6,
        echo_direct.as_secs_f64() * 1e6
    );
    println!(
        "  MCP adds {:.1} µs ({:.2}× the in-process call); target ≤ 100 µs median",
        (stdio.as_secs_f64() - direct.as_secs_f64()) * 1e6,
        stdio.as_secs_f64() / direct.as_secs_f64()
    );
}

criterion_group!(mcp, benches);

fn main() {
    mcp();
    Criterion::default().configure_from_args().final_summary();
}
