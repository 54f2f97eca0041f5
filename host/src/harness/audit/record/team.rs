//! The records of the run's workers and reviewers: delegations and
//! reviews, as the loop that started them writes them.

use crate::error::ErrorCode;
use crate::model::Usage;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::fmt;

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

/// How a delegation ended: `ok`, or the error code its parent got.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Outcome {
    /// The worker's answer came back in its format.
    #[default]
    Ok,
    /// It did not (or no worker started).
    Failed(ErrorCode),
}

impl Outcome {
    /// As the log writes it: `ok`, `INVALID_OUTPUT`, ….
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Ok => "ok",
            Outcome::Failed(code) => code.as_str(),
        }
    }
}

impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for Outcome {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for Outcome {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Outcome, D::Error> {
        let text = String::deserialize(d)?;
        if text == "ok" {
            return Ok(Outcome::Ok);
        }
        ErrorCode::deserialize(serde::de::value::StrDeserializer::<D::Error>::new(&text))
            .map(Outcome::Failed)
    }
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

/// A reviewer's verdict.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    /// Every criterion is met.
    Pass,
    /// Not yet: the issues say what is missing.
    Revise,
}

impl Verdict {
    /// `pass` or `revise`.
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Pass => "pass",
            Verdict::Revise => "revise",
        }
    }

    /// The verdict written `name`, if it is one.
    pub fn named(name: &str) -> Option<Verdict> {
        [Verdict::Pass, Verdict::Revise].into_iter().find(|v| v.as_str() == name)
    }
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}
