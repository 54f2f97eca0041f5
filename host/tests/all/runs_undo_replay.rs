//! `reach runs diff`, `undo` and `replay` on the command line, on a run of
//! `reach run` that wrote a file: the diff, a conflict listed with what
//! `--force` would change, a replay that matches (exit 0) and one after a
//! table change that does not (exit 1, the denial named).

use crate::support::{Server, answer, call, reach};
use agent_reach_tests::guests;
use serde_json::{Value, json};
use std::process::Output;

fn text(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

const GRANTED: &str = "[skills.files]\nlevel = \"auto\"\nwrite = [\"./notes\"]\n";

#[test]
fn a_run_that_wrote_a_file_is_diffed_undone_and_replayed() {
    let dir = tempfile::tempdir().expect("dir");
    let root = dir.path();
    std::fs::create_dir_all(root.join("skills")).expect("mkdir");
    std::fs::create_dir_all(root.join("notes")).expect("mkdir");
    std::fs::write(root.join("notes/plan.md"), "# Plan\n- tides\n").expect("write");
    std::fs::copy(guests::SKILL_FILES.path(), root.join("skills/files.wasm")).expect("copy");
    std::fs::write(root.join("reach.toml"), GRANTED).expect("table");
    let plan = root.join("notes/plan.md");

    let server = Server::start(vec![
        call("files__write", json!({"path": plan, "content": "# Plan\n- tides\n- currents\n"})),
        answer("Added currents to the plan."),
    ]);
    let base = format!("{}/v1", server.base);
    let out = reach(
        root,
        &["run", "Add currents to the plan", "--json", "--base-url", &base, "--model", "m"],
    );
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let run: Value = serde_json::from_slice(&out.stdout).expect("report");
    let id = run["run_id"].as_str().expect("run id").to_owned();

    // The diff: one line added.
    let out = reach(root, &["runs", "diff", &id]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert!(text(&out).contains("+- currents"), "{}", text(&out));

    // The replay: the same call, the same result; the file is left as it was.
    let out = reach(root, &["runs", "replay", &id]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert!(text(&out).contains("no divergence"), "{}", text(&out));
    assert_eq!(std::fs::read_to_string(&plan).unwrap(), "# Plan\n- tides\n- currents\n");

    // After the table stops granting the folder, the replay diverges, and says how.
    std::fs::write(root.join("reach.toml"), "[skills.files]\nlevel = \"auto\"\n").expect("table");
    let out = reach(root, &["runs", "replay", &id, "--json"]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let found: Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(found["run_id"], id.as_str());
    assert_eq!(found["matches"], false);
    let kinds: Vec<&str> = found["divergences"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["kind"].as_str().unwrap())
        .collect();
    assert!(kinds.contains(&"written"), "{found:#}");
    assert!(kinds.iter().any(|k| *k == "denied" || *k == "result"), "{found:#}");
    let out = reach(root, &["runs", "replay", &id]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out).contains("WRITTEN"), "{}", text(&out));
    std::fs::write(root.join("reach.toml"), GRANTED).expect("table");

    // Someone edits the file after the run: undo leaves it, showing what --force would do.
    std::fs::write(&plan, "# Plan\n- tides\n- currents\n- waves\n").expect("edit");
    let out = reach(root, &["runs", "undo", &id]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let said = text(&out);
    assert!(said.contains("SKIPPED") && said.contains("-- waves"), "{said}");
    assert!(said.contains("-- currents"), "--force would remove the run's line too: {said}");
    let out = reach(root, &["runs", "undo", &id, "--force"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert_eq!(std::fs::read_to_string(&plan).unwrap(), "# Plan\n- tides\n");
}
