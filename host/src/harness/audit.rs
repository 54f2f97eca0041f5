//! The run's audit log: one JSON object per line, written and flushed as
//! things happen, so a crash loses nothing already done. Secrets (values of
//! environment variables granted to skills, credential values, API keys)
//! are masked in every line before it is written.
//!
//! Each line is a [`Record`] (the types, one per `event`, are in
//! [`record`]; the reference chapter of the book lists them): writers hand
//! the log a record, readers decode the same type, and the typed events an
//! embedder receives are read from these records as they are written
//! ([`super::events`]). A worker writes to its run's log, each record
//! tagged with its task id and profile; workers run at the same time, so
//! their records interleave.
//!
//! Where the lines go is the embedder's choice ([`AuditSink`]): a file per
//! run in a folder (what `reach run` does), a writer of their own, or
//! nowhere.
//!
//! Order and durability: each record is one `write` to a file opened for
//! appending, made before the action it describes, so the file holds the
//! records in the order things happened and a host that dies mid-call
//! leaves "this call started" with no outcome after it. The records are in
//! the kernel when the call begins; `fsync` (~0.6 ms here) is done once,
//! when the run finishes, not per call.
//!
//! A log that would otherwise grow without bound (`reach mcp`'s: one per
//! server process, however long it serves) can rotate
//! ([`AuditLog::rotate_at`]): past a size it goes on in
//! `<run id>.part2.jsonl`, `.part3`, …, the last record of a part
//! (`log_rotated`, `next`) and the first of the next (`log_continued`,
//! `part`, `previous`, and a copy of the log's first record as
//! `run_started`) linking them, and only the newest parts are kept.
//!
//! Masking happens on values *before* they are encoded: a secret with a
//! quote, a backslash or a newline (a PEM key) looks different once written
//! as JSON, so masking the encoded line alone would miss it. Besides the
//! secrets the host knows, the user name and password of any URL in a record
//! (`https://user:pass@host`, in arguments, a task, a message) is masked
//! (module `user_info`), so neither the log nor the events built from it
//! keep one.

mod chain;
mod clock;
pub mod key;
mod read;
pub mod record;
mod rotation;
mod sink;
mod user_info;
mod verify;

use super::events::EventSender;
use crate::error::{ErrorCode, ToolFailure};
use crate::runtime::redact::Redactor;
use chain::{Chain, SharedChain};
pub use chain::{genesis, head_message};
pub use clock::{new_run_id, now_rfc3339};
pub use key::{AuditKey, PublicKey};
pub use read::read_log;
use record::Worker;
pub use record::{Body, CallEnded, CallHead, Record};
use rotation::Rotation;
use serde_json::{Map, Value};
use sink::Output;
pub use sink::{AuditSink, SharedWriter};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
pub use verify::{Problem, Verdict, VerifyReport, verify_log, verify_runs};

/// An open audit log.
pub struct AuditLog {
    path: PathBuf,
    output: Output,
    events: Option<EventSender>,
    run_id: String,
    redactor: Redactor,
    /// A worker's log: `worker` (its task id) and `worker_agent` added to
    /// each record.
    scope: Option<(String, String)>,
    /// Set for a log that continues in a new file past a size.
    rotation: Option<Rotation>,
    /// The hash chain through the file's lines (shared with children).
    chain: SharedChain,
}

impl AuditLog {
    /// Create `dir/<run_id>.jsonl`, masking `secrets` in everything written.
    pub fn create(dir: &Path, run_id: &str, secrets: Vec<String>) -> std::io::Result<AuditLog> {
        // For this user alone: the log holds every call's arguments and results.
        crate::private_fs::create_dir_all(dir)?;
        // Before the file: a log that could not be signed is not begun.
        let key = AuditKey::load_or_create(dir)?;
        let path = dir.join(format!("{run_id}.jsonl"));
        let file = crate::private_fs::create_new_append(&path)?;
        Ok(AuditLog {
            path,
            output: Output::File(file),
            chain: Chain::start(run_id, Some(key)),
            ..AuditLog::disabled(run_id, secrets)
        })
    }

    /// A log that writes nothing (for embedders that keep their own).
    pub fn disabled(run_id: &str, secrets: Vec<String>) -> AuditLog {
        AuditLog {
            path: PathBuf::new(),
            output: Output::Nowhere,
            events: None,
            run_id: run_id.to_owned(),
            redactor: Redactor::new(secrets),
            scope: None,
            rotation: None,
            chain: Chain::start(run_id, None),
        }
    }

    /// The log of run `run_id` in `sink`, masking `secrets` in everything
    /// written. Fails only for [`AuditSink::Dir`], when the file cannot be
    /// created (a run id is never reused).
    pub fn open(sink: &AuditSink, run_id: &str, secrets: Vec<String>) -> std::io::Result<AuditLog> {
        match sink {
            AuditSink::Dir(dir) => AuditLog::create(dir, run_id, secrets),
            AuditSink::Writer(writer) => Ok(AuditLog {
                output: Output::Writer(Arc::clone(writer)),
                ..AuditLog::disabled(run_id, secrets)
            }),
            AuditSink::Disabled => Ok(AuditLog::disabled(run_id, secrets)),
        }
    }

    /// Past `max_bytes`, go on in a new file, keeping the newest `keep`
    /// files (at least 1): the log's size stays within about `keep ×
    /// max_bytes` (a part ends at the first record that would take it past
    /// `max_bytes`; one larger record gets a part of its own). Only for a
    /// log in a folder ([`AuditLog::create`]); give it before the first
    /// record, and make no [`AuditLog::child`] of it (a child keeps writing
    /// the part it was made in).
    pub fn rotate_at(mut self, max_bytes: u64, keep: u32) -> AuditLog {
        if let Output::File(file) = &self.output {
            let written = file.metadata().map_or(0, |m| m.len());
            self.rotation =
                Some(Rotation { max_bytes, keep: keep.max(1), part: 1, written, first: None });
        }
        self
    }

    /// Also send each record that is an [`Event`](super::events::Event) to `events`.
    pub(crate) fn with_events(mut self, events: EventSender) -> AuditLog {
        self.events = Some(events);
        self
    }

    /// The log of worker `task` (profile `agent`): the same file, writer and
    /// events as this one, with `worker` (= `task`) and `worker_agent` in
    /// every record, so one file holds the whole tree of a run.
    pub fn child(&self, task: &str, agent: &str) -> std::io::Result<AuditLog> {
        let output = match &self.output {
            Output::Nowhere => Output::Nowhere,
            // Same open file (appending): each record is still one write.
            Output::File(file) => Output::File(file.try_clone()?),
            Output::Writer(writer) => Output::Writer(Arc::clone(writer)),
        };
        Ok(AuditLog {
            path: self.path.clone(),
            output,
            events: self.events.clone(),
            run_id: self.run_id.clone(),
            redactor: self.redactor.clone(),
            scope: Some((task.to_owned(), agent.to_owned())),
            rotation: None,
            chain: Arc::clone(&self.chain),
        })
    }

    /// The run's id, as every record carries it.
    pub fn run_id(&self) -> &str {
        &self.run_id
    }

    /// The worker task this log records, if it is a worker's.
    pub fn task(&self) -> Option<&str> {
        self.scope.as_ref().map(|(task, _)| task.as_str())
    }

    /// Where the log is (of a rotating log, the part written now); empty
    /// when disabled.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Mask `secrets` too from now on, besides those it was given: a
    /// long-running server's log learns the secrets of each host a reload
    /// brings (a variable granted since), and keeps masking the old ones.
    #[cfg(feature = "mcp")]
    pub(crate) fn mask_also(&mut self, secrets: &[String]) {
        self.redactor = self.redactor.with(secrets);
    }

    /// Mask secrets in `text` (also used for what goes to the model).
    pub fn mask(&self, text: &str) -> String {
        self.redactor.text(text).into_owned()
    }

    /// What it masks with, for a recording that masks the same.
    pub(crate) fn redactor(&self) -> Redactor {
        self.redactor.clone()
    }

    /// `value` with secrets masked in every string and key, before it is
    /// ever encoded.
    pub fn mask_value(&self, value: Value) -> Value {
        match value {
            Value::String(text) => Value::String(self.mask(&text)),
            Value::Array(items) => {
                Value::Array(items.into_iter().map(|v| self.mask_value(v)).collect())
            }
            Value::Object(map) => Value::Object(
                map.into_iter().map(|(k, v)| (self.mask(&k), self.mask_value(v))).collect(),
            ),
            other => other,
        }
    }

    /// Append one record, as one write. A failed write is logged, not
    /// fatal: the run goes on. For the record that must exist before an
    /// action, use [`AuditLog::record_before`].
    pub fn record(&mut self, body: impl Into<Body>) {
        if let Err(err) = self.try_record(body.into(), false) {
            tracing::error!(
                path = %self.path.display(),
                error = %err,
                "could not write the audit log"
            );
        }
    }

    /// Append the record of an action about to happen; `Err` means it is not
    /// on record, and the caller must not act (fail closed: a skill that
    /// filled the disk does not get to run unrecorded).
    pub fn record_before(&mut self, body: impl Into<Body>) -> Result<(), String> {
        self.try_record(body.into(), true).map_err(|err| {
            tracing::error!(
                path = %self.path.display(),
                error = %err,
                "could not write the audit log; the call does not run"
            );
            format!(
                "the audit log {} could not be written ({err}), so the call was not run",
                self.path.display()
            )
        })
    }

    /// The first half of the record around a call, the same for the
    /// harness, `reach call` and `reach mcp`: `tool_call_started`, before
    /// the call runs. `Err` is the failure to give instead of running it.
    /// [`AuditLog::call_ended`] is the second half.
    pub fn call_started(&mut self, call: &CallHead) -> Result<(), ToolFailure> {
        self.record_before(Body::ToolCallStarted(call.clone()))
            .map_err(|why| ToolFailure::new(ErrorCode::Failed, why))
    }

    /// The second half: `tool_call`, the call and how it ended.
    pub fn call_ended(&mut self, call: CallEnded) {
        self.record(Body::ToolCall(call));
    }

    /// The one place a record becomes a line: masked, framed, written,
    /// and sent as an event.
    fn try_record(&mut self, body: Body, before_action: bool) -> std::io::Result<()> {
        if matches!(self.output, Output::Nowhere) && self.events.is_none() {
            return Ok(());
        }
        let worker = self
            .scope
            .as_ref()
            .map(|(task, agent)| Worker { task: task.clone(), agent: agent.clone() });
        // Masked as values, before they are encoded: a secret with a quote
        // or a line break looks different once written as JSON. Masking the
        // encoded line as well could cut a JSON token (a granted value such
        // as `true`) and leave a line that no longer parses.
        let masked = user_info::mask_value(self.mask_value(Value::Object(body.fields())));
        let Value::Object(mut line) = masked else { unreachable!("an object stays an object") };
        let record = Record::new(now_rfc3339(), self.run_id.clone(), worker, body);
        record.frame(&mut line);
        // What a reader of the line will see: the masked record.
        let line_value = Value::Object(line.clone());
        let seen = || Record::from_value(line_value.clone());
        if let Some(rotation) = &mut self.rotation
            && rotation.first.is_none()
        {
            rotation.first = seen();
        }
        let written = self.write_linked(line, false);
        // The event goes out even when the line could not be written (the
        // run goes on, and the embedder should see it), except for an action
        // that does not happen because its record is missing.
        if let Some(events) = &self.events
            && (written.is_ok() || !before_action)
            && let Some(record) = seen()
        {
            events.record(&record);
        }
        written
    }

    /// Link `line` into the chain (signed when it is a `head`) and write it
    /// where the log goes, in a new part first when this one is full. The
    /// chain's lock is held from linking to writing, so a worker writing
    /// the same file cannot come between.
    fn write_linked(&mut self, mut line: Map<String, Value>, head: bool) -> std::io::Result<()> {
        let chain = Arc::clone(&self.chain);
        let mut chain = chain.lock().unwrap_or_else(|e| e.into_inner());
        if self.rotation.is_some() {
            // `seq` and `prev` add under 100 bytes; near enough for a size limit.
            let estimate = Value::Object(line.clone()).to_string().len() as u64 + 100;
            self.rotate_if_full(estimate, &mut chain)?;
        }
        chain.link(&mut line);
        if head {
            chain.sign(&self.run_id, &mut line);
        }
        let mut text = Value::Object(line).to_string();
        text.push('\n');
        let written = match &mut self.output {
            Output::Nowhere => Ok(()),
            Output::File(file) => file.write_all(text.as_bytes()),
            Output::Writer(writer) => {
                let mut writer = writer.lock().unwrap_or_else(|e| e.into_inner());
                writer.write_all(text.as_bytes()).and_then(|()| writer.flush())
            }
        };
        if written.is_ok() {
            chain.advance(&text, head);
            if let Some(rotation) = &mut self.rotation {
                rotation.written += text.len() as u64;
            }
        }
        written
    }

    /// End the log with a signed head (`log_sealed`) over every line so
    /// far, unless its last line is one already. Only the log of a run (not
    /// a worker's, which writes the run's file) in a folder is sealed; a log
    /// that goes on after a head simply needs another one.
    pub fn seal(&mut self) {
        if self.scope.is_some() || !matches!(self.output, Output::File(_)) {
            return;
        }
        let records = {
            let chain = self.chain.lock().unwrap_or_else(|e| e.into_inner());
            if chain.sealed || chain.key.is_none() {
                return;
            }
            chain.seq
        };
        let record = Record::new(
            now_rfc3339(),
            self.run_id.clone(),
            None,
            Body::LogSealed(record::LogSealed { records, ..Default::default() }),
        );
        let Value::Object(line) = record.to_value() else { unreachable!("an object") };
        if let Err(err) = self.write_linked(line, true) {
            tracing::error!(
                path = %self.path.display(),
                error = %err,
                "could not write the audit log's signed head"
            );
        }
    }

    /// Seal the log ([`AuditLog::seal`]) and push what was written to the
    /// disk (end of a run).
    pub fn sync(&mut self) {
        self.seal();
        let synced = match &mut self.output {
            Output::Nowhere => Ok(()),
            Output::File(file) => file.sync_data(),
            Output::Writer(writer) => writer.lock().unwrap_or_else(|e| e.into_inner()).flush(),
        };
        if let Err(err) = synced {
            tracing::warn!(
                path = %self.path.display(),
                error = %err,
                "could not sync the audit log"
            );
        }
    }
}

#[cfg(test)]
mod tests;
