//! Hot reload: a long-running host (`reach mcp`, an embedder) picks up new,
//! changed and removed skill files and an edited permission table without a
//! restart.
//!
//! [`LiveHost`] holds the [`Host`] currently serving. [`LiveHost::reload`]
//! builds a complete new host beside it — table parsed and checked, skills
//! folder scanned with the same engine and compile cache, [`Host::new`]'s
//! checks — and only then swaps it in, in one step. A call takes
//! [`LiveHost::current`] once and keeps that host to the end, so calls
//! already running finish on the version they started with; an old host is
//! freed when its last call ends. [`watch`] reloads on file-system events.
//!
//! What a reload does with trouble:
//! - **The table does not load** (syntax, an unknown key, an override
//!   naming a tool the skill lacks, a `write` grant over the host's own
//!   files), or the skills folder cannot be read: the live host *closes*.
//!   Nothing serves — [`LiveHost::current`] returns [`Closed`], naming the
//!   file, the error and the fix — until a reload loads; subscribers are
//!   told when it closes and when it opens again. The old table is not
//!   kept: the operator's edit may have removed a grant (a `deny` with a
//!   misspelt tool name, a syntax error beside a removed `net` host), and
//!   the broader old table must not go on serving what they took away. At
//!   start the same table stops `reach` with an error.
//! - **A skill file does not load** (half-written, truncated, not a
//!   component, claiming another name, refused by its pin): if a version
//!   was loaded from that path before, that version keeps serving
//!   ([`SkillEntry::stale`](crate::registry::SkillEntry::stale) says why);
//!   a new file that never loaded is only reported as broken. Either way
//!   it is logged with the file and the reason.
//! - **A skill file is deleted**: its skill leaves the active set — the
//!   operator removed it.
//! - **A bundle changes** (any file of `NAME/SKILL.md`'s folder: its digest
//!   covers them all): it is loaded again and reported as changed; one
//!   that no longer validates is broken and serves nothing (a bundle has
//!   no version to fall back on, and its old instructions may be what the
//!   operator meant to take away).
//!
//! Reloads run one at a time; the work (reading, compiling, `describe`)
//! runs on a blocking thread, away from the tasks serving calls. A file
//! whose bytes did not change keeps its compiled component, so a reload
//! costs a read and a hash per unchanged skill.
//!
//! ```no_run
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! use agent_reach::reload::{LiveHost, ReloadSource, watch};
//! use agent_reach::{Host, policy::Policy, runtime::RuntimeConfig};
//! use std::path::{Path, PathBuf};
//!
//! let policy = Policy::load(Path::new("reach.toml"))?;
//! let live =
//!     LiveHost::new(Host::load(RuntimeConfig::default(), policy, Path::new("skills")).await?);
//! let _watching =
//!     watch(live.clone(), ReloadSource::new(Some(PathBuf::from("reach.toml")), "skills"))?;
//! let mut changes = live.subscribe();
//! // A skill or the table changed, or the table broke: list the tools again.
//! changes.changed().await?;
//! match live.current() {
//!     Ok(host) => { /* hold it for the whole call */ }
//!     Err(closed) => eprintln!("{closed}"), // the table on disk does not load: serve nothing
//! }
//! # Ok(()) }
//! ```

#[cfg(feature = "reload")]
mod watch;

#[cfg(feature = "reload")]
pub use watch::{WatchError, WatchHandle, watch};

use crate::policy::{Policy, ProtectedPath};
use crate::registry::{Registry, Status};
use crate::{Host, HostError};
use arc_swap::ArcSwap;
use std::collections::BTreeMap;
use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;
use tokio::sync::{Mutex, watch as channel};

/// The host currently serving, swapped atomically on reload.
pub struct LiveHost {
    state: ArcSwap<State>,
    generation: channel::Sender<u64>,
    /// Held for a whole reload: two at once would both start from the same
    /// host, and the slower would undo the faster.
    reloading: Mutex<()>,
}

/// What a [`LiveHost`] holds, swapped as one value so that a reader never
/// sees a new host with an old refusal or the other way round.
struct State {
    /// The last host that loaded: serving unless `closed`, and what the
    /// next reload builds on (its compiled skills, the versions a
    /// half-written file falls back to).
    host: Arc<Host>,
    /// Set while the last reload was refused: nothing is served.
    closed: Option<Closed>,
}

/// Why a [`LiveHost`] serves nothing: the last reload was refused (the
/// table, or the skills folder, did not load). It reopens when a reload
/// loads.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "nothing is served: {what} {path} did not load: {reason}. Fix it; the server reopens as soon \
     as it loads"
)]
#[non_exhaustive]
pub struct Closed {
    /// What did not load: `the permission table` or `the skills folder`.
    pub what: &'static str,
    /// Its path.
    pub path: PathBuf,
    /// The error, as the reload returned it (file, line and key for a table).
    pub reason: String,
}

impl Closed {
    fn new(source: &ReloadSource, error: &HostError) -> Closed {
        let (what, path) = match (error, &source.policy) {
            (HostError::Registry(_), _) => ("the skills folder", source.skills.clone()),
            (_, Some(table)) => ("the permission table", table.clone()),
            (_, None) => ("the permission table", PathBuf::from("<built-in>")),
        };
        Closed { what, path, reason: error.to_string() }
    }
}

/// Where a host was loaded from, so it can be loaded again.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct ReloadSource {
    /// The permission table; `None`: [`Policy::builtin`] (nothing granted,
    /// every tool at `confirm`), which never changes.
    pub policy: Option<PathBuf>,
    /// The skills folder.
    pub skills: PathBuf,
    /// Applied to each table loaded ([`Policy::with_working_dir`]).
    pub working_dir: Option<PathBuf>,
    /// More paths no skill may write, as given to [`Host::new`] (the audit
    /// folder, say); the table, the skills folder and the compile cache are
    /// always protected.
    pub protected: Vec<ProtectedPath>,
}

impl ReloadSource {
    /// The table at `policy` (or the built-in one) and the skills in
    /// `skills`; no working folder, nothing else protected.
    pub fn new(policy: Option<PathBuf>, skills: impl Into<PathBuf>) -> ReloadSource {
        ReloadSource { policy, skills: skills.into(), working_dir: None, protected: Vec::new() }
    }
}

/// What a successful reload changed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ReloadSummary {
    /// Skills offered now and not before: `name version`, or `name (bundle)`.
    pub added: Vec<String>,
    /// Skills no longer offered: `name version`, or `name (bundle)`.
    pub removed: Vec<String>,
    /// Skills offered before and now from other bytes: `name 1.0.0 → 1.1.0`,
    /// or `name 1.0.0 (rebuilt)` when the version stayed, or
    /// `name (bundle, edited)` when any file of a bundle changed.
    pub changed: Vec<String>,
    /// Whether the permission table changed.
    pub table_changed: bool,
    /// Skill files that no longer load while the version loaded from them
    /// before keeps serving: the file and why it does not load.
    pub kept: Vec<(PathBuf, String)>,
    /// Skill files and bundle folders that do not load and serve nothing:
    /// the path and why.
    pub broken: Vec<(PathBuf, String)>,
    /// Whether this reload opened a host that was [`Closed`].
    pub reopened: bool,
    /// The generation serving after this reload (see [`LiveHost::subscribe`]).
    pub generation: u64,
}

impl ReloadSummary {
    /// Whether what is offered changed: a skill added, removed or changed,
    /// the table, or a closed host opened again. Only then is the
    /// generation bumped.
    pub fn changed_offer(&self) -> bool {
        !(self.added.is_empty() && self.removed.is_empty() && self.changed.is_empty())
            || self.table_changed
            || self.reopened
    }
}

impl fmt::Display for ReloadSummary {
    /// One line for the log: `added other 1.0.0; changed echo 1.0.0 → 2.0.0;
    /// 1 file kept at its previous version` or `nothing changed`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut parts = Vec::new();
        if self.reopened {
            parts.push("reopened".to_owned());
        }
        for (what, list) in
            [("added", &self.added), ("removed", &self.removed), ("changed", &self.changed)]
        {
            if !list.is_empty() {
                parts.push(format!("{what} {}", list.join(", ")));
            }
        }
        if self.table_changed {
            parts.push("table changed".to_owned());
        }
        if !self.kept.is_empty() {
            parts.push(format!("{} file(s) kept at their previous version", self.kept.len()));
        }
        if !self.broken.is_empty() {
            parts.push(format!("{} broken file(s)", self.broken.len()));
        }
        if parts.is_empty() {
            f.write_str("nothing changed")
        } else {
            f.write_str(&parts.join("; "))
        }
    }
}

impl LiveHost {
    /// Serve `host`, at generation 0.
    pub fn new(host: Host) -> Arc<LiveHost> {
        let (generation, _) = channel::channel(0);
        let state = State { host: Arc::new(host), closed: None };
        Arc::new(LiveHost {
            state: ArcSwap::from_pointee(state),
            generation,
            reloading: Mutex::new(()),
        })
    }

    /// The host to use for one call, or why there is none: the last reload
    /// was refused, and nothing is served until one loads. Hold the `Arc`
    /// for the whole call: a call in flight keeps its version alive,
    /// however many reloads happen.
    pub fn current(&self) -> Result<Arc<Host>, Closed> {
        let state = self.state.load();
        match &state.closed {
            Some(closed) => Err(closed.clone()),
            None => Ok(Arc::clone(&state.host)),
        }
    }

    /// The generation now serving: 0 at the start, plus one for every
    /// reload that changed what is offered ([`ReloadSummary::changed_offer`])
    /// and every reload that closed the host.
    pub fn generation(&self) -> u64 {
        *self.generation.borrow()
    }

    /// Follow the generation: the receiver sees a change whenever a reload
    /// changed what is offered, closed the host or opened it again (an MCP
    /// server sends `tools/list_changed`).
    pub fn subscribe(&self) -> channel::Receiver<u64> {
        self.generation.subscribe()
    }

    /// Load again from `source` and, if everything checks, swap the new host
    /// in; if the table or the skills folder does not load, close: serve
    /// nothing until a reload loads. See the [module docs](self) for what
    /// happens to a broken file, a deleted one and a broken table. Logged:
    /// the outcome at info, a refusal and every file kept at its previous
    /// version at error. Waits for a reload already running.
    pub async fn reload(&self, source: &ReloadSource) -> Result<ReloadSummary, HostError> {
        let _one_at_a_time = self.reloading.lock().await;
        let state = self.state.load_full();
        let old = Arc::clone(&state.host);
        let job = {
            let (old, source) = (old.clone(), source.clone());
            let runtime = tokio::runtime::Handle::current();
            // Compiling a changed skill takes a CPU for a while: not on a
            // worker thread that serves calls.
            tokio::task::spawn_blocking(move || runtime.block_on(build(&old, &source)))
        };
        let built = job.await.unwrap_or_else(|join| std::panic::resume_unwind(join.into_panic()));
        let new = match built {
            Ok(new) => new,
            Err(err) => {
                // Fail closed: the old table may grant what the operator
                // just took away.
                let closed = Closed::new(source, &err);
                tracing::error!(
                    error = %err,
                    "reload refused; nothing is served until {} {} loads",
                    closed.what,
                    closed.path.display()
                );
                let was_open = state.closed.is_none();
                self.state.store(Arc::new(State { host: old, closed: Some(closed) }));
                if was_open {
                    self.generation.send_modify(|g| *g += 1);
                }
                return Err(err);
            }
        };
        let mut summary = compare(&old, &new);
        summary.reopened = state.closed.is_some();
        for (path, reason) in &summary.kept {
            tracing::error!(
                path = %path.display(),
                %reason,
                "skill file does not load; the version loaded from it before keeps serving"
            );
        }
        self.state.store(Arc::new(State { host: Arc::new(new), closed: None }));
        if summary.changed_offer() {
            self.generation.send_modify(|g| *g += 1);
        }
        summary.generation = self.generation();
        tracing::info!(generation = summary.generation, "reloaded: {summary}");
        Ok(summary)
    }
}

/// The new host, built beside `old` with its runtime.
async fn build(old: &Host, source: &ReloadSource) -> Result<Host, HostError> {
    let policy = match &source.policy {
        Some(path) => Policy::load(path)?,
        None => Policy::builtin(),
    };
    let policy = match &source.working_dir {
        Some(dir) => policy.with_working_dir(dir),
        None => policy,
    };
    let on_compile =
        |path: &std::path::Path| tracing::info!(path = %path.display(), "compiling skill");
    let registry =
        Registry::rescan(old.runtime(), &source.skills, &policy, old.registry(), on_compile)
            .await?;
    Host::new(old.runtime().clone(), policy, registry, &source.protected)
}

/// What `new` offers differently from `old`.
fn compare(old: &Host, new: &Host) -> ReloadSummary {
    let (before, after) = (offered(old.registry()), offered(new.registry()));
    let mut summary =
        ReloadSummary { table_changed: old.policy() != new.policy(), ..ReloadSummary::default() };
    for (name, (version, sha256)) in &after {
        match before.get(name) {
            None => summary.added.push(format!("{name} {version}")),
            Some((was, _)) if was != version => {
                summary.changed.push(format!("{name} {was} → {version}"))
            }
            Some((_, was)) if was != sha256 => {
                summary.changed.push(format!("{name} {version} (rebuilt)"))
            }
            Some(_) => {}
        }
    }
    for (name, (version, _)) in &before {
        if !after.contains_key(name) {
            summary.removed.push(format!("{name} {version}"));
        }
    }
    let (before, after) = (offered_bundles(old.registry()), offered_bundles(new.registry()));
    for (name, sha256) in &after {
        match before.get(name) {
            None => summary.added.push(format!("{name} (bundle)")),
            Some(was) if was != sha256 => summary.changed.push(format!("{name} (bundle, edited)")),
            Some(_) => {}
        }
    }
    for name in before.keys() {
        if !after.contains_key(name) {
            summary.removed.push(format!("{name} (bundle)"));
        }
    }
    for bundle in new.registry().bundles() {
        if bundle.status == Status::Broken {
            let reason = bundle.reason.clone().unwrap_or_default();
            summary.broken.push((bundle.path.clone(), reason));
        }
    }
    for entry in new.registry().entries() {
        let reason = || entry.reason.clone().unwrap_or_default();
        match (&entry.stale, entry.status) {
            (Some(why), _) => summary.kept.push((entry.path.clone(), why.clone())),
            (None, Status::Broken) => summary.broken.push((entry.path.clone(), reason())),
            _ => {}
        }
    }
    summary
}

/// Each active bundle's digest (over all its files), by name.
fn offered_bundles(registry: &Registry) -> BTreeMap<String, String> {
    registry.active_bundles().filter_map(|b| Some((b.name(), b.sha256()?.to_owned()))).collect()
}

/// Each active skill's version and file digest, by name.
fn offered(registry: &Registry) -> BTreeMap<String, (semver::Version, String)> {
    registry
        .active_skills()
        .into_iter()
        .map(|s| {
            (s.manifest.name.clone(), (s.manifest.version.clone(), s.loaded().sha256().to_owned()))
        })
        .collect()
}
