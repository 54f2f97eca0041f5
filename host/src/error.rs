//! The outcome of a tool call that did not succeed, as the model and scripts see it.

use serde::Serialize;
use std::fmt;

/// Stable error codes of a failed tool call (also the `error_code` field of
/// `reach call`'s JSON error output).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, serde::Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
#[non_exhaustive]
pub enum ErrorCode {
    /// The skill or tool does not exist (or its skill failed to load).
    NoSuchTool,
    /// The arguments do not match the tool's JSON Schema or meaning.
    InvalidArgs,
    /// The permission table forbids it (level `deny`, a folder or host not granted, no
    /// confirmation).
    Denied,
    /// Something the tool was asked about does not exist.
    NotFound,
    /// The call ran past its wall-time limit.
    Timeout,
    /// The skill tried to use more memory than its limit.
    OutOfMemory,
    /// The result was larger than the skill's output limit.
    OutputTooLarge,
    /// The skill crashed (a panic or other WebAssembly trap).
    Trap,
    /// Any other failure reported by the skill or the host.
    Failed,
    /// A worker (`agents__delegate`) stopped without an answer: its step
    /// limit, no progress, its model failed.
    WorkerFailed,
    /// A worker's answer did not match the `return_format` asked for, even
    /// after it was asked once to fix it.
    InvalidOutput,
    /// A token budget (the worker's or the whole run's) is used up.
    Budget,
    /// A delegation limit: too deep, too many workers in the run, or the
    /// same delegation again.
    Limit,
    /// The server is not serving tools: its permission table (or skills
    /// folder) did not load on reload, and it stays closed until one does.
    Unavailable,
}

impl ErrorCode {
    /// The code as written in JSON (`"OUT_OF_MEMORY"`).
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::NoSuchTool => "NO_SUCH_TOOL",
            ErrorCode::InvalidArgs => "INVALID_ARGS",
            ErrorCode::Denied => "DENIED",
            ErrorCode::NotFound => "NOT_FOUND",
            ErrorCode::Timeout => "TIMEOUT",
            ErrorCode::OutOfMemory => "OUT_OF_MEMORY",
            ErrorCode::OutputTooLarge => "OUTPUT_TOO_LARGE",
            ErrorCode::Trap => "TRAP",
            ErrorCode::Failed => "FAILED",
            ErrorCode::WorkerFailed => "WORKER_FAILED",
            ErrorCode::InvalidOutput => "INVALID_OUTPUT",
            ErrorCode::Budget => "BUDGET",
            ErrorCode::Limit => "LIMIT",
            ErrorCode::Unavailable => "UNAVAILABLE",
        }
    }

    /// A hint for the model (or the operator) on what to do next.
    pub fn suggestion(self) -> &'static str {
        match self {
            ErrorCode::NoSuchTool => "Call one of the tools that are listed.",
            ErrorCode::InvalidArgs => {
                "Fix the arguments so they match the tool's schema, then call again."
            }
            ErrorCode::Denied => {
                "Nothing was done. Do not retry: the permission table does not allow this. Tell \
                 the user it is not allowed, or use a granted folder or host if that still does \
                 the task."
            }
            ErrorCode::NotFound => "Check the name or path; list what exists first.",
            ErrorCode::Timeout => {
                "Ask for less work per call (smaller input, narrower search), or ask the operator \
                 to raise timeout_ms."
            }
            ErrorCode::OutOfMemory => {
                "Ask for less data per call, or ask the operator to raise memory_mb."
            }
            ErrorCode::OutputTooLarge => {
                "Ask for a smaller result (offset/limit, a narrower pattern), or ask the operator \
                 to raise max_output_kb."
            }
            ErrorCode::Trap => {
                "The skill crashed; retrying with the same arguments will crash again. Try \
                 different arguments or another tool."
            }
            ErrorCode::Failed => {
                "Read the error, adjust the arguments, and try again if it makes sense."
            }
            ErrorCode::WorkerFailed => {
                "Give the worker a smaller, clearer task, use what it reported, or do this part \
                 yourself."
            }
            ErrorCode::InvalidOutput => {
                "Ask for a simpler return_format, or use the worker's text in `error` as it is."
            }
            ErrorCode::Budget => {
                "Stop delegating: answer with what you have, and say what is left undone."
            }
            ErrorCode::Limit => {
                "Do not start more workers for this: use the results you have, or do it yourself \
                 with your own tools."
            }
            ErrorCode::Unavailable => {
                "Nothing was done. No tool can run until the operator fixes what the error names; \
                 do not retry. Tell the user what the error says."
            }
        }
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A failed tool call: code, message, and a suggestion for the model.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ToolFailure {
    /// What kind of failure.
    #[serde(rename = "error_code")]
    pub code: ErrorCode,
    /// What went wrong, naming the skill, capability and argument involved.
    #[serde(rename = "error")]
    pub message: String,
}

impl ToolFailure {
    /// A failure with this code and message.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        ToolFailure { code, message: message.into() }
    }

    /// The JSON object a model or script receives:
    /// `{"status":"error","error_code":…,"error":…,"suggestion":…}`.
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::json!({
            "status": "error",
            "error_code": self.code.as_str(),
            "error": self.message,
            "suggestion": self.code.suggestion(),
        })
    }
}

impl fmt::Display for ToolFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.code, self.message)
    }
}

impl std::error::Error for ToolFailure {}
