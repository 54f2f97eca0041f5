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

mod call;
mod log;
mod memory;
mod run;
mod team;

pub use call::{CallEnded, CallHead, CallOutcome, Decided, Decision};
pub use log::{LogContinued, LogRotated, LogSealed};
pub use memory::{MemoryError, MemoryRecalled, MemoryRemembered};
pub use run::{
    AnswerFormat, AnswerQuestioned, CheckpointBy, Compaction, CompactionSkipped, Ended, FrontEnd,
    FrontStop, ModelReply, ModelRequest, RunFinished, RunStarted, SkillOpened, SkillsChosen,
    ToolCallsDropped, Undone, UserMessage,
};
pub use team::{
    DelegationFinished, DelegationStarted, Outcome, ReviewFinished, ReviewStarted, Verdict,
};

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

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
    /// The signed head that ends a finished log.
    LogSealed(LogSealed) = "log_sealed",
    /// `reach runs undo` put a run's changes back.
    Undone(Undone) = "undone",
}

/// The record's own keys, besides the body's (and the chain's `seq` and
/// `prev`, which belong to the line's place in the file).
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
        // The hash chain's place (see `chain`): the file's, not the record's.
        if map.get("seq").is_some_and(Value::is_u64)
            && map.get("prev").is_some_and(Value::is_string)
        {
            map.remove("seq");
            map.remove("prev");
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
