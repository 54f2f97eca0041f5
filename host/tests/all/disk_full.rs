//! A disk that fills up under the host's own records: the runs folder and
//! the memory database on a small tmpfs (mounted by the test; CI runs as
//! root). A call whose audit record cannot be written does not run, the
//! error says why, and nothing already written is lost.

use crate::support::{Server, answer, reach};
use agent_reach_tests::guests;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

/// A tmpfs of `kib` KiB, unmounted when dropped.
struct Tmpfs {
    dir: tempfile::TempDir,
}

impl Tmpfs {
    fn mount(kib: u32) -> Tmpfs {
        let dir = tempfile::tempdir().unwrap();
        let out = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={kib}k,mode=0700"), "tmpfs"])
            .arg(dir.path())
            .output()
            .expect("run mount");
        assert!(
            out.status.success(),
            "this test mounts a small tmpfs, which needs root (as CI runs): {out:?}"
        );
        Tmpfs { dir }
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Fill what is left with a file, but for `spare` bytes.
    fn fill(&self, spare: u64) -> PathBuf {
        let filler = self.path().join("filler");
        let stat = rustix::fs::statvfs(self.path()).expect("statvfs");
        let free = stat.f_bavail * stat.f_frsize;
        std::fs::write(&filler, vec![0u8; free.saturating_sub(spare) as usize]).ok();
        filler
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(self.dir.path()).status();
    }
}

fn folder() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("skills")).unwrap();
    std::fs::copy(guests::TEST_SKILL_ECHO.path(), dir.path().join("skills/echo.wasm")).unwrap();
    std::fs::write(dir.path().join("reach.toml"), "[skills.echo]\nlevel = \"auto\"\n").unwrap();
    dir
}

#[test]
fn with_the_runs_folder_full_a_call_or_a_run_is_refused_before_it_runs_and_old_logs_stay_whole() {
    let dir = folder();
    let runs = Tmpfs::mount(256);
    let runs_dir = runs.path().to_str().unwrap();
    let out = reach(dir.path(), &["call", "echo.echo", "{\"a\":1}", "--runs-dir", runs_dir]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let verify = |expect: &str| {
        let out = reach(dir.path(), &["runs", "verify", "--all", "--json", "--runs-dir", runs_dir]);
        let report: Value = serde_json::from_slice(&out.stdout).expect("verify JSON");
        let intact = report["runs"].as_array().unwrap().iter().filter(|r| r["verdict"] == "intact");
        assert_eq!(intact.count(), 1, "{expect}: the earlier log is whole: {report:#}");
    };
    verify("before");

    runs.fill(0);
    let out = reach(dir.path(), &["call", "echo.echo", "{\"a\":2}", "--runs-dir", runs_dir]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_ne!(out.status.code(), Some(0), "{out:?}");
    assert!(!String::from_utf8_lossy(&out.stdout).contains("\"a\":2"), "it did not run: {out:?}");
    assert!(
        stderr.contains("No space left on device") && stderr.contains("was not run"),
        "says why: {stderr}"
    );
    // A run: refused before the model is asked anything.
    let server = Server::start(vec![answer("never asked")]);
    let base = format!("{}/v1", server.base);
    let out = reach(
        dir.path(),
        &[
            "run",
            "Echo",
            "--json",
            "--base-url",
            &base,
            "--model",
            "scripted",
            "--runs-dir",
            runs_dir,
        ],
    );
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let report: Value = serde_json::from_slice(&out.stdout).expect("one JSON report");
    assert_eq!(report["stop"]["reason"], "not_recorded", "{report:#}");
    let detail = report["stop"]["detail"].as_str().unwrap();
    assert!(
        detail.contains("No space left on device") && detail.contains("the run was not started"),
        "{detail}"
    );
    assert_eq!(server.requests().len(), 0, "the model was not asked");
    verify("when full");
}

#[test]
fn with_the_memory_databases_disk_full_an_import_fails_saying_so_and_loses_nothing() {
    let dir = folder();
    let mem = Tmpfs::mount(4096);
    let db = mem.path().join("memory.db");
    crate::crash::seeded_import(dir.path(), &db, 3, 1_000, 20);
    let db_arg = db.to_str().unwrap();
    let filler = mem.fill(16 << 10);

    let out = reach(dir.path(), &["memory", "import", "big.jsonl", "--db", db_arg]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_ne!(out.status.code(), Some(0), "{out:?}");
    assert!(stderr.contains("full"), "says the disk is full: {stderr}");
    let conn = rusqlite::Connection::open(&db).unwrap();
    let check: String = conn.query_row("PRAGMA integrity_check", [], |r| r.get(0)).unwrap();
    assert_eq!(check, "ok");
    drop(conn);
    let listed = reach(dir.path(), &["memory", "list", "--json", "--db", db_arg]);
    let listed: Value = serde_json::from_slice(&listed.stdout).expect("list JSON");
    assert_eq!(listed["entries"].as_array().unwrap().len(), 3, "the three before, none of it");
    // With room again, the same import goes through whole.
    std::fs::remove_file(filler).unwrap();
    let out = reach(dir.path(), &["memory", "import", "big.jsonl", "--db", db_arg]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
}
