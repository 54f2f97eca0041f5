//! Memory shared on PostgreSQL, as operators run it: two hosts in two
//! folders (two machines, as far as reach can tell) name one database in
//! their tables, and what one remembers the other recalls. The server is a
//! throwaway cluster on 127.0.0.1.

#[path = "../../src/memory/postgres/cluster.rs"]
pub(crate) mod cluster;

use crate::support::{Server, answer, call, isolated};
use cluster::{Cluster, PASSWORD};
use serde_json::{Value, json};
use std::path::Path;
use std::process::Output;

/// A host's folder: a table that keeps memory at `url`, remembering
/// without asking, and an empty skills folder.
fn host_folder(url: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("skills")).unwrap();
    let table = format!("[memory]\nurl = \"{url}\"\nremember = \"auto\"\n");
    std::fs::write(dir.path().join("reach.toml"), table).unwrap();
    dir
}

/// `reach ARGS` in `dir` with the database's password in the environment.
fn reach(dir: &Path, args: &[&str]) -> Output {
    isolated(env!("CARGO_BIN_EXE_reach"), dir)
        .args(args)
        .env("REACH_MEMORY_PASSWORD", PASSWORD)
        .stdin(std::process::Stdio::null())
        .output()
        .expect("run reach")
}

fn json(out: &Output) -> Value {
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("stdout is one JSON object ({e}): {out:?}"))
}

#[test]
fn what_one_host_remembers_another_recalls_through_one_database() {
    let url = Cluster::shared().database();
    let (first, second) = (host_folder(&url), host_folder(&url));

    // The first host's run: the person states a preference; the model keeps it.
    let model = Server::start(vec![
        call(
            "memory__remember",
            json!({"kind": "preference", "subject": "report format",
                   "text": "Save reports as Markdown with the date on the first line."}),
        ),
        answer("I will."),
    ]);
    let base = format!("{}/v1", model.base);
    let task = "Save reports as Markdown with the date on the first line. Remember that.";
    let out = reach(first.path(), &["run", task, "--json", "--base-url", &base, "--model", "m"]);
    let report = json(&out);
    assert_eq!(report["stop"]["reason"], "answered", "{report}");
    assert_eq!(report["actions"][0]["outcome"], "ok", "{report}");

    // The second host, another folder, another process: the note is in its prompt.
    let model = Server::start(vec![answer("Saved.")]);
    let base = format!("{}/v1", model.base);
    let task = "Save the weekly report from notes/week.txt";
    let out = reach(second.path(), &["run", task, "--json", "--base-url", &base, "--model", "m"]);
    assert_eq!(json(&out)["stop"]["reason"], "answered");
    let prompt = model.requests()[0].json().to_string();
    assert!(
        prompt.contains("Save reports as Markdown with the date on the first line.")
            && prompt.contains("stated by the user in run"),
        "the first host's note, with where it came from, is in the second's prompt: {prompt}"
    );

    // Both hosts' `reach memory` see one store; the URL is shown without a password.
    let listed = json(&reach(second.path(), &["memory", "list", "--json"]));
    assert_eq!(listed["db"], url.as_str());
    assert_eq!(listed["entries"][0]["use_count"], 1, "recalled once, counted once: {listed}");
    let id = listed["entries"][0]["id"].as_i64().unwrap().to_string();
    let out = reach(second.path(), &["memory", "forget", &id, "--yes", "--json"]);
    assert!(out.status.success(), "{out:?}");
    let listed = json(&reach(first.path(), &["memory", "list", "--all", "--json"]));
    assert_eq!(listed["entries"], json!([]), "forgotten for every host: {listed}");
    assert_eq!(
        Cluster::shared()
            .psql(url.rsplit('/').next().unwrap(), "SELECT count(*) FROM reach_memory"),
        "0"
    );
}

#[test]
fn memory_export_and_import_move_notes_between_a_file_and_postgresql() {
    let url = Cluster::shared().database();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("notes.jsonl");
    let local = dir.path().join("local.db");
    let local = local.to_str().unwrap();
    // A SQLite store, exported, imported into PostgreSQL, exported again.
    let lines = concat!(
        r#"{"id":3,"kind":"fact","subject":"staging","text":"staging is at https://staging.example.com","#,
        r#""task_type":null,"provenance":{"source":"user"},"created":"2026-12-01T10:00:00.000Z","#,
        r#""last_used":null,"use_count":0,"supersedes":null,"superseded_by":null}"#,
        "\n"
    );
    std::fs::write(&file, lines).unwrap();
    let out = reach(dir.path(), &["memory", "--db", local, "import", file.to_str().unwrap()]);
    assert!(out.status.success(), "{out:?}");
    let out = reach(dir.path(), &["memory", "--db", local, "export", "--json"]);
    let exported = String::from_utf8(out.stdout).unwrap();
    std::fs::write(&file, &exported).unwrap();
    let out =
        reach(dir.path(), &["memory", "--db", &url, "import", file.to_str().unwrap(), "--json"]);
    assert_eq!(json(&out)["added"], 1, "{out:?}");
    let found = json(&reach(dir.path(), &["memory", "--db", &url, "search", "staging", "--json"]));
    assert_eq!(found["entries"][0]["id"], 3, "the file's id kept: {found}");
    assert_eq!(found["entries"][0]["provenance"]["source"], "imported");
}

#[test]
fn without_its_password_or_its_server_reach_says_what_to_do() {
    let url = Cluster::shared().database();
    let folder = host_folder(&url);
    let out = isolated(env!("CARGO_BIN_EXE_reach"), folder.path())
        .args(["memory", "list"])
        .env_remove("REACH_MEMORY_PASSWORD")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(err.contains("put it in REACH_MEMORY_PASSWORD"), "{err}");

    // A table with the password in its URL does not load.
    let table = format!("[memory]\nurl = \"{}\"\n", url.replace("reach@", "reach:hunter2@"));
    std::fs::write(folder.path().join("reach.toml"), table).unwrap();
    let out = reach(folder.path(), &["memory", "list"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("memory.url: the URL holds a password"), "{err}");
    assert!(!err.contains("hunter2"), "{err}");

    // No server there: `reach run` stops before asking the model, saying why.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let table = format!("[memory]\nurl = \"postgres://reach@127.0.0.1:{closed}/gone\"\n");
    std::fs::write(folder.path().join("reach.toml"), table).unwrap();
    let model = Server::start(vec![answer("never asked")]);
    let base = format!("{}/v1", model.base);
    let out = reach(folder.path(), &["run", "anything", "--base-url", &base, "--model", "m"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        err.contains(&format!("memory database postgres://reach@127.0.0.1:{closed}/gone"))
            && err.contains("--no-memory"),
        "{err}"
    );
    assert!(model.requests().is_empty(), "the model was not asked");
}
