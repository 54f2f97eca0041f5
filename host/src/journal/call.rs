//! One call's journal: the paths it changed, each with its state before,
//! and the blobs those states keep within the run's budget.

use super::inflight;
use super::state::{self, BlobSink, State};
use super::{CallEnd, CallRecord, Entry, JournalError, RunInner, RunJournal, UndoMode, undo};
use cap_std::fs::Dir;
use std::collections::HashMap;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Keeps blobs in the run's folder, within its budget.
struct Blobs<'a> {
    run: &'a RunInner,
    /// Bytes this capture would add, checked before anything is written.
    over: Option<(u64, u64)>,
}

impl BlobSink for Blobs<'_> {
    fn keep(&mut self, hash: &str, bytes: &[u8]) -> io::Result<()> {
        let mut blobs = self.run.blobs.lock().unwrap_or_else(|e| e.into_inner());
        if blobs.contains(hash) {
            return Ok(());
        }
        let mut used = self.run.used.lock().unwrap_or_else(|e| e.into_inner());
        let size = bytes.len() as u64;
        if used.saturating_add(size) > self.run.budget.max_bytes {
            self.over = Some((size, *used));
            return Err(io::Error::new(io::ErrorKind::QuotaExceeded, "journal budget"));
        }
        let dir = self.run.dir.join("blobs");
        crate::private_fs::create_dir_all(&dir)?;
        let path = dir.join(hash);
        match crate::private_fs::create_new_append(&path) {
            Ok(mut file) => {
                file.write_all(bytes)?;
                file.sync_data()?;
            }
            Err(err) if err.kind() == io::ErrorKind::AlreadyExists => {}
            Err(err) => return Err(err),
        }
        *used += size;
        blobs.insert(hash.to_owned());
        Ok(())
    }
}

/// One call's journal: the paths it changed, each with its state before.
pub struct CallJournal {
    run: RunJournal,
    /// The worker that made it; `None` for the run's own call.
    worker: Option<String>,
    call: u64,
    step: u64,
    tool: String,
    entries: Vec<Entry>,
    /// (grant, path) → index in `entries`.
    seen: HashMap<(PathBuf, PathBuf), usize>,
    /// Grant folders opened for the journal, by path.
    grants: HashMap<PathBuf, Arc<Dir>>,
    /// Kept or rolled back already.
    finished: bool,
    /// The call's in-flight file, once it changed something.
    inflight: Option<(PathBuf, std::fs::File)>,
}

impl Drop for CallJournal {
    /// A call dropped before it ended (cancelled by its client, or its
    /// future dropped) did not succeed: its changes are rolled back.
    fn drop(&mut self) {
        if !self.finished && !self.entries.is_empty() {
            let failed = self.restore_all();
            tracing::info!(
                paths = self.seen.len(),
                failed = failed.len(),
                "a call that did not end was rolled back"
            );
        }
    }
}

impl CallJournal {
    pub(super) fn new(run: RunJournal, call: u64, step: u64, tool: &str) -> CallJournal {
        CallJournal {
            run,
            worker: None,
            call,
            step,
            tool: tool.to_owned(),
            entries: Vec::new(),
            seen: HashMap::new(),
            grants: HashMap::new(),
            finished: false,
            inflight: None,
        }
    }

    /// The same, for a call worker `task` made (its numbers are its own).
    pub fn of_worker(mut self, task: Option<String>) -> CallJournal {
        self.worker = task;
        self
    }

    /// Whether the call changed anything yet.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The entries so far.
    pub fn entries(&self) -> &[Entry] {
        &self.entries
    }

    /// Before `path` (inside grant `grant`, opened as `dir`) is changed:
    /// keep what it holds, unless this call kept it already. `deep` keeps a
    /// folder's whole tree (it is about to be moved). `Err`: the change must
    /// not happen.
    pub fn before_change(
        &mut self,
        grant: &Path,
        dir: &Arc<Dir>,
        path: &Path,
        deep: bool,
    ) -> Result<(), JournalError> {
        let key = (grant.to_owned(), path.to_owned());
        if let Some(&index) = self.seen.get(&key) {
            // Kept already; a folder about to move needs its tree as it was
            // at the start of the call, which is what the first capture saw
            // unless it was shallow.
            let shallow = matches!(self.entries[index].before, State::Dir { entries: None, .. });
            if !(deep && shallow) {
                return Ok(());
            }
        }
        self.grants.entry(grant.to_owned()).or_insert_with(|| Arc::clone(dir));
        let shown = path.display().to_string();
        let mut blobs = Blobs { run: &self.run.inner, over: None };
        let captured = state::capture(dir, path, deep, &mut blobs);
        let (before, not_undoable) = match captured {
            Ok(state) => (state, false),
            Err(_) if blobs.over.is_some() => {
                let (needed, used) = blobs.over.unwrap_or_default();
                let budget = self.run.inner.budget;
                if budget.mode == UndoMode::Strict {
                    tracing::warn!(path = %shown, needed, used, max = budget.max_bytes, "change refused: over the journal budget");
                    return Err(JournalError::OverBudget {
                        path: shown,
                        needed,
                        used,
                        max: budget.max_bytes,
                    });
                }
                tracing::warn!(path = %shown, "change allowed without undo: over the journal budget (best-effort)");
                (State::Missing, true)
            }
            Err(source) => return Err(JournalError::Io { path: shown, source }),
        };
        let entry =
            Entry { grant: key.0.clone(), path: key.1.clone(), before, after: None, not_undoable };
        // On record outside this process before the change: a crash from
        // here on is rolled back by the next start. Fail closed.
        self.write_inflight(&entry).map_err(|source| JournalError::Io { path: shown, source })?;
        match self.seen.get(&key) {
            Some(&index) => self.entries[index] = entry,
            None => {
                self.seen.insert(key, self.entries.len());
                self.entries.push(entry);
            }
        }
        Ok(())
    }

    fn write_inflight(&mut self, entry: &Entry) -> io::Result<()> {
        if self.inflight.is_none() {
            self.run.hold_lock()?;
            let head = inflight::Head {
                worker: self.worker.clone(),
                call: self.call,
                step: self.step,
                tool: self.tool.clone(),
            };
            self.inflight = Some(inflight::create(self.run.dir(), &head)?);
        }
        let (_, file) = self.inflight.as_mut().expect("created above");
        inflight::write_line(file, entry)
    }

    /// Put back every path this call changed, newest first; the record says
    /// so. Returns the paths that could not be restored, with why.
    pub fn roll_back(mut self) -> Vec<(PathBuf, String)> {
        self.restore_all()
    }

    fn restore_all(&mut self) -> Vec<(PathBuf, String)> {
        let blobs = self.run.inner.dir.join("blobs");
        let failed = undo::restore_entries(&self.entries, &blobs, |grant| {
            self.grants.get(grant).cloned().ok_or_else(|| "its grant was not opened".to_owned())
        });
        let end = if failed.is_empty() { CallEnd::RolledBack } else { CallEnd::RollbackFailed };
        self.finish(end);
        failed
    }

    /// The call succeeded: record how it left each path.
    pub fn keep(mut self) {
        self.finish(CallEnd::Kept);
    }

    fn finish(&mut self, end: CallEnd) {
        self.finished = true;
        if self.entries.is_empty() {
            return;
        }
        for entry in &mut self.entries {
            if let Some(dir) = self.grants.get(&entry.grant) {
                entry.after = state::fingerprint(dir, &entry.path).ok();
            }
        }
        let record = CallRecord {
            worker: self.worker.clone(),
            call: self.call,
            step: self.step,
            tool: self.tool.clone(),
            end,
            entries: std::mem::take(&mut self.entries),
        };
        if let Err(err) = self.run.append(&record) {
            tracing::error!(dir = %self.run.dir().display(), error = %err, "could not write the journal");
        }
        // The call ended (its changes kept, or put back): nothing is left
        // for a recovery to do, even if its record could not be written.
        if let Some((path, file)) = self.inflight.take() {
            drop(file);
            let _ = std::fs::remove_file(path);
        }
    }
}
