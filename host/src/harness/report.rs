//! What a run comes to: why it stopped, each tool call, the report, and
//! the parts of it that workers and reviewers add. The types every other
//! part of the harness shares; this module uses none of them.

use super::outcome::{Decision, Outcome, Verdict};
use crate::model::Usage;
use serde_json::Value;

/// Why a run stopped.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case", tag = "reason", content = "detail")]
pub enum Stop {
    /// The model answered without calling a tool.
    Answered,
    /// `max_steps` model requests were made.
    MaxSteps,
    /// The token budget was used up.
    TokenBudget,
    /// The same call with the same arguments, `repeat_limit` times in a row.
    NoProgress,
    /// A person declined a call.
    Declined,
    /// The model could not be reached or answered nonsense.
    ModelError(String),
    /// The run could not be put on record (its audit log could not be
    /// written: a full disk, say), so it did not start: the model was not
    /// asked and nothing ran.
    NotRecorded(String),
}

impl Stop {
    /// True when the task ended on its own terms (the model answered).
    pub fn is_success(&self) -> bool {
        matches!(self, Stop::Answered)
    }
}

/// One tool call of the run, as the report and the timeline show it.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Action {
    /// Model request it came from (1-based).
    pub step: usize,
    /// The name the model used.
    pub tool: String,
    /// Arguments after repair (masked).
    pub arguments: Value,
    /// How its level was decided (`auto`, `confirmed`, `declined`,
    /// `denied`, or `-` when it never reached the level check).
    pub decision: Decision,
    /// `ok`, or the error code the model got.
    pub outcome: Outcome,
    /// Result size in bytes.
    pub result_bytes: usize,
    /// Wall time of the call.
    pub duration_ms: u64,
    /// True when the result may hold text from the network: the tool's
    /// skill can reach it, or reads or writes a folder a skill that can
    /// reach it may write; for `agents__delegate`, any skill the worker
    /// (and so its own workers) was given can. A note found in this
    /// result, or in any result of a run with such a call, needs a person
    /// asked at the moment to be remembered.
    pub network: bool,
}

/// What a run did.
#[derive(Clone, Debug, serde::Serialize)]
pub struct RunReport {
    /// The run's id (also the audit log's file name).
    pub run_id: String,
    /// Why it stopped.
    pub stop: Stop,
    /// The model's final answer, when it gave one.
    pub answer: Option<String>,
    /// Model requests made.
    pub steps: usize,
    /// Tokens used, all requests.
    pub usage: Usage,
    /// Every tool call, in order.
    pub actions: Vec<Action>,
    /// The audit log, if written.
    pub audit_log: Option<std::path::PathBuf>,
    /// The workers this run started (`agents__delegate`), each with its own.
    pub workers: Vec<WorkerSummary>,
    /// The review rounds (`RunConfig::review`), in order.
    pub reviews: Vec<Review>,
    /// Tokens of the whole run: this loop's, every worker's and every
    /// reviewer's (what the run's `token_budget` counts).
    pub total_tokens: u64,
    /// Paths the run changed that `reach runs undo` cannot put back: their
    /// prior contents did not fit the journal's budget, and the table's
    /// `[journal] undo = "best-effort"` let the change go ahead.
    pub not_undoable: Vec<std::path::PathBuf>,
}

impl RunReport {
    /// A few lines for a person: what was done, why it stopped, what is left.
    pub fn summary(&self) -> String {
        let mut out = String::new();
        let ok = self.actions.iter().filter(|a| a.outcome == "ok").count();
        out.push_str(&format!(
            "{} step(s), {} tool call(s) ({ok} ok, {} failed), {} tokens{}.\n",
            self.steps,
            self.actions.len(),
            self.actions.len() - ok,
            self.usage.total(),
            if self.usage.estimated { " (estimated)" } else { "" }
        ));
        for a in &self.actions {
            // The tool name is the model's text; this summary is for a terminal.
            out.push_str(&format!(
                "  step {}: {} → {} ({} ms)\n",
                a.step,
                crate::text::escape_for_terminal(&a.tool),
                a.outcome,
                a.duration_ms
            ));
        }
        let left = match &self.stop {
            Stop::Answered => "Done: the model answered.".to_owned(),
            Stop::MaxSteps => format!(
                "Stopped after {} steps (max_steps) before the model finished; the task may be \
                 incomplete.",
                self.steps
            ),
            Stop::TokenBudget => {
                "Stopped: the token budget is used up; the task may be incomplete.".to_owned()
            }
            Stop::NoProgress => {
                "Stopped: the model repeated the same call without progress; the task is not done."
                    .to_owned()
            }
            Stop::Declined => "Stopped: a person declined a call; the task is not done.".to_owned(),
            Stop::ModelError(e) => format!("Stopped: the model failed: {e}"),
            Stop::NotRecorded(e) => format!("Not started: {e}"),
        };
        out.push_str(&left);
        if !self.not_undoable.is_empty() {
            let paths: Vec<String> = self
                .not_undoable
                .iter()
                .map(|p| crate::text::escape_for_terminal(&p.display().to_string()))
                .collect();
            out.push_str(&format!(
                "\nNot undoable (past the journal's budget, undo = \"best-effort\"): {}",
                paths.join(", ")
            ));
        }
        if let Some(review) = self.reviews.last() {
            out.push_str(&match review.verdict {
                Some(Verdict::Pass) => format!("\nReview {}: pass.", review.round),
                Some(verdict) => format!(
                    "\nReview {}: {verdict} — the work may not meet the criteria: {}",
                    review.round,
                    review.issues.join("; ")
                ),
                None => format!(
                    "\nReview {}: the reviewer failed ({}); the work was not checked.",
                    review.round,
                    review.error.as_deref().unwrap_or("?")
                ),
            });
        }
        out
    }
}

/// One worker's part of a report: what it was asked, how it ended, and its
/// own workers.
#[derive(Clone, Debug, serde::Serialize)]
pub struct WorkerSummary {
    /// `t1`, `t1.2`, `review1`.
    pub task_id: String,
    /// The profile it ran as.
    pub agent: String,
    /// `ok`, or the error code the parent got.
    pub outcome: Outcome,
    /// Model requests it made.
    pub steps: usize,
    /// Tokens of its own requests (its workers' are theirs).
    pub usage: Usage,
    /// Wall time, waiting for a slot included.
    pub duration_ms: u64,
    /// Its tool calls, in order.
    pub actions: Vec<Action>,
    /// The workers it started.
    pub workers: Vec<WorkerSummary>,
}

/// The verdict of one review round (`--review`).
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Review {
    /// 1 for the first answer, 2 for the answer after a revision.
    pub round: usize,
    /// `pass` or `revise`; `None` when the reviewer failed.
    pub verdict: Option<Verdict>,
    /// What the reviewer found.
    pub issues: Vec<String>,
    /// Why the reviewer failed, when it did.
    pub error: Option<String>,
}
