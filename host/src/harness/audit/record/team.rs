//! The records of the run's workers and reviewers: delegations and
//! reviews, as the loop that started them writes them.

pub use crate::harness::outcome::{Outcome, Verdict};
use crate::model::Usage;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// `delegation_started`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct DelegationStarted {
    /// The step whose answer made the call.
    pub step: usize,
    /// The call's number.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub call: Option<usize>,
    /// The worker's task id.
    pub task_id: String,
    /// The worker's profile.
    pub agent: String,
    /// 1 for the run's workers.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub depth: Option<usize>,
    /// The task as the model wrote it.
    pub task: String,
    /// What the worker is to hand back.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expected_output: Option<String>,
    /// The JSON Schema of its answer.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub return_format: Option<Value>,
    /// The skills it was given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub skills: Option<Vec<String>>,
    /// Its step limit.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_steps: Option<usize>,
}

/// `delegation_finished`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct DelegationFinished {
    /// The step whose answer made the call.
    pub step: usize,
    /// The call's number (written when refused before a worker started).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub call: Option<usize>,
    /// The worker's task id; `None` when refused before one was given.
    pub task_id: Option<String>,
    /// The profile, as the call named it: what the model wrote, which
    /// need not be text.
    pub agent: Value,
    /// `ok`, or the error code the parent got.
    pub outcome: Outcome,
    /// What went wrong, when it did.
    pub error: Option<String>,
    /// What the worker handed back.
    pub output: Value,
    /// The worker's model requests.
    pub steps: usize,
    /// Tokens the worker used.
    pub usage: Usage,
    /// Wall time of the delegation.
    pub duration_ms: u64,
}

/// `review_started`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ReviewStarted {
    /// The review's number, from 1.
    pub round: usize,
    /// The reviewer's task id (`review1`).
    pub task_id: String,
    /// What it checks.
    pub criteria: String,
    /// The skills it reads with.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub skills: Option<Vec<String>>,
}

/// `review_finished`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ReviewFinished {
    /// The review's number, from 1.
    pub round: usize,
    /// The reviewer's task id.
    pub task_id: String,
    /// `None` when the reviewer gave none (it failed).
    pub verdict: Option<Verdict>,
    /// What the reviewer wants changed.
    pub issues: Vec<String>,
    /// Why it failed, when it did.
    pub error: Option<String>,
    /// Tokens the reviewer used.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub usage: Option<Usage>,
    /// Wall time of the review.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<u64>,
}
