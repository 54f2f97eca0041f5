//! One real task with a real model: "save this page as Markdown", against the
//! OpenAI-compatible endpoint in `REACH_E2E_BASE_URL` (`REACH_E2E_MODEL` picks
//! the model, `OPENAI_API_KEY` is sent if set). Ignored by a plain
//! `cargo test`, which has no model: `just e2e` (part of `just test` and CI)
//! starts the local model, sets the variables and runs it with `--ignored`.
//!
//! Assertions are structural — the right tool, parseable arguments, the
//! file on disk with the article's heading — never the model's wording.

use agent_reach::AlwaysConfirm;
use agent_reach::harness::RunConfig;
use agent_reach::model::{ApiKey, OpenAiClient, OpenAiConfig};
use agent_reach_tests::Workspace;
use agent_reach_tests::guests;
use agent_reach_tests::pages::{Pages, Route};
use std::time::Duration;

/// A page served on 127.0.0.1, a workspace with the web and files skills
/// and a `notes/` folder, and the table: `web` may fetch the page and write
/// into `notes/`, `files` may read it.
fn article_site() -> (Pages, Workspace, String) {
    let site = Pages::start(vec![Route::file(
        "/article.html",
        "article.html",
        "text/html; charset=utf-8",
    )]);
    let ws = Workspace::new();
    ws.install(guests::SKILL_WEB).install(guests::SKILL_FILES);
    ws.mkdir("notes");
    let policy = format!(
        "[skills.web]\n\
         level = \"auto\"\n\
         net = [\"{}\"]\n\
         write = [\"{notes}\"]\n\n\
         [skills.files]\n\
         level = \"auto\"\n\
         read = [\"{notes}\"]\n",
        site.grant(),
        notes = ws.path("notes").display(),
    );
    (site, ws, policy)
}

/// The model under test, at temperature 0; `recipe` is the `just` recipe
/// that starts the local model for this test.
fn real_model(recipe: &str) -> OpenAiClient {
    let base_url = std::env::var("REACH_E2E_BASE_URL").unwrap_or_else(|_| {
        panic!(
            "REACH_E2E_BASE_URL is not set: run `just {recipe}` (starts the local model), or point \
             it at an OpenAI-compatible endpoint"
        )
    });
    let model_name =
        std::env::var("REACH_E2E_MODEL").unwrap_or_else(|_| "qwen2.5-coder-1.5b-instruct".into());
    let mut config = OpenAiConfig::new(base_url, model_name);
    config.api_key =
        std::env::var("OPENAI_API_KEY").ok().filter(|k| !k.is_empty()).map(ApiKey::from);
    config.temperature = Some(0.0);
    config.timeout = Duration::from_secs(600);
    config.max_tokens = Some(1024);
    OpenAiClient::new(config).expect("client")
}

#[tokio::test]
#[ignore = "needs a model: run `just e2e`, or set REACH_E2E_BASE_URL and pass --ignored"]
async fn a_real_model_saves_a_page_as_markdown() {
    let (site, ws, policy) = article_site();
    // As if `reach` ran in the workspace: a relative `notes` means its notes/.
    let host = ws.host_here(&policy).await;
    let model = real_model("e2e");
    let run_config = RunConfig { max_steps: 4, ..RunConfig::default() };
    let agent = agent_reach_tests::agent(
        host,
        model,
        AlwaysConfirm,
        run_config,
        Some(ws.path(".reach/runs")),
    );
    let task = format!("Save the web page {} as Markdown.", site.url("/article.html"));
    let report = agent_reach_tests::run(agent, "e2e", &task).await;
    eprintln!("{}", report.summary());

    let call = report
        .actions
        .iter()
        .find(|a| a.tool == "web__to_markdown")
        .expect("the model called web__to_markdown");
    assert_eq!(call.outcome, "ok", "{report:?}");
    assert!(
        call.arguments["url"].as_str().is_some_and(|u| u.ends_with("/article.html")),
        "{:?}",
        call.arguments
    );
    let saved: Vec<_> = std::fs::read_dir(ws.path("notes"))
        .unwrap()
        .filter_map(Result::ok)
        .map(|e| e.path())
        .collect();
    assert_eq!(saved.len(), 1, "{saved:?}");
    let text = std::fs::read_to_string(&saved[0]).unwrap();
    assert!(
        text.contains("\n# Deep-Sea Currents Are Slowing, Study Finds\n"),
        "{}",
        &text[..text.len().min(400)]
    );

    // The audit log on disk tells the same story: the call, run in its sandbox.
    let log_path = report.audit_log.as_ref().expect("the run wrote an audit log");
    let log = std::fs::read_to_string(log_path).unwrap();
    let calls: Vec<serde_json::Value> = log
        .lines()
        .map(|l| serde_json::from_str(l).expect("every audit line is JSON"))
        .filter(|e: &serde_json::Value| {
            e["event"] == "tool_call" && e["tool"] == "web__to_markdown"
        })
        .collect();
    assert!(calls.iter().any(|c| c["skill"] == "web" && c["outcome"] == "ok"), "{log}");
}

/// The memory test, once with a real model: run 1 states where pages
/// go and the model keeps it as a note; run 2 asks only to save a page, and
/// the page lands where run 1 said. Structural: the kept note, then the file.
#[tokio::test]
#[ignore = "needs a model: run `just e2e-memory`, or set REACH_E2E_BASE_URL and pass --ignored"]
async fn a_real_model_applies_a_preference_remembered_in_an_earlier_run() {
    use agent_reach::memory::{MemoryStore, Provenance, SqliteStore};
    use agent_reach::policy::{Level, MemorySettings};
    use std::sync::Arc;

    let (site, ws, policy) = article_site();
    ws.mkdir("notes/archive");
    let host = Arc::new(ws.host_here(&policy).await);
    let model = Arc::new(real_model("e2e-memory"));
    let store = Arc::new(SqliteStore::open(&ws.path(".reach/memory.db")).expect("memory"));
    let settings = MemorySettings {
        path: ws.path(".reach/memory.db"),
        url: None,
        remember: Level::Auto,
        recall: Level::Auto,
        budget_tokens: 300,
    };
    let run = |id: &'static str, task: String| {
        let (store, settings) = (store.clone(), settings.clone());
        let (host, model, ws) = (Arc::clone(&host), Arc::clone(&model), &ws);
        async move {
            let store: Arc<dyn MemoryStore> = store;
            let agent = agent_reach_tests::agent(
                host,
                model,
                AlwaysConfirm,
                RunConfig::default(),
                Some(ws.path(".reach/runs")),
            )
            .memory(store, settings);
            let report = agent_reach_tests::run(agent, id, &task).await;
            eprintln!("{id}: {}", report.summary());
            for action in &report.actions {
                eprintln!("  {} {} → {}", action.tool, action.arguments, action.outcome);
            }
            report
        }
    };

    run(
        "remember",
        "From now on, always save web pages into notes/archive. Remember this preference."
            .to_owned(),
    )
    .await;
    let kept = store.list(false).expect("list");
    assert!(
        kept.iter()
            .any(|e| e.text.contains("notes/archive")
                && matches!(e.provenance, Provenance::User { .. })),
        "run 1 kept no note about notes/archive stated by the user: {kept:?}"
    );

    let report =
        run("apply", format!("Save the web page {} as Markdown.", site.url("/article.html"))).await;
    let call = report
        .actions
        .iter()
        .find(|a| a.tool == "web__to_markdown" && a.outcome == "ok")
        .expect("the model saved the page");
    let saved: Vec<_> = std::fs::read_dir(ws.path("notes/archive"))
        .unwrap()
        .filter_map(Result::ok)
        .map(|e| e.path())
        .collect();
    assert_eq!(
        saved.len(),
        1,
        "the page went where run 1 said (notes/archive): {saved:?}; the call: {:?}",
        call.arguments
    );
}

/// The orchestration test, with a real model: the supervisor has a
/// web worker save the page and a files worker report its headings.
/// Structural: each worker ran its skill in its own sandbox, the file is
/// on disk, and the answer names the page's title heading.
#[tokio::test]
#[ignore = "needs a model: run `just e2e-agents`, or set REACH_E2E_BASE_URL and pass --ignored"]
async fn a_real_supervisor_has_a_web_worker_save_a_page_and_a_files_worker_report_its_headings() {
    let (site, ws, policy) = article_site();
    let policy = format!(
        "{policy}\n\
         [agents.web]\n\
         description = \"Saves web pages as Markdown files.\"\n\
         skills = [\"web\"]\n\n\
         [agents.files]\n\
         description = \"Reads files and reports what they say.\"\n\
         skills = [\"files\"]\n"
    );
    let host = ws.host_here(&policy).await;
    let model = real_model("e2e-agents");
    let agent = agent_reach_tests::agent(
        host,
        model,
        AlwaysConfirm,
        RunConfig { max_steps: 6, ..RunConfig::default() },
        Some(ws.path(".reach/runs")),
    );
    let task = format!(
        "Have the web agent save the web page {} as Markdown to notes/article.md, then have the \
         files agent read notes/article.md and report its headings.",
        site.url("/article.html")
    );
    let report = agent_reach_tests::run(agent, "e2e-agents", &task).await;
    eprintln!("{}", report.summary());
    eprintln!("calls: {}", serde_json::to_string_pretty(&report.actions).unwrap());
    eprintln!("answer: {:?}", report.answer);
    eprintln!("workers: {}", serde_json::to_string_pretty(&report.workers).unwrap());

    let ran = |agent: &str, tool: &str| {
        report.workers.iter().any(|w| {
            w.agent == agent && w.actions.iter().any(|a| a.tool == tool && a.outcome == "ok")
        })
    };
    assert!(ran("web", "web__to_markdown"), "a web worker saved the page");
    let saved =
        std::fs::read_to_string(ws.path("notes/article.md")).expect("notes/article.md was written");
    assert!(
        saved.contains("# Deep-Sea Currents Are Slowing, Study Finds"),
        "{}",
        &saved[..saved.len().min(400)]
    );
    assert!(ran("files", "files__read"), "a files worker read the saved page");
    let answer = report.answer.as_deref().unwrap_or_default();
    assert!(answer.contains("Deep-Sea Currents"), "the answer reports the headings: {answer}");
}
