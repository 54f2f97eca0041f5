//! `reach agents list` as an operator uses it: which workers the table
//! defines and what each can reach, in text and as JSON.

use agent_reach_tests::guests;
use serde_json::{Value, json};
use std::path::Path;
use std::process::{Command, Output};

/// `files` installed and granted; `web` granted but not installed; `logs`
/// installed but denied.
const TABLE: &str = r#"[skills.files]
level = "auto"
read = ["./docs"]
write = ["./notes"]

[skills.web]
level = "auto"
net = ["api.example.com"]

[skills.logs]
level = "deny"
read = ["./docs"]

[agents.reader]
description = "Reads the docs."
skills = ["files", "logs"]

[agents.web]
description = "Fetches pages and saves notes."
skills = ["web", "files", "agents"]
max_steps = 4
token_budget = 20000

[delegation]
max_workers = 2
"#;

/// A folder with `reach.toml` = `table`, the files and logs skills, and
/// the folders the table names.
fn folder(table: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for sub in ["skills", "docs", "notes"] {
        std::fs::create_dir_all(dir.path().join(sub)).unwrap();
    }
    std::fs::copy(guests::SKILL_FILES.path(), dir.path().join("skills/files.wasm")).unwrap();
    std::fs::copy(guests::SKILL_LOGS.path(), dir.path().join("skills/logs.wasm")).unwrap();
    std::fs::write(dir.path().join("reach.toml"), table).unwrap();
    dir
}

/// `reach ARGS…` in `dir`, with no policy or skills taken from this
/// process's environment.
fn reach(dir: &Path, args: &[&str]) -> Output {
    let cache = Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/test-compile-cache");
    let mut command = Command::new(env!("CARGO_BIN_EXE_reach"));
    command.args(args).current_dir(dir).env("REACH_CACHE_DIR", cache);
    for name in ["REACH_POLICY", "REACH_SKILLS", "REACH_LOG"] {
        command.env_remove(name);
    }
    command.stdin(std::process::Stdio::null()).output().expect("run reach")
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn agents_list_names_each_profile_and_what_it_can_reach() {
    let dir = folder(TABLE);
    let out = reach(dir.path(), &["agents", "list"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let text = stdout(&out);
    for line in [
        "reader (./reach.toml:14) — Reads the docs.",
        "    files: read ./docs; write ./notes",
        "    logs: (level deny: not offered)",
        "web (./reach.toml:18) — Fetches pages and saves notes.",
        "  model:        the run's model",
        "  max_steps:    4",
        "  token_budget: 20000",
        "  may delegate: yes (lists `agents`; at most depth 2)",
        "    web: (not installed)",
        "[delegation]: max_workers 2, max_depth 2, max_delegations 16, worker_max_steps 6",
        "the run itself: only delegates (supervisor_skills = false)",
    ] {
        assert!(text.lines().any(|l| l == line), "{line:?} missing from:\n{text}");
    }
    // `reader` sets neither: the [delegation] default and no budget.
    assert!(text.contains("  max_steps:    6 ([delegation] worker_max_steps)"), "{text}");
    assert!(text.contains("  token_budget: none of its own"), "{text}");
    assert!(text.contains("  may delegate: no"), "{text}");
}

#[test]
fn agents_list_json_is_one_stable_object() {
    let dir = folder(TABLE);
    let out = reach(dir.path(), &["agents", "list", "--json"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let json: Value = serde_json::from_str(&stdout(&out)).expect("one JSON object");
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let at = |sub: &str| root.join(sub).display().to_string();
    assert_eq!(
        json["delegation"],
        json!({
            "max_workers": 2, "max_depth": 2, "max_delegations": 16, "worker_max_steps": 6,
            "supervisor_skills": false
        })
    );
    let agents = json["agents"].as_array().unwrap();
    assert_eq!(
        agents.iter().map(|a| a["name"].as_str().unwrap()).collect::<Vec<_>>(),
        ["reader", "web"]
    );
    assert_eq!(
        agents[1],
        json!({
            "name": "web",
            "line": 18,
            "description": "Fetches pages and saves notes.",
            "model": null,
            "max_steps": 4,
            "token_budget": 20000,
            "may_delegate": true,
            "instructions": null,
            "skills": [
                {
                    "skill": "web", "installed": false, "level": "auto", "offered": true,
                    "read": [], "write": [], "net": ["api.example.com"]
                },
                {
                    "skill": "files", "installed": true, "level": "auto", "offered": true,
                    "read": [at("docs")], "write": [at("notes")], "net": []
                }
            ]
        })
    );
    assert_eq!(agents[0]["max_steps"], 6, "the [delegation] default");
    assert_eq!(agents[0]["skills"][1]["skill"], "logs");
    assert_eq!(agents[0]["skills"][1]["offered"], false);
}

#[test]
fn agents_list_without_profiles_says_how_to_add_one() {
    let dir = folder("[skills.files]\nread = [\"./docs\"]\n");
    let out = reach(dir.path(), &["agents", "list"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert!(
        stdout(&out).starts_with(
            "no agent profiles in ./reach.toml; add an [agents.NAME] table with description"
        ),
        "{out:?}"
    );
    let out = reach(dir.path(), &["agents", "list", "--json"]);
    let json: Value = serde_json::from_str(&stdout(&out)).expect("one JSON object");
    assert_eq!(json["agents"], json!([]));
    assert_eq!(json["delegation"]["max_workers"], 4);
}

#[test]
fn a_bad_profile_exits_2_naming_the_file_line_and_key() {
    let dir = folder(
        "[skills.files]\n\
         read = [\"./docs\"]\n\n\
         [agents.reader]\n\
         description = \"Reads.\"\n\
         skills = [\"fils\"]\n",
    );
    let out = reach(dir.path(), &["agents", "list"]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(out.stdout.is_empty(), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(concat!(
            r#"./reach.toml:6:11: agents.reader.skills[0]: "fils" is not a skill of this table "#,
            r#"([skills.*] lists: files); list it under [skills.fils] first or fix the name"#,
        )),
        "{err}"
    );
}
