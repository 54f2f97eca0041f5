//! The harness's side of [`compaction`]: the context window a run works
//! against, and the checkpoint that replaces older turns when a step's
//! request has grown past its share of it.

use super::Harness;
use super::audit::record;
use super::call::{activation_heading, activation_text};
use super::compaction::{self, Budget};
use super::conversation::Turn;
use super::playback::Purpose;
use super::prompt::{Around, PREAMBLE};
use super::state::RunState;
use crate::model::{ChatRequest, Message};
use crate::text::shorten_chars;
use std::time::Instant;

impl Harness<'_> {
    /// The instructions of every bundle in `opened` that no turn of
    /// `turns` holds any more, as harness turns.
    fn open_instructions(&self, opened: &[String], turns: &[Turn]) -> Vec<Turn> {
        let step = turns.get(1).map_or(0, |t| t.step);
        opened
            .iter()
            .filter(|s| self.toolbox.is_bundle(s))
            .filter(|s| {
                let heading = activation_heading(s);
                !turns.iter().any(|t| t.message.content.contains(&heading))
            })
            .filter_map(|s| {
                let entry = self.host.registry().active_bundle(s)?;
                let tools = self.toolbox.described_tools(s);
                let text = format!(
                    "[harness] The skill {s} is open; its instructions, kept through compaction:\n{}",
                    activation_text(entry, &tools)
                );
                Some(Turn { message: Message::user(text), step, from_person: false })
            })
            .collect()
    }

    /// The context window this run works against, and where it came from.
    pub(super) async fn budget(&self) -> (Budget, &'static str) {
        let server = if self.config.context_tokens.is_none() {
            self.model.context_tokens().await
        } else {
            None
        };
        let (context_tokens, source) =
            crate::model::context::resolve(self.config.context_tokens, server, self.model.name());
        (Budget { context_tokens, compact_at: self.config.compact_at }, source)
    }

    /// Replaces older turns by a checkpoint (see [`compaction`]); `before`
    /// is the next request's estimate as it stands. Returns the estimate
    /// afterwards, or `None` when there was nothing older to replace.
    pub(super) async fn compact(
        &mut self,
        run: &mut RunState,
        note: Option<&str>,
        before: u64,
    ) -> Option<u64> {
        let (budget, calibration) = (run.budget, run.calibration);
        let (keep, checkpoint_chars, transcript_chars) = self.sizes(run, note);
        let conversation = &mut run.conversation;
        let usage = &mut run.usage;
        let task = run.task.as_str();
        let step = conversation.turns().last().map_or(0, |t| t.step);
        let Some(plan) = compaction::plan(conversation.turns(), calibration.to_estimate(keep))
        else {
            if !run.compaction_skipped {
                // Said once: the same would be true on every later step.
                run.compaction_skipped = true;
                self.audit.record(record::CompactionSkipped {
                    step,
                    tokens: calibration.apply(before),
                    threshold: budget.threshold(),
                    reason: "nothing older than the last exchange to replace".to_owned(),
                });
            }
            return None;
        };
        let first = &conversation.turns()[0];
        let older = &conversation.turns()[plan.older.clone()];
        let request = compaction::summary_request(first, older, transcript_chars);
        let started = Instant::now();
        let answer = self
            .ask(ChatRequest { messages: &request, tools: &[] }, Purpose::Checkpoint, step)
            .await;
        let reply = answer.as_ref().ok().map(|r| self.reply_record(&r.message));
        let latency_ms = started.elapsed().as_millis() as u64;
        let (text, by_model, error) = match answer {
            Ok(r) => {
                usage.input_tokens += r.usage.input_tokens;
                usage.output_tokens += r.usage.output_tokens;
                usage.estimated |= r.usage.estimated;
                // A checkpoint is a model request like any other: a worker
                // that compacts spends the run's budget too.
                self.team.spend(r.usage.total());
                match r.message.content.trim() {
                    "" => (
                        compaction::fallback_checkpoint(task, older, checkpoint_chars),
                        false,
                        Some("the model wrote no checkpoint".to_owned()),
                    ),
                    written => (shorten_chars(written, checkpoint_chars), true, None),
                }
            }
            Err(err) => (
                compaction::fallback_checkpoint(task, older, checkpoint_chars),
                false,
                Some(err.to_string()),
            ),
        };
        let checkpoint = compaction::checkpoint_turn(
            &self.audit.mask(&text),
            older,
            by_model,
            first.from_person,
        );
        let person = older.iter().filter(|t| t.from_person).count();
        let mut rebuilt = compaction::rebuild(conversation.turns(), &plan, checkpoint);
        // An open skill's instructions are not summarised away: the ones
        // whose activation was replaced come back whole, after the checkpoint.
        let kept = self.open_instructions(&run.opened, &rebuilt);
        rebuilt.splice(2..2, kept);
        conversation.replace(rebuilt);
        let after = self.estimate(run, &self.around(run, note));
        self.audit.record(record::Compaction {
            step,
            tokens_before: calibration.apply(before),
            tokens_after: calibration.apply(after),
            threshold: budget.threshold(),
            context_tokens: budget.context_tokens,
            replaced_messages: plan.older.len(),
            kept_person_messages: Some(person),
            checkpoint_by: if by_model {
                record::CheckpointBy::Model
            } else {
                record::CheckpointBy::Harness
            },
            error,
            latency_ms: Some(latency_ms),
            checkpoint: self.audit.mask(&text),
            reply,
        });
        Some(after)
    }

    /// [`compaction::sizes`] for this run's next request: what every
    /// request carries anyway (system prompt, tools, task, notes) is left out.
    fn sizes(&self, run: &RunState, note: Option<&str>) -> (u64, usize, usize) {
        let Around { task, remembered, note, lead } = self.around(run, note);
        let fixed = compaction::estimate_request(
            &[
                Message::system(PREAMBLE),
                Message::user(remembered),
                Message::user(task),
                Message::user(lead.unwrap_or_default()),
                Message::user(note.unwrap_or_default()),
            ],
            &self.offered(run),
        );
        compaction::sizes(run.budget, run.calibration.apply(fixed))
    }
}
