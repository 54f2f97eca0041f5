//! A worker's life: its loop made from its parent's (only its skills,
//! its reach, its return format, its slot), run to its end in a slot of
//! the run's, its answer read against the return format, and its end on
//! record for its parent.

use super::{Job, Scope, Started};
use crate::agents::{Team, envelope};
use crate::error::{ErrorCode, ToolFailure};
use crate::harness::Harness;
use crate::harness::audit::record;
use crate::harness::progress::{Progress, WorkerProgress};
use crate::harness::report::{RunReport, Stop, WorkerSummary};
use crate::host::{Confirmer, Host, Reach};
use crate::model::{Model, Usage};
use crate::text::shorten_chars;
use serde_json::{Value, json};
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Instant;

/// What a worker's run came to.
pub(super) struct Finished {
    pub(super) report: Option<RunReport>,
    pub(super) output: Result<Value, ToolFailure>,
    pub(super) duration_ms: u64,
}

impl Harness<'_> {
    /// This loop as a worker: only `skills` (already within its parent's),
    /// within `reach`, its answer held to `format`, holding `slot`.
    fn worker(
        mut self,
        team: Arc<Team>,
        scope: Scope,
        skills: &[String],
        reach: Reach,
        format: Value,
        slot: tokio::sync::OwnedSemaphorePermit,
    ) -> Self {
        self.team = team;
        self.scope = scope;
        self.reach = reach;
        self.answer_format = Some(format);
        self.slot = Some(slot);
        self.fresh_toolbox();
        self.toolbox.keep_skills(skills);
        self.offer_delegate();
        self
    }

    /// Record how a worker ended, and note it for repeats; its summary.
    pub(super) fn finish_worker(
        &mut self,
        job: &Started,
        done: &Finished,
        step: usize,
    ) -> WorkerSummary {
        let (outcome, error, output) = match &done.output {
            Ok(v) => (record::Outcome::Ok, None, v.clone()),
            Err(f) => (record::Outcome::Failed(f.code), Some(f.message.clone()), Value::Null),
        };
        let (steps, usage) =
            done.report.as_ref().map_or((0, Usage::default()), |r| (r.steps, r.usage));
        self.audit.record(record::DelegationFinished {
            step,
            call: None,
            task_id: Some(job.task_id.clone()),
            agent: json!(job.agent),
            outcome,
            error,
            output,
            steps,
            usage,
            duration_ms: done.duration_ms,
        });
        let brief = match &done.output {
            Ok(v) => format!("{} (ok: {})", job.task_id, shorten_chars(&v.to_string(), 200)),
            Err(f) => format!("{} ({}: {})", job.task_id, f.code, shorten_chars(&f.message, 200)),
        };
        self.delegated.insert(job.key.clone(), brief);
        WorkerSummary {
            task_id: job.task_id.clone(),
            agent: job.agent.clone(),
            outcome,
            steps,
            usage,
            duration_ms: done.duration_ms,
            actions: done.report.as_ref().map(|r| r.actions.clone()).unwrap_or_default(),
            workers: done.report.as_ref().map(|r| r.workers.clone()).unwrap_or_default(),
        }
    }
}

/// Run one worker to its end: wait for a slot, run its loop with only its
/// skills and the envelope, and read its answer against the return format.
/// Boxed: a worker's loop may delegate in turn.
pub(super) fn run_worker<'a>(
    host: &'a Host,
    model: &'a dyn Model,
    confirmer: &'a dyn Confirmer,
    team: Arc<Team>,
    job: Job,
    progress: &'a dyn Progress,
) -> Pin<Box<dyn Future<Output = Finished> + Send + 'a>> {
    Box::pin(async move {
        let started = Instant::now();
        let failed = |code, message: String| Finished {
            report: None,
            output: Err(ToolFailure::new(code, message)),
            duration_ms: started.elapsed().as_millis() as u64,
        };
        let own: Option<Arc<dyn Model>> = match &job.profile.model {
            None => None,
            Some(name) => match team.model(name) {
                Some(m) => Some(Arc::clone(m)),
                None => {
                    return failed(
                        ErrorCode::WorkerFailed,
                        format!(
                            "worker {} ({}): its model `{name}` is not available",
                            job.task_id, job.profile.name
                        ),
                    );
                }
            },
        };
        let model: &dyn Model = own.as_deref().unwrap_or(model);
        let slot = team.slot().await;
        let run_id = job.audit.run_id().to_owned();
        let format = job.envelope.return_format.clone();
        let brief =
            job.envelope.brief(&job.profile.description, job.profile.instructions.as_deref());
        let scope = Scope {
            task: Some(job.task_id.clone()),
            depth: job.depth,
            agent: Some(job.profile.name.clone()),
            children: 0,
        };
        let mut harness = Harness::new(host, model, confirmer, job.config.clone(), job.audit)
            .worker(team, scope, &job.skills, job.reach, format.clone(), slot);
        let report = harness
            .run(&run_id, &brief, &WorkerProgress { inner: progress, task: &job.task_id })
            .await;
        let who = format!("worker {} ({})", job.task_id, job.profile.name);
        let last = report
            .answer
            .as_deref()
            .map_or(String::new(), |a| format!("; its last words: {}", shorten_chars(a, 300)));
        let output = match &report.stop {
            Stop::Answered => {
                envelope::check_output(report.answer.as_deref().unwrap_or(""), &format).map_err(
                    |errors| {
                        ToolFailure::new(
                            ErrorCode::InvalidOutput,
                            format!(
                                "{who} answered, but not in the return format ({}){last}",
                                errors.join("; ")
                            ),
                        )
                    },
                )
            }
            Stop::TokenBudget => Err(ToolFailure::new(
                ErrorCode::Budget,
                format!("{who} used up its token budget after {} step(s)", report.steps),
            )),
            Stop::MaxSteps => Err(ToolFailure::new(
                ErrorCode::WorkerFailed,
                format!("{who} stopped at its step limit ({}) without an answer", report.steps),
            )),
            Stop::NoProgress => Err(ToolFailure::new(
                ErrorCode::WorkerFailed,
                format!("{who} repeated the same call without progress"),
            )),
            Stop::Declined => Err(ToolFailure::new(
                ErrorCode::Denied,
                format!("{who}: a person declined one of its calls"),
            )),
            Stop::ModelError(e) => Err(ToolFailure::new(
                ErrorCode::WorkerFailed,
                format!("{who}: its model failed: {e}"),
            )),
            Stop::NotRecorded(e) => {
                Err(ToolFailure::new(ErrorCode::WorkerFailed, format!("{who} did not start: {e}")))
            }
        };
        Finished { report: Some(report), output, duration_ms: started.elapsed().as_millis() as u64 }
    })
}
