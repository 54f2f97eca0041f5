//! The records that link the parts of a rotating log, and the signed head
//! that ends a log.

use super::Record;
use serde::{Deserialize, Serialize};

/// `log_rotated`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct LogRotated {
    /// The next part's file name.
    pub next: Option<String>,
    /// The public key that signed this part's head (hex); absent in logs
    /// of earlier versions.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    /// The Ed25519 signature of the head (hex), over
    /// [`head_message`](crate::harness::audit::head_message).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub signature: Option<String>,
}

/// `log_sealed`: the last record of a finished log, a signed head over
/// every line before it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct LogSealed {
    /// How many records came before it.
    pub records: u64,
    /// The public key that signed it (hex).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    /// The Ed25519 signature (hex), over
    /// [`head_message`](crate::harness::audit::head_message).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub signature: Option<String>,
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
