//! Reading one of a bundle's files as it was when the bundle loaded: only
//! a path its manifest lists, and only bytes whose sha256 is the one the
//! manifest holds. A file changed, replaced by a link or added since the
//! scan is refused, so what the model reads (`skills__read`) and what a
//! script runner executes is what the digest — and a pin on it — covers.

use super::{Bundle, BundleFile};
use crate::runtime::sha256_hex;
use std::io::Read;

/// Largest file `skills__read` returns whole, in bytes; a longer one is
/// kept in the workbench by the harness like any large result.
pub const MAX_READ: u64 = 1 << 20;

/// Why a bundled file cannot be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReadError {
    /// The manifest does not list it.
    #[error("`{path}` is not a file of the {skill} skill; its files: {listed}")]
    NotListed {
        /// The bundle.
        skill: String,
        /// The path asked for.
        path: String,
        /// The manifest's paths, shortened.
        listed: String,
    },
    /// It changed since the bundle loaded, or cannot be read.
    #[error(
        "`{path}` of the {skill} skill {why}; nothing was read (reload the skills to load the new version)"
    )]
    Changed {
        /// The bundle.
        skill: String,
        /// The path.
        path: String,
        /// What is wrong.
        why: String,
    },
    /// Not UTF-8 text.
    #[error(
        "`{path}` of the {skill} skill is not text ({bytes} bytes); only text files can be read"
    )]
    Binary {
        /// The bundle.
        skill: String,
        /// The path.
        path: String,
        /// Its size.
        bytes: u64,
    },
    /// Over [`MAX_READ`].
    #[error("`{path}` of the {skill} skill is {bytes} bytes; at most {MAX_READ} are read")]
    TooLarge {
        /// The bundle.
        skill: String,
        /// The path.
        path: String,
        /// Its size.
        bytes: u64,
    },
}

/// The manifest entry for `path` (a leading `./` is allowed).
pub fn listed<'b>(bundle: &'b Bundle, path: &str) -> Option<&'b BundleFile> {
    let path = path.trim_start_matches("./");
    bundle.files.iter().find(|f| f.path == path)
}

/// The bytes of `path`, checked against the manifest.
pub fn bytes(bundle: &Bundle, path: &str) -> Result<Vec<u8>, ReadError> {
    let Some(file) = listed(bundle, path) else {
        let mut listed: Vec<&str> = bundle.files.iter().map(|f| f.path.as_str()).take(40).collect();
        if bundle.files.len() > listed.len() {
            listed.push("…");
        }
        return Err(ReadError::NotListed {
            skill: bundle.name.clone(),
            path: path.to_owned(),
            listed: listed.join(", "),
        });
    };
    let changed = |why: String| ReadError::Changed {
        skill: bundle.name.clone(),
        path: file.path.clone(),
        why,
    };
    if file.bytes > MAX_READ {
        return Err(ReadError::TooLarge {
            skill: bundle.name.clone(),
            path: file.path.clone(),
            bytes: file.bytes,
        });
    }
    let full = bundle.dir.join(&file.path);
    // Not following a link: the manifest never lists one, and one put in
    // since could point anywhere.
    let meta =
        std::fs::symlink_metadata(&full).map_err(|e| changed(format!("cannot be read: {e}")))?;
    if !meta.is_file() {
        return Err(changed("is no longer a plain file".to_owned()));
    }
    let mut content = Vec::with_capacity(file.bytes as usize);
    std::fs::File::open(&full)
        .and_then(|f| f.take(MAX_READ + 1).read_to_end(&mut content))
        .map_err(|e| changed(format!("cannot be read: {e}")))?;
    if sha256_hex(&content) != file.sha256 {
        return Err(changed("changed since the bundle was loaded (its sha256 differs)".to_owned()));
    }
    Ok(content)
}

/// The text of `path`, checked against the manifest.
pub fn text(bundle: &Bundle, path: &str) -> Result<String, ReadError> {
    let content = bytes(bundle, path)?;
    let size = content.len() as u64;
    String::from_utf8(content).map_err(|_| ReadError::Binary {
        skill: bundle.name.clone(),
        path: path.trim_start_matches("./").to_owned(),
        bytes: size,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bundle(dir: &std::path::Path) -> Bundle {
        std::fs::create_dir_all(dir.join("references")).unwrap();
        std::fs::write(
            dir.join("SKILL.md"),
            format!(
                "---\nname: {}\ndescription: Reads.\n---\nBody\n",
                dir.file_name().unwrap().to_str().unwrap()
            ),
        )
        .unwrap();
        std::fs::write(dir.join("references/guide.md"), "# Guide\n").unwrap();
        std::fs::write(dir.join("references/logo.bin"), [0xff, 0xfe, 0x00]).unwrap();
        super::super::load(dir).unwrap()
    }

    #[test]
    fn only_listed_unchanged_text_files_are_read() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("reader");
        let b = bundle(&dir);
        assert_eq!(text(&b, "references/guide.md").unwrap(), "# Guide\n");
        assert_eq!(text(&b, "./references/guide.md").unwrap(), "# Guide\n");
        let err = text(&b, "../reader/SKILL.md").unwrap_err();
        assert!(matches!(err, ReadError::NotListed { .. }), "{err}");
        assert!(err.to_string().contains("references/guide.md"), "lists the files: {err}");
        assert!(matches!(text(&b, "references/logo.bin").unwrap_err(), ReadError::Binary { .. }));
        std::fs::write(dir.join("references/guide.md"), "# Guide, rewritten\n").unwrap();
        let err = text(&b, "references/guide.md").unwrap_err();
        assert!(matches!(err, ReadError::Changed { .. }), "{err}");
        std::fs::write(dir.join("references/new.md"), "added later").unwrap();
        assert!(matches!(text(&b, "references/new.md").unwrap_err(), ReadError::NotListed { .. }));
    }
}
