//! The host's own records on disk — `.reach/` with the audit logs and the
//! memory database — are for the host's user alone: folders `0700`, files
//! `0600`. They hold every call's arguments and results and every note; a
//! default umask (`0644`) would let any other account on the machine read
//! them. Folders and files that already exist, belong to this user and are
//! open to others (made by an older version) are closed on first use.
//!
//! On other systems than Unix these create the folders and files plainly.

use std::fs::{File, OpenOptions};
use std::io;
use std::path::Path;

/// The folder name under which the host keeps its records.
const RECORDS: &str = ".reach";

/// Create `dir` and any missing parents, each `0700`. Folders that already
/// exist at or inside a `.reach` folder, belonging to this user with
/// access for others, are closed; any other existing folder (an operator's
/// `--runs-dir`) is left as it was made.
pub fn create_dir_all(dir: &Path) -> io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        std::fs::DirBuilder::new().recursive(true).mode(0o700).create(dir)?;
        let records = |p: &Path| p.file_name().is_some_and(|n| n == RECORDS);
        for folder in dir.ancestors().filter(|p| !p.as_os_str().is_empty()) {
            if !folder.ancestors().any(records) {
                break;
            }
            close(folder, 0o700)?;
            if records(folder) {
                break;
            }
        }
        Ok(())
    }
    #[cfg(not(unix))]
    {
        std::fs::create_dir_all(dir)
    }
}

/// Create `path` as a new file (it must not exist) readable and writable
/// by this user only, opened for appending.
pub fn create_new_append(path: &Path) -> io::Result<File> {
    let mut options = OpenOptions::new();
    options.create_new(true).append(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    options.open(path)
}

/// Make sure the file at `path` exists, `0600` when this call creates it,
/// and closed to others when it exists belonging to this user. For files
/// another library opens by path (SQLite, whose `-wal` and `-shm` files take
/// the database file's mode).
#[cfg(any(feature = "memory-sqlite", test))]
pub fn ensure_file(path: &Path) -> io::Result<()> {
    let mut options = OpenOptions::new();
    options.create_new(true).write(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    match options.open(path) {
        Ok(_) => Ok(()),
        Err(err) if err.kind() == io::ErrorKind::AlreadyExists => {
            #[cfg(unix)]
            close(path, 0o600)?;
            Ok(())
        }
        Err(err) => Err(err),
    }
}

/// Take group and other access away from `path` when it belongs to this
/// user; someone else's file is left alone (and is not ours to change).
#[cfg(unix)]
fn close(path: &Path, mode: u32) -> io::Result<()> {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let meta = std::fs::symlink_metadata(path)?;
    let mine = meta.uid() == rustix::process::geteuid().as_raw();
    if mine && !meta.file_type().is_symlink() && meta.mode() & 0o077 != 0 {
        tracing::warn!(
            path = %path.display(),
            mode = format!("{:o}", meta.mode() & 0o777),
            "the host's records were open to other users; closing them"
        );
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))?;
    }
    Ok(())
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn mode(path: &Path) -> u32 {
        std::fs::metadata(path).expect("stat").permissions().mode() & 0o777
    }

    #[test]
    fn the_records_folder_and_files_are_the_users_alone() {
        let dir = tempfile::tempdir().expect("tempdir");
        let runs = dir.path().join(".reach/runs");
        create_dir_all(&runs).expect("mkdir");
        assert_eq!(mode(&dir.path().join(".reach")), 0o700);
        assert_eq!(mode(&runs), 0o700);
        let log = runs.join("r.jsonl");
        create_new_append(&log).expect("create");
        assert_eq!(mode(&log), 0o600);
        let db = dir.path().join(".reach/memory.db");
        ensure_file(&db).expect("create");
        assert_eq!(mode(&db), 0o600);
        let open = dir.path().join("open");
        std::fs::create_dir(&open).expect("mkdir");
        std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        create_dir_all(&open.join(".reach/runs")).expect("mkdir");
        assert_eq!(mode(&open), 0o755, "not the host's to close");
    }

    #[test]
    fn records_left_open_by_an_older_version_are_closed() {
        let dir = tempfile::tempdir().expect("tempdir");
        let reach = dir.path().join(".reach");
        let runs = reach.join("runs");
        std::fs::create_dir_all(&runs).expect("mkdir");
        for folder in [&reach, &runs] {
            std::fs::set_permissions(folder, std::fs::Permissions::from_mode(0o755))
                .expect("chmod");
        }
        let db = reach.join("memory.db");
        std::fs::write(&db, b"").expect("write");
        std::fs::set_permissions(&db, std::fs::Permissions::from_mode(0o644)).expect("chmod");
        create_dir_all(&runs).expect("mkdir");
        ensure_file(&db).expect("ensure");
        assert_eq!((mode(&reach), mode(&runs), mode(&db)), (0o700, 0o700, 0o600));
    }
}
