//! A run's log read back as records, every part in order.

use super::record::{Body, Record};
use std::io;
use std::path::Path;

/// The records of run `run_id`'s log in `dir`, its parts in order (the
/// chain's own records, which open and close parts, left out). A line that is not a record (cut by a crash) is skipped.
pub fn read_log(dir: &Path, run_id: &str) -> io::Result<Vec<Record>> {
    let parts = super::verify::parts_of(dir, run_id)?;
    if parts.is_empty() {
        return Err(io::Error::new(
            io::ErrorKind::NotFound,
            format!("no log of run {run_id} in {}", dir.display()),
        ));
    }
    let mut records = Vec::new();
    for (_, path) in parts {
        let text = std::fs::read_to_string(&path)?;
        let lines = text.lines().filter_map(|l| serde_json::from_str(l).ok());
        records.extend(lines.filter_map(Record::from_value).filter(|r| {
            !matches!(r.body, Body::LogContinued(_) | Body::LogRotated(_) | Body::LogSealed(_))
        }));
    }
    Ok(records)
}
