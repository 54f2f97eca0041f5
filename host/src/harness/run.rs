//! A run's two ends: what is set up before its first step (the
//! conversation, the run's budget, the skills chosen by the task, the
//! context window, the remembered notes) and the report after its last.

use super::audit::record;
use super::conversation::Conversation;
use super::progress::Progress;
use super::report::{RunReport, Stop};
use super::state::RunState;
use super::{BundleBody, Disclosure, Harness, disclosure};
use crate::model::Message;

impl Harness<'_> {
    /// The state of a run of `task` about to make its first request, with
    /// `run_started` (and what was chosen and found for it) on record; with
    /// a stop when that record could not be written, so that nothing is
    /// asked or run off the record (fail closed).
    pub(super) async fn begin(
        &mut self,
        run_id: &str,
        task: &str,
        progress: &dyn Progress,
    ) -> (RunState, Option<Stop>) {
        // A worker's task is the brief its parent agent wrote, not the person's.
        let conversation = if self.scope.depth > 0 {
            Conversation::delegated(task)
        } else {
            Conversation::new(task)
        };
        let offered: Vec<&str> = self.toolbox.specs().iter().map(|s| s.name.as_str()).collect();
        progress.run_started(run_id, self.model.name(), &offered);
        if self.scope.depth == 0 {
            // The run's budget counts every worker's tokens too.
            self.team.set_budget(self.config.token_budget);
            self.team.set_taping(self.taping_of(run_id));
        } else if let Some(journal) = self.team.taping().journal {
            // A worker's changes go to the run's journal, within its budget.
            self.journal = Some(journal);
        }
        let (mut opened, mut offer_all) = (Vec::new(), false);
        if self.config.disclose == Disclosure::ByTask {
            let choice = disclosure::choose(task, &self.toolbox.skill_words());
            offer_all = choice.chosen.is_empty();
            self.audit.record(record::SkillsChosen {
                chosen: choice.chosen.clone(),
                scores: choice.scores,
                offer_all,
            });
            opened = choice.chosen;
        }
        let budget = self.budget().await;
        let recorded = self.audit.record_before(record::RunStarted {
            task: task.to_owned(),
            model: Some(self.model.name().to_owned()),
            tools: Some(offered.iter().map(|t| t.to_string()).collect()),
            disclose: Some(self.config.disclose),
            context_tokens: Some(budget.0.context_tokens),
            context_source: Some(budget.1.to_owned()),
            compact_at: Some(budget.0.compact_at),
            bundle_body: Some(self.config.bundle_body),
            kind: None,
            max_steps: Some(self.config.max_steps),
            token_budget: self.config.token_budget,
            compact_schemas: Some(self.config.compact_schemas),
            task_type: self.config.task_type.clone(),
            review: self.config.review.as_deref().map(|r| self.audit.mask(r)),
        });
        let not_recorded = recorded.err().map(|why| {
            Stop::NotRecorded(why.replace("so the call was not run", "so the run was not started"))
        });
        let budget = budget.0;
        let mut run = RunState::new(run_id, task, conversation, budget, self.config.max_steps);
        run.opened = opened;
        run.offer_all = offer_all;
        run.remembered = self.remembered(task);
        if self.config.bundle_body == BundleBody::UpFront && not_recorded.is_none() {
            self.open_bundle_up_front(&mut run, task);
        }
        (run, not_recorded)
    }

    /// [`BundleBody::UpFront`]: the bundle the task's words match best,
    /// opened before the first request — its instructions after the task,
    /// its tools offered. Nothing when the words match none.
    fn open_bundle_up_front(&mut self, run: &mut RunState, task: &str) {
        let words: Vec<(String, String)> = self
            .toolbox
            .bundles()
            .iter()
            .filter_map(|name| {
                let entry = self.host.registry().active_bundle(name)?;
                Some((name.to_string(), entry.active()?.description.clone()))
            })
            .collect();
        let Some(best) = disclosure::choose(task, &words).chosen.into_iter().next() else {
            return;
        };
        let Ok(text) = self.open_bundle(run, &best) else { return };
        run.conversation.push(Message::user(format!(
            "[harness] The skill {best} matches this task, so it is open already:\n{text}"
        )));
    }

    /// The paths this run changed that cannot be undone (best-effort
    /// journal, past its budget); the run's own loop only, workers' included.
    fn not_undoable(&self) -> Vec<std::path::PathBuf> {
        let Some(journal) = self.journal.as_ref().filter(|_| self.scope.depth == 0) else {
            return Vec::new();
        };
        let root = journal.dir().parent().unwrap_or(std::path::Path::new("."));
        let calls = crate::journal::read_calls(root, journal.run_id()).unwrap_or_default();
        let mut paths: Vec<std::path::PathBuf> = calls
            .iter()
            .flat_map(|c| &c.entries)
            .filter(|e| e.not_undoable)
            .map(|e| e.grant.join(&e.path))
            .collect();
        paths.sort();
        paths.dedup();
        paths
    }

    /// The report of `run`, stopped by `stop`, with `run_finished` on
    /// record and the log synced.
    pub(super) fn finish(&mut self, run: RunState, stop: Stop) -> RunReport {
        let RunState { run_id, answer, steps, usage, actions, workers, reviews, .. } = run;
        let report = RunReport {
            run_id,
            stop,
            answer,
            steps,
            usage,
            actions,
            audit_log: (!self.audit.path().as_os_str().is_empty())
                .then(|| self.audit.path().to_owned()),
            workers,
            reviews,
            total_tokens: self.team.spent(),
            not_undoable: self.not_undoable(),
        };
        self.audit.record(record::RunFinished {
            stop: record::Ended::Run(report.stop.clone()),
            answer: Some(report.answer.clone()),
            steps,
            usage: Some(usage),
            tool_calls: report.actions.len(),
            workers: Some(report.workers.len()),
            reviews: Some(report.reviews.clone()),
        });
        self.audit.sync();
        report
    }
}
