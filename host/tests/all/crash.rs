//! `kill -9` in the middle of the work: of `reach run` during a tool call
//! that has changed files in its grant, and of `reach memory import` in
//! the middle of its transaction. Nothing is left half-done: the next
//! start puts the grant back as it was, the audit log verifies up to its
//! last record, and the memory database passes SQLite's integrity check
//! with all of the import or none of it.

use crate::support::{Server, call, isolated, reach};
use agent_reach::memory::{Kind, MemoryStore, NewEntry, Provenance, SqliteStore};
use agent_reach_tests::guests;
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

fn spawn(dir: &Path, args: &[&str]) -> Child {
    isolated(env!("CARGO_BIN_EXE_reach"), dir)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start reach")
}

/// Wait for `ready`, at most 60 s.
fn wait_for(what: &str, ready: impl Fn() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while !ready() {
        assert!(Instant::now() < deadline, "{what} did not happen");
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Every file and folder under `dir` with its contents (folders: None).
fn tree(dir: &Path) -> BTreeMap<PathBuf, Option<Vec<u8>>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_owned()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let path = e.unwrap().path();
            let rel = path.strip_prefix(dir).unwrap().to_owned();
            if path.is_dir() {
                out.insert(rel, None);
                stack.push(path);
            } else {
                out.insert(rel, Some(std::fs::read(&path).unwrap()));
            }
        }
    }
    out
}

#[test]
fn a_run_killed_mid_call_leaves_its_grant_as_it_was_once_the_next_start_recovers() {
    let dir = tempfile::tempdir().unwrap();
    let notes = dir.path().join("notes");
    std::fs::create_dir_all(dir.path().join("skills")).unwrap();
    std::fs::create_dir_all(&notes).unwrap();
    for guest in [guests::TEST_SKILL_MISBEHAVE, guests::TEST_SKILL_ECHO] {
        std::fs::copy(guest.path(), dir.path().join("skills").join(guest.file_name())).unwrap();
    }
    std::fs::write(notes.join("a.txt"), "alpha\n".repeat(10_000)).unwrap();
    std::fs::write(notes.join("gone.txt"), "to be deleted").unwrap();
    std::fs::write(notes.join("old.txt"), "to be moved").unwrap();
    std::fs::write(
        dir.path().join("reach.toml"),
        "[skills.misbehave]\nlevel = \"auto\"\nwrite = [\"./notes\"]\ntimeout_ms = 120000\n\n\
         [skills.echo]\nlevel = \"auto\"\n",
    )
    .unwrap();
    let before = tree(&notes);

    // The model asks for a call that changes four things, then spins.
    let server =
        Server::start(vec![call("misbehave__scribble", json!({"folder": notes, "then": "spin"}))]);
    let base = format!("{}/v1", server.base);
    let mut run = spawn(
        dir.path(),
        &["run", "Scribble", "--json", "--base-url", &base, "--model", "scripted"],
    );
    // Its last change before the spin: old.txt moved.
    wait_for("the call's changes", || notes.join("moved.txt").exists());
    run.kill().unwrap(); // SIGKILL: no destructor, no rollback, no seal
    run.wait().unwrap();
    assert_ne!(tree(&notes), before, "the killed call left its changes");

    // The audit log reads back and verifies up to its last record: the
    // crash shows as a missing seal, not as tampering.
    let verify = reach(dir.path(), &["runs", "verify", "--all", "--json"]);
    let report: Value = serde_json::from_slice(&verify.stdout).expect("verify JSON");
    assert_eq!(verify.status.code(), Some(3), "no signed head, chain intact: {report:#}");
    let run_id = report["runs"][0]["run_id"].as_str().expect("the run").to_owned();
    let listed = reach(dir.path(), &["runs", "show", &run_id]);
    assert_eq!(listed.status.code(), Some(0), "{listed:?}");

    // The next start (any run, call or server) rolls the call back first.
    let out = reach(dir.path(), &["call", "echo.echo", "{\"after\":\"crash\"}"]);
    assert!(String::from_utf8_lossy(&out.stdout).contains("crash"), "{out:?}");
    assert_eq!(tree(&notes), before, "the grant is as it was before the killed call");
    // On record as rolled back: nothing for diff or undo to show.
    let diff = reach(dir.path(), &["runs", "diff", &run_id, "--json"]);
    let diff: Value = serde_json::from_slice(&diff.stdout).expect("diff JSON");
    assert_eq!(diff["changes"], json!([]), "{diff:#}");
    // And a second start has nothing left to do.
    let out = reach(dir.path(), &["call", "echo.echo", "{}"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert_eq!(tree(&notes), before);
}

/// A memory database at `db` with `seeds` entries, and `DIR/big.jsonl`, an
/// export file of `imported` other entries (each text `words` × 18 bytes
/// long), made from the seeds' own exported line.
pub(crate) fn seeded_import(dir: &Path, db: &Path, seeds: usize, imported: u64, words: usize) {
    let store = SqliteStore::open(db).unwrap();
    for n in 0..seeds {
        store
            .add(NewEntry {
                kind: Kind::Fact,
                subject: format!("seed {n}"),
                text: format!("Entry {n} that was there before"),
                task_type: None,
                provenance: Provenance::User { run_id: None, step: None },
            })
            .unwrap();
    }
    drop(store);
    let out = reach(dir, &["memory", "export", "--db", db.to_str().unwrap()]);
    let first = String::from_utf8_lossy(&out.stdout).lines().next().map(str::to_owned);
    let line: Value = serde_json::from_str(&first.expect("an exported line")).unwrap();
    let mut file = String::new();
    for n in 0..imported {
        let mut entry = line.clone();
        entry["id"] = json!(n + 100);
        entry["subject"] = json!(format!("imported subject {n}"));
        entry["text"] = json!(format!("Imported fact {n}: {}", "words of the note ".repeat(words)));
        file += &format!("{entry}\n");
    }
    std::fs::write(dir.join("big.jsonl"), file).unwrap();
}

#[test]
fn a_memory_import_killed_mid_transaction_leaves_a_sound_database_with_none_of_it() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("reach.toml"), "").unwrap();
    let db = dir.path().join("mem/memory.db");
    const IMPORTED: u64 = 30_000;
    seeded_import(dir.path(), &db, 1, IMPORTED, 1);
    let db_arg = db.to_str().unwrap();

    let mut import = spawn(dir.path(), &["memory", "import", "big.jsonl", "--db", db_arg]);
    // Mid-transaction: SQLite's rollback journal is there.
    let journal = dir.path().join("mem/memory.db-journal");
    wait_for("the import's transaction", || journal.exists());
    std::thread::sleep(Duration::from_millis(100));
    import.kill().unwrap();
    let status = import.wait().unwrap();
    assert!(!status.success(), "killed before it finished: {status:?}");

    let conn = rusqlite::Connection::open(&db).unwrap();
    let check: String = conn.query_row("PRAGMA integrity_check", [], |r| r.get(0)).unwrap();
    assert_eq!(check, "ok");
    drop(conn);
    let count = |out: Output| {
        let listed: Value = serde_json::from_slice(&out.stdout).expect("list JSON");
        listed["entries"].as_array().expect("entries").len() as u64
    };
    let listed = reach(dir.path(), &["memory", "list", "--json", "--db", db_arg]);
    assert_eq!(count(listed), 1, "none of the import, the seed kept");
    // The next import starts cleanly and adds it all.
    let out = reach(dir.path(), &["memory", "import", "big.jsonl", "--db", db_arg]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let listed = reach(dir.path(), &["memory", "list", "--json", "--db", db_arg]);
    assert_eq!(count(listed), IMPORTED + 1);
}

#[test]
fn reach_mcp_killed_under_load_loses_nothing_it_answered_and_starts_again_cleanly() {
    use crate::mcp_http::{on_session, open_session};
    use crate::support::mcp::Workspace;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::{Arc, Mutex};

    let table = "[skills.files]\nlevel = \"auto\"\nread = [\"./notes\"]\nwrite = [\"./notes\"]\n\n\
                 [skills.misbehave]\nlevel = \"auto\"\nwrite = [\"./scribble\"]\ntimeout_ms = 120000\n";
    let ws = Workspace::new(table, &[guests::SKILL_FILES, guests::TEST_SKILL_MISBEHAVE]);
    let scribble = ws.path("scribble");
    std::fs::create_dir_all(&scribble).unwrap();
    std::fs::write(scribble.join("a.txt"), "the original").unwrap();
    std::fs::write(scribble.join("old.txt"), "to be moved").unwrap();
    let before = tree(&scribble);
    let server = ws.serve_http(&[], &[]);
    let body = "x".repeat(64 << 10);
    let answered: Arc<Mutex<Vec<String>>> = Arc::default();
    let stop = Arc::new(AtomicBool::new(false));
    let server_ref = &server;
    std::thread::scope(|scope| {
        for client in 0..4 {
            let (answered, stop, body) = (Arc::clone(&answered), Arc::clone(&stop), body.clone());
            scope.spawn(move || {
                let session = open_session(server_ref, &[]);
                for i in 0.. {
                    if stop.load(Ordering::SeqCst) {
                        break;
                    }
                    let name = format!("notes/c{client}-{i}.txt");
                    let call = json!({
                        "jsonrpc": "2.0", "id": i + 2, "method": "tools/call",
                        "params": {"name": "files__write", "arguments": {"path": name, "content": body}}
                    });
                    let Ok(response) = std::panic::catch_unwind(|| {
                        on_session(server_ref, &session, &[], &call.to_string())
                    }) else {
                        break; // the server is gone mid-request
                    };
                    if response.status == 200 && response.body.contains("\"isError\":false") {
                        answered.lock().unwrap().push(name);
                    } else {
                        break;
                    }
                }
            });
        }
        // One more client's call changes files, then runs on.
        scope.spawn(|| {
            let session = open_session(server_ref, &[]);
            let call = json!({
                "jsonrpc": "2.0", "id": 2, "method": "tools/call",
                "params": {"name": "misbehave__scribble",
                           "arguments": {"folder": scribble, "then": "spin"}}
            });
            let _ = std::panic::catch_unwind(|| {
                on_session(server_ref, &session, &[], &call.to_string())
            });
        });
        // Under load for a moment, then killed with calls in flight.
        wait_for("calls answered", || answered.lock().unwrap().len() >= 20);
        wait_for("the scribble", || scribble.join("moved.txt").exists());
        let killed = Command::new("kill").args(["-9", &server_ref.pid().to_string()]).status();
        assert!(killed.unwrap().success());
        stop.store(true, Ordering::SeqCst);
    });
    assert!(answered.lock().unwrap().len() >= 20);

    // The next start recovers, then serves.
    let again = ws.serve_http(&[], &[]);
    let session = open_session(&again, &[]);
    let call = json!({
        "jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "files__read", "arguments": {"path": "notes/c0-0.txt"}}
    });
    let read = on_session(&again, &session, &[], &call.to_string());
    assert!(read.body.contains("\"isError\":false"), "{read:?}");
    // The call in flight is undone; every call it answered is there whole.
    assert_eq!(tree(&scribble), before, "the killed call's changes were rolled back");
    for name in answered.lock().unwrap().iter() {
        assert_eq!(std::fs::read_to_string(ws.path(name)).unwrap().len(), body.len(), "{name}");
    }
    for entry in std::fs::read_dir(ws.path("notes")).unwrap() {
        let path = entry.unwrap().path();
        assert_eq!(std::fs::read(&path).unwrap().len(), body.len(), "{} is whole", path.display());
    }
    drop(again);
    // The killed server's log verifies up to its last record.
    let verify = reach(&ws.path(""), &["runs", "verify", "--all", "--json"]);
    let report: Value = serde_json::from_slice(&verify.stdout).expect("verify JSON");
    let runs = report["runs"].as_array().expect("runs");
    assert!(runs.iter().all(|r| r["verdict"] != "tampered"), "{report:#}");
    assert!(runs.iter().any(|r| r["verdict"] == "unsealed"), "the killed one: {report:#}");
}
