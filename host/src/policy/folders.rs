//! Folder grants: host directories a skill sees, read-only or read-write.
//!
//! The runtime enforces these by preopening exactly these directories; this
//! module only decides *which* directories, as absolute paths, once, at load.

use std::path::{Component, Path, PathBuf};

/// One host folder granted to a skill.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct FolderGrant {
    /// Absolute path: symlinks resolved when the folder exists, otherwise the
    /// declared path with `.` and `..` removed.
    pub path: PathBuf,
    /// The path as the policy file wrote it, for messages.
    pub declared: String,
    /// The declared path made absolute with `.` and `..` removed, before
    /// symlinks are resolved: where the grant *is*, as opposed to where it
    /// points (`path`). Compared with other grants so that a link someone
    /// planted cannot hide that one grant lies inside another.
    #[serde(skip)]
    pub lexical: PathBuf,
    /// False when the folder did not exist at load time; the grant is kept
    /// (the folder may appear later) and callers can warn about it.
    pub exists: bool,
}

impl FolderGrant {
    /// True when the absolute `path` is this folder or lies inside it,
    /// comparing lexically after removing `.` and `..`.
    ///
    /// This is for explaining decisions, not for enforcing them: a symlink
    /// inside the folder can point anywhere, and only the runtime's preopened
    /// directory handles stop a guest from following it out.
    pub fn allows(&self, path: &Path) -> bool {
        path.is_absolute() && lexical_normalize(path).starts_with(&self.path)
    }
}

/// Resolve one declared folder against the policy file's directory.
///
/// `base_dir` must be absolute. The error is a message for the operator.
pub(super) fn resolve_folder(declared: &str, base_dir: &Path) -> Result<FolderGrant, String> {
    if declared.is_empty() {
        return Err(r#""" is not a folder; write a path such as "./notes""#.into());
    }
    if declared.starts_with('~') {
        // Taken literally this would be a folder named "~" next to the policy
        // file, which is never what was meant.
        return Err(format!("{declared:?}: \"~\" is not expanded; write the full path"));
    }
    let lexical = lexical_normalize(&base_dir.join(declared));
    let (path, exists) = match std::fs::canonicalize(&lexical) {
        Ok(real) => {
            if !real.is_dir() {
                return Err(format!("{declared:?} is a file, not a folder"));
            }
            (real, true)
        }
        Err(error) => {
            tracing::debug!(folder = %lexical.display(), %error, "granted folder is not there");
            (lexical.clone(), false)
        }
    };
    // Paths travel into WASI preopens, messages and JSON as text; a path that
    // cannot be written down exactly is refused rather than mangled.
    if path.to_str().is_none() {
        return Err(format!("{declared:?} resolves to a path that is not valid UTF-8"));
    }
    Ok(FolderGrant { path, declared: declared.to_owned(), lexical, exists })
}

/// Remove `.` and resolve `..` textually; `..` never climbs above the root.
pub(super) fn lexical_normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::Prefix(_) | Component::RootDir => out.push(component.as_os_str()),
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            Component::Normal(name) => out.push(name),
        }
    }
    out
}

/// True when `inner` lies strictly inside `outer`, where each is compared
/// both as declared (`lexical`) and as resolved (`path`): a grant that a
/// symlink makes look elsewhere still counts where it is.
pub(super) fn strictly_inside(inner: &FolderGrant, outer: &FolderGrant) -> bool {
    let inside = |a: &Path, b: &Path| a != b && a.starts_with(b);
    [&inner.lexical, &inner.path]
        .iter()
        .any(|i| [&outer.lexical, &outer.path].iter().any(|o| inside(i, o)))
}

/// A path the host itself depends on — the permission table, the skills
/// folder, the compile cache, the audit logs. No skill may write it: a skill
/// that could would rewrite its own grants, its own code, machine code the
/// host maps, or the record of what it did. A *private* one (the host's
/// `.reach/` folder, the audit logs) no skill may read either.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProtectedPath {
    /// What it is, for messages: "the permission table", "the skills folder".
    pub what: String,
    /// The path as the host uses it; resolved like a grant before comparing.
    pub path: PathBuf,
    /// No skill may read it either ([`ProtectedPath::private`]).
    pub private: bool,
}

impl ProtectedPath {
    /// `what` at `path`: no skill may write it.
    pub fn new(what: impl Into<String>, path: impl Into<PathBuf>) -> Self {
        ProtectedPath { what: what.into(), path: path.into(), private: false }
    }

    /// `what` at `path`: no skill may read or write it. For what the host
    /// keeps of every run — the audit logs (every call's arguments and
    /// results), the memory database (every note), the MCP server's token —
    /// all kept under `.reach/`: a skill granted `read = ["."]` would read
    /// them all, and send them on with any network grant.
    pub fn private(what: impl Into<String>, path: impl Into<PathBuf>) -> Self {
        ProtectedPath { private: true, ..ProtectedPath::new(what, path) }
    }

    /// The path with symlinks resolved as far as it exists, so it compares
    /// with grants (which are resolved the same way at load).
    pub(crate) fn resolved(&self) -> PathBuf {
        let absolute = std::path::absolute(&self.path).unwrap_or_else(|_| self.path.clone());
        real_prefix(&lexical_normalize(&absolute))
    }
}

/// Canonicalise the longest existing ancestor of `path` and append the rest:
/// a cache folder that does not exist yet still compares by its real parent.
fn real_prefix(path: &Path) -> PathBuf {
    let mut missing = Vec::new();
    let mut at = path;
    loop {
        if let Ok(real) = std::fs::canonicalize(at) {
            let mut out = real;
            out.extend(missing.iter().rev());
            return out;
        }
        match (at.file_name(), at.parent()) {
            (Some(name), Some(parent)) => {
                missing.push(name.to_owned());
                at = parent;
            }
            _ => return path.to_owned(),
        }
    }
}

/// True when writing inside `grant` could touch `protected`: the grant
/// contains it, or lies inside it.
pub(super) fn touches(grant: &Path, protected: &Path) -> bool {
    protected.starts_with(grant) || grant.starts_with(protected)
}

/// Drop repeated folders, and drop read grants for folders that are also
/// writable: write access includes reading, and one preopen per folder keeps
/// the permission the guest sees unambiguous.
pub(super) fn split_read_write(
    read: Vec<FolderGrant>,
    write: Vec<FolderGrant>,
) -> (Vec<FolderGrant>, Vec<FolderGrant>) {
    let write = dedupe(write);
    let read =
        dedupe(read).into_iter().filter(|r| !write.iter().any(|w| w.path == r.path)).collect();
    (read, write)
}

fn dedupe(folders: Vec<FolderGrant>) -> Vec<FolderGrant> {
    let mut unique: Vec<FolderGrant> = Vec::with_capacity(folders.len());
    for folder in folders {
        if !unique.iter().any(|u| u.path == folder.path) {
            unique.push(folder);
        }
    }
    unique
}

#[cfg(test)]
mod tests {
    use super::*;

    /// (granted folder, requested path, allowed?)
    const ALLOWS: &[(&str, &str, bool)] = &[
        ("/data", "/data", true),
        ("/data", "/data/", true),
        ("/data", "/data/x", true),
        ("/data", "/data/x/y/z.txt", true),
        ("/data", "/data/./x", true),
        ("/data", "/data/x/../y", true),
        ("/data", "/data/x/../../data/y", true),
        ("/data", "/data/..", false),
        ("/data", "/data/../etc/passwd", false),
        ("/data", "/data/x/../../etc", false),
        ("/data", "/data2", false),
        ("/data", "/data2/x", false),
        ("/data", "/dat", false),
        ("/data", "/", false),
        ("/data", "/etc/passwd", false),
        ("/data", "data/x", false),
        ("/data", "./data", false),
        ("/data", "", false),
        ("/data", "/../data/x", true),
        ("/data", "//data/x", true),
        ("/data/notes", "/data", false),
        ("/data/notes", "/data/notes/a", true),
        ("/data/notes", "/data/notes-old/a", false),
        ("/", "/anything/at/all", true),
        ("/", "/", true),
    ];

    #[test]
    fn allows_table() {
        for &(folder, path, expected) in ALLOWS {
            let grant = FolderGrant {
                path: PathBuf::from(folder),
                declared: folder.into(),
                lexical: PathBuf::from(folder),
                exists: true,
            };
            assert_eq!(grant.allows(Path::new(path)), expected, "{folder} allows {path:?}");
        }
    }

    /// (path, lexically normalised)
    const NORMALIZE: &[(&str, &str)] = &[
        ("/a/b", "/a/b"),
        ("/a/./b", "/a/b"),
        ("/a/b/..", "/a"),
        ("/a/b/../..", "/"),
        ("/a/b/../../../..", "/"),
        ("/a//b/", "/a/b"),
        ("/a/../b/./c/..", "/b"),
        ("a/../../b", "b"),
    ];

    #[test]
    fn normalize_table() {
        for &(path, expected) in NORMALIZE {
            assert_eq!(lexical_normalize(Path::new(path)), Path::new(expected), "{path}");
        }
    }

    fn real(dir: &tempfile::TempDir) -> PathBuf {
        std::fs::canonicalize(dir.path()).expect("canonicalize tempdir")
    }

    #[test]
    fn relative_folders_resolve_against_the_base_dir() {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::create_dir_all(dir.path().join("docs/sub")).expect("mkdir");
        let base = real(&dir);
        let cases = [
            ("./docs", base.join("docs")),
            ("docs", base.join("docs")),
            ("docs/", base.join("docs")),
            ("./docs/sub/..", base.join("docs")),
            ("docs/../docs/./sub", base.join("docs/sub")),
            (".", base.clone()),
        ];
        for (declared, expected) in cases {
            let grant = resolve_folder(declared, &base).expect(declared);
            assert_eq!(grant.path, expected, "{declared}");
            assert!(grant.exists, "{declared}");
            assert_eq!(grant.declared, declared);
        }
    }

    #[test]
    fn missing_folders_are_kept_normalised_and_flagged() {
        let dir = tempfile::tempdir().expect("tempdir");
        let base = real(&dir);
        let grant = resolve_folder("./later/../notes/./", &base).expect("resolve");
        assert_eq!(grant.path, base.join("notes"));
        assert!(!grant.exists);
        let grant = resolve_folder("/definitely/not/here/..", &base).expect("resolve");
        assert_eq!(grant.path, Path::new("/definitely/not"));
        assert!(!grant.exists);
    }

    #[cfg(unix)]
    #[test]
    fn symlinked_folders_resolve_to_the_real_folder() {
        let dir = tempfile::tempdir().expect("tempdir");
        let base = real(&dir);
        std::fs::create_dir(base.join("target")).expect("mkdir");
        std::os::unix::fs::symlink(base.join("target"), base.join("link")).expect("symlink");
        let grant = resolve_folder("link", &base).expect("resolve");
        assert_eq!(grant.path, base.join("target"));
        assert!(grant.exists);
        // `..` is resolved in the text first: link/.. is the base, not the
        // symlink target's parent.
        let grant = resolve_folder("link/..", &base).expect("resolve");
        assert_eq!(grant.path, base);
    }

    #[cfg(unix)]
    #[test]
    fn non_utf8_targets_are_refused() {
        use std::os::unix::ffi::OsStrExt;
        let dir = tempfile::tempdir().expect("tempdir");
        let base = real(&dir);
        let odd = base.join(std::ffi::OsStr::from_bytes(b"caf\xe9"));
        std::fs::create_dir(&odd).expect("mkdir");
        std::os::unix::fs::symlink(&odd, base.join("cafe")).expect("symlink");
        let err = resolve_folder("cafe", &base).expect_err("non-UTF-8");
        insta::assert_snapshot!(err, @r#""cafe" resolves to a path that is not valid UTF-8"#);
    }

    #[test]
    fn unusable_paths_are_refused() {
        let dir = tempfile::tempdir().expect("tempdir");
        let base = real(&dir);
        std::fs::write(base.join("notes.txt"), "x").expect("write");
        let err = |p: &str| resolve_folder(p, &base).expect_err(p);
        insta::assert_snapshot!(err(""), @r#""" is not a folder; write a path such as "./notes""#);
        insta::assert_snapshot!(err("~/docs"), @r#""~/docs": "~" is not expanded; write the full path"#);
        insta::assert_snapshot!(err("./notes.txt"), @r#""./notes.txt" is a file, not a folder"#);
    }

    #[test]
    fn writable_folders_are_not_also_listed_read_only() {
        let grant = |p: &str| FolderGrant {
            path: p.into(),
            declared: p.into(),
            lexical: p.into(),
            exists: true,
        };
        let read = vec![grant("/a"), grant("/b"), grant("/a"), grant("/c")];
        let write = vec![grant("/b"), grant("/d"), grant("/d")];
        let (read, write) = split_read_write(read, write);
        let paths = |v: &[FolderGrant]| v.iter().map(|g| g.path.clone()).collect::<Vec<_>>();
        assert_eq!(paths(&read), [PathBuf::from("/a"), PathBuf::from("/c")]);
        assert_eq!(paths(&write), [PathBuf::from("/b"), PathBuf::from("/d")]);
    }
}
