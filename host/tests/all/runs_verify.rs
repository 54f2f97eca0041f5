//! `reach runs verify` and `reach runs pubkey` on the logs `reach call`
//! and `reach run` write: intact as written, a changed byte caught with the
//! record named, another key refused.

use crate::support::{Server, answer, call, reach};
use agent_reach_tests::guests;
use serde_json::{Value, json};
use std::path::Path;

fn verify(dir: &Path, args: &[&str]) -> (Option<i32>, Value) {
    let mut all = vec!["runs", "verify", "--json"];
    all.extend_from_slice(args);
    let out = reach(dir, &all);
    let report = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("one JSON object ({e}): {out:?}"));
    (out.status.code(), report)
}

#[test]
fn the_logs_of_call_and_run_verify_and_a_changed_byte_is_named() {
    let dir = tempfile::tempdir().expect("dir");
    let root = dir.path();
    std::fs::create_dir_all(root.join("skills")).expect("mkdir");
    std::fs::create_dir_all(root.join("docs")).expect("mkdir");
    std::fs::write(root.join("docs/a.txt"), "alpha\n").expect("write");
    std::fs::copy(guests::SKILL_FILES.path(), root.join("skills/files.wasm")).expect("copy");
    std::fs::write(
        root.join("reach.toml"),
        "[skills.files]\nlevel = \"auto\"\nread = [\"./docs\"]\n",
    )
    .expect("table");

    let out = reach(root, &["call", "files.read", r#"{"path": "docs/a.txt"}"#]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let server = Server::start(vec![
        call("files__read", json!({"path": root.join("docs/a.txt")})),
        answer("It says alpha."),
    ]);
    let base = format!("{}/v1", server.base);
    let out = reach(root, &["run", "Read a.txt", "--json", "--base-url", &base, "--model", "m"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let run: Value = serde_json::from_slice(&out.stdout).expect("report");
    let run_id = run["run_id"].as_str().expect("run id").to_owned();

    let (code, report) = verify(root, &["--all"]);
    assert_eq!(code, Some(0), "{report:#}");
    let runs = report["runs"].as_array().expect("runs");
    assert_eq!(runs.len(), 2);
    assert!(runs.iter().all(|r| r["verdict"] == "intact"), "{report:#}");
    // The key `reach runs pubkey` prints is the one that signed them.
    let pubkey = reach(root, &["runs", "pubkey"]);
    let pubkey = String::from_utf8(pubkey.stdout).expect("utf-8").trim().to_owned();
    assert_eq!(report["key"], pubkey.as_str());
    assert!(runs.iter().all(|r| r["key"] == pubkey.as_str()));

    // One byte of the run's third record changed.
    let log = root.join(format!(".reach/runs/{run_id}.jsonl"));
    let text = std::fs::read_to_string(&log).expect("log");
    let mut lines: Vec<&str> = text.split_inclusive('\n').collect();
    let changed = lines[2].replacen("\"time\":\"2", "\"time\":\"3", 1);
    assert_ne!(changed, lines[2]);
    lines[2] = &changed;
    std::fs::write(&log, lines.concat()).expect("write");
    let (code, report) = verify(root, &[&run_id[..run_id.len() - 2]]);
    assert_eq!(code, Some(1), "{report:#}");
    let run = &report["runs"][0];
    assert_eq!(run["verdict"], "tampered");
    assert_eq!(
        (&run["problem"]["kind"], &run["problem"]["record"]),
        (&json!("changed"), &json!(3))
    );

    // Checked against another host's key: the head is not its.
    let other = tempfile::tempdir().expect("dir");
    let other_key = reach(other.path(), &["runs", "pubkey"]);
    let other_key = String::from_utf8(other_key.stdout).expect("utf-8").trim().to_owned();
    std::fs::write(other.path().join("host.pub"), &other_key).expect("write");
    let key_file = other.path().join("host.pub");
    let (code, report) = verify(root, &["--all", "--key", key_file.to_str().expect("utf-8")]);
    assert_eq!(code, Some(1), "{report:#}");
    assert!(
        report["runs"]
            .as_array()
            .expect("runs")
            .iter()
            .any(|r| r["problem"]["kind"] == "wrong_key")
    );
}
