//! [`MemoryStore`] in one SQLite file, searched with FTS5.
//!
//! Layout (schema version 2, kept in `PRAGMA user_version`):
//! - `entries`: one row per entry, superseded ones included. A partial
//!   unique index allows one active entry per kind and subject key.
//!   `AUTOINCREMENT` so an id is never handed out twice, even after forget.
//!   An imported entry has its file in `imported_from` and the file's claim
//!   in `source`, `run_id`, `step` and `tool` (version 2 added the column;
//!   a version 1 file gains it when opened, its entries unchanged).
//! - `memory_fts`: a contentless FTS5 index (`contentless_delete=1`) over
//!   subject and text of the **active** entries only. It keeps no copy of the
//!   text, only the index, and a superseded entry leaves it at once.
//!
//! Forgetting for real: `secure_delete` makes SQLite overwrite deleted rows
//! and freed pages with zeros; after deleting, FTS5's `optimize` rewrites the
//! index without the forgotten words; the rollback journal (`DELETE` mode,
//! not WAL) is removed when the transaction ends, so no side file keeps an
//! old page.
//!
//! Two processes may use one file: every write takes the lock at its start
//! (`BEGIN IMMEDIATE`) and waits up to [`BUSY_TIMEOUT`] for the other.

use std::path::Path;
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use rusqlite::{Connection, OptionalExtension, Row, Transaction, TransactionBehavior, params};

use super::{
    Added, Entry, EntryId, History, Imported, Kind, MAX_ENTRIES, MemoryError, MemoryStore,
    NewEntry, Provenance, checked, subject_key,
};

/// The schema this build writes and reads.
const SCHEMA_VERSION: i64 = 2;

/// How long a write waits for another process that holds the database.
pub const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

const SCHEMA: &str = "
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
    superseded_by INTEGER,
    imported_from TEXT
);
CREATE UNIQUE INDEX entries_active ON entries (kind, subject_key) WHERE superseded_by IS NULL;
CREATE INDEX entries_subject ON entries (kind, subject_key, created);
CREATE VIRTUAL TABLE memory_fts USING fts5 (subject, text, content = '', contentless_delete = 1, \
    tokenize = 'porter unicode61');
";

/// From version 1 to 2: the file an entry was imported from. Entries
/// imported by version 1 cannot be told apart and keep what their file
/// claimed.
const TO_VERSION_2: &str = "ALTER TABLE entries ADD COLUMN imported_from TEXT;";

/// Every column of an entry, in the order [`entry_from_row`] reads them.
const COLUMNS: &str = "e.id, e.kind, e.subject, e.text, e.task_type, e.source, e.run_id, e.step, \
                       e.tool, e.created, e.last_used, e.use_count, e.supersedes, e.superseded_by, \
                       e.imported_from";

/// Now, as every time in the store is written.
const NOW: &str = "strftime('%Y-%m-%dT%H:%M:%fZ', 'now')";

/// Stands in `superseded_by` while a row is being relinked, so the
/// one-active-entry index holds at every statement. Never an id.
const RELINKING: EntryId = 0;

/// Long-term memory in a SQLite file (or in memory, for tests).
pub struct SqliteStore {
    conn: Mutex<Connection>,
    /// The file, for messages.
    name: String,
    max_entries: u64,
}

impl std::fmt::Debug for SqliteStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SqliteStore").field("path", &self.name).finish_non_exhaustive()
    }
}

impl SqliteStore {
    /// Open the database at `path`, creating its folder, the file and the
    /// schema when they are missing. Refuses a database from a newer
    /// version of Agent Reach.
    pub fn open(path: &Path) -> Result<SqliteStore, MemoryError> {
        let name = path.display().to_string();
        let io = |source| MemoryError::Io { path: name.clone(), source };
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            crate::private_fs::create_dir_all(parent).map_err(io)?;
        }
        // Every note is in it: this user's alone (SQLite gives its -wal and
        // -shm files the database file's mode).
        crate::private_fs::ensure_file(path).map_err(io)?;
        let conn = Connection::open(path).map_err(|e| database(&name, e))?;
        SqliteStore::setup(conn, name)
    }

    /// A store that lives in memory and is gone when dropped.
    pub fn in_memory() -> Result<SqliteStore, MemoryError> {
        let conn = Connection::open_in_memory().map_err(|e| database(":memory:", e))?;
        SqliteStore::setup(conn, ":memory:".to_owned())
    }

    /// The database file as given to [`SqliteStore::open`], or `:memory:`.
    pub fn path(&self) -> &str {
        &self.name
    }

    /// A lower entry limit than [`MAX_ENTRIES`], for tests.
    #[cfg(test)]
    pub(crate) fn with_max_entries(mut self, max: u64) -> SqliteStore {
        self.max_entries = max;
        self
    }

    fn setup(mut conn: Connection, name: String) -> Result<SqliteStore, MemoryError> {
        let db = |e| database(&name, e);
        conn.busy_timeout(BUSY_TIMEOUT).map_err(db)?;
        // Both per connection: deleted rows and freed pages are zeroed, and
        // the journal is a file removed after each transaction.
        conn.pragma_update(None, "secure_delete", true).map_err(db)?;
        let _mode: String =
            conn.query_row("PRAGMA journal_mode = DELETE", [], |r| r.get(0)).map_err(db)?;
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate).map_err(db)?;
        let version: i64 = tx.pragma_query_value(None, "user_version", |r| r.get(0)).map_err(db)?;
        match version {
            0 => {
                tx.execute_batch(SCHEMA).map_err(db)?;
                tx.pragma_update(None, "user_version", SCHEMA_VERSION).map_err(db)?;
            }
            1 => {
                tx.execute_batch(TO_VERSION_2).map_err(db)?;
                tx.pragma_update(None, "user_version", SCHEMA_VERSION).map_err(db)?;
            }
            SCHEMA_VERSION => {}
            found => {
                return Err(MemoryError::NewerSchema {
                    path: name,
                    found,
                    supported: SCHEMA_VERSION,
                });
            }
        }
        tx.commit().map_err(db)?;
        Ok(SqliteStore { conn: Mutex::new(conn), name, max_entries: MAX_ENTRIES })
    }

    /// Run `f` in one write transaction; it commits only when `f` succeeds.
    fn write<T>(
        &self,
        f: impl FnOnce(&Transaction<'_>) -> rusqlite::Result<Result<T, MemoryError>>,
    ) -> Result<T, MemoryError> {
        // A panic mid-transaction rolled it back when the guard dropped; the
        // connection is fine to use again.
        let mut conn = self.conn.lock().unwrap_or_else(PoisonError::into_inner);
        let tx = conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(|e| self.db(e))?;
        let value = f(&tx).map_err(|e| self.db(e))??;
        tx.commit().map_err(|e| self.db(e))?;
        Ok(value)
    }

    /// Run `f` on the connection to read.
    fn read<T>(
        &self,
        f: impl FnOnce(&Connection) -> rusqlite::Result<T>,
    ) -> Result<T, MemoryError> {
        let conn = self.conn.lock().unwrap_or_else(PoisonError::into_inner);
        f(&conn).map_err(|e| self.db(e))
    }

    fn db(&self, e: rusqlite::Error) -> MemoryError {
        database(&self.name, e)
    }

    /// Refuse one more entry when the store is full. The sequence is the
    /// highest id ever given, so below the limit nothing needs counting.
    fn check_room(&self, tx: &Transaction<'_>) -> rusqlite::Result<Result<(), MemoryError>> {
        let seq: i64 = tx
            .query_row("SELECT seq FROM sqlite_sequence WHERE name = 'entries'", [], |r| r.get(0))
            .optional()?
            .unwrap_or(0);
        if (seq as u64) < self.max_entries {
            return Ok(Ok(()));
        }
        let count: i64 = tx.query_row("SELECT count(*) FROM entries", [], |r| r.get(0))?;
        Ok(if (count as u64) < self.max_entries {
            Ok(())
        } else {
            Err(MemoryError::Full { limit: self.max_entries })
        })
    }
}

impl MemoryStore for SqliteStore {
    fn add(&self, entry: NewEntry) -> Result<Added, MemoryError> {
        let entry = checked(entry)?;
        let key = subject_key(&entry.subject);
        self.write(|tx| {
            let current = active(tx, entry.kind, &key)?;
            if let Some(current) = current.as_ref().filter(|c| c.text == entry.text) {
                return Ok(Ok(Added::Existing(current.clone())));
            }
            if let Err(full) = self.check_room(tx)? {
                return Ok(Err(full));
            }
            if let Some(current) = &current {
                tx.execute(
                    "UPDATE entries SET superseded_by = ?1 WHERE id = ?2",
                    params![RELINKING, current.id],
                )?;
                tx.execute("DELETE FROM memory_fts WHERE rowid = ?1", [current.id])?;
            }
            // A new version is always later than the one it supersedes, even within one
            // millisecond: versions are ordered by time (`get`, `forget`, an import's relinking),
            // so a tie would let a re-imported old version sort after the newer one.
            let created = match &current {
                Some(current) => Some(tx.query_row(
                    &format!(
                        "SELECT MAX({NOW}, strftime('%Y-%m-%dT%H:%M:%fZ', ?1, '+0.001 seconds'))"
                    ),
                    [&current.created],
                    |r| r.get(0),
                )?),
                None => None,
            };
            let stored = Stored { created, last_used: None, use_count: 0, id: None };
            let id = insert(tx, &entry, &key, &stored, current.as_ref().map(|c| c.id), None)?;
            tx.execute(
                "INSERT INTO memory_fts (rowid, subject, text) VALUES (?1, ?2, ?3)",
                params![id, entry.subject, entry.text],
            )?;
            let new = by_id(tx, id)?.ok_or(rusqlite::Error::QueryReturnedNoRows)?;
            Ok(Ok(match current {
                Some(current) => {
                    tx.execute(
                        "UPDATE entries SET superseded_by = ?1 WHERE id = ?2",
                        params![id, current.id],
                    )?;
                    let previous =
                        by_id(tx, current.id)?.ok_or(rusqlite::Error::QueryReturnedNoRows)?;
                    Added::Superseded { entry: new, previous: Box::new(previous) }
                }
                None => Added::New(new),
            }))
        })
    }

    fn search(
        &self,
        query: &str,
        task_type: Option<&str>,
        limit: usize,
    ) -> Result<Vec<Entry>, MemoryError> {
        self.read(|conn| search::search(conn, query, task_type, limit))
    }

    fn get(&self, id: EntryId) -> Result<Option<History>, MemoryError> {
        self.read(|conn| {
            let Some(entry) = by_id(conn, id)? else { return Ok(None) };
            let sql = format!(
                "SELECT {COLUMNS} FROM entries e WHERE e.kind = ?1 AND e.subject_key = ?2 ORDER BY \
                 e.created, e.id"
            );
            let mut stmt = conn.prepare(&sql)?;
            let versions = stmt
                .query_map(params![entry.kind.name(), subject_key(&entry.subject)], entry_from_row)?
                .collect::<Result<_, _>>()?;
            Ok(Some(History { entry, versions }))
        })
    }

    fn list(&self, include_superseded: bool) -> Result<Vec<Entry>, MemoryError> {
        let filter = if include_superseded { "" } else { "WHERE e.superseded_by IS NULL" };
        self.read(|conn| {
            let mut stmt =
                conn.prepare(&format!("SELECT {COLUMNS} FROM entries e {filter} ORDER BY e.id"))?;
            let rows = stmt.query_map([], entry_from_row)?;
            rows.collect()
        })
    }

    fn mark_used(&self, ids: &[EntryId]) -> Result<(), MemoryError> {
        if ids.is_empty() {
            return Ok(());
        }
        self.write(|tx| {
            let mut stmt = tx.prepare(&format!(
                "UPDATE entries SET last_used = {NOW}, use_count = use_count + 1 WHERE id = ?1"
            ))?;
            for id in ids {
                stmt.execute([id])?;
            }
            Ok(Ok(()))
        })
    }

    fn forget(&self, id: EntryId) -> Result<Vec<EntryId>, MemoryError> {
        self.write(|tx| {
            let Some(entry) = by_id(tx, id)? else { return Ok(Err(MemoryError::NotFound { id })) };
            // The entry and the versions before it: by time, as `get` orders them.
            let mut stmt = tx.prepare(
                "SELECT id, superseded_by IS NULL FROM entries WHERE kind = ?1 \
                 AND subject_key = ?2 AND (created < ?3 OR (created = ?3 AND id <= ?4)) \
                 ORDER BY created, id",
            )?;
            let doomed: Vec<(EntryId, bool)> = stmt
                .query_map(
                    params![entry.kind.name(), subject_key(&entry.subject), entry.created, id],
                    |r| Ok((r.get(0)?, r.get(1)?)),
                )?
                .collect::<Result<_, _>>()?;
            for &(gone, active) in &doomed {
                if active {
                    tx.execute("DELETE FROM memory_fts WHERE rowid = ?1", [gone])?;
                }
                tx.execute("DELETE FROM entries WHERE id = ?1", [gone])?;
                tx.execute("UPDATE entries SET supersedes = NULL WHERE supersedes = ?1", [gone])?;
            }
            // Deleting leaves the words in index segments (marked deleted)
            // until a merge; optimize merges now, dropping them.
            tx.execute("INSERT INTO memory_fts (memory_fts) VALUES ('optimize')", [])?;
            Ok(Ok(doomed.into_iter().map(|(id, _)| id).collect()))
        })
    }

    fn export(&self) -> Result<Vec<Entry>, MemoryError> {
        self.list(true)
    }

    fn import(&self, entries: &[Entry], file: &str) -> Result<Imported, MemoryError> {
        import::import(self, entries, file)
    }
}

/// What an entry keeps from elsewhere when imported.
struct Stored {
    created: Option<String>,
    last_used: Option<String>,
    use_count: i64,
    id: Option<EntryId>,
}

fn insert(
    tx: &Transaction<'_>,
    entry: &NewEntry,
    key: &str,
    stored: &Stored,
    supersedes: Option<EntryId>,
    superseded_by: Option<EntryId>,
) -> rusqlite::Result<EntryId> {
    let columns = entry.provenance.columns();
    tx.execute(
        &format!(
            "INSERT INTO entries (id, kind, subject, subject_key, text, task_type, source, run_id, \
             step, tool, created, last_used, use_count, supersedes, superseded_by, imported_from) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, COALESCE(?11, {NOW}), ?12, ?13, ?14, \
             ?15, ?16)"
        ),
        params![
            stored.id,
            entry.kind.name(),
            entry.subject,
            key,
            entry.text,
            entry.task_type,
            columns.source,
            columns.run_id,
            columns.step,
            columns.tool,
            stored.created,
            stored.last_used,
            stored.use_count,
            supersedes,
            superseded_by,
            columns.imported_from
        ],
    )?;
    Ok(tx.last_insert_rowid())
}

/// The active entry of a kind and subject key.
fn active(conn: &Connection, kind: Kind, key: &str) -> rusqlite::Result<Option<Entry>> {
    let sql = format!(
        "SELECT {COLUMNS} FROM entries e WHERE e.kind = ?1 AND e.subject_key = ?2 AND \
         e.superseded_by IS NULL"
    );
    conn.prepare_cached(&sql)?.query_row(params![kind.name(), key], entry_from_row).optional()
}

fn by_id(conn: &Connection, id: EntryId) -> rusqlite::Result<Option<Entry>> {
    let sql = format!("SELECT {COLUMNS} FROM entries e WHERE e.id = ?1");
    conn.prepare_cached(&sql)?.query_row([id], entry_from_row).optional()
}

fn entry_from_row(row: &Row<'_>) -> rusqlite::Result<Entry> {
    let kind: String = row.get(1)?;
    let kind = Kind::from_name(&kind).ok_or_else(|| {
        rusqlite::Error::FromSqlConversionFailure(
            1,
            rusqlite::types::Type::Text,
            format!("unknown kind {kind:?}").into(),
        )
    })?;
    let provenance = Provenance::from_columns(
        &row.get::<_, String>(5)?,
        row.get(6)?,
        row.get(7)?,
        row.get(8)?,
        row.get(14)?,
    );
    Ok(Entry {
        id: row.get(0)?,
        kind,
        subject: row.get(2)?,
        text: row.get(3)?,
        task_type: row.get(4)?,
        provenance,
        created: row.get(9)?,
        last_used: row.get(10)?,
        use_count: row.get::<_, i64>(11)?.max(0) as u64,
        supersedes: row.get(12)?,
        superseded_by: row.get(13)?,
    })
}

fn database(name: &str, e: rusqlite::Error) -> MemoryError {
    MemoryError::Database { path: name.to_owned(), message: e.to_string() }
}

mod import;
mod search;
#[cfg(test)]
mod tests;
