//! Checking a log's chain and heads (`reach runs verify`): every line links
//! to the one before, every head is signed by the expected key, and the log
//! ends with a head. The first line that does not fit is named, with what
//! most likely happened to it — changed, removed, inserted, taken from
//! another run — read from how the chain breaks there.

use super::chain::{genesis, head_message, sha256_hex};
use super::key::PublicKey;
use super::rotation::part_path;
use serde::Serialize;
use serde_json::Value;
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

/// What a line says about its place.
struct Place {
    value: Value,
    seq: Option<u64>,
    prev: Option<String>,
}

fn place(line: &Line) -> Option<Place> {
    let value: Value = serde_json::from_slice(&line.bytes).ok()?;
    if !value.is_object() {
        return None;
    }
    let seq = value.get("seq").and_then(Value::as_u64);
    let prev = value.get("prev").and_then(Value::as_str).map(str::to_owned);
    Some(Place { value, seq, prev })
}

struct Checker<'a> {
    report: &'a mut VerifyReport,
    lines: &'a [Line],
    key: &'a PublicKey,
    starts_at_one: bool,
}

impl Checker<'_> {
    fn where_(&self, index: usize) -> (PathBuf, usize) {
        let line = &self.lines[index];
        (self.report.files[line.file].clone(), line.number)
    }

    fn fail(&mut self, kind: &'static str, record: Option<u64>, index: usize, message: String) {
        let (file, line) = self.where_(index);
        let message = format!("{message} (line {line} of {})", name(&file));
        if let Some(record) = record {
            // Linked: only the records before the one that does not fit.
            self.report.records = self.report.records.min(record.saturating_sub(1));
        }
        self.report.verdict = Verdict::Tampered;
        self.report.problem = Some(Problem { kind, record, file, line, message });
    }

    fn run(mut self) {
        let run_id = self.report.run_id.clone();
        // The hash the next line must link to, and the one before it (to
        // tell an inserted line from a changed one).
        let mut expected_prev = self.starts_at_one.then(|| genesis(&run_id));
        let mut before_prev: Option<String> = None;
        let mut expected_seq: Option<u64> = self.starts_at_one.then_some(1);
        let mut last_sealed = false;
        for index in 0..self.lines.len() {
            let line = &self.lines[index];
            if !line.bytes.ends_with(b"\n") {
                let after = expected_seq.map_or(0, |s| s - 1);
                let (file, number) = self.where_(index);
                self.report.verdict = Verdict::Unsealed;
                self.report.problem = Some(Problem {
                    kind: "cut",
                    record: expected_seq,
                    file: file.clone(),
                    line: number,
                    message: format!(
                        "the last line (line {number} of {}) is cut off: the log was truncated, \
                         or the host stopped while writing it; records up to {after} are intact",
                        name(&file)
                    ),
                });
                return;
            }
            let Some(here) = place(line) else {
                self.fail(
                    "changed",
                    expected_seq,
                    index,
                    format!("{} is not a record any more", describe(expected_seq)),
                );
                return;
            };
            let (Some(seq), Some(prev)) = (here.seq, here.prev.clone()) else {
                if index == 0 {
                    self.report.verdict = Verdict::Unchained;
                    self.report.notes.push(
                        "written by a version before audit logs were chained: nothing to verify"
                            .into(),
                    );
                    return;
                }
                // A line without a place: put there by hand, unless the
                // next one links past it to the line before.
                let skipped = self
                    .lines
                    .get(index + 1)
                    .and_then(place)
                    .is_some_and(|next| next.seq == expected_seq && next.prev == expected_prev);
                let (kind, what) = if skipped {
                    ("inserted", "a line that is not in the chain was inserted".to_owned())
                } else {
                    ("changed", format!("{} lost its place in the chain", describe(expected_seq)))
                };
                self.fail(kind, expected_seq, index, what);
                return;
            };
            let its_run = here.value.get("run_id").and_then(Value::as_str).unwrap_or("");
            if its_run != run_id {
                self.fail(
                    "foreign",
                    Some(seq),
                    index,
                    format!("the line is record {seq} of run {its_run}, inserted from another log"),
                );
                return;
            }
            let event = here.value.get("event").and_then(Value::as_str).unwrap_or("");
            let head = matches!(event, "log_sealed" | "log_rotated");
            // A head's own signature first: a head taken from another log
            // verifies but does not link; a forged one does not verify.
            if head && !self.head_verifies(index, &run_id, seq, &prev, &here.value) {
                return;
            }
            if let (Some(want_seq), Some(want_prev)) = (expected_seq, expected_prev.clone()) {
                if seq != want_seq || prev != want_prev {
                    self.broken(index, seq, &prev, want_seq, &want_prev, before_prev.as_deref());
                    return;
                }
            } else if event != "log_continued" {
                // The first line of a part whose predecessors were rotated away.
                self.fail(
                    "changed",
                    Some(seq),
                    index,
                    "the oldest part kept does not begin where a part begins".into(),
                );
                return;
            }
            last_sealed = event == "log_sealed";
            // A part's head closes its file: nothing may follow it there.
            if event == "log_rotated"
                && self.lines.get(index + 1).is_some_and(|next| next.file == line.file)
            {
                self.fail(
                    "inserted",
                    Some(seq + 1),
                    index + 1,
                    format!("a line comes after the head (record {seq}) that closed its part"),
                );
                return;
            }
            self.report.records = seq;
            before_prev = expected_prev.take();
            expected_prev = Some(sha256_hex(&line.bytes));
            expected_seq = Some(seq + 1);
        }
        let Some(last) = self.lines.len().checked_sub(1) else {
            self.report.verdict = Verdict::Unsealed;
            self.report.notes.push("the log is empty".into());
            return;
        };
        let ends_sealed = last_sealed;
        if !ends_sealed {
            let (file, number) = self.where_(last);
            self.report.verdict = Verdict::Unsealed;
            self.report.problem = Some(Problem {
                kind: "missing_head",
                record: Some(self.report.records),
                file: file.clone(),
                line: number,
                message: format!(
                    "no signed head after record {} (line {number} of {}): the run has not \
                     finished, the host was stopped or killed, or the end of the log was cut off; \
                     records 1 to {} are linked",
                    self.report.records,
                    name(&file),
                    self.report.records
                ),
            });
        }
    }

    /// Say how the chain breaks at `index`, whose line claims `seq`/`prev`
    /// where `want_seq`/`want_prev` were due.
    fn broken(
        &mut self,
        index: usize,
        seq: u64,
        prev: &str,
        want_seq: u64,
        want_prev: &str,
        before_prev: Option<&str>,
    ) {
        if prev == want_prev {
            self.fail(
                "changed",
                Some(want_seq),
                index,
                format!("record {want_seq} was changed (its number reads {seq})"),
            );
        } else if seq == want_seq {
            // This line is in its place; the line before no longer hashes
            // to what it links to.
            let before = want_seq - 1;
            if before == 0 {
                self.fail("changed", Some(1), index, "record 1 was changed".into());
            } else {
                self.fail(
                    "changed",
                    Some(before),
                    index - 1,
                    format!(
                        "record {before} was changed (record {want_seq} no longer links to it)"
                    ),
                );
            }
        } else if seq > want_seq {
            let what = if seq == want_seq + 1 {
                format!("record {want_seq} was removed")
            } else {
                format!("records {want_seq} to {} were removed", seq - 1)
            };
            self.fail("removed", Some(want_seq), index, what);
        } else if seq + 1 == want_seq && Some(prev) == before_prev {
            self.fail(
                "inserted",
                Some(seq),
                index - 1,
                format!("a line was inserted before record {seq}"),
            );
        } else {
            self.fail(
                "inserted",
                Some(seq),
                index,
                format!("record {seq} appears again where record {want_seq} was due"),
            );
        }
    }

    fn head_verifies(
        &mut self,
        index: usize,
        run_id: &str,
        seq: u64,
        prev: &str,
        value: &Value,
    ) -> bool {
        let text = |k: &str| value.get(k).and_then(Value::as_str).unwrap_or("");
        let (key, signature) = (text("key"), text("signature"));
        if key != self.key.to_hex() {
            let signer = if key.is_empty() { "no key".to_owned() } else { format!("key {key}") };
            self.fail(
                "wrong_key",
                Some(seq),
                index,
                format!(
                    "the head (record {seq}) is signed by {signer}, not by the key checked \
                     against ({}); verify with `--key` and the public key of the host that \
                     wrote it",
                    self.key.to_hex()
                ),
            );
            return false;
        }
        if !self.key.verifies(&head_message(run_id, seq, prev), signature) {
            self.fail(
                "bad_signature",
                Some(seq),
                index,
                format!(
                    "the head (record {seq}) does not verify: its signature or fields were changed"
                ),
            );
            return false;
        }
        self.report.key = Some(key.to_owned());
        true
    }
}

fn describe(seq: Option<u64>) -> String {
    seq.map_or_else(|| "the line".to_owned(), |s| format!("record {s}"))
}

#[cfg(test)]
mod tests;
