//! Files inside the folders the operator granted.
//!
//! Use `std::fs` as usual: the host maps each granted folder into the sandbox
//! at its host path, read-only or read-write, and the runtime refuses
//! everything else. This module adds what a skill needs around that: paths
//! relative to the host's working directory, the list of grants, and error
//! messages that tell the model (and the operator) what is and isn't granted,
//! and, for a missing path, which names do exist nearby.

use crate::ToolError;
use std::fmt::Write as _;
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
/// operator sees what to add to the table. A missing path becomes
/// `not_found` naming the nearest existing folder above it (inside the
/// grant) and that folder's entries closest to the missing name, so a model
/// that guessed a name can use the real one in its next call.
pub fn io_error(access: Access, path: &Path, err: &io::Error) -> ToolError {
    let verb = match access {
        Access::Read => "read",
        Access::Write => "write to",
    };
    let shown = path.display();
    let grant = match grant_for(path) {
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
        Some(g) => g,
    };
    match err.kind() {
        io::ErrorKind::NotFound => not_found(path, &grant.path),
        io::ErrorKind::PermissionDenied => ToolError::denied(format!(
            "{verb} {shown} was refused by the sandbox (it may leave its grant through a symlink \
             or `..`; {})",
            describe_grants()
        )),
        _ => ToolError::failed(format!("{verb} {shown}: {err}")),
    }
}

/// Most entry names a `NOT_FOUND` message offers.
const MAX_OFFERED: usize = 20;
/// Longest `NOT_FOUND` message the offered names may grow to (a long path
/// alone can exceed it; then no names are offered).
const MAX_MESSAGE: usize = 1_500;
/// Most entries of one folder that are ranked; the rest are only counted, so
/// a huge folder costs one directory scan and no more.
const MAX_RANKED: usize = 10_000;

/// The message for a `path` that does not exist under `grant`: the nearest
/// folder above it that exists, and that folder's entries, the ones most
/// like the missing name first.
fn not_found(path: &Path, grant: &Path) -> ToolError {
    let mut message = format!("{}: no such file or folder", path.display());
    // Only folders inside the grant are listed. The sandbox would refuse the
    // others anyway; this keeps the message from even trying (and keeps a
    // native test run, which has no sandbox, honest). A file where a folder
    // was expected fails like a missing folder, so both climb on.
    let nearest = path.ancestors().skip(1).take_while(|a| a.starts_with(grant)).find_map(|a| {
        match std::fs::read_dir(a) {
            Err(err)
                if matches!(err.kind(), io::ErrorKind::NotFound | io::ErrorKind::NotADirectory) =>
            {
                None
            }
            listing => Some((a, listing)),
        }
    });
    let Some((folder, listing)) = nearest else {
        return ToolError::not_found(message);
    };
    let mut shown = folder.display().to_string();
    if !shown.ends_with('/') {
        shown.push('/');
    }
    let entries = match listing {
        Ok(entries) => entries,
        Err(err) => {
            let _ = write!(message, ". {shown} exists but could not be listed ({err})");
            return ToolError::not_found(message);
        }
    };
    let missing = path
        .strip_prefix(folder)
        .ok()
        .and_then(|rest| rest.components().next())
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .unwrap_or_default();
    let (names, total) = closest_entries(entries, &missing);
    if total == 0 {
        let _ = write!(message, ". {shown} is empty");
        return ToolError::not_found(message);
    }

    const HINT: &str = " — use one of these names, or list the folder";
    let _ = write!(message, ". {shown} has: ");
    // Room for the worst-case tail, so adding it never breaks the bound.
    let tail = format!(" ({total} more){HINT}").len();
    let mut offered = 0;
    for name in names.iter().take(MAX_OFFERED) {
        let sep = if offered == 0 { 0 } else { 2 };
        if message.len() + sep + name.len() + tail > MAX_MESSAGE {
            break;
        }
        if sep > 0 {
            message.push_str(", ");
        }
        message.push_str(name);
        offered += 1;
    }
    if offered == 0 {
        message.truncate(message.len() - ": ".len());
        let _ = write!(message, " {total} entries; list the folder to see them");
        return ToolError::not_found(message);
    }
    if offered < total {
        let _ = write!(message, " ({} more)", total - offered);
    }
    message.push_str(HINT);
    ToolError::not_found(message)
}

/// The entries of a folder, most like `missing` first, folders marked with a
/// trailing `/`; and how many entries there are in all.
fn closest_entries(entries: std::fs::ReadDir, missing: &str) -> (Vec<String>, usize) {
    let mut ranked: Vec<(f64, String)> = Vec::new();
    let mut total = 0;
    for entry in entries.flatten() {
        total += 1;
        if ranked.len() >= MAX_RANKED {
            continue;
        }
        let name = entry.file_name().to_string_lossy().into_owned();
        let score = similarity(&name, missing);
        let is_dir = entry.file_type().is_ok_and(|t| t.is_dir());
        ranked.push((score, if is_dir { format!("{name}/") } else { name }));
    }
    ranked.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
    (ranked.into_iter().map(|(_, name)| name).collect(), total)
}

/// How alike two names are, from 0 to 1. Case and the choice between `-`,
/// `_` and space are ignored (the usual slips when guessing a name), and the
/// names without their extensions count too, so `report.txt` is close to
/// `report.md`.
fn similarity(a: &str, b: &str) -> f64 {
    let key = |s: &str| s.to_lowercase().replace(['-', ' '], "_");
    let stem = |s: &str| {
        Path::new(s).file_stem().map(|t| t.to_string_lossy().into_owned()).unwrap_or_default()
    };
    let (a, b) = (key(a), key(b));
    let whole = strsim::normalized_levenshtein(&a, &b);
    whole.max(strsim::normalized_levenshtein(&stem(&a), &stem(&b)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ErrorCode;
    use std::fs;

    fn tree(files: &[&str]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for f in files {
            let p = dir.path().join(f);
            if let Some(folder) = f.strip_suffix('/') {
                fs::create_dir_all(dir.path().join(folder)).unwrap();
            } else {
                fs::create_dir_all(p.parent().unwrap()).unwrap();
                fs::write(p, "x").unwrap();
            }
        }
        dir
    }

    fn message(dir: &Path, missing: &str) -> String {
        let err = not_found(&dir.join(missing), dir);
        assert_eq!(err.code, ErrorCode::NotFound);
        err.message
    }

    #[test]
    fn a_guessed_file_name_gets_the_parent_folder_with_the_closest_name_first() {
        let dir = tree(&[
            "notes/todo.md",
            "notes/meeting_notes_2024-04-26.md",
            "notes/meeting_notes_2024-05-03.md",
            "notes/archive/old.md",
        ]);
        let root = dir.path().display();
        assert_eq!(
            message(dir.path(), "notes/meeting-notes-2024-05-03.md"),
            format!(
                "{root}/notes/meeting-notes-2024-05-03.md: no such file or folder. {root}/notes/ \
                 has: meeting_notes_2024-05-03.md, meeting_notes_2024-04-26.md, todo.md, archive/ \
                 — use one of these names, or list the folder"
            )
        );
    }

    #[test]
    fn a_missing_folder_climbs_to_the_nearest_existing_one() {
        let dir = tree(&["handbook/benefits/leave.md", "handbook/onboarding.md"]);
        let root = dir.path().display();
        let got = message(dir.path(), "handbook/policies/parental/leave.txt");
        assert!(got.contains(&format!(". {root}/handbook/ has: ")), "{got}");
        assert!(got.contains("benefits/") && got.contains("onboarding.md"), "{got}");
    }

    #[test]
    fn every_entry_of_a_small_folder_is_offered() {
        let dir = tree(&[
            "reports/weekly/2024-W18.md",
            "reports/weekly/2024-W19.md",
            "reports/weekly/2024-W20.md",
        ]);
        let got = message(dir.path(), "reports/weekly/2023-10-01.txt");
        assert!(got.contains("/reports/weekly/ has: "), "{got}");
        for name in ["2024-W18.md", "2024-W19.md", "2024-W20.md"] {
            assert!(got.contains(name), "{got}");
        }
        assert!(!got.contains("more)"), "{got}");
    }

    #[test]
    fn a_file_in_place_of_a_folder_lists_the_folder_holding_it() {
        let dir = tree(&["notes.md", "other.txt"]);
        let got = message(dir.path(), "notes.md/today.md");
        assert!(
            got.contains(&format!(". {}/ has: notes.md, other.txt", dir.path().display())),
            "{got}"
        );
    }

    #[test]
    fn a_folder_of_100_entries_offers_at_most_20_names() {
        let names: Vec<String> = (0..100).map(|i| format!("file-{i:03}.txt")).collect();
        let dir = tree(&names.iter().map(String::as_str).collect::<Vec<_>>());
        let got = message(dir.path(), "file-042.md");
        let listed = got.split(" has: ").nth(1).unwrap().split(" (").next().unwrap();
        assert_eq!(listed.split(", ").count(), 20, "{got}");
        assert!(listed.starts_with("file-042.txt, "), "{got}");
        assert!(got.contains(" (80 more) — "), "{got}");
        assert!(got.len() <= MAX_MESSAGE, "{}", got.len());
    }

    #[test]
    fn long_names_stay_within_the_message_bound() {
        let names: Vec<String> =
            (0..100).map(|i| format!("{i:03}-{}.txt", "x".repeat(200))).collect();
        let dir = tree(&names.iter().map(String::as_str).collect::<Vec<_>>());
        let got = message(dir.path(), "000.txt");
        assert!(got.len() <= MAX_MESSAGE, "{} chars: {got}", got.len());
        let listed = got.split(" has: ").nth(1).unwrap().split(" (").next().unwrap();
        let offered = listed.split(", ").count();
        assert!(offered < 20, "{got}");
        assert!(got.contains(&format!(" ({} more) — ", 100 - offered)), "{got}");
    }

    #[test]
    fn nothing_outside_the_grant_is_listed() {
        let dir = tree(&["secret.md", "granted/"]);
        let grant = dir.path().join("granted");
        let err = not_found(&grant.join("missing/deeper.md"), &grant);
        let shown = grant.display();
        assert_eq!(
            err.message,
            format!("{shown}/missing/deeper.md: no such file or folder. {shown}/ is empty")
        );

        // With the granted folder itself gone there is nothing to list, and
        // the folder around it is not a fallback.
        fs::remove_dir(&grant).unwrap();
        let err = not_found(&grant.join("missing.md"), &grant);
        assert_eq!(err.message, format!("{}/missing.md: no such file or folder", grant.display()));
    }

    #[test]
    fn a_grant_whose_name_is_a_prefix_of_a_neighbour_does_not_reach_it() {
        // `/tmp/x/notes` must not count `/tmp/x/notes-private` as inside.
        let dir = tree(&["notes/a.md", "notes-private/secret.md"]);
        let grant = dir.path().join("notes");
        let err = not_found(&dir.path().join("notes-private/other.md"), &grant);
        assert!(!err.message.contains("secret"), "{}", err.message);
    }
}
