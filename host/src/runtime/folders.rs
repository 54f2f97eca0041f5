//! Granted folders, opened once and shared by every call.
//!
//! Opening and closing a directory for each call was the largest system
//! cost of a call (two syscalls with a path walk). Here each granted folder
//! is opened once; a call checks with one `stat` that the path still names
//! the same directory (a folder deleted and made again must not leave skills
//! writing into the deleted one) and hands the guest a clone of the handle.
//!
//! The guest gets the handles through our own `get-directories`, which
//! shadows wasmtime-wasi's (see [`add_to_linker`]). Every access below a
//! handle is still confined by wasmtime-wasi's capability-based primitives:
//! `..` and symlinks cannot leave it, and read-only grants cannot write.

use super::state::StoreState;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use wasmtime::component::{Linker, Resource};
use wasmtime_wasi::filesystem::{Descriptor, Dir};
use wasmtime_wasi::{FsPerms, OpenMode};

/// The interface and function shadowed, at the version wasmtime-wasi
/// defines (older 0.2.x imports resolve to it).
const PREOPENS: &str = "wasi:filesystem/preopens@0.2.12";

/// Open directory handles, by access (read-only, read-write) and path.
#[derive(Default)]
pub(crate) struct FolderCache {
    open: Mutex<[HashMap<PathBuf, Cached>; 2]>,
}

struct Cached {
    dir: Dir,
    id: (u64, u64),
}

impl FolderCache {
    /// A handle to `path` with `perms`, reusing the open one when the path
    /// still names the same directory.
    pub(crate) fn get(&self, path: &Path, perms: FsPerms) -> std::io::Result<Dir> {
        // Not following a link: a folder swapped for a symlink (even to
        // itself) is a different entry and goes through `open_dir`'s check.
        let id = identity(&std::fs::symlink_metadata(path)?);
        let mut open = self.open.lock().unwrap_or_else(|e| e.into_inner());
        // Looked up by `&Path`: no allocation on the per-call path.
        let open = &mut open[usize::from(perms == FsPerms::ReadWrite)];
        if let Some(cached) = open.get(path)
            && cached.id == id
        {
            return Ok(cached.dir.clone());
        }
        let file = open_dir(path)?;
        let id = identity(&file.metadata()?);
        let mode = match perms {
            FsPerms::ReadOnly => OpenMode::READ,
            FsPerms::ReadWrite => OpenMode::READ | OpenMode::WRITE,
        };
        // File operations run on tokio's blocking pool, as with
        // `WasiCtxBuilder::preopened_dir`.
        let dir = Dir::new(file, perms, mode, false);
        open.insert(path.to_owned(), Cached { dir: dir.clone(), id });
        Ok(dir)
    }
}

/// Device and inode: what "the same directory" means.
#[cfg(unix)]
fn identity(meta: &std::fs::Metadata) -> (u64, u64) {
    use std::os::unix::fs::MetadataExt;
    (meta.dev(), meta.ino())
}

#[cfg(not(unix))]
fn identity(_: &std::fs::Metadata) -> (u64, u64) {
    // No cheap identity: never reuse a handle.
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    (u64::MAX, NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed))
}

/// Open a granted folder one component at a time from `/`, never following
/// a symbolic link: a skill that can write a parent folder must not be able
/// to swap the grant for a link to `/` and have the host open that instead.
/// `O_PATH` on Linux (no read permission needed to hold it), as wasmtime-wasi
/// does.
#[cfg(unix)]
pub(crate) fn open_dir(path: &Path) -> std::io::Result<std::fs::File> {
    use rustix::fs::{Mode, OFlags, openat};
    use std::path::Component;
    #[cfg(target_os = "linux")]
    let flags = OFlags::PATH | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    #[cfg(not(target_os = "linux"))]
    let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let refuse = |why: String| std::io::Error::new(std::io::ErrorKind::InvalidInput, why);
    let mut components = path.components();
    if components.next() != Some(Component::RootDir) {
        return Err(refuse(format!("{} is not an absolute path", path.display())));
    }
    let mut dir = openat(rustix::fs::CWD, "/", flags, Mode::empty())?;
    for component in components {
        match component {
            Component::Normal(name) => {
                dir = openat(&dir, name, flags, Mode::empty()).map_err(|err| {
                    if err == rustix::io::Errno::LOOP || err == rustix::io::Errno::NOTDIR {
                        refuse(format!(
                            "{} is not opened: {:?} in its path is not a folder (a symbolic link \
                             is never followed to a granted folder)",
                            path.display(),
                            name
                        ))
                    } else {
                        err.into()
                    }
                })?;
            }
            Component::CurDir => {}
            _ => return Err(refuse(format!("{} is not a normalised path", path.display()))),
        }
    }
    let file = std::fs::File::from(dir);
    if !file.metadata()?.is_dir() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::NotADirectory,
            format!("{} is not a folder", path.display()),
        ));
    }
    Ok(file)
}

#[cfg(not(unix))]
pub(crate) fn open_dir(path: &Path) -> std::io::Result<std::fs::File> {
    let file = std::fs::File::open(path)?;
    if !file.metadata()?.is_dir() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::NotADirectory,
            format!("{} is not a folder", path.display()),
        ));
    }
    Ok(file)
}

/// Replace wasmtime-wasi's `get-directories` with one that hands out the
/// store's cached folders.
pub(crate) fn add_to_linker(linker: &mut Linker<StoreState>) -> wasmtime::Result<()> {
    linker.allow_shadowing(true);
    let mut preopens = linker.instance(PREOPENS)?;
    preopens.func_wrap("get-directories", |mut store, (): ()| {
        let state = store.data_mut();
        let mut handles: Vec<(Resource<Descriptor>, String)> =
            Vec::with_capacity(state.folders.len());
        for (dir, guest_path) in &state.folders {
            let handle = state.table.push(Descriptor::Dir(dir.clone()))?;
            state.fs_journal.preopened(handle.rep(), guest_path);
            handles.push((handle, guest_path.clone()));
        }
        Ok((handles,))
    })?;
    linker.allow_shadowing(false);
    Ok(())
}
