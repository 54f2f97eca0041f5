//! Agent Skills bundles in the skills folder: every subfolder holding
//! `SKILL.md` is read with [`crate::bundle::load`] and becomes a
//! [`BundleEntry`], under the same identity rules as a `.wasm` file:
//!
//! - the folder's name is the skill's name, the one the table grants;
//! - `[skills.NAME] sha256 = "…"` pins the bundle's digest (over every
//!   file, see [`crate::bundle::files`]), so any changed file is refused
//!   until the pin is updated;
//! - a name a `.wasm` skill in the same folder also claims is refused for
//!   the bundle: which of the two the table's grants were written for
//!   cannot be told, so neither silently wins.
//!
//! Only the folder the operator set is scanned: project folders that other
//! clients read (`.agents/skills/`) are not, so a cloned repository cannot
//! add instructions to a run.

use super::{SkillEntry, Status};
use crate::bundle::{self, Bundle};
use crate::policy::Policy;
use std::path::{Path, PathBuf};

/// One bundle folder in the skills folder.
#[derive(Clone, Debug)]
pub struct BundleEntry {
    /// The bundle folder.
    pub path: PathBuf,
    /// Active, or broken (bundles have no versions to supersede one another).
    pub status: Status,
    /// The bundle, when it loaded (kept on a refused one, to show what it holds).
    pub bundle: Option<Bundle>,
    /// Why it is broken; for an active one, `None`.
    pub reason: Option<String>,
}

impl BundleEntry {
    /// The skill name: the folder's name.
    pub fn name(&self) -> String {
        self.path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default()
    }

    /// The bundle's digest, when it loaded.
    pub fn sha256(&self) -> Option<&str> {
        self.bundle.as_ref().map(|b| b.sha256.as_str())
    }

    /// The bundle, when it is active.
    pub fn active(&self) -> Option<&Bundle> {
        self.bundle.as_ref().filter(|_| self.status == Status::Active)
    }
}

/// Every bundle folder directly in `dir`, in path order, with pins and
/// name clashes against the `.wasm` skills in `components` applied.
pub(super) fn scan(dir: &Path, policy: &Policy, components: &[SkillEntry]) -> Vec<BundleEntry> {
    let Ok(read) = std::fs::read_dir(dir) else { return Vec::new() };
    let mut folders: Vec<PathBuf> = read
        .filter_map(|e| e.ok())
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .map(|e| e.path())
        .filter(|p| bundle::is_bundle(p))
        .collect();
    folders.sort();
    folders.into_iter().map(|path| one(path, policy, components)).collect()
}

fn one(path: PathBuf, policy: &Policy, components: &[SkillEntry]) -> BundleEntry {
    let entry = match bundle::load(&path) {
        Ok(b) => BundleEntry { path, status: Status::Active, bundle: Some(b), reason: None },
        Err(e) => BundleEntry {
            path,
            status: Status::Broken,
            bundle: None,
            reason: Some(format!("SKILL.md: {e}")),
        },
    };
    let name = entry.name();
    let refused = |entry: BundleEntry, reason: String| BundleEntry {
        status: Status::Broken,
        reason: Some(reason),
        ..entry
    };
    if entry.status == Status::Broken {
        return entry;
    }
    if let Some(other) = components
        .iter()
        .find(|c| c.status != Status::Broken && c.manifest.as_ref().is_some_and(|m| m.name == name))
    {
        let reason = format!(
            "the skill name `{name}` is also claimed by {}; the table grants by name, so keep \
             only one of the two",
            other.path.display()
        );
        return refused(entry, reason);
    }
    if let (Some(pin), Some(found)) = (policy.pin(&name), entry.sha256())
        && found != pin.sha256
    {
        let reason = format!(
            "`{name}` is pinned to sha256 {} ({} line {}), but this bundle's digest (over every \
             file) is {found}; a file in it changed: if you trust the change, set sha256 = \
             \"{found}\" on that line, otherwise restore the bundle",
            pin.sha256,
            policy.origin().display(),
            pin.line
        );
        return refused(entry, reason);
    }
    for problem in entry.bundle.iter().flat_map(|b| &b.problems) {
        tracing::warn!(skill = %name, path = %entry.path.display(), "SKILL.md: {}", problem.message);
    }
    entry
}
