//! `reach run` when the model server fails in the middle of a run: it dies
//! mid-request, cuts its answer short, answers garbage, answers past the
//! timeout or keeps answering 429/503. Each is retried where a retry can
//! help, then the run stops with `model_error` saying what happened; the
//! file the run's tool call wrote is whole, and the audit log is whole,
//! sealed and verifies.

use crate::support::{Reply, Server, call, reach, status};
use agent_reach_tests::guests;
use serde_json::{Value, json};
use std::time::Duration;

const TABLE: &str = "[model]\ntimeout_s = 1\n\n[skills.files]\nlevel = \"auto\"\n\
                     read = [\"./notes\"]\nwrite = [\"./notes\"]\n";

/// The note the first step writes: big enough that a half-written copy would show.
fn note() -> String {
    "a line of the note\n".repeat(20_000)
}

fn folder() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("skills")).unwrap();
    std::fs::create_dir_all(dir.path().join("notes")).unwrap();
    std::fs::copy(guests::SKILL_FILES.path(), dir.path().join("skills/files.wasm")).unwrap();
    std::fs::write(dir.path().join("reach.toml"), TABLE).unwrap();
    dir
}

/// Four of the same failure: the first request and its three retries.
fn four(reply: impl Fn() -> Reply) -> Vec<Reply> {
    (0..4).map(|_| reply()).collect()
}

#[test]
fn a_model_server_failing_mid_run_stops_it_clearly_with_the_file_and_the_log_whole() {
    let garbage = || Reply::Http(200, Vec::new(), "<html>502 Bad Gateway</html>".into());
    let cases: Vec<(&str, Vec<Reply>, &str)> = vec![
        ("dies mid-request", four(|| Reply::Silent(Duration::ZERO)), "after 4 attempt"),
        (
            "cuts its answer short",
            four(|| {
                let head = "{\"id\": \"chatcmpl-1\", \"choices\": [{\"message\": ";
                Reply::Http(200, vec![("Content-Length", "4000".into())], head.into())
            }),
            "after 4 attempt",
        ),
        ("answers garbage", vec![garbage()], "not a chat completion"),
        (
            "answers past the timeout",
            four(|| Reply::Silent(Duration::from_secs(3))),
            "after 4 attempt",
        ),
        ("keeps answering 503", four(|| status(503, "{\"error\":\"overloaded\"}")), "503"),
        (
            "keeps answering 429",
            four(|| {
                Reply::Http(
                    429,
                    vec![("Retry-After", "0".into())],
                    "{\"error\":\"slow down\"}".into(),
                )
            }),
            "429",
        ),
    ];
    for (what, failure, says) in cases {
        let dir = folder();
        let notes = dir.path().join("notes");
        let target = notes.join("note.txt");
        let mut script = vec![call("files__write", json!({"path": target, "content": note()}))];
        script.extend(failure);
        let server = Server::start(script);
        let base = format!("{}/v1", server.base);
        let out = reach(
            dir.path(),
            &["run", "Write the note", "--json", "--base-url", &base, "--model", "scripted"],
        );
        let report: Value = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("{what}: stdout is one JSON report ({e}): {out:?}"));
        assert_eq!(out.status.code(), Some(1), "{what}: {out:?}");
        assert_eq!(report["stop"]["reason"], "model_error", "{what}: {report:#}");
        let detail = report["stop"]["detail"].as_str().unwrap_or_default();
        assert!(detail.contains(says), "{what}: the stop says {says:?}: {detail}");
        // The step before the failure ran and its file is whole.
        assert_eq!(report["actions"][0]["outcome"], "ok", "{what}: {report:#}");
        assert_eq!(std::fs::read_to_string(&target).unwrap(), note(), "{what}");
        // The log reads back whole, sealed, and verifies.
        let verify = reach(dir.path(), &["runs", "verify", "--all", "--json"]);
        let verdicts: Value = serde_json::from_slice(&verify.stdout).expect("verify JSON");
        assert_eq!(verify.status.code(), Some(0), "{what}: {verdicts:#}");
        assert_eq!(verdicts["runs"][0]["verdict"], "intact", "{what}: {verdicts:#}");
        let shown = reach(dir.path(), &["runs", "show", report["run_id"].as_str().unwrap()]);
        assert_eq!(shown.status.code(), Some(0), "{what}: {shown:?}");
    }
}
