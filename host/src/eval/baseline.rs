//! Baselines: the per-case results of one evaluation, saved, and compared
//! with a later one. A regression is a case that passed every run before
//! and now fails most of them — beyond the noise of a sampled model; an
//! improvement is the reverse.

use super::report::{Change, Comparison, EvalReport};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;

/// What a baseline file holds.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Baseline {
    /// Layout version (1).
    pub schema: u32,
    /// The model it was measured with.
    pub model: String,
    /// When.
    pub started: String,
    /// Per case id: runs that passed, and runs.
    pub cases: BTreeMap<String, Tally>,
}

/// Passes out of runs.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct Tally {
    /// Runs that passed.
    pub passes: usize,
    /// Runs.
    pub runs: usize,
}

impl Tally {
    fn all(self) -> bool {
        self.runs > 0 && self.passes == self.runs
    }

    fn mostly_failed(self) -> bool {
        self.passes * 2 < self.runs
    }

    fn shown(self) -> String {
        format!("{}/{}", self.passes, self.runs)
    }

    fn rate(self) -> f64 {
        if self.runs == 0 { 0.0 } else { self.passes as f64 / self.runs as f64 }
    }
}

impl Baseline {
    /// The baseline of `report`.
    pub fn of(report: &EvalReport) -> Baseline {
        Baseline {
            schema: 1,
            model: report.model.clone(),
            started: report.started.clone(),
            cases: report
                .cases
                .iter()
                .map(|c| (c.id.clone(), Tally { passes: c.passes, runs: c.runs.len() }))
                .collect(),
        }
    }

    /// Read a baseline file.
    pub fn load(path: &Path) -> Result<Baseline, String> {
        let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
        serde_json::from_str(&text).map_err(|e| {
            format!(
                "{}: not a baseline file ({e}); write one with `reach eval --save-baseline FILE`",
                path.display()
            )
        })
    }

    /// Write it (pretty JSON, one case per line is not needed: it is small).
    pub fn save(&self, path: &Path) -> Result<(), String> {
        let text = serde_json::to_string_pretty(self).map_err(|e| e.to_string())?;
        std::fs::write(path, text + "\n").map_err(|e| format!("{}: {e}", path.display()))
    }

    /// Compare `report` with this baseline. Completion before is over the
    /// cases both ran, so a filtered run compares like with like.
    pub fn compare(&self, report: &EvalReport, file: &Path) -> Comparison {
        let mut out = Comparison { file: file.display().to_string(), ..Comparison::default() };
        let (mut before, mut after) = ((0, 0), (0, 0));
        for case in &report.cases {
            let now = Tally { passes: case.passes, runs: case.runs.len() };
            let Some(&then) = self.cases.get(&case.id) else {
                out.new_cases.push(case.id.clone());
                continue;
            };
            before = (before.0 + then.passes, before.1 + then.runs);
            after = (after.0 + now.passes, after.1 + now.runs);
            let change =
                || Change { id: case.id.clone(), before: then.shown(), after: now.shown() };
            if then.all() && now.mostly_failed() {
                out.regressions.push(change());
            } else if then.mostly_failed() && now.all() {
                out.improvements.push(change());
            }
        }
        let ran: std::collections::BTreeSet<&str> =
            report.cases.iter().map(|c| c.id.as_str()).collect();
        out.missing_cases =
            self.cases.keys().filter(|id| !ran.contains(id.as_str())).cloned().collect();
        out.completion_before = Tally { passes: before.0, runs: before.1 }.rate();
        out.completion_after = Tally { passes: after.0, runs: after.1 }.rate();
        out
    }
}
