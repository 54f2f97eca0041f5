//! A bundle's files and the digest over them.
//!
//! The manifest lists every file under the bundle folder with its sha256,
//! one `SHA256  PATH` line per file sorted by path (bytewise), the format
//! `sha256sum` writes; the bundle's digest is the sha256 of that text. So
//! any added, removed, renamed or changed file changes the digest, and an
//! operator can reproduce it:
//! `cd skills/NAME && find . -type f | LC_ALL=C sort | cut -c3- | xargs sha256sum | sha256sum`.

use crate::runtime::sha256_hex;
use std::path::{Path, PathBuf};

/// At most this many files in one bundle.
pub const MAX_FILES: usize = 512;
/// At most this many bytes in all of a bundle's files together.
pub const MAX_BYTES: u64 = 64 << 20;
/// At most this many folders deep below the bundle folder.
pub const MAX_DEPTH: usize = 8;

/// One file of a bundle.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BundleFile {
    /// Path relative to the bundle folder, with `/` between parts.
    pub path: String,
    /// The file's sha256, lowercase hex.
    pub sha256: String,
    /// Its size in bytes.
    pub bytes: u64,
}

/// Every file under `dir`, sorted by path, within the limits above. A
/// symbolic link, a name that is not UTF-8, or a limit passed is an error
/// saying which and how to fix it: a link could point outside the bundle,
/// where the digest does not reach.
pub fn list(dir: &Path) -> Result<Vec<BundleFile>, String> {
    let mut files = Vec::new();
    let mut total = 0u64;
    let mut pending = vec![(dir.to_path_buf(), 0usize)];
    while let Some((folder, depth)) = pending.pop() {
        let entries = std::fs::read_dir(&folder)
            .map_err(|e| format!("cannot read {}: {e}", folder.display()))?;
        for entry in entries {
            let entry = entry.map_err(|e| format!("cannot read {}: {e}", folder.display()))?;
            let path = entry.path();
            let rel = relative(dir, &path)?;
            let kind = entry.file_type().map_err(|e| format!("{rel}: {e}"))?;
            if kind.is_symlink() {
                return Err(format!(
                    "{rel} is a symbolic link; a bundle holds only plain files (copy the file in)"
                ));
            }
            if kind.is_dir() {
                if depth + 1 > MAX_DEPTH {
                    return Err(format!(
                        "{rel} is more than {MAX_DEPTH} folders deep; flatten the bundle"
                    ));
                }
                pending.push((path, depth + 1));
                continue;
            }
            if !kind.is_file() {
                return Err(format!("{rel} is not a plain file"));
            }
            if files.len() == MAX_FILES {
                return Err(format!(
                    "the bundle has more than {MAX_FILES} files; remove what it does not need"
                ));
            }
            let bytes = entry.metadata().map_err(|e| format!("{rel}: {e}"))?.len();
            total += bytes;
            if total > MAX_BYTES {
                return Err(format!(
                    "the bundle's files pass {} MiB together (at {rel}); remove what it does not \
                     need",
                    MAX_BYTES >> 20
                ));
            }
            let content = std::fs::read(&path).map_err(|e| format!("cannot read {rel}: {e}"))?;
            files.push(BundleFile { path: rel, sha256: sha256_hex(&content), bytes });
        }
    }
    files.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(files)
}

/// The manifest text (`SHA256  PATH` lines) and its sha256, the bundle's digest.
pub fn digest(files: &[BundleFile]) -> (String, String) {
    let text: String = files.iter().map(|f| format!("{}  {}\n", f.sha256, f.path)).collect();
    let digest = sha256_hex(text.as_bytes());
    (text, digest)
}

fn relative(dir: &Path, path: &Path) -> Result<String, String> {
    let rel: PathBuf = path.strip_prefix(dir).unwrap_or(path).to_path_buf();
    let parts: Option<Vec<&str>> = rel.components().map(|c| c.as_os_str().to_str()).collect();
    parts
        .map(|p| p.join("/"))
        .ok_or_else(|| format!("{} has a name that is not UTF-8; rename it", rel.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_digest_is_sha256sum_over_every_file_sorted() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("scripts")).unwrap();
        std::fs::write(dir.path().join("SKILL.md"), "---\nname: a\n---\n").unwrap();
        std::fs::write(dir.path().join("scripts/run.py"), "print(1)\n").unwrap();
        let files = list(dir.path()).unwrap();
        let paths: Vec<&str> = files.iter().map(|f| f.path.as_str()).collect();
        assert_eq!(paths, ["SKILL.md", "scripts/run.py"]);
        let (text, first) = digest(&files);
        assert_eq!(text.lines().count(), 2);
        assert!(text.ends_with("  scripts/run.py\n"), "{text}");

        std::fs::write(dir.path().join("scripts/run.py"), "print(2)\n").unwrap();
        assert_ne!(digest(&list(dir.path()).unwrap()).1, first, "a changed file changes it");
        std::fs::write(dir.path().join("scripts/run.py"), "print(1)\n").unwrap();
        assert_eq!(digest(&list(dir.path()).unwrap()).1, first);
        std::fs::rename(dir.path().join("scripts/run.py"), dir.path().join("scripts/go.py"))
            .unwrap();
        assert_ne!(digest(&list(dir.path()).unwrap()).1, first, "a rename changes it");
    }

    #[cfg(unix)]
    #[test]
    fn links_and_limits_are_refused_with_the_reason() {
        let dir = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink("/etc/passwd", dir.path().join("passwd")).unwrap();
        assert!(list(dir.path()).unwrap_err().contains("symbolic link"));
        std::fs::remove_file(dir.path().join("passwd")).unwrap();
        for i in 0..=MAX_FILES {
            std::fs::write(dir.path().join(format!("f{i}")), "").unwrap();
        }
        assert!(list(dir.path()).unwrap_err().contains("more than 512 files"));
    }
}
