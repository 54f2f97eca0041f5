//! Tool errors: what went wrong, in a form the model can react to.

use std::fmt;

/// The kind of a tool failure; the host maps it to an error code the model sees.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ErrorCode {
    /// The arguments do not fit the tool (`INVALID_ARGS`).
    InvalidArguments,
    /// A named file, URL or item does not exist (`NOT_FOUND`).
    NotFound,
    /// The operator's permission table does not grant what was needed (`DENIED`).
    Denied,
    /// Anything else (`FAILED`).
    Failed,
}

/// A failed tool call: a code and a message that says what went wrong and,
/// where possible, how to fix it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ToolError {
    /// The kind of failure.
    pub code: ErrorCode,
    /// Human- and model-readable explanation.
    pub message: String,
}

impl ToolError {
    /// An error of the given kind.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        ToolError { code, message: message.into() }
    }

    /// The arguments are wrong.
    pub fn invalid_arguments(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::InvalidArguments, message)
    }

    /// Something named does not exist.
    pub fn not_found(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::NotFound, message)
    }

    /// The permission table does not allow it.
    pub fn denied(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::Denied, message)
    }

    /// Any other failure.
    pub fn failed(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::Failed, message)
    }
}

impl fmt::Display for ToolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}: {}", self.code, self.message)
    }
}

impl std::error::Error for ToolError {}

impl From<serde_json::Error> for ToolError {
    fn from(err: serde_json::Error) -> Self {
        ToolError::failed(format!("could not encode the result as JSON: {err}"))
    }
}
