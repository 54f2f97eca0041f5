//! The store on real SQLite files in temporary folders: the shared store
//! suite, and what only a file has (its bytes after forget, locking
//! between processes, schema versions, permissions).

use super::*;
use crate::memory::suite::{Opened, fact, store_suite, user};
use std::path::PathBuf;

/// A new store in a fresh temporary folder, for the shared suite.
fn open_sqlite(max_entries: u64) -> Opened {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("nested/folder/memory.db");
    let store = SqliteStore::open(&path).unwrap().with_max_entries(max_entries);
    Opened {
        store: Box::new(store),
        again: Box::new(move || {
            Box::new(SqliteStore::open(&path).unwrap().with_max_entries(max_entries))
        }),
        _keep: Box::new(dir),
    }
}

mod suite {
    super::store_suite!(super::open_sqlite);
}

/// A store in a fresh temporary folder, and the database's path.
fn on_disk() -> (tempfile::TempDir, PathBuf, SqliteStore) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("nested/folder/memory.db");
    let store = SqliteStore::open(&path).unwrap();
    (dir, path, store)
}

/// Add `entry` and return the active entry after it.
fn added(store: &SqliteStore, entry: NewEntry) -> Entry {
    store.add(entry).unwrap().entry().clone()
}

fn texts(entries: &[Entry]) -> Vec<&str> {
    entries.iter().map(|e| e.text.as_str()).collect()
}

#[test]
fn the_bundled_sqlite_has_fts5() {
    let conn = Connection::open_in_memory().unwrap();
    conn.execute_batch(
        "CREATE VIRTUAL TABLE t USING fts5 (body); INSERT INTO t VALUES ('hello world');",
    )
    .unwrap();
    let hits: i64 =
        conn.query_row("SELECT count(*) FROM t WHERE t MATCH 'world'", [], |r| r.get(0)).unwrap();
    assert_eq!(hits, 1);
}

/// Every file of the database whose bytes contain `needle`.
fn files_containing(db: &Path, needle: &str) -> Vec<PathBuf> {
    let dir = db.parent().unwrap();
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| std::fs::read(p).unwrap().windows(needle.len()).any(|w| w == needle.as_bytes()))
        .collect()
}

/// How many blocks of the FTS5 index hold `word` as bytes.
fn index_blocks_containing(db: &Path, word: &str) -> i64 {
    let conn = Connection::open(db).unwrap();
    conn.query_row(
        "SELECT count(*) FROM memory_fts_data WHERE instr(block, CAST(?1 AS BLOB)) > 0",
        [word],
        |r| r.get(0),
    )
    .unwrap()
}

#[test]
fn forget_leaves_no_copy_in_any_file_of_the_database() {
    let (_dir, path, store) = on_disk();
    // Enough other entries that the tables and the index span many pages.
    for i in 0..300 {
        store
            .add(fact(
                &format!("filler {i}"),
                &format!(
                    "filler text number {i} about servers, notes and {}",
                    "words ".repeat(i % 20)
                ),
            ))
            .unwrap();
    }
    let first =
        added(&store, fact("Secret token place", "the token is in zqxmarkerone under the desk")).id;
    let second =
        added(&store, fact("secret TOKEN place", "moved: zqxmarkertwo behind the shelf")).id;
    store.add(fact("filler after", "more filler")).unwrap();
    for marker in ["zqxmarkerone", "zqxmarkertwo", "secret token place"] {
        assert!(!files_containing(&path, marker).is_empty(), "{marker} is stored before forget");
    }

    assert!(index_blocks_containing(&path, "zqxmarkertwo") > 0, "indexed before forget");
    assert_eq!(store.forget(second).unwrap(), [first, second], "the entry and its history");
    for marker in [
        "zqxmarkerone",
        "zqxmarkertwo",
        "Secret token place",
        "secret token place",
        "behind the shelf",
    ] {
        assert_eq!(
            files_containing(&path, marker),
            Vec::<PathBuf>::new(),
            "{marker} left after forget"
        );
    }
    // The index itself: its blocks held the word before, and hold nothing now.
    assert_eq!(index_blocks_containing(&path, "zqxmarkertwo"), 0);
    assert!(index_blocks_containing(&path, "filler") > 0, "the rest of the index is intact");

    assert!(store.get(first).unwrap().is_none() && store.get(second).unwrap().is_none());
    assert_eq!(store.search("token shelf desk", None, 10).unwrap(), Vec::new());
    assert_eq!(store.search("filler 42", None, 1).unwrap().len(), 1);
    assert!(matches!(store.forget(second), Err(MemoryError::NotFound { id }) if id == second));
    // Ids are never handed out again.
    assert!(added(&store, fact("new", "entry")).id > second + 1);
}

#[test]
fn two_stores_on_one_file_wait_for_each_other() {
    let (_dir, path, store) = on_disk();
    let other = SqliteStore::open(&path).unwrap();
    // One process holds the write lock for a while; the other waits.
    let blocker = Connection::open(&path).unwrap();
    blocker.execute_batch("BEGIN IMMEDIATE").unwrap();
    let waiting = std::thread::spawn(move || {
        other.add(fact("from other", "written while locked")).map(|a| a.entry().id)
    });
    std::thread::sleep(Duration::from_millis(300));
    blocker.execute_batch("COMMIT").unwrap();
    waiting.join().unwrap().expect("waited for the lock");

    let threads: Vec<_> = (0..2)
        .map(|t| {
            let path = path.clone();
            std::thread::spawn(move || {
                let mine = SqliteStore::open(&path).unwrap();
                for i in 0..25 {
                    mine.add(fact(&format!("thread {t} note {i}"), "concurrent")).unwrap();
                }
            })
        })
        .collect();
    for i in 0..25 {
        store.add(fact(&format!("main note {i}"), "concurrent")).unwrap();
    }
    for t in threads {
        t.join().unwrap();
    }
    assert_eq!(store.list(false).unwrap().len(), 76);
}

#[test]
fn a_database_from_a_newer_version_is_refused() {
    let (_dir, path, store) = on_disk();
    drop(store);
    Connection::open(&path).unwrap().pragma_update(None, "user_version", 3).unwrap();
    let err = SqliteStore::open(&path).unwrap_err().to_string();
    assert!(
        err.ends_with("schema version 3 is newer than this reach reads (2); upgrade reach"),
        "{err}"
    );
}

/// The schema of version 1, as it was released.
const SCHEMA_V1: &str = "
CREATE TABLE entries (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    kind          TEXT NOT NULL CHECK (kind IN ('fact', 'preference', 'procedure')),
    subject       TEXT NOT NULL,
    subject_key   TEXT NOT NULL,
    text          TEXT NOT NULL,
    task_type     TEXT,
    source        TEXT NOT NULL CHECK (source IN ('user', 'tool')),
    run_id        TEXT,
    step          INTEGER,
    tool          TEXT,
    created       TEXT NOT NULL,
    last_used     TEXT,
    use_count     INTEGER NOT NULL DEFAULT 0,
    supersedes    INTEGER,
    superseded_by INTEGER
);
CREATE UNIQUE INDEX entries_active ON entries (kind, subject_key) WHERE superseded_by IS NULL;
CREATE INDEX entries_subject ON entries (kind, subject_key, created);
CREATE VIRTUAL TABLE memory_fts USING fts5 (subject, text, content = '', contentless_delete = 1, \
    tokenize = 'porter unicode61');
INSERT INTO entries (id, kind, subject, subject_key, text, source, run_id, step, created)
    VALUES (7, 'preference', 'Units', 'units', 'I prefer metric units.', 'user', 'r1', 1, \
    '2026-12-02T11:36:25.123Z');
INSERT INTO memory_fts (rowid, subject, text) VALUES (7, 'Units', 'I prefer metric units.');
PRAGMA user_version = 1;
";

#[test]
fn a_version_1_database_is_upgraded_in_place_and_reads_as_before() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("memory.db");
    Connection::open(&path).unwrap().execute_batch(SCHEMA_V1).unwrap();
    let store = SqliteStore::open(&path).unwrap();
    let found = store.search("metric", None, 5).unwrap();
    assert_eq!(texts(&found), ["I prefer metric units."]);
    assert_eq!(found[0].id, 7);
    assert_eq!(found[0].provenance, user());
    store.import(&found, "f.jsonl").unwrap();
    assert_eq!(store.list(true).unwrap().len(), 1, "already there");
    store.add(fact("host", "build-1")).unwrap();
    assert_eq!(store.list(false).unwrap()[1].id, 8, "ids go on");
    drop(store);
    let version: i64 = Connection::open(&path)
        .unwrap()
        .pragma_query_value(None, "user_version", |r| r.get(0))
        .unwrap();
    assert_eq!(version, 2);
    assert_eq!(SqliteStore::open(&path).unwrap().list(true).unwrap().len(), 2);
}

#[test]
fn a_file_that_is_not_a_database_is_an_error_not_a_panic() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("memory.db");
    std::fs::write(
        &path,
        "this is not a database, just some text that is long enough to matter ".repeat(20),
    )
    .unwrap();
    let err = SqliteStore::open(&path).unwrap_err().to_string();
    assert!(err.starts_with(&format!("memory database {}: ", path.display())), "{err}");
}

#[cfg(unix)]
#[test]
fn the_database_and_its_journal_are_the_users_alone() {
    // Regression: the file was created with the umask's 0644, readable by
    // every account on the machine.
    use std::os::unix::fs::PermissionsExt;
    let (dir, path, store) = on_disk();
    added(&store, fact("where pages go", "pages go to notes/archive"));
    let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&path), 0o600);
    let wal = path.with_extension("db-wal");
    if wal.exists() {
        assert_eq!(mode(&wal), 0o600, "SQLite gives the journal the database's mode");
    }
    assert_eq!(mode(&dir.path().join("nested/folder")), 0o700, "folders it creates");
}
