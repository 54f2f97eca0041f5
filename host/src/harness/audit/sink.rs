//! Where a run's audit log goes: a folder of files, the embedder's writer,
//! or nowhere.

use std::io::Write;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

/// A writer several runs may share; each record is one `write_all` of one
/// line under the lock, followed by a flush.
pub type SharedWriter = Arc<Mutex<dyn Write + Send>>;

/// Where a run's audit log goes.
///
/// ```
/// use agent_reach::AuditSink;
/// use std::sync::{Arc, Mutex};
///
/// // In memory, e.g. to keep it with the embedder's own records:
/// let lines = Arc::new(Mutex::new(Vec::<u8>::new()));
/// let sink = AuditSink::Writer(lines.clone());
/// # let _ = sink;
/// ```
#[derive(Clone)]
#[non_exhaustive]
pub enum AuditSink {
    /// `DIR/<run id>.jsonl`, a new file per run, synced to disk when the
    /// run ends: what `reach run` writes (`reach runs show ID` reads it).
    Dir(PathBuf),
    /// JSON lines to the embedder's writer; lines of concurrent runs
    /// interleave whole, told apart by their `run_id`.
    Writer(SharedWriter),
    /// No log. Secrets are still masked in what the model and the events see.
    Disabled,
}

impl std::fmt::Debug for AuditSink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            AuditSink::Dir(dir) => f.debug_tuple("Dir").field(dir).finish(),
            AuditSink::Writer(_) => f.write_str("Writer(..)"),
            AuditSink::Disabled => f.write_str("Disabled"),
        }
    }
}

/// Where the lines of an open log go.
pub(super) enum Output {
    Nowhere,
    File(std::fs::File),
    Writer(SharedWriter),
}
