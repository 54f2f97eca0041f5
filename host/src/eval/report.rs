//! What an evaluation found: every run of every case, and the figures per
//! domain and overall. Serialised as the stable `--json` output (fields are
//! only ever added) and read back by `--baseline`.

use super::score::Score;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Version of the JSON layout: raised only if a field changes meaning.
pub const SCHEMA: u32 = 1;

/// One expectation, checked.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct Check {
    /// Which part of `expect`: `answered`, `tools`, `args`, `answer`,
    /// `files`, `must_not_tools`, `must_not_paths`, `max_steps`.
    pub expectation: String,
    /// Whether it held.
    pub passed: bool,
    /// What was wanted and what happened, for a person.
    pub detail: String,
}

/// One tool call of a run, as the trajectory shows it.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct CallRecord {
    /// Model request it came from (1-based).
    pub step: usize,
    /// The tool as `skill.tool` (or the name the model used, if unknown).
    pub tool: String,
    /// Arguments as run (masked).
    pub arguments: serde_json::Value,
    /// `auto`, `confirmed`, `denied`, `-`…
    pub decision: String,
    /// `ok` or the error code.
    pub outcome: String,
    /// The start of the result the model was shown.
    pub result: String,
    /// Wall time of the call.
    pub duration_ms: u64,
}

/// One run of one case.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct RunResult {
    /// 1-based repeat number.
    pub repeat: usize,
    /// Every expectation held and the model answered.
    pub passed: bool,
    /// The verdict: every expectation checked (failed ones say why), and
    /// the flags the figures count. Its fields sit at the top level of the
    /// JSON, as they always have.
    #[serde(flatten)]
    pub score: Score,
    /// Why the run stopped: `answered`, `max_steps`, `token_budget`,
    /// `no_progress`, `declined`, `model_error`, or `setup_error`.
    pub stop: String,
    /// The stop's detail (the model error, the setup error).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_detail: Option<String>,
    /// The final answer.
    pub answer: Option<String>,
    /// Model requests.
    pub steps: usize,
    /// Input tokens, all requests.
    pub input_tokens: u64,
    /// Output tokens, all requests.
    pub output_tokens: u64,
    /// True when the server reported no usage and tokens were estimated.
    pub tokens_estimated: bool,
    /// Wall time of the run.
    pub wall_ms: u64,
    /// Time waiting for the model.
    pub model_ms: u64,
    /// Time in tools.
    pub tool_ms: u64,
    /// Described calls the harness asked about, text calls it ran.
    pub text_calls: usize,
    /// Every tool call, in order.
    pub calls: Vec<CallRecord>,
    /// The run's audit log.
    pub audit_log: Option<String>,
}

/// Every run of one case.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct CaseResult {
    /// The case id.
    pub id: String,
    /// Its domain.
    pub domain: String,
    /// The task as the model saw it.
    pub task: String,
    /// `FILE:LINE` of the case.
    pub source: String,
    /// Runs that passed.
    pub passes: usize,
    /// The runs, in order.
    pub runs: Vec<RunResult>,
}

impl CaseResult {
    /// The first run passed.
    pub fn pass_at_1(&self) -> bool {
        self.runs.first().is_some_and(|r| r.passed)
    }

    /// Every run passed.
    pub fn pass_all(&self) -> bool {
        !self.runs.is_empty() && self.passes == self.runs.len()
    }
}

/// Figures over a group of cases. Rates are fractions in 0..=1.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct Metrics {
    /// Cases in the group.
    pub cases: usize,
    /// Runs (cases × repeats).
    pub runs: usize,
    /// Runs that passed / runs.
    pub completion: f64,
    /// Cases whose first run passed / cases.
    pub pass_at_1: f64,
    /// Cases whose every run passed / cases (pass^K).
    pub pass_all: f64,
    /// Runs with `tool_ok` / runs.
    pub tool_accuracy: f64,
    /// Runs with `args_ok` / runs that have argument expectations (None: no such runs).
    pub arg_accuracy: Option<f64>,
    /// Runs with `boundary_ok` / runs that forbid something (None: no such runs).
    pub boundary_compliance: Option<f64>,
    /// Runs whose answer cites something no tool returned.
    pub ungrounded_runs: usize,
    /// Runs that used an input nothing showed them.
    pub invented_input_runs: usize,
    /// Median model requests per run.
    pub median_steps: f64,
    /// Mean input tokens per run.
    pub mean_input_tokens: f64,
    /// Mean output tokens per run.
    pub mean_output_tokens: f64,
    /// Median wall seconds per run.
    pub median_seconds: f64,
    /// Mean seconds waiting for the model, per run.
    pub mean_model_seconds: f64,
    /// Mean seconds in tools, per run.
    pub mean_tool_seconds: f64,
}

impl Metrics {
    /// The figures over `cases`.
    pub fn over<'a>(cases: impl IntoIterator<Item = &'a CaseResult>) -> Metrics {
        let cases: Vec<&CaseResult> = cases.into_iter().collect();
        let runs: Vec<&RunResult> = cases.iter().flat_map(|c| c.runs.iter()).collect();
        let n = runs.len();
        if n == 0 {
            return Metrics { cases: cases.len(), ..Metrics::default() };
        }
        let rate = |count: usize, of: usize| if of == 0 { 0.0 } else { count as f64 / of as f64 };
        let optional = |values: Vec<bool>| {
            (!values.is_empty()).then(|| rate(values.iter().filter(|v| **v).count(), values.len()))
        };
        let mean =
            |f: &dyn Fn(&RunResult) -> f64| runs.iter().map(|r| f(r)).sum::<f64>() / n as f64;
        Metrics {
            cases: cases.len(),
            runs: n,
            completion: rate(runs.iter().filter(|r| r.passed).count(), n),
            pass_at_1: rate(cases.iter().filter(|c| c.pass_at_1()).count(), cases.len()),
            pass_all: rate(cases.iter().filter(|c| c.pass_all()).count(), cases.len()),
            tool_accuracy: rate(runs.iter().filter(|r| r.score.tool_ok).count(), n),
            arg_accuracy: optional(runs.iter().filter_map(|r| r.score.args_ok).collect()),
            boundary_compliance: optional(
                runs.iter().filter_map(|r| r.score.boundary_ok).collect(),
            ),
            ungrounded_runs: runs.iter().filter(|r| !r.score.ungrounded.is_empty()).count(),
            invented_input_runs: runs
                .iter()
                .filter(|r| !r.score.invented_inputs.is_empty())
                .count(),
            median_steps: median(runs.iter().map(|r| r.steps as f64).collect()),
            mean_input_tokens: mean(&|r| r.input_tokens as f64),
            mean_output_tokens: mean(&|r| r.output_tokens as f64),
            median_seconds: median(runs.iter().map(|r| r.wall_ms as f64 / 1000.0).collect()),
            mean_model_seconds: mean(&|r| r.model_ms as f64 / 1000.0),
            mean_tool_seconds: mean(&|r| r.tool_ms as f64 / 1000.0),
        }
    }
}

/// The median (the mean of the middle two for an even count; 0 for none).
pub fn median(mut values: Vec<f64>) -> f64 {
    if values.is_empty() {
        return 0.0;
    }
    values.sort_by(f64::total_cmp);
    let mid = values.len() / 2;
    if values.len() % 2 == 1 { values[mid] } else { (values[mid - 1] + values[mid]) / 2.0 }
}

/// A gate and whether it held.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Gate {
    /// `min_completion` or `baseline`.
    pub name: String,
    /// Whether it held.
    pub passed: bool,
    /// What was required and what was measured.
    pub detail: String,
}

/// A case whose result moved against the baseline.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Change {
    /// The case id.
    pub id: String,
    /// `passes/runs` in the baseline.
    pub before: String,
    /// `passes/runs` now.
    pub after: String,
}

/// The comparison with a saved baseline.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Comparison {
    /// The baseline file.
    pub file: String,
    /// Cases that passed every run before and now fail most runs.
    pub regressions: Vec<Change>,
    /// Cases that failed most runs before and now pass every run.
    pub improvements: Vec<Change>,
    /// Cases in this run the baseline does not have.
    pub new_cases: Vec<String>,
    /// Cases in the baseline this run did not run.
    pub missing_cases: Vec<String>,
    /// Completion before and now.
    pub completion_before: f64,
    /// Completion now.
    pub completion_after: f64,
}

/// The whole evaluation.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct EvalReport {
    /// Layout version ([`SCHEMA`]).
    pub schema: u32,
    /// When it started (RFC 3339, UTC).
    pub started: String,
    /// The model's name.
    pub model: String,
    /// Runs per case.
    pub repeat: usize,
    /// Where audit logs and reports of this evaluation are.
    pub out_dir: String,
    /// Wall time of the whole evaluation.
    pub wall_ms: u64,
    /// Every case, in the order loaded.
    pub cases: Vec<CaseResult>,
    /// Figures over every case.
    pub overall: Metrics,
    /// Figures per domain.
    pub by_domain: BTreeMap<String, Metrics>,
    /// How often each failure kind occurred over failed runs
    /// (`answered`, `tools`, `args`, `answer`, `files`, `must_not_tools`,
    /// `must_not_paths`, `max_steps`), and the evidence flags
    /// (`ungrounded`, `invented_input`) over all runs.
    pub failure_kinds: BTreeMap<String, usize>,
    /// The gates and whether they held.
    pub gates: Vec<Gate>,
    /// The comparison with `--baseline`, if given.
    pub baseline: Option<Comparison>,
}

impl EvalReport {
    /// Fill in the figures from `cases`.
    pub fn summarise(&mut self) {
        self.overall = Metrics::over(&self.cases);
        let mut domains: BTreeMap<String, Vec<&CaseResult>> = BTreeMap::new();
        for case in &self.cases {
            domains.entry(case.domain.clone()).or_default().push(case);
        }
        self.by_domain = domains.into_iter().map(|(d, cases)| (d, Metrics::over(cases))).collect();
        let mut kinds: BTreeMap<String, usize> = BTreeMap::new();
        for run in self.cases.iter().flat_map(|c| &c.runs) {
            if !run.passed {
                for check in run.score.checks.iter().filter(|c| !c.passed) {
                    *kinds.entry(check.expectation.clone()).or_default() += 1;
                }
            }
            if !run.score.ungrounded.is_empty() {
                *kinds.entry("ungrounded".into()).or_default() += 1;
            }
            if !run.score.invented_inputs.is_empty() {
                *kinds.entry("invented_input".into()).or_default() += 1;
            }
        }
        self.failure_kinds = kinds;
    }

    /// True when every gate held.
    pub fn gates_hold(&self) -> bool {
        self.gates.iter().all(|g| g.passed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn medians() {
        assert_eq!(median(vec![]), 0.0);
        assert_eq!(median(vec![3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(vec![4.0, 1.0, 2.0, 3.0]), 2.5);
    }
}
