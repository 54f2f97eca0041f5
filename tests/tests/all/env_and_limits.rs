//! Environment isolation, resource limits and crash containment.

use agent_reach::ErrorCode;
use agent_reach_tests::guests;
use agent_reach_tests::{Workspace, call};
use serde_json::json;
use std::time::{Duration, Instant};

fn ws() -> Workspace {
    let ws = Workspace::new();
    ws.install(guests::TEST_SKILL_PROBE).install(guests::TEST_SKILL_MISBEHAVE);
    ws
}

#[tokio::test]
#[expect(unsafe_code, reason = "set_var: the names are unique to this test")]
async fn only_granted_environment_variables_are_visible() {
    // SAFETY: no other test reads or writes these variables.
    unsafe {
        std::env::set_var("REACH_TEST_VISIBLE", "visible-value");
        std::env::set_var("REACH_TEST_SECRET", "do-not-leak");
    }
    let ws = ws();
    let host = ws.host("[skills.probe]\nlevel = \"auto\"\nenv = [\"REACH_TEST_VISIBLE\"]\n").await;
    let all = call(&host, "probe.env_all", json!({})).await.expect("env_all");
    let all: serde_json::Value = serde_json::from_str(&all).unwrap();
    assert_eq!(all, json!({"REACH_TEST_VISIBLE": "visible-value"}));
    let secret = call(&host, "probe.env", json!({"name": "REACH_TEST_SECRET"})).await.expect("env");
    assert_eq!(secret, "<unset>");
    let path = call(&host, "probe.env", json!({"name": "PATH"})).await.expect("env");
    assert_eq!(path, "<unset>");
}

fn limits(extra: &str) -> String {
    format!("[defaults]\nlevel = \"auto\"\n\n[skills.misbehave]\n{extra}\n")
}

#[tokio::test]
async fn an_infinite_loop_stops_at_the_time_limit() {
    let ws = ws();
    let host = ws.host(&limits("timeout_ms = 300")).await;
    let started = Instant::now();
    let err = call(&host, "misbehave.spin", json!({})).await.unwrap_err();
    assert_eq!(err.code, ErrorCode::Timeout, "{err}");
    assert!(err.message.contains("300 ms"), "{err}");
    // Loose bound: the point is that it stops, not how fast.
    assert!(started.elapsed() < Duration::from_secs(5), "took {:?}", started.elapsed());
}

#[tokio::test]
async fn blocking_in_the_host_stops_at_the_time_limit() {
    let ws = ws();
    let host = ws.host(&limits("timeout_ms = 200")).await;
    let started = Instant::now();
    let err = call(&host, "misbehave.sleep", json!({"n": 60_000})).await.unwrap_err();
    assert_eq!(err.code, ErrorCode::Timeout, "{err}");
    assert!(started.elapsed() < Duration::from_secs(5), "took {:?}", started.elapsed());
}

#[tokio::test]
async fn a_memory_bomb_becomes_out_of_memory() {
    let ws = ws();
    let host = ws.host(&limits("memory_mb = 32")).await;
    let err = call(&host, "misbehave.alloc", json!({"n": 512})).await.unwrap_err();
    assert_eq!(err.code, ErrorCode::OutOfMemory, "{err}");
    assert!(err.message.contains("32 MiB"), "{err}");
    // Within the limit the same tool works.
    let ok = call(&host, "misbehave.alloc", json!({"n": 4})).await.expect("small alloc");
    assert_eq!(ok, "allocated 4 MiB");
}

#[tokio::test]
async fn huge_output_becomes_output_too_large() {
    let ws = ws();
    let host = ws.host(&limits("max_output_kb = 64")).await;
    let err = call(&host, "misbehave.output", json!({"n": 1_000_000})).await.unwrap_err();
    assert_eq!(err.code, ErrorCode::OutputTooLarge, "{err}");
    assert!(err.message.contains("1000000 bytes"), "{err}");
    let ok = call(&host, "misbehave.output", json!({"n": 1000})).await.expect("small output");
    assert_eq!(ok.len(), 1000);
}

#[tokio::test]
async fn a_panic_becomes_a_trap_with_its_message() {
    let ws = ws();
    let host = ws.host(&limits("")).await;
    let err =
        call(&host, "misbehave.panic", json!({"message": "boom at line 7"})).await.unwrap_err();
    assert_eq!(err.code, ErrorCode::Trap, "{err}");
    assert!(err.message.contains("boom at line 7"), "{err}");
}

#[tokio::test]
async fn a_flood_on_stdout_and_stderr_is_capped_not_fatal() {
    let ws = ws();
    let host = ws.host(&limits("")).await;
    let out = call(&host, "misbehave.stdout", json!({"n": 8 << 20})).await.expect("stdout flood");
    assert_eq!(out, "printed");
}

#[tokio::test]
async fn the_host_keeps_working_after_every_kind_of_failure() {
    let ws = ws();
    let host = ws.host(&limits("timeout_ms = 300\nmemory_mb = 32")).await;
    for (tool, args) in [
        ("misbehave.spin", json!({})),
        ("misbehave.alloc", json!({"n": 100})),
        ("misbehave.panic", json!({"message": "x"})),
        ("misbehave.fail", json!({"message": "nope"})),
    ] {
        call(&host, tool, args).await.unwrap_err();
    }
    let ok = call(&host, "misbehave.output", json!({"n": 3})).await.expect("still works");
    assert_eq!(ok, "xxx");
}

#[tokio::test]
async fn nothing_leaks_between_calls() {
    let ws = ws();
    let host = ws.host(&limits("memory_mb = 64")).await;
    // Each call allocates 40 MiB and keeps it; a reused instance would run out by the second call.
    for _ in 0..3 {
        call(&host, "misbehave.alloc", json!({"n": 40})).await.expect("fresh instance each call");
    }
}

#[tokio::test]
async fn an_error_message_obeys_max_output_kb_like_a_result() {
    // Regression: results were held to max_output_kb, but a skill's error
    // message went to the model and the log at up to 4 KiB whatever the limit.
    let ws = ws();
    let host = ws.host(&limits("max_output_kb = 1")).await;
    let err =
        call(&host, "misbehave.fail", json!({"message": "e".repeat(3000)})).await.unwrap_err();
    assert_eq!(err.code, ErrorCode::Failed);
    assert!(err.message.len() <= 1024, "{} bytes", err.message.len());
    assert!(
        err.message.contains("[cut: the message is") && err.message.contains("max_output_kb = 1"),
        "{}",
        err.message
    );
}
