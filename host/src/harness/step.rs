//! One step of the loop: the step limit, the person's messages, the
//! request (compacted first when it has grown past the budget), the reply
//! read, then either the answer's questions or the calls, and the limits
//! checked at the end.

use super::answer::MAX_CALLS_PER_REPLY;
use super::audit::record;
use super::playback::Purpose;
use super::progress::Progress;
use super::prompt::{reminder, request_messages};
use super::questions::Answer;
use super::reply::Reply;
use super::report::Stop;
use super::state::RunState;
use super::{Harness, compaction, repair};
use crate::model::{ChatRequest, ChatResponse, Message};
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// Repeats of an earlier delegation (each refused) that stop a run as no
/// progress.
const REPEATED_DELEGATIONS: usize = 2;

/// A handle to say something to a running run, as the person: each message
/// joins the conversation before the next model request and, like the
/// task, is kept verbatim through every compaction. Clone it freely.
#[derive(Clone, Debug, Default)]
pub struct Steering {
    waiting: Arc<Mutex<Vec<String>>>,
}

impl Steering {
    /// Queues `text` for the run's next model request.
    pub fn say(&self, text: impl Into<String>) {
        self.waiting.lock().unwrap_or_else(|e| e.into_inner()).push(text.into());
    }

    fn take(&self) -> Vec<String> {
        std::mem::take(&mut *self.waiting.lock().unwrap_or_else(|e| e.into_inner()))
    }
}

impl Harness<'_> {
    /// One model request and what follows from its reply; the stop when
    /// the run ends here.
    pub(super) async fn step(
        &mut self,
        run: &mut RunState,
        progress: &dyn Progress,
    ) -> Option<Stop> {
        if self.out_of_steps(run) {
            return Some(Stop::MaxSteps);
        }
        run.steps += 1;
        let steps = run.steps;
        run.conversation.set_step(steps);
        for said in self.inbox.take() {
            self.audit.record(record::UserMessage { step: steps, text: self.audit.mask(&said) });
            run.conversation.push_person(said);
        }
        let (response, messages, latency_ms) = match self.request(run, progress).await {
            Ok(answered) => answered,
            Err(stop) => return Some(stop),
        };
        let reply = self.reply_record(&response.message);
        let Reply {
            message,
            text_chars,
            text_call,
            described,
            restated,
            ran_described,
            chose_answer,
        } = self.read_reply(run, response.message);
        // Logged after the text is read, so a call written in the text
        // counts as a call (`text_call` says where it came from).
        self.audit.record(record::ModelRequest {
            step: steps,
            model: response.model.clone(),
            messages: Some(messages.len()),
            usage: Some(response.usage),
            latency_ms,
            tool_calls: Some(message.tool_calls.len()),
            text_call: Some(text_call),
            text_chars: Some(text_chars),
            described_call: Some(
                described.as_ref().map(|c: &repair::TextCall| c.name.clone()).or(ran_described),
            ),
            restated_call: Some(restated.as_ref().map(|c: &repair::TextCall| c.name.clone())),
            error: None,
            reply: Some(reply),
        });
        progress.model_finished(steps, latency_ms, &response.usage, message.tool_calls.len());
        if message.tool_calls.is_empty() {
            let answer = Answer { message, described, restated, chose_answer };
            return self.answered(run, answer, progress).await;
        }
        let made = message.tool_calls.len();
        match self.run_calls(run, message, progress).await {
            Ok(repeats) => self.end_step(run, made, repeats),
            Err(stop) => Some(stop),
        }
    }

    /// True when the step limit is reached. A worker's limit is its
    /// parent's budget for its work: the harness's own questions come on
    /// top ([`Nudge::beyond_step_limit`](super::answer::Nudge::beyond_step_limit)). The run's
    /// own loop counts every request.
    fn out_of_steps(&self, run: &RunState) -> bool {
        let asked = if self.scope.depth > 0 { run.nudges.beyond_step_limit() } else { 0 };
        run.steps >= run.step_limit + asked
    }

    /// The step's request — compacted first when it is over the budget —
    /// and the model's response, with the messages sent and how long it
    /// took; the stop when the model failed.
    async fn request(
        &mut self,
        run: &mut RunState,
        progress: &dyn Progress,
    ) -> Result<(ChatResponse, Vec<Message>, u64), Stop> {
        let steps = run.steps;
        let note = reminder(&run.task, &run.actions);
        // Built once a step, measured as it will be sent; again only after a compaction.
        let mut messages = request_messages(&self.around(run, note.as_deref()), &run.conversation);
        let mut estimated = compaction::estimate_request(&messages, &self.offered(run));
        if run.calibration.apply(estimated) > run.budget.threshold()
            && let Some(after) = self.compact(run, note.as_deref(), estimated).await
        {
            let calibration = run.calibration;
            progress.compacted(steps, calibration.apply(estimated), calibration.apply(after));
            estimated = after;
            messages = request_messages(&self.around(run, note.as_deref()), &run.conversation);
        }
        progress.model_request(steps);
        let started = Instant::now();
        let response = {
            let tools = self.offered(run);
            let request = ChatRequest { messages: &messages, tools: &tools };
            self.ask(request, Purpose::Step, steps).await
        };
        let latency_ms = started.elapsed().as_millis() as u64;
        let response = match response {
            Ok(r) => r,
            Err(err) => {
                self.audit.record(record::ModelRequest {
                    step: steps,
                    model: self.model.name().to_owned(),
                    messages: Some(messages.len()),
                    latency_ms,
                    error: Some(err.to_string()),
                    ..Default::default()
                });
                return Err(Stop::ModelError(err.to_string()));
            }
        };
        let usage = &mut run.usage;
        usage.input_tokens += response.usage.input_tokens;
        usage.output_tokens += response.usage.output_tokens;
        usage.estimated |= response.usage.estimated;
        self.team.spend(response.usage.total());
        if !response.usage.estimated {
            run.calibration.learn(estimated, response.usage.input_tokens);
        }
        Ok((response, messages, latency_ms))
    }

    /// After the calls of a step (`made` in the reply, `repeats` of them
    /// refused as repeated delegations): no progress, the note on calls
    /// that did not run, the token budgets.
    fn end_step(&mut self, run: &mut RunState, made: usize, repeats: usize) -> Option<Stop> {
        run.repeated += repeats;
        if run.repeated >= REPEATED_DELEGATIONS {
            // The same delegation again, after being told it already ran.
            return Some(Stop::NoProgress);
        }
        if made > MAX_CALLS_PER_REPLY {
            run.conversation.push(Message::user(super::answer::dropped_back(made)));
        }
        if let Some(budget) = self.config.token_budget
            && run.usage.total() >= budget
        {
            return Some(Stop::TokenBudget);
        }
        if self.team.over_budget() {
            // The run's budget, spent by this loop and its workers together.
            return Some(Stop::TokenBudget);
        }
        None
    }
}
