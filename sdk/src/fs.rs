//! Files inside the folders the operator granted.
//!
//! Use `std::fs` as usual: the host maps each granted folder into the sandbox
//! at its host path, read-only or read-write, and the runtime refuses
//! everything else. This module adds what a skill needs around that: paths
//! relative to the host's working directory, the list of grants, and error
//! messages that tell the model (and the operator) what is and isn't granted.

use crate::ToolError;
use std::io;
use std::path::{Component, Path, PathBuf};

/// A folder the permission table grants to this skill.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Grant {
    /// The folder, as an absolute host path.
    pub path: PathBuf,
    /// Whether the skill may create and change files in it.
    pub writable: bool,
}

/// The folders granted to this skill, longest path first (so the first
/// grant that contains a path is the one the runtime applies).
pub fn grants() -> Vec<Grant> {
    use wasi::filesystem::types::DescriptorFlags;
    let mut grants: Vec<Grant> = wasi::filesystem::preopens::get_directories()
        .into_iter()
        .map(|(dir, path)| Grant {
            writable: dir
                .get_flags()
                .map(|f| f.contains(DescriptorFlags::MUTATE_DIRECTORY))
                .unwrap_or(false),
            path: PathBuf::from(path),
        })
        .collect();
    grants.sort_by_key(|g| std::cmp::Reverse(g.path.as_os_str().len()));
    grants
}

/// The grant that contains `path` (an absolute, normalised path), if any.
pub fn grant_for(path: &Path) -> Option<Grant> {
    grants().into_iter().find(|g| path.starts_with(&g.path))
}

/// Turn a path from the model into an absolute, lexically normalised path:
/// relative paths are relative to the host's working directory.
pub fn resolve(path: &str) -> PathBuf {
    let raw = Path::new(path);
    let joined = if raw.is_absolute() {
        raw.to_path_buf()
    } else {
        let cwd = wasi::cli::environment::initial_cwd().unwrap_or_else(|| "/".to_owned());
        Path::new(&cwd).join(raw)
    };
    normalise(&joined)
}

/// Remove `.` and resolve `..` lexically. The runtime still confines every
/// access to the grants (symlinks included); this only makes messages exact.
fn normalise(path: &Path) -> PathBuf {
    let mut out = PathBuf::from("/");
    for part in path.components() {
        match part {
            Component::ParentDir => {
                out.pop();
            }
            Component::Normal(p) => out.push(p),
            Component::RootDir | Component::CurDir | Component::Prefix(_) => {}
        }
    }
    out
}

/// What a skill was doing with a path, for error messages.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    /// Reading a file or listing a folder.
    Read,
    /// Creating or changing a file.
    Write,
}

/// A readable summary of the grants: `readable: /a, /b; writable: /c`.
pub fn describe_grants() -> String {
    let grants = grants();
    let list = |writable: bool| {
        let v: Vec<String> = grants
            .iter()
            .filter(|g| g.writable == writable)
            .map(|g| g.path.display().to_string())
            .collect();
        if v.is_empty() { "none".to_owned() } else { v.join(", ") }
    };
    format!("readable: {}; writable: {}", list(false), list(true))
}

/// Explain an I/O error on `path` as a [`ToolError`] with the right code.
///
/// A path outside every grant, or a write under a read-only grant, becomes
/// `denied` with the grants listed, so the model stops retrying and the
/// operator sees what to add to the table.
pub fn io_error(access: Access, path: &Path, err: &io::Error) -> ToolError {
    let verb = match access {
        Access::Read => "read",
        Access::Write => "write to",
    };
    let shown = path.display();
    match grant_for(path) {
        None => {
            return ToolError::denied(format!(
                "{verb} {shown} is not granted ({})",
                describe_grants()
            ));
        }
        Some(g) if access == Access::Write && !g.writable => {
            return ToolError::denied(format!(
                "{verb} {shown} is not granted: {} is read-only ({})",
                g.path.display(),
                describe_grants()
            ));
        }
        Some(_) => {}
    }
    match err.kind() {
        io::ErrorKind::NotFound => ToolError::not_found(format!("{shown}: no such file or folder")),
        io::ErrorKind::PermissionDenied => ToolError::denied(format!(
            "{verb} {shown} was refused by the sandbox (it may leave its grant through a symlink or `..`; {})",
            describe_grants()
        )),
        _ => ToolError::failed(format!("{verb} {shown}: {err}")),
    }
}
