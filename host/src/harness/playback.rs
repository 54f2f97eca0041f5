//! A past run played back: the model's recorded replies stand in for the
//! model (each loop — the run's own, each worker's — gets its own in the
//! order they came), the recorded confirmations for the person, and each
//! call the replay makes is compared with the call the run made. Where
//! they part is a [`Divergence`]: a call now denied or refused by its
//! schema, a result that differs (with a diff), a call the run did not make
//! or one it made that the replay did not, a request the recording has no
//! answer for.
//!
//! The skills and the table are the current ones: that is the point (is a
//! skill upgrade, a table change, safe against real past runs?).

mod divergence;
mod load;

pub use divergence::{Divergence, DivergenceKind, unified as diff};

use super::audit::record::{CallOutcome, RunFinished, RunStarted};
use super::outcome::Decision;
use crate::error::{ErrorCode, ToolFailure};
use crate::model::{ChatResponse, ModelError};
use crate::tape::{Recorder, Tape};
use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::{Arc, Mutex};

/// What a loop asks the model for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Purpose {
    /// A step's request.
    Step,
    /// A compaction's checkpoint.
    Checkpoint,
}

/// One recorded model answer, or its failure.
#[derive(Clone, Debug)]
struct Reply {
    purpose: Purpose,
    answer: Result<ChatResponse, String>,
}

/// A call as the run made it.
#[derive(Clone, Debug)]
struct Made {
    tool: String,
    outcome: CallOutcome,
    error_code: Option<ErrorCode>,
    decision: Option<Decision>,
    digest: Option<String>,
}

/// A past run, ready to play back.
pub struct Playback {
    /// The run's `run_started` (its task and settings).
    pub started: RunStarted,
    /// The run's `run_finished`, if it finished.
    pub finished: Option<RunFinished>,
    /// Replies not yet given, by loop (`""` for the run's own, else the
    /// worker's task id).
    replies: Mutex<HashMap<String, VecDeque<Reply>>>,
    /// The calls the run made, by [`crate::tape::call_key`].
    made: HashMap<String, Made>,
    /// The person's answers, in order.
    answers: Mutex<VecDeque<bool>>,
    /// The calls the replay made.
    replayed: Mutex<HashSet<String>>,
    /// The run's recording: its results, and (unless live) its responses.
    tape: Arc<Tape>,
    live: bool,
    divergences: Mutex<Vec<Divergence>>,
}

impl std::fmt::Debug for Playback {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Playback").field("task", &self.started.task).finish_non_exhaustive()
    }
}

/// What the run tree records into, or plays back from.
#[derive(Clone, Debug, Default)]
pub(crate) struct Taping {
    /// Where responses and results are recorded (a replay `--live`
    /// records its own).
    pub recorder: Option<Arc<Recorder>>,
    /// The run played back.
    pub playback: Option<Arc<Playback>>,
    /// The run's journal, which its workers' calls share (one budget, one
    /// `calls.jsonl`).
    pub journal: Option<crate::journal::RunJournal>,
}

impl Playback {
    /// The recorded reply of loop `task` (`None`: the run's own) for a
    /// request of `purpose`: the next one recorded. A step's request skips
    /// a checkpoint the run asked for and the replay did not; a checkpoint
    /// the run did not ask for fails (the harness writes its own).
    pub(crate) fn reply(
        &self,
        task: Option<&str>,
        step: usize,
        purpose: Purpose,
    ) -> Result<ChatResponse, ModelError> {
        let key = task.unwrap_or("").to_owned();
        let mut replies = self.replies.lock().unwrap_or_else(|e| e.into_inner());
        let queue = replies.entry(key).or_default();
        if purpose == Purpose::Step {
            while queue.front().is_some_and(|r| r.purpose == Purpose::Checkpoint) {
                queue.pop_front();
                self.diverged(Divergence::loop_level(
                    task,
                    step,
                    DivergenceKind::Compaction,
                    "the run compacted its context here and the replay did not".to_owned(),
                ));
            }
        } else if queue.front().is_none_or(|r| r.purpose != Purpose::Checkpoint) {
            drop(replies);
            self.diverged(Divergence::loop_level(
                task,
                step,
                DivergenceKind::Compaction,
                "the replay compacted its context here and the run did not".to_owned(),
            ));
            return Err(played("the run made no checkpoint request here"));
        }
        match queue.pop_front() {
            Some(Reply { answer: Ok(response), .. }) => Ok(response),
            Some(Reply { answer: Err(error), .. }) => Err(played(&error)),
            None => {
                drop(replies);
                self.diverged(Divergence::loop_level(
                    task,
                    step,
                    DivergenceKind::Unrecorded,
                    "the replay asked the model once more than the run did; no reply is \
                     recorded for it"
                        .to_owned(),
                ));
                Err(played("the recording has no more model replies for this loop"))
            }
        }
    }

    /// The person's next recorded answer (`None`: the run asked nothing more).
    pub(crate) fn answer(&self) -> Option<bool> {
        self.answers.lock().unwrap_or_else(|e| e.into_inner()).pop_front()
    }

    /// The run's recording (its clock readings are read again even live).
    pub(crate) fn recording(&self) -> Arc<Tape> {
        Arc::clone(&self.tape)
    }

    /// The recording the replay's skills are answered from; `None` when it
    /// runs `--live`.
    pub(crate) fn tape(&self) -> Option<Arc<Tape>> {
        (!self.live).then(|| Arc::clone(&self.tape))
    }

    /// Compare a call the replay made with the call the run made there.
    pub(crate) fn check_call(&self, seen: Seen<'_>) {
        let Seen { call, step, tool, decision, outcome, result, denied_by_table } = seen;
        self.replayed.lock().unwrap_or_else(|e| e.into_inner()).insert(call.to_owned());
        let at = |kind, detail: String| Divergence::at_call(call, step, tool, kind, detail);
        let Some(made) = self.made.get(call) else {
            self.diverged(at(
                DivergenceKind::Unrecorded,
                "the run made no such call: the replay's calls no longer follow the run's".into(),
            ));
            return;
        };
        if made.tool != tool {
            self.diverged(at(
                DivergenceKind::Unrecorded,
                format!("the run called {} here, the replay {tool}", made.tool),
            ));
            return;
        }
        let code = outcome.as_ref().err().map(|f| f.code);
        let why = || outcome.as_ref().err().map_or(String::new(), |f| f.message.clone());
        if code == Some(ErrorCode::NoSuchTool) && made.error_code != Some(ErrorCode::NoSuchTool) {
            let (kind, detail) = if denied_by_table {
                (
                    DivergenceKind::Denied,
                    format!(
                        "now denied: the table sets {tool} to level deny, so it is not offered"
                    ),
                )
            } else {
                (
                    DivergenceKind::Gone,
                    format!("{tool} is no longer offered (its skill was removed or did not load)"),
                )
            };
            self.diverged(at(kind, detail));
            return;
        }
        if decision == Decision::Denied && made.decision != Some(Decision::Denied) {
            self.diverged(at(DivergenceKind::Denied, format!("now denied: {}", why())));
            return;
        }
        if code == Some(ErrorCode::Denied) && made.error_code != Some(ErrorCode::Denied) {
            self.diverged(at(DivergenceKind::Denied, format!("now denied: {}", why())));
            return;
        }
        if code == Some(ErrorCode::InvalidArgs) && made.error_code != Some(ErrorCode::InvalidArgs) {
            self.diverged(at(
                DivergenceKind::Refused,
                format!("now refused as invalid arguments (the tool's schema): {}", why()),
            ));
            return;
        }
        let digest = blake3::hash(result.as_bytes()).to_hex().to_string();
        if made.digest.as_deref() == Some(digest.as_str()) {
            return;
        }
        let was = self.tape.result(call).and_then(|(_, text)| text);
        let outcome_now = if outcome.is_ok() { CallOutcome::Ok } else { CallOutcome::Error };
        let detail = if outcome_now != made.outcome {
            format!("it ended {} (the run's: {})", outcome_now.as_str(), made.outcome.as_str())
        } else {
            "its result differs".to_owned()
        };
        let diff = match was {
            Some(was) => Some(divergence::unified(was, result)),
            None => Some(format!(
                "(the run's result was not recorded; blake3 {} → {digest})",
                made.digest.as_deref().unwrap_or("?")
            )),
        };
        self.diverged(Divergence { diff, ..at(DivergenceKind::Result, detail) });
    }

    /// What diverged, in order, with the run's calls the replay never
    /// made and the replies it never asked for at the end.
    pub fn divergences(&self) -> Vec<Divergence> {
        let mut out = self.divergences.lock().unwrap_or_else(|e| e.into_inner()).clone();
        let replayed = self.replayed.lock().unwrap_or_else(|e| e.into_inner());
        let mut missing: Vec<(&String, &Made)> =
            self.made.iter().filter(|(k, _)| !replayed.contains(*k)).collect();
        missing.sort_by_key(|(k, _)| divergence::call_order(k));
        for (call, made) in missing {
            out.push(Divergence::at_call(
                call,
                0,
                &made.tool,
                DivergenceKind::Missing,
                "the run made this call; the replay did not".to_owned(),
            ));
        }
        let replies = self.replies.lock().unwrap_or_else(|e| e.into_inner());
        let mut left: Vec<(&String, usize)> = replies
            .iter()
            .map(|(k, q)| (k, q.iter().filter(|r| r.purpose == Purpose::Step).count()))
            .filter(|(_, n)| *n > 0)
            .collect();
        left.sort();
        for (task, n) in left {
            let task = (!task.is_empty()).then_some(task.as_str());
            out.push(Divergence::loop_level(
                task,
                0,
                DivergenceKind::Missing,
                format!("the replay stopped with {n} of the run's model replies unused"),
            ));
        }
        out.extend(self.tape.misses().into_iter().map(|miss| Divergence {
            kind: DivergenceKind::Request,
            detail: format!("not in the recording: {miss}"),
            ..Divergence::default()
        }));
        out
    }

    /// Note a divergence the replay driver found (files, the stop).
    pub fn diverged(&self, divergence: Divergence) {
        self.divergences.lock().unwrap_or_else(|e| e.into_inner()).push(divergence);
    }
}

/// A call the replay made, as it ended.
pub(crate) struct Seen<'a> {
    /// Its [`crate::tape::call_key`].
    pub call: &'a str,
    /// The step it was made in.
    pub step: usize,
    /// The tool as the model named it.
    pub tool: &'a str,
    /// How its level was decided.
    pub decision: Decision,
    /// How it ended.
    pub outcome: &'a Result<String, ToolFailure>,
    /// What the model got (secrets masked).
    pub result: &'a str,
    /// The table now sets the tool to `deny` (so it is not even offered).
    pub denied_by_table: bool,
}

/// A replayed failure, or a reply the recording does not have.
fn played(why: &str) -> ModelError {
    ModelError::Other(format!("replay: {why}").into())
}

#[cfg(test)]
mod tests;
