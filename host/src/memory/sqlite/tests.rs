//! The store on real SQLite files in temporary folders.

use super::*;
use std::path::PathBuf;

fn user() -> Provenance {
    Provenance::User { run_id: Some("r1".into()), step: Some(1) }
}

fn new(kind: Kind, subject: &str, text: &str) -> NewEntry {
    NewEntry {
        kind,
        subject: subject.into(),
        text: text.into(),
        task_type: None,
        provenance: user(),
    }
}

fn fact(subject: &str, text: &str) -> NewEntry {
    new(Kind::Fact, subject, text)
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

#[test]
fn entries_are_added_found_and_kept_across_opens() {
    let (_dir, path, store) = on_disk();
    let added = store
        .add(fact("Staging API", "The staging API is at https://staging.example.com/v2"))
        .unwrap();
    let Added::New(entry) = added else { panic!("a new entry: {added:?}") };
    assert_eq!(
        (entry.id, entry.kind, entry.use_count, entry.provenance.clone()),
        (1, Kind::Fact, 0, user())
    );
    assert!(entry.is_active() && entry.supersedes.is_none() && entry.last_used.is_none());
    assert_eq!(entry.created.len(), 24, "{}", entry.created);
    store
        .add(new(
            Kind::Preference,
            "notes format",
            "Write notes in Markdown, wrapped at 100 columns",
        ))
        .unwrap();
    drop(store);

    let store = SqliteStore::open(&path).unwrap();
    assert_eq!(
        texts(&store.search("where is the staging api?", None, 10).unwrap()),
        ["The staging API is at https://staging.example.com/v2"]
    );
    assert_eq!(store.search("markdown", None, 10).unwrap()[0].kind, Kind::Preference);
    assert_eq!(store.search("kubernetes", None, 10).unwrap(), Vec::new());
    assert_eq!(store.list(false).unwrap().len(), 2);
}

#[test]
fn a_new_entry_on_the_same_subject_supersedes_and_the_old_one_stays_in_history() {
    let (_dir, _path, store) = on_disk();
    let old = added(&store, fact("Staging API", "staging is at https://old.example.com"));
    let added =
        store.add(fact("  staging   api ", "staging is at https://new.example.com")).unwrap();
    let Added::Superseded { entry, previous } = added else { panic!("superseded: {added:?}") };
    assert_eq!(previous.id, old.id);
    assert_eq!(previous.superseded_by, Some(entry.id));
    assert_eq!(entry.supersedes, Some(old.id));

    assert_eq!(
        texts(&store.search("staging", None, 10).unwrap()),
        ["staging is at https://new.example.com"],
        "search sees the active entry only"
    );
    assert_eq!(store.list(false).unwrap().len(), 1);
    assert_eq!(store.list(true).unwrap().len(), 2);
    for id in [old.id, entry.id] {
        let history = store.get(id).unwrap().expect("found");
        assert_eq!(history.entry.id, id);
        assert_eq!(history.versions.iter().map(|e| e.id).collect::<Vec<_>>(), [old.id, entry.id]);
    }

    // Same subject, another kind: a separate entry.
    assert!(matches!(
        store.add(new(Kind::Procedure, "staging api", "deploy with `just ship staging`")).unwrap(),
        Added::New(_)
    ));
    assert_eq!(store.list(false).unwrap().len(), 2);
}

#[test]
fn the_same_entry_twice_is_stored_once() {
    let (_dir, _path, store) = on_disk();
    let first = added(&store, fact("Editor", "The user edits with Helix"));
    let again = store.add(fact("EDITOR", "  The user edits with Helix\n")).unwrap();
    assert_eq!(again, Added::Existing(first));
    assert_eq!(store.list(true).unwrap().len(), 1);
}

#[test]
fn search_text_is_never_fts_syntax() {
    let (_dir, _path, store) = on_disk();
    store.add(fact("near misses", "NEAR and OR are words here; so is subject")).unwrap();
    for query in [
        "\"",
        "\"near",
        "near*",
        "subject:near",
        "NEAR(near misses)",
        "near AND",
        "OR OR",
        ")(",
        "^near",
        "-near",
        "near -",
        "{subject text}: near",
        "'",
        "",
        "   ",
        "?!",
    ] {
        let found = store.search(query, None, 10);
        assert!(found.is_ok(), "{query:?}: {found:?}");
    }
    assert_eq!(store.search("subject:near", None, 10).unwrap().len(), 1, "both words, as words");
    assert_eq!(store.search("", None, 10).unwrap(), Vec::new());
    assert_eq!(store.search("?!", None, 10).unwrap(), Vec::new());
    assert_eq!(store.search("near", None, 0).unwrap(), Vec::new());
}

#[test]
fn entries_of_the_tasks_type_rank_first() {
    let (_dir, _path, store) = on_disk();
    store.add(fact("deploy deploy", "deploy: deploy the deploy target with deploy")).unwrap();
    let mut typed = fact("release notes", "after a deploy, write release notes");
    typed.task_type = Some("Release".into());
    store.add(typed).unwrap();
    let untyped_order = texts(&store.search("deploy", None, 10).unwrap())
        .into_iter()
        .map(str::to_owned)
        .collect::<Vec<_>>();
    assert_eq!(untyped_order[0], "deploy: deploy the deploy target with deploy", "bm25 alone");
    let typed_order = store.search("deploy", Some("release"), 10).unwrap();
    assert_eq!(typed_order[0].task_type.as_deref(), Some("release"));
    assert_eq!(typed_order.len(), 2);
    assert_eq!(store.search("deploy", Some("unknown-type"), 10).unwrap()[0].text, untyped_order[0]);
}

#[test]
fn use_is_counted() {
    let (_dir, _path, store) = on_disk();
    let id = added(&store, fact("s", "t")).id;
    store.mark_used(&[id, id, 999]).unwrap();
    let entry = store.get(id).unwrap().unwrap().entry;
    assert_eq!(entry.use_count, 2);
    assert!(entry.last_used.is_some_and(|t| t >= entry.created));
}

#[test]
fn limits_refuse_with_the_limit_named() {
    let (_dir, _path, store) = on_disk();
    let err = store.add(fact("s", &"x".repeat(2001))).unwrap_err();
    assert!(err.to_string().contains("the limit is 2000"), "{err}");
    let store = store.with_max_entries(2);
    store.add(fact("a", "1")).unwrap();
    store.add(fact("a", "2")).unwrap();
    let err = store.add(fact("b", "3")).unwrap_err();
    assert_eq!(
        err.to_string(),
        "memory: the store holds 2 entries, the most it keeps; forget some (`reach memory forget \
         ID`)"
    );
    assert!(
        matches!(store.add(fact("a", "2")).unwrap(), Added::Existing(_)),
        "a duplicate needs no room"
    );
    store.forget(2).unwrap();
    store.add(fact("b", "3")).expect("room again");
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
fn forgetting_an_old_version_keeps_the_newer_ones() {
    let (_dir, _path, store) = on_disk();
    let a = added(&store, fact("host", "build-1")).id;
    let b = added(&store, fact("host", "build-2")).id;
    let c = added(&store, fact("host", "build-3")).id;
    assert_eq!(store.forget(b).unwrap(), [a, b]);
    let history = store.get(c).unwrap().unwrap();
    assert_eq!(history.versions.len(), 1);
    assert_eq!(history.entry.supersedes, None, "no pointer to a forgotten entry");
    assert_eq!(texts(&store.search("host build", None, 5).unwrap()), ["build-3"]);
}

#[test]
fn each_version_is_created_after_the_one_it_supersedes_even_in_one_millisecond() {
    // In memory: no disk wait between adds.
    let store = SqliteStore::in_memory().unwrap();
    // Far more adds than milliseconds pass: without the rule, times would tie.
    let times: Vec<String> =
        (0..50).map(|i| added(&store, fact("host", &format!("build-{i}"))).created).collect();
    assert!(times.windows(2).all(|w| w[0] < w[1]), "strictly increasing: {times:?}");
}

#[test]
fn export_then_import_gives_the_same_store() {
    let (_dir, _path, store) = on_disk();
    store.add(fact("host", "build-1")).unwrap();
    store.add(fact("host", "build-2")).unwrap();
    let mut typed = new(Kind::Procedure, "deploy", "run `just ship`, then check /health");
    typed.task_type = Some("release".into());
    typed.provenance =
        Provenance::Tool { run_id: "r9".into(), step: 4, tool: Some("http_api__get".into()) };
    let id = added(&store, typed).id;
    store.mark_used(&[id]).unwrap();
    store.add(fact("gone", "forgotten")).unwrap();
    store.forget(4).unwrap();
    store.add(new(Kind::Preference, "tone", "short answers")).unwrap();
    let exported = store.export().unwrap();
    assert_eq!(exported.len(), 4);

    let (_dir2, _path2, other) = on_disk();
    let text = crate::memory::to_export(&exported);
    let report = other.import(&crate::memory::parse_export(&text).unwrap(), "copy.jsonl").unwrap();
    assert_eq!(report, Imported { added: 4, existing: 0 });
    // What the file said about each entry is kept as the file's claim.
    let as_imported: Vec<Entry> = exported
        .iter()
        .map(|e| Entry { provenance: e.provenance.imported_from("copy.jsonl"), ..e.clone() })
        .collect();
    assert_eq!(
        other.export().unwrap(),
        as_imported,
        "ids, links, times, use counts and claims kept"
    );
    assert_eq!(other.search("deploy", Some("release"), 5).unwrap()[0].id, id);
    assert_eq!(texts(&other.search("host", None, 5).unwrap()), ["build-2"]);

    // Again: nothing new.
    assert_eq!(other.import(&exported, "copy.jsonl").unwrap(), Imported { added: 0, existing: 4 });
    assert_eq!(other.export().unwrap(), as_imported);

    // Into the first store after forgetting the old version: it comes back
    // as history, and the newer entry stays active.
    store.forget(1).unwrap();
    assert_eq!(store.import(&exported, "copy.jsonl").unwrap(), Imported { added: 1, existing: 3 });
    let history = store.get(2).unwrap().unwrap();
    assert_eq!(texts(&history.versions), ["build-1", "build-2"]);
    assert_eq!(texts(&store.search("host", None, 5).unwrap()), ["build-2"]);
    assert!(store.get(1).unwrap().is_none(), "a forgotten id is not given out again");
}

#[test]
fn an_imported_newer_version_supersedes_the_stores() {
    let (_dir, _path, store) = on_disk();
    store.add(fact("host", "build-1")).unwrap();
    let mut newer = store.export().unwrap().remove(0);
    newer.id = 50;
    newer.text = "build-9".into();
    newer.created = "2999-01-01T00:00:00.000Z".into();
    let mut older = newer.clone();
    older.id = 51;
    older.text = "build-0".into();
    older.created = "2000-01-01T00:00:00.000Z".into();
    store.import(&[newer, older], "f.jsonl").unwrap();
    let history = store.get(1).unwrap().unwrap();
    assert_eq!(texts(&history.versions), ["build-0", "build-1", "build-9"]);
    assert_eq!(texts(&store.search("host", None, 5).unwrap()), ["build-9"]);
    assert_eq!(store.list(false).unwrap().len(), 1);
}

#[test]
fn a_bad_import_changes_nothing() {
    let (_dir, _path, store) = on_disk();
    store.add(fact("keep", "me")).unwrap();
    let before = store.export().unwrap();
    let mut entries = before.clone();
    for (i, text) in ["one", "two", "three"].into_iter().enumerate() {
        let mut e = before[0].clone();
        e.id = 10 + i as i64;
        e.subject = format!("s{i}");
        e.text = text.into();
        entries.push(e);
    }
    entries[2].text = "x".repeat(2001);
    let err = store.import(&entries, "f.jsonl").unwrap_err();
    assert_eq!(
        err.to_string(),
        "line 3: the text is 2001 characters; the limit is 2000 — shorten it or split it into \
         several entries"
    );
    assert_eq!(store.export().unwrap(), before);

    entries[2].text = "fine".into();
    let store = store.with_max_entries(3);
    assert!(matches!(store.import(&entries, "f.jsonl"), Err(MemoryError::Full { .. })));
    assert_eq!(store.export().unwrap(), before, "all or nothing");
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

#[test]
fn an_imported_users_claim_is_kept_as_the_files_claim_never_as_the_users_word() {
    let (_dir, _path, store) = on_disk();
    store.add(fact("host", "build-1")).unwrap();
    let exported = store.export().unwrap();
    assert_eq!(exported[0].provenance, user());
    let (_dir2, _path2, other) = on_disk();
    other.import(&exported, "backup.jsonl").unwrap();
    let imported = other.export().unwrap().remove(0);
    assert_eq!(
        imported.provenance,
        Provenance::Imported { file: "backup.jsonl".into(), claimed: Box::new(user()) }
    );
    let block = crate::memory::render(std::slice::from_ref(&imported));
    assert!(block.ends_with("- [fact] host: build-1 (imported from \"backup.jsonl\")"), "{block}");
    assert!(!block.contains("stated by the user"), "{block}");
    assert_eq!(
        imported.provenance.claim().as_deref(),
        Some("stated by the user in run r1, step 1")
    );

    // Imported again from another file: imported from that one, with the
    // first claim (imports do not nest).
    let (_dir3, _path3, third) = on_disk();
    third.import(&[imported], "again.jsonl").unwrap();
    assert_eq!(
        third.export().unwrap()[0].provenance,
        Provenance::Imported { file: "again.jsonl".into(), claimed: Box::new(user()) }
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
