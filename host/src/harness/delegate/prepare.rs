//! A delegation checked, and made into a job: what a worker gets (its
//! task id, its own audit log, its limits) and the record that it started.

use super::Job;
use crate::agents::{DELEGATE, Envelope};
use crate::error::{ErrorCode, ToolFailure};
use crate::harness::audit::record;
use crate::harness::{Harness, RunConfig};
use crate::policy::{AgentProfile, DELEGATE_SKILL};
use serde_json::Value;

/// The fewest model requests a delegation gets (within the profile's
/// limit), whatever the envelope asks: one to call a tool, one to fix a
/// call its tool refused, one to answer (the harness's questions come on
/// top). A small model's supervisor often asks for a single step, which
/// leaves its worker only a made-up answer.
const MIN_WORKER_STEPS: usize = 3;

impl Harness<'_> {
    /// The checks of one delegation, in order: an envelope, a known agent,
    /// not a repeat, the run's budget, depth, the run's number of workers.
    /// Returns the envelope, the agent's profile and the skills it gets.
    fn checked(
        &self,
        arguments: &Value,
        parsed: bool,
    ) -> Result<(Envelope, AgentProfile, Vec<String>), ToolFailure> {
        let limits = self.team.limits();
        if self.toolbox.target(DELEGATE).is_none() {
            let why = if self.scope.depth >= limits.max_depth {
                format!(
                    "this worker is at depth {}, the deepest allowed (max_depth = {}), so it may \
                     not delegate",
                    self.scope.depth, limits.max_depth
                )
            } else {
                format!(
                    "agent `{}` may not delegate (its profile does not list `{DELEGATE_SKILL}`)",
                    self.scope.agent.as_deref().unwrap_or("?")
                )
            };
            return Err(ToolFailure::new(
                ErrorCode::Limit,
                format!("{DELEGATE}: {why}; do the task with your own tools"),
            ));
        }
        if !parsed {
            return Err(ToolFailure::new(
                ErrorCode::InvalidArgs,
                format!("{DELEGATE}: the arguments are not a JSON object"),
            ));
        }
        let envelope = Envelope::parse(arguments).map_err(|why| {
            ToolFailure::new(ErrorCode::InvalidArgs, format!("{DELEGATE}: {why}"))
        })?;
        let offered = self.delegates();
        let Some((_, _, skills)) = offered.iter().find(|(name, _, _)| *name == envelope.agent)
        else {
            let names: Vec<&str> = offered.iter().map(|(n, _, _)| n.as_str()).collect();
            return Err(ToolFailure::new(
                ErrorCode::InvalidArgs,
                format!(
                    "{DELEGATE}: there is no agent `{}`; the agents are: {}",
                    envelope.agent,
                    names.join(", ")
                ),
            ));
        };
        let profile =
            self.team.profile(&envelope.agent).cloned().expect("offered agents have profiles");
        if let Some(earlier) = self.delegated.get(&envelope.key()) {
            return Err(ToolFailure::new(
                ErrorCode::Limit,
                format!(
                    "{DELEGATE}: this same delegation already ran as {earlier}; running it again \
                     would not make progress — use its result, or change the task"
                ),
            ));
        }
        if self.team.over_budget() {
            return Err(ToolFailure::new(
                ErrorCode::Budget,
                format!(
                    "{DELEGATE}: the run's token budget is used up ({} tokens); no more workers",
                    self.team.spent()
                ),
            ));
        }
        if !self.team.start_one() {
            return Err(ToolFailure::new(
                ErrorCode::Limit,
                format!(
                    "{DELEGATE}: this run has started {} workers, the most allowed \
                     (max_delegations in [delegation])",
                    limits.max_delegations
                ),
            ));
        }
        Ok((envelope, profile, skills.clone()))
    }

    /// A delegation [`checked`](Harness::checked), then its task id, its log
    /// and its limits, and `delegation_started` on record.
    pub(super) fn prepare(
        &mut self,
        arguments: &Value,
        parsed: bool,
        step: usize,
        call: usize,
    ) -> Result<Job, ToolFailure> {
        let (envelope, profile, skills) = self.checked(arguments, parsed)?;
        let limits = self.team.limits();
        let task_id = self.scope.next_child();
        let audit = self.audit.child(&task_id, &profile.name).map_err(|err| {
            ToolFailure::new(
                ErrorCode::Failed,
                format!(
                    "the audit log {} could not be opened for a worker ({err}), so it was not run",
                    self.audit.path().display()
                ),
            )
        })?;
        let most = profile.max_steps.unwrap_or(limits.worker_max_steps);
        let config = RunConfig {
            // A worker needs two requests to answer from a tool (the call, then
            // the answer): fewer would leave it only a made-up answer.
            max_steps: envelope
                .max_steps
                .map_or(most, |asked| asked.clamp(MIN_WORKER_STEPS.min(most), most)),
            token_budget: profile.token_budget,
            context_tokens: self.config.context_tokens,
            compact_at: self.config.compact_at,
            compact_schemas: self.config.compact_schemas,
            ..RunConfig::default()
        };
        self.delegated.insert(envelope.key(), task_id.clone());
        self.audit.record(record::DelegationStarted {
            step,
            call: Some(call),
            task_id: task_id.clone(),
            agent: profile.name.clone(),
            depth: Some(self.scope.depth + 1),
            skills: Some(skills.clone()),
            max_steps: Some(config.max_steps),
            // The return format is kept: `reach runs show` can say what
            // was asked for.
            task: envelope.task.clone(),
            expected_output: Some(envelope.expected_output.clone()),
            return_format: Some(envelope.return_format.clone()),
        });
        Ok(Job {
            task_id,
            skills: skills.clone(),
            profile,
            envelope,
            audit,
            config,
            reach: self.reach,
            depth: self.scope.depth + 1,
        })
    }
}
