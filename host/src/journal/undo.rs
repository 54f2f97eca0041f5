//! What a run changed, and putting it back: `reach runs diff` and
//! `reach runs undo`.

use super::state::{self, Fingerprint, State};
use super::{CallEnd, CallJournal, Entry, open_grant, read_calls};
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// One path a run changed: as it was before, as the run left it, as it is.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct PathChange {
    /// The grant's folder.
    pub grant: PathBuf,
    /// The path inside it.
    pub path: PathBuf,
    /// Before the first call (from the step asked) that changed it.
    pub before: State,
    /// How the last call that changed it left it.
    pub after: Option<Fingerprint>,
    /// How it is now.
    pub now: Fingerprint,
    /// The first change did not fit the journal's budget.
    pub not_undoable: bool,
}

impl PathChange {
    /// The absolute path.
    pub fn full_path(&self) -> PathBuf {
        self.grant.join(&self.path)
    }

    /// Whether someone changed it after the run left it.
    pub fn changed_since(&self) -> bool {
        self.after.as_ref().is_some_and(|after| *after != self.now)
    }
}

/// A path undo left alone because it changed after the run.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Conflict {
    /// The absolute path.
    pub path: PathBuf,
    /// How the run left it.
    pub left: Option<Fingerprint>,
    /// How it is now.
    pub now: Fingerprint,
    /// What `--force` would put back: its state before the run.
    pub before: State,
}

/// What `undo` did.
#[derive(Clone, Debug, Default, Serialize)]
pub struct UndoReport {
    /// Paths put back to their state before the run (or the step).
    pub restored: Vec<PathBuf>,
    /// Paths changed since by someone else, left as they are (no `--force`).
    pub conflicts: Vec<Conflict>,
    /// Paths that cannot be undone (over the budget), or could not be
    /// restored, with why.
    pub failed: Vec<(PathBuf, String)>,
}

/// The order to put entries back in: paths that must go, deepest first;
/// then folders, shallowest first; then files and links.
/// Put `entries` back from `blobs`, in [`restore_order`], each through
/// its grant's folder as `dir_of` opens it; the paths that could not be
/// restored, with why.
pub(crate) fn restore_entries(
    entries: &[Entry],
    blobs: &std::path::Path,
    mut dir_of: impl FnMut(&std::path::Path) -> Result<std::sync::Arc<cap_std::fs::Dir>, String>,
) -> Vec<(PathBuf, String)> {
    let mut failed = Vec::new();
    for entry in restore_order(entries) {
        if entry.not_undoable {
            failed.push((entry.path.clone(), "not journaled (over the budget)".to_owned()));
            continue;
        }
        let restored = dir_of(&entry.grant).and_then(|dir| {
            super::state::restore(&dir, &entry.path, &entry.before, blobs)
                .map_err(|e| e.to_string())
        });
        if let Err(why) = restored {
            failed.push((entry.path.clone(), why));
        }
    }
    failed
}

pub(crate) fn restore_order(entries: &[Entry]) -> Vec<&Entry> {
    let rank = |e: &Entry| match e.before {
        State::Missing => 0,
        State::Dir { .. } => 1,
        _ => 2,
    };
    let depth = |e: &Entry| e.path.components().count() as i64;
    let mut order: Vec<&Entry> = entries.iter().rev().collect();
    order.sort_by_key(|e| (rank(e), if rank(e) == 0 { -depth(e) } else { depth(e) }));
    order
}

/// Every path run `run_id` changed from step `from_step` on (0: all), as
/// journaled under `root`, with how it is now. Calls that were rolled back
/// changed nothing.
pub fn changes(root: &Path, run_id: &str, from_step: u64) -> std::io::Result<Vec<PathChange>> {
    let calls = read_calls(root, run_id)?;
    let mut by_path: BTreeMap<(PathBuf, PathBuf), PathChange> = BTreeMap::new();
    for call in calls.iter().filter(|c| c.step >= from_step && c.end != CallEnd::RolledBack) {
        for entry in &call.entries {
            let key = (entry.grant.clone(), entry.path.clone());
            match by_path.get_mut(&key) {
                Some(change) => change.after = entry.after.clone(),
                None => {
                    by_path.insert(
                        key,
                        PathChange {
                            grant: entry.grant.clone(),
                            path: entry.path.clone(),
                            before: entry.before.clone(),
                            after: entry.after.clone(),
                            now: Fingerprint::Missing,
                            not_undoable: entry.not_undoable,
                        },
                    );
                }
            }
        }
    }
    let mut out: Vec<PathChange> = by_path.into_values().collect();
    for change in &mut out {
        change.now = match open_grant(&change.grant) {
            Ok(dir) => state::fingerprint(&dir, &change.path)?,
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => Fingerprint::Missing,
            Err(err) => return Err(err),
        };
    }
    Ok(out)
}

/// Put every path run `run_id` changed (from step `from_step`) back as it
/// was, journaling what undo itself changes in `journal` (so an undo can be
/// undone). A path changed since the run is left alone unless `force`.
pub fn undo(
    root: &Path,
    run_id: &str,
    from_step: u64,
    force: bool,
    mut journal: CallJournal,
) -> std::io::Result<UndoReport> {
    let changes = changes(root, run_id, from_step)?;
    let blobs = root.join(run_id).join("blobs");
    let mut report = UndoReport::default();
    let entries: Vec<Entry> = changes
        .iter()
        .map(|c| Entry {
            grant: c.grant.clone(),
            path: c.path.clone(),
            before: c.before.clone(),
            after: c.after.clone(),
            not_undoable: c.not_undoable,
        })
        .collect();
    for entry in restore_order(&entries) {
        let full = entry.grant.join(&entry.path);
        let change = changes
            .iter()
            .find(|c| c.grant == entry.grant && c.path == entry.path)
            .expect("made from changes");
        if entry.not_undoable {
            report
                .failed
                .push((full, "its prior state was not kept (over the journal budget)".into()));
            continue;
        }
        if change.changed_since() && !force {
            report.conflicts.push(Conflict {
                path: full,
                left: change.after.clone(),
                now: change.now.clone(),
                before: change.before.clone(),
            });
            continue;
        }
        let dir = match open_grant(&entry.grant) {
            Ok(dir) => dir,
            Err(err) => {
                report.failed.push((full, format!("its grant could not be opened: {err}")));
                continue;
            }
        };
        if let Err(err) = journal.before_change(&entry.grant, &dir, &entry.path, true) {
            report.failed.push((full, err.to_string()));
            continue;
        }
        match state::restore(&dir, &entry.path, &entry.before, &blobs) {
            Ok(()) => report.restored.push(full),
            Err(err) => report.failed.push((full, err.to_string())),
        }
    }
    journal.keep();
    Ok(report)
}
