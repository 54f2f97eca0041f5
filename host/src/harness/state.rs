//! What one run holds while it goes: a [`RunState`] is made when
//! [`Harness::run`](super::Harness::run) starts, every step reads and adds
//! to it, and it becomes the report at the end. What used to be reset in
//! the [`Harness`](super::Harness) at the start of each run starts fresh
//! here instead; the harness keeps only what outlives a run (its tools,
//! its workbench, the delegations it made).

use super::answer::Nudges;
use super::compaction::{Budget, Calibration};
use super::conversation::Conversation;
use super::repair::TextCall;
use super::report::{Action, Review, WorkerSummary};
use crate::model::Usage;

/// The per-run state that every step reads and adds to.
pub(super) struct RunState {
    /// The run's id (also the audit log's name).
    pub(super) run_id: String,
    /// The task as given: the anchor of every checkpoint and reminder.
    pub(super) task: String,
    /// The notes given at the start of the run, rendered for the prompt.
    pub(super) remembered: String,
    pub(super) conversation: Conversation,
    /// Tokens of this loop's requests (its workers' are their own).
    pub(super) usage: Usage,
    /// Every tool call, in order.
    pub(super) actions: Vec<Action>,
    /// Every result the model was given, whole (masked): an answer is
    /// checked against them. Grows with `actions`.
    pub(super) results: Vec<String>,
    /// Each call as (name, canonical arguments), to see no progress.
    pub(super) recent: Vec<(String, String)>,
    /// The context window this run works against.
    pub(super) budget: Budget,
    /// How far the estimate was from the server's count last time.
    pub(super) calibration: Calibration,
    /// A compaction was needed and impossible once this run (said once).
    pub(super) compaction_skipped: bool,
    /// Model requests made.
    pub(super) steps: usize,
    /// The most requests: `max_steps`, raised once by a `revise` verdict
    /// (the executor's extra round).
    pub(super) step_limit: usize,
    /// The model's final answer (masked), once it gave one.
    pub(super) answer: Option<String>,
    /// The described call the model was just asked about, with what it said.
    pub(super) pending: Option<(TextCall, String)>,
    /// How often each of the harness's questions was asked.
    pub(super) nudges: Nudges,
    /// The review rounds, in order.
    pub(super) reviews: Vec<Review>,
    /// Delegations refused as repeats of an earlier one.
    pub(super) repeated: usize,
    /// Skills opened this run (on-demand disclosure).
    pub(super) opened: Vec<String>,
    /// This run offers every tool although skills are disclosed by task:
    /// the task's words pointed to none.
    pub(super) offer_all: bool,
    /// Workers started, for the report.
    pub(super) workers: Vec<WorkerSummary>,
}

impl RunState {
    /// A run of `task` that has made no request yet.
    pub(super) fn new(
        run_id: &str,
        task: &str,
        conversation: Conversation,
        budget: Budget,
        step_limit: usize,
    ) -> Self {
        RunState {
            run_id: run_id.to_owned(),
            task: task.to_owned(),
            remembered: String::new(),
            conversation,
            usage: Usage::default(),
            actions: Vec::new(),
            results: Vec::new(),
            recent: Vec::new(),
            budget,
            calibration: Calibration::default(),
            compaction_skipped: false,
            steps: 0,
            step_limit,
            answer: None,
            pending: None,
            nudges: Nudges::default(),
            reviews: Vec::new(),
            repeated: 0,
            opened: Vec::new(),
            offer_all: false,
            workers: Vec::new(),
        }
    }
}
