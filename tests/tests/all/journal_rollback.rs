//! Journaled writes in the real sandbox: a call that fails — an error, a
//! trap, a timeout, a result past its limit — leaves nothing it wrote; one
//! that succeeds is journaled and can be undone.

use agent_reach::ErrorCode;
use agent_reach::journal::{self, Budget, CallScope, RunJournal};
use agent_reach_tests::guests;
use agent_reach_tests::{Workspace, call};
use serde_json::json;
use std::path::Path;

fn seed(dir: &Path) {
    std::fs::create_dir_all(dir).expect("mkdir");
    std::fs::write(dir.join("a.txt"), "original").expect("write");
    std::fs::write(dir.join("gone.txt"), "to be deleted").expect("write");
    std::fs::write(dir.join("old.txt"), "to be moved").expect("write");
}

/// Every file under `dir`, with its content, sorted.
fn tree(dir: &Path) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_owned()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).expect("read_dir") {
            let path = entry.expect("entry").path();
            let rel = path.strip_prefix(dir).expect("inside").display().to_string();
            if path.is_dir() {
                out.push((rel + "/", String::new()));
                stack.push(path);
            } else {
                out.push((rel, std::fs::read_to_string(&path).expect("read")));
            }
        }
    }
    out.sort();
    out
}

#[tokio::test]
async fn a_failed_call_leaves_nothing_it_wrote_whatever_the_way_it_failed() {
    let ws = Workspace::new();
    ws.install(guests::TEST_SKILL_MISBEHAVE);
    let notes = ws.path("notes");
    seed(&notes);
    let before = tree(&notes);
    let host = ws
        .host(&format!(
            "[skills.misbehave]\nlevel = \"auto\"\nwrite = [\"{}\"]\ntimeout_ms = 1500\n",
            notes.display()
        ))
        .await;
    let run = RunJournal::new(&ws.path(".reach/runs/journal"), "r1", Budget::default());
    let folder = notes.display().to_string();
    for (n, (then, code)) in [
        ("fail", ErrorCode::Failed),
        ("panic", ErrorCode::Trap),
        ("spin", ErrorCode::Timeout),
        ("output", ErrorCode::OutputTooLarge),
    ]
    .into_iter()
    .enumerate()
    {
        let scope = CallScope { run: run.clone(), call: n as u64 + 1, step: 1, worker: None };
        let args = json!({"folder": folder, "then": then});
        let err =
            journal::scoped(scope, call(&host, "misbehave.scribble", args)).await.expect_err(then);
        assert_eq!(err.code, code, "{then}: {err}");
        assert!(err.message.contains("were rolled back"), "{then}: the error says so: {err}");
        assert_eq!(tree(&notes), before, "{then}: nothing it wrote is left");
    }
    // Without a failure the changes stand, and undo puts everything back.
    let scope = CallScope { run: run.clone(), call: 5, step: 2, worker: None };
    let args = json!({"folder": folder, "then": "ok"});
    journal::scoped(scope, call(&host, "misbehave.scribble", args)).await.expect("ok");
    assert_ne!(tree(&notes), before);
    let root = ws.path(".reach/runs/journal");
    let changed = journal::changes(&root, "r1", 0).expect("changes");
    assert_eq!(
        changed.len(),
        6,
        "a.txt, new, new/b.txt, gone.txt, old.txt, moved.txt: {changed:#?}"
    );
    let undo = RunJournal::new(&root, "u1", Budget::default()).call(1, 0, "undo");
    let report = journal::undo(&root, "r1", 0, false, undo).expect("undo");
    assert!(report.conflicts.is_empty() && report.failed.is_empty(), "{report:?}");
    assert_eq!(tree(&notes), before, "undone");
}

#[tokio::test]
async fn a_change_past_the_journal_budget_is_refused_with_the_budget_named() {
    let ws = Workspace::new();
    ws.install(guests::TEST_SKILL_MISBEHAVE);
    let notes = ws.path("notes");
    seed(&notes);
    std::fs::write(notes.join("a.txt"), "x".repeat(4096)).expect("write");
    let host = ws
        .host(&format!("[skills.misbehave]\nlevel = \"auto\"\nwrite = [\"{}\"]\n", notes.display()))
        .await;
    let budget = Budget { max_bytes: 1024, ..Budget::default() };
    let run = RunJournal::new(&ws.path(".reach/runs/journal"), "r1", budget);
    let scope = CallScope { run, call: 1, step: 1, worker: None };
    let args = json!({"folder": notes.display().to_string(), "then": "ok"});
    let err = journal::scoped(scope, call(&host, "misbehave.scribble", args)).await.unwrap_err();
    assert!(err.message.contains("journal budget of 1024 bytes"), "{err}");
    assert_eq!(std::fs::read_to_string(notes.join("a.txt")).expect("read"), "x".repeat(4096));
}

#[tokio::test]
async fn a_best_effort_change_past_the_budget_is_named_not_undoable_in_the_run_report() {
    use agent_reach::AlwaysConfirm;
    use agent_reach::harness::RunConfig;
    use agent_reach_tests::openai::{Reply, ScriptedModel};
    let ws = Workspace::new();
    ws.install(guests::SKILL_FILES);
    let big = ws.path("notes/big.txt");
    std::fs::create_dir_all(big.parent().unwrap()).expect("mkdir");
    std::fs::write(&big, "x".repeat(2 << 20)).expect("write");
    let host = ws
        .host(
            "[skills.files]\nlevel = \"auto\"\nwrite = [\"./notes\"]\n\n\
             [journal]\nmax_mb = 1\nundo = \"best-effort\"\n",
        )
        .await;
    let model = ScriptedModel::start(vec![
        Reply::call("files__write", &json!({"path": big, "content": "small\n"}).to_string()),
        Reply::text("Replaced."),
    ]);
    let runs = ws.path(".reach/runs");
    let built = agent_reach_tests::agent(
        host,
        model.client(),
        AlwaysConfirm,
        RunConfig::default(),
        Some(runs),
    );
    let report = built.build().expect("agent").run("Replace big.txt").await.expect("run");
    assert_eq!(
        report.actions[0].outcome,
        "ok",
        "best-effort lets it through: {}",
        report.summary()
    );
    assert_eq!(std::fs::read_to_string(&big).expect("read"), "small\n");
    let named: Vec<String> = report
        .not_undoable
        .iter()
        .map(|p| p.file_name().unwrap().to_string_lossy().into())
        .collect();
    assert_eq!(named, ["big.txt"]);
    assert!(report.summary().contains("Not undoable") && report.summary().contains("big.txt"));
}
