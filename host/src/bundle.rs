//! Agent Skills bundles: a folder holding `SKILL.md` (YAML frontmatter with
//! `name` and `description`, then Markdown instructions) and optionally
//! `scripts/`, `references/`, `assets/` and, for this host, `tools/*.wasm`.
//!
//! This module reads and checks a bundle; it runs nothing. What it gives
//! the rest of the host:
//!
//! - the skill's **name is its folder's name**, the one the table grants,
//!   so a bundle cannot take another skill's grants by what its frontmatter
//!   says (a differing `name:` is a warning, as the format's client
//!   guidance asks);
//! - the **digest** over every file ([`files`](crate::bundle::files)), which `[skills.NAME]
//!   sha256` pins, so any changed file is an upgrade;
//! - every rule of the specification as a [`Problem`](crate::bundle::Problem), [`Severity::Broken`](crate::bundle::Severity::Broken)
//!   where the skill cannot work and a warning elsewhere ([`validate`](crate::bundle::validate)).

pub mod files;
pub mod frontmatter;
pub mod read;
pub mod validate;

pub use files::BundleFile;
pub use validate::{Problem, Severity};

use crate::policy::Requests;
use frontmatter::Node;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The file that makes a folder a bundle.
pub const SKILL_MD: &str = "SKILL.md";

/// Longest `SKILL.md` read, in bytes (the specification recommends a body
/// under 5,000 tokens; this only keeps a runaway file out of memory).
pub const MAX_SKILL_MD: u64 = 1 << 20;

/// A bundle that loads: what its frontmatter says, its instructions and
/// its files.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Bundle {
    /// The skill's name: its folder's name.
    pub name: String,
    /// The bundle folder.
    pub dir: PathBuf,
    /// What it does and when to use it (frontmatter `description`, trimmed).
    pub description: String,
    /// Frontmatter `license`, if given.
    pub license: Option<String>,
    /// Frontmatter `compatibility`, if given.
    pub compatibility: Option<String>,
    /// Frontmatter `allowed-tools`, if given. Shown, never obeyed: only the
    /// permission table grants anything.
    pub allowed_tools: Option<String>,
    /// Frontmatter `metadata`, text values only.
    pub metadata: BTreeMap<String, String>,
    /// The whole frontmatter as JSON, every field as written (scalars as
    /// strings): what the MCP Skills extension serves as `frontmatter`.
    pub frontmatter: serde_json::Map<String, serde_json::Value>,
    /// What it asks the table for (`metadata` keys `agent-reach.read`, `.write`, `.net`,
    /// `.credentials`, `.env`). Shown beside the grants; grants nothing.
    pub requests: Requests,
    /// The Markdown after the frontmatter, trimmed: the instructions.
    pub body: String,
    /// Every file, sorted by path.
    pub files: Vec<BundleFile>,
    /// sha256 over the files' manifest ([`files::digest`]).
    pub sha256: String,
    /// Warnings (a bundle with a broken problem does not load).
    pub problems: Vec<Problem>,
}

/// Why a bundle does not load.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BundleError {
    /// Everything wrong with it, the broken problems first.
    pub problems: Vec<Problem>,
}

impl std::fmt::Display for BundleError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let broken: Vec<&str> = self
            .problems
            .iter()
            .filter(|p| p.severity == Severity::Broken)
            .map(|p| p.message.as_str())
            .collect();
        f.write_str(&broken.join("; "))
    }
}

impl std::error::Error for BundleError {}

/// Whether `dir` is a bundle folder (it holds `SKILL.md`).
pub fn is_bundle(dir: &Path) -> bool {
    dir.join(SKILL_MD).is_file()
}

/// Read and check the bundle in `dir`.
pub fn load(dir: &Path) -> Result<Bundle, BundleError> {
    let broken = |message: String| BundleError {
        problems: vec![Problem { severity: Severity::Broken, message }],
    };
    let folder = dir.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    if let Some(why) = validate::folder_name(&folder) {
        return Err(broken(why));
    }
    let skill_md = dir.join(SKILL_MD);
    let size = std::fs::symlink_metadata(&skill_md)
        .map_err(|e| broken(format!("cannot read {SKILL_MD}: {e}")))?;
    if !size.is_file() {
        return Err(broken(format!("{SKILL_MD} is not a plain file")));
    }
    if size.len() > MAX_SKILL_MD {
        return Err(broken(format!(
            "{SKILL_MD} is {} KiB; at most {} KiB are read (move detail into references/)",
            size.len() >> 10,
            MAX_SKILL_MD >> 10
        )));
    }
    let content =
        std::fs::read(&skill_md).map_err(|e| broken(format!("cannot read {SKILL_MD}: {e}")))?;
    let content =
        String::from_utf8(content).map_err(|_| broken(format!("{SKILL_MD} is not UTF-8 text")))?;
    let split = frontmatter::split(&content).map_err(broken)?;
    let mut problems = validate::check(&split.fields, &folder);
    let metadata = match split.fields.get("metadata") {
        None => BTreeMap::new(),
        Some(Node::Map(map)) => text_values(map, &mut problems),
        Some(_) => {
            problems.push(Problem {
                severity: Severity::Warning,
                message: "`metadata` must be a mapping of keys to text; ignored".into(),
            });
            BTreeMap::new()
        }
    };
    let (requests, warnings) = Requests::from_metadata(&metadata);
    problems.extend(
        warnings.into_iter().map(|message| Problem { severity: Severity::Warning, message }),
    );
    let files = files::list(dir).map_err(broken)?;
    if problems.iter().any(|p| p.severity == Severity::Broken) {
        problems.sort_by_key(|p| p.severity != Severity::Broken);
        return Err(BundleError { problems });
    }
    let (_, sha256) = files::digest(&files);
    let text =
        |key: &str| split.fields.get(key).and_then(Node::as_text).map(|t| t.trim().to_owned());
    Ok(Bundle {
        name: folder,
        dir: dir.to_owned(),
        description: text("description").unwrap_or_default(),
        license: text("license"),
        compatibility: text("compatibility"),
        allowed_tools: text("allowed-tools"),
        metadata,
        frontmatter: split.fields.iter().map(|(k, v)| (k.clone(), v.to_json())).collect(),
        requests,
        body: split.body,
        files,
        sha256,
        problems,
    })
}

/// `metadata` as text values; a nested value is a warning and left out.
fn text_values(
    map: &BTreeMap<String, Node>,
    problems: &mut Vec<Problem>,
) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for (key, value) in map {
        match value.as_text() {
            Some(text) => {
                out.insert(key.clone(), text.to_owned());
            }
            None => problems.push(Problem {
                severity: Severity::Warning,
                message: format!(
                    "`metadata.{key}` is not text (the specification maps keys to strings); ignored"
                ),
            }),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bundle(name: &str, skill_md: &str) -> (tempfile::TempDir, PathBuf) {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join(name);
        std::fs::create_dir_all(dir.join("references")).unwrap();
        std::fs::write(dir.join(SKILL_MD), skill_md).unwrap();
        std::fs::write(dir.join("references/format.md"), "# Format\n").unwrap();
        (root, dir)
    }

    #[test]
    fn a_bundle_loads_with_its_fields_body_and_files() {
        let (_root, dir) = bundle(
            "incident-triage",
            "---\nname: incident-triage\ndescription: Triage an incident from its logs.\n\
             license: Apache-2.0\nallowed-tools: logs.top\nmetadata:\n  version: \"1.2\"\n---\n\n\
             # Triage\n\nRead the logs first.\n",
        );
        let b = load(&dir).unwrap();
        assert_eq!(b.name, "incident-triage");
        assert_eq!(b.description, "Triage an incident from its logs.");
        assert_eq!(b.license.as_deref(), Some("Apache-2.0"));
        assert_eq!(b.allowed_tools.as_deref(), Some("logs.top"));
        assert_eq!(b.metadata["version"], "1.2");
        assert!(b.requests.is_empty());
        assert_eq!(b.body, "# Triage\n\nRead the logs first.");
        assert_eq!(b.files.len(), 2);
        assert_eq!(b.sha256.len(), 64);
        assert!(b.problems.is_empty(), "{:?}", b.problems);
    }

    #[test]
    fn metadata_under_the_prefix_is_what_the_bundle_requests() {
        let (_root, dir) = bundle(
            "triage",
            "---\nname: triage\ndescription: d\nmetadata:\n  agent-reach.read: ./logs\n  \
             agent-reach.net: \"api.example.com, docs.rs\"\n  agent-reach.hosts: x\n---\n",
        );
        let b = load(&dir).unwrap();
        assert_eq!(b.requests.read, ["./logs"]);
        assert_eq!(b.requests.net, ["api.example.com", "docs.rs"]);
        assert!(
            b.problems.iter().any(|p| p.message.contains("agent-reach.hosts")),
            "{:?}",
            b.problems
        );
    }

    #[test]
    fn the_folder_names_the_skill_whatever_the_frontmatter_says() {
        let (_root, dir) = bundle("triage", "---\nname: files\ndescription: d\n---\n");
        let b = load(&dir).unwrap();
        assert_eq!(b.name, "triage");
        assert!(b.problems.iter().any(|p| p.message.contains("`name: files`")), "{:?}", b.problems);
    }

    #[test]
    fn a_bundle_that_cannot_work_says_why() {
        for (folder, md, says) in [
            ("a", "---\nname: a\n---\n", "no `description`"),
            ("a", "---\nname: a\ndescription: [x]\n---\n", "flow style"),
            ("a", "no frontmatter\n", "must start"),
            ("Bad_Name", "---\nname: a\ndescription: d\n---\n", "rename the folder"),
        ] {
            let (_root, dir) = bundle(folder, md);
            let err = load(&dir).unwrap_err().to_string();
            assert!(err.contains(says), "{md:?}: {err}");
        }
    }
}
