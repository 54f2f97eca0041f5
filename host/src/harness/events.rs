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

use super::audit::record::{Body, Ended, Record};
use crate::error::ErrorCode;
use crate::harness::Stop;
use crate::model::Usage;
use crate::text::{escape_for_terminal, shorten_chars};
use serde_json::Value;
use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use tokio::sync::mpsc;

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
        outcome: String,
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
        verdict: Option<String>,
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

    fn of_body(body: &Body, run_id: &str) -> Option<Event> {
        Some(match body {
            Body::RunStarted(r) => Event::RunStarted {
                run_id: run_id.to_owned(),
                task: r.task.clone(),
                model: r.model.clone().unwrap_or_default(),
                tools: r.tools.clone().unwrap_or_default(),
                context_tokens: r.context_tokens.unwrap_or_default(),
            },
            Body::ModelRequest(r) => Event::ModelRequest {
                step: r.step,
                model: r.model.clone(),
                latency_ms: r.latency_ms,
                usage: r.usage,
                tool_calls: r.tool_calls.unwrap_or_default(),
                error: r.error.clone(),
            },
            Body::ToolCallStarted(c) => Event::ToolCallStarted {
                step: c.step.unwrap_or_default(),
                call: c.call.unwrap_or_default(),
                tool: c.tool.clone(),
                skill: c.skill.clone().flatten(),
                arguments: c.arguments.clone(),
            },
            Body::Decision(d) => Event::Decision {
                step: d.step,
                call: d.call,
                tool: d.tool.clone(),
                decision: d.decision,
                reason: d.reason.clone(),
            },
            // A front end's calls have no decision: not an event.
            Body::ToolCall(c) => Event::ToolCallFinished {
                step: c.head.step.unwrap_or_default(),
                call: c.head.call.unwrap_or_default(),
                tool: c.head.tool.clone(),
                skill: c.head.skill.clone().flatten(),
                decision: c.decision?,
                error_code: c.error_code,
                duration_ms: c.duration_ms.unwrap_or_default(),
                result_bytes: c.result_bytes.unwrap_or_default(),
            },
            Body::Compaction(c) => Event::Compaction {
                step: c.step,
                tokens_before: c.tokens_before,
                tokens_after: c.tokens_after,
                replaced_messages: c.replaced_messages,
                checkpoint_by: c.checkpoint_by.as_str().to_owned(),
            },
            Body::RunFinished(r) => Event::RunFinished {
                stop: match &r.stop {
                    Ended::Run(stop) => stop.clone(),
                    // A front end's log has no event channel.
                    Ended::Front(_) => return None,
                },
                answer: r.answer.clone().flatten(),
                steps: r.steps,
                usage: r.usage.unwrap_or_default(),
                tool_calls: r.tool_calls,
            },
            Body::DelegationStarted(d) => Event::DelegationStarted {
                step: d.step,
                task_id: d.task_id.clone(),
                agent: d.agent.clone(),
                depth: d.depth.unwrap_or_default(),
                task: d.task.clone(),
            },
            Body::DelegationFinished(d) => Event::DelegationFinished {
                step: d.step,
                task_id: d.task_id.clone(),
                // What the model named, if it named it as text.
                agent: d.agent.as_str().unwrap_or_default().to_owned(),
                outcome: d.outcome.to_string(),
                error: d.error.clone(),
                steps: d.steps,
                usage: d.usage,
                duration_ms: d.duration_ms,
            },
            Body::ReviewFinished(r) => Event::ReviewFinished {
                round: r.round,
                verdict: r.verdict.map(|v| v.as_str().to_owned()),
                issues: r.issues.clone(),
            },
            Body::Other { event, .. } if EVENTS.contains(&event.as_str()) => {
                // The harness wrote a record its type cannot read: the two
                // drifted apart, which the tests must catch.
                tracing::error!(record = %event, "an audit record does not fit its event");
                debug_assert!(false, "audit record `{event}` does not fit its type");
                return None;
            }
            _ => return None,
        })
    }
}

/// The audit records that are also events.
const EVENTS: &[&str] = &[
    "run_started",
    "model_request",
    "tool_call_started",
    "decision",
    "tool_call",
    "compaction",
    "run_finished",
    "delegation_started",
    "delegation_finished",
    "review_finished",
];

/// Longest argument text shown by `Display`.
const SHOWN_ARGUMENTS: usize = 120;

impl fmt::Display for Event {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // The model's and the tools' words may hold terminal escapes.
        let shown = |text: &str| escape_for_terminal(text);
        match self {
            Event::RunStarted { run_id, model, tools, .. } => {
                write!(
                    f,
                    "run {} started: model {}, {} tool(s) offered",
                    shown(run_id),
                    shown(model),
                    tools.len()
                )
            }
            Event::ModelRequest { step, latency_ms, error: Some(error), .. } => {
                write!(f, "step {step}: the model failed after {latency_ms} ms: {}", shown(error))
            }
            Event::ModelRequest { step, latency_ms, usage, tool_calls, .. } => {
                let tokens = usage.map_or(0, |u| u.total());
                let what = match tool_calls {
                    0 => "an answer".to_owned(),
                    1 => "1 tool call".to_owned(),
                    n => format!("{n} tool calls"),
                };
                write!(
                    f,
                    "step {step}: the model replied with {what} ({latency_ms} ms, {tokens} tokens)"
                )
            }
            Event::ToolCallStarted { step, tool, arguments, .. } => {
                write!(
                    f,
                    "step {step}: {} {}",
                    shown(tool),
                    shown(&shorten_chars(&arguments.to_string(), SHOWN_ARGUMENTS))
                )
            }
            Event::Decision { step, tool, decision, reason, .. } => {
                write!(f, "step {step}: {} {decision}", shown(tool))?;
                match reason {
                    Some(reason) => write!(f, ": {}", shown(reason)),
                    None => Ok(()),
                }
            }
            Event::ToolCallFinished {
                step, tool, error_code, duration_ms, result_bytes, ..
            } => {
                let outcome = error_code.map_or("ok", ErrorCode::as_str);
                write!(
                    f,
                    "step {step}: {} → {outcome} ({duration_ms} ms, {result_bytes} bytes)",
                    shown(tool)
                )
            }
            Event::Compaction { step, tokens_before, tokens_after, .. } => {
                write!(
                    f,
                    "step {step}: context compacted, ~{tokens_before} → ~{tokens_after} tokens"
                )
            }
            Event::RunFinished { stop, steps, usage, tool_calls, .. } => {
                let why = match stop {
                    Stop::Answered => "the model answered".to_owned(),
                    Stop::MaxSteps => "step limit".to_owned(),
                    Stop::TokenBudget => "token budget used up".to_owned(),
                    Stop::NoProgress => "no progress".to_owned(),
                    Stop::Declined => "a person declined a call".to_owned(),
                    Stop::ModelError(e) => format!("the model failed: {}", shown(e)),
                };
                write!(
                    f,
                    "run finished ({why}): {steps} step(s), {tool_calls} tool call(s), {} tokens",
                    usage.total()
                )
            }
            Event::DelegationStarted { step, task_id, agent, depth, task, .. } => {
                let task = shorten_chars(task, SHOWN_ARGUMENTS);
                write!(
                    f,
                    "step {step}: worker {} ({}, depth {depth}) started: {}",
                    shown(task_id),
                    shown(agent),
                    shown(&task)
                )
            }
            Event::DelegationFinished { step, task_id: None, agent, outcome, error, .. } => {
                write!(
                    f,
                    "step {step}: delegation to {} refused: {}",
                    shown(agent),
                    shown(outcome)
                )?;
                match error {
                    Some(error) => write!(f, ": {}", shown(error)),
                    None => Ok(()),
                }
            }
            Event::DelegationFinished {
                step,
                task_id: Some(task_id),
                outcome,
                error,
                steps,
                usage,
                duration_ms,
                ..
            } => {
                write!(f, "step {step}: worker {} ", shown(task_id))?;
                match (outcome.as_str(), error) {
                    ("ok", _) => write!(f, "done")?,
                    (code, Some(error)) => write!(f, "failed: {}: {}", shown(code), shown(error))?,
                    (code, None) => write!(f, "failed: {}", shown(code))?,
                }
                write!(f, " ({steps} step(s), {} tokens, {duration_ms} ms)", usage.total())
            }
            Event::ReviewFinished { round, verdict, issues, .. } => match verdict {
                Some(verdict) if issues.is_empty() => {
                    write!(f, "review {round}: {}", shown(verdict))
                }
                Some(verdict) => {
                    let issues: Vec<String> = issues.iter().map(|i| shown(i)).collect();
                    write!(f, "review {round}: {} — {}", shown(verdict), issues.join("; "))
                }
                None => write!(f, "review {round}: no verdict"),
            },
            Event::Worker { task, agent, event, .. } => {
                write!(f, "[{} {}] {event}", shown(task), shown(agent))
            }
            Event::Lagged { missed } => {
                write!(f, "({missed} event(s) dropped: the consumer fell behind)")
            }
        }
    }
}

/// The sending half of a run's event channel: never waits, counts what it
/// drops.
#[derive(Clone)]
pub(crate) struct EventSender {
    tx: mpsc::Sender<Event>,
    /// Dropped and not yet reported; shared with the receiving side, which
    /// reports what is left once the run is over.
    missed: Arc<AtomicU64>,
}

/// The receiving half.
pub(crate) struct EventReceiver {
    rx: mpsc::Receiver<Event>,
    missed: Arc<AtomicU64>,
}

/// A channel for one run's events holding at most `capacity` (at least 2:
/// an event and the note of what was dropped before it).
pub(crate) fn channel(capacity: usize) -> (EventSender, EventReceiver) {
    let (tx, rx) = mpsc::channel(capacity.max(2));
    let missed = Arc::new(AtomicU64::new(0));
    (EventSender { tx, missed: Arc::clone(&missed) }, EventReceiver { rx, missed })
}

impl EventSender {
    /// Send the event of an audit record, if it is one.
    pub(crate) fn record(&self, record: &Record) {
        if let Some(event) = Event::of(record) {
            self.send(event);
        }
    }

    fn send(&self, event: Event) {
        let missed = self.missed.swap(0, Ordering::AcqRel);
        if missed == 0 {
            if let Err(mpsc::error::TrySendError::Full(_)) = self.tx.try_send(event) {
                self.missed.fetch_add(1, Ordering::AcqRel);
            }
            return;
        }
        // What was dropped is said first, where it was dropped.
        match self.tx.try_reserve_many(2) {
            Ok(mut permits) => {
                if let Some(permit) = permits.next() {
                    permit.send(Event::Lagged { missed });
                }
                if let Some(permit) = permits.next() {
                    permit.send(event);
                }
            }
            Err(mpsc::error::TrySendError::Full(())) => {
                self.missed.fetch_add(missed + 1, Ordering::AcqRel);
            }
            // No one is listening any more: nothing to count for.
            Err(mpsc::error::TrySendError::Closed(())) => {}
        }
    }
}

impl EventReceiver {
    /// The next event; `None` once the run is over and every event was
    /// received.
    pub(crate) async fn recv(&mut self) -> Option<Event> {
        match self.rx.recv().await {
            Some(event) => Some(event),
            None => self.left_over(),
        }
    }

    /// [`EventReceiver::recv`] for a `Stream`.
    pub(crate) fn poll_recv(
        &mut self,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Event>> {
        self.rx.poll_recv(cx).map(|event| event.or_else(|| self.left_over()))
    }

    /// Drops counted after the last event that got through.
    fn left_over(&self) -> Option<Event> {
        match self.missed.swap(0, Ordering::AcqRel) {
            0 => None,
            missed => Some(Event::Lagged { missed }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn started(call: usize) -> Value {
        json!({
            "event": "tool_call_started", "time": "t", "run_id": "r", "step": 1, "call": call,
            "tool": "files__list", "skill": "files", "version": "1.0.0", "wasm_hash": "h",
            "arguments": {"path": "."}
        })
    }

    fn record(line: Value) -> Record {
        Record::from_value(line).expect("a record")
    }

    #[tokio::test]
    async fn a_slow_consumer_is_told_how_many_events_it_missed() {
        let (tx, mut rx) = channel(2);
        for call in 1..=5 {
            tx.record(&record(started(call)));
        }
        // 1 and 2 fit; 3, 4, 5 were dropped.
        let calls: Vec<Event> = vec![rx.recv().await.unwrap(), rx.recv().await.unwrap()];
        assert!(
            matches!(calls[0], Event::ToolCallStarted { call: 1, .. })
                && matches!(calls[1], Event::ToolCallStarted { call: 2, .. })
        );
        tx.record(&record(started(6)));
        assert_eq!(
            rx.recv().await,
            Some(Event::Lagged { missed: 3 }),
            "said before the next event"
        );
        assert!(matches!(rx.recv().await, Some(Event::ToolCallStarted { call: 6, .. })));
        // Full again at the end of the run: the count comes after the last event.
        for call in 7..=10 {
            tx.record(&record(started(call)));
        }
        drop(tx);
        assert!(matches!(rx.recv().await, Some(Event::ToolCallStarted { call: 7, .. })));
        assert!(matches!(rx.recv().await, Some(Event::ToolCallStarted { call: 8, .. })));
        assert_eq!(rx.recv().await, Some(Event::Lagged { missed: 2 }));
        assert_eq!(rx.recv().await, None);
    }

    #[test]
    fn records_that_are_not_events_are_skipped() {
        assert_eq!(Event::from_record(&json!({"event": "skills_chosen", "chosen": []})), None);
        assert_eq!(Event::from_record(&json!({"no": "event"})), None);
        let event = Event::from_record(&started(1)).expect("an event");
        assert_eq!(event.to_string(), r#"step 1: files__list {"path":"."}"#);
    }

    #[test]
    fn display_escapes_what_the_model_wrote() {
        let record = json!({
            "event": "decision", "step": 2, "call": 3, "tool": "files__write\u{1b}[2J",
            "decision": "declined", "reason": "the person said no"
        });
        let shown = Event::from_record(&record).expect("an event").to_string();
        assert!(!shown.contains('\u{1b}'), "{shown}");
        assert!(
            shown.starts_with("step 2: files__write")
                && shown.ends_with("declined: the person said no"),
            "{shown}"
        );
    }

    fn finished(extra: Value) -> Value {
        let mut record = json!({
            "event": "run_finished", "time": "t", "run_id": "r", "stop": {"reason": "answered"},
            "answer": "42", "steps": 2,
            "usage": {"input_tokens": 10, "output_tokens": 5, "estimated": false}, "tool_calls": 1
        });
        record.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
        record
    }

    #[test]
    fn a_workers_run_finished_is_not_the_runs() {
        let event = Event::from_record(&finished(json!({"worker": "t1", "worker_agent": "web"})))
            .expect("an event");
        let Event::Worker { task, agent, event } = &event else {
            panic!("not a worker's event: {event:?}")
        };
        assert_eq!((task.as_str(), agent.as_str()), ("t1", "web"));
        assert!(matches!(**event, Event::RunFinished { steps: 2, .. }), "{event:?}");
        assert!(
            matches!(Event::from_record(&finished(json!({}))), Some(Event::RunFinished { .. })),
            "the run's own"
        );
        let nested = Event::from_record(&finished(
            json!({"worker": "t1.2", "worker_agent": "files\u{1b}[2J"}),
        ))
        .expect("an event");
        assert!(matches!(&nested, Event::Worker { task, .. } if task == "t1.2"), "{nested:?}");
        assert_eq!(
            nested.to_string(),
            "[t1.2 files\\u{1b}[2J] run finished (the model answered): 2 step(s), 1 \
             tool call(s), 15 tokens"
        );
    }

    #[test]
    fn delegation_records_decode_in_the_scope_that_delegated() {
        let started = json!({
            "event": "delegation_started", "time": "t", "run_id": "r", "step": 3, "call": 4,
            "task_id": "t1", "agent": "web", "depth": 1, "task": "Find the page\u{1b}[2J",
            "expected_output": "a URL", "return_format": {}, "max_steps": 8
        });
        let event = Event::from_record(&started).expect("an event");
        assert!(
            matches!(
                &event,
                Event::DelegationStarted { step: 3, task_id, agent, depth: 1, .. }
                    if task_id == "t1" && agent == "web"
            ),
            "{event:?}"
        );
        let shown = event.to_string();
        assert!(
            shown.starts_with("step 3: worker t1 (web, depth 1) started: Find the page")
                && !shown.contains('\u{1b}'),
            "{shown}"
        );

        let failed = json!({
            "event": "delegation_finished", "time": "t", "run_id": "r", "step": 3, "task_id": "t1",
            "agent": "web", "outcome": "INVALID_OUTPUT", "error": "missing `url`", "output": null,
            "steps": 3, "usage": {"input_tokens": 800, "output_tokens": 50, "estimated": false},
            "duration_ms": 1234
        });
        let event = Event::from_record(&failed).expect("an event");
        assert!(
            matches!(
                &event,
                Event::DelegationFinished { steps: 3, outcome, error: Some(_), .. }
                    if outcome == "INVALID_OUTPUT"
            ),
            "{event:?}"
        );
        assert_eq!(
            event.to_string(),
            "step 3: worker t1 failed: INVALID_OUTPUT: missing `url` (3 step(s), \
             850 tokens, 1234 ms)"
        );

        // Refused before a worker started: no task id.
        let refused = json!({
            "event": "delegation_finished", "time": "t", "run_id": "r", "step": 1, "call": 1,
            "task_id": null, "agent": "nope", "outcome": "LIMIT", "error": "too many workers",
            "output": null, "steps": 0,
            "usage": {"input_tokens": 0, "output_tokens": 0, "estimated": false}, "duration_ms": 0
        });
        let event = Event::from_record(&refused).expect("an event");
        assert!(
            matches!(&event, Event::DelegationFinished { steps: 0, task_id: None, .. }),
            "{event:?}"
        );
        assert_eq!(
            event.to_string(),
            "step 1: delegation to nope refused: LIMIT: too many workers"
        );
        // The model named no agent, or not as text: still the event.
        for agent in [Value::Null, json!(3)] {
            let mut unnamed = refused.clone();
            unnamed["agent"] = agent;
            assert!(
                matches!(
                    Event::from_record(&unnamed),
                    Some(Event::DelegationFinished { agent, .. }) if agent.is_empty()
                ),
                "{unnamed}"
            );
        }

        // Written by worker t1 for its own worker t1.1: t1's event.
        let nested = json!({
            "event": "delegation_finished", "time": "t", "run_id": "r", "worker": "t1",
            "worker_agent": "web", "step": 2, "task_id": "t1.1", "agent": "files", "outcome": "ok",
            "error": null, "output": {"url": "u"}, "steps": 1,
            "usage": {"input_tokens": 1, "output_tokens": 1, "estimated": true}, "duration_ms": 5
        });
        let event = Event::from_record(&nested).expect("an event");
        let Event::Worker { task, agent, event } = &event else {
            panic!("not a worker's event: {event:?}")
        };
        assert_eq!((task.as_str(), agent.as_str()), ("t1", "web"));
        assert!(
            matches!(
                &**event,
                Event::DelegationFinished { task_id: Some(id), agent, .. }
                    if id == "t1.1" && agent == "files"
            ),
            "{event:?}"
        );

        let review = json!({
            "event": "review_finished", "time": "t", "run_id": "r", "round": 1,
            "task_id": "review1", "verdict": "revise", "issues": ["no source", "too long"],
            "error": null, "usage": {"input_tokens": 1, "output_tokens": 1, "estimated": false},
            "duration_ms": 9
        });
        let event = Event::from_record(&review).expect("an event");
        assert!(
            matches!(&event, Event::ReviewFinished { round: 1, verdict: Some(_), .. }),
            "{event:?}"
        );
        assert_eq!(event.to_string(), "review 1: revise — no source; too long");
        assert_eq!(
            Event::from_record(&json!({
                "event": "review_started", "round": 1, "task_id": "review1", "criteria": "x"
            })),
            None
        );
    }

    #[test]
    fn a_workers_event_survives_a_round_trip() {
        let event = Event::from_record(&finished(json!({"worker": "t2", "worker_agent": "web"})))
            .expect("an event");
        let text = serde_json::to_string(&event).unwrap();
        assert_eq!(serde_json::from_str::<Event>(&text).unwrap(), event, "{text}");
    }
}
