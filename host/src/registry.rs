//! The skills folder: find `*.wasm` files, load and describe each, validate
//! the manifests, and pick one active version per skill name; and read the
//! Agent Skills bundles (`NAME/SKILL.md` folders, see [`BundleEntry`]).
//!
//! Rules: a broken file is reported with its path and reason and the others
//! still load; a file must be named after the skill it claims to be
//! (`NAME.wasm` or `NAME-VERSION.wasm`) and, when the table pins the name
//! (`[skills.NAME] sha256`), have that digest — otherwise it is broken and
//! gets nothing (see *Identity* below); of the files left for one
//! name the newest semver is active and the others are *superseded* (never
//! offered); the same name and version twice keeps the first file (by
//! path) and reports the other as broken.
//!
//! A long-running host scans again on reload ([`crate::reload`]): unchanged
//! files keep their component, and a file that stops loading keeps the
//! version loaded from it before (see [`SkillEntry::stale`]).
//!
//! # Identity
//!
//! Grants are keyed by the name a component reports about itself, so the
//! name alone proves nothing: both checks above run before versions are
//! compared, so a file that fails them can never supersede the real skill.

mod bundles;
mod identity;
mod manifest;
pub mod seen;
mod trust;

pub(crate) use bundles::RUNNER_TOOL;
pub use bundles::{BundleEntry, Language, RUN_SCRIPT, RUNNERS, Script};
pub use manifest::{Example, Manifest, ToolSpec};
pub use trust::Origin;

use crate::error::{ErrorCode, ToolFailure};
use crate::policy::Policy;
use crate::runtime::{LoadSource, LoadedSkill, Runtime, sha256_hex};
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Errors reading the skills folder itself (a single bad skill is not an error).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RegistryError {
    /// The folder could not be read.
    #[error(
        "skills folder {path}: {source} (create it, or point --skills / REACH_SKILLS at the folder \
         with your .wasm files)"
    )]
    Folder {
        /// The folder.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
}

/// Where a skill file stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// Loaded and offered.
    Active,
    /// Loaded, but a newer version of the same skill is active.
    Superseded,
    /// Could not be loaded, or refused because its file name or digest
    /// does not match the skill it claims to be; see the reason. Never
    /// offered, and never supersedes another file.
    Broken,
}

/// One `.wasm` file in the skills folder.
#[derive(Clone)]
pub struct SkillEntry {
    /// The file.
    pub path: PathBuf,
    /// Active, superseded or broken.
    pub status: Status,
    /// The validated manifest (absent when broken before `describe` succeeded).
    pub manifest: Option<Manifest>,
    /// Why it is broken or superseded.
    pub reason: Option<String>,
    /// Whether it was compiled now or loaded from the cache.
    pub source: Option<LoadSource>,
    /// The file's sha256, lowercase hex (absent only when it could not be read).
    pub sha256: Option<String>,
    /// Set on an entry kept through a reload: its file on disk no longer
    /// loads (this says why), and what serves is the version loaded from
    /// the same path before. The other fields describe that version.
    pub stale: Option<String>,
    /// Where the file came from, when `reach skill add` installed it (its
    /// `.origin.json` record), and whether a signature verified just now.
    pub origin: Option<Origin>,
    loaded: Option<LoadedSkill>,
}

impl SkillEntry {
    /// The loaded component (not for broken entries).
    pub fn loaded(&self) -> Option<&LoadedSkill> {
        self.loaded.as_ref()
    }

    fn as_active(&self) -> Option<ActiveSkill<'_>> {
        match (&self.status, &self.manifest, &self.loaded) {
            (Status::Active, Some(manifest), Some(loaded)) => {
                Some(ActiveSkill { manifest, loaded })
            }
            _ => None,
        }
    }
}

/// An active skill: its manifest and component.
pub struct ActiveSkill<'a> {
    /// The validated manifest.
    pub manifest: &'a Manifest,
    loaded: &'a LoadedSkill,
}

impl ActiveSkill<'_> {
    /// The component, to pass to [`Runtime::call`].
    pub fn loaded(&self) -> &LoadedSkill {
        self.loaded
    }
}

/// A tool [`Registry::tool`] found: the skill's manifest, the tool's spec
/// and the component that runs it.
pub struct ToolRef<'a> {
    /// The skill's manifest (for a bundle, the one the host writes for it).
    pub manifest: &'a Manifest,
    /// The tool.
    pub spec: &'a ToolSpec,
    loaded: &'a LoadedSkill,
    script_of: Option<(&'a crate::bundle::Bundle, &'a [(Language, LoadedSkill)])>,
}

impl<'a> ToolRef<'a> {
    /// The component to call.
    pub fn loaded(&self) -> &'a LoadedSkill {
        self.loaded
    }

    /// For a bundle's `run_script`: the bundle whose script runs, and the
    /// runner for each language its scripts are in.
    pub fn script_of(&self) -> Option<(&'a crate::bundle::Bundle, &'a [(Language, LoadedSkill)])> {
        self.script_of
    }
}

/// Every skill file and bundle folder found in a folder, in path order.
pub struct Registry {
    dir: PathBuf,
    entries: Vec<SkillEntry>,
    bundles: Vec<BundleEntry>,
}

impl Registry {
    /// Load every `*.wasm` in `dir` (not recursive), refusing files whose
    /// name or digest does not match the skill they claim to be; `policy`
    /// supplies the pins (`[skills.NAME] sha256`). Pass
    /// [`Policy::builtin`] when there is no table: names are still bound
    /// to file names.
    pub async fn scan(
        runtime: &Runtime,
        dir: &Path,
        policy: &Policy,
    ) -> Result<Registry, RegistryError> {
        Self::scan_with_progress(runtime, dir, policy, |_| {}).await
    }

    /// Like [`Registry::scan`], calling `on_compile(path)` before each
    /// (slow, first-time) compilation so a terminal can show progress.
    pub async fn scan_with_progress(
        runtime: &Runtime,
        dir: &Path,
        policy: &Policy,
        on_compile: impl FnMut(&Path),
    ) -> Result<Registry, RegistryError> {
        scan_folder(runtime, dir, policy, None, on_compile).await
    }

    /// Scan again for a reload, starting from `previous` (the registry
    /// serving now). A file whose bytes are unchanged keeps its component
    /// and manifest: no compile, no `describe`. A file that no longer loads
    /// — half-written, truncated, not a skill, claiming another name,
    /// refused by its pin — keeps the version `previous` loaded from the
    /// same path, marked [`SkillEntry::stale`], provided that version
    /// passes `policy`'s pins. A file that is gone takes its skill with it.
    pub(crate) async fn rescan(
        runtime: &Runtime,
        dir: &Path,
        policy: &Policy,
        previous: &Registry,
        on_compile: impl FnMut(&Path),
    ) -> Result<Registry, RegistryError> {
        scan_folder(runtime, dir, policy, Some(previous), on_compile).await
    }

    /// The entry last loaded from `path`, if it loaded (active or superseded).
    fn loaded_from(&self, path: &Path) -> Option<&SkillEntry> {
        self.entries
            .iter()
            .find(|e| e.path == path && e.status != Status::Broken && e.loaded.is_some())
    }

    /// The folder that was scanned.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// All `.wasm` entries, in path order.
    pub fn entries(&self) -> &[SkillEntry] {
        &self.entries
    }

    /// All bundle folders (`NAME/SKILL.md`), in path order.
    pub fn bundles(&self) -> &[BundleEntry] {
        &self.bundles
    }

    /// The active bundle with this name.
    pub fn active_bundle(&self, name: &str) -> Option<&BundleEntry> {
        self.bundles.iter().find(|b| b.active().is_some() && b.name() == name)
    }

    /// Every active bundle, sorted by name (the folder order).
    pub fn active_bundles(&self) -> impl Iterator<Item = &BundleEntry> {
        self.bundles.iter().filter(|b| b.active().is_some())
    }

    /// The active skill with this name.
    pub fn active(&self, name: &str) -> Option<ActiveSkill<'_>> {
        self.entries.iter().filter_map(SkillEntry::as_active).find(|s| s.manifest.name == name)
    }

    /// Every active skill, sorted by name.
    pub fn active_skills(&self) -> Vec<ActiveSkill<'_>> {
        let mut all: Vec<ActiveSkill<'_>> =
            self.entries.iter().filter_map(SkillEntry::as_active).collect();
        all.sort_by(|a, b| a.manifest.name.cmp(&b.manifest.name));
        all
    }

    /// Find `skill.tool`, in a `.wasm` skill or a bundle; the error lists
    /// what exists (and why a broken skill of that name is unavailable).
    pub fn tool(&self, skill: &str, tool: &str) -> Result<ToolRef<'_>, ToolFailure> {
        let no_tool = |manifest: &Manifest| {
            let names: Vec<&str> = manifest.tools.iter().map(|t| t.name.as_str()).collect();
            let listed = if names.is_empty() {
                "none (it has instructions only: skills__open)".to_owned()
            } else {
                names.join(", ")
            };
            ToolFailure::new(
                ErrorCode::NoSuchTool,
                format!("skill `{skill}` has no tool `{tool}`; its tools: {listed}"),
            )
        };
        if let Some(active) = self.active(skill) {
            let spec = active.manifest.tool(tool).ok_or_else(|| no_tool(active.manifest))?;
            return Ok(ToolRef {
                manifest: active.manifest,
                spec,
                loaded: active.loaded,
                script_of: None,
            });
        }
        if let Some(entry) = self.active_bundle(skill)
            && let Some(manifest) = &entry.manifest
        {
            let spec = manifest.tool(tool).ok_or_else(|| no_tool(manifest))?;
            let (loaded, script_of) = match entry.backend(tool) {
                Some(bundles::Backend::Component(loaded)) => (loaded, None),
                // The first runner stands for the call in listings; the script's
                // language picks the one that runs it.
                Some(bundles::Backend::Script(runners, bundle)) => match runners.first() {
                    Some((_, loaded)) => (loaded, Some((bundle, runners))),
                    None => return Err(no_tool(manifest)),
                },
                None => return Err(no_tool(manifest)),
            };
            return Ok(ToolRef { manifest, spec, loaded, script_of });
        }
        let broken = self.entries.iter().find(|e| {
            e.status == Status::Broken
                && (e.manifest.as_ref().is_some_and(|m| m.name == skill)
                    || e.path
                        .file_stem()
                        .is_some_and(|s| identity::stem_claims(&s.to_string_lossy(), skill)))
        });
        let broken_bundle =
            self.bundles.iter().find(|b| b.status == Status::Broken && b.name() == skill);
        let message = match (broken, broken_bundle) {
            (Some(e), _) => format!(
                "skill `{skill}` failed to load from {}: {}",
                e.path.display(),
                e.reason.as_deref().unwrap_or("unknown reason")
            ),
            (None, Some(b)) => format!(
                "skill `{skill}` failed to load from {}: {}",
                b.path.display(),
                b.reason.as_deref().unwrap_or("unknown reason")
            ),
            (None, None) => {
                let mut names: Vec<String> =
                    self.active_skills().iter().map(|s| s.manifest.name.clone()).collect();
                names.extend(self.active_bundles().map(BundleEntry::name));
                names.sort();
                format!(
                    "no skill named `{skill}` in {}; available: {}",
                    self.dir.display(),
                    if names.is_empty() { "none".to_owned() } else { names.join(", ") }
                )
            }
        };
        Err(ToolFailure::new(ErrorCode::NoSuchTool, message))
    }
}

/// [`Registry::scan_with_progress`], or [`Registry::rescan`] when
/// `previous` is given.
async fn scan_folder(
    runtime: &Runtime,
    dir: &Path,
    policy: &Policy,
    previous: Option<&Registry>,
    mut on_compile: impl FnMut(&Path),
) -> Result<Registry, RegistryError> {
    let folder_err = |source| RegistryError::Folder { path: dir.to_owned(), source };
    let mut paths: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(folder_err)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "wasm") && p.is_file())
        .collect();
    paths.sort();
    let mut entries = Vec::with_capacity(paths.len());
    for path in paths {
        let before = previous.and_then(|p| p.loaded_from(&path));
        match before {
            Some(old) if same_bytes(&path, old) => entries.push(SkillEntry {
                status: Status::Active,
                reason: None,
                stale: None,
                ..old.clone()
            }),
            _ => entries.push(load_one(runtime, &path, &mut on_compile).await),
        }
    }
    // Before versions are compared: a refused file must not supersede
    // the one the operator pinned.
    apply_pins(&mut entries, policy);
    trust::apply(&mut entries, policy);
    if let Some(previous) = previous {
        keep_previous(&mut entries, previous, policy);
    }
    pick_versions(&mut entries);
    for e in &entries {
        match (&e.status, &e.manifest) {
            (Status::Broken, _) => {
                tracing::warn!(
                    path = %e.path.display(),
                    reason = e.reason.as_deref().unwrap_or(""),
                    "skill is broken"
                )
            }
            (status, Some(m)) => {
                tracing::debug!(
                    skill = %m.name,
                    version = %m.version,
                    ?status,
                    path = %e.path.display(),
                    "skill loaded"
                )
            }
            _ => {}
        }
    }
    let bundles = bundles::scan(runtime, dir, policy, &entries, &mut on_compile).await;
    for b in bundles.iter().filter(|b| b.status == Status::Broken) {
        tracing::warn!(
            path = %b.path.display(),
            reason = b.reason.as_deref().unwrap_or(""),
            "skill bundle is broken"
        );
    }
    Ok(Registry { dir: dir.to_owned(), entries, bundles })
}

/// Compile and `describe` one component file wherever it is and whatever
/// it is named, in a sandbox with nothing granted (`reach skill add` checks
/// a pulled component this way before it is installed).
pub async fn describe_file(runtime: &Runtime, path: &Path) -> SkillEntry {
    load_component(runtime, path, &mut |_| {}).await
}

async fn load_one(
    runtime: &Runtime,
    path: &Path,
    on_compile: &mut impl FnMut(&Path),
) -> SkillEntry {
    let mut entry = load_component(runtime, path, on_compile).await;
    if entry.status == Status::Active
        && let Some(manifest) = &entry.manifest
    {
        // The manifest is kept on a refused file so listings show what it
        // claimed; `as_active` never offers a broken entry.
        entry.reason = identity::name_mismatch(path, manifest);
        if entry.reason.is_some() {
            entry.status = Status::Broken;
        }
    }
    entry
}

/// Compile (or take from the cache) and `describe` the component at
/// `path`, without the file-name rule a skill in the folder follows (a
/// bundle's `tools/*.wasm` and the runners have their own).
async fn load_component(
    runtime: &Runtime,
    path: &Path,
    on_compile: &mut impl FnMut(&Path),
) -> SkillEntry {
    let broken = |reason: String, sha256: Option<String>| SkillEntry {
        path: path.to_owned(),
        status: Status::Broken,
        manifest: None,
        reason: Some(reason),
        source: None,
        sha256,
        stale: None,
        origin: None,
        loaded: None,
    };
    let loaded = match runtime.load(path, || on_compile(path)) {
        Ok(l) => l,
        Err(err) => {
            let text = err.to_string();
            let reason =
                text.strip_prefix(&format!("{}: ", path.display())).unwrap_or(&text).to_owned();
            // Only shown, never checked: this file is refused anyway.
            // Not for a file refused for its size: that read is what the
            // size limit is there to avoid.
            let small = std::fs::metadata(path)
                .is_ok_and(|m| m.len() <= crate::runtime::MAX_COMPONENT_BYTES);
            let sha256 =
                small.then(|| std::fs::read(path).ok().map(|bytes| sha256_hex(&bytes))).flatten();
            return broken(reason, sha256);
        }
    };
    let sha256 = Some(loaded.sha256().to_owned());
    let hint = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    let raw = match runtime.describe(&loaded, &hint).await {
        Ok(raw) => raw,
        Err(f) => return broken(format!("describe failed: {} ({})", f.message, f.code), sha256),
    };
    let mut manifest = match Manifest::from_raw(raw) {
        Ok(manifest) => manifest,
        Err(reason) => return broken(format!("invalid manifest: {reason}"), sha256),
    };
    let requests = loaded
        .requests_section()
        .map_err(str::to_owned)
        .and_then(|text| text.map(crate::policy::Requests::from_toml).transpose());
    match requests {
        Ok(None) => {}
        Ok(Some(requests)) => manifest.requests = requests,
        Err(why) => {
            tracing::warn!(path = %path.display(), "{why}; its requests are not shown");
            manifest.requests_problem = Some(why);
        }
    }
    SkillEntry {
        path: path.to_owned(),
        status: Status::Active,
        manifest: Some(manifest),
        reason: None,
        source: Some(loaded.source()),
        sha256,
        stale: None,
        origin: None,
        loaded: Some(loaded),
    }
}

/// Whether `path` still holds the bytes `old` was compiled from. A file
/// over the size limit is not read: loading refuses it anyway.
fn same_bytes(path: &Path, old: &SkillEntry) -> bool {
    let small =
        std::fs::metadata(path).is_ok_and(|m| m.len() <= crate::runtime::MAX_COMPONENT_BYTES);
    let Some(loaded) = &old.loaded else { return false };
    small && std::fs::read(path).is_ok_and(|bytes| sha256_hex(&bytes) == loaded.sha256())
}

/// On reload, a file that no longer loads keeps the version loaded from the
/// same path before, so one half-written or botched copy does not take a
/// working skill away; the reason is kept in [`SkillEntry::stale`]. The old
/// version must still pass the (possibly new) table's pin: a pin is the
/// operator saying which bytes may be that skill.
fn keep_previous(entries: &mut [SkillEntry], previous: &Registry, policy: &Policy) {
    for entry in entries.iter_mut().filter(|e| e.status == Status::Broken) {
        let Some(old) = previous.loaded_from(&entry.path) else { continue };
        let (Some(manifest), Some(loaded)) = (&old.manifest, &old.loaded) else { continue };
        if policy.pin(&manifest.name).is_some_and(|pin| {
            identity::pin_mismatch(&manifest.name, loaded.sha256(), pin, policy.origin()).is_some()
        }) {
            continue;
        }
        // Nor one the table no longer trusts: a revoked signer or origin
        // must not come back as the "previous" version.
        if trust::refuses(old, &manifest.name, loaded.sha256(), policy) {
            continue;
        }
        let why = entry.reason.clone().unwrap_or_else(|| "unknown reason".to_owned());
        *entry =
            SkillEntry { status: Status::Active, reason: None, stale: Some(why), ..old.clone() };
    }
}

/// Refuse every file for a pinned name whose digest is not the pinned one.
/// The digest is the one taken from the bytes that were compiled.
fn apply_pins(entries: &mut [SkillEntry], policy: &Policy) {
    for entry in entries.iter_mut().filter(|e| e.status != Status::Broken) {
        let (Some(manifest), Some(loaded)) = (&entry.manifest, &entry.loaded) else { continue };
        let Some(pin) = policy.pin(&manifest.name) else { continue };
        match identity::pin_mismatch(&manifest.name, loaded.sha256(), pin, policy.origin()) {
            Some(reason) => {
                entry.status = Status::Broken;
                entry.reason = Some(reason);
            }
            None => {
                tracing::debug!(
                    skill = %manifest.name,
                    sha256 = %pin.sha256,
                    path = %entry.path.display(),
                    "file matches its pin"
                )
            }
        }
    }
}

/// Keep the newest version of each name active; mark the rest superseded,
/// and exact duplicates broken.
fn pick_versions(entries: &mut [SkillEntry]) {
    let mut best: BTreeMap<String, usize> = BTreeMap::new();
    for i in 0..entries.len() {
        if entries[i].status == Status::Broken {
            continue;
        }
        let Some(m) = &entries[i].manifest else { continue };
        match best.get(&m.name).copied() {
            None => {
                best.insert(m.name.clone(), i);
            }
            Some(j) => {
                let other = entries[j].manifest.as_ref().map(|m| m.version.clone());
                if other.as_ref() == Some(&m.version) {
                    let first = entries[j].path.display().to_string();
                    entries[i].status = Status::Broken;
                    entries[i].reason = Some(format!(
                        "{} {} is already provided by {first}; remove one of the two files",
                        m.name, m.version
                    ));
                    continue;
                }
                if other.is_some_and(|v| m.version > v) {
                    best.insert(m.name.clone(), i);
                }
            }
        }
    }
    for i in 0..entries.len() {
        if entries[i].status != Status::Active {
            continue;
        }
        let Some(m) = &entries[i].manifest else { continue };
        let winner = best[&m.name];
        if winner != i {
            let newer = entries[winner]
                .manifest
                .as_ref()
                .map(|w| w.version.to_string())
                .unwrap_or_default();
            entries[i].status = Status::Superseded;
            entries[i].reason = Some(format!(
                "superseded by {} {newer} ({})",
                m.name,
                entries[winner].path.display()
            ));
        }
    }
}
