//! Reload when the skills folder or the table changes on disk.
//!
//! Editors and copy tools write a file in several steps (truncate, write in
//! pieces, or write a temporary file and rename it over the old one), so
//! events are collected until the folders have been quiet for [`QUIET`],
//! then one reload runs. Events during a reload lead to one more after it.

use super::{LiveHost, ReloadSource};
use notify::event::{AccessKind, AccessMode, EventKind, ModifyKind};
use notify::{RecursiveMode, Watcher as _};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Notify;

/// How long the watched files must be left alone before a reload.
const QUIET: Duration = Duration::from_millis(250);

/// Errors starting to watch.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum WatchError {
    /// A folder could not be watched (missing, or the system's limit on
    /// watches was reached).
    #[error("cannot watch {path} for changes: {reason}")]
    Watch {
        /// The folder.
        path: PathBuf,
        /// Why.
        reason: String,
    },
}

/// Stops watching when dropped (a reload already running still finishes
/// or is abandoned before its swap; the host is never left half-swapped).
pub struct WatchHandle {
    _watcher: notify::RecommendedWatcher,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for WatchHandle {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Reload `live` from `source` whenever a `.wasm` file in the skills folder
/// or the table file is created, written, renamed or removed, after a quiet
/// period of 250 ms. Watches the skills folder and the table's folder (not
/// the file: editors replace it by renaming), neither recursively. A
/// reload's outcome is logged by [`LiveHost::reload`].
///
/// A folder that is itself removed or replaced stops being watched; a
/// table that is a symbolic link is watched where the link is, not where
/// it points.
///
/// # Panics
/// Outside a Tokio runtime (it spawns the task that reloads).
pub fn watch(live: Arc<LiveHost>, source: ReloadSource) -> Result<WatchHandle, WatchError> {
    let targets = Targets::new(&source);
    let mut folders = vec![targets.skills.clone()];
    if let Some(dir) = targets.table.as_deref().and_then(Path::parent)
        && !folders.iter().any(|f| f == dir)
    {
        folders.push(dir.to_owned());
    }
    let changed = Arc::new(Notify::new());
    let signal = changed.clone();
    let failed = |path: &Path, err: notify::Error| WatchError::Watch { path: path.to_owned(), reason: err.to_string() };
    let mut watcher = notify::recommended_watcher(move |event: notify::Result<notify::Event>| match event {
        // One stored permit however many events: a storm costs one reload.
        Ok(event) if targets.concerns(&event) => signal.notify_one(),
        Ok(_) => {}
        Err(err) => {
            tracing::warn!(error = %err, "watching for skill and table changes: reloading to be sure");
            signal.notify_one();
        }
    })
    .map_err(|e| failed(&folders[0], e))?;
    for folder in &folders {
        watcher.watch(folder, RecursiveMode::NonRecursive).map_err(|e| failed(folder, e))?;
    }
    tracing::info!(folders = ?folders, "watching for skill and table changes");
    let task = tokio::spawn(async move {
        loop {
            changed.notified().await;
            while tokio::time::timeout(QUIET, changed.notified()).await.is_ok() {}
            // Logged inside; the old host keeps serving on error.
            let _ = live.reload(&source).await;
        }
    });
    Ok(WatchHandle { _watcher: watcher, task })
}

/// The paths whose changes matter, absolute (events name them so).
struct Targets {
    skills: PathBuf,
    table: Option<PathBuf>,
}

impl Targets {
    fn new(source: &ReloadSource) -> Targets {
        let absolute = |p: &Path| std::path::absolute(p).unwrap_or_else(|_| p.to_owned());
        Targets { skills: absolute(&source.skills), table: source.policy.as_deref().map(absolute) }
    }

    /// Whether `event` may change what a reload loads.
    fn concerns(&self, event: &notify::Event) -> bool {
        if event.need_rescan() {
            return true;
        }
        let kind = match event.kind {
            // Closing a file written: the end of a write.
            EventKind::Access(AccessKind::Close(AccessMode::Write)) => true,
            // Opening and reading — a reload's own reads among them — and
            // metadata (access times, permissions) change nothing loaded.
            EventKind::Access(_) | EventKind::Modify(ModifyKind::Metadata(_)) => false,
            _ => true,
        };
        kind && event.paths.iter().any(|p| self.concerns_path(p))
    }

    fn concerns_path(&self, path: &Path) -> bool {
        // The folder itself (removed, moved), or a skill file directly in it.
        path == self.skills
            || (path.parent() == Some(&self.skills) && path.extension().is_some_and(|x| x == "wasm"))
            || self.table.as_deref() == Some(path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use notify::event::{CreateKind, DataChange, MetadataKind, RemoveKind, RenameMode};

    fn targets() -> Targets {
        Targets { skills: PathBuf::from("/srv/agent/skills"), table: Some(PathBuf::from("/srv/agent/reach.toml")) }
    }

    #[test]
    fn reload_follows_writes_renames_and_removals_of_skills_and_the_table() {
        let write = EventKind::Modify(ModifyKind::Data(DataChange::Any));
        let closed = EventKind::Access(AccessKind::Close(AccessMode::Write));
        let create = EventKind::Create(CreateKind::File);
        let remove = EventKind::Remove(RemoveKind::File);
        let renamed_to = EventKind::Modify(ModifyKind::Name(RenameMode::To));
        let opened = EventKind::Access(AccessKind::Open(AccessMode::Any));
        let read_closed = EventKind::Access(AccessKind::Close(AccessMode::Read));
        let attrib = EventKind::Modify(ModifyKind::Metadata(MetadataKind::Any));
        let rows: &[(EventKind, &str, bool)] = &[
            (create, "/srv/agent/skills/new.wasm", true),
            (write, "/srv/agent/skills/echo.wasm", true),
            (closed, "/srv/agent/skills/echo.wasm", true),
            (remove, "/srv/agent/skills/echo.wasm", true),
            (renamed_to, "/srv/agent/skills/echo.wasm", true),
            (renamed_to, "/srv/agent/reach.toml", true),
            (write, "/srv/agent/reach.toml", true),
            (remove, "/srv/agent/skills", true),
            (EventKind::Any, "/srv/agent/skills/echo.wasm", true),
            // A reload reads every file: its own reads must not start another.
            (opened, "/srv/agent/skills/echo.wasm", false),
            (read_closed, "/srv/agent/skills/echo.wasm", false),
            (opened, "/srv/agent/reach.toml", false),
            (attrib, "/srv/agent/skills/echo.wasm", false),
            // Not a skill, or not in the folder itself.
            (write, "/srv/agent/skills/notes.txt", false),
            (write, "/srv/agent/skills/echo.wasm.part", false),
            (write, "/srv/agent/skills/old/echo.wasm", false),
            (write, "/srv/agent/skillsx/echo.wasm", false),
            // The table's folder holds other files: only the table counts.
            (write, "/srv/agent/reach.toml.swp", false),
            (write, "/srv/agent/.reach.toml.swp", false),
            (write, "/srv/agent/notes.md", false),
            (create, "/srv/agent/echo.wasm", false),
        ];
        let t = targets();
        for (kind, path, want) in rows {
            let event = notify::Event::new(*kind).add_path(PathBuf::from(path));
            assert_eq!(t.concerns(&event), *want, "{kind:?} {path}");
        }
    }

    #[test]
    fn reload_follows_a_rename_onto_the_table_and_a_lost_event_queue() {
        let t = targets();
        let both = notify::Event::new(EventKind::Modify(ModifyKind::Name(RenameMode::Both)))
            .add_path(PathBuf::from("/srv/agent/reach.toml.tmp"))
            .add_path(PathBuf::from("/srv/agent/reach.toml"));
        assert!(t.concerns(&both));
        let overflow = notify::Event::new(EventKind::Other).set_flag(notify::event::Flag::Rescan);
        assert!(t.concerns(&overflow));
        let builtin = Targets { table: None, ..targets() };
        assert!(!builtin.concerns(&notify::Event::new(EventKind::Any).add_path(PathBuf::from("/srv/agent/reach.toml"))));
    }
}
