//! Reading the model's reply: the structured calls as they are; else a
//! call written as JSON in the text (small models do), a described call
//! the model just confirmed, or a call described in prose — run at once
//! when it can only read and nothing was read yet, else asked about
//! ([`describe_back`](super::answer::describe_back)), or, when it already
//! ran, taken as a restatement instead of an answer.

use super::Harness;
use super::answer::{Nudge, says};
use super::repair::{self, TextCall};
use super::state::RunState;
use super::toolbox::Target;
use crate::model::{Message, ToolCall};
use serde_json::Value;

/// A reply as the harness understood it.
pub(super) struct Reply {
    /// The reply, with any call found in its text as a tool call.
    pub(super) message: Message,
    /// Characters of the text the model wrote.
    pub(super) text_chars: usize,
    /// The call came from the text.
    pub(super) text_call: bool,
    /// A call described in prose, to ask about.
    pub(super) described: Option<TextCall>,
    /// A call described in prose that already ran.
    pub(super) restated: Option<TextCall>,
    /// The tool of a described call run as it was described.
    pub(super) ran_described: Option<String>,
    /// The model meant its description as the answer.
    pub(super) chose_answer: bool,
}

impl Harness<'_> {
    /// Reads `message`, the model's reply at this step.
    pub(super) fn read_reply(&self, run: &mut RunState, message: Message) -> Reply {
        let steps = run.steps;
        let mut reply = Reply {
            text_chars: message.content.chars().count(),
            message,
            text_call: false,
            described: None,
            restated: None,
            ran_described: None,
            chose_answer: false,
        };
        let message = &mut reply.message;
        let asked = run.pending.take();
        if message.tool_calls.is_empty()
            && let Some((_, said)) = asked.as_ref().filter(|_| says(&message.content, "answer"))
        {
            // The model meant its description as the answer.
            message.content = said.clone();
            reply.chose_answer = true;
        }
        if message.tool_calls.is_empty() {
            // Small models write the call as JSON in the text.
            let offered = |n: &str| self.toolbox.target(n).is_some();
            let confirmed = asked.map(|(call, _)| call).filter(|_| says(&message.content, "call"));
            if let Some(call) =
                confirmed.or_else(|| repair::call_in_text(&message.content, &offered))
            {
                message.tool_calls.push(ToolCall {
                    id: format!("text-call-{steps}"),
                    name: call.name,
                    arguments: Value::Object(call.arguments).to_string(),
                });
                message.content.clear();
                reply.text_call = true;
            } else if !reply.chose_answer
                && let Some(call) = repair::described_call(&message.content, self.toolbox.specs())
            {
                self.read_described(run, call, &mut reply);
            }
        }
        reply
    }

    /// A call described in the reply: a restatement when it already ran,
    /// made as described when that is safe, else asked about (while the
    /// question is left).
    fn read_described(&self, run: &RunState, call: TextCall, reply: &mut Reply) {
        // Ran: an ok call of that tool had every argument described
        // (a description often leaves out the optional ones).
        let ran = run.actions.iter().any(|a| {
            let same_tool = a.tool == call.name
                || self.toolbox.target(&a.tool) == self.toolbox.target(&call.name);
            same_tool
                && a.outcome == "ok"
                && call.arguments.iter().all(|(k, v)| a.arguments.get(k) == Some(v))
        });
        // Describing what already ran is an answer — often only a
        // restatement of the call instead of what it found.
        if ran {
            reply.restated = Some(call);
        } else if run.results.is_empty() && self.reads_only(&call.name) {
            // Nothing read yet: only the task and the model wrote
            // the conversation, so the description is the model's
            // own intent, not a quote of a page — and the skill can
            // change nothing. It runs as the call it describes
            // (asking would cost a step). A task can carry pasted
            // text with a planted call, so a skill that can write
            // or reach the network is still asked about.
            reply.message.tool_calls.push(ToolCall {
                id: format!("described-call-{}", run.steps),
                name: call.name.clone(),
                arguments: Value::Object(call.arguments.clone()).to_string(),
            });
            reply.message.content.clear();
            reply.text_call = true;
            reply.ran_described = Some(call.name);
        } else if run.nudges.left(Nudge::DescribedCall) {
            reply.described = Some(call);
        }
    }

    /// True when the offered name runs a built-in, or a tool of a skill with
    /// no writable folder and no network grant: it can read, never change.
    pub(super) fn reads_only(&self, name: &str) -> bool {
        match self.toolbox.target(name) {
            Some(Target::Skill { skill, .. }) => {
                let grants = self.host.policy().grants(skill);
                grants.write.is_empty() && grants.net.is_empty()
            }
            Some(Target::MemoryRemember | Target::Delegate) | None => false,
            Some(_) => true,
        }
    }
}
