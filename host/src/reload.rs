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
//!   files), or the skills folder cannot be read: nothing is swapped; the
//!   old skills and table keep serving; the error is logged and returned.
//! - **A skill file does not load** (half-written, truncated, not a
//!   component, claiming another name, refused by its pin): if a version
//!   was loaded from that path before, that version keeps serving
//!   ([`SkillEntry::stale`](crate::registry::SkillEntry::stale) says why);
//!   a new file that never loaded is only reported as broken. Either way
//!   it is logged with the file and the reason.
//! - **A skill file is deleted**: its skill leaves the active set — the
//!   operator removed it.
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
//! let live = LiveHost::new(Host::load(RuntimeConfig::default(), policy, Path::new("skills")).await?);
//! let _watching = watch(live.clone(), ReloadSource::new(Some(PathBuf::from("reach.toml")), "skills"))?;
//! let mut changes = live.subscribe();
//! changes.changed().await?; // a skill or the table changed: list the tools again
//! let host = live.current(); // hold it for the whole call
//! # Ok(()) }
//! ```

mod watch;

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
    host: ArcSwap<Host>,
    generation: channel::Sender<u64>,
    /// Held for a whole reload: two at once would both start from the same
    /// host, and the slower would undo the faster.
    reloading: Mutex<()>,
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
    /// Skills offered now and not before: `name version`.
    pub added: Vec<String>,
    /// Skills no longer offered: `name version`.
    pub removed: Vec<String>,
    /// Skills offered before and now from other bytes: `name 1.0.0 → 1.1.0`,
    /// or `name 1.0.0 (rebuilt)` when the version stayed.
    pub changed: Vec<String>,
    /// Whether the permission table changed.
    pub table_changed: bool,
    /// Skill files that no longer load while the version loaded from them
    /// before keeps serving: the file and why it does not load.
    pub kept: Vec<(PathBuf, String)>,
    /// Skill files that do not load and serve nothing: the file and why.
    pub broken: Vec<(PathBuf, String)>,
    /// The generation serving after this reload (see [`LiveHost::subscribe`]).
    pub generation: u64,
}

impl ReloadSummary {
    /// Whether what is offered changed: a skill added, removed or changed,
    /// or the table. Only then is the generation bumped.
    pub fn changed_offer(&self) -> bool {
        !(self.added.is_empty() && self.removed.is_empty() && self.changed.is_empty()) || self.table_changed
    }
}

impl fmt::Display for ReloadSummary {
    /// One line for the log: `added other 1.0.0; changed echo 1.0.0 → 2.0.0;
    /// 1 file kept at its previous version` or `nothing changed`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut parts = Vec::new();
        for (what, list) in [("added", &self.added), ("removed", &self.removed), ("changed", &self.changed)] {
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
        if parts.is_empty() { f.write_str("nothing changed") } else { f.write_str(&parts.join("; ")) }
    }
}

impl LiveHost {
    /// Serve `host`, at generation 0.
    pub fn new(host: Host) -> Arc<LiveHost> {
        let (generation, _) = channel::channel(0);
        Arc::new(LiveHost { host: ArcSwap::from_pointee(host), generation, reloading: Mutex::new(()) })
    }

    /// The host to use for one call. Hold the `Arc` for the whole call: a
    /// call in flight keeps its version alive, however many reloads happen.
    pub fn current(&self) -> Arc<Host> {
        self.host.load_full()
    }

    /// The generation now serving: 0 at the start, plus one for every
    /// reload that changed what is offered ([`ReloadSummary::changed_offer`]).
    pub fn generation(&self) -> u64 {
        *self.generation.borrow()
    }

    /// Follow the generation: the receiver sees a change whenever a reload
    /// changed what is offered (an MCP server sends `tools/list_changed`).
    pub fn subscribe(&self) -> channel::Receiver<u64> {
        self.generation.subscribe()
    }

    /// Load again from `source` and, if everything checks, swap the new host
    /// in; otherwise keep the old one. See the [module docs](self) for what
    /// happens to a broken file, a deleted one and a broken table. Logged:
    /// the outcome at info, a refusal and every file kept at its previous
    /// version at error. Waits for a reload already running.
    pub async fn reload(&self, source: &ReloadSource) -> Result<ReloadSummary, HostError> {
        let _one_at_a_time = self.reloading.lock().await;
        let old = self.current();
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
                tracing::error!(error = %err, "reload refused; the skills and table loaded before keep serving");
                return Err(err);
            }
        };
        let mut summary = compare(&old, &new);
        for (path, reason) in &summary.kept {
            tracing::error!(path = %path.display(), %reason, "skill file does not load; the version loaded from it before keeps serving");
        }
        self.host.store(Arc::new(new));
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
    let on_compile = |path: &std::path::Path| tracing::info!(path = %path.display(), "compiling skill");
    let registry = Registry::rescan(&old.runtime, &source.skills, &policy, &old.registry, on_compile).await?;
    Host::new(old.runtime.clone(), policy, registry, &source.protected)
}

/// What `new` offers differently from `old`.
fn compare(old: &Host, new: &Host) -> ReloadSummary {
    let (before, after) = (offered(&old.registry), offered(&new.registry));
    let mut summary = ReloadSummary { table_changed: old.policy != new.policy, ..ReloadSummary::default() };
    for (name, (version, sha256)) in &after {
        match before.get(name) {
            None => summary.added.push(format!("{name} {version}")),
            Some((was, _)) if was != version => summary.changed.push(format!("{name} {was} → {version}")),
            Some((_, was)) if was != sha256 => summary.changed.push(format!("{name} {version} (rebuilt)")),
            Some(_) => {}
        }
    }
    for (name, (version, _)) in &before {
        if !after.contains_key(name) {
            summary.removed.push(format!("{name} {version}"));
        }
    }
    for entry in new.registry.entries() {
        let reason = || entry.reason.clone().unwrap_or_default();
        match (&entry.stale, entry.status) {
            (Some(why), _) => summary.kept.push((entry.path.clone(), why.clone())),
            (None, Status::Broken) => summary.broken.push((entry.path.clone(), reason())),
            _ => {}
        }
    }
    summary
}

/// Each active skill's version and file digest, by name.
fn offered(registry: &Registry) -> BTreeMap<String, (semver::Version, String)> {
    registry
        .active_skills()
        .into_iter()
        .map(|s| (s.manifest.name.clone(), (s.manifest.version.clone(), s.loaded().sha256().to_owned())))
        .collect()
}
