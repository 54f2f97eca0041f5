//! The records of a run's own loop: its start and end, the model's
//! requests, compaction and the questions the harness asks.

use super::super::super::disclosure::{Disclosure, Score};
use super::super::super::{BundleBody, Review, Stop};
use super::nullable;
use crate::model::{ToolCall, Usage};
use serde::{Deserialize, Serialize};

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
    /// When bundles' instructions are given: `up-front` (a `skill_opened`
    /// before the first `model_request` is the harness's) or `on-activation`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bundle_body: Option<BundleBody>,
    /// The step limit (what a replay runs under).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_steps: Option<usize>,
    /// The token budget, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub token_budget: Option<u64>,
    /// Tool parameters were offered compacted.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub compact_schemas: Option<bool>,
    /// The kind of task, if given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub task_type: Option<String>,
    /// The review criteria, if the run was reviewed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub review: Option<String>,
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
    /// `reach runs undo`: a run's changes put back.
    Undo,
}

/// `undone`: what `reach runs undo` put back, and what it left alone.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Undone {
    /// The run undone.
    pub of_run: String,
    /// From which step (0: the whole run).
    pub from_step: u64,
    /// Whether paths changed since were put back too.
    pub force: bool,
    /// Paths put back.
    pub restored: Vec<String>,
    /// Paths changed since the run, left alone.
    pub conflicts: Vec<String>,
    /// Paths that could not be put back, with why.
    pub failed: Vec<String>,
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

/// What the model answered, as it came (before the harness read calls out
/// of its text, secrets masked): what a replay answers with.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct ModelReply {
    /// Its text.
    pub content: String,
    /// Its tool calls, arguments as written.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCall>,
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
    /// The answer itself.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reply: Option<ModelReply>,
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
    /// The model's answer to the checkpoint request, when it gave one
    /// (what a replay answers with).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reply: Option<ModelReply>,
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
                Stop::NotRecorded(_) => "not_recorded",
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
