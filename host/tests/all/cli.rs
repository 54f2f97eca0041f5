//! The `reach` binary as an operator or a script uses it: exit codes, JSON
//! output, configuration errors that point at the line to fix.

use crate::support::{Server, answer, call, isolated, status};
use agent_reach_tests::guests;
use agent_reach_tests::recorder::Recorder;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::Output;

struct Env {
    dir: tempfile::TempDir,
}

impl Env {
    fn new(policy: &str) -> Env {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("skills")).unwrap();
        std::fs::create_dir_all(dir.path().join("docs")).unwrap();
        std::fs::create_dir_all(dir.path().join("notes")).unwrap();
        std::fs::write(dir.path().join("docs/a.txt"), "alpha\nbeta\n").unwrap();
        std::fs::copy(guests::SKILL_FILES.path(), dir.path().join("skills/files.wasm")).unwrap();
        std::fs::write(dir.path().join("reach.toml"), policy).unwrap();
        Env { dir }
    }

    /// `reach ARGS…` in the folder, with no policy, skills folder or model
    /// taken from this process's environment.
    fn reach(&self, args: &[&str]) -> Output {
        let mut command = isolated(env!("CARGO_BIN_EXE_reach"), self.dir.path());
        command.args(args);
        command.stdin(std::process::Stdio::null()).output().expect("run reach")
    }

    /// `reach run TASK ARGS… --json` against `server`.
    fn run(&self, server: &Server, task: &str, args: &[&str]) -> (Output, Value) {
        let base = format!("{}/v1", server.base);
        let mut all = vec!["run", task, "--json", "--base-url", &base, "--model", "scripted"];
        all.extend_from_slice(args);
        let out = self.reach(&all);
        let report = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("stdout is one JSON report ({e}): {out:?}"));
        (out, report)
    }
}

const POLICY: &str = "[skills.files]\n\
    level = \"auto\"\n\
    read = [\"./docs\"]\n\
    write = [\"./notes\"]\n\
    [skills.files.tools.write]\n\
    level = \"confirm\"\n";

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

#[test]
fn call_prints_the_result_and_exits_0() {
    let env = Env::new(POLICY);
    let out = env.reach(&["call", "files.read", r#"{"path": "docs/a.txt"}"#]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let json: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(json["content"], "alpha\nbeta\n");
}

#[test]
fn a_tool_error_is_one_json_object_and_exit_1() {
    let env = Env::new(POLICY);
    let out = env.reach(&["call", "files.read", r#"{"path": "/etc/passwd"}"#]);
    assert_eq!(out.status.code(), Some(1));
    let json: serde_json::Value =
        serde_json::from_str(stdout(&out).trim()).expect("one JSON object");
    assert_eq!(json["status"], "error");
    assert_eq!(json["error_code"], "DENIED");
    assert!(json["error"].as_str().unwrap().contains("/etc/passwd"));

    let out = env.reach(&["call", "files.read", r#"{"path": 1}"#]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stdout(&out).contains("INVALID_ARGS"));
    let out = env.reach(&["call", "files.nope", "{}"]);
    assert!(stdout(&out).contains("NO_SUCH_TOOL"));
}

#[test]
fn confirm_level_refuses_without_a_terminal_unless_yes() {
    let env = Env::new(POLICY);
    let args = r#"{"path": "notes/x.md", "content": "hi"}"#;
    let out = env.reach(&["call", "files.write", args]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stdout(&out).contains("DENIED") && stdout(&out).contains("--yes"), "{}", stdout(&out));
    assert!(!env.dir.path().join("notes/x.md").exists());
    let out = env.reach(&["call", "files.write", args, "--yes"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert_eq!(std::fs::read_to_string(env.dir.path().join("notes/x.md")).unwrap(), "hi");
}

#[test]
fn skills_list_json_is_stable() {
    let env = Env::new(POLICY);
    std::fs::write(env.dir.path().join("skills/broken.wasm"), "nope").unwrap();
    let out = env.reach(&["skills", "list", "--json"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let json: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    let skills = json["skills"].as_array().unwrap();
    let files = skills.iter().find(|s| s["name"] == "files").unwrap();
    assert_eq!(files["status"], "active");
    assert_eq!(files["tools"], serde_json::json!(["list", "read", "write", "search"]));
    let broken = skills.iter().find(|s| s["status"] == "broken").unwrap();
    assert!(broken["reason"].as_str().unwrap().contains("not a WebAssembly file"));
}

#[test]
fn inspect_shows_what_the_policy_grants() {
    let env = Env::new(POLICY);
    let out = env.reach(&["skills", "inspect", "files", "--json"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let json: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(json["grants"]["level"], "auto");
    assert_eq!(json["grants"]["tool_levels"]["write"], "confirm");
    assert!(json["grants"]["write"][0]["path"].as_str().unwrap().ends_with("/notes"));
    assert_eq!(json["manifest"]["name"], "files");
}

#[test]
fn inspect_names_the_toolchain_and_what_each_import_reaches_under_the_grants() {
    let env = Env::new(&format!("{POLICY}[skills.data]\nlevel = \"auto\"\n"));
    std::fs::copy(guests::SKILL_DATA.path(), env.dir.path().join("skills/data.wasm")).unwrap();
    let out = env.reach(&["skills", "inspect", "data"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let text = stdout(&out);
    assert!(text.contains("built with: Python (componentize-py)"), "{text}");
    assert!(
        text.contains(
            "wasi:http/outgoing-handler@0.2.12: no `net` grant: every request will be refused"
        ),
        "{text}"
    );
    assert!(text.contains("no folder granted: it sees no files"), "{text}");
    let out = env.reach(&["skills", "inspect", "files", "--json"]);
    let json: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert!(json["toolchain"]["language"].as_str().unwrap().starts_with("Rust"), "{json}");
    let preopens = json["imports"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["name"].as_str().unwrap().starts_with("wasi:filesystem/preopens"))
        .expect("files imports the preopens");
    assert_eq!(preopens["note"], "1 read-only and 1 writable folder(s)", "{json}");
}

#[test]
fn a_bad_policy_exits_2_naming_the_file_and_line() {
    let env = Env::new("[skills.files]\nlevel = \"auto\"\nnet = [\"*.\"]\n");
    let out = env.reach(&["skills", "list"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("reach.toml:3"), "{err}");
    assert!(err.contains("net"), "{err}");
}

#[test]
fn an_override_for_a_tool_that_does_not_exist_stops_every_command() {
    let env = Env::new(
        "[skills.files]\nlevel = \"auto\"\n[skills.files.tools.delete]\nlevel = \"deny\"\n",
    );
    for args in [
        &["policy", "check"][..],
        &["call", "files.read", "{\"path\": \"docs/a.txt\"}"],
        &["skills", "list"],
    ] {
        let out = env.reach(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {out:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains(
                "reach.toml:3: [skills.files.tools.delete]: skill files has no tool `delete`"
            ),
            "{args:?}: {err}"
        );
    }
    let env = Env::new(POLICY);
    let out = env.reach(&["policy", "check"]);
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
}

#[test]
fn usage_errors_exit_2() {
    let env = Env::new(POLICY);
    let out = env.reach(&["call", "no-dot-here", "{}"]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn an_env_credential_reaches_the_server_but_never_the_output_or_the_logs() {
    const SECRET: &str = "tok-from-env-5d41402abc4b2a76";
    // An "echo my headers" endpoint: the request's head is the answer's body.
    let server = Recorder::start();
    let addr = server.addr;
    let policy = format!(
        "[skills.http_api]\n\
         level = \"auto\"\n\
         net = [\"{addr}\"]\n\n\
         [[skills.http_api.credentials]]\n\
         host = \"{addr}\"\n\
         env = \"REACH_TEST_API_TOKEN\"\n\
         header = \"Authorization\"\n\
         prefix = \"Bearer \"\n\
         allow_http = true\n"
    );
    let env = Env::new(&policy);
    std::fs::copy(guests::SKILL_HTTP_API.path(), env.dir.path().join("skills/http_api.wasm"))
        .unwrap();
    let out = isolated(env!("CARGO_BIN_EXE_reach"), env.dir.path())
        .args(["-vvv", "--log-format", "json", "call", "http_api.request"])
        .arg(serde_json::json!({"method": "GET", "url": format!("http://{addr}/me")}).to_string())
        .env("REACH_TEST_API_TOKEN", SECRET)
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let head = server.heads().first().cloned().expect("one request");
    assert!(head.contains(&format!("authorization: Bearer {SECRET}")), "the server got it: {head}");
    let (stdout, stderr) = (stdout(&out), String::from_utf8_lossy(&out.stderr).into_owned());
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    assert!(!stdout.contains(SECRET), "not in the result: {stdout}");
    assert!(!stderr.contains(SECRET), "not in the logs: {stderr}");
    assert!(stdout.contains("authorization: [REDACTED]"), "{stdout}");
    assert!(stderr.contains("added at egress"), "the injection itself is logged: {stderr}");
}

#[test]
fn run_without_a_model_says_how_to_configure_one() {
    let env = Env::new(POLICY);
    let out = env.reach(&["run", "list the docs"]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("no model endpoint is configured") && err.contains("just local-model"),
        "{err}"
    );
}

#[test]
fn run_answers_with_a_json_report_exit_0_and_the_run_can_be_listed_and_shown() {
    let env = Env::new(POLICY);
    let file = env.dir.path().join("docs/a.txt");
    let server = Server::start(vec![
        call("files__read", json!({"path": file})),
        answer("It says alpha and beta."),
    ]);
    let (out, report) = env.run(&server, "What does docs/a.txt say?", &[]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert_eq!(report["stop"]["reason"], "answered");
    assert_eq!(report["answer"], "It says alpha and beta.");
    assert_eq!(report["steps"], 2);
    assert_eq!(report["usage"]["input_tokens"], 1850);
    assert_eq!(report["actions"][0]["tool"], "files__read");
    assert_eq!(report["actions"][0]["decision"], "auto");
    assert_eq!(report["actions"][0]["outcome"], "ok");
    let requests = server.requests();
    assert_eq!(requests[0].path, "/v1/chat/completions");
    assert!(requests[1].body.contains("alpha"), "the file's content went back to the model");
    let body: Value = serde_json::from_str(&requests[0].body).unwrap();
    assert_eq!(body["max_tokens"], 1024, "a model on this machine cannot loop for minutes");
    drop(requests);

    let run_id = report["run_id"].as_str().unwrap();
    let log = Path::new(report["audit_log"].as_str().unwrap());
    assert!(
        log.starts_with(env.dir.path().join(".reach/runs")) || log.starts_with(".reach/runs"),
        "{log:?}"
    );
    let listed: Value =
        serde_json::from_slice(&env.reach(&["runs", "list", "--json"]).stdout).unwrap();
    assert_eq!(listed["runs"][0]["run_id"], run_id);
    assert_eq!(listed["runs"][0]["stop"], "answered");
    assert_eq!(listed["runs"][0]["tool_calls"], 1);
    let shown = stdout(&env.reach(&["runs", "show", &run_id[..18]]));
    assert!(
        shown.contains("files__read") && shown.contains("answer: It says alpha and beta."),
        "{shown}"
    );
}

#[test]
fn a_limit_exits_3_and_a_failing_model_exits_1() {
    let env = Env::new(POLICY);
    let docs = env.dir.path().join("docs");
    let server = Server::start(vec![call("files__list", json!({"path": docs}))]);
    let (out, report) = env.run(&server, "List the docs", &["--max-steps", "1"]);
    assert_eq!(out.status.code(), Some(3), "{out:?}");
    assert_eq!(report["stop"]["reason"], "max_steps");
    assert_eq!(report["actions"][0]["outcome"], "ok", "the call of the last step still ran");

    let server =
        Server::start(vec![status(404, r#"{"error": {"message": "model 'scripted' not found"}}"#)]);
    let (out, report) = env.run(&server, "List the docs", &[]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert_eq!(report["stop"]["reason"], "model_error");
    assert!(report["stop"]["detail"].as_str().unwrap().contains("not found"), "{report}");
}

#[test]
fn a_confirm_call_without_a_terminal_is_refused_unless_yes() {
    let env = Env::new(POLICY);
    let note = env.dir.path().join("notes/n.md");
    let write = || call("files__write", json!({"path": note, "content": "# N\n"}));
    // The answer right after the refusal is asked about once.
    let server = Server::start(vec![
        write(),
        answer("I could not write it."),
        answer("I could not write it."),
    ]);
    let (out, report) = env.run(&server, "Write a note", &[]);
    assert_eq!(out.status.code(), Some(0), "the model was told and answered: {out:?}");
    assert_eq!(report["actions"][0]["decision"], "declined");
    assert_eq!(report["actions"][0]["outcome"], "DENIED");
    assert!(server.requests()[1].body.contains("DENIED"), "the model saw the refusal");
    assert!(!note.exists());

    let server = Server::start(vec![write(), answer("Written.")]);
    let (out, report) = env.run(&server, "Write a note", &["--yes"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert_eq!(report["actions"][0]["decision"], "confirmed");
    assert_eq!(std::fs::read_to_string(&note).unwrap(), "# N\n");
}

fn sha256_of(path: &Path) -> String {
    use sha2::Digest as _;
    format!("{:x}", sha2::Sha256::digest(std::fs::read(path).unwrap()))
}

fn listed(env: &Env) -> Value {
    let out = env.reach(&["skills", "list", "--json"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    serde_json::from_slice(&out.stdout).unwrap()
}

fn skill<'a>(list: &'a Value, file: &str) -> &'a Value {
    let skills = list["skills"].as_array().unwrap();
    skills
        .iter()
        .find(|s| s["path"].as_str().unwrap().ends_with(file))
        .unwrap_or_else(|| panic!("{file} in {list}"))
}

#[test]
fn skills_list_shows_each_files_sha256_even_when_broken() {
    let env = Env::new(POLICY);
    std::fs::write(env.dir.path().join("skills/broken.wasm"), "nope").unwrap();
    let digest = sha256_of(&env.dir.path().join("skills/files.wasm"));
    let out = env.reach(&["skills", "list"]);
    let text = stdout(&out);
    assert!(
        text.starts_with("NAME             VERSION    STATUS      DIGEST        TOOLS / REASON\n"),
        "{text}"
    );
    let row = text.lines().find(|l| l.starts_with("files ")).unwrap();
    assert!(row.contains(&format!(" active      {}  list, read", &digest[..12])), "{row}");

    let list = listed(&env);
    assert_eq!(skill(&list, "files.wasm")["sha256"], digest.as_str());
    assert_eq!(skill(&list, "files.wasm")["pinned"], false);
    let nope = sha256_of(&env.dir.path().join("skills/broken.wasm"));
    assert_eq!(skill(&list, "broken.wasm")["sha256"], nope.as_str(), "read, though not a skill");
}

#[test]
fn skills_pin_prints_the_lines_to_add_and_the_pin_holds() {
    let env = Env::new("");
    let digest = sha256_of(&env.dir.path().join("skills/files.wasm"));
    let out = env.reach(&["skills", "pin", "files"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert_eq!(
        stdout(&out),
        format!("[skills.files]\nsha256 = \"{digest}\"\n"),
        "exactly the lines to add"
    );

    // Into a table that already lists the skill: only the key.
    std::fs::write(env.dir.path().join("reach.toml"), POLICY).unwrap();
    let out = env.reach(&["skills", "pin", "files"]);
    assert_eq!(stdout(&out), format!("sha256 = \"{digest}\"\n"));
    assert!(
        String::from_utf8_lossy(&out.stderr)
            .contains("add this line to [skills.files] (./reach.toml line 1)"),
        "{out:?}"
    );

    let pinned =
        POLICY.replacen("level = \"auto\"\n", &format!("level = \"auto\"\n{}", stdout(&out)), 1);
    std::fs::write(env.dir.path().join("reach.toml"), &pinned).unwrap();
    assert_eq!(skill(&listed(&env), "files.wasm")["pinned"], true);
    assert_eq!(skill(&listed(&env), "files.wasm")["status"], "active");
    let out = env.reach(&["skills", "pin", "files"]);
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("line 3 already pins `files` to this file"),
        "{out:?}"
    );

    // A newer, correctly named file is refused while the pin stands; `pin`
    // names it and says which line to replace to accept it.
    std::fs::write(
        env.dir.path().join("skills/files-9.9.9.wasm"),
        agent_reach_tests::echo_variant("files", "9.9.9"),
    )
    .unwrap();
    let newer = sha256_of(&env.dir.path().join("skills/files-9.9.9.wasm"));
    let list = listed(&env);
    assert_eq!(skill(&list, "files.wasm")["status"], "active");
    let refused = skill(&list, "files-9.9.9.wasm");
    assert_eq!(refused["status"], "broken");
    let reason = refused["reason"].as_str().unwrap();
    assert!(
        reason.contains(&digest) && reason.contains(&newer) && reason.contains("reach.toml line 3"),
        "{reason}"
    );
    let out = env.reach(&["skills", "pin", "files"]);
    assert_eq!(stdout(&out), format!("sha256 = \"{newer}\"\n"));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!(
            "line 3 pins `files` to another file (sha256 {digest}); replace that line"
        )),
        "{err}"
    );

    let out = env.reach(&["skills", "pin", "nope"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no skill named `nope`"), "{out:?}");
}

#[test]
fn skills_list_reports_an_upgrade_once_and_inspect_keeps_it() {
    // No per-tool override: the upgrade drops every tool the table could name.
    let env = Env::new("[skills.files]\nlevel = \"auto\"\nread = [\"./docs\"]\n");
    let before = listed(&env);
    assert_eq!(
        skill(&before, "files.wasm")["previous"],
        Value::Null,
        "first sight is not an upgrade"
    );
    let old_version = skill(&before, "files.wasm")["version"].as_str().unwrap().to_owned();
    assert!(env.dir.path().join(".reach/skills-seen.json").is_file());

    // A newer `files` that asks for other tools takes over the name's grants.
    std::fs::write(
        env.dir.path().join("skills/files-9.9.9.wasm"),
        agent_reach_tests::echo_variant("files", "9.9.9"),
    )
    .unwrap();
    let out = env.reach(&["skills", "list"]);
    let notice = format!(
        "upgraded from {old_version} (new tools: echo, wait; removed: list, read, write, search) \
         — review: reach skills inspect files"
    );
    assert!(stdout(&out).contains(&notice), "{out:?}");
    assert!(!stdout(&env.reach(&["skills", "list"])).contains("upgraded"), "told once");

    let out = env.reach(&["skills", "inspect", "files"]);
    let text = stdout(&out);
    let digest = sha256_of(&env.dir.path().join("skills/files-9.9.9.wasm"));
    assert!(text.contains(&format!("sha256: {digest} (not pinned;")), "{text}");
    assert!(
        text.contains(&format!("upgraded from {old_version} (new tools: echo, wait;")),
        "{text}"
    );
    let out = env.reach(&["skills", "inspect", "files", "--json"]);
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["sha256"], digest.as_str());
    assert_eq!(json["previous"]["version"], old_version.as_str());
    assert_eq!(json["previous"]["change"], "upgraded");
    assert_eq!(json["previous"]["removed_tools"], json!(["list", "read", "write", "search"]));

    // Back to the old file: a downgrade, reported in JSON too.
    std::fs::remove_file(env.dir.path().join("skills/files-9.9.9.wasm")).unwrap();
    let list = listed(&env);
    let previous = &skill(&list, "files.wasm")["previous"];
    assert_eq!(previous["change"], "downgraded", "{previous}");
    assert_eq!(previous["version"], "9.9.9");
}

#[test]
fn reach_call_writes_its_audit_log_before_and_after_the_call() {
    let env = Env::new(POLICY);
    let out = env.reach(&["call", "files.read", "{\"path\": \"docs/a.txt\"}"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let runs: Vec<PathBuf> = std::fs::read_dir(env.dir.path().join(".reach/runs"))
        .expect("runs dir")
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .collect();
    assert_eq!(runs.len(), 1, "{runs:?}");
    let log = std::fs::read_to_string(&runs[0]).unwrap();
    let events: Vec<Value> = log.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let names: Vec<&str> = events.iter().map(|e| e["event"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        ["run_started", "tool_call_started", "tool_call", "run_finished", "log_sealed"]
    );
    assert_eq!(events[0]["kind"], "call");
    assert_eq!(events[1]["arguments"]["path"], "docs/a.txt");
    assert_eq!(events[2]["outcome"], "ok");
    assert_eq!(events[1]["wasm_hash"], events[2]["wasm_hash"]);

    // A log that stops after `tool_call_started` (the host died mid-call)
    // is shown as such.
    let cut: String = log.lines().take(2).map(|l| format!("{l}\n")).collect();
    std::fs::write(&runs[0], cut).unwrap();
    let id = runs[0].file_stem().unwrap().to_str().unwrap().to_owned();
    let show = env.reach(&["runs", "show", &id]);
    assert!(
        stdout(&show).contains("files.read path=docs/a.txt … started, no outcome recorded"),
        "{}",
        stdout(&show)
    );
}

#[test]
fn runs_show_tells_compactions_memory_and_the_persons_messages() {
    let env = Env::new("");
    let dir = env.dir.path().join(".reach/runs");
    std::fs::create_dir_all(&dir).unwrap();
    let log = [
        json!({
            "event": "run_started", "run_id": "r1", "model": "m", "task": "Read the notes",
            "time": "2026-12-02T10:00:00.000Z"
        }),
        json!({
            "event": "memory_recalled", "step": 0, "entries": [3], "tokens": 21,
            "time": "2026-12-02T10:00:00.100Z"
        }),
        json!({
            "event": "user_message", "step": 5, "text": "Correction: lower case.\u{1b}[31m",
            "time": "2026-12-02T10:00:01.000Z"
        }),
        json!({
            "event": "compaction", "step": 12, "tokens_before": 4810, "tokens_after": 2391,
            "threshold": 4800, "context_tokens": 6000, "replaced_messages": 20,
            "checkpoint_by": "model", "error": null,
            "checkpoint": "Goal: x\nDone and found:\n- code ZEBRA-42 (files__read, step 3)",
            "time": "2026-12-02T10:00:02.000Z"
        }),
        json!({
            "event": "memory_remembered", "entry": 4, "decision": "auto",
            "time": "2026-12-02T10:00:03.000Z"
        }),
    ];
    let text: String = log.iter().map(|e| format!("{e}\n")).collect();
    std::fs::write(dir.join("r1.jsonl"), text).unwrap();
    let shown = stdout(&env.reach(&["runs", "show", "r1"]));
    for want in [
        "remembered notes given: [3] (~21 tokens)",
        "step 5: the person said: Correction: lower case.",
        "step 12: context compacted: ~4810 → ~2391 tokens (threshold 4800 of 6000), 20 \
         message(s) replaced, checkpoint by the model",
        "  checkpoint: Goal: x\n  Done and found:\n  - code ZEBRA-42 (files__read, step 3)",
        "note #4 kept [auto]",
    ] {
        assert!(shown.contains(want), "want {want:?} in:\n{shown}");
    }
    assert!(!shown.contains('\u{1b}'), "the person's text is escaped for the terminal");
}

#[test]
fn a_review_that_does_not_pass_exits_4_and_one_that_passes_exits_0() {
    let env = Env::new(POLICY);
    let revise = || answer(r#"{"verdict": "revise", "issues": ["notes/summary.md is missing"]}"#);
    // Executor, reviewer, executor's extra round, reviewer again.
    let server = Server::start(vec![answer("Done."), revise(), answer("Done, really."), revise()]);
    let (out, report) =
        env.run(&server, "Summarise the docs", &["--review", "notes/summary.md exists"]);
    assert_eq!(out.status.code(), Some(4), "{out:?}");
    let verdicts: Vec<&str> = report["reviews"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["verdict"].as_str().unwrap())
        .collect();
    assert_eq!(verdicts, ["revise", "revise"]);
    assert_eq!(report["answer"], "Done, really.");

    let server =
        Server::start(vec![answer("Done."), answer(r#"{"verdict": "pass", "issues": []}"#)]);
    let (out, report) =
        env.run(&server, "Summarise the docs", &["--review", "notes/summary.md exists"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert_eq!(report["reviews"][0]["verdict"], "pass");
}
