//! `reach runs prune`: old journals (and recordings) go, by age and by
//! total size, oldest first. Pruning a run's journal means it can no
//! longer be diffed or undone, its recording that it can no longer be
//! replayed offline; its audit log stays.

use serde::Serialize;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

/// What pruning removed (or, dry, would remove).
#[derive(Clone, Debug, Default, Serialize)]
pub struct PruneReport {
    /// The journals removed, oldest first, with their size in bytes.
    pub removed: Vec<(String, u64)>,
    /// Bytes the journals kept take.
    pub kept_bytes: u64,
    /// Journals kept.
    pub kept: usize,
}

fn size_of(dir: &Path) -> std::io::Result<u64> {
    let mut total = 0;
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let meta = entry.metadata()?;
        total += if meta.is_dir() { size_of(&entry.path())? } else { meta.len() };
    }
    Ok(total)
}

/// Remove the journals (or recordings: the same layout, one folder a run)
/// under `root` last changed more than `older_than` ago, then the oldest until the rest fit in `max_bytes`. With `dry`,
/// only say what would go.
pub fn prune(
    root: &Path,
    older_than: Option<Duration>,
    max_bytes: Option<u64>,
    dry: bool,
) -> std::io::Result<PruneReport> {
    let mut journals: Vec<(SystemTime, String, PathBuf, u64)> = Vec::new();
    match std::fs::read_dir(root) {
        Ok(entries) => {
            for entry in entries {
                let entry = entry?;
                if !entry.file_type()?.is_dir() {
                    continue;
                }
                let path = entry.path();
                // A run's journal changes when a call of it ends; its
                // recording when a response or result is recorded.
                let changed = std::fs::metadata(path.join("calls.jsonl"))
                    .or_else(|_| std::fs::metadata(path.join("tape.jsonl")))
                    .or_else(|_| entry.metadata())?
                    .modified()
                    .unwrap_or(SystemTime::UNIX_EPOCH);
                let name = entry.file_name().to_string_lossy().into_owned();
                let size = size_of(&path)?;
                journals.push((changed, name, path, size));
            }
        }
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => {}
        Err(err) => return Err(err),
    }
    journals.sort();
    let now = SystemTime::now();
    let mut total: u64 = journals.iter().map(|j| j.3).sum();
    let mut report = PruneReport::default();
    for (changed, name, path, size) in journals {
        let old =
            older_than.is_some_and(|age| now.duration_since(changed).unwrap_or_default() > age);
        let over = max_bytes.is_some_and(|max| total > max);
        if old || over {
            if !dry {
                std::fs::remove_dir_all(&path)?;
            }
            total -= size;
            report.removed.push((name, size));
        } else {
            report.kept += 1;
        }
    }
    report.kept_bytes = total;
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_oldest_journals_go_first_until_the_rest_fit() {
        let dir = tempfile::tempdir().expect("dir");
        for (i, run) in ["r1", "r2", "r3"].iter().enumerate() {
            let path = dir.path().join(run);
            std::fs::create_dir_all(path.join("blobs")).expect("mkdir");
            std::fs::write(path.join("blobs/x"), vec![0u8; 1000]).expect("write");
            std::fs::write(path.join("calls.jsonl"), "{}\n").expect("write");
            let when = SystemTime::now() - Duration::from_secs(3600 * (3 - i as u64));
            std::fs::File::options()
                .write(true)
                .open(path.join("calls.jsonl"))
                .and_then(|f| f.set_modified(when))
                .expect("mtime");
        }
        let dry = prune(dir.path(), None, Some(2500), true).expect("dry");
        assert_eq!(dry.removed.iter().map(|r| r.0.as_str()).collect::<Vec<_>>(), ["r1"]);
        assert!(dir.path().join("r1").exists(), "dry run removes nothing");
        let report = prune(dir.path(), Some(Duration::from_secs(5400)), None, false).expect("age");
        assert_eq!(report.removed.iter().map(|r| r.0.as_str()).collect::<Vec<_>>(), ["r1", "r2"]);
        assert_eq!((report.kept, dir.path().join("r3").exists()), (1, true));
    }
}
