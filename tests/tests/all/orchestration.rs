//! Orchestration end to end: a scripted OpenAI-protocol server on
//! 127.0.0.1 plays the supervisor, its workers and the reviewer (told
//! apart by the first user message each loop sends), the real `files`,
//! `probe` and `echo` skills run in their sandboxes, and the audit log is
//! read back from disk.

use agent_reach::harness::{RunConfig, RunReport, Stop};
use agent_reach::{AlwaysConfirm, Host};
use agent_reach_tests::Workspace;
use agent_reach_tests::guests;
use agent_reach_tests::openai::{Reply, ScriptedModel, brief, delegate, results};
use serde_json::{Value, json};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The supervisor's task carries this: no worker may ever see it.
const PLAN: &str = "SUPERVISOR-PLAN-7731";

fn workspace() -> Workspace {
    let ws = Workspace::new();
    ws.install(guests::SKILL_FILES)
        .install(guests::TEST_SKILL_PROBE)
        .install(guests::TEST_SKILL_ECHO);
    ws.write("docs/a.txt", "alpha\nbeta\n");
    ws.write("docs/b.txt", "gamma\n");
    ws.mkdir("notes");
    ws
}

/// files reads docs/ and writes notes/; probe may write notes/ and read a
/// variable; echo has no grants. `extra` adds profiles and limits.
fn table(ws: &Workspace, extra: &str) -> String {
    format!(
        "[skills.files]\n\
         level = \"auto\"\n\
         read = [\"{docs}\"]\n\
         write = [\"{notes}\"]\n\n\
         [skills.probe]\n\
         level = \"auto\"\n\
         write = [\"{notes}\"]\n\
         env = [\"REACH_ORCH_TOKEN\"]\n\n\
         [skills.echo]\n\
         level = \"auto\"\n\n\
         [agents.reader]\n\
         description = \"Reads files and reports what they say.\"\n\
         skills = [\"files\"]\n\n\
         [agents.boss]\n\
         description = \"Splits a job among readers.\"\n\
         skills = [\"agents\", \"files\"]\n\n\
         {extra}",
        docs = ws.path("docs").display(),
        notes = ws.path("notes").display()
    )
}

/// Which loop sent the request: `root`, or the worker's agent name.
fn who(body: &Value) -> String {
    let first = brief(body);
    match first.strip_prefix("[worker: ") {
        Some(rest) => rest.split(']').next().unwrap_or("").to_owned(),
        None => "root".to_owned(),
    }
}

/// The last message's text.
fn last(body: &Value) -> String {
    body["messages"]
        .as_array()
        .and_then(|m| m.last())
        .and_then(|m| m["content"].as_str())
        .unwrap_or("")
        .to_owned()
}

/// The names of the tools offered.
fn offered(body: &Value) -> Vec<String> {
    body["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|t| t["function"]["name"].as_str())
        .map(str::to_owned)
        .collect()
}

struct Done {
    report: RunReport,
    log: Vec<Value>,
    server: ScriptedModel,
    ws: Workspace,
}

impl Done {
    /// The records of worker `task`.
    fn of(&self, task: &str) -> Vec<&Value> {
        self.log.iter().filter(|r| r["worker"] == task).collect()
    }

    fn root(&self) -> Vec<&Value> {
        self.log.iter().filter(|r| r.get("worker").is_none()).collect()
    }

    fn requests_of(&self, agent: &str) -> Vec<Value> {
        self.server.requests().into_iter().filter(|b| who(b) == agent).collect()
    }
}

async fn run(
    extra: &str,
    config: RunConfig,
    respond: impl Fn(&Value) -> Reply + Send + Sync + 'static,
) -> Done {
    run_in(workspace(), extra, config, respond).await
}

async fn run_in(
    ws: Workspace,
    extra: &str,
    config: RunConfig,
    respond: impl Fn(&Value) -> Reply + Send + Sync + 'static,
) -> Done {
    let host: Host = ws.host_here(&table(&ws, extra)).await;
    let server = ScriptedModel::start_with(respond);
    let model = server.client();
    let agent =
        agent_reach_tests::agent(host, model, AlwaysConfirm, config, Some(ws.path(".reach/runs")));
    let task = format!("Report what docs/a.txt and docs/b.txt say. ({PLAN})");
    let report = agent_reach_tests::run(agent, "orch", &task).await;
    let path = report.audit_log.clone().expect("a run log");
    let log = std::fs::read_to_string(path)
        .expect("log")
        .lines()
        .map(|l| serde_json::from_str(l).expect("json line"))
        .collect();
    Done { report, log, server, ws }
}

/// A reader that reads the file its task names, then answers with it as JSON.
fn reader(body: &Value, pause: Duration) -> Reply {
    std::thread::sleep(pause);
    let task = brief(body);
    let file = if task.contains("b.txt") { "docs/b.txt" } else { "docs/a.txt" };
    match results(body).last() {
        None => Reply::call("files__read", &json!({"path": file}).to_string()),
        Some(text) => Reply::text(&json!({"text": text}).to_string()),
    }
}

#[tokio::test]
async fn two_delegations_in_one_reply_run_at_the_same_time_each_seeing_only_its_envelope() {
    let spans: Arc<Mutex<Vec<(String, Instant, Instant)>>> = Arc::default();
    let seen = spans.clone();
    let done = run("", RunConfig::default(), move |body| match who(body).as_str() {
        "root" if results(body).is_empty() => Reply::calls(&[
            ("agents__delegate", &delegate("reader", "Read docs/a.txt")),
            ("agents__delegate", &delegate("reader", "Read docs/b.txt")),
        ]),
        "root" => Reply::text("a.txt says alpha and beta; b.txt says gamma."),
        _ => {
            let start = Instant::now();
            let reply = reader(body, Duration::from_millis(400));
            seen.lock().unwrap().push((brief(body), start, Instant::now()));
            reply
        }
    })
    .await;
    assert_eq!(done.report.stop, Stop::Answered, "{:?}", done.report);
    let outcomes: Vec<(&str, &str)> =
        done.report.workers.iter().map(|w| (w.task_id.as_str(), w.outcome.as_str())).collect();
    assert_eq!(outcomes, [("t1", "ok"), ("t2", "ok")]);

    // The first model request of each worker overlapped the other's.
    let spans = spans.lock().unwrap().clone();
    let first = |file: &str| {
        spans.iter().find(|(b, _, _)| b.contains(file)).cloned().expect("a worker request")
    };
    let (a, b) = (first("a.txt"), first("b.txt"));
    assert!(
        a.1 < b.2 && b.1 < a.2,
        "the workers' requests did not overlap: {:?} {:?}",
        (a.1, a.2),
        (b.1, b.2)
    );

    // Each worker saw its envelope only, and only its profile's tools.
    for request in done.requests_of("reader") {
        let text = request["messages"].to_string();
        assert!(!text.contains(PLAN), "a worker saw the supervisor's conversation: {text}");
        let tools = offered(&request);
        assert!(tools.contains(&"files__read".to_owned()), "{tools:?}");
        assert!(
            !tools.iter().any(|t| t.starts_with("probe__")
                || t.starts_with("echo__")
                || t == "agents__delegate"),
            "{tools:?}"
        );
    }
    // The supervisor delegates: no skill of its own (supervisor_skills is off).
    let root = done.requests_of("root");
    let tools = offered(&root[0]);
    assert!(
        tools.contains(&"agents__delegate".to_owned())
            && !tools.iter().any(|t| t.starts_with("files__")),
        "{tools:?}"
    );
    // The supervisor got both outputs, in the order it asked.
    let got = results(root.last().expect("a second root request"));
    assert!(got[0].contains("alpha") && got[0].contains("\"task_id\":\"t1\""), "{got:?}");
    assert!(got[1].contains("gamma") && got[1].contains("\"task_id\":\"t2\""), "{got:?}");

    // One log: the workers' steps under their task ids.
    assert_eq!(done.of("t1").iter().filter(|r| r["event"] == "tool_call").count(), 1);
    assert_eq!(done.of("t2").first().map(|r| r["event"].clone()), Some(json!("run_started")));
    let started: Vec<&Value> =
        done.root().into_iter().filter(|r| r["event"] == "delegation_started").collect();
    assert_eq!(started.len(), 2);
    assert_eq!(started[0]["agent"], "reader");
    let finished: Vec<&Value> =
        done.log.iter().filter(|r| r["event"] == "delegation_finished").collect();
    assert!(
        finished.iter().all(|r| r["outcome"] == "ok" && r["output"]["text"].is_string()),
        "{finished:?}"
    );
}

#[tokio::test]
async fn no_more_than_max_workers_run_at_once_and_the_rest_wait_their_turn() {
    let running = Arc::new(AtomicUsize::new(0));
    let most = Arc::new(AtomicUsize::new(0));
    let (now, peak) = (running.clone(), most.clone());
    let done =
        run("[delegation]\nmax_workers = 2\n", RunConfig::default(), move |body| {
            match who(body).as_str() {
                "root" if results(body).is_empty() => Reply::calls(&[
                    ("agents__delegate", &delegate("reader", "Read docs/a.txt, first")),
                    ("agents__delegate", &delegate("reader", "Read docs/b.txt, second")),
                    ("agents__delegate", &delegate("reader", "Read docs/a.txt, third")),
                    ("agents__delegate", &delegate("reader", "Read docs/b.txt, fourth")),
                ]),
                "root" => Reply::text("Done."),
                _ => {
                    let n = now.fetch_add(1, Ordering::SeqCst) + 1;
                    peak.fetch_max(n, Ordering::SeqCst);
                    let reply = reader(body, Duration::from_millis(300));
                    now.fetch_sub(1, Ordering::SeqCst);
                    reply
                }
            }
        })
        .await;
    assert_eq!(done.report.workers.len(), 4);
    assert!(done.report.workers.iter().all(|w| w.outcome == "ok"), "{:?}", done.report.workers);
    assert_eq!(
        most.load(Ordering::SeqCst),
        2,
        "two at a time: more would break the limit, fewer would not be parallel"
    );
}

#[tokio::test]
async fn a_run_starts_at_most_max_delegations_workers() {
    let done =
        run("[delegation]\nmax_delegations = 2\n", RunConfig::default(), |body| {
            match who(body).as_str() {
                "root" if results(body).is_empty() => Reply::calls(&[
                    ("agents__delegate", &delegate("reader", "Read docs/a.txt")),
                    ("agents__delegate", &delegate("reader", "Read docs/b.txt")),
                    ("agents__delegate", &delegate("reader", "Read docs/a.txt again")),
                ]),
                "root" => Reply::text("Done."),
                _ => reader(body, Duration::ZERO),
            }
        })
        .await;
    assert_eq!(done.report.workers.len(), 2, "{:?}", done.report.workers);
    let third = &results(done.requests_of("root").last().unwrap())[2];
    assert!(third.contains("\"LIMIT\"") && third.contains("max_delegations"), "{third}");
    assert_eq!(
        done.requests_of("reader").len(),
        4,
        "two workers, two requests each; the third never asked the model"
    );
}

#[tokio::test]
async fn a_worker_at_the_deepest_level_is_not_offered_delegation_and_is_refused_if_it_tries() {
    let done = run("", RunConfig::default(), |body| match who(body).as_str() {
        "root" if results(body).is_empty() => {
            Reply::call("agents__delegate", &delegate("boss", "Split deeper"))
        }
        "root" => Reply::text("Done."),
        // Depth 1 delegates to another boss; depth 2 tries the same anyway.
        "boss" if results(body).is_empty() => {
            Reply::call("agents__delegate", &delegate("boss", "Split deeper, again"))
        }
        "boss" => Reply::text(&json!({"text": last(body)}).to_string()),
        _ => reader(body, Duration::ZERO),
    })
    .await;
    assert_eq!(done.report.stop, Stop::Answered);
    let depth1 = done
        .requests_of("boss")
        .into_iter()
        .find(|b| !brief(b).contains("again"))
        .expect("depth 1");
    let depth2 =
        done.requests_of("boss").into_iter().find(|b| brief(b).contains("again")).expect("depth 2");
    assert!(
        offered(&depth1).contains(&"agents__delegate".to_owned()),
        "a depth-1 boss may delegate"
    );
    assert!(
        !offered(&depth2).contains(&"agents__delegate".to_owned()),
        "depth 2 is the deepest (max_depth = 2)"
    );
    let refused: Vec<&Value> =
        done.of("t1.1").into_iter().filter(|r| r["event"] == "delegation_finished").collect();
    assert_eq!(refused.len(), 1, "{:?}", done.of("t1.1"));
    assert_eq!(refused[0]["outcome"], "LIMIT");
    assert!(
        refused[0]["error"].as_str().unwrap().contains("depth 2, the deepest allowed"),
        "{}",
        refused[0]
    );
    assert!(done.log.iter().all(|r| r["worker"] != "t1.1.1"), "no worker at depth 3");
}

#[tokio::test]
async fn a_worker_calling_a_skill_outside_its_profile_is_refused_and_nothing_runs() {
    let ws = workspace();
    let planted = ws.path("notes/planted.md").display().to_string();
    let done = run_in(ws, "", RunConfig::default(), move |body| match who(body).as_str() {
        "root" if results(body).is_empty() => {
            Reply::call("agents__delegate", &delegate("reader", "Read docs/a.txt"))
        }
        "root" => Reply::text("Done."),
        // Absolute: the probe writes where it is told, if it may.
        _ if results(body).is_empty() => {
            Reply::call("probe__write", &json!({"path": planted, "content": "x"}).to_string())
        }
        _ => Reply::text(&json!({"text": results(body)[0]}).to_string()),
    })
    .await;
    assert!(
        !done.ws.path("notes/planted.md").exists(),
        "the probe skill ran for a worker whose profile is files only"
    );
    let call = done
        .of("t1")
        .into_iter()
        .find(|r| r["event"] == "tool_call")
        .expect("the call is on record")
        .clone();
    assert_eq!(
        (call["tool"].as_str(), call["decision"].as_str(), call["error_code"].as_str()),
        (Some("probe__write"), Some("denied"), Some("DENIED"))
    );
    let said = &results(&done.requests_of("reader")[1])[0];
    assert!(said.contains("agent `reader` may not use the skill `probe`"), "{said}");
}

#[tokio::test]
async fn a_worker_answer_in_the_wrong_format_is_sent_back_once_then_refused_as_invalid_output() {
    // Worker t1 fixes its answer when asked; worker t2 never does.
    let done = run("", RunConfig::default(), |body| match who(body).as_str() {
        "root" if results(body).is_empty() => Reply::calls(&[
            ("agents__delegate", &delegate("reader", "Answer about a.txt")),
            ("agents__delegate", &delegate("reader", "Answer about b.txt")),
        ]),
        "root" => Reply::text("Done."),
        _ => {
            let asked = last(body).contains("does not match the required return format");
            if asked && brief(body).contains("a.txt") {
                Reply::text(r#"{"text": "alpha"}"#)
            } else {
                Reply::text("It says alpha.")
            }
        }
    })
    .await;
    let root = done.requests_of("root");
    let got = results(root.last().unwrap());
    assert!(got[0].contains("\"status\":\"ok\"") && got[0].contains("alpha"), "{}", got[0]);
    assert!(
        got[1].contains("\"INVALID_OUTPUT\"") && got[1].contains("It says alpha."),
        "{}",
        got[1]
    );
    assert_eq!(
        done.of("t2").iter().filter(|r| r["event"] == "answer_format").count(),
        1,
        "asked once, not twice"
    );
}

#[tokio::test]
async fn the_same_delegation_again_is_refused_and_a_third_time_stops_the_run() {
    let done = run("", RunConfig::default(), |body| match who(body).as_str() {
        "root" => Reply::call("agents__delegate", &delegate("reader", "Read docs/a.txt")),
        _ => reader(body, Duration::ZERO),
    })
    .await;
    assert_eq!(done.report.stop, Stop::NoProgress);
    assert_eq!(done.report.workers.len(), 1, "the repeats ran no worker");
    let root = done.requests_of("root");
    let second = &results(&root[2])[1];
    assert!(second.contains("already ran as t1 (ok:"), "{second}");
}

#[tokio::test]
async fn every_workers_tokens_count_toward_the_runs_budget() {
    // 120 tokens a request; the worker reads forever, the run allows 600.
    let done = run("", RunConfig { token_budget: Some(600), ..RunConfig::default() }, |body| {
        match who(body).as_str() {
            "root" if results(body).is_empty() => {
                Reply::call("agents__delegate", &delegate("reader", "Read docs/a.txt"))
            }
            "root" => Reply::text("Done."),
            _ => Reply::call(
                "files__read",
                &json!({"path": "docs/a.txt", "offset": results(body).len()}).to_string(),
            ),
        }
    })
    .await;
    assert_eq!(done.report.workers[0].outcome, "BUDGET", "{:?}", done.report.workers);
    assert!(done.report.workers[0].steps < 6, "stopped by the run's budget, not its step limit");
    assert_eq!(done.report.stop, Stop::TokenBudget);
    assert!(
        done.report.total_tokens >= 600 && done.report.usage.total() < 600,
        "{} / {}",
        done.report.total_tokens,
        done.report.usage.total()
    );
}

#[tokio::test]
async fn a_supervisor_that_announces_a_delegation_and_stops_is_told_nothing_was_done() {
    let done = run("", RunConfig::default(), |body| match who(body).as_str() {
        "root" if last(body).contains("you made no agents__delegate call") => {
            Reply::call("agents__delegate", &delegate("reader", "Read docs/a.txt"))
        }
        "root" if results(body).is_empty() => {
            Reply::text("I will delegate this to the reader agent.")
        }
        "root" => Reply::text("a.txt says alpha and beta."),
        _ => reader(body, Duration::ZERO),
    })
    .await;
    assert_eq!(done.report.stop, Stop::Answered);
    assert_eq!(done.report.answer.as_deref(), Some("a.txt says alpha and beta."));
    assert_eq!(done.report.workers.len(), 1, "the announced delegation was made");
}

#[expect(unsafe_code, reason = "set_var: the name is unique to this test file")]
fn set_token() {
    // SAFETY: no other test in this binary reads or writes this variable.
    unsafe { std::env::set_var("REACH_ORCH_TOKEN", "tok-123") };
}

#[tokio::test]
async fn a_reviewer_reads_with_write_and_variables_taken_away_and_a_revise_verdict_buys_one_more_round()
 {
    set_token();
    let config = RunConfig {
        review: Some("notes/out.md exists and says alpha".into()),
        ..RunConfig::default()
    };
    let ws = workspace();
    let planted = ws.path("notes/by-reviewer.md").display().to_string();
    // The executor writes itself here (no workers involved).
    let done = run_in(ws, "[delegation]\nsupervisor_skills = true\n", config, move |body| {
        match who(body).as_str() {
            "root" if last(body).contains("A reviewer checked your work") => Reply::call(
                "files__write",
                &json!({"path": "notes/out.md", "content": "alpha"}).to_string(),
            ),
            "root" if results(body).iter().any(|r| r.contains("out.md")) => {
                Reply::text("Wrote notes/out.md.")
            }
            "root" => Reply::text("Done, alpha."),
            "reviewer" => match results(body).len() {
                // It tries to change things and to read a granted variable.
                0 => Reply::calls(&[
                    ("probe__write", &json!({"path": planted, "content": "x"}).to_string()),
                    ("probe__env", &json!({"name": "REACH_ORCH_TOKEN"}).to_string()),
                ]),
                2 if brief(body).contains("Wrote notes/out.md") => {
                    Reply::calls(&[("files__read", &json!({"path": "notes/out.md"}).to_string())])
                }
                2 => Reply::text(
                    r#"{"verdict": "revise", "issues": ["notes/out.md does not exist"]}"#,
                ),
                _ => Reply::text(r#"{"verdict": "pass", "issues": []}"#),
            },
            _ => Reply::text("?"),
        }
    })
    .await;
    assert_eq!(done.report.stop, Stop::Answered, "{:?}", done.report);
    let verdicts: Vec<Option<&str>> =
        done.report.reviews.iter().map(|r| r.verdict.map(|v| v.as_str())).collect();
    assert_eq!(verdicts, [Some("revise"), Some("pass")]);
    assert_eq!(done.report.answer.as_deref(), Some("Wrote notes/out.md."));
    assert_eq!(std::fs::read_to_string(done.ws.path("notes/out.md")).unwrap(), "alpha");
    // The reviewer's sandbox: the folder it could write as the executor is read-only, the
    // variable is gone.
    assert!(!done.ws.path("notes/by-reviewer.md").exists(), "the reviewer wrote a file");
    let first = &done.requests_of("reviewer")[1];
    let got = results(first);
    assert!(got[0].contains("error"), "the write was refused: {}", got[0]);
    assert!(!got[1].contains("tok-123"), "the reviewer read a granted variable: {}", got[1]);
    // Its tools: the readable skills, never delegation.
    assert!(!offered(first).contains(&"agents__delegate".to_owned()));
    let finished: Vec<&Value> =
        done.root().into_iter().filter(|r| r["event"] == "review_finished").collect();
    assert_eq!(finished.len(), 2);
    assert_eq!(finished[0]["issues"], json!(["notes/out.md does not exist"]));
}

#[tokio::test]
async fn cancelling_a_run_stops_its_workers_mid_call() {
    let ws = workspace();
    let extra = "[agents.waiter]\ndescription = \"Waits.\"\nskills = [\"echo\"]\n";
    let host: Host = ws.host_here(&table(&ws, extra)).await;
    let server = ScriptedModel::start_with(|body| match who(body).as_str() {
        "root" if results(body).is_empty() => {
            Reply::call("agents__delegate", &delegate("waiter", "Wait a while"))
        }
        "root" => Reply::text("Done."),
        _ if results(body).is_empty() => Reply::call("echo__wait", r#"{"ms": 1500}"#),
        _ => Reply::text(r#"{"text": "waited"}"#),
    });
    let runs = ws.path(".reach/runs");
    let agent = agent_reach::Agent::builder(host, server.client())
        .audit(agent_reach::AuditSink::Dir(runs.clone()))
        .build()
        .expect("agent");
    let run = agent.start("Have the waiter wait.").expect("started");
    let id = run.id().to_owned();
    let asked =
        |server: &ScriptedModel| server.requests().iter().filter(|b| who(b) == "waiter").count();
    let deadline = Instant::now() + Duration::from_secs(20);
    while asked(&server) == 0 {
        assert!(Instant::now() < deadline, "the worker never asked its model");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // The worker's answer holds a 1.5 s call; it is under way when the run is cancelled.
    tokio::time::sleep(Duration::from_millis(300)).await;
    run.cancel();
    tokio::time::sleep(Duration::from_millis(2_500)).await;
    assert_eq!(asked(&server), 1, "the worker went on after its run was cancelled");
    let log: Vec<Value> = std::fs::read_to_string(runs.join(format!("{id}.jsonl")))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let of_worker =
        |event: &str| log.iter().filter(|r| r["worker"] == "t1" && r["event"] == event).count();
    assert_eq!(
        (of_worker("tool_call_started"), of_worker("tool_call")),
        (1, 0),
        "the call started and never finished"
    );
    assert!(
        log.iter().all(|r| r["event"] != "run_finished"),
        "nothing finished: the run was stopped"
    );
}

#[tokio::test]
async fn a_supervisor_calling_a_skill_itself_is_refused_unless_the_table_lets_it() {
    let respond = |body: &Value| match who(body).as_str() {
        "root" if results(body).is_empty() => {
            Reply::call("files__read", r#"{"path": "docs/a.txt"}"#)
        }
        _ => Reply::text("Done."),
    };
    let done = run("", RunConfig::default(), respond).await;
    let said = &results(&done.requests_of("root")[1])[0];
    assert!(
        said.contains("\"DENIED\"")
            && said.contains("this run may not use the skill `files` itself"),
        "{said}"
    );
    let done = run("[delegation]\nsupervisor_skills = true\n", RunConfig::default(), respond).await;
    let said = &results(&done.requests_of("root")[1])[0];
    assert!(said.contains("alpha"), "{said}");
}

#[tokio::test]
async fn an_envelope_asking_for_one_step_gets_the_three_a_tool_answer_may_need() {
    let done = run("", RunConfig::default(), |body| match who(body).as_str() {
        "root" if results(body).is_empty() => {
            let mut envelope: Value =
                serde_json::from_str(&delegate("reader", "Read docs/a.txt")).unwrap();
            envelope["max_steps"] = json!(1);
            Reply::call("agents__delegate", &envelope.to_string())
        }
        "root" => Reply::text("Done."),
        _ => reader(body, Duration::ZERO),
    })
    .await;
    assert_eq!(done.report.workers[0].outcome, "ok", "{:?}", done.report.workers);
    let started =
        done.root().into_iter().find(|r| r["event"] == "delegation_started").unwrap().clone();
    assert_eq!(started["max_steps"], 3);
}

#[tokio::test]
async fn a_supervisor_that_only_delegates_is_told_to_start_with_the_first_piece_and_asked_for_the_rest_and_nobody_else_is()
 {
    // Right after the task, on every request of the run's own loop.
    let led = |body: &Value| {
        body["messages"][2]["role"] == "user"
            && body["messages"][2]["content"]
                .as_str()
                .unwrap_or("")
                .contains("Start with the first piece of the task")
    };
    let told = |body: &Value| body["messages"].to_string().contains("Start with the first piece");
    let respond = |body: &Value| match who(body).as_str() {
        "root" if results(body).is_empty() => {
            Reply::call("agents__delegate", &delegate("reader", "Read docs/a.txt"))
        }
        "root" => Reply::text("Done."),
        _ => reader(body, Duration::ZERO),
    };
    let done = run("", RunConfig::default(), respond).await;
    let root = done.requests_of("root");
    // Its answer after a delegation is questioned once, the task quoted.
    assert_eq!(root.len(), 3, "{:?}", done.report.summary());
    assert!(
        last(&root[2])
            .starts_with("[harness] The task was: Report what docs/a.txt and docs/b.txt say."),
        "{}",
        last(&root[2])
    );
    assert_eq!(done.report.answer.as_deref(), Some("Done."));
    assert!(root.iter().all(led), "{}", root[0]["messages"]);
    // Nothing of a skill's instructions for a loop with no skills, and no
    // workbench while nothing is kept on it.
    assert_eq!(offered(&root[0]), ["agents__delegate"]);
    let workers = done.requests_of("reader");
    assert!(
        !workers.is_empty() && !workers.iter().any(told),
        "a worker does its piece itself: {}",
        workers[0]["messages"]
    );
    // A supervisor with skills of its own may do a piece itself: not told to delegate.
    let done = run("[delegation]\nsupervisor_skills = true\n", RunConfig::default(), respond).await;
    assert!(!done.requests_of("root").iter().any(told));
    assert_eq!(done.requests_of("root").len(), 2, "nor asked whether a piece is left");
    assert!(offered(&done.requests_of("root")[0]).contains(&"skills__instructions".to_owned()));
}

#[tokio::test]
async fn a_worker_that_answers_in_words_at_its_last_step_still_gets_its_chance_to_give_the_format()
{
    let done = run("[delegation]\nworker_max_steps = 2\n", RunConfig::default(), |body| {
        match who(body).as_str() {
            "root" if results(body).is_empty() => {
                Reply::call("agents__delegate", &delegate("reader", "Read docs/a.txt"))
            }
            "root" => Reply::text("Done."),
            // Step 1 reads, step 2 (its last) answers in words, then JSON when asked.
            _ if results(body).is_empty() => {
                Reply::call("files__read", r#"{"path": "docs/a.txt"}"#)
            }
            _ if last(body).contains("return format") => Reply::text(r#"{"text": "alpha"}"#),
            _ => Reply::text("The file says alpha."),
        }
    })
    .await;
    let worker = &done.report.workers[0];
    assert_eq!((worker.outcome.as_str(), worker.steps), ("ok", 3), "{:?}", done.report.workers);
    let said = &results(&done.requests_of("root")[1])[0];
    assert!(said.contains(r#""output":{"text":"alpha"}"#), "{said}");
}

/// Notes a worker reads one by one until its context is compacted.
const LONG_NOTES: usize = 16;

/// A run whose `reader` worker reads [`LONG_NOTES`] notes of ~2,000
/// characters in a 6,000-token context, so its own loop compacts. Each
/// checkpoint request is answered with a short checkpoint and reported as
/// `summary_tokens` tokens; every other request as its size in tokens (four
/// characters each, as the harness estimates: it calibrates its estimate
/// to the reported usage), which comes to under 100,000 for the worker.
async fn with_a_compacting_worker(budget: Option<u64>, summary_tokens: u64) -> Done {
    let ws = workspace();
    for i in 1..=LONG_NOTES {
        ws.write(
            &format!("docs/n{i}.txt"),
            &format!(
                "Note {i}. {}\n",
                "Minutes of a long meeting about schedules and budgets. ".repeat(36)
            ),
        );
    }
    let reads = Arc::new(AtomicUsize::new(0));
    let config = RunConfig {
        token_budget: budget,
        context_tokens: Some(6_000),
        compact_at: 80,
        ..RunConfig::default()
    };
    run_in(ws, "[delegation]\nworker_max_steps = 30\n", config, move |body| {
        if body.get("tools").is_none() {
            let checkpoint = "Goal: read the notes.\n\
                              Done and found: notes read so far (files__read, step 1).\n\
                              Files produced: none.\n\
                              Left to do: the other notes.\n\
                              Next step: read the next note.";
            return Reply::text(checkpoint).with_usage(summary_tokens, 40);
        }
        let tokens =
            (body["messages"].to_string().len() + body["tools"].to_string().len()) as u64 / 4;
        let reply = match who(body).as_str() {
            "root" if results(body).is_empty() => Reply::call(
                "agents__delegate",
                &delegate("reader", "Read docs/n1.txt to docs/n16.txt, one by one"),
            ),
            "root" => Reply::text("Done."),
            _ => match reads.fetch_add(1, Ordering::SeqCst) + 1 {
                k if k <= LONG_NOTES => Reply::call(
                    "files__read",
                    &json!({"path": format!("docs/n{k}.txt")}).to_string(),
                ),
                _ => Reply::text(r#"{"text": "read them all"}"#),
            },
        };
        reply.with_usage(tokens, 20)
    })
    .await
}

#[tokio::test]
async fn a_workers_compaction_counts_toward_the_runs_budget() {
    // The worker's own requests cost under 100,000 tokens in all; its
    // checkpoint request, 1,000,000: that alone uses up the run's 200,000.
    let done = with_a_compacting_worker(Some(200_000), 1_000_000).await;
    let compactions: Vec<&Value> =
        done.of("t1").into_iter().filter(|r| r["event"] == "compaction").collect();
    assert_eq!(
        compactions.len(),
        1,
        "stopped after its first compaction: {:?}",
        done.report.workers
    );
    let worker = &done.report.workers[0];
    assert_eq!(worker.outcome, "BUDGET", "{:?}", done.report.workers);
    assert!(
        worker.steps < LONG_NOTES,
        "stopped by the run's budget, not after reading every note: {} steps",
        worker.steps
    );
    assert_eq!(done.report.stop, Stop::TokenBudget, "{}", done.report.summary());
    assert!(
        done.report.total_tokens >= 1_000_000,
        "the checkpoint's tokens are the run's: {}",
        done.report.total_tokens
    );
}

#[tokio::test]
async fn compaction_inside_a_worker_never_presents_its_brief_as_the_users_words() {
    let done = with_a_compacting_worker(None, 1_000).await;
    assert_eq!(done.report.workers[0].outcome, "ok", "{:?}", done.report.workers);
    let requests = done.server.requests();
    let at = requests.iter().position(|b| b.get("tools").is_none()).expect("the worker compacted");
    let given = brief(&done.requests_of("reader")[0]);
    assert!(given.starts_with("[worker: reader]"), "{given}");
    // The summariser is told whose words the brief is.
    let asked = requests[at]["messages"][1]["content"].as_str().unwrap_or("");
    assert!(
        asked.starts_with(
            "The task, a brief from the agent that delegated this work (not the user's words): "
        ),
        "{asked}"
    );
    assert!(!asked.contains("The user's task"), "{asked}");
    // The worker's next request: its brief still first and whole, then a
    // checkpoint that says the brief is not the user's.
    let next = &requests[at + 1];
    assert_eq!(who(next), "reader");
    assert_eq!(brief(next), given, "the brief stays first, verbatim");
    let checkpoint = next["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|m| m["content"].as_str())
        .find(|c| c.starts_with("[harness] Context compacted"))
        .expect("a checkpoint");
    assert!(
        checkpoint.contains(
            "contains no message from the user (your task above is a brief from the agent that \
             delegated this work, not the user's words)"
        ),
        "{checkpoint}"
    );
}
