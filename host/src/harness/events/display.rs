//! An event as one line for a terminal or a log: what `reach run` shows.

use super::Event;
use crate::error::ErrorCode;
use crate::harness::Stop;
use crate::text::{escape_for_terminal, shorten_chars};
use std::fmt;

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
                    Stop::NotRecorded(e) => format!("not started: {}", shown(e)),
                };
                write!(
                    f,
                    "run finished ({why}): {steps} step(s), {tool_calls} tool call(s), {} tokens",
                    usage.total()
                )
            }
            Event::DelegationStarted { .. }
            | Event::DelegationFinished { .. }
            | Event::ReviewFinished { .. }
            | Event::Worker { .. } => self.fmt_team(f),
            Event::Lagged { missed } => {
                write!(f, "({missed} event(s) dropped: the consumer fell behind)")
            }
        }
    }
}

impl Event {
    /// [`Display`](fmt::Display) of the events of workers and reviewers.
    fn fmt_team(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let shown = |text: &str| escape_for_terminal(text);
        match self {
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
                    shown(outcome.as_str())
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
                    write!(f, "review {round}: {}", shown(verdict.as_str()))
                }
                Some(verdict) => {
                    let issues: Vec<String> = issues.iter().map(|i| shown(i)).collect();
                    write!(f, "review {round}: {} — {}", shown(verdict.as_str()), issues.join("; "))
                }
                None => write!(f, "review {round}: no verdict"),
            },
            Event::Worker { task, agent, event, .. } => {
                write!(f, "[{} {}] {event}", shown(task), shown(agent))
            }
            _ => Ok(()),
        }
    }
}
