//! Calls a crash interrupted: while a call runs, each path's prior state
//! is also written to `RUN/inflight/CALL.jsonl` before the path changes,
//! and the file is removed when the call ends (kept or rolled back). A
//! process killed in the middle of a call leaves its file behind; the next
//! host to start on the runs folder ([`recover`](crate::journal::recover)) rolls those changes back
//! and records the call as rolled back, so no granted file is left as a
//! half-finished call left it.
//!
//! Whether a run's process is still alive is told by a lock: the process
//! holds `RUN/owner.lock` (an advisory lock the system drops when the
//! process dies, however it dies) from before its first in-flight file
//! until its journal is dropped, and recovery only touches runs whose lock
//! it can take.
//!
//! The in-flight lines are written, not synced: they survive the process
//! being killed (they are in the system's cache), not a power cut. The
//! blobs they point to are synced as before.

use super::{CallEnd, CallRecord, Entry, undo};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::fs::File;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

const INFLIGHT: &str = "inflight";
const LOCK: &str = "owner.lock";

/// The first line of an in-flight file: which call it is.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(super) struct Head {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub worker: Option<String>,
    pub call: u64,
    pub step: u64,
    pub tool: String,
}

/// The run's lock, taken by the process that writes its in-flight files.
pub(super) fn lock(run_dir: &Path) -> io::Result<File> {
    crate::private_fs::create_dir_all(run_dir)?;
    let file = open_lock(run_dir)?;
    // Blocks only while a recovery of this very run is under way.
    file.lock()?;
    Ok(file)
}

fn open_lock(run_dir: &Path) -> io::Result<File> {
    let mut options = std::fs::OpenOptions::new();
    options.create(true).truncate(false).write(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    options.open(run_dir.join(LOCK))
}

/// A call's in-flight file, opened with its head line written.
pub(super) fn create(run_dir: &Path, head: &Head) -> io::Result<(PathBuf, File)> {
    let dir = run_dir.join(INFLIGHT);
    crate::private_fs::create_dir_all(&dir)?;
    let name = match &head.worker {
        Some(w) => format!("{w}-{}.jsonl", head.call),
        None => format!("{}.jsonl", head.call),
    };
    let path = dir.join(name);
    let mut options = std::fs::OpenOptions::new();
    options.create(true).truncate(true).write(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let mut file = options.open(&path)?;
    write_line(&mut file, head)?;
    Ok((path, file))
}

/// Append one JSON line.
pub(super) fn write_line(file: &mut File, value: &impl Serialize) -> io::Result<()> {
    let mut line = serde_json::to_vec(value).map_err(io::Error::other)?;
    line.push(b'\n');
    file.write_all(&line)
}

/// What [`recover`](crate::journal::recover) did for one interrupted call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Recovered {
    /// The run the call belonged to.
    pub run_id: String,
    /// The call's record, as appended to the run's journal.
    pub record: CallRecord,
    /// Paths that could not be put back, with why.
    pub failed: Vec<(PathBuf, String)>,
}

/// Roll back every call that a dead process left in flight under `root`
/// (`.reach/runs/journal`), oldest run first. Runs whose process is alive
/// are left alone. Each call is appended to its run's `calls.jsonl` as
/// rolled back and its in-flight file removed. A missing root is nothing
/// to do.
pub fn recover(root: &Path) -> io::Result<Vec<Recovered>> {
    let mut runs: Vec<PathBuf> = match std::fs::read_dir(root) {
        Ok(dir) => dir.filter_map(|e| e.ok()).map(|e| e.path()).collect(),
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e),
    };
    // Only runs with a call in flight: most runs' folders have none left.
    runs.retain(|r| std::fs::read_dir(r.join(INFLIGHT)).is_ok_and(|mut d| d.next().is_some()));
    runs.sort();
    let mut done = Vec::new();
    for run in runs {
        let lock = open_lock(&run)?;
        if lock.try_lock().is_err() {
            continue; // its process is alive
        }
        let run_id = run.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let journal = super::RunJournal::new(root, &run_id, super::Budget::default());
        for file in in_flight(&run.join(INFLIGHT))? {
            let Some((head, entries)) = read(&file)? else {
                std::fs::remove_file(&file)?;
                continue;
            };
            let failed = restore(&run.join("blobs"), &entries);
            let record = CallRecord {
                worker: head.worker,
                call: head.call,
                step: head.step,
                tool: head.tool,
                end: if failed.is_empty() { CallEnd::RolledBack } else { CallEnd::RollbackFailed },
                entries,
            };
            journal.append(&record)?;
            std::fs::remove_file(&file)?;
            tracing::warn!(
                run = %run_id,
                call = record.call,
                tool = %record.tool,
                paths = record.entries.len(),
                failed = failed.len(),
                "a call interrupted by a crash was rolled back"
            );
            done.push(Recovered { run_id: run_id.clone(), record, failed });
        }
        drop(lock);
    }
    Ok(done)
}

fn in_flight(dir: &Path) -> io::Result<Vec<PathBuf>> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)?
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .collect();
    files.sort();
    Ok(files)
}

/// The head and the entries of an in-flight file, the last capture of
/// each path kept; `None` for a file cut before its head. A line cut by
/// the crash (the last one) is skipped: its change had not begun.
fn read(file: &Path) -> io::Result<Option<(Head, Vec<Entry>)>> {
    let text = std::fs::read_to_string(file)?;
    let mut lines = text.split_inclusive('\n').filter(|l| l.ends_with('\n'));
    let Some(head) = lines.next().and_then(|l| serde_json::from_str::<Head>(l).ok()) else {
        return Ok(None);
    };
    let mut entries: Vec<Entry> = Vec::new();
    let mut seen: HashMap<(PathBuf, PathBuf), usize> = HashMap::new();
    for line in lines {
        let Ok(entry) = serde_json::from_str::<Entry>(line) else { continue };
        let key = (entry.grant.clone(), entry.path.clone());
        match seen.get(&key) {
            Some(&i) => entries[i] = entry,
            None => {
                seen.insert(key, entries.len());
                entries.push(entry);
            }
        }
    }
    Ok(Some((head, entries)))
}

/// Put every entry back, in the order a rollback uses.
fn restore(blobs: &Path, entries: &[Entry]) -> Vec<(PathBuf, String)> {
    let mut grants: HashMap<PathBuf, std::sync::Arc<cap_std::fs::Dir>> = HashMap::new();
    undo::restore_entries(entries, blobs, |grant| {
        if let Some(dir) = grants.get(grant) {
            return Ok(std::sync::Arc::clone(dir));
        }
        let dir = super::open_grant(grant).map_err(|e| format!("{}: {e}", grant.display()))?;
        grants.insert(grant.to_owned(), std::sync::Arc::clone(&dir));
        Ok(dir)
    })
}
