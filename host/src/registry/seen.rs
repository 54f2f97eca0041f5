//! What an operator last saw active, per skill name, so a replaced file is
//! pointed out instead of silently taking over its name's grants.
//!
//! Dropping `files-2.0.0.wasm` next to `files-1.0.0.wasm` makes 2.0.0
//! active with everything `[skills.files]` grants — and it may bring tools
//! the operator never reviewed. The state is a small JSON file,
//! [`SEEN_FILE`] under the policy file's folder (beside the audit logs in
//! `.reach/`), holding each name's last seen version, sha256, tools, what
//! it requests of the table and, for a bundle, each file's digest — so the
//! notice says what changed: new tools, new requests, which files.
//!
//! Only `reach skills list` records what it shows: "seen" means seen by a
//! person. If every load recorded, an unattended `reach run` would
//! acknowledge an upgrade before anyone looked at it. `reach skills inspect`
//! reads the state without changing it. A skill that is no longer active
//! keeps its record, so reinstalling an old version is reported too.
//!
//! ```
//! use agent_reach::registry::seen::{SeenSkill, SeenState};
//!
//! let dir = tempfile::tempdir()?;
//! let mut state = SeenState::load(&dir.path().join("skills-seen.json"))?;
//! let v1 = SeenSkill::new("1.0.0".parse()?, "a".repeat(64), vec!["read".into()]);
//! assert!(state.record("files", v1.clone()).is_none(), "first sight is not a change");
//! let v2 = SeenSkill::new("2.0.0".parse()?, "b".repeat(64), vec!["read".into(), "delete".into()]);
//! let change = state.record("files", v2.clone()).expect("a new file");
//! assert_eq!(change.to_string(), "upgraded from 1.0.0 (new tools: delete)");
//! assert!(state.record("files", v2).is_none(), "told once");
//! state.save()?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use super::{ActiveSkill, Manifest};
use crate::bundle::Bundle;
use crate::policy::{Capability, Requests};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;
use std::io::Write as _;
use std::path::{Path, PathBuf};

/// Where the state lives, relative to the folder of the policy file.
pub const SEEN_FILE: &str = ".reach/skills-seen.json";

/// Errors reading or writing the seen-skills file.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SeenError {
    /// The file exists but could not be read.
    #[error("cannot read {}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// What the operating system said.
        #[source]
        source: std::io::Error,
    },
    /// The file is not what this host writes.
    #[error(
        "{} is not a seen-skills file; delete it to start over (upgrade notices restart from what \
         is active now)",
        path.display()
    )]
    Parse {
        /// The file.
        path: PathBuf,
        /// What the JSON parser said.
        #[source]
        source: serde_json::Error,
    },
    /// The file (or its folder) could not be written.
    #[error("cannot write {}", path.display())]
    Write {
        /// The file.
        path: PathBuf,
        /// What the operating system said.
        #[source]
        source: std::io::Error,
    },
}

/// One skill as it was seen active.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SeenSkill {
    /// Its manifest version.
    pub version: semver::Version,
    /// The sha256 of its file, lowercase hex.
    pub sha256: String,
    /// Its tool names, in manifest order.
    pub tools: Vec<String>,
    /// What it requested of the table.
    #[serde(default, skip_serializing_if = "Requests::is_empty")]
    pub requests: Requests,
    /// A bundle's files: path to sha256 (empty for a component).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub files: BTreeMap<String, String>,
}

impl SeenSkill {
    /// A component seen with this version, digest and tools, requesting nothing.
    pub fn new(version: semver::Version, sha256: String, tools: Vec<String>) -> SeenSkill {
        SeenSkill { version, sha256, tools, requests: Requests::default(), files: BTreeMap::new() }
    }

    /// What `skill` looks like now.
    pub fn of(skill: &ActiveSkill<'_>) -> SeenSkill {
        SeenSkill {
            requests: skill.manifest.requests.clone(),
            ..SeenSkill::new(
                skill.manifest.version.clone(),
                skill.loaded().sha256().to_owned(),
                skill.manifest.tools.iter().map(|t| t.name.clone()).collect(),
            )
        }
    }

    /// What an active bundle looks like now: its digest over every file,
    /// and each file's own digest.
    pub fn of_bundle(bundle: &Bundle, manifest: &Manifest) -> SeenSkill {
        SeenSkill {
            version: manifest.version.clone(),
            sha256: bundle.sha256.clone(),
            tools: manifest.tools.iter().map(|t| t.name.clone()).collect(),
            requests: bundle.requests.clone(),
            files: bundle.files.iter().map(|f| (f.path.clone(), f.sha256.clone())).collect(),
        }
    }
}

/// How the active file differs from the one seen before.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ChangeKind {
    /// A higher version.
    Upgraded,
    /// A lower version.
    Downgraded,
    /// The same version, another file (rebuilt, or tampered with).
    Replaced,
}

/// A skill whose active file is not the one seen before.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Change {
    /// Upgraded, downgraded or replaced.
    pub change: ChangeKind,
    /// What was seen before.
    #[serde(flatten)]
    pub previous: SeenSkill,
    /// Tools the active file has that the previous one did not.
    pub added_tools: Vec<String>,
    /// Tools the previous file had that the active one does not.
    pub removed_tools: Vec<String>,
    /// What the active file requests that the previous one did not: an
    /// upgrade that asks for more is pointed out like one with new tools.
    #[serde(skip_serializing_if = "Requests::is_empty")]
    pub added_requests: Requests,
    /// A bundle's files that are new, gone or changed.
    #[serde(skip_serializing_if = "FileChanges::is_empty")]
    pub files: FileChanges,
}

/// How a bundle's files differ between two versions, by path.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct FileChanges {
    /// Files only the active version has.
    pub added: Vec<String>,
    /// Files only the previous version had.
    pub removed: Vec<String>,
    /// Files both have, with other content.
    pub changed: Vec<String>,
}

impl FileChanges {
    /// True when no file differs.
    pub fn is_empty(&self) -> bool {
        self.added.is_empty() && self.removed.is_empty() && self.changed.is_empty()
    }

    fn between(previous: &BTreeMap<String, String>, now: &BTreeMap<String, String>) -> Self {
        let mut changes = FileChanges::default();
        for (path, digest) in now {
            match previous.get(path) {
                None => changes.added.push(path.clone()),
                Some(old) if old != digest => changes.changed.push(path.clone()),
                Some(_) => {}
            }
        }
        changes.removed = previous.keys().filter(|p| !now.contains_key(*p)).cloned().collect();
        changes
    }
}

impl Change {
    fn between(previous: &SeenSkill, now: &SeenSkill) -> Change {
        let change = match now.version.cmp(&previous.version) {
            std::cmp::Ordering::Greater => ChangeKind::Upgraded,
            std::cmp::Ordering::Less => ChangeKind::Downgraded,
            std::cmp::Ordering::Equal => ChangeKind::Replaced,
        };
        let missing = |from: &[String], other: &[String]| {
            from.iter().filter(|t| !other.contains(t)).cloned().collect()
        };
        Change {
            change,
            previous: previous.clone(),
            added_tools: missing(&now.tools, &previous.tools),
            removed_tools: missing(&previous.tools, &now.tools),
            added_requests: now.requests.added_since(&previous.requests),
            files: FileChanges::between(&previous.files, &now.files),
        }
    }
}

/// `upgraded from 1.0.0 (new tools: delete; removed: list)`.
impl fmt::Display for Change {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let previous = &self.previous;
        match self.change {
            ChangeKind::Upgraded => write!(f, "upgraded from {}", previous.version)?,
            ChangeKind::Downgraded => write!(f, "downgraded from {}", previous.version)?,
            ChangeKind::Replaced => {
                let short = previous.sha256.get(..12).unwrap_or(&previous.sha256);
                write!(
                    f,
                    "replaced: same version {}, another file (was sha256 {short}…)",
                    previous.version
                )?;
            }
        }
        let mut parts = Vec::new();
        if !self.added_tools.is_empty() {
            parts.push(format!("new tools: {}", self.added_tools.join(", ")));
        }
        if !self.removed_tools.is_empty() {
            parts.push(format!("removed: {}", self.removed_tools.join(", ")));
        }
        let asked: Vec<String> = Capability::ALL
            .into_iter()
            .filter(|c| !self.added_requests.list(*c).is_empty())
            .map(|c| format!("{} {}", c.key(), self.added_requests.list(c).join(", ")))
            .collect();
        if !asked.is_empty() {
            parts.push(format!("now requests {}", asked.join("; ")));
        }
        for (what, files) in [
            ("changed", &self.files.changed),
            ("added", &self.files.added),
            ("removed files", &self.files.removed),
        ] {
            if !files.is_empty() {
                parts.push(format!("{what}: {}", files.join(", ")));
            }
        }
        if !parts.is_empty() {
            write!(f, " ({})", parts.join("; "))?;
        }
        Ok(())
    }
}

#[derive(Clone, Debug, Serialize, Deserialize)]
struct Record {
    #[serde(flatten)]
    current: SeenSkill,
    /// The change that made `current` current, kept for `inspect`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    previous: Option<SeenSkill>,
}

#[derive(Default, Serialize, Deserialize)]
struct File {
    #[serde(default)]
    skills: BTreeMap<String, Record>,
}

/// The last seen active file of every skill name, backed by one JSON file.
pub struct SeenState {
    path: PathBuf,
    file: File,
}

impl SeenState {
    /// The state file for the policy file at `policy_file`.
    pub fn beside(policy_file: &Path) -> PathBuf {
        let dir =
            policy_file.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
        dir.join(SEEN_FILE)
    }

    /// Read the state at `path`; a missing file is an empty state.
    pub fn load(path: &Path) -> Result<SeenState, SeenError> {
        let file = match std::fs::read(path) {
            Ok(bytes) => serde_json::from_slice(&bytes)
                .map_err(|source| SeenError::Parse { path: path.to_owned(), source })?,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => File::default(),
            Err(source) => return Err(SeenError::Read { path: path.to_owned(), source }),
        };
        Ok(SeenState { path: path.to_owned(), file })
    }

    /// An empty state that will be saved at `path` (after a load failed).
    pub fn empty(path: &Path) -> SeenState {
        SeenState { path: path.to_owned(), file: File::default() }
    }

    /// The file this state is saved to.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// How `now` differs from what was last seen for `name`; `None` when it
    /// is the same file or the name was never seen.
    pub fn unseen_change(&self, name: &str, now: &SeenSkill) -> Option<Change> {
        let record = self.file.skills.get(name)?;
        (record.current.sha256 != now.sha256).then(|| Change::between(&record.current, now))
    }

    /// The latest change to `name` for a reviewer: one not yet seen, else
    /// the recorded one that made `now` current.
    pub fn last_change(&self, name: &str, now: &SeenSkill) -> Option<Change> {
        self.unseen_change(name, now).or_else(|| {
            let previous = self.file.skills.get(name)?.previous.as_ref()?;
            Some(Change::between(previous, now))
        })
    }

    /// Record `now` as seen for `name`, returning how it differs from what
    /// was seen before (`None` when nothing changed or on first sight).
    pub fn record(&mut self, name: &str, now: SeenSkill) -> Option<Change> {
        let change = self.unseen_change(name, &now);
        let previous = match &change {
            Some(c) => Some(c.previous.clone()),
            None => self.file.skills.get(name).and_then(|r| r.previous.clone()),
        };
        self.file.skills.insert(name.to_owned(), Record { current: now, previous });
        change
    }

    /// Write the state atomically (a temporary file renamed over the old
    /// one), so a crash or a concurrent `reach` never leaves half a file.
    pub fn save(&self) -> Result<(), SeenError> {
        let write_err = |source| SeenError::Write { path: self.path.clone(), source };
        let dir =
            self.path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
        std::fs::create_dir_all(dir).map_err(write_err)?;
        let mut temp = tempfile::NamedTempFile::new_in(dir).map_err(write_err)?;
        let json = serde_json::to_vec_pretty(&self.file).map_err(|e| write_err(e.into()))?;
        temp.write_all(&json).map_err(write_err)?;
        temp.as_file().sync_all().map_err(write_err)?;
        temp.persist(&self.path).map_err(|e| write_err(e.error))?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seen(version: &str, digest: char, tools: &[&str]) -> SeenSkill {
        SeenSkill::new(
            version.parse().unwrap(),
            digest.to_string().repeat(64),
            tools.iter().map(|t| (*t).to_owned()).collect(),
        )
    }

    #[test]
    fn an_upgrade_that_asks_for_more_or_changes_files_says_so() {
        let mut v1 = seen("1.0.0", 'a', &["run_script"]);
        v1.requests = Requests::from_toml("net = [\"docs.rs\"]").unwrap();
        v1.files = [("SKILL.md", "1"), ("scripts/a.py", "2"), ("old.md", "3")]
            .into_iter()
            .map(|(p, d)| (p.to_owned(), d.to_owned()))
            .collect();
        let mut v2 = seen("1.0.0", 'b', &["run_script"]);
        v2.requests = Requests::from_toml("net = [\"docs.rs\", \"evil.example\"]").unwrap();
        v2.files = [("SKILL.md", "1"), ("scripts/a.py", "9"), ("new.md", "4")]
            .into_iter()
            .map(|(p, d)| (p.to_owned(), d.to_owned()))
            .collect();
        let change = Change::between(&v1, &v2);
        assert_eq!(
            change.to_string(),
            "replaced: same version 1.0.0, another file (was sha256 aaaaaaaaaaaa…) (now requests \
             net evil.example; changed: scripts/a.py; added: new.md; removed files: old.md)"
        );
        let json = serde_json::to_value(&change).unwrap();
        assert_eq!(json["added_requests"]["net"], serde_json::json!(["evil.example"]));
        assert_eq!(json["files"]["changed"], serde_json::json!(["scripts/a.py"]));
    }

    #[test]
    fn an_upgrade_is_reported_once_and_kept_for_review() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(".reach/skills-seen.json");
        let mut state = SeenState::load(&path).unwrap();
        assert_eq!(state.record("files", seen("1.0.0", 'a', &["list", "read"])), None);
        state.save().unwrap();

        let mut state = SeenState::load(&path).unwrap();
        let v2 = seen("1.1.0", 'b', &["read", "delete"]);
        let change = state.unseen_change("files", &v2).expect("another file");
        assert_eq!(change.to_string(), "upgraded from 1.0.0 (new tools: delete; removed: list)");
        assert_eq!(state.record("files", v2.clone()).as_ref(), Some(&change));
        state.save().unwrap();

        let state = SeenState::load(&path).unwrap();
        assert_eq!(state.unseen_change("files", &v2), None, "told once");
        assert_eq!(state.last_change("files", &v2), Some(change), "inspect still shows it");
    }

    #[test]
    fn downgrades_and_same_version_rebuilds_are_changes_too() {
        let mut state = SeenState::empty(Path::new("unused.json"));
        state.record("web", seen("2.0.0", 'a', &["fetch"]));
        let down = state.record("web", seen("1.0.0", 'b', &["fetch"])).unwrap();
        assert_eq!(down.to_string(), "downgraded from 2.0.0");
        let same = state.record("web", seen("1.0.0", 'c', &["fetch"])).unwrap();
        assert_eq!(same.change, ChangeKind::Replaced);
        assert_eq!(
            same.to_string(),
            "replaced: same version 1.0.0, another file (was sha256 bbbbbbbbbbbb…)"
        );
        assert_eq!(state.record("web", seen("1.0.0", 'c', &["fetch"])), None);
    }

    #[test]
    fn the_file_sits_beside_the_policy_and_a_corrupt_one_says_how_to_recover() {
        assert_eq!(
            SeenState::beside(Path::new("reach.toml")),
            Path::new("./.reach/skills-seen.json")
        );
        assert_eq!(
            SeenState::beside(Path::new("/etc/reach/reach.toml")),
            Path::new("/etc/reach/.reach/skills-seen.json")
        );
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("skills-seen.json");
        std::fs::write(&path, "{not json").unwrap();
        let err = SeenState::load(&path).err().expect("refused");
        assert!(err.to_string().contains("delete it to start over"), "{err}");
    }

    #[test]
    fn json_of_a_change_has_the_previous_file_and_the_tool_diff() {
        let change =
            Change::between(&seen("1.0.0", 'a', &["x", "y"]), &seen("2.0.0", 'b', &["x", "z"]));
        let json = serde_json::to_value(&change).unwrap();
        assert_eq!(json["change"], "upgraded");
        assert_eq!(json["version"], "1.0.0");
        assert_eq!(json["sha256"], "a".repeat(64));
        assert_eq!(json["added_tools"], serde_json::json!(["z"]));
        assert_eq!(json["removed_tools"], serde_json::json!(["y"]));
    }
}
