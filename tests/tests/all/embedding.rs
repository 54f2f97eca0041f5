//! The embedding API as an embedder uses it: a host from the builder with
//! the real `files` skill, a model of the embedder's own (the `Model` trait
//! implemented outside the crate), and the events a run reports, checked
//! against its audit log.

use agent_reach::harness::RunReport;
use agent_reach::model::{
    ChatFuture, ChatRequest, ChatResponse, Message, Model, ModelError, ToolCall, Usage,
};
use agent_reach::policy::Level;
use agent_reach::runtime::RuntimeConfig;
use agent_reach::{Agent, AlwaysConfirm, AuditSink, Confirmer, ErrorCode, Event, Host, Run};
use agent_reach_tests::guests;
use agent_reach_tests::{Workspace, workspace};
use serde_json::Value;
use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

/// Reads `docs/`, writes `notes/` only with a person's yes.
const POLICY: &str = r#"
[skills.files]
level = "auto"
read = ["docs"]
write = ["notes"]

[skills.files.tools.write]
level = "confirm"
"#;

/// A model of the embedder's own: one scripted reply a request.
struct Script {
    replies: Mutex<VecDeque<Message>>,
}

impl Script {
    fn new(replies: Vec<Message>) -> Script {
        Script { replies: Mutex::new(replies.into()) }
    }
}

fn call(name: &str, arguments: &str) -> Message {
    Message::assistant(
        "",
        vec![ToolCall { id: format!("c-{name}"), name: name.into(), arguments: arguments.into() }],
    )
}

impl Model for Script {
    fn chat<'a>(&'a self, _request: ChatRequest<'a>) -> ChatFuture<'a> {
        let next = self.replies.lock().unwrap().pop_front();
        Box::pin(async move {
            let message =
                next.ok_or_else(|| ModelError::Other("the script is exhausted".into()))?;
            Ok(ChatResponse {
                message,
                usage: Usage { input_tokens: 10, output_tokens: 5, estimated: false },
                model: "script".into(),
            })
        })
    }

    fn name(&self) -> &str {
        "script"
    }
}

fn workspace_with_files() -> Workspace {
    let ws = Workspace::new();
    ws.install(guests::SKILL_FILES);
    ws.write("docs/a.txt", "alpha\nbeta\n");
    ws.mkdir("notes");
    ws
}

async fn host(ws: &Workspace, policy: &str) -> Result<Host, agent_reach::HostError> {
    Host::builder()
        .skills_dir(ws.path("skills"))
        .policy_str(policy)
        .working_dir(ws.path(""))
        .runtime_config(RuntimeConfig {
            cache_dir: Some(workspace().join("target/test-compile-cache")),
            pooling: true,
        })
        .build()
        .await
}

/// Every event of `run` as it happens, then its report.
async fn watch(mut run: Run) -> (Vec<Event>, RunReport) {
    let mut events = Vec::new();
    while let Some(event) = run.next_event().await {
        events.push(event);
    }
    (events, run.report().await.expect("a report"))
}

/// An event as a person reads the timeline: kind, tool, decision, outcome.
fn line(event: &Event) -> String {
    match event {
        Event::RunStarted { tools, .. } => format!("run started ({} tools)", tools.len()),
        Event::ModelRequest { step, tool_calls, .. } => {
            format!("step {step}: {tool_calls} call(s)")
        }
        Event::ToolCallStarted { tool, arguments, .. } => format!("started {tool} {arguments}"),
        Event::Decision { tool, decision, .. } => format!("{decision} {tool}"),
        Event::ToolCallFinished { tool, decision, error_code, .. } => {
            format!("finished {tool} [{decision}] {}", error_code.map_or("ok", |c| c.as_str()))
        }
        Event::RunFinished { stop, steps, .. } => format!("finished: {stop:?} after {steps} steps"),
        other => format!("{other}"),
    }
}

/// The events in an audit log's records.
fn events_in_log(dir: &std::path::Path, run_id: &str) -> Vec<Event> {
    let text =
        std::fs::read_to_string(dir.join(format!("{run_id}.jsonl"))).expect("the run's audit log");
    text.lines()
        .map(|l| serde_json::from_str::<Value>(l).expect("a JSON line"))
        .filter_map(|r| Event::from_record(&r))
        .collect()
}

#[tokio::test]
async fn a_run_reports_each_step_as_it_happens_and_the_audit_log_agrees() {
    let ws = workspace_with_files();
    let host = host(&ws, POLICY).await.expect("host");
    let model = Script::new(vec![
        call("files__read", r#"{"path": "docs/a.txt"}"#),
        call("files__write", r#"{"path": "notes/a.md", "content": "alpha, beta"}"#),
        Message::assistant("Done: notes/a.md says alpha, beta.", Vec::new()),
    ]);
    let runs = ws.path(".reach/runs");
    let agent = Agent::builder(host, model)
        .confirmer(AlwaysConfirm)
        .audit(AuditSink::Dir(runs.clone()))
        .build()
        .expect("agent");

    let run = agent.start("Copy docs/a.txt into notes/a.md").expect("started");
    let run_id = run.id().to_owned();
    let (events, report) = watch(run).await;

    let timeline: Vec<String> = events.iter().map(line).collect();
    assert_eq!(
        timeline,
        [
            "run started (6 tools)",
            "step 1: 1 call(s)",
            r#"started files__read {"path":"docs/a.txt"}"#,
            "finished files__read [auto] ok",
            "step 2: 1 call(s)",
            r#"started files__write {"content":"alpha, beta","path":"notes/a.md"}"#,
            "confirmed files__write",
            "finished files__write [confirmed] ok",
            "step 3: 0 call(s)",
            "finished: Answered after 3 steps",
        ],
        "{events:#?}"
    );
    assert_eq!(std::fs::read_to_string(ws.path("notes/a.md")).unwrap(), "alpha, beta");
    assert_eq!(report.run_id, run_id);
    assert_eq!(report.answer.as_deref(), Some("Done: notes/a.md says alpha, beta."));
    assert_eq!(report.audit_log.as_deref(), Some(runs.join(format!("{run_id}.jsonl")).as_path()));
    assert_eq!(events_in_log(&runs, &run_id), events, "the events are the audit log's records");
    let Event::RunStarted { run_id: started, task, model, .. } = &events[0] else {
        panic!("{:?}", events[0])
    };
    assert_eq!(
        (started.as_str(), task.as_str(), model.as_str()),
        (run_id.as_str(), "Copy docs/a.txt into notes/a.md", "script")
    );
    assert!(events[3].to_string().starts_with("step 1: files__read → ok ("), "{}", events[3]);
}

#[tokio::test]
async fn by_default_a_call_that_needs_a_person_is_declined_before_it_runs() {
    let ws = workspace_with_files();
    let host = host(&ws, POLICY).await.expect("host");
    let refused = "I could not write notes/b.md: it needs a person's confirmation.";
    // An answer right after a refusal is questioned once: the same answer again.
    let model = Script::new(vec![
        call("files__write", r#"{"path": "notes/b.md", "content": "x"}"#),
        Message::assistant(refused, Vec::new()),
        Message::assistant(refused, Vec::new()),
    ]);
    // No confirmer given: NeverConfirm.
    let agent = Agent::builder(host, model).audit(AuditSink::Disabled).build().expect("agent");
    let (events, report) = watch(agent.start("Write x into notes/b.md").expect("started")).await;
    let timeline: Vec<String> = events.iter().map(line).collect();
    let declined = timeline.iter().position(|l| l == "declined files__write").expect("a decision");
    assert_eq!(timeline[declined + 1], "finished files__write [declined] DENIED");
    let Event::Decision { reason: Some(reason), .. } = &events[declined] else {
        panic!("{:?}", events[declined])
    };
    assert!(reason.contains("no one is available to confirm it"), "{reason}");
    assert!(!ws.path("notes/b.md").exists(), "nothing ran");
    assert_eq!(report.audit_log, None, "no log was asked for");
}

#[tokio::test]
async fn a_consumer_that_reads_no_events_does_not_hold_the_run_up() {
    let ws = workspace_with_files();
    let host = host(&ws, POLICY).await.expect("host");
    let reads = (0..4).map(|_| call("files__list", r#"{"path": "docs"}"#));
    let model =
        Script::new(reads.chain([Message::assistant("docs holds a.txt.", Vec::new())]).collect());
    let config = agent_reach::harness::RunConfig { repeat_limit: 10, ..Default::default() };
    let agent = Agent::builder(host, model)
        .audit(AuditSink::Disabled)
        .config(config)
        .event_capacity(2)
        .build()
        .expect("agent");
    let mut run = agent.start("What is in docs?").expect("started");
    // 15 events for a channel of 2, none read while the run goes on.
    tokio::time::timeout(std::time::Duration::from_secs(60), async {
        while !run.is_finished() {
            tokio::time::sleep(std::time::Duration::from_millis(5)).await;
        }
    })
    .await
    .expect("the run finished without anyone reading its events");
    let mut events = Vec::new();
    while let Some(event) = run.next_event().await {
        events.push(event);
    }
    assert!(
        matches!(
            events[..],
            [
                Event::RunStarted { .. },
                Event::ModelRequest { .. },
                Event::Lagged { missed: 13, .. }
            ]
        ),
        "{events:#?}"
    );
    assert_eq!(run.report().await.expect("report").actions.len(), 4);
}

#[tokio::test]
async fn secrets_given_to_the_agent_are_masked_in_the_log_and_the_events() {
    let ws = workspace_with_files();
    let host = host(&ws, POLICY).await.expect("host");
    let model = Script::new(vec![Message::assistant("The key is sk-test-1234567890.", Vec::new())]);
    let lines = Arc::new(Mutex::new(Vec::<u8>::new()));
    let agent = Agent::builder(host, model)
        .audit(AuditSink::Writer(lines.clone()))
        .secret("sk-test-1234567890")
        .build()
        .expect("agent");
    let (events, report) =
        watch(agent.start("Say the key sk-test-1234567890 back").expect("started")).await;
    let log = String::from_utf8(lines.lock().unwrap().clone()).unwrap();
    assert!(!log.contains("sk-test-1234567890") && log.contains("[REDACTED]"), "{log}");
    assert!(
        log.lines()
            .all(|l| serde_json::from_str::<Value>(l).unwrap()["run_id"] == report.run_id.as_str()),
        "{log}"
    );
    let shown = format!("{events:?}");
    assert!(!shown.contains("sk-test-1234567890") && shown.contains("[REDACTED]"), "{shown}");
    assert_eq!(report.answer.as_deref(), Some("The key is [REDACTED]."));
}

#[tokio::test]
async fn a_run_awaited_directly_needs_no_runtime_of_its_own() {
    let ws = workspace_with_files();
    let host = Arc::new(host(&ws, POLICY).await.expect("host"));
    // Two agents share one host (one engine, one set of compiled skills).
    let quiet = Agent::builder(
        Arc::clone(&host),
        Script::new(vec![Message::assistant("Nothing to do.", Vec::new())]),
    )
    .audit(AuditSink::Disabled)
    .build()
    .expect("agent");
    let failing = Agent::builder(host, Script::new(Vec::new()))
        .audit(AuditSink::Disabled)
        .build()
        .expect("agent");
    let report = quiet.run("Say hello").await.expect("report");
    assert!(report.stop.is_success(), "{report:?}");
    let report = failing.run("Say hello").await.expect("a model error is a stop, not an error");
    assert_eq!(
        report.stop,
        agent_reach::harness::Stop::ModelError("the script is exhausted".into())
    );
}

#[tokio::test]
async fn the_builder_refuses_what_the_cli_refuses() {
    let ws = workspace_with_files();
    // A table in a string names itself in its errors.
    let err = host(&ws, "[skills.files]\nlevel = \"sometimes\"\n")
        .await
        .map(|_| ())
        .unwrap_err()
        .to_string();
    assert!(err.starts_with("<inline policy>:2:"), "{err}");
    // A skill must not be able to rewrite the record of what it did: not
    // in `.reach/` where the table is…
    let err = host(&ws, "[skills.files]\nlevel = \"auto\"\nwrite = [\".reach\"]\n")
        .await
        .map(|_| ())
        .unwrap_err()
        .to_string();
    assert!(err.contains("would let files write the audit logs"), "{err}");
    // …nor in the folder the agent logs to.
    let host = host(&ws, POLICY).await.expect("host");
    let err = Agent::builder(host, Script::new(Vec::new()))
        .audit(AuditSink::Dir(ws.path("notes/runs")))
        .build()
        .unwrap_err();
    assert!(err.to_string().contains("would let files write the audit logs"), "{err}");
}

/// Allows every call, keeping what the person was shown.
#[derive(Default)]
struct Shown(Mutex<Vec<Value>>);

impl Confirmer for Shown {
    fn confirm(&self, _skill: &str, _tool: &str, arguments: &Value) -> Result<(), String> {
        self.0.lock().unwrap().push(arguments.clone());
        Ok(())
    }
}

/// Regression: the confirmation showed the parsed arguments (the last of a
/// key given twice) while the skill was sent the text as written (both), so
/// a skill reading the first saw another value than the person allowed.
#[tokio::test]
async fn a_key_given_twice_cannot_run_the_skill_with_another_value_than_the_one_confirmed() {
    let ws = workspace_with_files();
    ws.install(guests::TEST_SKILL_ECHO);
    let host = host(&ws, "[skills.echo]\nlevel = \"confirm\"\n").await.expect("host");
    let shown = Shown::default();
    // `echo` answers with the very text it was sent.
    let sent = host
        .invoke("echo", "echo", r#"{"path": "notes/harmless.md", "path": "/etc/passwd"}"#, &shown)
        .await
        .expect("confirmed and run");
    let shown = shown.0.lock().unwrap().clone();
    assert_eq!(shown, [serde_json::json!({"path": "/etc/passwd"})], "the person saw one value");
    assert_eq!(sent, shown[0].to_string(), "the skill was sent exactly what the person saw");

    let call = host.check("echo", "echo", r#"{"a": 1, "a": 2}"#).expect("checked");
    assert_eq!(
        (call.skill(), call.tool(), call.level(), call.value()),
        ("echo", "echo", Level::Confirm, &serde_json::json!({"a": 2}))
    );
}

/// Regression: `run_checked` trusted its caller to have asked a person.
#[tokio::test]
async fn run_checked_refuses_a_confirm_call_no_one_confirmed() {
    let ws = workspace_with_files();
    let host = host(&ws, POLICY).await.expect("host");
    let arguments = r#"{"path": "notes/b.md", "content": "x"}"#;
    let call = host.check("files", "write", arguments).expect("checked");
    assert_eq!(call.level(), Level::Confirm);
    let refused = host.run_checked(call).await.expect_err("no one confirmed it");
    assert_eq!(refused.code, ErrorCode::Denied);
    assert!(
        refused.message.contains("files.write needs a person's confirmation")
            && refused.message.contains("not confirmed"),
        "{refused}"
    );
    assert!(!ws.path("notes/b.md").exists(), "nothing ran");

    let mut call = host.check("files", "write", arguments).expect("checked");
    call.confirmed();
    host.run_checked(call).await.expect("confirmed: it runs");
    assert_eq!(std::fs::read_to_string(ws.path("notes/b.md")).unwrap(), "x");
}

/// Regression: a call checked on one host ran on another whose table
/// denies it (the host serving before a reload, and the one after).
#[tokio::test]
async fn a_call_checked_on_one_host_is_refused_by_a_host_whose_table_denies_it() {
    let ws = workspace_with_files();
    let before = host(&ws, POLICY).await.expect("host");
    let after = host(&ws, &format!("{POLICY}[skills.files.tools.read]\nlevel = \"deny\"\n"))
        .await
        .expect("host");
    let call = before.check("files", "read", r#"{"path": "docs/a.txt"}"#).expect("allowed before");
    let refused = after.run_checked(call).await.expect_err("denied now");
    assert_eq!(refused.code, ErrorCode::Denied);
    assert!(
        refused.message.contains("files.read is forbidden by the permission table"),
        "{refused}"
    );

    // And a tool `auto` before but `confirm` now is not run unconfirmed.
    let asks =
        host(&ws, &POLICY.replace("level = \"auto\"", "level = \"confirm\"")).await.expect("host");
    let call = before.check("files", "read", r#"{"path": "docs/a.txt"}"#).expect("allowed before");
    assert_eq!(
        asks.run_checked(call).await.expect_err("needs a person now").code,
        ErrorCode::Denied
    );
}

/// The custom-model example, its model run here with the real files skill.
#[expect(dead_code, reason = "its `main` is for `cargo run --example custom_model`")]
#[path = "../../../host/examples/custom_model.rs"]
mod custom_model;

#[tokio::test]
async fn the_custom_model_example_lists_the_folder_then_answers() {
    let ws = workspace_with_files();
    let host = host(&ws, custom_model::POLICY).await.expect("host");
    let agent = Agent::builder(host, custom_model::Rules)
        .audit(AuditSink::Disabled)
        .build()
        .expect("agent");
    let (events, report) = watch(agent.start("List the folder docs").expect("started")).await;
    let timeline: Vec<String> = events.iter().map(line).collect();
    assert_eq!(
        timeline,
        [
            "run started (6 tools)",
            "step 1: 1 call(s)",
            r#"started files__list {"path":"docs"}"#,
            "finished files__list [auto] ok",
            "step 2: 0 call(s)",
            "finished: Answered after 2 steps",
        ]
    );
    let answer = report.answer.expect("an answer");
    assert!(answer.ends_with("docs holds: a.txt."), "{answer}");
}
