//! Agent Skills bundles' Python scripts, run by the Python runner
//! component inside the sandbox with exactly the bundle's grants: the
//! fixture bundle (`tests/fixtures/bundles/csv-report`, shaped like the
//! format's public examples) runs its script and imports its vendored
//! module; reading outside the grants or reaching an ungranted host is
//! `DENIED`; a shell script is never run. And the same bundle in a run,
//! disclosed progressively to a scripted model: catalogue, activation,
//! its tools appended, one file read.

use agent_reach::harness::{BundleBody, RunConfig};
use agent_reach::model::{OpenAiClient, OpenAiConfig};
use agent_reach::{ErrorCode, NeverConfirm};
use agent_reach_tests::guests;
use agent_reach_tests::openai::{Reply, ScriptedModel};
use agent_reach_tests::{TestServer, Workspace, call, workspace};
use serde_json::{Value, json};
use std::path::Path;

/// A workspace with the runner and the fixture bundle, plus `extra`
/// scripts (name, source) written into its `scripts/`.
fn ws(extra: &[(&str, &str)]) -> Workspace {
    let ws = Workspace::new();
    ws.mkdir("skills/runners");
    std::fs::copy(guests::RUNNER_PYTHON.path(), ws.path("skills/runners/python.wasm"))
        .expect("install the runner");
    copy_dir(&workspace().join("tests/fixtures/bundles/csv-report"), &ws.path("skills/csv-report"));
    for (name, source) in extra {
        ws.write(&format!("skills/csv-report/scripts/{name}"), source);
    }
    ws.write("data/sales.csv", "region,amount\nNorth,10\nSouth,5\nNorth,7.5\n");
    ws.write("private/secret.txt", "not for scripts\n");
    ws
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let path = entry.unwrap().path();
        let target = to.join(path.file_name().unwrap());
        if path.is_dir() {
            copy_dir(&path, &target);
        } else {
            std::fs::copy(&path, &target).unwrap();
        }
    }
}

fn table(ws: &Workspace, extra: &str) -> String {
    format!(
        "[skills.csv-report]\nlevel = \"auto\"\nread = [\"{}\"]\n{extra}",
        ws.path("data").display()
    )
}

#[tokio::test]
async fn a_bundles_script_runs_in_the_sandbox_with_its_vendored_module() {
    let ws = ws(&[]);
    let host = ws.host(&table(&ws, "")).await;
    let manifest = &host.registry().active_bundle("csv-report").expect("active").manifest;
    let tools: Vec<&str> =
        manifest.as_ref().unwrap().tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(tools, ["run_script"]);
    let path = ws.path("data/sales.csv");
    let out = call(
        &host,
        "csv-report.run_script",
        json!({"script": "scripts/report.py", "args": [path.to_str().unwrap()]}),
    )
    .await
    .expect("the script runs");
    assert!(out.starts_with("# Report: sales.csv"), "{out}");
    assert!(out.contains("3 rows, 2 columns"), "{out}");
    assert!(out.contains("| amount | total 22.5, mean 7.5 |"), "{out}");
    assert!(out.contains("| region | most common: North (2×) |"), "the vendored table: {out}");
}

#[tokio::test]
async fn reading_outside_the_grants_is_denied_and_so_is_an_ungranted_host() {
    let server = TestServer::start();
    let peek = "import sys\nprint(open(sys.argv[1]).read())\n";
    let fetch =
        "import sys, urllib.request\nprint(urllib.request.urlopen(sys.argv[1]).read().decode())\n";
    let ws = ws(&[("peek.py", peek), ("fetch.py", fetch)]);
    let host = ws.host(&table(&ws, "")).await;
    let secret = ws.path("private/secret.txt");
    let err = call(
        &host,
        "csv-report.run_script",
        json!({"script": "scripts/peek.py", "args": [secret.to_str().unwrap()]}),
    )
    .await
    .unwrap_err();
    assert_eq!(err.code, ErrorCode::Denied, "{err}");
    assert!(err.message.contains("secret.txt"), "names the path: {err}");
    // Inside the grant: read.
    let granted = ws.path("data/sales.csv");
    let out = call(
        &host,
        "csv-report.run_script",
        json!({"script": "scripts/peek.py", "args": [granted.to_str().unwrap()]}),
    )
    .await
    .expect("a granted file is read");
    assert!(out.contains("North,10"), "{out}");

    let url = server.url("/hello");
    let err =
        call(&host, "csv-report.run_script", json!({"script": "scripts/fetch.py", "args": [url]}))
            .await
            .unwrap_err();
    assert_eq!(err.code, ErrorCode::Denied, "{err}");
    assert!(err.message.contains(&server.addr.to_string()), "names the host: {err}");

    // Granted to the bundle: the same script reaches it.
    let host = ws.host(&table(&ws, &format!("net = [\"{}\"]\n", server.addr))).await;
    let out =
        call(&host, "csv-report.run_script", json!({"script": "scripts/fetch.py", "args": [url]}))
            .await
            .expect("a granted host answers");
    assert!(out.contains("hello from /hello"), "{out}");
}

#[tokio::test]
async fn only_listed_unchanged_python_scripts_run() {
    let ws = ws(&[]);
    let host = ws.host(&table(&ws, "")).await;
    // A shell script is not on the menu, so the schema refuses it.
    let err = call(&host, "csv-report.run_script", json!({"script": "scripts/install.sh"}))
        .await
        .unwrap_err();
    assert_eq!(err.code, ErrorCode::InvalidArgs, "{err}");
    let entry = host.registry().active_bundle("csv-report").unwrap();
    let sh = entry.scripts.iter().find(|s| s.path == "scripts/install.sh").unwrap();
    assert!(sh.cannot_run.as_deref().unwrap().contains("never run"), "{sh:?}");
    // Changed on disk after the scan: refused, not run.
    ws.write("skills/csv-report/scripts/report.py", "print('swapped')\n");
    let err = call(&host, "csv-report.run_script", json!({"script": "scripts/report.py"}))
        .await
        .unwrap_err();
    assert_eq!(err.code, ErrorCode::Denied, "{err}");
    assert!(err.message.contains("changed since the bundle was loaded"), "{err}");
}

#[tokio::test]
async fn a_failing_script_says_how_and_the_bundle_folder_is_read_only() {
    let write = "open(__file__ + '.bak', 'w').write('x')\n";
    let ws = ws(&[
        ("fail.py", "import sys\nprint('usage: fail.py N', file=sys.stderr)\nsys.exit(2)\n"),
        ("write.py", write),
    ]);
    let host = ws.host(&table(&ws, "")).await;
    let err = call(&host, "csv-report.run_script", json!({"script": "scripts/fail.py"}))
        .await
        .unwrap_err();
    assert_eq!(err.code, ErrorCode::Failed, "{err}");
    assert!(err.message.contains("status 2") && err.message.contains("usage: fail.py"), "{err}");
    let err = call(&host, "csv-report.run_script", json!({"script": "scripts/write.py"}))
        .await
        .unwrap_err();
    assert_eq!(err.code, ErrorCode::Denied, "{err}");
    assert!(!ws.path("skills/csv-report/scripts/write.py.bak").exists());
}

fn tool_names(request: &Value) -> Vec<String> {
    request["tools"].as_array().map_or_else(Vec::new, |t| {
        t.iter().map(|t| t["function"]["name"].as_str().unwrap().to_owned()).collect()
    })
}

fn last_tool_result(request: &Value) -> String {
    let messages = request["messages"].as_array().unwrap();
    let last = messages.iter().rev().find(|m| m["role"] == "tool").expect("a tool result");
    last["content"].as_str().unwrap_or_default().to_owned()
}

#[tokio::test]
async fn a_run_sees_the_catalogue_then_the_instructions_then_the_tools() {
    let ws = ws(&[]);
    let config = RunConfig { bundle_body: BundleBody::OnActivation, ..RunConfig::default() };
    let host = ws.host(&table(&ws, "")).await;
    let csv = ws.path("data/sales.csv").display().to_string();
    let server = ScriptedModel::start(vec![
        Reply::call("skills__open", r#"{"skill": "csv-report"}"#),
        Reply::call(
            "csv-report__run_script",
            &json!({"script": "scripts/report.py", "args": [csv]}).to_string(),
        ),
        Reply::call("skills__read", r#"{"skill": "csv-report", "path": "references/FORMAT.md"}"#),
        Reply::call("skills__open", r#"{"skill": "csv-report"}"#),
        Reply::text("Done."),
    ]);
    let model = OpenAiClient::new(OpenAiConfig::new(server.base_url(), "scripted")).unwrap();
    let agent =
        agent_reach_tests::agent(host, model, NeverConfirm, config, Some(ws.path(".reach/runs")));
    let report = agent_reach_tests::run(agent, "bundle", "Summarise data/sales.csv").await;
    assert_eq!(report.answer.as_deref(), Some("Done."), "{}", report.summary());
    let requests = server.requests();

    // Tier 1: the catalogue, no bundle tool yet.
    let first = tool_names(&requests[0]);
    assert!(first.contains(&"skills__open".to_owned()), "{first:?}");
    assert!(first.contains(&"skills__read".to_owned()), "{first:?}");
    assert!(!first.iter().any(|n| n.starts_with("csv-report__")), "{first:?}");
    let open = requests[0]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["function"]["name"] == "skills__open")
        .unwrap()
        .to_string();
    assert!(open.contains("csv-report — Summarise a CSV file"), "{open}");

    // Tier 2: the body and the files; the tool appended, the rest unchanged.
    let opened = last_tool_result(&requests[1]);
    assert!(opened.starts_with("[skill csv-report] instructions"), "{opened}");
    assert!(opened.contains("Run `scripts/report.py` with the CSV file's path"), "{opened}");
    assert!(opened.contains("references/FORMAT.md"), "lists the files: {opened}");
    assert!(!opened.contains("two-column table"), "not their contents: {opened}");
    assert!(opened.contains("scripts/install.sh"), "says what cannot run: {opened}");
    let second = tool_names(&requests[1]);
    assert_eq!(&second[..first.len()], &first[..], "the prefix stays the same");
    assert_eq!(&second[first.len()..], ["csv-report__run_script"]);

    // The script's output, then tier 3.
    assert!(last_tool_result(&requests[2]).contains("# Report: sales.csv"));
    assert!(last_tool_result(&requests[3]).contains("two-column table"));
    // Opened again: not sent twice.
    let again = last_tool_result(&requests[4]);
    assert!(again.contains("already open") && !again.contains("## Steps"), "{again}");
}

/// Up front: the bundle the task's words match is open before the first
/// request — its instructions after the task, its tools offered — and a
/// task that matches none sees only the catalogue.
#[tokio::test]
async fn up_front_the_bundle_the_task_matches_is_open_from_the_first_request() {
    let config = RunConfig { bundle_body: BundleBody::UpFront, ..RunConfig::default() };
    let ws = ws(&[]);
    let csv = ws.path("data/sales.csv").display().to_string();
    let server = ScriptedModel::start(vec![
        Reply::call("skills__open", r#"{"skill": "csv-report"}"#),
        Reply::text("Done."),
        Reply::text("Four."),
    ]);
    let model = OpenAiClient::new(OpenAiConfig::new(server.base_url(), "scripted")).unwrap();
    let host = ws.host(&table(&ws, "")).await;
    let agent = agent_reach_tests::agent(host, model, NeverConfirm, config.clone(), None);
    let task = format!("Write a summary report of the CSV file {csv}");
    let report = agent_reach_tests::run(agent, "matched", &task).await;
    assert_eq!(report.answer.as_deref(), Some("Done."), "{}", report.summary());
    let requests = server.requests();
    let first = &requests[0];
    assert!(tool_names(first).contains(&"csv-report__run_script".to_owned()), "{first}");
    let text = first["messages"].to_string();
    assert!(
        text.contains("The skill csv-report matches this task, so it is open already"),
        "{text}"
    );
    assert!(text.contains("Run `scripts/report.py` with the CSV file's path"), "the body: {text}");
    let again = last_tool_result(&requests[1]);
    assert!(again.contains("already open") && !again.contains("## Steps"), "{again}");

    let host = ws.host(&table(&ws, "")).await;
    let model = OpenAiClient::new(OpenAiConfig::new(server.base_url(), "scripted")).unwrap();
    let agent = agent_reach_tests::agent(host, model, NeverConfirm, config, None);
    let report = agent_reach_tests::run(agent, "unmatched", "What is two plus two?").await;
    assert_eq!(report.answer.as_deref(), Some("Four."), "{}", report.summary());
    let unmatched = &server.requests()[2];
    assert!(!tool_names(unmatched).iter().any(|n| n.starts_with("csv-report__")), "{unmatched}");
    assert!(!unmatched["messages"].to_string().contains("open already"), "{unmatched}");
}

#[tokio::test]
async fn the_shipped_bundles_load_and_their_scripts_run_in_the_sandbox() {
    let ws = Workspace::new();
    ws.mkdir("skills/runners");
    std::fs::copy(guests::RUNNER_PYTHON.path(), ws.path("skills/runners/python.wasm")).unwrap();
    for bundle in ["incident-triage", "release-notes"] {
        copy_dir(
            &workspace().join("skills-src/bundles").join(bundle),
            &ws.path(&format!("skills/{bundle}")),
        );
    }
    ws.mkdir("notes");
    let host = ws
        .host(&format!(
            "[skills.incident-triage]\nlevel = \"auto\"\nwrite = [\"{}\"]\n\n[skills.release-notes]\nlevel = \"auto\"\n",
            ws.path("notes").display()
        ))
        .await;
    for bundle in ["incident-triage", "release-notes"] {
        let entry =
            host.registry().active_bundle(bundle).unwrap_or_else(|| panic!("{bundle} is active"));
        assert!(entry.bundle.as_ref().unwrap().problems.is_empty(), "{bundle}: no warnings");
    }
    let incident = json!({
        "title": "Checkout failing with 502", "severity": "sev2",
        "start": "2024-05-01T03:12:07Z", "end": "2024-05-01T03:40:55Z",
        "impact": "61 checkout requests failed", "cause": "payment gateway timeouts",
        "evidence": ["61 × 502 on /api/checkout"], "next_steps": ["retry with backoff"]
    });
    let out_file = ws.path("notes/incident.md");
    let out = call(
        &host,
        "incident-triage.run_script",
        json!({
            "script": "scripts/incident_note.py",
            "args": ["--out", out_file.to_str().unwrap()],
            "stdin": incident.to_string()
        }),
    )
    .await
    .expect("the note is written");
    assert!(out.starts_with("# Incident: Checkout failing with 502"), "{out}");
    assert!(out.contains("**Severity:** SEV2") && out.contains("**Duration:** 28 min"), "{out}");
    let saved = std::fs::read_to_string(&out_file).expect("saved in the granted folder");
    assert!(saved.contains("## Next steps\n- retry with backoff"), "{saved}");

    let subjects = "feat(api): add bulk export\nfix: crash when the cart is empty\nMerge branch 'main'\n\
                    chore: bump deps\nfix: escape titles (CVE-2024-1234)\n";
    let out = call(
        &host,
        "release-notes.run_script",
        json!({"script": "scripts/changelog.py", "args": ["1.4.0", "2024-06-01"], "stdin": subjects}),
    )
    .await
    .expect("the entry is printed");
    assert!(out.starts_with("## [1.4.0] - 2024-06-01"), "{out}");
    assert!(out.contains("### Added\n- Add bulk export"), "{out}");
    assert!(out.contains("### Security\n- Escape titles (CVE-2024-1234)"), "{out}");
    assert!(!out.contains("bump deps") && !out.contains("Merge"), "{out}");
}

/// How many times `text` occurs in the request's messages.
fn occurrences(request: &Value, text: &str) -> usize {
    request["messages"].to_string().matches(text).count()
}

#[tokio::test]
async fn an_open_bundles_instructions_survive_compaction_once() {
    let ws = ws(&[]);
    ws.install(guests::SKILL_FILES);
    let filler =
        "Minutes: schedules, budgets and the usual risks were discussed at length. ".repeat(12);
    for i in 1..=12 {
        ws.write(&format!("data/note{i}.txt"), &format!("Note {i}. {filler}\n"));
    }
    let data = ws.path("data");
    let policy = format!(
        "{}\n[skills.files]\nlevel = \"auto\"\nread = [\"{}\"]\n",
        table(&ws, ""),
        data.display()
    );
    let host = ws.host(&policy).await;
    let normal = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let n = normal.clone();
    let server = ScriptedModel::start_with(move |body| {
        // A summary request (no tools): a faithful checkpoint.
        if body.get("tools").is_none() {
            return Reply::text("Goal: read the notes.\nLeft to do: read the rest.");
        }
        // Tokens as a server would count them, so the harness learns the real size.
        let tokens =
            (body["messages"].to_string().len() + body["tools"].to_string().len()) as u64 / 3;
        let k = n.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let reply = match k {
            0 => Reply::call("skills__open", r#"{"skill": "csv-report"}"#),
            1..=12 => Reply::call(
                "files__read",
                &json!({"path": data.join(format!("note{k}.txt"))}).to_string(),
            ),
            _ => Reply::text("Done."),
        };
        reply.with_usage(tokens, 20)
    });
    let model = OpenAiClient::new(OpenAiConfig::new(server.base_url(), "scripted")).unwrap();
    let config = RunConfig {
        max_steps: 20,
        context_tokens: Some(6_000),
        compact_at: 80,
        ..RunConfig::default()
    };
    let agent =
        agent_reach_tests::agent(host, model, NeverConfirm, config, Some(ws.path(".reach/runs")));
    let report = agent_reach_tests::run(agent, "long", "Read every note in data/").await;
    assert_eq!(report.answer.as_deref(), Some("Done."), "{}", report.summary());
    let all = server.requests();
    assert!(
        all.iter().any(|r| r.get("tools").is_none()),
        "a compaction was asked for: {} requests, {}",
        all.len(),
        report.summary()
    );
    let requests: Vec<Value> = all.into_iter().filter(|r| r.get("tools").is_some()).collect();
    let compacted_at =
        requests.iter().position(|r| occurrences(r, "kept through compaction") > 0).expect(
            "twelve notes of ~250 tokens cannot fit 3,200 tokens: the instructions were put back",
        );
    let body = "Run `scripts/report.py` with the CSV file's path";
    for (i, request) in requests.iter().enumerate().skip(2) {
        // Opened at the first step: from the next request on, the instructions
        // are there exactly once, before and after every compaction.
        assert_eq!(occurrences(request, body), 1, "request {i} (compacted at {compacted_at})");
        assert!(tool_names(request).contains(&"csv-report__run_script".to_owned()), "request {i}");
    }
}
