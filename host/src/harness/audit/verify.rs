//! Checking a log's chain and heads (`reach runs verify`): every line links
//! to the one before, every head is signed by the expected key, and the log
//! ends with a head. The first line that does not fit is named, with what
//! most likely happened to it — changed, removed, inserted, taken from
//! another run — read from how the chain breaks there.

mod checker;

use super::key::PublicKey;
use super::rotation::part_path;
use checker::Checker;
use serde::Serialize;
use std::path::{Path, PathBuf};

/// How a log stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// Every line is linked and the log ends with a valid signed head.
    Intact,
    /// Every line is linked, but no signed head ends it: the run has not
    /// finished, the host was stopped or killed, or the end was cut off.
    Unsealed,
    /// A line was changed, removed or inserted, or a head does not verify.
    Tampered,
    /// Written before logs were chained: nothing to check.
    Unchained,
}

/// The first line that does not fit.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Problem {
    /// What happened: `changed`, `removed`, `inserted`, `foreign` (a record
    /// of another run), `bad_signature`, `wrong_key`, `cut` (a last line
    /// without its end), `missing_part`.
    pub kind: &'static str,
    /// The record it is about (its `seq`), when there is one.
    pub record: Option<u64>,
    /// The file and line (from 1) where it shows.
    pub file: PathBuf,
    /// The line.
    pub line: usize,
    /// In words.
    pub message: String,
}

/// What [`verify_log`] found.
#[derive(Clone, Debug, Serialize)]
pub struct VerifyReport {
    /// The run.
    pub run_id: String,
    /// How it stands.
    pub verdict: Verdict,
    /// Records checked and found linked.
    pub records: u64,
    /// The files read, oldest part first.
    pub files: Vec<PathBuf>,
    /// The key the heads were signed by (hex), when one verified.
    pub key: Option<String>,
    /// What is wrong, for a log not intact.
    pub problem: Option<Problem>,
    /// What else is worth knowing (parts rotated away).
    pub notes: Vec<String>,
}

/// One line of a file, as written.
struct Line {
    file: usize,
    number: usize,
    bytes: Vec<u8>,
}

/// Check run `run_id`'s log in `dir` (every part of it) against `key`.
pub fn verify_log(dir: &Path, run_id: &str, key: &PublicKey) -> std::io::Result<VerifyReport> {
    let parts = parts_of(dir, run_id)?;
    if parts.is_empty() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::NotFound,
            format!("no log of run {run_id} in {} (`reach runs list` shows them)", dir.display()),
        ));
    }
    let mut report = VerifyReport {
        run_id: run_id.to_owned(),
        verdict: Verdict::Intact,
        records: 0,
        files: parts.iter().map(|(_, path)| path.clone()).collect(),
        key: None,
        problem: None,
        notes: Vec::new(),
    };
    if let Some((first, _)) = parts.first()
        && *first > 1
    {
        report.notes.push(format!(
            "parts 1 to {} were rotated away (only the newest are kept); checked from part {first}",
            first - 1
        ));
    }
    for pair in parts.windows(2) {
        if pair[1].0 != pair[0].0 + 1 {
            let path = &pair[0].1;
            let lines = std::fs::read(path)?.split(|&b| b == b'\n').count().saturating_sub(1);
            report.verdict = Verdict::Tampered;
            report.problem = Some(Problem {
                kind: "missing_part",
                record: None,
                file: path.clone(),
                line: lines,
                message: format!(
                    "part {} of the log is missing between {} and {}",
                    pair[0].0 + 1,
                    name(&pair[0].1),
                    name(&pair[1].1)
                ),
            });
            return Ok(report);
        }
    }
    let mut lines = Vec::new();
    for (index, (_, path)) in parts.iter().enumerate() {
        let bytes = std::fs::read(path)?;
        for (at, chunk) in bytes.split_inclusive(|&b| b == b'\n').enumerate() {
            lines.push(Line { file: index, number: at + 1, bytes: chunk.to_vec() });
        }
    }
    let starts_at_one = parts.first().is_some_and(|(n, _)| *n == 1);
    Checker { report: &mut report, lines: &lines, key, starts_at_one }.run();
    Ok(report)
}

/// Check every log in `dir`, oldest first (run ids begin with the time).
/// A log whose first parts were rotated away is checked from its oldest.
pub fn verify_runs(dir: &Path, key: &PublicKey) -> std::io::Result<Vec<VerifyReport>> {
    let mut runs = std::collections::BTreeSet::new();
    for entry in std::fs::read_dir(dir)? {
        let file = entry?.file_name().to_string_lossy().into_owned();
        let Some(stem) = file.strip_suffix(".jsonl") else { continue };
        let run = match stem.rsplit_once(".part") {
            Some((run, n)) if !run.is_empty() && n.parse::<u32>().is_ok_and(|n| n >= 2) => run,
            _ => stem,
        };
        runs.insert(run.to_owned());
    }
    runs.into_iter().map(|run| verify_log(dir, &run, key)).collect()
}

/// The parts of `run_id`'s log that exist, by number.
pub(super) fn parts_of(dir: &Path, run_id: &str) -> std::io::Result<Vec<(u32, PathBuf)>> {
    let mut parts = Vec::new();
    let prefix = format!("{run_id}.part");
    for entry in std::fs::read_dir(dir)? {
        let file = entry?.file_name().to_string_lossy().into_owned();
        let number = if file == format!("{run_id}.jsonl") {
            Some(1)
        } else {
            file.strip_prefix(&prefix)
                .and_then(|rest| rest.strip_suffix(".jsonl"))
                .and_then(|n| n.parse::<u32>().ok())
                .filter(|n| *n > 1)
        };
        if let Some(number) = number {
            parts.push((number, part_path(dir, run_id, number)));
        }
    }
    parts.sort();
    Ok(parts)
}

fn name(path: &Path) -> String {
    path.file_name().map_or_else(|| path.display().to_string(), |n| n.to_string_lossy().into())
}

#[cfg(test)]
mod tests;
