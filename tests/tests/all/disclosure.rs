//! Skills disclosed on demand, or chosen from the task: a scripted OpenAI-protocol server on
//! 127.0.0.1 records what each request offers, the real `files` skill runs.

use agent_reach::NeverConfirm;
use agent_reach::harness::{Disclosure, RunConfig};
use agent_reach::model::{OpenAiClient, OpenAiConfig};
use agent_reach_tests::Workspace;
use agent_reach_tests::guests;
use agent_reach_tests::openai::{Reply, ScriptedModel};
use serde_json::{Value, json};

fn offered(request: &Value) -> Vec<String> {
    request["tools"].as_array().map_or_else(Vec::new, |t| {
        t.iter().map(|t| t["function"]["name"].as_str().unwrap().to_owned()).collect()
    })
}

async fn run(
    replies: impl Fn(&str) -> Vec<Reply>,
) -> (agent_reach::harness::RunReport, ScriptedModel, Workspace) {
    run_with(Disclosure::OnDemand, "What does docs/a.txt say?", replies).await
}

async fn run_with(
    disclose: Disclosure,
    task: &str,
    replies: impl Fn(&str) -> Vec<Reply>,
) -> (agent_reach::harness::RunReport, ScriptedModel, Workspace) {
    run_config(RunConfig { disclose, ..RunConfig::default() }, task, replies).await
}

async fn run_config(
    config: RunConfig,
    task: &str,
    replies: impl Fn(&str) -> Vec<Reply>,
) -> (agent_reach::harness::RunReport, ScriptedModel, Workspace) {
    let ws = Workspace::new();
    ws.install(guests::SKILL_FILES).install(guests::TEST_SKILL_PROBE);
    let file = ws.write("docs/a.txt", "alpha\n");
    let replies = replies(&file.display().to_string());
    let policy = format!(
        "[skills.files]\nlevel = \"auto\"\nread = [\"{}\"]\n\n[skills.probe]\nlevel = \"auto\"\n",
        ws.path("docs").display()
    );
    let host = ws.host(&policy).await;
    let server = ScriptedModel::start(replies);
    let model =
        OpenAiClient::new(OpenAiConfig::new(server.base_url(), "scripted")).expect("client");
    let agent =
        agent_reach_tests::agent(host, model, NeverConfirm, config, Some(ws.path(".reach/runs")));
    let report = agent_reach_tests::run(agent, "menu", task).await;
    (report, server, ws)
}

#[tokio::test]
async fn the_first_request_offers_a_menu_and_an_opened_skill_brings_its_tools() {
    let (report, server, _ws) = run(|file| {
        vec![
            Reply::call("skills__open", r#"{"skill": "files"}"#),
            Reply::call("files__read", &json!({"path": file}).to_string()),
            Reply::text("It says alpha."),
        ]
    })
    .await;
    assert_eq!(report.answer.as_deref(), Some("It says alpha."), "{}", report.summary());
    let requests = server.requests();
    let first = offered(&requests[0]);
    assert!(
        first.contains(&"skills__open".to_owned())
            && !first.iter().any(|n| n.starts_with("files__")),
        "{first:?}"
    );
    let menu = requests[0]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["function"]["name"] == "skills__open")
        .unwrap()["function"]["description"]
        .to_string();
    assert!(
        menu.contains("files — ") && menu.contains("read") && menu.contains("probe — "),
        "{menu}"
    );
    let second = offered(&requests[1]);
    assert!(
        second.contains(&"files__read".to_owned())
            && !second.iter().any(|n| n.starts_with("probe__")),
        "{second:?}"
    );
    // The tools of the first request come first in the second, unchanged: a prompt cache keeps
    // them.
    let (before, after) =
        (requests[0]["tools"].as_array().unwrap(), requests[1]["tools"].as_array().unwrap());
    assert_eq!(before[..], after[..before.len()]);
    let (menu_only, with_files) =
        (requests[0]["tools"].to_string().len(), requests[2]["tools"].to_string().len());
    assert!(
        menu_only < with_files,
        "the menu is smaller than the tools it stands for: {menu_only} vs {with_files}"
    );
}

#[tokio::test]
async fn a_tool_called_without_opening_its_skill_runs_and_opens_it() {
    let (report, server, _ws) = run(|file| {
        vec![
            Reply::call("files__read", &json!({"path": file}).to_string()),
            Reply::text("It says alpha."),
        ]
    })
    .await;
    assert_eq!(report.actions[0].outcome, "ok");
    assert!(offered(&server.requests()[1]).contains(&"files__read".to_owned()));
}

#[tokio::test]
async fn skills_chosen_by_task_are_offered_from_the_first_request_and_others_stay_on_the_menu() {
    let (report, server, ws) = run_with(
        Disclosure::ByTask,
        "Read the text file docs/a.txt and list what it says",
        |file| {
            vec![
                Reply::call("files__read", &json!({"path": file}).to_string()),
                Reply::text("It says alpha."),
            ]
        },
    )
    .await;
    assert_eq!(report.answer.as_deref(), Some("It says alpha."), "{}", report.summary());
    let first = offered(&server.requests()[0]);
    assert!(
        first.contains(&"files__read".to_owned()) && first.contains(&"skills__open".to_owned()),
        "{first:?}"
    );
    assert!(
        !first.iter().any(|n| n.starts_with("probe__")),
        "the probe skill was not asked for: {first:?}"
    );
    let log = std::fs::read_to_string(ws.path(".reach/runs/menu.jsonl")).unwrap();
    let chosen: Value = log
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .find(|e| e["event"] == "skills_chosen")
        .expect("a skills_chosen event");
    assert_eq!(chosen["chosen"], json!(["files"]), "{chosen}");
}

#[tokio::test]
async fn a_task_whose_words_point_to_no_skill_is_offered_every_tool() {
    let (report, server, _ws) =
        run_with(Disclosure::ByTask, "What is seven times six?", |_| vec![Reply::text("42")]).await;
    assert_eq!(report.answer.as_deref(), Some("42"));
    let first = offered(&server.requests()[0]);
    assert!(
        first.contains(&"files__read".to_owned()) && first.iter().any(|n| n.starts_with("probe__")),
        "{first:?}"
    );
    assert!(!first.contains(&"skills__open".to_owned()), "{first:?}");
}

#[tokio::test]
async fn compacted_schemas_are_offered_and_the_skill_still_checks_arguments() {
    let schema_of = |server: &ScriptedModel| {
        let tools = server.requests()[0]["tools"].clone();
        tools
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["function"]["name"] == "files__read")
            .unwrap()["function"]["parameters"]
            .clone()
    };
    let task = "What does docs/a.txt say?";
    let (_, full, _) = run_config(RunConfig::default(), task, |_| vec![Reply::text("?")]).await;
    let full = schema_of(&full);
    assert_eq!(full["properties"]["limit"]["type"], json!(["integer", "null"]), "{full}");
    let compact = RunConfig { compact_schemas: true, ..RunConfig::default() };
    let (report, server, _) = run_config(compact, task, |file| {
        vec![
            Reply::call("files__read", &json!({"path": file, "limit": "many"}).to_string()),
            Reply::text("It failed."),
        ]
    })
    .await;
    let offered = schema_of(&server);
    assert_eq!(offered["properties"]["limit"]["type"], json!("integer"), "{offered}");
    assert!(
        offered.get("$schema").is_none() && offered["properties"]["limit"].get("format").is_none(),
        "{offered}"
    );
    assert!(offered.to_string().len() < full.to_string().len());
    // What the model reads is smaller; what a call must satisfy is the skill's own schema.
    assert_eq!(report.actions[0].outcome, "INVALID_ARGS", "{}", report.summary());
}
