//! A log that goes on in a new file past a size, keeping the last few
//! parts, each opening with what it is a log of.

use super::chain::Chain;
use super::clock::now_rfc3339;
use super::record::{Body, LogContinued, LogRotated, Record};
use super::{AuditLog, Output};
use serde_json::Value;
use std::io::Write;
use std::path::{Path, PathBuf};

/// Where a rotating log is.
pub(super) struct Rotation {
    /// A part is closed once the next record would take it past this.
    pub(super) max_bytes: u64,
    /// Parts kept, the current one included.
    pub(super) keep: u32,
    /// The current part's number (the first is 1) and its size so far.
    pub(super) part: u32,
    pub(super) written: u64,
    /// The log's first record, repeated at the top of every later part so
    /// each says what it is a log of.
    pub(super) first: Option<Record>,
}

/// The file of part `part` of run `run_id`'s log in `dir`.
pub(super) fn part_path(dir: &Path, run_id: &str, part: u32) -> PathBuf {
    if part <= 1 {
        dir.join(format!("{run_id}.jsonl"))
    } else {
        dir.join(format!("{run_id}.part{part}.jsonl"))
    }
}

impl AuditLog {
    /// When a record of `next` bytes would take the current part past its
    /// size, close it and go on in the next part, dropping the oldest past
    /// those to keep. An error means the record cannot be written where it
    /// belongs (a call it announces does not run). The closing record is a
    /// signed head of the part; the chain goes on into the next part.
    pub(super) fn rotate_if_full(&mut self, next: u64, chain: &mut Chain) -> std::io::Result<()> {
        let (Some(rotation), Output::File(file)) = (&mut self.rotation, &mut self.output) else {
            return Ok(());
        };
        if rotation.written == 0 || rotation.written + next <= rotation.max_bytes {
            return Ok(());
        }
        let dir = self.path.parent().unwrap_or(Path::new(".")).to_owned();
        let part = rotation.part + 1;
        let next_path = part_path(&dir, &self.run_id, part);
        let name = |path: &Path| path.file_name().map(|n| n.to_string_lossy().into_owned());
        let new_file =
            std::fs::OpenOptions::new().create_new(true).append(true).open(&next_path)?;
        // Not masked: file names, and a first record masked when written.
        let run_id = self.run_id.clone();
        let line = |chain: &mut Chain, body: Body, head: bool| {
            let record = Record::new(now_rfc3339(), run_id.clone(), None, body);
            let Value::Object(mut line) = record.to_value() else { unreachable!("an object") };
            chain.link(&mut line);
            if head {
                chain.sign(&run_id, &mut line);
            }
            format!("{}\n", Value::Object(line))
        };
        let closing = line(
            chain,
            Body::LogRotated(LogRotated { next: name(&next_path), ..Default::default() }),
            true,
        );
        // Best effort: the part is full, and the next one names it anyway.
        if file.write_all(closing.as_bytes()).and_then(|()| file.sync_data()).is_ok() {
            chain.advance(&closing, true);
        }
        let opening = line(
            chain,
            Body::LogContinued(LogContinued {
                part,
                previous: name(&self.path),
                run_started: rotation.first.clone().map(Box::new),
            }),
            false,
        );
        *file = new_file;
        file.write_all(opening.as_bytes())?;
        chain.advance(&opening, false);
        tracing::info!(
            from = %self.path.display(),
            to = %next_path.display(),
            "the audit log goes on in a new file"
        );
        self.path = next_path;
        rotation.part = part;
        rotation.written = opening.len() as u64;
        if part > rotation.keep {
            let dropped = part_path(&dir, &self.run_id, part - rotation.keep);
            match std::fs::remove_file(&dropped) {
                Ok(()) => {}
                Err(err) if err.kind() == std::io::ErrorKind::NotFound => {}
                Err(err) => {
                    tracing::warn!(
                        path = %dropped.display(),
                        error = %err,
                        "could not remove an old part of the audit log"
                    )
                }
            }
        }
        Ok(())
    }
}
