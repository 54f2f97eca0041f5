//! A playback read from a run's audit log: the replies, calls and answers
//! in it, in the order they were written.

use super::{Made, Playback, Purpose, Reply};
use crate::harness::audit::record::{Body, ModelReply, Record};
use crate::harness::outcome::Decision;
use crate::model::{ChatResponse, Message, Usage};
use crate::tape::{Tape, call_key};
use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};

impl Playback {
    /// The run in `records` (its audit log, in order), with its recording
    /// `tape`; `live` when the replay's skills send their requests for real.
    /// Fails, saying why, for a log that is not a run's or that was written
    /// before replies were recorded.
    pub fn from_records(
        records: &[Record],
        tape: Arc<Tape>,
        live: bool,
    ) -> Result<Playback, String> {
        let started = records
            .iter()
            .find_map(|r| match &r.body {
                Body::RunStarted(s) if r.worker.is_none() => Some(s.clone()),
                _ => None,
            })
            .ok_or("the log has no run_started record of the run: it is not a run's log")?;
        if let Some(kind) = started.kind {
            return Err(format!(
                "the log is of `reach {}`, which has no model replies to play back; only runs \
                 of `reach run` (and the library's agents) replay",
                serde_json::to_value(kind)
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_owned))
                    .unwrap_or_default()
            ));
        }
        let mut replies: HashMap<String, VecDeque<Reply>> = HashMap::new();
        let mut made = HashMap::new();
        let mut answers = VecDeque::new();
        let mut finished = None;
        for record in records {
            let task = record.worker_task();
            let queue = || task.unwrap_or("").to_owned();
            match &record.body {
                Body::ModelRequest(m) => {
                    let answer = match (&m.error, &m.reply) {
                        (Some(error), _) => Err(error.clone()),
                        (None, Some(reply)) => Ok(response(reply, m.usage, &m.model)),
                        (None, None) => {
                            return Err(format!(
                                "the model_request of step {} has no reply: the log was written \
                                 by a version of reach that did not record the model's replies, \
                                 so the run cannot be played back",
                                m.step
                            ));
                        }
                    };
                    let reply = Reply { purpose: Purpose::Step, answer };
                    replies.entry(queue()).or_default().push_back(reply);
                }
                Body::Compaction(c) => {
                    let answer = match (&c.reply, &c.error) {
                        (Some(reply), _) => Ok(response(reply, None, "")),
                        (None, Some(error)) => Err(error.clone()),
                        (None, None) => continue,
                    };
                    let reply = Reply { purpose: Purpose::Checkpoint, answer };
                    replies.entry(queue()).or_default().push_back(reply);
                }
                Body::ToolCall(c) => {
                    if let Some(n) = c.head.call {
                        made.insert(
                            call_key(task, n),
                            Made {
                                tool: c.head.tool.clone(),
                                outcome: c.outcome,
                                error_code: c.error_code,
                                decision: c.decision,
                                digest: c.result_digest.clone(),
                            },
                        );
                    }
                }
                Body::Decision(d) => match d.decision {
                    Decision::Confirmed => answers.push_back(true),
                    Decision::Declined => answers.push_back(false),
                    _ => {}
                },
                Body::RunFinished(f) if record.worker.is_none() => finished = Some(f.clone()),
                _ => {}
            }
        }
        Ok(Playback {
            started,
            finished,
            replies: Mutex::new(replies),
            made,
            answers: Mutex::new(answers),
            replayed: Mutex::default(),
            tape,
            live,
            divergences: Mutex::default(),
        })
    }

    /// The same run with each `(from, to)` replaced in every reply's text
    /// and call arguments: a run recorded in one working folder (and
    /// against one port) played back in another (`reach eval --replay`).
    pub fn rewritten(self, rewrites: &[(String, String)]) -> Playback {
        let apply = |text: &mut String| {
            for (from, to) in rewrites.iter().filter(|(f, _)| !f.is_empty()) {
                if text.contains(from.as_str()) {
                    *text = text.replace(from.as_str(), to);
                }
            }
        };
        let mut replies = self.replies.into_inner().unwrap_or_else(|e| e.into_inner());
        for reply in replies.values_mut().flatten() {
            if let Ok(response) = &mut reply.answer {
                apply(&mut response.message.content);
                for call in &mut response.message.tool_calls {
                    apply(&mut call.arguments);
                }
            }
        }
        Playback { replies: Mutex::new(replies), ..self }
    }

    /// Replies recorded for the run's own loop (its steps).
    pub fn steps(&self) -> usize {
        let replies = self.replies.lock().unwrap_or_else(|e| e.into_inner());
        replies.get("").map_or(0, |q| q.iter().filter(|r| r.purpose == Purpose::Step).count())
    }
}

fn response(reply: &ModelReply, usage: Option<Usage>, model: &str) -> ChatResponse {
    ChatResponse {
        message: Message::assistant(reply.content.clone(), reply.tool_calls.clone()),
        usage: usage.unwrap_or_default(),
        model: model.to_owned(),
    }
}
