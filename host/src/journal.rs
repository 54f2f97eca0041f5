//! Journaled writes: before a skill first changes a path in a writable
//! grant during a call, the host keeps what the path held (content and
//! permissions, or that it did not exist) in `.reach/runs/journal/RUN/` (in the runs folder), outside
//! every grant. A call that fails is rolled back from its own entries
//! before its error reaches the model; a finished run can be diffed and
//! undone, whole or from a step, without clobbering what someone else
//! changed since.
//!
//! On disk, per run: `blobs/<blake3>` (file contents, each kept once) and
//! `calls.jsonl`, one line per call that changed something: which call and
//! step, its outcome, and per path the state before the call and the
//! fingerprint after it. Everything is `0600`/`0700`, like the audit logs.
//! A call in progress also has `inflight/CALL.jsonl`, so that a call a
//! crash interrupted is rolled back by the next host to start
//! ([`recover`](crate::journal::recover)).
//!
//! The journal works on paths relative to a grant, through the grant's own
//! directory handle (cap-std): a link inside a grant cannot make it read or
//! restore anything outside.

mod call;
mod inflight;
mod prune;
mod state;
mod undo;

pub use call::CallJournal;
pub use inflight::{Recovered, recover};
pub use prune::{PruneReport, prune};
pub use state::{Fingerprint, State};
pub use undo::{Conflict, PathChange, UndoReport, changes, undo};

use cap_std::fs::Dir;
use serde::{Deserialize, Serialize};
use std::collections::HashSet;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// The journals' folder under the default runs folder.
pub const JOURNAL_DIR: &str = ".reach/runs/journal";

/// The per-run budget when the table sets none: 256 MiB of kept contents.
pub const DEFAULT_BUDGET_BYTES: u64 = 256 << 20;

/// What to do with a change that does not fit the budget.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum UndoMode {
    /// Refuse the change, with an error that names the budget (the default).
    #[default]
    Strict,
    /// Allow it, and mark the run not undoable for that path.
    BestEffort,
}

/// A run's journal limits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Budget {
    /// Bytes of prior contents a run may keep.
    pub max_bytes: u64,
    /// What a change past it gets.
    pub mode: UndoMode,
}

impl Default for Budget {
    fn default() -> Self {
        Budget { max_bytes: DEFAULT_BUDGET_BYTES, mode: UndoMode::Strict }
    }
}

/// Why a change was not journaled.
#[derive(Debug, thiserror::Error)]
pub enum JournalError {
    /// Keeping the prior state would pass the run's budget (strict mode).
    #[error(
        "{path}: keeping its prior state ({needed} bytes) would pass this run's journal budget of \
         {max} bytes ({used} used); nothing was changed. Raise `[journal] max_mb` in the table, or \
         set `undo = \"best-effort\"` to allow such changes without undo"
    )]
    OverBudget {
        /// The path, relative to its grant.
        path: String,
        /// Bytes it needed.
        needed: u64,
        /// Bytes used so far.
        used: u64,
        /// The budget.
        max: u64,
    },
    /// The journal could not be written (the change is refused: fail closed).
    #[error("{path}: its prior state could not be kept ({source}); nothing was changed")]
    Io {
        /// The path, relative to its grant.
        path: String,
        /// Why.
        source: io::Error,
    },
}

/// One path's entry in a call's journal.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Entry {
    /// The grant's folder, as the table names it (absolute).
    pub grant: PathBuf,
    /// The path inside it.
    pub path: PathBuf,
    /// What it held before the call.
    pub before: State,
    /// How the call left it (filled in when the call ends).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after: Option<Fingerprint>,
    /// Its prior state did not fit the budget (`undo = "best-effort"`):
    /// the change went ahead and cannot be undone.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub not_undoable: bool,
}

/// How a journaled call ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CallEnd {
    /// It succeeded: its changes stand.
    Kept,
    /// It failed and its changes were rolled back.
    RolledBack,
    /// It failed and rolling back did not fully succeed.
    RollbackFailed,
}

/// One line of `calls.jsonl`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CallRecord {
    /// The worker that made it (`t1`); `None` for the run's own calls.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub worker: Option<String>,
    /// The call's number in the run (in the worker's, for a worker's).
    pub call: u64,
    /// The step it was made in.
    pub step: u64,
    /// `skill.tool`.
    pub tool: String,
    /// How it ended.
    pub end: CallEnd,
    /// The paths it changed.
    pub entries: Vec<Entry>,
}

/// A run's journal: where its blobs and calls go, and the budget they share.
#[derive(Clone)]
pub struct RunJournal {
    inner: Arc<RunInner>,
}

struct RunInner {
    dir: PathBuf,
    run_id: String,
    budget: Budget,
    used: Mutex<u64>,
    blobs: Mutex<HashSet<String>>,
    calls: Mutex<Option<std::fs::File>>,
    /// The run's lock, held from its first in-flight file on (see
    /// [`recover`](crate::journal::recover)): this process is alive.
    owner: Mutex<Option<std::fs::File>>,
}

impl std::fmt::Debug for RunJournal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunJournal").field("dir", &self.inner.dir).finish()
    }
}

impl RunJournal {
    /// The journal of run `run_id` under `root` (`.reach/runs/journal`); its
    /// folder is made when the first change is kept.
    pub fn new(root: &Path, run_id: &str, budget: Budget) -> RunJournal {
        RunJournal {
            inner: Arc::new(RunInner {
                dir: root.join(run_id),
                run_id: run_id.to_owned(),
                budget,
                used: Mutex::new(0),
                blobs: Mutex::new(HashSet::new()),
                calls: Mutex::new(None),
                owner: Mutex::new(None),
            }),
        }
    }

    /// [`RunJournal::new`], after rolling back the calls that crashed
    /// processes left in flight under `root` ([`recover`]): what a host
    /// starting a run, a server or a call uses. A recovery that fails is
    /// logged; the run goes on.
    pub fn after_recovery(root: &Path, run_id: &str, budget: Budget) -> RunJournal {
        if let Err(err) = recover(root) {
            tracing::error!(journal = %root.display(), error = %err, "could not recover interrupted calls");
        }
        RunJournal::new(root, run_id, budget)
    }

    /// The run's folder of journal files.
    pub fn dir(&self) -> &Path {
        &self.inner.dir
    }

    /// The run.
    pub fn run_id(&self) -> &str {
        &self.inner.run_id
    }

    /// The journal of one call.
    pub fn call(&self, call: u64, step: u64, tool: &str) -> CallJournal {
        CallJournal::new(self.clone(), call, step, tool)
    }

    /// Hold the run's lock (once per process), so that no recovery takes
    /// this live run's calls for a crashed one's.
    fn hold_lock(&self) -> io::Result<()> {
        let mut owner = self.inner.owner.lock().unwrap_or_else(|e| e.into_inner());
        if owner.is_none() {
            *owner = Some(inflight::lock(&self.inner.dir)?);
        }
        Ok(())
    }

    fn append(&self, record: &CallRecord) -> io::Result<()> {
        let mut calls = self.inner.calls.lock().unwrap_or_else(|e| e.into_inner());
        if calls.is_none() {
            crate::private_fs::create_dir_all(&self.inner.dir)?;
            let path = self.inner.dir.join("calls.jsonl");
            let mut options = std::fs::OpenOptions::new();
            options.create(true).append(true);
            #[cfg(unix)]
            std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
            *calls = Some(options.open(path)?);
        }
        let file = calls.as_mut().expect("opened above");
        let mut line = serde_json::to_string(record).map_err(io::Error::other)?;
        line.push('\n');
        file.write_all(line.as_bytes())?;
        file.sync_data()
    }
}

tokio::task_local! {
    static SCOPE: CallScope;
}

/// Which run's journal, call and step a skill call belongs to: set around
/// a call by whoever runs it (the harness, `reach call`, `reach mcp`); a
/// call made outside any scope is not journaled.
#[derive(Clone, Debug)]
pub struct CallScope {
    /// The run's journal.
    pub run: RunJournal,
    /// The call's number in the run.
    pub call: u64,
    /// The step it is made in.
    pub step: u64,
    /// The worker making it (`t1`); `None` for the run's own loop.
    pub worker: Option<String>,
}

/// Run `future` (a call) in `scope`: the skill calls it makes are journaled there.
pub async fn scoped<F: std::future::Future>(scope: CallScope, future: F) -> F::Output {
    SCOPE.scope(scope, future).await
}

/// The journal of a call of `tool` in the current scope, if there is one.
pub(crate) fn current_call(tool: &str) -> Option<CallJournal> {
    SCOPE.try_with(|s| s.run.call(s.call, s.step, tool).of_worker(s.worker.clone())).ok()
}

/// The calls journaled for run `run_id` under `root`, in order.
pub fn read_calls(root: &Path, run_id: &str) -> io::Result<Vec<CallRecord>> {
    let path = root.join(run_id).join("calls.jsonl");
    let text = std::fs::read_to_string(&path)?;
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            serde_json::from_str(l).map_err(|e| {
                io::Error::new(io::ErrorKind::InvalidData, format!("{}: {e}", path.display()))
            })
        })
        .collect()
}

/// The journals' folder of a run's audit log in a folder: `journal/` in
/// the runs folder (`.reach/runs/ID.jsonl` → `.reach/runs/journal`), which
/// the table keeps out of every grant; `None` for a log that is not a file.
pub fn beside_log(log: &Path) -> Option<PathBuf> {
    if log.as_os_str().is_empty() {
        return None;
    }
    Some(log.parent().unwrap_or(Path::new(".")).join("journal"))
}

/// Open a grant's folder for the journal (outside a call: undo).
pub fn open_grant(path: &Path) -> io::Result<Arc<Dir>> {
    Dir::open_ambient_dir(path, cap_std::ambient_authority()).map(Arc::new)
}

#[cfg(test)]
mod tests;
