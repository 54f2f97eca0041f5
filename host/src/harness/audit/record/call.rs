//! The records around a tool call: `tool_call_started`, `decision`,
//! `tool_call`.

use super::nullable;
use crate::error::{ErrorCode, ToolFailure};
pub use crate::harness::outcome::Decision;
use crate::policy::Level;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// `tool_call_started`, and the part of `tool_call` that repeats it: the
/// call and what ran it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct CallHead {
    /// The step whose answer made the call; `None` over MCP.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub step: Option<usize>,
    /// The call's number (in the run, or the server's); `None` for a call
    /// refused before it was numbered.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub call: Option<usize>,
    /// The tool as named (`files__read`; `files.read` by `reach call` and MCP).
    pub tool: String,
    /// The skill behind the tool; `Some(None)` for a built-in tool.
    #[serde(skip_serializing_if = "Option::is_none", with = "nullable")]
    pub skill: Option<Option<String>>,
    /// The skill's version; `None` where it is not written (a delegation).
    #[serde(skip_serializing_if = "Option::is_none", with = "nullable")]
    pub version: Option<Option<String>>,
    /// The hash of the skill's component.
    #[serde(skip_serializing_if = "Option::is_none", with = "nullable")]
    pub wasm_hash: Option<Option<String>>,
    /// The arguments as understood (secrets masked).
    pub arguments: Value,
    /// The tool's level (`reach call` and MCP).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub level: Option<Level>,
    /// The MCP client's name, if it gave one.
    #[serde(skip_serializing_if = "Option::is_none", with = "nullable")]
    pub client: Option<Option<String>>,
}

impl CallHead {
    /// A call of a run: `call` of `step`, to `tool` of `skill` (`None`
    /// for a built-in), its `version` and `wasm_hash` written even when
    /// unknown; arguments to be added.
    pub fn of_run(
        step: usize,
        call: usize,
        tool: &str,
        skill: Option<String>,
        version: Option<String>,
        wasm_hash: Option<String>,
    ) -> CallHead {
        CallHead {
            step: Some(step),
            call: Some(call),
            tool: tool.to_owned(),
            skill: Some(skill),
            version: Some(version),
            wasm_hash: Some(wasm_hash),
            ..CallHead::default()
        }
    }

    /// A delegation (`agents__delegate`) made as call `call` of `step`:
    /// no skill behind it, and no version.
    pub fn of_delegation(step: usize, call: usize, tool: &str, arguments: Value) -> CallHead {
        CallHead {
            step: Some(step),
            call: Some(call),
            tool: tool.to_owned(),
            skill: Some(None),
            arguments,
            ..CallHead::default()
        }
    }
}

/// `tool_call`: the call and how it ended.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct CallEnded {
    /// The call (its arguments as it ran).
    #[serde(flatten)]
    pub head: CallHead,
    /// How its level was decided (the harness's calls).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub decision: Option<Decision>,
    /// `ok`, `error`, or (MCP) `refused` before it ran.
    pub outcome: CallOutcome,
    /// What went wrong, when it did.
    pub error_code: Option<ErrorCode>,
    /// Why it was refused (MCP).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Wall time of the checks and the call.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<u64>,
    /// Size of the result.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub result_bytes: Option<usize>,
    /// BLAKE3 of the result the model got.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub result_digest: Option<String>,
    /// The result may hold text from the network.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub network: Option<bool>,
}

impl CallEnded {
    /// `call` ended with `result` after `duration_ms`, `result_bytes` of
    /// it given back: what every front end writes of it.
    pub fn of<T>(
        call: CallHead,
        result: &Result<T, ToolFailure>,
        result_bytes: usize,
        duration_ms: u64,
    ) -> CallEnded {
        CallEnded {
            head: call,
            outcome: CallOutcome::of(result),
            error_code: result.as_ref().err().map(|f| f.code),
            duration_ms: Some(duration_ms),
            result_bytes: Some(result_bytes),
            ..CallEnded::default()
        }
    }
}

/// How a call ended, as `tool_call` writes it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CallOutcome {
    /// It returned a result.
    #[default]
    Ok,
    /// It ran, or was checked, and failed (`error_code` says how).
    Error,
    /// MCP: refused before it ran (unknown tool, a check, no confirmation).
    Refused,
}

impl CallOutcome {
    /// As the log writes it.
    pub fn as_str(self) -> &'static str {
        match self {
            CallOutcome::Ok => "ok",
            CallOutcome::Error => "error",
            CallOutcome::Refused => "refused",
        }
    }

    /// `ok` or `error`, as a call's result says.
    pub fn of<T>(result: &Result<T, ToolFailure>) -> CallOutcome {
        if result.is_ok() { CallOutcome::Ok } else { CallOutcome::Error }
    }
}

/// `decision`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Decided {
    /// The step whose answer made the call.
    #[serde(default)]
    pub step: usize,
    /// The call's number in the run.
    #[serde(default)]
    pub call: usize,
    /// The tool, as the model named it.
    #[serde(default)]
    pub tool: String,
    /// `confirmed`, `declined` or `denied`.
    pub decision: Decision,
    /// Why it was refused, when it was.
    #[serde(default)]
    pub reason: Option<String>,
}

impl Decided {
    /// The decision on call `call` of `step` to `tool`, and why it was
    /// refused when it was.
    pub fn new(
        step: usize,
        call: usize,
        tool: &str,
        decision: Decision,
        reason: Option<&str>,
    ) -> Decided {
        Decided { step, call, tool: tool.to_owned(), decision, reason: reason.map(str::to_owned) }
    }
}
