//! [`MemoryStore`] in a PostgreSQL database that many hosts share, searched
//! with PostgreSQL's text search.
//!
//! The same rules as [`SqliteStore`](super::SqliteStore) (the shared store
//! tests run against both): add-only with supersession, forgetting that
//! deletes, ranked full-text recall with the task type first, provenance,
//! limits, export and import.
//!
//! Layout (schema version 1, in `reach_memory_meta`):
//! - `reach_memory`: one row per entry, the columns of the SQLite store's
//!   `entries`. A partial unique index allows one active entry per kind and
//!   subject key; ids come from an identity sequence, never handed out
//!   twice.
//! - `search`, a generated `tsvector` column — the subject at weight A, the
//!   text at weight B, `english` stemming — that is `NULL` once the entry is
//!   superseded, with a GIN index: like the SQLite store's index, it holds
//!   the active entries only.
//!
//! Many hosts at once: an `add` holds a transaction-level advisory lock on
//! its kind and subject, so two hosts adding to one subject take turns and
//! one supersedes the other; an import locks the table against adds. A
//! wait is bounded by `lock_timeout` (10 s), a statement by
//! `statement_timeout` (60 s); on the client's side, connecting — TCP, TLS
//! and login together — by `connect_timeout` (10 s unless the URL says
//! otherwise) and a whole call by [`CALL_TIMEOUT`], so a server that
//! accepts and then says nothing cannot hang a host. A connection that
//! dropped or timed out is made again at the next call.
//!
//! The client and its own single-threaded async runtime live on a thread of
//! their own, so the store can be called from anywhere, the host's async
//! tasks included, as the SQLite store is.
//!
//! Forgetting: the rows are deleted and the table vacuumed at once, so the
//! forgotten entries leave the table's and the index's live pages. What
//! PostgreSQL keeps beyond that — the write-ahead log until it is recycled,
//! base backups, replicas — is the database operator's to manage.

use std::time::Duration;

use tokio_postgres::{Client, Transaction};

use super::{
    Added, Entry, EntryId, History, Imported, Kind, MAX_ENTRIES, MemoryError, MemoryStore,
    NewEntry, checked, subject_key,
};

/// How long connecting (TCP, TLS and login) may take when the URL does not say.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// The most one call may take once connected: the server's own
/// `statement_timeout` (60 s) and `lock_timeout` (10 s), and some margin.
pub const CALL_TIMEOUT: Duration = Duration::from_secs(90);

/// Long-term memory in a PostgreSQL database.
pub struct PostgresStore {
    worker: Worker,
    max_entries: u64,
}

impl std::fmt::Debug for PostgresStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PostgresStore").field("url", &self.worker.name()).finish_non_exhaustive()
    }
}

impl PostgresStore {
    /// Connect to the database at `url` (`postgres://user@host:port/db?…`)
    /// with `password` (from [`MEMORY_PASSWORD_ENV`](crate::policy::MEMORY_PASSWORD_ENV),
    /// never from the URL), creating the schema when it is missing.
    /// Refuses a URL with a password in it, and a database whose schema a
    /// newer version of Agent Reach wrote.
    pub fn connect(url: &str, password: Option<&str>) -> Result<PostgresStore, MemoryError> {
        let worker = Worker::start(url, password)?;
        let store = PostgresStore { worker, max_entries: MAX_ENTRIES };
        // Connecting runs the client's own runtime: on the store's thread, never the caller's.
        match store.call(async |client, name| schema::setup(client, name).await) {
            Err(MemoryError::Database { path, mut message })
                if password.is_none() && message.contains("password") =>
            {
                message.push_str(&format!(
                    " (no password was given: put it in {})",
                    crate::policy::MEMORY_PASSWORD_ENV
                ));
                Err(MemoryError::Database { path, message })
            }
            Err(other) => Err(other),
            Ok(()) => Ok(store),
        }
    }

    /// The database's URL as given to [`PostgresStore::connect`], without
    /// a password.
    pub fn url(&self) -> &str {
        self.worker.name()
    }

    /// A lower entry limit than [`MAX_ENTRIES`], for tests.
    #[cfg(test)]
    pub(crate) fn with_max_entries(mut self, max: u64) -> PostgresStore {
        self.max_entries = max;
        self
    }

    /// Run `f` with the client on the connection's thread and wait for it.
    fn call<T: Send + 'static>(
        &self,
        f: impl AsyncFnOnce(&mut Client, &str) -> Result<T, MemoryError> + Send + 'static,
    ) -> Result<T, MemoryError> {
        self.call_within(CALL_TIMEOUT, f)
    }

    /// [`call`](Self::call) with `limit` instead of [`CALL_TIMEOUT`].
    fn call_within<T: Send + 'static>(
        &self,
        limit: Duration,
        f: impl AsyncFnOnce(&mut Client, &str) -> Result<T, MemoryError> + Send + 'static,
    ) -> Result<T, MemoryError> {
        self.worker.call_within(limit, f)
    }

    /// Run `f` in one transaction; it commits only when `f` succeeds.
    fn write<T: Send + 'static>(
        &self,
        f: impl AsyncFnOnce(&Transaction<'_>, Limits) -> Result<T, Failure> + Send + 'static,
    ) -> Result<T, MemoryError> {
        self.write_within(CALL_TIMEOUT, f)
    }

    /// [`write`](Self::write) with `limit` instead of [`CALL_TIMEOUT`].
    fn write_within<T: Send + 'static>(
        &self,
        limit: Duration,
        f: impl AsyncFnOnce(&Transaction<'_>, Limits) -> Result<T, Failure> + Send + 'static,
    ) -> Result<T, MemoryError> {
        let limits = Limits { max_entries: self.max_entries };
        self.call_within(limit, async move |client, name| {
            let tx = client.transaction().await.map_err(|e| database(name, &e))?;
            let value = f(&tx, limits).await.map_err(|e| e.into_error(name))?;
            tx.commit().await.map_err(|e| database(name, &e))?;
            Ok(value)
        })
    }

    /// Run `f` to read.
    fn read<T: Send + 'static>(
        &self,
        f: impl AsyncFnOnce(&Client) -> Result<T, tokio_postgres::Error> + Send + 'static,
    ) -> Result<T, MemoryError> {
        self.call(async move |client, name| f(client).await.map_err(|e| database(name, &e)))
    }
}

/// The limits a write checks against.
#[derive(Clone, Copy)]
struct Limits {
    max_entries: u64,
}

/// Why a write failed: the database, or a rule of the store.
enum Failure {
    Database(tokio_postgres::Error),
    Memory(MemoryError),
}

impl Failure {
    fn into_error(self, name: &str) -> MemoryError {
        match self {
            Failure::Database(e) => database(name, &e),
            Failure::Memory(e) => e,
        }
    }
}

impl From<tokio_postgres::Error> for Failure {
    fn from(e: tokio_postgres::Error) -> Failure {
        Failure::Database(e)
    }
}

impl From<MemoryError> for Failure {
    fn from(e: MemoryError) -> Failure {
        Failure::Memory(e)
    }
}

impl MemoryStore for PostgresStore {
    fn add(&self, entry: NewEntry) -> Result<Added, MemoryError> {
        let entry = checked(entry)?;
        self.write(async move |tx, limits| add(tx, &entry, limits).await)
    }

    fn search(
        &self,
        query: &str,
        task_type: Option<&str>,
        limit: usize,
    ) -> Result<Vec<Entry>, MemoryError> {
        let (query, task_type) = (query.to_owned(), task_type.map(str::to_owned));
        self.read(async move |client| {
            search::search(client, &query, task_type.as_deref(), limit).await
        })
    }

    fn get(&self, id: EntryId) -> Result<Option<History>, MemoryError> {
        self.read(async move |client| {
            let Some(entry) = by_id(client, id).await? else { return Ok(None) };
            let sql = format!(
                "SELECT {COLUMNS} FROM reach_memory WHERE kind = $1 AND subject_key = $2 \
                 ORDER BY created, id"
            );
            let rows =
                client.query(&sql, &[&entry.kind.name(), &subject_key(&entry.subject)]).await?;
            let versions = rows.iter().map(entry_from_row).collect::<Result<_, _>>()?;
            Ok(Some(History { entry, versions }))
        })
    }

    fn list(&self, include_superseded: bool) -> Result<Vec<Entry>, MemoryError> {
        let filter = if include_superseded { "" } else { "WHERE superseded_by IS NULL" };
        let sql = format!("SELECT {COLUMNS} FROM reach_memory {filter} ORDER BY id");
        self.read(async move |client| {
            client.query(&sql, &[]).await?.iter().map(entry_from_row).collect()
        })
    }

    fn mark_used(&self, ids: &[EntryId]) -> Result<(), MemoryError> {
        if ids.is_empty() {
            return Ok(());
        }
        let ids = ids.to_vec();
        self.write(async move |tx, _| {
            let stmt = tx
                .prepare(&format!(
                    "UPDATE reach_memory SET last_used = {NOW}, use_count = use_count + 1 \
                     WHERE id = $1"
                ))
                .await?;
            // One by one: an id listed twice counts twice, as in the SQLite store.
            for id in &ids {
                tx.execute(&stmt, &[id]).await?;
            }
            Ok(())
        })
    }

    fn forget(&self, id: EntryId) -> Result<Vec<EntryId>, MemoryError> {
        let gone = self.write(async move |tx, _| {
            let Some(entry) = by_id(tx, id).await? else {
                return Err(MemoryError::NotFound { id }.into());
            };
            let key = subject_key(&entry.subject);
            lock_subject(tx, entry.kind, &key).await?;
            // The entry and the versions before it: by time, as `get` orders them.
            let doomed: Vec<EntryId> = tx
                .query(
                    "SELECT id FROM reach_memory WHERE kind = $1 AND subject_key = $2 \
                     AND (created < $3 OR (created = $3 AND id <= $4)) ORDER BY created, id",
                    &[&entry.kind.name(), &key, &entry.created, &id],
                )
                .await?
                .iter()
                .map(|r| r.get(0))
                .collect();
            tx.execute("DELETE FROM reach_memory WHERE id = ANY($1)", &[&doomed]).await?;
            tx.execute(
                "UPDATE reach_memory SET supersedes = NULL WHERE supersedes = ANY($1)",
                &[&doomed],
            )
            .await?;
            Ok(doomed)
        })?;
        // Out of the table's live pages and the index now, not at the next autovacuum.
        // VACUUM cannot run in a transaction; a failure (not the table's owner) leaves the
        // rows deleted, only not yet vacuumed.
        let _ = self.read(async |client| client.batch_execute("VACUUM reach_memory").await);
        Ok(gone)
    }

    fn export(&self) -> Result<Vec<Entry>, MemoryError> {
        self.list(true)
    }

    fn import(&self, entries: &[Entry], file: &str) -> Result<Imported, MemoryError> {
        let report = import::import(self, entries.to_vec(), file.to_owned())?;
        if report.added >= 1_000 {
            // The planner's statistics (and bm25's N) see the new entries now, not at the next
            // autovacuum. A failure only leaves them for later.
            let _ = self.read(async |client| client.batch_execute("ANALYZE reach_memory").await);
        }
        Ok(report)
    }
}

/// [`MemoryStore::add`] in `tx`.
async fn add(tx: &Transaction<'_>, entry: &NewEntry, limits: Limits) -> Result<Added, Failure> {
    let key = subject_key(&entry.subject);
    lock_subject(tx, entry.kind, &key).await?;
    let current = active(tx, entry.kind, &key).await?;
    if let Some(current) = current.as_ref().filter(|c| c.text == entry.text) {
        return Ok(Added::Existing(current.clone()));
    }
    check_room(tx, limits).await?;
    if let Some(current) = &current {
        tx.execute(
            "UPDATE reach_memory SET superseded_by = $1 WHERE id = $2",
            &[&RELINKING, &current.id],
        )
        .await?;
    }
    // A new version is always later than the one it supersedes, even within one millisecond
    // (see the SQLite store).
    let created: Option<String> = match &current {
        Some(current) => Some(
            tx.query_one(
                &format!(
                    "SELECT GREATEST({NOW}, to_char(($1::text::timestamptz AT TIME ZONE 'UTC') + \
                     interval '1 millisecond', 'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"'))"
                ),
                &[&current.created],
            )
            .await?
            .get(0),
        ),
        None => None,
    };
    let stored = Stored { created, last_used: None, use_count: 0, id: None };
    let id = insert(tx, entry, &key, &stored, current.as_ref().map(|c| c.id), None).await?;
    let new = by_id(tx, id).await?.ok_or_else(|| missing(id))?;
    Ok(match current {
        Some(current) => {
            tx.execute(
                "UPDATE reach_memory SET superseded_by = $1 WHERE id = $2",
                &[&id, &current.id],
            )
            .await?;
            let previous = by_id(tx, current.id).await?.ok_or_else(|| missing(current.id))?;
            Added::Superseded { entry: new, previous: Box::new(previous) }
        }
        None => Added::New(new),
    })
}

/// Hold, until the transaction ends, the lock every writer of this kind
/// and subject takes first: two hosts adding to one subject take turns.
async fn lock_subject(
    tx: &Transaction<'_>,
    kind: Kind,
    key: &str,
) -> Result<(), tokio_postgres::Error> {
    tx.execute(
        "SELECT pg_advisory_xact_lock(hashtextextended($1, 7457))",
        &[&format!("{}\n{key}", kind.name())],
    )
    .await?;
    Ok(())
}

/// Refuse one more entry when the store is full. Below the limit by the
/// highest id, nothing needs counting.
async fn check_room(tx: &Transaction<'_>, limits: Limits) -> Result<(), Failure> {
    let highest: i64 =
        tx.query_one("SELECT COALESCE(max(id), 0) FROM reach_memory", &[]).await?.get(0);
    if (highest as u64) < limits.max_entries {
        return Ok(());
    }
    let count: i64 = tx.query_one("SELECT count(*) FROM reach_memory", &[]).await?.get(0);
    if (count as u64) < limits.max_entries {
        Ok(())
    } else {
        Err(MemoryError::Full { limit: limits.max_entries }.into())
    }
}

#[cfg(test)]
mod cluster;
mod connection;
mod import;
mod rows;
mod schema;
mod search;

use connection::{Worker, database};
use rows::{COLUMNS, NOW, RELINKING, Stored, active, by_id, entry_from_row, insert, missing};
#[cfg(test)]
mod tests;
