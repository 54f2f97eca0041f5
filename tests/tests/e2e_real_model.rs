//! One real task with a real model: "save this page as Markdown". Runs when
//! `REACH_E2E_BASE_URL` names an OpenAI-compatible endpoint (`just e2e`
//! starts the local model and sets it; `REACH_E2E_MODEL` picks the model,
//! `OPENAI_API_KEY` is sent if set). Without it the test says so and passes:
//! the model cannot be part of the default suite until CI caches it.
//!
//! Assertions are structural — the right tool, parseable arguments, the
//! file on disk with the article's heading — never the model's wording.

use agent_reach::harness::audit::AuditLog;
use agent_reach::harness::{Harness, Quiet, RunConfig};
use agent_reach::model::{OpenAiClient, OpenAiConfig};
use agent_reach::AlwaysConfirm;
use agent_reach_tests::Workspace;
use agent_reach_tests::pages::{Pages, Route};
use std::time::Duration;

#[tokio::test]
async fn a_real_model_saves_a_page_as_markdown() {
    let Ok(base_url) = std::env::var("REACH_E2E_BASE_URL") else {
        eprintln!("skipped: set REACH_E2E_BASE_URL (or run `just e2e`) to run the real-model task");
        return;
    };
    let site = Pages::start(vec![Route::file("/article.html", "article.html", "text/html; charset=utf-8")]);
    let ws = Workspace::new();
    ws.install("skill-web").install("skill-files");
    ws.mkdir("notes");
    let policy = format!(
        "[skills.web]\nlevel = \"auto\"\nnet = [\"{}\"]\nwrite = [\"{}\"]\n\n[skills.files]\nlevel = \"auto\"\nread = [\"{}\"]\n",
        site.grant(),
        ws.path("notes").display(),
        ws.path("notes").display()
    );
    let host = ws.host(&policy).await;
    let model_name = std::env::var("REACH_E2E_MODEL").unwrap_or_else(|_| "qwen2.5-coder-1.5b-instruct".into());
    let mut config = OpenAiConfig::new(base_url, model_name);
    config.api_key = std::env::var("OPENAI_API_KEY").ok().filter(|k| !k.is_empty());
    config.temperature = Some(0.0);
    config.timeout = Duration::from_secs(600);
    let model = OpenAiClient::new(config).expect("client");
    let audit = AuditLog::create(&ws.path(".reach/runs"), "e2e", vec![]).expect("audit");
    let run_config = RunConfig { max_steps: 4, ..RunConfig::default() };
    let mut harness = Harness::new(&host, &model, &AlwaysConfirm, run_config, audit);
    let task = format!("Save the web page {} as Markdown.", site.url("/article.html"));
    let report = harness.run("e2e", &task, &Quiet).await;
    eprintln!("{}", report.summary());

    let call = report.actions.iter().find(|a| a.tool == "web__to_markdown").expect("the model called web__to_markdown");
    assert_eq!(call.outcome, "ok", "{report:?}");
    assert!(call.arguments["url"].as_str().is_some_and(|u| u.ends_with("/article.html")), "{:?}", call.arguments);
    let saved: Vec<_> = std::fs::read_dir(ws.path("notes")).unwrap().filter_map(Result::ok).map(|e| e.path()).collect();
    assert_eq!(saved.len(), 1, "{saved:?}");
    let text = std::fs::read_to_string(&saved[0]).unwrap();
    assert!(text.contains("\n# Deep-Sea Currents Are Slowing, Study Finds\n"), "{}", &text[..text.len().min(400)]);
}
