//! The records that link the parts of a rotating log.

use super::Record;
use serde::{Deserialize, Serialize};

/// `log_rotated`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct LogRotated {
    /// The next part's file name.
    pub next: Option<String>,
}

/// `log_continued`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct LogContinued {
    /// This part's number (the first is 1).
    pub part: u32,
    /// The previous part's file name.
    pub previous: Option<String>,
    /// The log's first record, so each part says what it is a log of.
    pub run_started: Option<Box<Record>>,
}
