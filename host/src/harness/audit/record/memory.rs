//! The records of a run's long-term memory: what it recalled, what it
//! kept, and what went wrong.

use super::Decision;
use serde::{Deserialize, Serialize};

/// `memory_error`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct MemoryError {
    /// 0: before the first request.
    pub step: usize,
    /// What went wrong.
    pub error: String,
}

/// `memory_recalled`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct MemoryRecalled {
    /// 0: before the first request.
    pub step: usize,
    /// The notes given.
    pub entries: Vec<i64>,
    /// Their estimated tokens.
    pub tokens: u64,
}

/// `memory_remembered`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MemoryRemembered {
    /// The note kept (or already known).
    #[serde(default)]
    pub entry: Option<i64>,
    /// How its level was decided.
    pub decision: Decision,
}
