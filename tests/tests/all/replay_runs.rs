//! Record and replay: a run of a real page fetch replays offline byte for
//! byte (the page server gone, no model asked); a skill upgrade, a revoked
//! grant and a file written differently are each reported as the
//! divergence they cause; a credential the host added is never recorded.

use agent_reach::harness::playback::DivergenceKind;
use agent_reach::harness::{Quiet, RunConfig, RunReport};
use agent_reach::replay::{ReplayReport, replay};
use agent_reach::{AlwaysConfirm, Host};
use agent_reach_tests::openai::{Reply, ScriptedModel};
use agent_reach_tests::pages::{Pages, Route, fixture};
use agent_reach_tests::recorder::Recorder;
use agent_reach_tests::{Workspace, agent, echo_variant, guests};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::sync::Arc;

const PAGE: &str = "/tides.html";

/// Run `task` on `host` with the model's `replies`, logged in `runs`.
async fn record(host: Host, runs: &Path, replies: Vec<Reply>, task: &str) -> RunReport {
    let model = ScriptedModel::start(replies);
    let config = RunConfig { max_steps: 4, ..RunConfig::default() };
    let built = agent(host, model.client(), AlwaysConfirm, config, Some(runs.to_owned()));
    let report = built.build().expect("agent").run(task).await.expect("run");
    assert_eq!(model.unused(), 0, "every scripted reply was asked for");
    report
}

async fn replayed(host: Host, runs: &Path, run_id: &str) -> ReplayReport {
    replay(Arc::new(host), runs, run_id, false, Quiet).await.expect("replays")
}

/// The records of run `id`'s log with `event`.
fn records(runs: &Path, id: &str, event: &str) -> Vec<Value> {
    std::fs::read_to_string(runs.join(format!("{id}.jsonl")))
        .expect("log")
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).expect("json"))
        .filter(|r| r["event"] == event)
        .collect()
}

fn kinds(report: &ReplayReport) -> Vec<DivergenceKind> {
    report.divergences.iter().map(|d| d.kind).collect()
}

fn web_policy(grant: &str) -> String {
    format!("[skills.web]\nlevel = \"auto\"\nnet = [\"{grant}\"]\n")
}

fn fetch(url: &str) -> Reply {
    Reply::call("web__fetch", &json!({ "url": url }).to_string())
}

#[tokio::test]
async fn a_recorded_page_fetch_replays_offline_byte_for_byte() {
    let ws = Workspace::new();
    ws.install(guests::SKILL_WEB);
    let runs = ws.path(".reach/runs");
    let pages = Pages::start(vec![Route::file(PAGE, "article.html", "text/html; charset=utf-8")]);
    let policy = web_policy(&pages.grant());
    let url = pages.url(PAGE);
    let run = record(
        ws.host(&policy).await,
        &runs,
        vec![fetch(&url), Reply::text("The page is about tides.")],
        "Summarise the page.",
    )
    .await;
    assert_eq!(run.actions[0].outcome, "ok", "{}", run.summary());

    // What the skill read is on tape as it came: the page's own bytes.
    let dir = runs.join("recordings").join(&run.run_id);
    let tape = std::fs::read_to_string(dir.join("tape.jsonl")).expect("tape");
    let http: Value = tape
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .find(|e| e["kind"] == "http")
        .expect("an http entry");
    assert_eq!((http["method"].as_str(), http["url"].as_str()), (Some("GET"), Some(url.as_str())));
    let body = std::fs::read(dir.join("blobs").join(http["blob"].as_str().unwrap())).unwrap();
    assert_eq!(body, fixture("article.html"));

    // The page server is gone, and no model is asked: the replay still fetches the page.
    drop(pages);
    let found = replayed(ws.host(&policy).await, &runs, &run.run_id).await;
    assert!(found.matches(), "{:#?}", found.divergences);
    assert_eq!(found.report.actions[0].outcome, "ok");
    assert_eq!(found.report.answer.as_deref(), Some("The page is about tides."));
    let digest = |id: &str| records(&runs, id, "tool_call")[0]["result_digest"].clone();
    assert_eq!(digest(&found.replay_id), digest(&run.run_id), "the same result, byte for byte");
    // The replay is a run of its own, replayable in turn.
    assert_eq!(records(&runs, &found.replay_id, "model_request").len(), 2);
}

#[tokio::test]
async fn a_skill_upgrade_that_changes_its_output_is_a_divergence_with_a_diff() {
    let ws = Workspace::new();
    ws.install_bytes("echo.wasm", &echo_variant("echo", "1.0.0"));
    let runs = ws.path(".reach/runs");
    let policy = "[skills.echo]\nlevel = \"auto\"\n";
    let run = record(
        ws.host(policy).await,
        &runs,
        vec![Reply::call("echo__wait", r#"{"ms": 0}"#), Reply::text("It said echo 1.0.0.")],
        "Which echo answers?",
    )
    .await;
    assert_eq!(run.actions[0].outcome, "ok", "{}", run.summary());

    let same = replayed(ws.host(policy).await, &runs, &run.run_id).await;
    assert!(same.matches(), "before the upgrade: {:#?}", same.divergences);

    ws.install_bytes("echo.wasm", &echo_variant("echo", "2.0.0"));
    let found = replayed(ws.host(policy).await, &runs, &run.run_id).await;
    assert_eq!(kinds(&found), [DivergenceKind::Result], "{:#?}", found.divergences);
    let d = &found.divergences[0];
    assert_eq!((d.call.as_deref(), d.tool.as_deref(), d.step), (Some("#1"), Some("echo__wait"), 1));
    let diff = d.diff.as_deref().expect("a diff");
    assert!(diff.contains("-echo 1.0.0") && diff.contains("+echo 2.0.0"), "{diff}");
}

#[tokio::test]
async fn a_revoked_grant_is_reported_as_the_denial_it_causes() {
    let ws = Workspace::new();
    ws.install(guests::SKILL_WEB);
    let runs = ws.path(".reach/runs");
    let pages = Pages::start(vec![Route::file(PAGE, "article.html", "text/html; charset=utf-8")]);
    let url = pages.url(PAGE);
    let run = record(
        ws.host(&web_policy(&pages.grant())).await,
        &runs,
        vec![fetch(&url), Reply::text("The page is about tides.")],
        "Summarise the page.",
    )
    .await;
    assert_eq!(run.actions[0].outcome, "ok", "{}", run.summary());

    // The table no longer grants the page's host.
    let found = replayed(ws.host(&web_policy("127.0.0.9:9")).await, &runs, &run.run_id).await;
    // The denial first; what follows from it after (the harness questions
    // an answer no result supports: a request the run never made).
    assert_eq!(kinds(&found)[0], DivergenceKind::Denied, "{:#?}", found.divergences);
    let d = &found.divergences[0];
    assert_eq!((d.call.as_deref(), d.tool.as_deref()), (Some("#1"), Some("web__fetch")));
    assert!(d.detail.contains("not granted"), "{}", d.detail);
    // Nothing was sent: the page server saw the run's request only.
    assert_eq!(pages.received().len(), 1);

    // A tool the table now denies outright is a denial too.
    let deny = format!(
        "{}level = \"deny\"\n",
        web_policy(&pages.grant()).replace("level = \"auto\"\n", "")
    );
    let found = replayed(ws.host(&deny).await, &runs, &run.run_id).await;
    assert_eq!(kinds(&found)[0], DivergenceKind::Denied, "{:#?}", found.divergences);
    assert!(found.divergences[0].detail.contains("deny"), "{:#?}", found.divergences);
}

/// The files skill writing `notes/a.md` (with `content`), then answering.
fn write_note(path: &Path, content: &str) -> Vec<Reply> {
    vec![
        Reply::call("files__write", &json!({"path": path, "content": content}).to_string()),
        Reply::text("Written."),
    ]
}

#[tokio::test]
async fn a_file_written_differently_is_a_divergence_and_the_replay_leaves_the_folder_as_it_was() {
    let ws = Workspace::new();
    ws.install(guests::SKILL_FILES);
    ws.mkdir("notes");
    let runs = ws.path(".reach/runs");
    let note: PathBuf = ws.path("notes/a.md");
    let granted = "[skills.files]\nlevel = \"auto\"\nwrite = [\"./notes\"]\n";
    let run = record(ws.host(granted).await, &runs, write_note(&note, "tides\n"), "Note it.").await;
    assert_eq!(run.actions[0].outcome, "ok", "{}", run.summary());
    // Since the run, the person removed the note.
    std::fs::remove_file(&note).unwrap();

    // The replay writes it again, finds nothing diverged, and puts the folder back.
    let same = replayed(ws.host(granted).await, &runs, &run.run_id).await;
    assert!(same.matches(), "{:#?}", same.divergences);
    assert_eq!(same.restored, 1);
    assert!(!note.exists(), "the replay's write was put back");

    // Without the write grant the call fails, and the note is not written.
    let found =
        replayed(ws.host("[skills.files]\nlevel = \"auto\"\n").await, &runs, &run.run_id).await;
    let kinds = kinds(&found);
    assert!(kinds.contains(&DivergenceKind::Written), "{:#?}", found.divergences);
    let written = found.divergences.iter().find(|d| d.kind == DivergenceKind::Written).unwrap();
    assert!(
        written.detail.contains("a.md") && written.detail.contains("the replay did not change it"),
        "{}",
        written.detail
    );
    assert!(!note.exists());
}

#[tokio::test]
async fn a_credential_the_host_added_is_never_recorded_and_the_run_replays_without_it() {
    const SECRET: &str = "s3cr3t-tok-9f8e7d6c";
    let server = Recorder::start();
    let ws = Workspace::new();
    ws.install(guests::SKILL_HTTP_API);
    let secret = ws.write("secrets/token", &format!("{SECRET}\n"));
    let runs = ws.path(".reach/runs");
    let policy = format!(
        "[skills.http_api]\nlevel = \"auto\"\nnet = [\"{addr}\"]\n\n\
         [[skills.http_api.credentials]]\nhost = \"{addr}\"\nfile = \"{file}\"\n\
         header = \"Authorization\"\nprefix = \"Bearer \"\nallow_http = true\n",
        addr = server.addr,
        file = secret.display()
    );
    let request = json!({"method": "GET", "url": server.url("/v1/me")}).to_string();
    let run = record(
        ws.host(&policy).await,
        &runs,
        vec![Reply::call("http_api__request", &request), Reply::text("Done.")],
        "Who am I?",
    )
    .await;
    assert_eq!(run.actions[0].outcome, "ok", "{}", run.summary());
    assert!(server.heads()[0].contains(SECRET), "the server got the credential");

    // Nowhere in the recording: not the request, not the echo of it.
    let dir = runs.join("recordings").join(&run.run_id);
    for file in agent_reach_tests::files_under(&dir) {
        let bytes = std::fs::read(&file).unwrap();
        assert!(
            !bytes.windows(SECRET.len()).any(|w| w == SECRET.as_bytes()),
            "{} holds the secret",
            file.display()
        );
    }
    // And the replay needs neither the server nor the secret.
    drop(server);
    std::fs::remove_file(&secret).unwrap();
    let found = replayed(ws.host(&policy).await, &runs, &run.run_id).await;
    assert!(found.matches(), "{:#?}", found.divergences);
}

#[tokio::test]
async fn a_page_saved_under_the_time_it_was_fetched_replays_under_the_same_name() {
    let ws = Workspace::new();
    ws.install(guests::SKILL_WEB);
    ws.mkdir("saved");
    let runs = ws.path(".reach/runs");
    let pages = Pages::start(vec![Route::file(PAGE, "article.html", "text/html; charset=utf-8")]);
    let policy = format!("{}write = [\"./saved\"]\n", web_policy(&pages.grant()));
    let args = json!({"url": pages.url(PAGE), "output_dir": ws.path("saved")}).to_string();
    let run = record(
        ws.host(&policy).await,
        &runs,
        vec![Reply::call("web__to_markdown", &args), Reply::text("Saved.")],
        "Save the page.",
    )
    .await;
    assert_eq!(run.actions[0].outcome, "ok", "{}", run.summary());
    // The file is named after the second it was fetched: a later replay
    // reads the recorded clock, not the time now. And it starts where the
    // run did (the run's file set aside meanwhile), so it writes the same
    // file, not a second one beside it.
    std::thread::sleep(std::time::Duration::from_millis(1100));
    let saved = agent_reach_tests::files_under(&ws.path("saved"));
    assert_eq!(saved.len(), 1);
    let before = std::fs::read(&saved[0]).unwrap();
    let found = replayed(ws.host(&policy).await, &runs, &run.run_id).await;
    assert!(found.matches(), "{:#?}", found.divergences);
    // And the folder is as the replay found it: the run's file, alone.
    assert_eq!(agent_reach_tests::files_under(&ws.path("saved")), saved);
    assert_eq!(std::fs::read(&saved[0]).unwrap(), before);
}
