//! `reach runs show` and `reach runs list` on the log of a run that
//! delegated: workers' records interleave in the run's one log file, and
//! are read back as a tree.

use serde_json::{Value, json};
use std::path::Path;
use std::process::{Command, Output};

/// `reach ARGS…` in `dir`, with no runs folder from this process's environment.
fn reach(dir: &Path, args: &[&str]) -> Output {
    let out = Command::new(env!("CARGO_BIN_EXE_reach"))
        .args(args)
        .current_dir(dir)
        .env_remove("REACH_RUNS_DIR")
        .stdin(std::process::Stdio::null())
        .output()
        .expect("run reach");
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    out
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// `records` as the lines of `DIR/ID.jsonl`, each with a time a second
/// after the one before.
fn write_log(dir: &Path, id: &str, records: &[Value]) {
    std::fs::create_dir_all(dir).unwrap();
    let text: String = records
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let mut r = r.clone();
            r["time"] = json!(format!("2026-12-02T10:{:02}:{:02}.000Z", i / 60, i % 60));
            r["run_id"] = json!(id);
            format!("{r}\n")
        })
        .collect();
    std::fs::write(dir.join(format!("{id}.jsonl")), text).unwrap();
}

/// A worker's record: the harness's own, with the worker's task id and profile.
fn of(task: &str, agent: &str, mut record: Value) -> Value {
    record["worker"] = json!(task);
    record["worker_agent"] = json!(agent);
    record
}

fn usage(input: u64, output: u64) -> Value {
    json!({"input_tokens": input, "output_tokens": output, "estimated": false})
}

fn request(step: u64, latency_ms: u64, tool_calls: u64) -> Value {
    json!({
        "event": "model_request", "step": step, "model": "m", "latency_ms": latency_ms,
        "usage": usage(100, 10), "tool_calls": tool_calls
    })
}

fn run_finished(stop: &str, steps: u64, answer: Option<&str>) -> Value {
    json!({
        "event": "run_finished", "stop": {"reason": stop}, "answer": answer, "steps": steps,
        "usage": usage(300, 30), "tool_calls": 1
    })
}

fn call_started(step: u64, call: u64, tool: &str, arguments: Value) -> Value {
    json!({
        "event": "tool_call_started", "step": step, "call": call, "tool": tool, "skill": null,
        "arguments": arguments
    })
}

fn call_done(
    step: u64,
    call: u64,
    tool: &str,
    arguments: Value,
    error_code: Option<&str>,
) -> Value {
    json!({
        "event": "tool_call", "step": step, "call": call, "tool": tool, "skill": null,
        "arguments": arguments, "decision": "auto", "duration_ms": 5,
        "outcome": if error_code.is_some() { "error" } else { "ok" }, "error_code": error_code,
        "result_bytes": 40
    })
}

fn delegation_started(
    step: u64,
    call: u64,
    task_id: &str,
    agent: &str,
    depth: u64,
    task: &str,
) -> Value {
    json!({
        "event": "delegation_started", "step": step, "call": call, "task_id": task_id,
        "agent": agent, "depth": depth, "task": task, "expected_output": "a summary", "max_steps": 8
    })
}

/// `outcome`: the output, or the error code and message.
fn delegation_finished(
    step: u64,
    call: u64,
    task_id: &str,
    agent: &str,
    outcome: Result<Value, (&str, &str)>,
    steps: u64,
) -> Value {
    let (outcome, error, output) = match outcome {
        Ok(output) => ("ok", None, output),
        Err((code, error)) => (code, Some(error), Value::Null),
    };
    json!({
        "event": "delegation_finished", "step": step, "call": call, "task_id": task_id,
        "agent": agent, "outcome": outcome, "error": error, "output": output, "steps": steps,
        "usage": usage(800, 100), "duration_ms": 1500
    })
}

/// A run that delegated to t1 (which delegated to t1.1) and t2 at once,
/// had a third delegation refused, and was reviewed once. Escapes in what
/// the workers wrote.
fn tree_log() -> Vec<Value> {
    let delegate = |task: &str| json!({"agent": "web", "task": task});
    vec![
        json!({
            "event": "run_started", "task": "Compare the two pages", "model": "big",
            "tools": ["agents__delegate"], "context_tokens": 8192
        }),
        request(1, 10, 2),
        call_started(1, 1, "agents__delegate", delegate("Summarize page A")),
        delegation_started(1, 1, "t1", "web", 1, "Summarize page A"),
        call_started(1, 2, "agents__delegate", delegate("Summarize page B")),
        delegation_started(1, 2, "t2", "web", 1, "Summarize page B\u{1b}[2J"),
        of(
            "t1",
            "web",
            json!({
                "event": "run_started", "task": "[worker] the brief", "model": "small",
                "tools": ["web__fetch"], "context_tokens": 4096
            }),
        ),
        of(
            "t2",
            "web",
            json!({
                "event": "run_started", "task": "[worker] the brief", "model": "small",
                "tools": ["web__fetch"], "context_tokens": 4096
            }),
        ),
        of("t1", "web", request(1, 111, 1)),
        of("t2", "web", request(1, 222, 1)),
        // Written by t1, for its own worker.
        of("t1", "web", delegation_started(1, 1, "t1.1", "files", 2, "Read the page source")),
        of("t2", "web", call_started(1, 1, "web__fetch", json!({"url": "https://b.example"}))),
        of(
            "t1.1",
            "files",
            json!({
                "event": "run_started", "task": "[worker] the brief", "model": "small",
                "tools": ["files__read"], "context_tokens": 4096
            }),
        ),
        of("t1.1", "files", request(1, 333, 1)),
        of("t1.1", "files", call_started(1, 1, "files__read", json!({"path": "a.html"}))),
        of("t2", "web", call_done(1, 1, "web__fetch", json!({"url": "https://b.example"}), None)),
        of("t1.1", "files", call_done(1, 1, "files__read", json!({"path": "a.html"}), None)),
        of("t1.1", "files", run_finished("max_steps", 9, None)),
        of("t1", "web", delegation_finished(1, 1, "t1.1", "files", Ok(json!("the source")), 9)),
        of("t2", "web", request(2, 224, 0)),
        of("t1", "web", request(2, 112, 0)),
        of("t1", "web", run_finished("answered", 2, Some("A is red\u{1b}[31m"))),
        of("t2", "web", run_finished("answered", 2, Some("B, no url"))),
        delegation_finished(1, 1, "t1", "web", Ok(json!({"summary": "A is red\u{1b}[31m"})), 2),
        call_done(1, 1, "agents__delegate", delegate("Summarize page A"), None),
        delegation_finished(1, 2, "t2", "web", Err(("INVALID_OUTPUT", "missing `url`")), 2),
        call_done(1, 2, "agents__delegate", delegate("Summarize page B"), Some("INVALID_OUTPUT")),
        request(2, 20, 1),
        call_started(2, 3, "agents__delegate", json!({"agent": "nope", "task": "x"})),
        json!({
            "event": "delegation_finished", "step": 2, "call": 3, "task_id": null, "agent": "nope",
            "outcome": "LIMIT", "error": "no more than 2 workers", "output": null, "steps": 0,
            "usage": usage(0, 0), "duration_ms": 0
        }),
        call_done(2, 3, "agents__delegate", json!({"agent": "nope", "task": "x"}), Some("LIMIT")),
        request(3, 30, 0),
        json!({
            "event": "review_started", "round": 1, "task_id": "review1",
            "criteria": "Both pages compared"
        }),
        of(
            "review1",
            "reviewer",
            json!({
                "event": "run_started", "task": "[worker] the brief", "model": "small", "tools": [],
                "context_tokens": 4096
            }),
        ),
        of("review1", "reviewer", request(1, 444, 0)),
        of("review1", "reviewer", run_finished("answered", 1, Some("{\"verdict\": \"revise\"}"))),
        json!({
            "event": "review_finished", "round": 1, "task_id": "review1", "verdict": "revise",
            "issues": ["no source", "too long"], "error": null, "usage": usage(50, 5),
            "duration_ms": 700
        }),
        run_finished("answered", 3, Some("Page A is red; B unknown")),
    ]
}

/// The index of the one line containing `text`.
fn at(lines: &[&str], text: &str) -> usize {
    let found: Vec<usize> =
        lines.iter().enumerate().filter(|(_, l)| l.contains(text)).map(|(i, _)| i).collect();
    assert_eq!(
        found.len(),
        1,
        "want one line with {text:?}, got {found:?} in:\n{}",
        lines.join("\n")
    );
    found[0]
}

#[test]
fn runs_show_puts_each_workers_steps_under_its_delegation() {
    let dir = tempfile::tempdir().unwrap();
    let runs = dir.path().join("logs");
    write_log(&runs, "r-tree", &tree_log());
    let shown = stdout(&reach(
        dir.path(),
        &["runs", "show", "r-tree", "--runs-dir", runs.to_str().unwrap()],
    ));
    let lines: Vec<&str> = shown.lines().collect();
    // After the `HH:MM:SS  ` column: four spaces a level.
    for (text, want) in [
        ("run r-tree — model \"big\"", "run r-tree"),
        ("worker t1 (web) started — model \"small\"", "    worker t1"),
        ("worker t1.1 (files) started", "        worker t1.1"),
        ("step 1: model answered in 10 ms", "step 1"),
        ("↳ worker t1 (web, depth 1): Summarize page A", "  ↳ worker t1"),
        ("model answered in 111 ms", "    step 1"),
        ("↳ worker t1.1 (files, depth 2): Read the page source", "      ↳ worker t1.1"),
        ("model answered in 333 ms", "        step 1"),
        ("files__read path=a.html [auto] → ok", "          files__read"),
        ("finished: max_steps after 9 step(s)", "        finished"),
        ("↳ t1.1 done: ok in 1500 ms, 9 step(s), 900 tokens → the source", "      ↳ t1.1 done"),
        ("↳ worker t2 (web, depth 1): Summarize page B", "  ↳ worker t2"),
        ("model answered in 222 ms", "    step 1"),
        ("↳ t1 done: ok in 1500 ms, 2 step(s), 900 tokens → summary=A is red", "  ↳ t1 done"),
        ("↳ t2 failed: INVALID_OUTPUT: missing `url`", "  ↳ t2 failed"),
        ("↳ delegation to nope not run: LIMIT: no more than 2 workers", "  ↳ delegation to nope"),
        ("↳ review 1 (review1): Both pages compared", "  ↳ review 1"),
        ("model answered in 444 ms", "    step 1"),
        ("↳ review 1: revise — no source; too long", "  ↳ review 1: revise"),
        ("finished: answered after 3 step(s)", "finished"),
    ] {
        let line = lines[at(&lines, text)];
        assert!(
            line.get(10..).is_some_and(|rest| rest.starts_with(want)),
            "{line:?} should start with {want:?} after the time"
        );
    }
    // Each worker's steps between its own start and the next worker's.
    let (t1, t1_1, t2, t2_done) = (
        at(&lines, "↳ worker t1 "),
        at(&lines, "↳ worker t1.1"),
        at(&lines, "↳ worker t2"),
        at(&lines, "t2 failed"),
    );
    for text in ["in 111 ms", "in 112 ms", "in 333 ms", "answer: A is red"] {
        assert!(
            (t1..t2).contains(&at(&lines, text)),
            "{text:?} is t1's, under t1's header:\n{shown}"
        );
    }
    assert!(
        (t1_1..t2).contains(&at(&lines, "in 333 ms"))
            && at(&lines, "in 112 ms") > at(&lines, "t1.1 done"),
        "{shown}"
    );
    for text in ["in 222 ms", "in 224 ms", "web__fetch url=https://b.example", "answer: B, no url"]
    {
        assert!(
            (t2..t2_done).contains(&at(&lines, text)),
            "{text:?} is t2's, under t2's header:\n{shown}"
        );
    }
    // The calls that delegated are shown too, once each.
    assert_eq!(lines.iter().filter(|l| l.contains("agents__delegate")).count(), 3, "{shown}");
    // What workers wrote is escaped.
    assert!(!shown.contains('\u{1b}'), "{shown}");
    assert!(
        shown.contains("answer: A is red\\u{1b}[31m")
            && shown.contains("Summarize page B\\u{1b}[2J"),
        "{shown}"
    );
}

#[test]
fn runs_show_json_nests_workers_with_their_records() {
    let dir = tempfile::tempdir().unwrap();
    let runs = dir.path().join("logs");
    write_log(&runs, "r-tree", &tree_log());
    let out = reach(
        dir.path(),
        &["runs", "show", "r-tree", "--runs-dir", runs.to_str().unwrap(), "--json"],
    );
    let tree: Value = serde_json::from_slice(&out.stdout).expect("one JSON object");
    let events = |records: &Value| -> Vec<String> {
        records
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["event"].as_str().unwrap().to_owned())
            .collect()
    };
    assert_eq!(tree["run_id"], "r-tree");
    assert!(tree["log"].as_str().unwrap().ends_with("r-tree.jsonl"), "{}", tree["log"]);
    let root = events(&tree["records"]);
    assert_eq!(root.first().map(String::as_str), Some("run_started"));
    assert_eq!(
        root.iter().filter(|e| *e == "run_finished").count(),
        1,
        "only the run's own: {root:?}"
    );
    assert_eq!(root.iter().filter(|e| *e == "delegation_finished").count(), 3, "{root:?}");
    assert!(
        tree["records"]
            .as_array()
            .unwrap()
            .iter()
            .all(|r| r["event"] != "model_request" || r["latency_ms"].as_u64() < Some(100)),
        "{root:?}"
    );

    let workers = tree["workers"].as_array().unwrap();
    let ids: Vec<&str> = workers.iter().map(|w| w["task_id"].as_str().unwrap()).collect();
    assert_eq!(ids, ["t1", "t2"], "the refused delegation started no worker");
    let t1 = &workers[0];
    assert_eq!(
        (&t1["agent"], &t1["depth"], &t1["task"], &t1["outcome"], &t1["steps"]),
        (&json!("web"), &json!(1), &json!("Summarize page A"), &json!("ok"), &json!(2))
    );
    assert_eq!(t1["output"]["summary"], "A is red\u{1b}[31m", "records and outputs are as written");
    assert_eq!(t1["usage"], usage(800, 100));
    assert_eq!(t1["duration_ms"], 1500);
    assert!(t1["started"].is_string() && t1["finished"].is_string(), "{t1}");
    assert_eq!(
        events(&t1["records"]),
        [
            "run_started",
            "model_request",
            "delegation_started",
            "delegation_finished",
            "model_request",
            "run_finished"
        ]
    );
    let t1_1 = &t1["workers"][0];
    assert_eq!(t1["workers"].as_array().unwrap().len(), 1);
    assert_eq!(
        (&t1_1["task_id"], &t1_1["agent"], &t1_1["depth"]),
        (&json!("t1.1"), &json!("files"), &json!(2))
    );
    assert_eq!(t1_1["task"], "Read the page source");
    assert_eq!(
        events(&t1_1["records"]),
        ["run_started", "model_request", "tool_call_started", "tool_call", "run_finished"]
    );
    let t2 = &workers[1];
    assert_eq!((&t2["outcome"], &t2["error"]), (&json!("INVALID_OUTPUT"), &json!("missing `url`")));
    assert_eq!(
        events(&t2["records"]),
        [
            "run_started",
            "model_request",
            "tool_call_started",
            "tool_call",
            "model_request",
            "run_finished"
        ]
    );
    assert_eq!(t2["workers"], json!([]));

    let reviews = tree["reviews"].as_array().unwrap();
    assert_eq!(reviews.len(), 1);
    assert_eq!(
        (&reviews[0]["round"], &reviews[0]["task_id"], &reviews[0]["verdict"]),
        (&json!(1), &json!("review1"), &json!("revise"))
    );
    assert_eq!(reviews[0]["issues"], json!(["no source", "too long"]));
    assert_eq!(events(&reviews[0]["records"]), ["run_started", "model_request", "run_finished"]);
}

#[test]
fn a_worker_whose_start_is_missing_is_shown_after_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let runs = dir.path().join("logs");
    // Cut at the start: t1's delegation_started went missing.
    write_log(
        &runs,
        "r-cut",
        &[
            json!({
                "event": "run_started", "task": "Compare", "model": "big", "tools": [],
                "context_tokens": 8192
            }),
            of("t1", "web", request(1, 111, 0)),
            request(1, 10, 0),
            of("t1", "web", run_finished("answered", 1, Some("orphan answer"))),
            run_finished("answered", 1, Some("done")),
        ],
    );
    let shown = stdout(&reach(
        dir.path(),
        &["runs", "show", "r-cut", "--runs-dir", runs.to_str().unwrap()],
    ));
    let lines: Vec<&str> = shown.lines().collect();
    let header = at(&lines, "↳ worker t1: no delegation_started");
    assert!(header > at(&lines, "answer: done"), "after the run's own timeline:\n{shown}");
    assert!(
        at(&lines, "in 111 ms") > header
            && lines[at(&lines, "in 111 ms")][10..].starts_with("    step 1"),
        "{shown}"
    );
    assert!(at(&lines, "answer: orphan answer") > header, "{shown}");
}

#[test]
fn runs_list_takes_the_stop_and_task_from_the_run_not_from_a_worker() {
    let dir = tempfile::tempdir().unwrap();
    let runs = dir.path().join("logs");
    // t1.1's `run_finished` (max_steps) is the log's first.
    write_log(&runs, "r-tree", &tree_log());
    // An odd log: a worker's records before the run's own.
    write_log(
        &runs,
        "r-odd",
        &[
            of(
                "t1",
                "web",
                json!({
                    "event": "run_started", "task": "[worker] the brief", "model": "small",
                    "tools": [], "context_tokens": 4096
                }),
            ),
            of("t1", "web", run_finished("max_steps", 7, None)),
            json!({
                "event": "run_started", "task": "Compare", "model": "big", "tools": [],
                "context_tokens": 8192
            }),
            run_finished("answered", 3, Some("done")),
        ],
    );
    let listed: Value = serde_json::from_slice(
        &reach(dir.path(), &["runs", "list", "--json", "--runs-dir", runs.to_str().unwrap()])
            .stdout,
    )
    .unwrap();
    let runs = listed["runs"].as_array().unwrap();
    let run = |id: &str| {
        runs.iter().find(|r| r["run_id"] == id).unwrap_or_else(|| panic!("{id} in {listed}"))
    };
    let tree = run("r-tree");
    assert_eq!(
        (&tree["task"], &tree["model"], &tree["stop"], &tree["steps"]),
        (&json!("Compare the two pages"), &json!("big"), &json!("answered"), &json!(3))
    );
    assert_eq!(tree["workers"], 4, "t1, t1.1, t2 and review1 ran; t3 was refused");
    assert!(
        tree["tool_calls"].is_u64() && tree["log"].is_string() && tree["started"].is_string(),
        "{tree}"
    );
    let odd = run("r-odd");
    assert_eq!(
        (&odd["task"], &odd["model"], &odd["stop"], &odd["steps"]),
        (&json!("Compare"), &json!("big"), &json!("answered"), &json!(3))
    );
    assert_eq!(odd["workers"], 1);
}

/// `reach ARGS…` in the fixture folder of logs written by earlier code
/// (`fixtures/audit`, see its README): its stdout.
fn on_fixtures(args: &[&str]) -> String {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/audit");
    stdout(&reach(&root, args))
}

/// What `reach runs` of commit 4e47d81 printed for the same command.
fn printed_before(name: &str) -> String {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/audit/expected").join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn runs_list_prints_what_it_printed_for_logs_earlier_code_wrote() {
    for dir in ["runs", "rotated", "rotated-cut"] {
        for (json, ext) in [(false, "txt"), (true, "json")] {
            let mut args = vec!["runs", "list", "--runs-dir", dir];
            if json {
                args.push("--json");
            }
            let want = printed_before(&format!("{dir}.list.{ext}"));
            assert_eq!(on_fixtures(&args), want, "reach {}", args.join(" "));
        }
    }
}

#[test]
fn runs_show_prints_what_it_printed_for_logs_earlier_code_wrote() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/audit");
    let mut shown = 0;
    for entry in std::fs::read_dir(root.join("expected")).unwrap() {
        let name = entry.unwrap().file_name().to_string_lossy().into_owned();
        let Some((run, ext)) = name.split_once(".show.") else { continue };
        // A rotated log is shown from its own folder.
        let (dir, id) = match run {
            "rotated" | "rotated-cut" => (run, "mcp"),
            _ => ("runs", run),
        };
        let mut args = vec!["runs", "show", id, "--runs-dir", dir];
        if ext == "json" {
            args.push("--json");
        }
        assert_eq!(on_fixtures(&args), printed_before(&name), "reach {}", args.join(" "));
        shown += 1;
    }
    assert_eq!(shown, 29, "every output kept is compared");
}
