//! Reload when the skills folder, a bundle or the table changes on disk.
//!
//! Editors and copy tools write a file in several steps (truncate, write in
//! pieces, or write a temporary file and rename it over the old one), so
//! events are collected until the folders have been quiet for [`QUIET`],
//! then one reload runs. Events during a reload lead to one more after it.
//!
//! What is watched is worked out again before every reload, so it follows
//! the files rather than the names they had at the start: a table that is
//! a symbolic link is watched where it points, and where it points after
//! the link is changed; a skills folder removed and created again is
//! watched again (its parent folder is watched to see it come back).
//!
//! Bundles (`NAME/SKILL.md`) are folders of files, every one of them in the
//! bundle's digest: the skills folder is watched recursively, and each
//! project bundle the table names (`[skills.NAME] bundle = "…"`) is watched
//! recursively where it is, so editing an instruction, a script or a
//! reference reloads like replacing a `.wasm` does.

use super::{LiveHost, ReloadSource};
use arc_swap::ArcSwap;
use notify::RecursiveMode;
use notify::event::{AccessKind, AccessMode, EventKind, ModifyKind};
use std::collections::HashMap;
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Notify;

/// How long the watched files must be left alone before a reload.
const QUIET: Duration = Duration::from_millis(250);

/// Most links followed from the table to the file it names (as the kernel's
/// own limit on a path's symbolic links).
const MAX_LINKS: usize = 40;

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
    /// Owns the watcher: aborting it stops the reloads and the watching.
    task: tokio::task::JoinHandle<()>,
}

impl Drop for WatchHandle {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Reload `live` from `source` whenever a `.wasm` file in the skills folder,
/// a file of a bundle (a folder with `SKILL.md` in the skills folder, or a
/// project bundle the table names) or the table file is created, written,
/// renamed or removed, after a quiet period of 250 ms. Watches the skills
/// folder and each project bundle recursively, their parents, and the
/// folder of the table and of every file its symbolic links lead to (not
/// the files: editors replace them by renaming). A reload's outcome is
/// logged by [`LiveHost::reload`].
///
/// Before each reload the folders are worked out again and watched anew
/// where they changed: the table's link pointed elsewhere, or (on Unix) a
/// folder removed and created again under its name.
///
/// # Panics
/// Outside a Tokio runtime (it spawns the task that reloads).
pub fn watch(live: Arc<LiveHost>, source: ReloadSource) -> Result<WatchHandle, WatchError> {
    let targets = Arc::new(ArcSwap::from_pointee(Targets::new(&source)));
    let changed = Arc::new(Notify::new());
    let (signal, filter) = (changed.clone(), targets.clone());
    let first = targets.load().folders.first().map(|w| w.path.clone()).unwrap_or_default();
    let mut watcher =
        notify::recommended_watcher(move |event: notify::Result<notify::Event>| match event {
            // One stored permit however many events: a storm costs one reload.
            Ok(event) if filter.load().concerns(&event) => signal.notify_one(),
            Ok(_) => {}
            Err(err) => {
                tracing::warn!(
                    error = %err,
                    "watching for skill, bundle and table changes: reloading to be sure"
                );
                signal.notify_one();
            }
        })
        .map_err(|err| WatchError::Watch { path: first, reason: err.to_string() })?;
    let mut armed = Armed::default();
    armed.arm(&mut watcher, &targets.load().folders)?;
    tracing::info!(
        folders = ?targets.load().folders.iter().map(|w| &w.path).collect::<Vec<_>>(),
        "watching for skill, bundle and table changes"
    );
    let task = tokio::spawn(async move {
        // The watcher lives in the task: aborting the task drops it.
        let mut watcher = watcher;
        loop {
            changed.notified().await;
            while tokio::time::timeout(QUIET, changed.notified()).await.is_ok() {}
            // Before the reload reads anything: what changes from now on
            // is seen, and what changed before is read by this reload.
            let now = Targets::new(&source);
            if let Err(err) = armed.arm(&mut watcher, &now.folders) {
                tracing::error!(
                    error = %err,
                    "a change there will not be noticed until the next reload"
                );
            }
            targets.store(Arc::new(now));
            // Logged inside; on error the live host closes.
            let _ = live.reload(&source).await;
        }
    });
    Ok(WatchHandle { task })
}

/// A folder to watch, and whether what is below it counts too.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Watched {
    path: PathBuf,
    recursive: bool,
}

impl Watched {
    fn mode(&self) -> RecursiveMode {
        if self.recursive { RecursiveMode::Recursive } else { RecursiveMode::NonRecursive }
    }
}

/// The folders being watched, each with the folder it was when armed and
/// whether it was watched recursively.
#[derive(Default)]
struct Armed(HashMap<PathBuf, (Identity, bool)>);

impl Armed {
    /// Watch exactly `folders`: drop the others, and watch anew a folder
    /// that is not watched yet or is not the one watched before. A folder
    /// that does not exist now is left for a later call. The first error is
    /// returned after trying every folder.
    fn arm(
        &mut self,
        watcher: &mut impl notify::Watcher,
        folders: &[Watched],
    ) -> Result<(), WatchError> {
        let gone: Vec<PathBuf> =
            self.0.keys().filter(|p| !folders.iter().any(|w| &w.path == *p)).cloned().collect();
        for path in gone {
            let _ = watcher.unwatch(&path);
            self.0.remove(&path);
        }
        let mut first_error = None;
        for watched in folders {
            let folder = &watched.path;
            let Some(identity) = identity(folder) else {
                // Removed: notify dropped its watch; a new folder of that
                // name is watched when it appears.
                if self.0.remove(folder).is_some() {
                    let _ = watcher.unwatch(folder);
                }
                continue;
            };
            let now = (identity, watched.recursive);
            if self.0.get(folder) == Some(&now) {
                continue;
            }
            // Another folder under the same name (or watched another way):
            // the old watch (if notify still holds it) follows the old
            // folder, wherever it went.
            let _ = watcher.unwatch(folder);
            match watcher.watch(folder, watched.mode()) {
                Ok(()) => {
                    self.0.insert(folder.clone(), now);
                }
                Err(err) => {
                    self.0.remove(folder);
                    first_error.get_or_insert(WatchError::Watch {
                        path: folder.clone(),
                        reason: err.to_string(),
                    });
                }
            }
        }
        first_error.map_or(Ok(()), Err)
    }
}

/// Which folder a path names now. Device and inode on Unix, so a folder
/// removed and created again under the same name is told apart.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Identity(u64, u64);

fn identity(path: &Path) -> Option<Identity> {
    let meta = std::fs::metadata(path).ok().filter(std::fs::Metadata::is_dir)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt as _;
        Some(Identity(meta.dev(), meta.ino()))
    }
    #[cfg(not(unix))]
    {
        let _ = meta;
        Some(Identity(0, 0))
    }
}

/// The paths whose changes matter, as events name them: absolute, in
/// folders watched by their resolved path.
struct Targets {
    skills: PathBuf,
    /// The folders in the skills folder that held a `SKILL.md` when these
    /// targets were worked out: a bundle removed (its `SKILL.md` gone with
    /// it) still counts.
    skills_bundles: Vec<PathBuf>,
    /// The project bundles the table names, resolved.
    project_bundles: Vec<PathBuf>,
    /// Every name the table goes by: the path given, each link on the way
    /// to the file, and the file — each as written and with its folder
    /// resolved. Empty for the built-in table.
    table: Vec<PathBuf>,
    /// The folders to watch, resolved, without repeats.
    folders: Vec<Watched>,
}

impl Targets {
    fn new(source: &ReloadSource) -> Targets {
        let skills = resolved(&lexical(&source.skills));
        let table = source.policy.as_deref().map(table_names).unwrap_or_default();
        let project_bundles = source.policy.as_deref().map(project_bundles).unwrap_or_default();
        let skills_bundles = std::fs::read_dir(&skills)
            .map(|entries| {
                entries
                    .filter_map(Result::ok)
                    .map(|e| e.path())
                    .filter(|p| p.join(BUNDLE_FILE).is_file())
                    .collect()
            })
            .unwrap_or_default();
        let recursive = |path: PathBuf| Watched { path, recursive: true };
        let flat = |path: PathBuf| Watched { path, recursive: false };
        let mut folders = vec![recursive(skills.clone())];
        for bundle in &project_bundles {
            folders.push(recursive(bundle.clone()));
        }
        // To see the skills folder, or a project bundle, come back after it
        // was removed.
        folders.extend(skills.parent().map(|p| flat(p.to_owned())));
        folders.extend(project_bundles.iter().filter_map(|b| b.parent()).map(|p| flat(p.into())));
        folders.extend(table.iter().filter_map(|t| t.parent()).map(|p| flat(resolved(p))));
        // A folder both ways is watched recursively (the first is kept).
        let mut seen = std::collections::HashSet::new();
        folders.retain(|w| seen.insert(w.path.clone()));
        Targets { skills, skills_bundles, project_bundles, table, folders }
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
        // The folder itself (removed, moved, created again), or a skill
        // file directly in it.
        path == self.skills
            || (path.parent() == Some(&self.skills)
                && path.extension().is_some_and(|x| x == "wasm"))
            || self.in_a_bundle(path)
            // The table under any of its names, or a folder or link on
            // the way to it (a configuration folder swapped by renaming a
            // link over the old one).
            || self.table.iter().any(|name| name.starts_with(path))
    }

    /// Whether `path` is a bundle folder or a file in one, or a runner of
    /// their scripts (`runners/*.wasm`): a project bundle
    /// the table names, or a folder of the skills folder that holds (or
    /// held, or is being given) a `SKILL.md`. A plain subfolder (an `old/`
    /// of retired `.wasm` files, say) is not loaded, so it does not count.
    fn in_a_bundle(&self, path: &Path) -> bool {
        if self.project_bundles.iter().any(|b| path.starts_with(b)) {
            return true;
        }
        let Ok(below) = path.strip_prefix(&self.skills) else { return false };
        let mut parts = below.components();
        let Some(Component::Normal(first)) = parts.next() else { return false };
        let folder = self.skills.join(first);
        let rest = parts.as_path();
        // The interpreters bundles' scripts run in.
        (first == std::ffi::OsStr::new(crate::registry::RUNNERS)
            && rest.extension().is_some_and(|x| x == "wasm"))
            || self.skills_bundles.contains(&folder)
            || rest == Path::new(BUNDLE_FILE)
            || folder.join(BUNDLE_FILE).is_file()
            // A folder created or moved in: its files may have been
            // written before its watch was added, so look once.
            || (rest.as_os_str().is_empty() && folder.is_dir())
    }
}

/// The file that makes a folder a bundle.
const BUNDLE_FILE: &str = "SKILL.md";

/// The project bundle folders the table at `table` names, resolved; none
/// when the table does not load (its reload reports why).
fn project_bundles(table: &Path) -> Vec<PathBuf> {
    crate::policy::Policy::load(table)
        .map(|policy| policy.bundle_folders().into_iter().map(|(_, f, _)| resolved(f)).collect())
        .unwrap_or_default()
}

/// Every name of the table file, following its symbolic links (see
/// [`Targets::table`]).
fn table_names(table: &Path) -> Vec<PathBuf> {
    let mut names = Vec::new();
    let mut at = lexical(table);
    for _ in 0..=MAX_LINKS {
        names.push(at.clone());
        names.push(in_resolved_folder(&at));
        let Ok(target) = std::fs::read_link(&at) else { break };
        at = lexical(&at.parent().map_or_else(|| target.clone(), |folder| folder.join(&target)));
    }
    // The file itself, with every link on the way resolved, folders too.
    names.extend(std::fs::canonicalize(table).ok());
    let mut seen = std::collections::HashSet::new();
    names.retain(|n| seen.insert(n.clone()));
    names
}

/// `path` absolute, with `.` and `..` taken out by their text (as the
/// names in events are).
fn lexical(path: &Path) -> PathBuf {
    let absolute = std::path::absolute(path).unwrap_or_else(|_| path.to_owned());
    let mut out = PathBuf::new();
    for part in absolute.components() {
        match part {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

/// `path` with its folder's links resolved (the path itself when that
/// folder does not exist).
fn resolved(path: &Path) -> PathBuf {
    std::fs::canonicalize(path).unwrap_or_else(|_| path.to_owned())
}

/// `path`'s file name in its folder's resolved path: how events in a
/// watched (resolved) folder name it.
fn in_resolved_folder(path: &Path) -> PathBuf {
    match (path.parent(), path.file_name()) {
        (Some(folder), Some(name)) => resolved(folder).join(name),
        _ => path.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use notify::event::{CreateKind, DataChange, MetadataKind, RemoveKind, RenameMode};

    fn targets() -> Targets {
        let table = vec![PathBuf::from("/srv/agent/reach.toml")];
        Targets {
            skills: PathBuf::from("/srv/agent/skills"),
            skills_bundles: vec![PathBuf::from("/srv/agent/skills/triage")],
            project_bundles: vec![PathBuf::from("/srv/agent/.agents/skills/notes")],
            table,
            folders: Vec::new(),
        }
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
            // Any file of a bundle is in its digest: an edit is an upgrade.
            (write, "/srv/agent/skills/triage/SKILL.md", true),
            (closed, "/srv/agent/skills/triage/scripts/note.py", true),
            (remove, "/srv/agent/skills/triage/references/severity.md", true),
            (remove, "/srv/agent/skills/triage", true),
            (create, "/srv/agent/skills/fresh/SKILL.md", true),
            (write, "/srv/agent/.agents/skills/notes/SKILL.md", true),
            (create, "/srv/agent/.agents/skills/notes/assets/logo.txt", true),
            (opened, "/srv/agent/skills/triage/SKILL.md", false),
            // Other folders of the project are not loaded.
            (write, "/srv/agent/.agents/skills/other/SKILL.md", false),
            (write, "/srv/agent/skills/fresh/notes.txt", false),
            // The runners of bundles' scripts.
            (renamed_to, "/srv/agent/skills/runners/python.wasm", true),
            (write, "/srv/agent/skills/runners/README.md", false),
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
        let builtin = Targets { table: Vec::new(), ..targets() };
        assert!(!builtin.concerns(
            &notify::Event::new(EventKind::Any).add_path(PathBuf::from("/srv/agent/reach.toml"))
        ));
    }

    #[cfg(unix)]
    #[test]
    fn a_linked_table_is_known_by_every_name_on_the_way_to_its_file() {
        // As a Kubernetes ConfigMap mounts it: reach.toml -> ..data/reach.toml,
        // ..data -> ..2026_01 (swapped by renaming a new link over ..data).
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        std::fs::create_dir(root.join("..2026_01")).unwrap();
        std::fs::write(root.join("..2026_01/reach.toml"), "").unwrap();
        std::os::unix::fs::symlink("..2026_01", root.join("..data")).unwrap();
        std::os::unix::fs::symlink("..data/reach.toml", root.join("reach.toml")).unwrap();
        let names = table_names(&root.join("reach.toml"));
        for name in [
            root.join("reach.toml"),
            root.join("..data/reach.toml"),
            root.join("..2026_01/reach.toml"),
        ] {
            assert!(names.contains(&name), "{} missing from {names:?}", name.display());
        }
        let t = Targets {
            skills: root.join("skills"),
            skills_bundles: Vec::new(),
            project_bundles: Vec::new(),
            table: names,
            folders: Vec::new(),
        };
        let renamed_to = EventKind::Modify(ModifyKind::Name(RenameMode::To));
        let write = EventKind::Modify(ModifyKind::Data(DataChange::Any));
        for (kind, path, want) in [
            (write, root.join("..2026_01/reach.toml"), true),
            (renamed_to, root.join("..data"), true),
            (renamed_to, root.join("reach.toml"), true),
            (write, root.join("..2026_01/other.toml"), false),
            (renamed_to, root.join("..data_tmp"), false),
        ] {
            assert_eq!(
                t.concerns(&notify::Event::new(kind).add_path(path.clone())),
                want,
                "{kind:?} {}",
                path.display()
            );
        }
    }
}
