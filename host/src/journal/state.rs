//! What a path held at one moment — the prior state a journal keeps, and
//! the fingerprint that tells later whether someone changed it since —
//! read and put back through a grant's directory handle (cap-std), so a
//! symbolic link inside a grant can never lead the journal outside it.

use cap_std::fs::Dir;
use serde::{Deserialize, Serialize};
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};

/// A path's state, as kept in a journal.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum State {
    /// Nothing was there.
    Missing,
    /// A file: its content (a blob, by its blake3 hash) and permissions.
    File {
        /// The blob's name (blake3 of the content, hex).
        blob: String,
        /// Its size in bytes.
        size: u64,
        /// Unix permission bits.
        mode: u32,
    },
    /// A folder, and (when it was about to be moved or removed as a whole)
    /// what it held, by name.
    Dir {
        /// Unix permission bits.
        mode: u32,
        /// Its entries, when kept; `None` when only the folder itself is.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        entries: Option<Vec<(String, State)>>,
    },
    /// A symbolic link and where it points (never followed).
    Symlink {
        /// The link's text.
        target: String,
    },
}

/// How a path is now, cheaply compared with how a run left it: kind and
/// content hash (files), so undo can tell a path someone else changed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Fingerprint {
    /// Nothing there.
    Missing,
    /// A file with this blake3 hash and size.
    File {
        /// blake3 of the content, hex.
        hash: String,
        /// Size in bytes.
        size: u64,
    },
    /// A folder.
    Dir,
    /// A link to this.
    Symlink {
        /// The link's text.
        target: String,
    },
}

/// Where blobs go, and how many bytes they may still take.
pub(crate) trait BlobSink {
    /// Keep `bytes` (already hashed to `hash`); `Err` when the budget is spent.
    fn keep(&mut self, hash: &str, bytes: &[u8]) -> io::Result<()>;
}

#[cfg(unix)]
fn mode_of(meta: &cap_std::fs::Metadata) -> u32 {
    use cap_std::fs::PermissionsExt;
    meta.permissions().mode() & 0o7777
}

#[cfg(not(unix))]
fn mode_of(meta: &cap_std::fs::Metadata) -> u32 {
    if meta.permissions().readonly() { 0o444 } else { 0o644 }
}

fn not_found(err: &io::Error) -> bool {
    err.kind() == io::ErrorKind::NotFound
}

/// The state of `rel` under `dir` now, its file contents handed to `blobs`;
/// a folder's entries too when `deep`.
pub(crate) fn capture(
    dir: &Dir,
    rel: &Path,
    deep: bool,
    blobs: &mut dyn BlobSink,
) -> io::Result<State> {
    let meta = match dir.symlink_metadata(rel) {
        Ok(meta) => meta,
        Err(err) if not_found(&err) => return Ok(State::Missing),
        Err(err) => return Err(err),
    };
    let kind = meta.file_type();
    if kind.is_symlink() {
        let target = dir.read_link_contents(rel)?;
        return Ok(State::Symlink { target: target.to_string_lossy().into_owned() });
    }
    if kind.is_dir() {
        let entries = if deep {
            let mut entries = Vec::new();
            for entry in dir.read_dir(rel)? {
                let name = entry?.file_name().to_string_lossy().into_owned();
                entries.push((name.clone(), capture(dir, &rel.join(&name), true, blobs)?));
            }
            entries.sort_by(|a, b| a.0.cmp(&b.0));
            Some(entries)
        } else {
            None
        };
        return Ok(State::Dir { mode: mode_of(&meta), entries });
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    dir.open(rel)?.read_to_end(&mut bytes)?;
    let blob = blake3::hash(&bytes).to_hex().to_string();
    blobs.keep(&blob, &bytes)?;
    Ok(State::File { blob, size: bytes.len() as u64, mode: mode_of(&meta) })
}

/// How `rel` under `dir` is now.
pub(crate) fn fingerprint(dir: &Dir, rel: &Path) -> io::Result<Fingerprint> {
    let meta = match dir.symlink_metadata(rel) {
        Ok(meta) => meta,
        Err(err) if not_found(&err) => return Ok(Fingerprint::Missing),
        Err(err) => return Err(err),
    };
    let kind = meta.file_type();
    if kind.is_symlink() {
        let target = dir.read_link_contents(rel)?.to_string_lossy().into_owned();
        return Ok(Fingerprint::Symlink { target });
    }
    if kind.is_dir() {
        return Ok(Fingerprint::Dir);
    }
    let mut hasher = blake3::Hasher::new();
    let mut file = dir.open(rel)?;
    let mut buf = vec![0u8; 64 * 1024];
    let mut size = 0u64;
    loop {
        let n = file.read(&mut buf)?;
        if n == 0 {
            break;
        }
        size += n as u64;
        hasher.update(&buf[..n]);
    }
    Ok(Fingerprint::File { hash: hasher.finalize().to_hex().to_string(), size })
}

/// Make `rel` under `dir` be `state` again, reading file contents from
/// `blobs` (a folder of blobs by name). A file is written aside and renamed
/// into place, so a reader never sees half of it.
pub(crate) fn restore(dir: &Dir, rel: &Path, state: &State, blobs: &Path) -> io::Result<()> {
    match state {
        State::Missing => remove(dir, rel),
        State::Dir { mode, entries } => {
            match dir.symlink_metadata(rel) {
                Ok(meta) if meta.is_dir() => {}
                Ok(_) => {
                    remove(dir, rel)?;
                    dir.create_dir(rel)?;
                }
                Err(err) if not_found(&err) => dir.create_dir(rel)?,
                Err(err) => return Err(err),
            }
            if let Some(entries) = entries {
                // Whatever the folder holds now that it did not is taken away.
                let keep: Vec<&str> = entries.iter().map(|(n, _)| n.as_str()).collect();
                for entry in dir.read_dir(rel)? {
                    let name = entry?.file_name();
                    if !keep.iter().any(|k| std::ffi::OsStr::new(k) == name) {
                        remove(dir, &rel.join(name))?;
                    }
                }
                for (name, inner) in entries {
                    restore(dir, &rel.join(name), inner, blobs)?;
                }
            }
            set_mode(dir, rel, *mode)
        }
        State::File { blob, mode, .. } => {
            let bytes = std::fs::read(blobs.join(blob))?;
            if blake3::hash(&bytes).to_hex().as_str() != blob {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidData,
                    format!(
                        "the journal's copy {blob} was changed; {} is not restored",
                        rel.display()
                    ),
                ));
            }
            if let Ok(meta) = dir.symlink_metadata(rel)
                && meta.is_dir()
            {
                remove(dir, rel)?;
            }
            let aside = aside_name(rel);
            {
                let mut file = dir.create(&aside)?;
                file.write_all(&bytes)?;
                file.sync_all()?;
            }
            set_mode(dir, &aside, *mode)?;
            dir.rename(&aside, dir, rel)
        }
        State::Symlink { target } => {
            remove(dir, rel)?;
            symlink(dir, target, rel)
        }
    }
}

#[cfg(unix)]
fn symlink(dir: &Dir, target: &str, rel: &Path) -> io::Result<()> {
    dir.symlink(target, rel)
}

#[cfg(not(unix))]
fn symlink(_: &Dir, _: &str, rel: &Path) -> io::Result<()> {
    Err(io::Error::other(format!("{}: links are not restored on this system", rel.display())))
}

fn aside_name(rel: &Path) -> PathBuf {
    let name = rel.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    rel.with_file_name(format!(".{name}.reach-undo.{}", std::process::id()))
}

fn remove(dir: &Dir, rel: &Path) -> io::Result<()> {
    match dir.symlink_metadata(rel) {
        Ok(meta) if meta.is_dir() => dir.remove_dir_all(rel),
        Ok(_) => dir.remove_file(rel),
        Err(err) if not_found(&err) => Ok(()),
        Err(err) => Err(err),
    }
}

#[cfg(unix)]
fn set_mode(dir: &Dir, rel: &Path, mode: u32) -> io::Result<()> {
    use cap_std::fs::{Permissions, PermissionsExt};
    dir.set_permissions(rel, Permissions::from_mode(mode))
}

#[cfg(not(unix))]
fn set_mode(_: &Dir, _: &Path, _: u32) -> io::Result<()> {
    Ok(())
}
