//! `reach eval` as an operator or a CI job uses it: the summary table, the
//! `--json` layout, the gates and their exit codes, case-file errors that
//! point at the line, baselines and the HTML report. The model is a
//! scripted server on 127.0.0.1; the `files` skill is the real one.

use crate::support::{Reply, Server, answer, call, completion, isolated, ok};
use agent_reach_tests::guests;
use serde_json::{Value, json};
use std::path::PathBuf;
use std::process::Output;

const CASE_ID: &str = "todo-first";

/// One case: the first item of notes/todo.md.
fn case_line(id: &str) -> String {
    json!({
        "id": id,
        "domain": "files",
        "task": "What is the first item on my list in notes/todo.md?",
        "setup": {"files": {"notes/todo.md": {"content": "- renew passport\n- call the bank\n"}}},
        "policy": "[skills.files]\nlevel = \"auto\"\nread = [\"./notes\"]\n",
        "expect": {
            "tools": ["files.read"], "args": {"files.read": {"path": "notes/todo.md"}},
            "answer": {"contains": "passport"}, "must_not_tools": ["files.write"], "max_steps": 4
        }
    })
    .to_string()
}

fn read_todo() -> Reply {
    let call = json!({
        "id": "call_1", "type": "function",
        "function": {"name": "files__read", "arguments": "{\"path\": \"notes/todo.md\"}"}
    });
    ok(completion(
        json!({"role": "assistant", "content": null, "tool_calls": [call]}),
        Some(json!({"prompt_tokens": 900, "completion_tokens": 20})),
    ))
}

/// The model reads the list and answers from it.
fn passing() -> Server {
    Server::start(vec![read_todo(), answer("The first item is: renew passport.")])
}

/// The model reads the list and answers something else.
fn failing() -> Server {
    Server::start(vec![read_todo(), answer("The first item is: call the bank.")])
}

/// A temporary folder with `skills/files.wasm` and `cases.jsonl`.
struct Env {
    dir: tempfile::TempDir,
}

impl Env {
    fn new(cases: &str) -> Env {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("skills")).unwrap();
        std::fs::copy(guests::SKILL_FILES.path(), dir.path().join("skills/files.wasm")).unwrap();
        std::fs::write(dir.path().join("cases.jsonl"), cases).unwrap();
        Env { dir }
    }

    fn path(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }

    /// Also install the test skill `probe` (it reads its environment).
    fn with_probe(self) -> Env {
        std::fs::copy(guests::TEST_SKILL_PROBE.path(), self.path("skills/probe.wasm")).unwrap();
        self
    }

    /// `reach eval cases.jsonl ARGS…` in the folder, with nothing taken
    /// from this process's environment.
    fn reach(&self, args: &[&str]) -> Output {
        self.reach_with_env(args, &[])
    }

    /// [`Env::reach`] with `vars` set in its environment.
    fn reach_with_env(&self, args: &[&str], vars: &[(&str, &str)]) -> Output {
        let mut command = isolated(env!("CARGO_BIN_EXE_reach"), self.dir.path());
        command.arg("eval").arg("cases.jsonl").args(args);
        command.envs(vars.iter().copied());
        command.stdin(std::process::Stdio::null()).output().expect("run reach")
    }

    /// `reach eval` against `server`, output in `out/`.
    fn eval(&self, server: &Server, args: &[&str]) -> Output {
        self.eval_into("out", server, args)
    }

    /// `reach eval` against `server`, output in `out`.
    fn eval_into(&self, out: &str, server: &Server, args: &[&str]) -> Output {
        let base = format!("{}/v1", server.base);
        let mut all = vec!["--base-url", base.as_str(), "--model", "scripted", "--out", out];
        all.extend_from_slice(args);
        self.reach(&all)
    }
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn a_passing_run_prints_the_table_and_exits_0() {
    let env = Env::new(&(case_line(CASE_ID) + "\n"));
    let server = passing();
    let out = env.eval(&server, &[]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let text = stdout(&out);
    let lines: Vec<&str> = text.lines().collect();
    let header = "DOMAIN           CASES  RUNS    DONE  PASS@1  PASS^1   TOOLS    ARGS BOUNDARY  \
                  STEPS    TOKENS SECONDS";
    assert!(lines.contains(&header), "{text}");
    // Every figure but the seconds: 1 case, 1 run, all passed, 2 steps, 1880 tokens.
    let row = "     1     1  100.0%  100.0%  100.0%  100.0%  100.0%   100.0%    2.0      1880 ";
    for name in ["files           ", "overall         "] {
        assert!(
            lines.iter().any(|l| l.starts_with(&format!("{name}{row}"))),
            "no {name} row in\n{text}"
        );
    }
    assert!(text.contains("per run: 1850 input + 30 output tokens"), "{text}");
    assert!(
        text.contains(
            "0 answer(s) cite something no tool returned, 0 run(s) used an input nothing showed"
        ),
        "{text}"
    );
    assert!(!text.contains("failed:") && !text.contains("gate "), "{text}");
    let out_dir = env.path("out").canonicalize().unwrap();
    assert!(text.ends_with(&format!("report: {}/report.json\n", out_dir.display())), "{text}");
    let saved: Value =
        serde_json::from_str(&std::fs::read_to_string(out_dir.join("report.json")).unwrap())
            .unwrap();
    assert_eq!(saved["cases"][0]["passes"], 1);
    assert!(out_dir.join(format!("runs/{CASE_ID}-1.jsonl")).is_file(), "the run's audit log");
    assert!(
        stderr(&out).contains(&format!("[1/1] pass {CASE_ID} #1 (2 step(s), ")),
        "{}",
        stderr(&out)
    );
    assert_eq!(server.requests().len(), 2);
}

#[test]
fn json_output_has_the_documented_layout() {
    let env = Env::new(&(case_line(CASE_ID) + "\n"));
    let out = env.eval(&passing(), &["--json"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let report: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("stdout is one JSON object ({e}): {out:?}"));
    assert_eq!(report["schema"], 1);
    assert_eq!(report["model"], "scripted");
    assert_eq!(report["repeat"], 1);
    for figures in [&report["overall"], &report["by_domain"]["files"]] {
        assert_eq!(figures["cases"], 1);
        assert_eq!(figures["runs"], 1);
        assert_eq!(figures["completion"], 1.0);
        assert_eq!(figures["pass_at_1"], 1.0);
        assert_eq!(figures["pass_all"], 1.0);
        assert_eq!(figures["tool_accuracy"], 1.0);
        assert_eq!(figures["arg_accuracy"], 1.0);
        assert_eq!(figures["boundary_compliance"], 1.0);
        assert_eq!(figures["median_steps"], 2.0);
        assert_eq!(figures["mean_input_tokens"], 1850.0);
        assert_eq!(figures["mean_output_tokens"], 30.0);
    }
    assert_eq!(report["by_domain"].as_object().unwrap().len(), 1);
    assert_eq!(report["failure_kinds"], json!({}));
    assert_eq!(report["gates"], json!([]));
    let case = &report["cases"][0];
    assert_eq!(case["id"], CASE_ID);
    assert_eq!(case["source"], "cases.jsonl:1");
    let run = &case["runs"][0];
    assert_eq!(run["passed"], true);
    assert_eq!(run["stop"], "answered");
    assert_eq!(run["calls"][0]["tool"], "files.read");
    let checks: Vec<(&str, bool)> = run["checks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (c["expectation"].as_str().unwrap(), c["passed"].as_bool().unwrap()))
        .collect();
    assert_eq!(
        checks,
        [
            ("answered", true),
            ("tools", true),
            ("args", true),
            ("answer", true),
            ("must_not_tools", true),
            ("max_steps", true)
        ]
    );
}

#[test]
fn min_completion_fails_the_run_when_a_case_fails() {
    let env = Env::new(&(case_line(CASE_ID) + "\n"));
    let out = env.eval(&failing(), &["--min-completion", "100"]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let text = stdout(&out);
    assert!(
        text.contains("gate min_completion: FAILED — completion 0.0% (at least 100% required)"),
        "{text}"
    );
    assert!(
        text.contains(&format!(
            "failed:\n  {CASE_ID} #1: answer: the answer does not contain [\"passport\"]"
        )),
        "{text}"
    );
    assert!(
        text.contains(&format!("runs/{CASE_ID}-1.jsonl")),
        "the failed run's audit log is named: {text}"
    );
    assert!(stderr(&out).contains(&format!("[1/1] FAIL {CASE_ID} #1")), "{}", stderr(&out));

    let out = env.eval_into("out2", &failing(), &["--min-completion", "0"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let text = stdout(&out);
    assert!(
        text.contains("gate min_completion: holds — completion 0.0% (at least 0% required)"),
        "{text}"
    );
    assert!(
        text.contains(&format!("  {CASE_ID} #1: answer: the answer does not contain")),
        "failed on its answer: {text}"
    );
}

#[test]
fn an_unknown_key_in_a_case_file_exits_2_naming_the_file_line_and_key() {
    let bad = case_line("second").replace("\"expect\"", "\"expct\"");
    let env = Env::new(&format!("{}\n{bad}\n", case_line(CASE_ID)));
    let server = passing();
    let out = env.eval(&server, &[]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let err = stderr(&out);
    assert!(err.contains("cases.jsonl:2: unknown field `expct`"), "{err}");
    assert!(out.stdout.is_empty(), "{}", stdout(&out));
    assert_eq!(server.requests().len(), 0, "nothing runs from a broken case set");
}

#[test]
fn only_that_matches_nothing_exits_2() {
    let env = Env::new(&(case_line(CASE_ID) + "\n"));
    let server = passing();
    let out = env.eval(&server, &["--only", "nope"]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(
        stderr(&out).contains("--only nope: no case has this id or domain (domains: files)"),
        "{}",
        stderr(&out)
    );
    assert_eq!(server.requests().len(), 0);
}

#[test]
fn a_case_that_passed_in_the_baseline_and_fails_now_is_a_regression() {
    let env = Env::new(&(case_line(CASE_ID) + "\n"));
    let out = env.eval(&passing(), &["--save-baseline", "b.json"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let saved: Value =
        serde_json::from_str(&std::fs::read_to_string(env.path("b.json")).unwrap()).unwrap();
    assert_eq!(saved["schema"], 1);
    assert_eq!(saved["cases"], json!({CASE_ID: {"passes": 1, "runs": 1}}));

    let out = env.eval_into("out2", &failing(), &["--baseline", "b.json"]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let text = stdout(&out);
    assert!(
        text.contains(&format!("  {CASE_ID} #1: answer: the answer does not contain")),
        "failed on its answer: {text}"
    );
    assert!(text.contains("against b.json: completion 100.0% → 0.0%"), "{text}");
    assert!(text.contains(&format!("  regression  {CASE_ID}: 1/1 → 0/1")), "{text}");
    assert!(
        text.contains("gate baseline: FAILED — 1 regression(s), 0 improvement(s) against b.json"),
        "{text}"
    );

    let out = env.eval_into("out3", &passing(), &["--baseline", "b.json"]);
    assert_eq!(out.status.code(), Some(0), "the same result again is no regression: {out:?}");
    let text = stdout(&out);
    assert!(text.contains("against b.json: completion 100.0% → 100.0%"), "{text}");
    assert!(
        text.contains("gate baseline: holds — 0 regression(s), 0 improvement(s) against b.json"),
        "{text}"
    );
}

#[test]
fn an_out_folder_with_an_earlier_evaluation_is_refused_not_failed_run_by_run() {
    // It used to run every case and fail each at setup ("audit log …: File
    // exists"), which a baseline then reported as regressions.
    let env = Env::new(&(case_line(CASE_ID) + "\n"));
    let out = env.eval(&passing(), &[]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let server = passing();
    let out = env.eval(&server, &[]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let err = stderr(&out);
    assert!(
        err.contains("--out out: ")
            && err.contains("already holds an evaluation's audit logs; give a new or empty folder"),
        "{err}"
    );
    assert_eq!(server.requests().len(), 0, "nothing ran");
    let out = env.eval_into("out", &passing(), &["--list"]);
    assert_eq!(out.status.code(), Some(0), "listing needs no output folder: {out:?}");
}

#[test]
fn html_writes_one_page_with_the_case() {
    let env = Env::new(&(case_line(CASE_ID) + "\n"));
    let out = env.eval(&failing(), &["--html", "r.html"]);
    assert_eq!(out.status.code(), Some(0), "no gate was asked for: {out:?}");
    let page = std::fs::read_to_string(env.path("r.html")).expect("r.html written");
    assert!(page.starts_with("<!doctype html>"), "{}", &page[..page.len().min(200)]);
    assert!(
        page.contains(CASE_ID) && page.contains("does not contain"),
        "the case and why it failed"
    );
    assert!(stderr(&out).contains("HTML report: r.html"), "{}", stderr(&out));
}

#[test]
fn list_shows_the_cases_without_asking_a_model() {
    let env =
        Env::new(&format!("{}\n// a comment\n{}\n", case_line(CASE_ID), case_line("todo-second")));
    let server = passing();
    for args in [vec![], vec!["--base-url", "http://127.0.0.1:9/v1"]] {
        let mut all = args.clone();
        all.push("--list");
        let out = env.reach(&all);
        assert_eq!(out.status.code(), Some(0), "{out:?}");
        let text = stdout(&out);
        assert!(text.starts_with("ID"), "{text}");
        assert!(
            text.contains(&format!("{CASE_ID:<28} files           What is the first item")),
            "{text}"
        );
        assert!(text.contains("todo-second") && text.ends_with("2 case(s)\n"), "{text}");
    }
    let out = env.eval(&server, &["--list", "--only", "todo-second"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert!(
        !stdout(&out).contains(CASE_ID) && stdout(&out).ends_with("1 case(s)\n"),
        "{}",
        stdout(&out)
    );
    assert_eq!(server.requests().len(), 0, "listing runs nothing");
    assert!(!env.path("out").exists(), "listing writes nothing");
}

/// A case with `policy` whose model lists `/etc`.
fn granting(id: &str, policy: &str) -> String {
    json!({
        "id": id, "domain": "trust", "task": "What is in /etc?", "policy": policy,
        "expect": {"tools": ["files.list"]}
    })
    .to_string()
}

#[test]
fn a_case_granting_more_than_its_working_folder_and_fixture_server_is_refused_unless_trusted() {
    let cases = [
        granting("reads-etc", "[skills.files]\nlevel = \"auto\"\nread = [\"/etc\"]\n"),
        granting(
            "reaches-out",
            "[skills.files]\n\
             level = \"auto\"\n\
             read = [\"./notes\"]\n\
             net = [\"127.0.0.1:{port}\", \"example.com\"]\n",
        ),
        granting("takes-home", "[skills.files]\nlevel = \"auto\"\nenv = [\"HOME\"]\n"),
        case_line(CASE_ID),
    ];
    let env = Env::new(&(cases.join("\n") + "\n"));
    let server = passing();
    for args in [vec![], vec!["--list"]] {
        let out = env.eval(&server, &args);
        assert_eq!(out.status.code(), Some(2), "{out:?}");
        let err = stderr(&out);
        let refused = [
            concat!(
                "error: 3 case(s) refused:\n",
                r#"cases.jsonl:1: reads-etc: the case's permission table grants more than a case "#,
                r#"may: skills.files.read "/etc" is /etc, outside the case's working folder; a "#,
                r#"case may grant only folders inside it"#,
            ),
            concat!(
                r#"cases.jsonl:2: reaches-out: the case's permission table grants more than a "#,
                r#"case may: skills.files.net "example.com" reaches more than the case's fixture "#,
                r#"server; a case may grant only "127.0.0.1:{port}"; pass --trust-cases"#,
            ),
            concat!(
                r#"cases.jsonl:3: takes-home: the case's permission table grants more than a "#,
                r#"case may: skills.files.env "HOME" hands the skill a variable of the runner's "#,
                r#"environment; a case may not grant environment variables; pass --trust-cases"#,
            ),
        ];
        for line in refused {
            assert!(err.contains(line), "{line}\nnot in:\n{err}");
        }
        assert!(!err.contains(CASE_ID), "a confined case is not refused: {err}");
        assert!(out.stdout.is_empty(), "{}", stdout(&out));
    }
    assert_eq!(server.requests().len(), 0, "nothing runs from a case set with a refused case");

    let server = Server::start(vec![
        call("files__list", json!({"path": "/etc"})),
        answer("It holds the system's configuration."),
    ]);
    let out = env.eval(&server, &["--only", "reads-etc", "--trust-cases"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert!(
        stderr(&out).contains(
            "warning: --trust-cases: every case's permission table is granted as written, \
             without a person"
        ),
        "{}",
        stderr(&out)
    );
    let report: Value =
        serde_json::from_str(&std::fs::read_to_string(env.path("out/report.json")).unwrap())
            .unwrap();
    let call = &report["cases"][0]["runs"][0]["calls"][0];
    assert_eq!(
        (call["tool"].as_str(), call["outcome"].as_str()),
        (Some("files.list"), Some("ok")),
        "trusted, /etc is granted: {call}"
    );
    assert_eq!(server.requests().len(), 2);
}

#[test]
fn an_environment_value_a_trusted_case_grants_never_appears_in_what_the_eval_writes_or_the_model_sees()
 {
    const NAME: &str = "REACH_EVAL_DEPLOY_TOKEN";
    const VALUE: &str = "tok-9f3a7c21e5-never-shown";
    let case = json!({
        "id": "deploy-token", "domain": "env", "task": "What is my deploy token?",
        "policy": format!("[skills.probe]\nlevel = \"auto\"\nenv = [\"{NAME}\"]\n"),
        // Fails, so that the answer is quoted in the summary and the progress line too.
        "expect": {"tools": ["probe.env"], "answer": {"contains": "not in the answer"}}
    });
    let env = Env::new(&format!("{case}\n")).with_probe();
    // The model is given the value only if it is left unmasked; it repeats what it got.
    let server = Server::start(vec![
        call("probe__env", json!({"name": NAME})),
        answer(&format!("Your deploy token is {VALUE}.")),
    ]);
    let base = format!("{}/v1", server.base);
    let args = [
        "--base-url",
        base.as_str(),
        "--model",
        "scripted",
        "--out",
        "out",
        "--trust-cases",
        "--html",
        "r.html",
    ];
    let out = env.reach_with_env(&args, &[(NAME, VALUE)]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");

    let report_text = std::fs::read_to_string(env.path("out/report.json")).unwrap();
    let report: Value = serde_json::from_str(&report_text).unwrap();
    let run = &report["cases"][0]["runs"][0];
    assert_eq!(run["calls"][0]["outcome"], "ok", "{run}");
    assert!(
        run["calls"][0]["result"].as_str().unwrap().contains("[REDACTED]"),
        "the skill read the variable: {run}"
    );
    assert!(run["answer"].as_str().unwrap().contains("[REDACTED]"), "{run}");
    let mut written = vec![
        ("stdout", stdout(&out)),
        ("stderr", stderr(&out)),
        ("report.json", report_text.clone()),
        ("r.html", std::fs::read_to_string(env.path("r.html")).unwrap()),
        (
            "the audit log",
            std::fs::read_to_string(env.path("out/runs/deploy-token-1.jsonl")).unwrap(),
        ),
    ];
    written.extend(server.requests().iter().enumerate().map(|(i, r)| {
        (if i == 0 { "model request 1" } else { "model request 2" }, r.body.clone())
    }));
    assert_eq!(written.len(), 7, "two model requests");
    for (what, text) in written {
        assert!(!text.contains(VALUE), "{what} holds the granted value:\n{text}");
    }
}

#[test]
fn an_evaluation_recorded_once_replays_without_a_model_server() {
    let env = Env::new(&(case_line(CASE_ID) + "\n"));
    let server = passing();
    let out = env.eval(&server, &["--json", "--record", "recorded"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let recorded: Value = serde_json::from_slice(&out.stdout).expect("json");
    assert!(env.path(&format!("recorded/{CASE_ID}-1.jsonl")).exists());
    assert_eq!(server.requests().len(), 2);
    drop(server);

    // No --base-url, no server: the recorded replies stand in for the model.
    let out = env.reach(&["--json", "--replay", "recorded", "--out", "replayed"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let replayed: Value = serde_json::from_slice(&out.stdout).expect("json");
    let run = |r: &Value| r["cases"][0]["runs"][0].clone();
    assert_eq!(run(&replayed)["passed"], true, "{replayed:#}");
    for field in ["checks", "stop", "steps"] {
        assert_eq!(run(&replayed)[field], run(&recorded)[field], "{field}");
    }
    // The same calls (their results name each run's own working folder).
    let calls = |r: &Value| {
        let calls = run(r)["calls"].as_array().cloned().unwrap_or_default();
        calls
            .iter()
            .map(|c| (c["tool"].clone(), c["arguments"].clone(), c["outcome"].clone()))
            .collect::<Vec<_>>()
    };
    assert_eq!(calls(&replayed), calls(&recorded));
    assert_eq!(replayed["overall"]["completion"], 1.0);

    // A repeat that was not recorded fails at setup, saying why.
    let out = env.reach(&["--json", "--replay", "recorded", "--out", "again", "--repeat", "2"]);
    let again: Value = serde_json::from_slice(&out.stdout).expect("json");
    let second = &again["cases"][0]["runs"][1];
    assert_eq!(second["passed"], false);
    let said = second.to_string();
    assert!(said.contains("no recorded run") && said.contains("--record"), "{said}");
}
