//! What the harness says back to the model when a reply cannot be taken
//! as it is — a call described instead of made, an answer right after a
//! failure, a refusal or a 4xx, a restated call, an answer naming what no
//! tool returned — and how often in a run each is asked.

use super::repair;
use crate::error::{ErrorCode, ToolFailure};
use crate::text::shorten_chars;
use serde_json::Value;

/// How often in a run a model that described a call instead of making it
/// is asked whether to make it (see [`describe_back`]).
pub(super) const DESCRIBED_CALL_QUESTIONS: usize = 2;

/// The harness's question when the model described a call in prose:
/// nothing ran; one word says whether to run it. A one-word reply is what
/// small models manage reliably (asked to resend the call as JSON, the
/// local model repeats its prose instead).
pub(super) fn describe_back(call: &repair::TextCall) -> String {
    let json = Value::Object(call.arguments.clone());
    format!(
        "[harness] Nothing was run: your message describes a call to `{}` with {json} but does not make it. \
         Reply with exactly one word: CALL to run it now, or ANSWER if you did not mean to run it.",
        call.name
    )
}

/// Most tool calls run from one model reply.
pub(super) const MAX_CALLS_PER_REPLY: usize = 5;

/// Error codes a model can fix itself: another name, path or argument.
/// (A refusal is not one: `DENIED` is an answer to give the user.)
pub(super) const FIXABLE: [&str; 4] = ["INVALID_ARGS", "NOT_FOUND", "NO_SUCH_TOOL", "FAILED"];

/// How often in a run a model that answers right after a call failed with
/// a [`FIXABLE`] error is asked to try again (see [`retry_back`]).
pub(super) const RETRY_QUESTIONS: usize = 1;

/// The harness's note when the model gives up after a fixable error. The
/// error is repeated: what it says (a listing of the names that do exist,
/// the arguments the tool accepts) is what the next call needs.
pub(super) fn retry_back(tool: &str, code: &str, error: &str) -> String {
    format!(
        "[harness] Your last call, `{tool}`, failed ({code}): {}\nSo the task is not done yet. Fix what the error says — \
         the tool, the name or path, or the arguments — and call again. Answer only if it cannot be done.",
        shorten_chars(error, ERROR_CHARS)
    )
}

/// Most characters of an error message repeated in a harness note.
pub(super) const ERROR_CHARS: usize = 800;

/// The `error` text of a tool result that is a [`ToolFailure`] as JSON
/// (the whole result otherwise).
pub(super) fn error_text(result: &str) -> String {
    serde_json::from_str::<Value>(result)
        .ok()
        .and_then(|v| v.get("error").and_then(Value::as_str).map(str::to_owned))
        .unwrap_or_else(|| result.to_owned())
}

/// The HTTP status of a tool result that reports a client error (a JSON
/// object whose `status` is 400–499, as `http_api.request` and `web.fetch`
/// return it): an API's 404 or 400 is a result, not a tool failure, but the
/// task is no more done than after one.
pub(super) fn client_error(result: &str) -> Option<u16> {
    let value: Value = serde_json::from_str(result).ok()?;
    let status = value.get("status")?.as_u64()?;
    (400..500).contains(&status).then_some(status as u16)
}

/// The harness's note when the model answers right after a server said the
/// request was wrong. Untrusted text is not repeated here: the response is
/// in the conversation, and this note only says the task is not done.
pub(super) fn client_error_back(tool: &str, status: u16) -> String {
    format!(
        "[harness] Your last call, `{tool}`, got HTTP {status} from the server, so the task is not done yet. If the \
         response shows the right URL, id or parameter for the task, call again with it; answer only if it cannot be done."
    )
}

/// The failure for a call identical to one that was refused earlier in
/// the run: not run again.
pub(super) fn refused_again(tool: &str) -> ToolFailure {
    ToolFailure::new(
        ErrorCode::Denied,
        format!(
            "this exact call to `{tool}` was refused earlier in this run and is refused again; nothing was done. Tell the user it is not allowed."
        ),
    )
}

/// How often in a run an answer given after a refused call is sent back
/// (see [`denied_back`]).
pub(super) const DENIED_QUESTIONS: usize = 1;

/// The harness's note when the model answers right after a refused call: a
/// small model often reports as done what the sandbox refused.
pub(super) fn denied_back(tool: &str, error: &str) -> String {
    format!(
        "[harness] Check your answer against the result: `{tool}` was refused (DENIED) and did nothing: {}\n\
         Answer again: say plainly what was not done and why, and do not claim it was done.",
        shorten_chars(error, ERROR_CHARS)
    )
}

/// How often in a run an answer that only restates a call that already ran
/// is sent back (see [`restate_back`]).
pub(super) const RESTATE_QUESTIONS: usize = 1;

/// The harness's note when the model's answer describes a call that already
/// ran instead of answering from its result.
pub(super) fn restate_back(call: &repair::TextCall) -> String {
    format!(
        "[harness] `{}` already ran with those arguments; its result is above. Do not describe the call again: \
         answer the task now from that result, in plain words.",
        call.name
    )
}

/// How often in a run an answer that names what no tool returned is sent
/// back (see [`evidence_back`]).
pub(super) const EVIDENCE_QUESTIONS: usize = 1;

/// The harness's note when an answer names files or URLs that neither the
/// task nor any tool result contained.
pub(super) fn evidence_back(unsupported: &[String]) -> String {
    let names: Vec<String> = unsupported.iter().take(5).map(|n| format!("`{n}`")).collect();
    format!(
        "[harness] Your answer names {}, which neither the task nor any tool result contains. \
         If the answer depends on it, look it up with a tool first; otherwise answer again using only what the tools returned.",
        names.join(", ")
    )
}

/// True when a reply to [`describe_back`] picks `option`: a short reply
/// whose first word is the option (small models often echo the rest of it,
/// "CALL to run it now").
pub(super) fn says(reply: &str, option: &str) -> bool {
    let reply = reply.trim();
    let first =
        reply.split(|c: char| !c.is_ascii_alphanumeric()).find(|w| !w.is_empty()).unwrap_or("");
    reply.chars().count() <= 40 && first.eq_ignore_ascii_case(option)
}
