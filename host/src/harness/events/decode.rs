//! Which audit records are events, and the event each one is.

use super::Event;
use crate::harness::audit::record::{Body, Ended};

/// The event `body` (of run `run_id`) is, apart from whose record it is.
impl Event {
    pub(super) fn of_body(body: &Body, run_id: &str) -> Option<Event> {
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
                outcome: d.outcome,
                error: d.error.clone(),
                steps: d.steps,
                usage: d.usage,
                duration_ms: d.duration_ms,
            },
            Body::ReviewFinished(r) => Event::ReviewFinished {
                round: r.round,
                verdict: r.verdict,
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
