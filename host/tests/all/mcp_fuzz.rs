//! `reach mcp`'s messages fuzzed against the running server on stdio:
//! JSON-RPC messages of every method it serves, mutated in structure
//! (values of another type, keys dropped, deep nesting, huge strings) and
//! in bytes (cut, flipped, doubled). After every 25 of them a `ping` must
//! be answered within the minute, and at the end a real call must work and
//! the process must still be running. (A client may break its own session
//! — `initialize` again with a version of its own — and then gets errors;
//! it is set right by a proper `initialize`.) One batch in `cargo test`;
//! `REACH_FUZZ_SECONDS=N` (`just fuzz`) runs for N seconds and prints the
//! count; `REACH_FUZZ_SEED` replays a run.

use crate::support::mcp::Workspace;
use crate::support::stdio::StdioServer as Server;
use agent_reach_tests::guests;
use serde_json::{Value, json};
use std::time::{Duration, Instant};

/// Messages in one batch (`cargo test`).
const BATCH: u64 = 300;
/// Ping ids, apart from anything the seeds use.
const PING: u64 = 1 << 40;

fn seeds() -> Vec<Value> {
    let call = |name: &str, arguments: Value| {
        json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
               "params": {"name": name, "arguments": arguments}})
    };
    vec![
        json!({"jsonrpc": "2.0", "id": 3, "method": "tools/list", "params": {"cursor": "x"}}),
        call("echo__echo", json!({"a": 1, "b": [true, null, "s"]})),
        call("echo__wait", json!({"ms": 5})),
        call("nope__nothing", json!({})),
        json!({"jsonrpc": "2.0", "id": 4, "method": "ping"}),
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
               "params": {"requestId": 7, "reason": "x"}}),
        json!({"jsonrpc": "2.0", "id": 5, "method": "resources/list"}),
        json!({"jsonrpc": "2.0", "id": 6, "method": "resources/read",
               "params": {"uri": "skill://echo/SKILL.md"}}),
        json!({"jsonrpc": "2.0", "id": 8, "method": "prompts/list"}),
        json!({"jsonrpc": "2.0", "id": 9, "method": "prompts/get",
               "params": {"name": "echo", "arguments": {"k": "v"}}}),
        json!({"jsonrpc": "2.0", "id": 10, "method": "initialize",
               "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                          "clientInfo": {"name": "again", "version": "1"}}}),
        json!({"jsonrpc": "2.0", "id": 11, "result": {"action": "accept"}}),
        json!({"jsonrpc": "2.0", "id": 12, "method": "logging/setLevel", "params": {"level": "debug"}}),
        json!([{"jsonrpc": "2.0", "id": 13, "method": "ping"}]),
    ]
}

/// A value of any type, at most `depth` deep.
fn any_value(rng: &mut fastrand::Rng, depth: u32) -> Value {
    match rng.u8(0..10) {
        0 => Value::Null,
        1 => json!(rng.bool()),
        2 => json!(rng.i64(..)),
        3 => json!(rng.f64() * 1e300),
        4 => json!("x".repeat(rng.usize(0..(1 << 16)))),
        5 => json!(["\u{0}", "\u{202e}", "../../etc/passwd", "__proto__"][rng.usize(0..4)]),
        6 if depth > 0 => {
            Value::Array((0..rng.usize(0..4)).map(|_| any_value(rng, depth - 1)).collect())
        }
        7 if depth > 0 => {
            let mut map = serde_json::Map::new();
            for _ in 0..rng.usize(0..4) {
                map.insert(
                    ["name", "arguments", "id", "uri", "x"][rng.usize(0..5)].into(),
                    any_value(rng, depth - 1),
                );
            }
            Value::Object(map)
        }
        8 => {
            // Deep nesting: a stack-hungry parser's end.
            let n = rng.usize(1..2000);
            serde_json::from_str(&format!("{}{}", "[".repeat(n.min(120)), "]".repeat(n.min(120))))
                .unwrap()
        }
        _ => json!(rng.u64(..)),
    }
}

/// Change one place in `value`.
fn mutate_value(rng: &mut fastrand::Rng, value: &mut Value) {
    match value {
        Value::Object(map) if !map.is_empty() && rng.u8(0..3) > 0 => {
            let keys: Vec<String> = map.keys().cloned().collect();
            let key = &keys[rng.usize(0..keys.len())];
            match rng.u8(0..4) {
                0 => {
                    map.remove(key);
                }
                1 => mutate_value(rng, map.get_mut(key).unwrap()),
                _ => *map.get_mut(key).unwrap() = any_value(rng, 3),
            }
        }
        Value::Array(items) if !items.is_empty() && rng.bool() => {
            let i = rng.usize(0..items.len());
            mutate_value(rng, &mut items[i]);
        }
        _ => *value = any_value(rng, 3),
    }
}

/// One line to send.
fn message(rng: &mut fastrand::Rng, seeds: &[Value]) -> String {
    let mut value = seeds[rng.usize(0..seeds.len())].clone();
    for _ in 0..rng.usize(0..4) {
        mutate_value(rng, &mut value);
    }
    let mut bytes = value.to_string().into_bytes();
    if rng.u8(0..4) == 0 && !bytes.is_empty() {
        let at = rng.usize(0..bytes.len());
        match rng.u8(0..3) {
            0 => bytes.truncate(at),
            1 => bytes[at] ^= rng.u8(1..),
            _ => {
                let span = bytes[at..].to_vec();
                bytes.splice(at..at, span);
            }
        }
    }
    // One line: the transport's framing is not what is fuzzed here.
    String::from_utf8_lossy(&bytes).replace(['\n', '\r'], " ")
}

#[test]
fn reach_mcp_survives_hostile_messages_and_keeps_answering() {
    let seconds: u64 =
        std::env::var("REACH_FUZZ_SECONDS").ok().and_then(|s| s.parse().ok()).unwrap_or(0);
    let seed: u64 = std::env::var("REACH_FUZZ_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| fastrand::u64(..));
    let ws = Workspace::new(
        "[skills.echo]\nlevel = \"auto\"\ntimeout_ms = 2000\n",
        &[guests::TEST_SKILL_ECHO],
    );
    let mut server = Server::start_with(&ws, &["mcp", "--no-watch"], &[]);
    let mut rng = fastrand::Rng::with_seed(seed);
    let seeds = seeds();
    let started = Instant::now();
    let deadline = started + Duration::from_secs(seconds);
    let mut sent: u64 = 0;
    // The messages since the last ping, for the report.
    let mut recent: Vec<String> = Vec::new();
    while sent < BATCH || Instant::now() < deadline {
        let line = message(&mut rng, &seeds);
        server.send_line(&line);
        recent.push(line.chars().take(300).collect());
        sent += 1;
        if sent.is_multiple_of(25) {
            let id = PING + sent;
            server.send(json!({"jsonrpc": "2.0", "id": id, "method": "ping"}));
            let answer = server.response(id);
            // Answered, with a result or an error: a client that broke its own
            // session (an `initialize` again, with a version of its making)
            // gets errors, and nothing else is harmed.
            assert!(
                answer.get("result").is_some() || answer["error"]["code"].is_i64(),
                "seed {seed}: the ping after {sent} messages was not answered: {answer}\n\
                 after:\n{}",
                recent.join("\n")
            );
            assert!(
                server.is_running(),
                "seed {seed}: reach mcp exited after:\n{}",
                recent.join("\n")
            );
            recent.clear();
        }
    }
    // The session set right again, a real call works.
    let init = json!({
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "line-test", "version": "1"}
    });
    server.send(json!({"jsonrpc": "2.0", "id": PING - 2, "method": "initialize", "params": init}));
    server.response(PING - 2);
    let answer = server.called(PING - 1, "echo__echo", json!({"still": "here"}));
    assert_eq!(answer["result"]["structuredContent"], json!({"still": "here"}), "seed {seed}");
    assert!(server.is_running(), "seed {seed}");
    if seconds > 0 {
        eprintln!(
            "fuzz MCP messages: {sent} messages in {:.0} s (seed {seed}), the server answered throughout",
            started.elapsed().as_secs_f64()
        );
    }
}
