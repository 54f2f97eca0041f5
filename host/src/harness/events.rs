//! What a run does, as it happens: typed [`Event`]s for an embedder's
//! progress display, log shipper or dashboard.
//!
//! Events are read back from the audit log's records ([`super::audit`]):
//! each is made from the very record the log writes, after secrets are
//! masked, so the audit log and the events never disagree and an event
//! never carries a secret the log would not. The log holds more (the wasm
//! hash of each skill, result digests, compaction checkpoints, memory
//! notes); the events are what a person watching a run wants to see.
//!
//! Events go through a bounded channel that never holds the run up: when
//! the consumer falls behind and the channel is full, events are dropped
//! and counted, and the consumer gets an [`Event::Lagged`] with the count
//! once there is room again (or when the run ends). The audit log is the
//! complete record; the events are a view of it.

use super::audit::record::Record;
use crate::error::ErrorCode;
use crate::harness::{Outcome, Stop, Verdict};
use crate::model::Usage;
use serde_json::Value;

mod channel;
mod decode;
mod display;
#[cfg(test)]
mod tests;

pub(crate) use channel::{EventReceiver, EventSender, channel};

pub use super::audit::record::Decision;

/// Something that happened in a run, in the order it happened.
///
/// Each variant but [`Event::Lagged`] is an audit log record (named in its
/// doc) seen through a type: same values, same masking. Steps and calls are
/// numbered from 1 as in the log. Both the enum and its variants are
/// `#[non_exhaustive]`: match with `..`, and expect new kinds of event.
///
/// A worker (an agent the run delegated a task to) writes its records to
/// the same log; its events come wrapped in [`Event::Worker`], so that a
/// worker's `RunFinished` is never taken for the run's own.
///
/// `Display` gives one line for a person, with what the model or a tool
/// wrote escaped for a terminal.
///
/// ```
/// use agent_reach::Event;
///
/// fn show(event: &Event) {
///     match event {
///         Event::ToolCallFinished { tool, error_code: Some(code), .. } => {
///             eprintln!("{tool} failed: {code}")
///         }
///         Event::RunFinished { stop, .. } => eprintln!("stopped: {stop:?}"),
///         other => eprintln!("{other}"),
///     }
/// }
/// ```
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Event {
    /// The run began (`run_started`).
    #[non_exhaustive]
    RunStarted {
        /// The run's id: the audit log's file name, the report's `run_id`.
        run_id: String,
        /// The task as given (secrets masked).
        task: String,
        /// The model's name.
        model: String,
        /// The tools offered to the model, by the names it calls them.
        tools: Vec<String>,
        /// The context window the run works within, in tokens.
        context_tokens: u64,
    },
    /// The model answered a request, or failed to (`model_request`).
    #[non_exhaustive]
    ModelRequest {
        /// The step (one model request each).
        step: usize,
        /// The model, as its server named it.
        model: String,
        /// Wall time of the request.
        latency_ms: u64,
        /// Tokens this request used; `None` when it failed.
        #[serde(default)]
        usage: Option<Usage>,
        /// Tool calls in the answer, calls written as text included.
        #[serde(default)]
        tool_calls: usize,
        /// Why the request failed (the run stops); `None` when it was answered.
        #[serde(default)]
        error: Option<String>,
    },
    /// A tool call is about to be checked and run (`tool_call_started`).
    #[non_exhaustive]
    ToolCallStarted {
        /// The step whose answer made the call.
        step: usize,
        /// The call's number in the run.
        call: usize,
        /// The tool, as the model named it (`files__read`).
        tool: String,
        /// The skill behind the tool; `None` for built-in tools and unknown names.
        skill: Option<String>,
        /// The arguments as understood (repaired JSON where it could be
        /// read, else the model's text), secrets masked.
        arguments: Value,
    },
    /// A call needed a decision beyond `auto`, and this is it (`decision`):
    /// a person confirmed or declined it, or the table forbids it. Sent as
    /// soon as it is made, so before a confirmed call runs.
    #[non_exhaustive]
    Decision {
        /// The step whose answer made the call.
        step: usize,
        /// The call's number in the run.
        call: usize,
        /// The tool, as the model named it.
        tool: String,
        /// `Confirmed`, `Declined` or `Denied`.
        decision: Decision,
        /// Why it was refused, when it was.
        #[serde(default)]
        reason: Option<String>,
    },
    /// A tool call ended (`tool_call`): its result went back to the model.
    #[non_exhaustive]
    #[serde(rename = "tool_call")]
    ToolCallFinished {
        /// The step whose answer made the call.
        step: usize,
        /// The call's number in the run.
        call: usize,
        /// The tool, as the model named it.
        tool: String,
        /// The skill behind the tool, if any.
        skill: Option<String>,
        /// How its level was decided.
        decision: Decision,
        /// `None` when it succeeded; else what went wrong.
        error_code: Option<ErrorCode>,
        /// Wall time of the checks and the call.
        duration_ms: u64,
        /// Size of the result (or error) the model got, before it was cut
        /// to size.
        result_bytes: usize,
    },
    /// Older turns were replaced by a checkpoint to stay within the context
    /// window (`compaction`).
    #[non_exhaustive]
    Compaction {
        /// The step about to be sent.
        step: usize,
        /// Estimated tokens of the request before.
        tokens_before: u64,
        /// And after.
        tokens_after: u64,
        /// Messages replaced by the checkpoint.
        replaced_messages: usize,
        /// `model` when the model wrote the checkpoint, `harness` when the
        /// harness had to (the model failed or wrote nothing).
        checkpoint_by: String,
    },
    /// The run stopped (`run_finished`); the report has the details.
    #[non_exhaustive]
    RunFinished {
        /// Why.
        stop: Stop,
        /// The model's answer, when it gave one (secrets masked).
        answer: Option<String>,
        /// Model requests made.
        steps: usize,
        /// Tokens used, all requests.
        usage: Usage,
        /// Tool calls made.
        tool_calls: usize,
    },
    /// The model handed a task to a worker, which starts now
    /// (`delegation_started`); the worker's own events follow as
    /// [`Event::Worker`] with this `task_id`.
    #[non_exhaustive]
    DelegationStarted {
        /// The step whose answer made the `agents__delegate` call.
        step: usize,
        /// The worker's task id: `t1`, `t2` for the run's workers, `t1.1`
        /// for a worker's own.
        task_id: String,
        /// The worker's profile (`[agents.NAME]`).
        agent: String,
        /// How deep the worker is: 1 for the run's workers.
        depth: usize,
        /// The task as the model wrote it (secrets masked).
        task: String,
    },
    /// A delegation ended (`delegation_finished`), or was refused before a
    /// worker started (then `steps` is 0).
    #[non_exhaustive]
    DelegationFinished {
        /// The step whose answer made the call.
        step: usize,
        /// The worker's task id; `None` when the delegation was refused
        /// before a worker was given one.
        task_id: Option<String>,
        /// The worker's profile, as the call named it (empty when it did
        /// not name one).
        #[serde(default, deserialize_with = "text_or_empty")]
        agent: String,
        /// `ok`, or the error code (`WORKER_FAILED`, `INVALID_OUTPUT`,
        /// `BUDGET`, `LIMIT`, `DENIED`, …).
        outcome: Outcome,
        /// What went wrong, when it did.
        #[serde(default)]
        error: Option<String>,
        /// The worker's model requests.
        #[serde(default)]
        steps: usize,
        /// Tokens the worker used.
        #[serde(default)]
        usage: Usage,
        /// Wall time of the delegation.
        #[serde(default)]
        duration_ms: u64,
    },
    /// A reviewer judged the run's answer (`review_finished`).
    #[non_exhaustive]
    ReviewFinished {
        /// The review's number, from 1.
        round: usize,
        /// `pass` or `revise`; `None` when the reviewer gave no verdict
        /// (it failed).
        #[serde(default)]
        verdict: Option<Verdict>,
        /// What the reviewer wants changed.
        #[serde(default)]
        issues: Vec<String>,
    },
    /// An event of a worker (a record with `worker` and `worker_agent`).
    #[non_exhaustive]
    Worker {
        /// The worker's task id (`t1`, `t1.2`, `review1`): a worker's own
        /// workers are `t1.1`, `t1.2`, so the id says where it sits.
        task: String,
        /// The worker's profile.
        agent: String,
        /// What happened in the worker; never itself a `Worker`.
        #[serde(rename = "worker_event")]
        event: Box<Event>,
    },
    /// The consumer fell behind: this many events were dropped here, so
    /// that the run did not wait. Not an audit record; the log has them all.
    #[non_exhaustive]
    Lagged {
        /// Events dropped.
        missed: u64,
    },
}

/// A string field that a model filled in: its text, or empty when it wrote
/// none (`null`, a number).
fn text_or_empty<'de, D: serde::Deserializer<'de>>(value: D) -> Result<String, D::Error> {
    use serde::Deserialize;
    Ok(Value::deserialize(value)?.as_str().unwrap_or_default().to_owned())
}

/// The worker whose log record this is, by its task id (`t1`, `t1.2`,
/// `review1`: its `worker` field); `None` for the run's own records.
/// `delegation_*` and `review_*` records belong to the scope that started
/// the worker (their `task_id` names it).
pub fn worker_of(record: &Value) -> Option<&str> {
    record.get("worker")?.as_str()
}

impl Event {
    /// The event in an audit log line (a JSON object with an `event`
    /// field), or `None` for records that are not events. A worker's
    /// record is an [`Event::Worker`].
    pub fn from_record(line: &Value) -> Option<Event> {
        Event::of(&Record::from_value(line.clone())?)
    }

    /// The event a record is, if it is one: the view of the record a
    /// person watching the run wants (a worker's wrapped in
    /// [`Event::Worker`]).
    pub fn of(record: &Record) -> Option<Event> {
        // Looked at apart from the body: a worker's `run_finished` is a
        // `RunFinished` as well as the run's is.
        let event = Event::of_body(&record.body, &record.run_id)?;
        Some(match &record.worker {
            None => event,
            Some(worker) => Event::Worker {
                task: worker.task.clone(),
                agent: worker.agent.clone(),
                event: Box::new(event),
            },
        })
    }
}
