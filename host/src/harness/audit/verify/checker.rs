//! Walking a log's lines along the hash chain: the first line that does
//! not fit, and how (changed, removed, inserted, foreign, a bad or foreign
//! head, a cut line, no head at the end).

use super::super::chain::{genesis, head_message, sha256_hex};
use super::super::key::PublicKey;
use super::{Line, Problem, Verdict, VerifyReport, name};
use serde_json::Value;
use std::path::PathBuf;

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

/// Where the walk stands: the hash and number the next line must carry,
/// the hash before (to tell an inserted line from a changed one), and
/// whether the last line so far was the log's sealing head.
struct Cursor {
    prev: Option<String>,
    before_prev: Option<String>,
    seq: Option<u64>,
    last_sealed: bool,
}

/// One log's walk: its lines, checked in order against the key.
pub(super) struct Checker<'a> {
    pub(super) report: &'a mut VerifyReport,
    pub(super) lines: &'a [Line],
    pub(super) key: &'a PublicKey,
    pub(super) starts_at_one: bool,
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

    /// Walk the lines, then the end: the report says what was found.
    pub(super) fn run(mut self) {
        let starts = self.starts_at_one;
        let mut at = Cursor {
            prev: starts.then(|| genesis(&self.report.run_id)),
            before_prev: None,
            seq: starts.then_some(1),
            last_sealed: false,
        };
        for index in 0..self.lines.len() {
            if !self.line(index, &mut at) {
                return;
            }
        }
        self.end(at.last_sealed);
    }

    /// Check line `index` where `at` says the chain stands, and move it on;
    /// false once the chain is broken there (the report says how).
    fn line(&mut self, index: usize, at: &mut Cursor) -> bool {
        let run_id = self.report.run_id.clone();
        let line = &self.lines[index];
        if !line.bytes.ends_with(b"\n") {
            self.cut(index, at.seq);
            return false;
        }
        let Some(here) = place(line) else {
            let what = format!("{} is not a record any more", describe(at.seq));
            self.fail("changed", at.seq, index, what);
            return false;
        };
        let (Some(seq), Some(prev)) = (here.seq, here.prev.clone()) else {
            self.unplaced(index, at);
            return false;
        };
        let its_run = here.value.get("run_id").and_then(Value::as_str).unwrap_or("");
        if its_run != run_id {
            self.fail(
                "foreign",
                Some(seq),
                index,
                format!("the line is record {seq} of run {its_run}, inserted from another log"),
            );
            return false;
        }
        let event = here.value.get("event").and_then(Value::as_str).unwrap_or("");
        let head = matches!(event, "log_sealed" | "log_rotated");
        // A head's own signature first: a head taken from another log
        // verifies but does not link; a forged one does not verify.
        if head && !self.head_verifies(index, &run_id, seq, &prev, &here.value) {
            return false;
        }
        if let (Some(want_seq), Some(want_prev)) = (at.seq, at.prev.clone()) {
            if seq != want_seq || prev != want_prev {
                self.broken(index, seq, &prev, want_seq, &want_prev, at.before_prev.as_deref());
                return false;
            }
        } else if event != "log_continued" {
            // The first line of a part whose predecessors were rotated away.
            let what = "the oldest part kept does not begin where a part begins".into();
            self.fail("changed", Some(seq), index, what);
            return false;
        }
        at.last_sealed = event == "log_sealed";
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
            return false;
        }
        self.report.records = seq;
        at.before_prev = at.prev.take();
        at.prev = Some(sha256_hex(&line.bytes));
        at.seq = Some(seq + 1);
        true
    }

    /// The last line, at `index`, is cut off (no newline) where record
    /// `seq` was due.
    fn cut(&mut self, index: usize, seq: Option<u64>) {
        let after = seq.map_or(0, |s| s - 1);
        let (file, number) = self.where_(index);
        self.report.verdict = Verdict::Unsealed;
        self.report.problem = Some(Problem {
            kind: "cut",
            record: seq,
            file: file.clone(),
            line: number,
            message: format!(
                "the last line (line {number} of {}) is cut off: the log was truncated, or the \
                 host stopped while writing it; records up to {after} are intact",
                name(&file)
            ),
        });
    }

    /// Line `index` has no place in the chain (no `seq`/`prev`): a log of
    /// a version before the chain when it is the first, else a line put
    /// there by hand (inserted, when the next links past it) or changed.
    fn unplaced(&mut self, index: usize, at: &Cursor) {
        if index == 0 {
            self.report.verdict = Verdict::Unchained;
            self.report.notes.push(
                "written by a version before audit logs were chained: nothing to verify".into(),
            );
            return;
        }
        let skipped = self
            .lines
            .get(index + 1)
            .and_then(place)
            .is_some_and(|next| next.seq == at.seq && next.prev == at.prev);
        let (kind, what) = if skipped {
            ("inserted", "a line that is not in the chain was inserted".to_owned())
        } else {
            ("changed", format!("{} lost its place in the chain", describe(at.seq)))
        };
        self.fail(kind, at.seq, index, what);
    }

    /// After the last line: a log that does not end with a signed head.
    fn end(&mut self, last_sealed: bool) {
        let Some(last) = self.lines.len().checked_sub(1) else {
            self.report.verdict = Verdict::Unsealed;
            self.report.notes.push("the log is empty".into());
            return;
        };
        if last_sealed {
            return;
        }
        let (file, number) = self.where_(last);
        let records = self.report.records;
        self.report.verdict = Verdict::Unsealed;
        self.report.problem = Some(Problem {
            kind: "missing_head",
            record: Some(records),
            file: file.clone(),
            line: number,
            message: format!(
                "no signed head after record {records} (line {number} of {}): the run has not \
                 finished, the host was stopped or killed, or the end of the log was cut off; \
                 records 1 to {records} are linked",
                name(&file),
            ),
        });
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
