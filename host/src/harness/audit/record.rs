//! The audit log's records as types: what every writer (the harness, its
//! workers, `reach call`, `reach mcp`) puts on disk, and what every reader
//! (`reach runs`, the events, an evaluation) decodes.
//!
//! A line is a [`Record`]: `event` (which [`Body`]), `time`, `run_id`, a
//! worker's `worker` and `worker_agent`, and the body's own fields. The
//! JSON is what the untyped records of earlier versions were, field for
//! field and value for value (`host/tests/fixtures/audit` holds logs they
//! wrote; a test decodes every line and encodes it back to the same JSON).
//!
//! Front ends write different fields for the same event (`reach mcp` has
//! no `step`, a delegation's `tool_call_started` no `version`): a field
//! some leave out is an `Option` that is not written when `None`; a field
//! some leave out and others write as `null` is an `Option<Option<_>>`
//! (`None`: not written, `Some(None)`: `null`). Reading is lenient, as
//! indexing the JSON was: a missing field takes its default, and a record
//! that does not fit its type (or of an event this version does not know)
//! is kept whole as [`Body::Other`], never dropped.

use super::super::disclosure::{Disclosure, Score};
use super::super::{Review, Stop};
use crate::error::{ErrorCode, ToolFailure};
use crate::model::Usage;
use crate::policy::Level;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::fmt;

/// One line of an audit log.
#[derive(Clone, Debug, PartialEq)]
pub struct Record {
    /// When it was written (RFC 3339, UTC, milliseconds).
    pub time: String,
    /// The run it belongs to (a worker's records carry its run's id).
    pub run_id: String,
    /// The worker that wrote it; `None` for the run's own records.
    pub worker: Option<Worker>,
    /// What happened.
    pub body: Body,
    /// Fields the type has that the line did not: a log of another
    /// version (or made by hand) that left them out; not written back.
    unwritten: Vec<String>,
}

/// The worker a record is of (`worker`, `worker_agent`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Worker {
    /// Its task id: `t1`, `t1.2` (a worker's own), `review1` (a reviewer).
    pub task: String,
    /// Its profile (`[agents.NAME]`).
    pub agent: String,
}

/// The record types, each once: the enum, its `event` names and the
/// conversions all come from this list.
macro_rules! bodies {
    ($($(#[$doc:meta])* $variant:ident($type:ty) = $event:literal,)*) => {
        /// What a record says happened, by its `event`.
        #[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
        #[serde(tag = "event")]
        #[non_exhaustive]
        pub enum Body {
            $($(#[$doc])* #[serde(rename = $event)] $variant($type),)*
            /// A record this version does not know, or that does not fit its
            /// type: kept as it was.
            #[serde(skip)]
            Other {
                /// Its `event`.
                event: String,
                /// Its fields but `event`, `time`, `run_id`, `worker` and `worker_agent`.
                fields: Map<String, Value>,
            },
        }

        impl Body {
            /// The `event` of every typed record.
            pub const EVENTS: &[&str] = &[$($event),*];

            /// The `event` name.
            pub fn event(&self) -> &str {
                match self {
                    $(Body::$variant(_) => $event,)*
                    Body::Other { event, .. } => event,
                }
            }
        }

        // A record's type is the body it makes: `log.record(UserMessage { .. })`.
        $(impl From<$type> for Body {
            fn from(record: $type) -> Body {
                Body::$variant(record)
            }
        })*
    };
}

bodies! {
    /// A run, a worker, `reach call` or `reach mcp` began.
    RunStarted(RunStarted) = "run_started",
    /// The skills whose tools a run offers, chosen from the task's words.
    SkillsChosen(SkillsChosen) = "skills_chosen",
    /// The person said something while the run went on.
    UserMessage(UserMessage) = "user_message",
    /// The model answered a request, or failed to.
    ModelRequest(ModelRequest) = "model_request",
    /// A call is about to be checked and run.
    ToolCallStarted(CallHead) = "tool_call_started",
    /// A call needed a decision beyond `auto`, and this is it.
    Decision(Decided) = "decision",
    /// A call ended (or, over MCP, was refused before it ran).
    ToolCall(CallEnded) = "tool_call",
    /// A skill's tools were opened (on-demand disclosure).
    SkillOpened(SkillOpened) = "skill_opened",
    /// Older turns were replaced by a checkpoint.
    Compaction(Compaction) = "compaction",
    /// A compaction was needed and there was nothing to replace.
    CompactionSkipped(CompactionSkipped) = "compaction_skipped",
    /// An answer was sent back to the model with a question.
    AnswerQuestioned(AnswerQuestioned) = "answer_questioned",
    /// A worker's answer did not match its return format.
    AnswerFormat(AnswerFormat) = "answer_format",
    /// A reply made more calls than run.
    ToolCallsDropped(ToolCallsDropped) = "tool_calls_dropped",
    /// The long-term memory could not be read.
    MemoryError(MemoryError) = "memory_error",
    /// Notes from the long-term memory went into the prompt.
    MemoryRecalled(MemoryRecalled) = "memory_recalled",
    /// A note was kept.
    MemoryRemembered(MemoryRemembered) = "memory_remembered",
    /// A worker starts.
    DelegationStarted(DelegationStarted) = "delegation_started",
    /// A delegation ended, or was refused before a worker started.
    DelegationFinished(DelegationFinished) = "delegation_finished",
    /// A reviewer starts on the run's answer.
    ReviewStarted(ReviewStarted) = "review_started",
    /// A reviewer judged the run's answer.
    ReviewFinished(ReviewFinished) = "review_finished",
    /// The run ended.
    RunFinished(RunFinished) = "run_finished",
    /// The last record of a part of a rotating log.
    LogRotated(LogRotated) = "log_rotated",
    /// The first record of the next part.
    LogContinued(LogContinued) = "log_continued",
}

/// `run_started`: the loop's settings, or (`kind`) the front end's.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct RunStarted {
    /// `call` or `mcp` for the front ends' logs; `None` for an agent loop.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kind: Option<FrontEnd>,
    /// The task as given (a front end's says what it is).
    pub task: String,
    /// The model's name; `None` for a front end.
    pub model: Option<String>,
    /// The tools offered, by the names the model calls them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tools: Option<Vec<String>>,
    /// How tools are offered.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub disclose: Option<Disclosure>,
    /// The context window, in tokens.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub context_tokens: Option<u64>,
    /// Where the context window came from.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub context_source: Option<String>,
    /// Percent of the window at which older turns are compacted.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub compact_at: Option<u8>,
}

impl RunStarted {
    /// The first record of `reach call`'s or `reach mcp`'s log, `task`
    /// saying what it is.
    pub fn of_front(kind: FrontEnd, task: String) -> RunStarted {
        RunStarted { kind: Some(kind), task, model: None, ..RunStarted::default() }
    }
}

/// A front end that writes a log without a model.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FrontEnd {
    /// `reach call`: one call.
    Call,
    /// `reach mcp`: every call of a server's clients.
    Mcp,
}

/// `skills_chosen`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct SkillsChosen {
    /// The skills opened, best first.
    pub chosen: Vec<String>,
    /// Every skill's score against the task.
    pub scores: Vec<Score>,
    /// No skill was chosen, so every tool is offered.
    pub offer_all: bool,
}

/// `user_message`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct UserMessage {
    /// The step it joined before.
    pub step: usize,
    /// What the person said (secrets masked).
    pub text: String,
}

/// `model_request`: answered (`usage` and the calls) or failed (`error`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ModelRequest {
    /// The step (one request each).
    pub step: usize,
    /// The model, as its server named it.
    pub model: String,
    /// Messages sent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub messages: Option<usize>,
    /// Tokens used; `None` when the request failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub usage: Option<Usage>,
    /// Wall time of the request.
    pub latency_ms: u64,
    /// Calls in the answer, calls written as text included.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_calls: Option<usize>,
    /// The call was read from the answer's text.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub text_call: Option<bool>,
    /// Characters of the answer's text.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub text_chars: Option<usize>,
    /// A call the text described (asked about, or run).
    #[serde(skip_serializing_if = "Option::is_none", with = "nullable")]
    pub described_call: Option<Option<String>>,
    /// A call that ran, restated as the answer.
    #[serde(skip_serializing_if = "Option::is_none", with = "nullable")]
    pub restated_call: Option<Option<String>>,
    /// Why the request failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

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

/// How a call's permission level was decided.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum Decision {
    /// Level `auto`: it ran without asking.
    Auto,
    /// Level `confirm`, and the [`Confirmer`](crate::Confirmer) allowed it.
    Confirmed,
    /// Level `confirm`, and the confirmer refused it: nothing ran.
    Declined,
    /// Forbidden (level `deny`, or a refusal the model already got once):
    /// nothing ran.
    Denied,
    /// The call never reached the level check (no such tool, invalid
    /// arguments).
    #[serde(rename = "-")]
    NotReached,
}

impl Decision {
    /// The decision as the audit log writes it (`confirmed`, `-`).
    pub fn as_str(self) -> &'static str {
        match self {
            Decision::Auto => "auto",
            Decision::Confirmed => "confirmed",
            Decision::Declined => "declined",
            Decision::Denied => "denied",
            Decision::NotReached => "-",
        }
    }

    /// The decision written `name`; anything else did not reach the check.
    pub fn named(name: &str) -> Decision {
        [Decision::Auto, Decision::Confirmed, Decision::Declined, Decision::Denied]
            .into_iter()
            .find(|d| d.as_str() == name)
            .unwrap_or(Decision::NotReached)
    }
}

impl fmt::Display for Decision {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
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

/// `skill_opened`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct SkillOpened {
    /// The skill.
    pub skill: String,
}

/// `compaction`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Compaction {
    /// The step about to be sent.
    pub step: usize,
    /// Estimated tokens of the request before.
    pub tokens_before: u64,
    /// And after.
    pub tokens_after: u64,
    /// Tokens at which a compaction is due.
    pub threshold: u64,
    /// The context window.
    pub context_tokens: u64,
    /// Messages replaced by the checkpoint.
    pub replaced_messages: usize,
    /// The person's messages among them (kept verbatim).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kept_person_messages: Option<usize>,
    /// Who wrote the checkpoint.
    pub checkpoint_by: CheckpointBy,
    /// Why the model did not, when it did not.
    pub error: Option<String>,
    /// Wall time of the model's request.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub latency_ms: Option<u64>,
    /// The checkpoint (secrets masked).
    pub checkpoint: String,
}

/// Who wrote a compaction's checkpoint.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CheckpointBy {
    /// The model.
    #[default]
    Model,
    /// The harness, when the model failed or wrote nothing.
    Harness,
}

impl CheckpointBy {
    /// The name the log writes.
    pub fn as_str(self) -> &'static str {
        match self {
            CheckpointBy::Model => "model",
            CheckpointBy::Harness => "harness",
        }
    }
}

/// `compaction_skipped`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct CompactionSkipped {
    /// The step about to be sent.
    pub step: usize,
    /// Estimated tokens of the request.
    pub tokens: u64,
    /// Tokens at which a compaction is due.
    pub threshold: u64,
    /// Why it could not be done.
    pub reason: String,
}

/// `answer_questioned`: one of the three reasons.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct AnswerQuestioned {
    /// The step of the answer.
    pub step: usize,
    /// What it names that no tool returned.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unsupported: Option<Vec<String>>,
    /// It announced a delegation it did not make.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub promised_delegation: Option<bool>,
    /// It was asked whether a piece of the task is left.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pieces_left: Option<bool>,
}

/// `answer_format`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct AnswerFormat {
    /// The step of the answer.
    pub step: usize,
    /// How it misses the format.
    pub errors: Vec<String>,
}

/// `tool_calls_dropped`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ToolCallsDropped {
    /// The step of the reply.
    pub step: usize,
    /// Calls it made.
    pub made: usize,
    /// Calls that ran.
    pub run: usize,
}

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

/// `run_finished`: the loop's report, or a front end's count.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunFinished {
    /// Why it stopped.
    pub stop: Ended,
    /// The model's answer (a loop's; `Some(None)` when it gave none).
    #[serde(default, skip_serializing_if = "Option::is_none", with = "nullable")]
    pub answer: Option<Option<String>>,
    /// Model requests made.
    #[serde(default)]
    pub steps: usize,
    /// Tokens used.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<Usage>,
    /// Tool calls made.
    #[serde(default)]
    pub tool_calls: usize,
    /// Workers the run started.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workers: Option<usize>,
    /// The review rounds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reviews: Option<Vec<Review>>,
}

impl RunFinished {
    /// The last record of a front end's log, after `tool_calls` calls.
    pub fn of_front(stop: FrontStop, tool_calls: usize) -> RunFinished {
        RunFinished {
            stop: Ended::Front(stop),
            answer: None,
            steps: 0,
            usage: None,
            tool_calls,
            workers: None,
            reviews: None,
        }
    }
}

/// Why a log's run ended: a loop's [`Stop`], or a front end's.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Ended {
    /// An agent loop stopped.
    Run(Stop),
    /// `reach call` or `reach mcp` ended.
    Front(FrontStop),
}

impl Ended {
    /// The `reason` as written (`answered`, `max_steps`, `ok`).
    pub fn reason(&self) -> &'static str {
        match self {
            Ended::Run(stop) => match stop {
                Stop::Answered => "answered",
                Stop::MaxSteps => "max_steps",
                Stop::TokenBudget => "token_budget",
                Stop::NoProgress => "no_progress",
                Stop::Declined => "declined",
                Stop::ModelError(_) => "model_error",
            },
            Ended::Front(FrontStop::Ok) => "ok",
            Ended::Front(FrontStop::Error) => "error",
        }
    }
}

/// How a front end's log ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "reason", rename_all = "lowercase")]
pub enum FrontStop {
    /// The call succeeded, or the server stopped serving.
    Ok,
    /// `reach call`'s call failed.
    Error,
}

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

/// The record's own keys, besides the body's.
const FRAME: [&str; 5] = ["event", "time", "run_id", "worker", "worker_agent"];

impl Body {
    /// The body of `event` with `fields`: typed when the type keeps every
    /// field as it is (a field it has that `fields` lacks takes its
    /// default), else [`Body::Other`].
    pub fn from_json(event: &str, fields: Value) -> Body {
        let fields = match fields {
            Value::Object(map) => map,
            Value::Null => Map::new(),
            other => Map::from_iter([("value".to_owned(), other)]),
        };
        let mut tagged = fields.clone();
        tagged.insert("event".into(), Value::String(event.to_owned()));
        if let Ok(body) = serde_json::from_value::<Body>(Value::Object(tagged)) {
            let typed = body.fields();
            if fields.iter().all(|(k, v)| typed.get(k) == Some(v)) {
                return body;
            }
        }
        Body::Other { event: event.to_owned(), fields }
    }

    /// The body's fields, `event` not among them.
    pub fn fields(&self) -> Map<String, Value> {
        match self {
            Body::Other { fields, .. } => fields.clone(),
            known => match serde_json::to_value(known) {
                Ok(Value::Object(mut map)) => {
                    map.remove("event");
                    map
                }
                // Every body is a struct: serialised as an object.
                _ => Map::new(),
            },
        }
    }
}

impl Record {
    /// A record of `body` in run `run_id`, written at `time`.
    pub fn new(time: String, run_id: String, worker: Option<Worker>, body: Body) -> Record {
        Record { time, run_id, worker, body, unwritten: Vec::new() }
    }

    /// The record as the JSON object a log line holds.
    pub fn to_value(&self) -> Value {
        let mut line = self.body.fields();
        for key in &self.unwritten {
            line.remove(key);
        }
        self.frame(&mut line);
        Value::Object(line)
    }

    /// `line` (a body's fields, masked or not) framed as a log line: with
    /// `event`, `time`, `run_id` and the worker's fields.
    pub(crate) fn frame(&self, line: &mut Map<String, Value>) {
        line.insert("event".into(), Value::String(self.body.event().to_owned()));
        line.insert("time".into(), Value::String(self.time.clone()));
        line.insert("run_id".into(), Value::String(self.run_id.clone()));
        if let Some(worker) = &self.worker {
            line.insert("worker".into(), Value::String(worker.task.clone()));
            line.insert("worker_agent".into(), Value::String(worker.agent.clone()));
        }
    }

    /// The record in a log line's JSON, or `None` when it is not an object
    /// with an `event`. Whatever does not fit a type is kept as
    /// [`Body::Other`], so encoding the record gives the line back.
    pub fn from_value(line: Value) -> Option<Record> {
        let Value::Object(mut map) = line else { return None };
        let event = map.get("event")?.as_str()?.to_owned();
        let text = |key: &str| map.get(key).and_then(Value::as_str).map(str::to_owned);
        let (time, run_id) = (text("time").unwrap_or_default(), text("run_id").unwrap_or_default());
        let worker = text("worker")
            .map(|task| Worker { task, agent: text("worker_agent").unwrap_or_default() });
        // A frame key that is not text stays with the body, which then
        // cannot be typed and keeps it.
        for key in FRAME {
            if map.get(key).is_none_or(Value::is_string) {
                map.remove(key);
            }
        }
        let body = Body::from_json(&event, Value::Object(map.clone()));
        // A field the line leaves out took its default: left out again when
        // the record is written.
        let unwritten = match &body {
            Body::Other { .. } => Vec::new(),
            typed => typed.fields().keys().filter(|k| !map.contains_key(*k)).cloned().collect(),
        };
        Some(Record { time, run_id, worker, body, unwritten })
    }

    /// True when the typed body is the whole line: no field of the line
    /// was left untyped, and none of the type's was missing from it.
    pub fn fits(&self) -> bool {
        !matches!(self.body, Body::Other { .. }) && self.unwritten.is_empty()
    }

    /// The worker's task id, if a worker wrote it.
    pub fn worker_task(&self) -> Option<&str> {
        self.worker.as_ref().map(|w| w.task.as_str())
    }
}

impl Serialize for Record {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.to_value().serialize(s)
    }
}

impl<'de> Deserialize<'de> for Record {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Record, D::Error> {
        Record::from_value(Value::deserialize(d)?).ok_or_else(|| {
            serde::de::Error::custom("an audit record is a JSON object with an `event`")
        })
    }
}

/// A field some writers leave out and others write as `null`: the outer
/// `Option` is whether it is written.
mod nullable {
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    pub fn serialize<T: Serialize, S: Serializer>(
        value: &Option<Option<T>>,
        s: S,
    ) -> Result<S::Ok, S::Error> {
        match value {
            Some(inner) => inner.serialize(s),
            None => s.serialize_none(),
        }
    }

    pub fn deserialize<'de, T: Deserialize<'de>, D: Deserializer<'de>>(
        d: D,
    ) -> Result<Option<Option<T>>, D::Error> {
        Option::<T>::deserialize(d).map(Some)
    }
}

#[cfg(test)]
mod tests;
