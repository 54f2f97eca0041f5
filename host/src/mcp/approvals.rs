//! The sealed `requestState` of a `confirm` question asked of a client on
//! protocol 2026-07-28, and the record of which answers were used.
//!
//! Such a client is asked with an `InputRequiredResult` and retries the call
//! with the person's answer and the state we gave it. The server keeps
//! nothing between the two requests (any instance may get the retry), so
//! the state itself must say what was asked, of whom, and until when:
//!
//! `v2.` + base64url(nonce (16 random bytes) ‖ expiry (unix seconds, 8) ‖
//! client tag (16) ‖ MAC (32)), the MAC a keyed BLAKE3 over the version,
//! nonce, expiry, client tag, skill, tool and arguments; the client tag a
//! keyed BLAKE3 of what the server knows of the client (its bearer token,
//! its session id, its declared name; over stdio, this process).
//!
//! A retry runs the call only when the MAC verifies for these very
//! arguments, the client is the one asked, the state has not expired
//! ([`STATE_TTL`]), and its nonce was never used before: the first use is
//! recorded and every later one refused. Instances that accept each other's
//! states (one [`STATE_KEY_ENV`]) must share that record, an SQLite file
//! ([`APPROVALS_ENV`]), or one yes would run once per instance.
//!
//! What this does not do: tell a person from a program. Whoever holds the
//! token (or, without one, any local process) can answer its own question;
//! an MCP `confirm` is only as strong as the client that answers it.

use rusqlite::{Connection, OptionalExtension as _, TransactionBehavior};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Environment variable with the secret instances share to accept each
/// other's request states (any string; derived with BLAKE3).
pub const STATE_KEY_ENV: &str = "REACH_MCP_STATE_KEY";

/// Environment variable naming the SQLite file where instances that share
/// [`STATE_KEY_ENV`] record used approvals.
pub const APPROVALS_ENV: &str = "REACH_MCP_APPROVALS";

/// How long a question's answer may take to come back: as long as a person
/// has to answer an `elicitation/create` request on a session, so both ways
/// of asking give a person the same time.
pub const STATE_TTL: Duration = Duration::from_secs(600);

/// Most approvals kept as used at once (each until its state expires).
/// A person confirms a few calls a minute; ten thousand within
/// [`STATE_TTL`] is far beyond that and keeps the record under ~1 MB. Past
/// it, new approvals are refused rather than the record allowed to grow.
pub const MAX_OUTSTANDING: usize = 10_000;

/// The text every state starts with: the format's version.
const PREFIX: &str = "v2.";
const NONCE: usize = 16;
const TAG: usize = 16;
const MAC: usize = 32;
const STATE_BYTES: usize = NONCE + 8 + TAG + MAC;

/// Why approvals could not be set up or recorded.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ApprovalsError {
    /// A shared state key without a shared record of used approvals.
    #[error(
        "{STATE_KEY_ENV} is set, so other instances' confirmation answers are accepted here, but \
         no record of used answers is shared with them: one \"yes\" could run once at every \
         instance. Set {APPROVALS_ENV} (or --approvals) to an SQLite file every instance opens, on \
         a local disk (e.g. /srv/reach/mcp-approvals.db)"
    )]
    NeedsStore,
    /// The record's file could not be created or checked.
    #[error("the approvals record {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The record's file is open to other users.
    #[error("the approvals record {path} {why}")]
    NotPrivate {
        /// The file.
        path: PathBuf,
        /// What is wrong, with the fix.
        why: String,
    },
    /// SQLite failed.
    #[error("the approvals record {path}: {source}")]
    Database {
        /// The file.
        path: PathBuf,
        /// Why.
        source: rusqlite::Error,
    },
    /// The server stopped while the approval was being recorded.
    #[error("the server is shutting down; the answer was not recorded, so the call did not run")]
    Interrupted,
    /// Too many approvals within [`STATE_TTL`].
    #[error(
        "{max} confirmations were accepted in the last {} minutes, the most this server keeps \
         track of; wait a few minutes and call again",
        STATE_TTL.as_secs() / 60
    )]
    Full {
        /// [`MAX_OUTSTANDING`].
        max: usize,
    },
}

/// What a state is checked against: the call about to run.
pub(crate) struct Subject<'a> {
    pub skill: &'a str,
    pub tool: &'a str,
    pub arguments: &'a serde_json::Value,
}

/// What the server knows of the client that sent a request.
pub(crate) struct Client<'a> {
    /// The request's bearer token; `None` over stdio or without one.
    pub authorization: Option<&'a [u8]>,
    /// `Mcp-Session-Id`, when the request has one.
    pub session: Option<&'a [u8]>,
    /// Whether the request came over HTTP (else stdio: this process).
    pub http: bool,
    /// The name the client declared.
    pub name: Option<&'a str>,
}

/// A retried state, checked.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Verdict {
    /// Ours, for this call and client, not expired; still to be spent.
    Valid(Spendable),
    /// Not a state for this call: other arguments, another key, damaged.
    NotForThis,
    /// Ours and for this call, but given to another client.
    OtherClient,
    /// Ours and for this call and client, but too old.
    Expired,
}

/// A verified state's nonce and expiry, to record as used.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Spendable {
    nonce: [u8; NONCE],
    expires: u64,
}

/// Seals and checks request states, and remembers which were used.
pub struct Approvals {
    key: [u8; 32],
    used: Arc<dyn UsedNonces>,
    /// Stands for "this process" in the client tag of a stdio client.
    instance: [u8; 16],
    clock: Arc<dyn Fn() -> u64 + Send + Sync>,
}

impl std::fmt::Debug for Approvals {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Approvals").finish_non_exhaustive()
    }
}

impl Approvals {
    /// A random key and an in-memory record: states are good only at this
    /// process, until it exits.
    pub fn per_process() -> Approvals {
        Approvals::new(random(), Arc::new(InMemory::new(MAX_OUTSTANDING)))
    }

    /// States sealed with `secret`, accepted by every instance with the
    /// same secret; used ones recorded in the SQLite file `store`, which
    /// those instances must share (created 0600 when missing).
    pub fn shared(secret: &str, store: &Path) -> Result<Approvals, ApprovalsError> {
        let key = blake3::derive_key("agent-reach mcp request state v2", secret.as_bytes());
        Ok(Approvals::new(key, Arc::new(Sqlite::open(store, MAX_OUTSTANDING)?)))
    }

    /// From the environment: [`Approvals::shared`] when [`STATE_KEY_ENV`]
    /// is set (then `store`, or else [`APPROVALS_ENV`], must name the
    /// shared record: fails with [`ApprovalsError::NeedsStore`]),
    /// otherwise [`Approvals::per_process`].
    pub fn from_env(store: Option<&Path>) -> Result<Approvals, ApprovalsError> {
        let from_env = std::env::var_os(APPROVALS_ENV).filter(|s| !s.is_empty()).map(PathBuf::from);
        let store = store.map(Path::to_path_buf).or(from_env);
        match (std::env::var(STATE_KEY_ENV).ok().filter(|s| !s.is_empty()), store) {
            (Some(secret), Some(store)) => Approvals::shared(&secret, &store),
            (Some(_), None) => Err(ApprovalsError::NeedsStore),
            (None, _) => Ok(Approvals::per_process()),
        }
    }

    fn new(key: [u8; 32], used: Arc<dyn UsedNonces>) -> Approvals {
        Approvals { key, used, instance: random(), clock: Arc::new(unix_now) }
    }

    /// Read the time from `clock` (unix seconds) instead of the system's.
    #[cfg(test)]
    pub(crate) fn with_clock(
        mut self,
        clock: impl Fn() -> u64 + Send + Sync + 'static,
    ) -> Approvals {
        self.clock = Arc::new(clock);
        self
    }

    /// A new state naming `subject`, for `client`, good for [`STATE_TTL`].
    pub(crate) fn seal(&self, subject: &Subject<'_>, client: &Client<'_>) -> String {
        use base64::Engine as _;
        let nonce: [u8; NONCE] = random();
        let expires = (self.clock)().saturating_add(STATE_TTL.as_secs());
        let tag = self.client_tag(client);
        let mac = self.mac(&nonce, expires, &tag, subject);
        let mut bytes = Vec::with_capacity(STATE_BYTES);
        bytes.extend_from_slice(&nonce);
        bytes.extend_from_slice(&expires.to_be_bytes());
        bytes.extend_from_slice(&tag);
        bytes.extend_from_slice(mac.as_bytes());
        format!("{PREFIX}{}", base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes))
    }

    /// Whether `state` (from a retry) lets `subject` run for `client`.
    pub(crate) fn verify(
        &self,
        state: &str,
        subject: &Subject<'_>,
        client: &Client<'_>,
    ) -> Verdict {
        use base64::Engine as _;
        let Some(bytes) = state
            .strip_prefix(PREFIX)
            .and_then(|b| base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(b).ok())
        else {
            return Verdict::NotForThis;
        };
        if bytes.len() != STATE_BYTES {
            return Verdict::NotForThis;
        }
        let (nonce, rest) = bytes.split_at(NONCE);
        let (expires, rest) = rest.split_at(8);
        let (tag, mac) = rest.split_at(TAG);
        let nonce: [u8; NONCE] = nonce.try_into().unwrap_or_default();
        let expires = u64::from_be_bytes(expires.try_into().unwrap_or_default());
        let tag: [u8; TAG] = tag.try_into().unwrap_or_default();
        let given: [u8; MAC] = mac.try_into().unwrap_or_default();
        // blake3::Hash compares in constant time.
        if self.mac(&nonce, expires, &tag, subject) != blake3::Hash::from_bytes(given) {
            return Verdict::NotForThis;
        }
        // The tag is authentic now (it is under the MAC): compare it.
        if tag != self.client_tag(client) {
            return Verdict::OtherClient;
        }
        if (self.clock)() >= expires {
            return Verdict::Expired;
        }
        Verdict::Valid(Spendable { nonce, expires })
    }

    /// Record a verified state as used: `Ok(true)` the first time (the call
    /// may run), `Ok(false)` ever after, until it expires and could not
    /// verify anyway.
    pub(crate) async fn spend(&self, state: Spendable) -> Result<bool, ApprovalsError> {
        let used = Arc::clone(&self.used);
        let now = (self.clock)();
        // SQLite may wait on another instance's write lock: off the runtime's threads.
        tokio::task::spawn_blocking(move || used.first_use(&state.nonce, state.expires, now))
            .await
            .unwrap_or_else(|join| match join.try_into_panic() {
                Ok(panic) => std::panic::resume_unwind(panic),
                Err(_) => Err(ApprovalsError::Interrupted),
            })
    }

    fn client_tag(&self, client: &Client<'_>) -> [u8; TAG] {
        let mut hasher = blake3::Hasher::new_keyed(&self.key);
        hasher.update(b"client tag\0");
        if client.http {
            field(&mut hasher, b"http");
            // The token itself, not stored anywhere: only under the keyed hash.
            field(&mut hasher, client.authorization.unwrap_or_default());
            field(&mut hasher, client.session.unwrap_or_default());
        } else {
            // A stdio client is the process at the other end of our pipes:
            // its states are good at this process only.
            field(&mut hasher, b"stdio");
            field(&mut hasher, &self.instance);
        }
        field(&mut hasher, client.name.unwrap_or_default().as_bytes());
        let mut tag = [0u8; TAG];
        tag.copy_from_slice(&hasher.finalize().as_bytes()[..TAG]);
        tag
    }

    fn mac(
        &self,
        nonce: &[u8; NONCE],
        expires: u64,
        tag: &[u8; TAG],
        subject: &Subject<'_>,
    ) -> blake3::Hash {
        let mut hasher = blake3::Hasher::new_keyed(&self.key);
        hasher
            .update(b"request state\0")
            .update(PREFIX.as_bytes())
            .update(nonce)
            .update(&expires.to_be_bytes())
            .update(tag);
        field(&mut hasher, subject.skill.as_bytes());
        field(&mut hasher, subject.tool.as_bytes());
        field(&mut hasher, subject.arguments.to_string().as_bytes());
        hasher.finalize()
    }
}

/// `bytes` with its length first, so no two field lists hash alike.
fn field(hasher: &mut blake3::Hasher, bytes: &[u8]) {
    hasher.update(&(bytes.len() as u64).to_be_bytes()).update(bytes);
}

fn unix_now() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs())
}

/// Random bytes from the kernel. Should that ever fail, bytes no client
/// can predict or repeat: a hash of the time, a counter and the process.
fn random<const N: usize>() -> [u8; N] {
    let mut out = [0u8; N];
    if rustix::rand::getrandom(&mut out, rustix::rand::GetRandomFlags::empty())
        .is_ok_and(|n| n == N)
    {
        return out;
    }
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let seed = format!(
        "{:?}{}{}{:p}",
        std::time::SystemTime::now(),
        COUNTER.fetch_add(1, Ordering::Relaxed),
        std::process::id(),
        &out
    );
    let mut reader = blake3::Hasher::new().update(seed.as_bytes()).finalize_xof();
    reader.fill(&mut out);
    out
}

/// Which nonces were spent, each kept until its state expires.
trait UsedNonces: Send + Sync {
    /// Record `nonce` (good until `expires`); `Ok(true)` when this is its
    /// first use. Refuses past its limit rather than grow.
    fn first_use(
        &self,
        nonce: &[u8; NONCE],
        expires: u64,
        now: u64,
    ) -> Result<bool, ApprovalsError>;
}

/// One process's record.
struct InMemory {
    used: Mutex<HashMap<[u8; NONCE], u64>>,
    max: usize,
}

impl InMemory {
    fn new(max: usize) -> InMemory {
        InMemory { used: Mutex::new(HashMap::new()), max }
    }
}

impl UsedNonces for InMemory {
    fn first_use(
        &self,
        nonce: &[u8; NONCE],
        expires: u64,
        now: u64,
    ) -> Result<bool, ApprovalsError> {
        let mut used = self.used.lock().unwrap_or_else(|e| e.into_inner());
        if used.contains_key(nonce) {
            return Ok(false);
        }
        if used.len() >= self.max {
            // An expired state no longer verifies, so its nonce can go.
            used.retain(|_, until| *until > now);
            if used.len() >= self.max {
                return Err(ApprovalsError::Full { max: self.max });
            }
        }
        used.insert(*nonce, expires);
        Ok(true)
    }
}

/// The record instances share: the nonce is the primary key, so of two
/// instances inserting it at once exactly one succeeds.
struct Sqlite {
    conn: Mutex<Connection>,
    path: PathBuf,
    max: usize,
}

impl Sqlite {
    fn open(path: &Path, max: usize) -> Result<Sqlite, ApprovalsError> {
        let io = |source| ApprovalsError::Io { path: path.to_owned(), source };
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent).map_err(io)?;
        }
        // Created 0600 before SQLite opens it (SQLite would use 0644), and
        // checked: anyone who can write it can clear it and replay a yes.
        let file = private_file(path).map_err(io)?;
        check_private(&file, path)?;
        let db = |source| ApprovalsError::Database { path: path.to_owned(), source };
        let conn = Connection::open(path).map_err(db)?;
        conn.busy_timeout(Duration::from_secs(5)).map_err(db)?;
        // WAL: instances read and write the file at once without blocking readers.
        let _mode: String =
            conn.query_row("PRAGMA journal_mode = WAL", [], |r| r.get(0)).map_err(db)?;
        conn.execute_batch(
            "CREATE TABLE IF NOT EXISTS used_states \
             (nonce BLOB PRIMARY KEY, expires INTEGER NOT NULL) WITHOUT ROWID;",
        )
        .map_err(db)?;
        Ok(Sqlite { conn: Mutex::new(conn), path: path.to_owned(), max })
    }
}

impl UsedNonces for Sqlite {
    fn first_use(
        &self,
        nonce: &[u8; NONCE],
        expires: u64,
        now: u64,
    ) -> Result<bool, ApprovalsError> {
        let db = |source| ApprovalsError::Database { path: self.path.clone(), source };
        let mut conn = self.conn.lock().unwrap_or_else(|e| e.into_inner());
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate).map_err(db)?;
        let seen: Option<i64> = tx
            .query_row("SELECT expires FROM used_states WHERE nonce = ?1", [&nonce[..]], |r| {
                r.get(0)
            })
            .optional()
            .map_err(db)?;
        if seen.is_some() {
            return Ok(false);
        }
        tx.execute("DELETE FROM used_states WHERE expires <= ?1", [now as i64]).map_err(db)?;
        let count: i64 =
            tx.query_row("SELECT count(*) FROM used_states", [], |r| r.get(0)).map_err(db)?;
        if count as usize >= self.max {
            return Err(ApprovalsError::Full { max: self.max });
        }
        tx.execute(
            "INSERT INTO used_states (nonce, expires) VALUES (?1, ?2)",
            rusqlite::params![&nonce[..], expires as i64],
        )
        .map_err(db)?;
        tx.commit().map_err(db)?;
        Ok(true)
    }
}

/// `path` opened, created with mode 0600 when missing; never through a
/// symbolic link.
#[cfg(unix)]
fn private_file(path: &Path) -> std::io::Result<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt as _;
    std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .mode(0o600)
        .custom_flags(rustix::fs::OFlags::NOFOLLOW.bits() as i32)
        .open(path)
}

#[cfg(not(unix))]
fn private_file(path: &Path) -> std::io::Result<std::fs::File> {
    std::fs::OpenOptions::new().read(true).write(true).create(true).open(path)
}

/// The file is ours and no one else may write it.
#[cfg(unix)]
fn check_private(file: &std::fs::File, path: &Path) -> Result<(), ApprovalsError> {
    use std::os::unix::fs::MetadataExt as _;
    let meta =
        file.metadata().map_err(|source| ApprovalsError::Io { path: path.to_owned(), source })?;
    let me = rustix::process::geteuid().as_raw();
    let why = if !meta.is_file() {
        Some("is not a plain file".to_owned())
    } else if meta.uid() != me {
        Some(format!("belongs to user {}, not to {me} who runs the server", meta.uid()))
    } else if meta.mode() & 0o022 != 0 {
        Some(format!(
            "has mode {:o}: other users could clear it and replay an answer (fix: chmod 600)",
            meta.mode() & 0o777
        ))
    } else {
        None
    };
    why.map_or(Ok(()), |why| Err(ApprovalsError::NotPrivate { path: path.to_owned(), why }))
}

#[cfg(not(unix))]
fn check_private(_: &std::fs::File, _: &Path) -> Result<(), ApprovalsError> {
    Ok(())
}

#[cfg(test)]
mod tests;
