//! Running the calls of one reply: the reply's delegations first,
//! together; then each call in order — recorded before it runs, refused at
//! once when the same call was refused before, else checked and run
//! ([`execute`]) — its result recorded, kept for the report, shaped for
//! the model; and the stops a call can cause (a person declined, the same
//! call again and again).

use super::Harness;
use super::answer::{self, MAX_CALLS_PER_REPLY};
use super::audit::record;
use super::delegate::Delegated;
use super::progress::Progress;
use super::report::{Action, Stop};
use super::state::RunState;
use super::{repair, toolbox::Target};
use crate::error::ErrorCode;
use crate::harness::{Decision, Outcome};
use crate::model::{Message, ToolCall};
use serde_json::{Value, json};
use std::time::Instant;

mod activate;
pub(super) use activate::{activation_heading, activation_text};
mod execute;

impl Harness<'_> {
    /// Runs the calls of `message` (the first [`MAX_CALLS_PER_REPLY`]),
    /// after putting it in the conversation. Returns how many delegations
    /// repeated an earlier one, or the stop a call caused.
    pub(super) async fn run_calls(
        &mut self,
        run: &mut RunState,
        mut message: Message,
        progress: &dyn Progress,
    ) -> Result<usize, Stop> {
        let steps = run.steps;
        // A model that floods a reply with calls would fill its context
        // with their results: the first few run, and it is told the rest
        // did not.
        let made = message.tool_calls.len();
        message.tool_calls.truncate(MAX_CALLS_PER_REPLY);
        let calls = message.tool_calls.clone();
        run.conversation.push(message);
        if made > MAX_CALLS_PER_REPLY {
            self.audit.record(record::ToolCallsDropped {
                step: steps,
                made,
                run: MAX_CALLS_PER_REPLY,
            });
        }
        // The reply's delegations run first, together; their results
        // are handed back below in the order the calls were made.
        let (mut delegated, repeats) = if calls.iter().any(|c| self.is_delegation(c)) {
            self.delegate(&calls, run, progress).await
        } else {
            Default::default()
        };
        for call in calls {
            let ran = delegated.remove(&call.id);
            let (decision, arguments) = self.run_call(run, &call, ran, progress).await;
            if let Some(stop) = self.after_call(run, &call, decision, &arguments) {
                return Err(stop);
            }
        }
        Ok(repeats)
    }

    /// Runs `call` (or takes the outcome of its delegation, `ran`), records
    /// it and puts its result in the conversation. Returns its decision and
    /// its arguments as understood.
    async fn run_call(
        &mut self,
        run: &mut RunState,
        call: &ToolCall,
        ran: Option<Delegated>,
        progress: &dyn Progress,
    ) -> (Decision, Value) {
        let steps = run.steps;
        progress.tool_started(steps, &call.name);
        let mut head = self.call_head(&call.name, steps, run.actions.len() + 1);
        let started = Instant::now();
        let ran_ms = ran.as_ref().map(|d| d.duration_ms);
        let network = ran
            .as_ref()
            .map_or_else(|| self.may_bring_network_text(&call.name, &run.actions), |d| d.network);
        // Read once: recorded as understood here, and run as such.
        let parsed = repair::arguments(&call.arguments);
        let asked = parsed
            .as_ref()
            .map_or_else(|_| json!(call.arguments), |map| Value::Object(map.clone()));
        let actions = &run.actions;
        // Written before the call runs: a host that dies mid-call
        // still leaves a record of what may have happened. (A
        // delegation's was written before its worker started.)
        let recorded = if ran.is_some() {
            Ok(())
        } else {
            self.audit.call_started(&record::CallHead { arguments: asked.clone(), ..head.clone() })
        };
        // A refusal does not change on a second try; the model is told
        // so in words of its own instead of the same error again.
        let refused_before = actions.iter().any(|a| {
            a.tool == call.name
                && a.outcome == Outcome::Failed(ErrorCode::Denied)
                && canonical(&a.arguments) == canonical(&asked)
        });
        let at = At { step: steps, call: actions.len() + 1, tool: &call.name };
        let (outcome, decision, arguments) = match recorded {
            Ok(()) if let Some(done) = ran => (done.outcome, done.decision, done.arguments),
            Ok(()) if refused_before => {
                let refusal = answer::refused_again(&call.name);
                self.audit.record(decision_record(at, Decision::Denied, Some(&refusal.message)));
                (Err(refusal), Decision::Denied, asked)
            }
            Ok(()) => self.execute(call, parsed, run, at).await,
            Err(failure) => (Err(failure), Decision::NotReached, asked),
        };
        let duration_ms = ran_ms.unwrap_or_else(|| started.elapsed().as_millis() as u64);
        let (text, code) = match &outcome {
            Ok(text) => (text.clone(), Outcome::Ok),
            Err(f) => (f.to_json().to_string(), Outcome::Failed(f.code)),
        };
        progress.tool_finished(steps, &call.name, code.as_str(), duration_ms);
        let masked = self.audit.mask(&text);
        self.taped_call((steps, at.call, &call.name), decision, &outcome, &masked);
        progress.tool_result(steps, &call.name, &masked);
        run.results.push(masked.clone());
        let actions = &mut run.actions;
        let action = Action {
            step: steps,
            tool: call.name.clone(),
            arguments: self.audit.mask_value(arguments.clone()),
            decision,
            outcome: code,
            result_bytes: masked.len(),
            duration_ms,
            network,
        };
        head.arguments = action.arguments.clone();
        self.audit.call_ended(record::CallEnded {
            decision: Some(decision),
            result_digest: Some(blake3::hash(masked.as_bytes()).to_hex().to_string()),
            network: Some(network),
            ..record::CallEnded::of(head, &outcome, masked.len(), duration_ms)
        });
        actions.push(action);
        let shaped = self.workbench.shape(masked, self.config.view_chars, self.config.keep_chars);
        run.conversation.push(Message::tool(call.id.clone(), shaped));
        (decision, arguments)
    }

    /// The stop `call` causes, if any: a person declined it, or it is the
    /// same call with the same arguments `repeat_limit` times in a row.
    fn after_call(
        &self,
        run: &mut RunState,
        call: &ToolCall,
        decision: Decision,
        arguments: &Value,
    ) -> Option<Stop> {
        // A person saying no to a note is an answer about the note,
        // not about the task.
        let about_memory = matches!(
            self.toolbox.target(&call.name),
            Some(Target::MemoryRemember | Target::MemoryRecall)
        );
        if decision == Decision::Declined && self.confirmer.person_present() && !about_memory {
            return Some(Stop::Declined);
        }
        let recent = &mut run.recent;
        recent.push((call.name.clone(), canonical(arguments)));
        let n = self.config.repeat_limit;
        if recent.len() >= n
            && recent[recent.len() - n..].iter().all(|c| *c == recent[recent.len() - 1])
        {
            return Some(Stop::NoProgress);
        }
        None
    }

    /// The audit records' fields of call `call` of `step` to `name`: the
    /// skill behind it, its version and wasm hash (arguments to be added).
    fn call_head(&self, name: &str, step: usize, call: usize) -> record::CallHead {
        let (skill, version, hash) = match self.toolbox.target(name) {
            Some(Target::Skill { skill, .. }) => match self.host.registry().active(skill) {
                Some(a) => (
                    Some(skill.clone()),
                    Some(a.manifest.version.to_string()),
                    Some(a.loaded().wasm_hash().to_owned()),
                ),
                None => (Some(skill.clone()), None, None),
            },
            _ => (None, None, None),
        };
        record::CallHead::of_run(step, call, name, skill, version, hash)
    }
}

/// Where a call stands in the run: what its records carry.
#[derive(Clone, Copy)]
pub(super) struct At<'c> {
    step: usize,
    /// The call's number in the run (1-based).
    call: usize,
    /// The name the model used.
    tool: &'c str,
}

/// The `decision` record of a call.
fn decision_record(at: At<'_>, decision: Decision, reason: Option<&str>) -> record::Decided {
    record::Decided::new(at.step, at.call, at.tool, decision, reason)
}

/// Arguments in a canonical form (sorted keys), to compare calls.
fn canonical(arguments: &Value) -> String {
    // serde_json's map is a BTreeMap here: serialising sorts the keys.
    arguments.to_string()
}
