//! The harness's side of orchestration ([`crate::agents`]): the
//! `agents__delegate` calls of one model reply are checked one by one,
//! run together as workers (each a [`Harness`] of its own), and their
//! results handed back in the order the calls were made; and the reviewer
//! of `--review`.

use super::answer::SUPERVISOR_LEAD;
use super::audit::{AuditLog, record};
use super::progress::Progress;
use super::report::Stop;
use super::state::RunState;
use super::{Harness, RunConfig};
use crate::agents::{DELEGATE, Envelope};
use crate::error::{ErrorCode, ToolFailure};
use crate::harness::Decision;
use crate::host::Reach;
use crate::model::ToolCall;
use crate::policy::AgentProfile;
use serde_json::{Value, json};
use std::collections::HashMap;
use std::sync::Arc;

mod prepare;
mod review;
mod worker;

use worker::run_worker;

/// Where a harness stands in the run's tree.
#[derive(Clone, Debug, Default)]
pub(super) struct Scope {
    /// `None` for the run itself; `t1`, `t1.2`, `review1` for workers.
    pub task: Option<String>,
    /// 0 for the run itself; its workers are 1.
    pub depth: usize,
    /// The worker's profile.
    pub agent: Option<String>,
    /// Workers started from here so far (numbers their task ids).
    pub children: usize,
}

impl Scope {
    /// The id of the next worker started from here.
    fn next_child(&mut self) -> String {
        self.children += 1;
        match &self.task {
            Some(task) => format!("{task}.{}", self.children),
            None => format!("t{}", self.children),
        }
    }
}

/// A delegation checked and ready to run.
pub(super) struct Job {
    task_id: String,
    profile: AgentProfile,
    envelope: Envelope,
    skills: Vec<String>,
    audit: AuditLog,
    config: RunConfig,
    reach: Reach,
    depth: usize,
}

/// A delegation's outcome, handed back to the loop for the call that made it.
pub(super) struct Delegated {
    pub outcome: Result<String, ToolFailure>,
    /// `auto`, or `declined` when a person declined a worker's call.
    pub decision: Decision,
    pub arguments: Value,
    /// Wall time of the worker, from the delegation's checks to its end.
    pub duration_ms: u64,
    /// What came back may hold text from the network
    /// ([`Action::network`](super::Action::network)).
    pub network: bool,
}

/// What is kept of a job while its worker runs.
struct Started {
    task_id: String,
    agent: String,
    key: String,
}

impl Harness<'_> {
    /// The profiles this harness may delegate to, each with its skills
    /// narrowed to this harness's own, for the tool's description; empty
    /// when it may not delegate (too deep, or a profile without `agents`).
    pub(super) fn delegates(&self) -> Vec<(String, String, Vec<String>)> {
        let limits = self.team.limits();
        let may = match &self.scope.agent {
            None => true,
            Some(agent) => self.team.profile(agent).is_some_and(AgentProfile::may_delegate),
        };
        if !may || self.scope.depth >= limits.max_depth {
            return Vec::new();
        }
        let mine = self.passable();
        self.team
            .profiles()
            .iter()
            .filter_map(|p| {
                let skills: Vec<String> =
                    p.skills.iter().filter(|s| mine.contains(&s.as_str())).cloned().collect();
                (!skills.is_empty()).then(|| {
                    (p.name.clone(), crate::text::shorten_chars(&p.description, 200), skills)
                })
            })
            .collect()
    }

    /// The skills this loop may hand on: what it was given.
    fn passable(&self) -> Vec<&str> {
        if self.passable.is_empty() {
            self.toolbox.skills()
        } else {
            self.passable.iter().map(String::as_str).collect()
        }
    }

    /// Offer `agents__delegate` when this harness may delegate. The run's
    /// own loop then keeps no skill of its own unless the table says
    /// `supervisor_skills = true`: it plans and delegates, and what pages
    /// and files say reaches it only as its workers' checked JSON.
    pub(super) fn offer_delegate(&mut self) {
        let agents = self.delegates();
        let limits = self.team.limits();
        let steps = limits
            .worker_max_steps
            .max(self.team.profiles().iter().filter_map(|p| p.max_steps).max().unwrap_or(0));
        self.toolbox.add_delegate(&agents, steps);
        if self.scope.depth == 0 && !agents.is_empty() && !limits.supervisor_skills {
            self.passable = self.toolbox.skills().into_iter().map(str::to_owned).collect();
            self.toolbox.keep_skills(&[]);
        }
    }

    /// True for the run's own loop when it only delegates (its skills
    /// are passed to workers, not offered).
    pub(super) fn only_delegates(&self) -> bool {
        !self.passable.is_empty()
    }

    /// What a loop that only delegates is told after its task
    /// ([`SUPERVISOR_LEAD`]); `None` for every other loop.
    pub(super) fn lead(&self) -> Option<&'static str> {
        self.only_delegates().then_some(SUPERVISOR_LEAD)
    }

    /// True when `call` is a delegation (offered or not: a worker that may
    /// not delegate is told why).
    pub(super) fn is_delegation(&self, call: &ToolCall) -> bool {
        matches!(self.toolbox.target(&call.name), Some(super::toolbox::Target::Delegate))
            || (self.scope.depth > 0 && (call.name == DELEGATE || call.name == "agents.delegate"))
    }

    /// Check, record and run the delegations among `calls` (made at this
    /// step of `run`, numbered from its next call), together. Returns each one's
    /// outcome by call id, and how many repeated an earlier delegation; the
    /// workers' summaries go to the report. Every delegation is on record
    /// (`tool_call_started`) before any worker starts.
    pub(super) async fn delegate(
        &mut self,
        calls: &[ToolCall],
        run: &mut RunState,
        progress: &dyn Progress,
    ) -> (HashMap<String, Delegated>, usize) {
        let (step, first_call) = (run.steps, run.actions.len() + 1);
        let mut out = HashMap::new();
        let mut jobs: Vec<(String, Value, Job)> = Vec::new();
        let mut repeats = 0;
        let delegations: Vec<usize> =
            (0..calls.len()).filter(|&i| self.is_delegation(&calls[i])).collect();
        for i in delegations {
            let call = &calls[i];
            let parsed = super::repair::arguments(&call.arguments);
            let arguments = parsed
                .as_ref()
                .map_or_else(|_| json!(call.arguments), |m| Value::Object(m.clone()));
            let recorded = self.audit.call_started(&record::CallHead::of_delegation(
                step,
                first_call + i,
                &call.name,
                arguments.clone(),
            ));
            let prepared = match recorded {
                Err(failure) => Err(failure),
                Ok(()) => self.prepare(&arguments, parsed.is_ok(), step, first_call + i),
            };
            match prepared {
                Ok(job) => jobs.push((call.id.clone(), arguments, job)),
                Err(failure) => {
                    if failure.code == ErrorCode::Limit && failure.message.contains("already ran") {
                        repeats += 1;
                    }
                    self.audit.record(record::DelegationFinished {
                        step,
                        call: Some(first_call + i),
                        agent: arguments.get("agent").cloned().unwrap_or_default(),
                        outcome: record::Outcome::Failed(failure.code),
                        error: Some(failure.message.clone()),
                        ..Default::default()
                    });
                    // No worker ran, but a repeat's refusal quotes the earlier
                    // worker's output: judged by every skill this loop hands on.
                    let network = self.skills_hold_network_text(&self.passable());
                    out.insert(
                        call.id.clone(),
                        Delegated {
                            outcome: Err(failure),
                            decision: Decision::NotReached,
                            arguments,
                            duration_ms: 0,
                            network,
                        },
                    );
                }
            }
        }
        if jobs.is_empty() {
            return (out, repeats);
        }
        let (host, model, confirmer) = (self.host, self.model, self.confirmer);
        let mut kept = Vec::with_capacity(jobs.len());
        let mut runs = Vec::with_capacity(jobs.len());
        for (id, arguments, job) in jobs {
            let network = self.skills_hold_network_text(&job.skills);
            kept.push((
                id,
                arguments,
                network,
                Started {
                    task_id: job.task_id.clone(),
                    agent: job.profile.name.clone(),
                    key: job.envelope.key(),
                },
            ));
            progress.worker_started(&job.task_id, &job.profile.name);
            runs.push(run_worker(host, model, confirmer, Arc::clone(&self.team), job, progress));
        }
        // A parent waiting on its workers is not running: its slot goes to them.
        let waited = self.slot.take().is_some();
        let finished = futures_util::future::join_all(runs).await;
        if waited {
            self.slot = Some(self.team.slot().await);
        }
        for ((id, arguments, network, started), done) in kept.into_iter().zip(finished) {
            let summary = self.finish_worker(&started, &done, step);
            progress.worker_finished(
                &summary.task_id,
                summary.outcome.as_str(),
                summary.duration_ms,
            );
            let declined = done.report.as_ref().is_some_and(|r| r.stop == Stop::Declined);
            let steps = summary.steps;
            run.workers.push(summary);
            let outcome = done.output.map(|output| {
                json!({
                    "status": "ok",
                    "agent": started.agent,
                    "task_id": started.task_id,
                    "output": output,
                    "steps": steps
                })
                .to_string()
            });
            out.insert(
                id,
                Delegated {
                    outcome,
                    decision: if declined { Decision::Declined } else { Decision::Auto },
                    arguments,
                    duration_ms: done.duration_ms,
                    network,
                },
            );
        }
        (out, repeats)
    }
}
