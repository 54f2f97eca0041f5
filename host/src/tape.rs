//! A run's recording, for replay: what its skills received from outside
//! the sandbox (`wasi:http` responses, bodies included) and the result the
//! model got for each call, kept beside the run's audit log in
//! `<runs>/recordings/RUN/` (`tape.jsonl`, one [`Entry`](crate::tape::Entry) a line, and
//! `blobs/<blake3>`, each body once). The model's own replies are in the
//! audit log (`model_request.reply`), so a recording plus its log is a
//! whole run.
//!
//! What is recorded is what the skill saw: the URL as the skill wrote it
//! (a credential the host adds at egress is added after, and never here),
//! and the response after the host masked the credential in it; the run's
//! other secrets are masked in URLs, headers and bodies too. A run records
//! at most its budget (`[journal] record_mb`); past it, what is left out is
//! marked, and a replay that needs it says so.
//!
//! A call's entries are keyed by the call: `#N` for call N of the run, `TASK#N`
//! for a worker's (`t1#2`), so workers running side by side never mix.

mod read;
mod write;

pub use read::Tape;
pub use write::Recorder;

use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The recordings' folder under a runs folder.
pub const TAPE_DIR: &str = "recordings";

/// The per-run recording budget when the table sets none: 64 MiB.
pub const DEFAULT_RECORD_BYTES: u64 = 64 << 20;

/// Wall-clock readings recorded per call; a replay goes on from the last.
pub const MAX_CLOCK_READS: usize = 256;

/// One line of `tape.jsonl`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Entry {
    /// A response a skill received over `wasi:http`.
    Http(Exchange),
    /// The result the model got for a call (secrets masked).
    Result {
        /// The call ([`call_key`]).
        call: String,
        /// The tool as the model named it.
        tool: String,
        /// The result's blob, `None` when it was over the budget.
        blob: Option<String>,
        /// Its size.
        bytes: u64,
    },
    /// What a call's skill read from the wall clock, in order (the first
    /// [`MAX_CLOCK_READS`]): a replay reads the same times.
    Clock {
        /// The call ([`call_key`]).
        call: String,
        /// Each reading, nanoseconds since the Unix epoch.
        reads: Vec<u64>,
    },
    /// The budget ran out here: nothing after this was kept.
    Full {
        /// The budget, in bytes.
        max_bytes: u64,
    },
}

/// One request a skill sent and the response it got.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Exchange {
    /// The call that sent it ([`call_key`]).
    pub call: String,
    /// The skill.
    pub skill: String,
    /// `GET`, `POST`…
    pub method: String,
    /// The URL as the skill wrote it (secrets masked).
    pub url: String,
    /// The response's status.
    pub status: u16,
    /// Its headers as the skill got them, in order (secrets masked).
    pub headers: Vec<(String, String)>,
    /// Its body's blob; `None` when over the budget.
    pub blob: Option<String>,
    /// Bytes of body the skill read.
    pub body_bytes: u64,
    /// The skill read the body to its end (else: as far as `body_bytes`).
    pub complete: bool,
}

/// What a call does with its network traffic: records it, or is answered
/// from a recording.
#[derive(Clone, Debug)]
pub enum Mode {
    /// Send for real, and record the responses.
    Record(Arc<Recorder>),
    /// Send nothing: answer from the recording.
    Replay(Arc<Tape>),
}

/// The recording a skill call belongs to and its key.
#[derive(Clone, Debug)]
pub struct TapeScope {
    /// Record its responses, or answer from a recording; `None`: neither.
    pub mode: Option<Mode>,
    /// The recording whose clock readings it reads again: a replay's,
    /// live or not (the network may be live; the time is the run's).
    pub clock: Option<Arc<Tape>>,
    /// The call ([`call_key`]).
    pub call: String,
}

impl TapeScope {
    /// Call `call` in `mode`, its clock its own.
    pub fn new(mode: Mode, call: impl Into<String>) -> TapeScope {
        TapeScope { mode: Some(mode), clock: None, call: call.into() }
    }
}

tokio::task_local! {
    static SCOPE: TapeScope;
}

/// Run `future` (a call) in `scope`: its network traffic is recorded or
/// replayed there.
pub async fn scoped<F: std::future::Future>(scope: TapeScope, future: F) -> F::Output {
    SCOPE.scope(scope, future).await
}

/// The current call's recording, if it has one.
pub(crate) fn current() -> Option<TapeScope> {
    SCOPE.try_with(Clone::clone).ok()
}

/// The key of call `call` of worker `task` (`None`: the run's own).
pub fn call_key(task: Option<&str>, call: usize) -> String {
    format!("{}#{call}", task.unwrap_or(""))
}

/// The recordings' folder of a run's audit log in a folder
/// (`.reach/runs/ID.jsonl` → `.reach/runs/recordings`); `None` for a log
/// that is not a file.
pub fn beside_log(log: &Path) -> Option<PathBuf> {
    if log.as_os_str().is_empty() {
        return None;
    }
    Some(log.parent().unwrap_or(Path::new(".")).join(TAPE_DIR))
}

#[cfg(test)]
mod tests;
