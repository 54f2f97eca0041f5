//! The loop's side of recording and replay: the model asked (or its
//! recorded reply given back), its reply put on record whole, each call's
//! result recorded (or compared with the run's), and the scope a skill
//! call's network traffic is recorded or answered in.

use super::Harness;
use super::audit::record::ModelReply;
use super::outcome::Decision;
use super::playback::{Purpose, Seen, Taping};
use crate::error::ToolFailure;
use crate::model::{ChatRequest, ChatResponse, Message, ModelError, ToolCall};
use crate::tape::{Mode, Recorder, TapeScope, call_key};
use std::sync::Arc;

impl Harness<'_> {
    /// What a run starting as `run_id` records into and plays back from:
    /// a recording beside its log (unless it plays back from one, or the
    /// table's `record_mb` is 0), and its playback.
    pub(super) fn taping_of(&self, run_id: &str) -> Taping {
        let sends = self.playback.as_ref().is_none_or(|p| p.tape().is_none());
        let max = self.host.policy().record_bytes();
        let recorder = crate::tape::beside_log(self.audit.path())
            .filter(|_| sends && max > 0)
            .map(|root| Arc::new(Recorder::masking(&root, run_id, max, self.audit.redactor())));
        Taping { recorder, playback: self.playback.clone(), journal: self.journal.clone() }
    }

    /// The model's answer to `request` (for `purpose` at `step`), or in a
    /// replay the one the run got.
    pub(super) async fn ask(
        &self,
        request: ChatRequest<'_>,
        purpose: Purpose,
        step: usize,
    ) -> Result<ChatResponse, ModelError> {
        match self.team.taping().playback {
            Some(playback) => playback.reply(self.scope.task.as_deref(), step, purpose),
            None => self.model.chat(request).await,
        }
    }

    /// `message`, as the log keeps it: whole, secrets masked.
    pub(super) fn reply_record(&self, message: &Message) -> ModelReply {
        ModelReply {
            content: self.audit.mask(&message.content),
            tool_calls: message
                .tool_calls
                .iter()
                .map(|c| ToolCall {
                    id: self.audit.mask(&c.id),
                    name: self.audit.mask(&c.name),
                    arguments: self.audit.mask(&c.arguments),
                })
                .collect(),
        }
    }

    /// Call `call` of `tool` at `step` ended with `outcome`, given to the
    /// model as `result`: recorded, or compared with the run's.
    pub(super) fn taped_call(
        &self,
        (step, call, tool): (usize, usize, &str),
        decision: Decision,
        outcome: &Result<String, ToolFailure>,
        result: &str,
    ) {
        let key = call_key(self.scope.task.as_deref(), call);
        let taping = self.team.taping();
        if let Some(recorder) = &taping.recorder {
            recorder.result(&key, tool, result);
        }
        if let Some(playback) = &taping.playback {
            // `skill__tool`: is it the table that keeps it from being offered?
            let denied = tool
                .split_once("__")
                .is_some_and(|(s, t)| self.host.policy().level(s, t) == crate::policy::Level::Deny);
            playback.check_call(Seen {
                call: &key,
                step,
                tool,
                decision,
                outcome,
                result,
                denied_by_table: denied,
            });
        }
    }

    /// Where call `call`'s network traffic is recorded, or answered from.
    pub(super) fn tape_scope(&self, call: usize) -> Option<TapeScope> {
        let taping = self.team.taping();
        let mode = match (taping.playback.as_ref().and_then(|p| p.tape()), taping.recorder) {
            (Some(tape), _) => Some(Mode::Replay(tape)),
            (None, Some(recorder)) => Some(Mode::Record(recorder)),
            (None, None) => None,
        };
        // A replay reads the run's clock, live or not.
        let clock = taping.playback.as_ref().map(|p| p.recording());
        if mode.is_none() && clock.is_none() {
            return None;
        }
        Some(TapeScope { mode, clock, call: call_key(self.scope.task.as_deref(), call) })
    }
}
