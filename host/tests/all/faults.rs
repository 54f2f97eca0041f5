//! Faults at volume: a skill that misbehaves a thousand times in a row
//! against a `reach mcp` process, which must answer every call with the
//! structured error and keep its memory flat.
//!
//! The server is its own process so its resident memory is its own (the
//! tests in this binary share one process, and their allocations would be
//! noise). Memory is read from `/proc/PID/status` every 100 calls; after a
//! warm-up of 100 calls of each kind, the growth over the next 5,000 calls
//! must stay under a bound that a leak of a few kilobytes a call would cross.

use crate::support::mcp::Workspace;
use crate::support::stdio::StdioServer as Server;
use agent_reach_tests::guests;
use serde_json::{Value, json};

/// Calls of each kind.
const CALLS: u64 = 1000;
/// Growth allowed after the warm-up: noise from the allocator and the
/// audit log's buffers, well under what 5,000 calls leaking 2 KiB each
/// (10 MiB) would add.
const MAX_GROWTH_KIB: u64 = 8 * 1024;

/// The server's resident memory, KiB.
fn rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("proc status");
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmRSS")
}

/// A kind of misbehaviour: the tool, its arguments and the error it must
/// come back as (`None`: the call succeeds, its flood of stdout and stderr
/// dropped).
type Kind = (&'static str, Value, Option<&'static str>);

/// 100 calls of each kind as a warm-up, then [`CALLS`] of each against one
/// `reach mcp` on `table`, every answer checked; its resident memory must
/// stay within [`MAX_GROWTH_KIB`] of where the warm-up left it. Returns
/// that baseline and the last sample, KiB.
fn hammer(table: &str, kinds: &[Kind]) -> (u64, u64) {
    let ws = Workspace::new(table, &[guests::TEST_SKILL_MISBEHAVE]);
    let mut server = Server::start(&ws);
    let pid = server.pid();
    let mut id = 10;
    let mut call = |server: &mut Server, (tool, args, code): &Kind, i: u64| {
        id += 1;
        let response = server.called(id, tool, args.clone());
        let result = &response["result"];
        match code {
            Some(code) => {
                assert_eq!(result["isError"], json!(true), "{tool} call {i}: {response}");
                assert_eq!(
                    result["structuredContent"]["error_code"], *code,
                    "{tool} {i}: {response}"
                );
            }
            None => assert_eq!(result["isError"], json!(false), "{tool} call {i}: {response}"),
        }
    };
    // The warm-up: each kind's compiled code, first instances and buffers in place.
    for kind in kinds {
        for i in 0..100 {
            call(&mut server, kind, i);
        }
    }
    let baseline = rss_kib(pid);
    let mut samples: Vec<(String, u64)> = Vec::new();
    for kind in kinds {
        for i in 0..CALLS {
            call(&mut server, kind, i);
            if (i + 1) % 100 == 0 {
                samples.push((format!("{} {}", kind.0, i + 1), rss_kib(pid)));
            }
        }
    }
    let last = samples.last().expect("samples").1;
    let peak = samples.iter().map(|s| s.1).max().unwrap();
    eprintln!(
        "RSS after the warm-up {baseline} KiB, peak {peak} KiB, last {last} KiB: {samples:?}"
    );
    assert!(
        peak.saturating_sub(baseline) < MAX_GROWTH_KIB,
        "RSS grew from {baseline} KiB after the warm-up to {peak} KiB (last {last} KiB): {samples:?}"
    );
    // And it still serves a call that behaves.
    let ok = server.called(id + 1, "misbehave__output", json!({"n": 3}));
    assert_eq!(ok["result"]["isError"], json!(false), "{ok}");
    assert!(server.hang_up().success());
    (baseline, last)
}

#[test]
fn a_skill_misbehaving_a_thousand_times_a_kind_gets_its_error_each_time_and_memory_stays_flat() {
    // The loop against a 20 ms clock, so a thousand of them take 20 s; the other kinds against
    // a clock they never meet, so a busy machine (2 cores, other tests running) cannot turn
    // one into a TIMEOUT, and every call is its own kind of failure.
    let limits = "memory_mb = 16\nmax_output_kb = 4\n";
    hammer(
        &format!("[skills.misbehave]\nlevel = \"auto\"\ntimeout_ms = 20\n{limits}"),
        &[("misbehave__spin", json!({}), Some("TIMEOUT"))],
    );
    hammer(
        &format!("[skills.misbehave]\nlevel = \"auto\"\ntimeout_ms = 5000\n{limits}"),
        &[
            ("misbehave__panic", json!({"message": "boom"}), Some("TRAP")),
            ("misbehave__alloc", json!({"n": 64}), Some("OUT_OF_MEMORY")),
            ("misbehave__output", json!({"n": 1 << 20}), Some("OUTPUT_TOO_LARGE")),
            ("misbehave__stdout", json!({"n": 256 << 10}), None),
        ],
    );
}

/// `reach call echo.echo {"a":1}` in `ws` with its own compile cache.
fn call_echo(ws: &Workspace, cache: &std::path::Path) -> std::process::Output {
    ws.reach(&["call", "echo.echo", "{\"a\":1}"])
        .env("REACH_CACHE_DIR", cache)
        .stdin(std::process::Stdio::null())
        .output()
        .expect("reach call")
}

#[test]
fn a_damaged_compile_cache_entry_is_compiled_again_and_the_call_still_answers() {
    let ws = Workspace::new("[skills.echo]\nlevel = \"auto\"\n", &[guests::TEST_SKILL_ECHO]);
    let cache = ws.path("cache");
    let out = call_echo(&ws, &cache);
    assert!(String::from_utf8_lossy(&out.stdout).contains("\"a\":1"), "{out:?}");
    let entry = std::fs::read_dir(&cache)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|x| x == "cwasm"))
        .expect("a compile-cache entry");
    let whole = std::fs::read(&entry).unwrap();
    let mut flipped = whole.clone();
    let middle = flipped.len() / 2;
    flipped[middle] ^= 0x5a;
    for (damage, bytes) in [
        ("truncated", whole[..whole.len() / 3].to_vec()),
        ("a byte changed", flipped),
        ("empty", Vec::new()),
    ] {
        std::fs::write(&entry, &bytes).unwrap();
        let out = call_echo(&ws, &cache);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(String::from_utf8_lossy(&out.stdout).contains("\"a\":1"), "{damage}: {out:?}");
        assert!(stderr.contains("compiling again"), "{damage}: says why it compiles: {stderr}");
        // Compiled again and stored whole: the next start loads it as before.
        assert_eq!(std::fs::read(&entry).unwrap().len(), whole.len(), "{damage}: entry rewritten");
        let out = call_echo(&ws, &cache);
        assert!(!String::from_utf8_lossy(&out.stderr).contains("compiling again"), "{out:?}");
    }
}

#[test]
fn a_skills_folder_that_cannot_be_read_is_a_clear_error_not_a_crash() {
    let ws = Workspace::new("[skills.echo]\nlevel = \"auto\"\n", &[guests::TEST_SKILL_ECHO]);
    std::fs::remove_dir_all(ws.path("skills")).unwrap();
    type Make = fn(&std::path::Path);
    let cases: [(&str, Make); 2] = [
        ("a file", |p| std::fs::write(p, "not a folder").unwrap()),
        // Root reads past permission bits, so unreadable is a link loop here.
        ("a link to itself", |p| std::os::unix::fs::symlink(p, p).unwrap()),
    ];
    for (what, make) in cases {
        let skills = ws.path("skills");
        let _ = std::fs::remove_file(&skills);
        make(&skills);
        for args in [&["skills", "list"][..], &["call", "echo.echo", "{}"][..]] {
            let out = ws.reach(args).stdin(std::process::Stdio::null()).output().unwrap();
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert!(
                !matches!(out.status.code(), Some(0) | Some(101) | None),
                "skills folder is {what}, reach {args:?}: {out:?}"
            );
            assert!(
                stderr.contains("skills folder ./skills") && !stderr.contains("panicked"),
                "skills folder is {what}, reach {args:?} says which folder: {stderr}"
            );
            // The reason once, not again as a cause.
            assert_eq!(stderr.matches("os error").count(), 1, "{stderr}");
        }
    }
}
