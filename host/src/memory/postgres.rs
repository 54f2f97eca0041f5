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

use std::str::FromStr as _;
use std::sync::mpsc;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use tokio_postgres::{Client, GenericClient, Row, Transaction};

use super::{
    Added, Entry, EntryId, History, Imported, Kind, MAX_ENTRIES, MemoryError, MemoryStore,
    NewEntry, Provenance, checked, subject_key,
};

/// How long connecting (TCP, TLS and login) may take when the URL does not say.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// The most one call may take once connected: the server's own
/// `statement_timeout` (60 s) and `lock_timeout` (10 s), and some margin.
pub const CALL_TIMEOUT: Duration = Duration::from_secs(90);

/// Every column of an entry, in the order [`entry_from_row`] reads them.
const COLUMNS: &str = "id, kind, subject, text, task_type, source, run_id, step, tool, created, \
                       last_used, use_count, supersedes, superseded_by, imported_from";

/// Now, on the database's clock (one clock for every host), as every time
/// in the store is written: `2026-12-02T11:36:25.123Z`.
const NOW: &str =
    "to_char(clock_timestamp() AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"')";

/// Stands in `superseded_by` while a row is being relinked, so the
/// one-active-entry index holds at every statement. Never an id.
const RELINKING: EntryId = 0;

/// A piece of work for the connection's thread.
type Job = Box<dyn FnOnce(&mut Connection) + Send>;

/// Long-term memory in a PostgreSQL database.
pub struct PostgresStore {
    jobs: Mutex<mpsc::Sender<Job>>,
    /// The URL without its password, for messages.
    name: Arc<str>,
    max_entries: u64,
}

impl std::fmt::Debug for PostgresStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PostgresStore").field("url", &self.name).finish_non_exhaustive()
    }
}

/// The connection's thread's state: its runtime, the client while
/// connected, and what it takes to connect again.
struct Connection {
    runtime: tokio::runtime::Runtime,
    config: tokio_postgres::Config,
    tls: tokio_postgres_rustls::MakeRustlsConnect,
    client: Option<Client>,
    name: Arc<str>,
}

impl Connection {
    /// Run `f` with a connected client (connecting again when there is none
    /// or it dropped), within the connect timeout and [`CALL_TIMEOUT`]. On a
    /// timeout the client is dropped, closing its socket.
    fn run<T>(
        &mut self,
        limit: Duration,
        f: impl AsyncFnOnce(&mut Client, &str) -> Result<T, MemoryError>,
    ) -> Result<T, MemoryError> {
        let Connection { runtime, config, tls, client, name } = self;
        let connect_limit = config.get_connect_timeout().copied().unwrap_or(CONNECT_TIMEOUT);
        runtime.block_on(async {
            if client.as_ref().is_none_or(Client::is_closed) {
                *client = None;
                let connecting = connect(config, tls.clone(), name);
                match tokio::time::timeout(connect_limit, connecting).await {
                    Ok(connected) => *client = Some(connected?),
                    Err(_) => return Err(timed_out(name, "connecting", connect_limit)),
                }
            }
            let Some(connected) = client.as_mut() else { unreachable!("connected above") };
            let outcome = tokio::time::timeout(limit, f(connected, name)).await;
            outcome.unwrap_or_else(|_| {
                *client = None;
                Err(timed_out(name, "a call", limit))
            })
        })
    }
}

/// A new connection, its socket served by a task on this thread's runtime.
async fn connect(
    config: &tokio_postgres::Config,
    tls: tokio_postgres_rustls::MakeRustlsConnect,
    name: &str,
) -> Result<Client, MemoryError> {
    let (client, connection) = config.connect(tls).await.map_err(|e| database(name, &e))?;
    // Ends with an error when the socket does; the client then reports itself closed.
    tokio::spawn(connection);
    // Bounded waits; the stop-word notices of the text search are noise.
    client
        .batch_execute(
            "SET lock_timeout = '10s'; SET statement_timeout = '60s'; \
             SET client_min_messages = warning",
        )
        .await
        .map_err(|e| database(name, &e))?;
    Ok(client)
}

fn timed_out(name: &str, what: &str, limit: Duration) -> MemoryError {
    MemoryError::Database {
        path: name.to_owned(),
        message: format!(
            "{what} took longer than {} s; the server is slow or not answering",
            limit.as_secs()
        ),
    }
}

impl PostgresStore {
    /// Connect to the database at `url` (`postgres://user@host:port/db?…`)
    /// with `password` (from [`MEMORY_PASSWORD_ENV`](crate::policy::MEMORY_PASSWORD_ENV),
    /// never from the URL), creating the schema when it is missing.
    /// Refuses a URL with a password in it, and a database whose schema a
    /// newer version of Agent Reach wrote.
    pub fn connect(url: &str, password: Option<&str>) -> Result<PostgresStore, MemoryError> {
        let name: Arc<str> = display_url(url).into();
        let invalid = |reason: String| MemoryError::Invalid { field: "database URL", reason };
        crate::policy::check_url(url).map_err(invalid)?;
        let mut config = tokio_postgres::Config::from_str(url)
            .map_err(|e| invalid(format!("{name:?} is not one PostgreSQL reads: {e}")))?;
        if let Some(password) = password {
            config.password(password);
        }
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(CONNECT_TIMEOUT);
        }
        config.application_name("agent-reach");
        // A dead peer is found in about a minute, not the system's two hours.
        config.keepalives_idle(Duration::from_secs(30));
        config.keepalives_interval(Duration::from_secs(10));
        config.keepalives_retries(3);
        config.tcp_user_timeout(Duration::from_secs(60));
        let runtime =
            tokio::runtime::Builder::new_current_thread().enable_all().build().map_err(|e| {
                MemoryError::Database {
                    path: name.to_string(),
                    message: format!("cannot start its runtime: {e}"),
                }
            })?;
        let tls = tokio_postgres_rustls::MakeRustlsConnect::new(crate::tls::client_config().as_ref().clone());
        let mut connection =
            Connection { runtime, config, tls, client: None, name: Arc::clone(&name) };
        let (jobs, queue) = mpsc::channel::<Job>();
        std::thread::Builder::new()
            .name("reach-memory-postgres".into())
            .spawn(move || {
                // Ends when the store (the only sender) is dropped.
                for job in queue {
                    job(&mut connection);
                }
            })
            .map_err(|e| MemoryError::Database {
                path: name.to_string(),
                message: format!("cannot start its thread: {e}"),
            })?;
        let store = PostgresStore { jobs: Mutex::new(jobs), name, max_entries: MAX_ENTRIES };
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
        &self.name
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
        let (reply, answer) = mpsc::sync_channel(1);
        let job: Job = Box::new(move |connection: &mut Connection| {
            let _ = reply.send(connection.run(limit, f));
        });
        let gone = || MemoryError::Database {
            path: self.name.to_string(),
            message: "its connection thread has stopped".into(),
        };
        self.jobs.lock().unwrap_or_else(PoisonError::into_inner).send(job).map_err(|_| gone())?;
        answer.recv().map_err(|_| gone())?
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

/// What an entry keeps from elsewhere when imported.
struct Stored {
    created: Option<String>,
    last_used: Option<String>,
    use_count: i64,
    id: Option<EntryId>,
}

async fn insert(
    tx: &Transaction<'_>,
    entry: &NewEntry,
    key: &str,
    stored: &Stored,
    supersedes: Option<EntryId>,
    superseded_by: Option<EntryId>,
) -> Result<EntryId, tokio_postgres::Error> {
    let columns = entry.provenance.columns();
    let step = columns.step.map(i64::from);
    let (id_column, id_value) = if stored.id.is_some() { ("id, ", "$16, ") } else { ("", "") };
    let sql = format!(
        "INSERT INTO reach_memory ({id_column}kind, subject, subject_key, text, task_type, source, \
         run_id, step, tool, created, last_used, use_count, supersedes, superseded_by, \
         imported_from) VALUES ({id_value}$1, $2, $3, $4, $5, $6, $7, $8, $9, COALESCE($10, {NOW}), \
         $11, $12, $13, $14, $15) RETURNING id"
    );
    let kind = entry.kind.name();
    let mut params: Vec<&(dyn tokio_postgres::types::ToSql + Sync)> = vec![
        &kind,
        &entry.subject,
        &key,
        &entry.text,
        &entry.task_type,
        &columns.source,
        &columns.run_id,
        &step,
        &columns.tool,
        &stored.created,
        &stored.last_used,
        &stored.use_count,
        &supersedes,
        &superseded_by,
        &columns.imported_from,
    ];
    if let Some(id) = &stored.id {
        params.push(id);
    }
    Ok(tx.query_one(&sql, &params).await?.get(0))
}

/// The active entry of a kind and subject key.
async fn active(
    client: &impl GenericClient,
    kind: Kind,
    key: &str,
) -> Result<Option<Entry>, tokio_postgres::Error> {
    let sql = format!(
        "SELECT {COLUMNS} FROM reach_memory WHERE kind = $1 AND subject_key = $2 AND \
         superseded_by IS NULL"
    );
    client.query_opt(&sql, &[&kind.name(), &key]).await?.as_ref().map(entry_from_row).transpose()
}

async fn by_id(
    client: &impl GenericClient,
    id: EntryId,
) -> Result<Option<Entry>, tokio_postgres::Error> {
    let sql = format!("SELECT {COLUMNS} FROM reach_memory WHERE id = $1");
    client.query_opt(&sql, &[&id]).await?.as_ref().map(entry_from_row).transpose()
}

/// An entry read back right after it was written is there; if not, the
/// database is not behaving, and the transaction rolls back.
fn missing(id: EntryId) -> Failure {
    Failure::Memory(MemoryError::Invalid {
        field: "database",
        reason: format!("lost entry {id} inside its own transaction; nothing was written"),
    })
}

fn entry_from_row(row: &Row) -> Result<Entry, tokio_postgres::Error> {
    let kind: String = row.try_get(1)?;
    // The table's CHECK allows the three kinds only.
    let kind = Kind::from_name(&kind).unwrap_or(Kind::Fact);
    let step: Option<i64> = row.try_get(7)?;
    let provenance = Provenance::from_columns(
        row.try_get(5)?,
        row.try_get(6)?,
        step.map(|s| u32::try_from(s).unwrap_or(0)),
        row.try_get(8)?,
        row.try_get(14)?,
    );
    Ok(Entry {
        id: row.try_get(0)?,
        kind,
        subject: row.try_get(2)?,
        text: row.try_get(3)?,
        task_type: row.try_get(4)?,
        provenance,
        created: row.try_get(9)?,
        last_used: row.try_get(10)?,
        use_count: row.try_get::<_, i64>(11)?.max(0) as u64,
        supersedes: row.try_get(12)?,
        superseded_by: row.try_get(13)?,
    })
}

/// The URL without a password (and without the `password` parameter), so
/// it can go into messages and logs.
pub(crate) fn display_url(url: &str) -> String {
    match url::Url::parse(url) {
        Ok(mut parsed) => {
            let _ = parsed.set_password(None);
            let kept: Vec<(String, String)> = parsed
                .query_pairs()
                .filter(|(k, _)| k != "password")
                .map(|(k, v)| (k.into_owned(), v.into_owned()))
                .collect();
            if kept.is_empty() {
                parsed.set_query(None);
            } else {
                parsed.query_pairs_mut().clear().extend_pairs(kept);
            }
            parsed.to_string()
        }
        Err(_) => "a PostgreSQL database".to_owned(),
    }
}

/// What PostgreSQL or the connection said, on one line, with the server's
/// own words (message, detail, hint) when it answered.
fn database(name: &str, e: &tokio_postgres::Error) -> MemoryError {
    let message = match e.as_db_error() {
        Some(db) => {
            let mut text = db.message().to_owned();
            for extra in [db.detail(), db.hint()].into_iter().flatten() {
                text.push_str(" — ");
                text.push_str(extra);
            }
            text
        }
        None => {
            let mut text = e.to_string();
            let mut source = std::error::Error::source(e);
            while let Some(cause) = source {
                text.push_str(": ");
                text.push_str(&cause.to_string());
                source = cause.source();
            }
            text
        }
    };
    MemoryError::Database { path: name.to_owned(), message }
}

#[cfg(test)]
mod cluster;
mod import;
mod schema;
mod search;
#[cfg(test)]
mod tests;
