//! The harness loop: a task in, checked and sandboxed tool calls, a result
//! out. Each step asks the model; each tool call it makes goes through the
//! same checks as `reach call` (known tool, repaired and schema-valid
//! arguments, the level, a person for `confirm`), runs in its sandbox, and
//! comes back to the model as a string — an error as a JSON object the
//! model can act on. The loop never dies on a tool, a parse failure or a
//! bad argument; it stops when the model answers, or at a limit, with a
//! report of what was done and what is left.
//!
//! The loop (the crate-private `Harness::run`, reached through
//! [`crate::Agent`]) is a pipeline over one per-run state value (`RunState`):
//! set up (`run`), then one step at a time (`step`: the request, `reply`:
//! the calls read out of it, then `questions` about an answer or `call`:
//! the calls run), then the report. What the harness says back to the
//! model, and how often, is in `answer`; the types every part shares
//! (`report`, `config`, `state`, `progress`) use none of the parts.

pub mod audit;
pub(crate) mod compaction;
pub(crate) mod conversation;
pub(crate) mod disclosure;
pub mod events;
pub(crate) mod evidence;
pub mod playback;
pub(crate) mod remember;
pub(crate) mod repair;
pub(crate) mod schema;
pub(crate) mod toolbox;
pub(crate) mod workbench;

mod answer;
mod call;
mod checkpoint;
mod config;
mod delegate;
mod outcome;
mod progress;
mod prompt;
mod questions;
mod reply;
mod report;
mod run;
mod state;
mod step;
mod taping;

pub use config::{BundleBody, RunConfig};
pub use disclosure::Disclosure;
pub use outcome::{Decision, Outcome, Verdict};
pub use progress::{Progress, Quiet};
pub use report::{Action, Review, RunReport, Stop, WorkerSummary};
pub use step::Steering;

use crate::agents::Team;
use crate::host::{Confirmer, Host, Reach};
use crate::memory::MemoryStore;
use crate::model::Model;
use crate::policy::MemorySettings;
use audit::AuditLog;
use remember::Memory;
use serde_json::Value;
use std::sync::Arc;
use toolbox::Toolbox;
use workbench::Workbench;

/// A run in progress: the host, the model, who confirms, the audit log.
pub(crate) struct Harness<'a> {
    host: &'a Host,
    model: &'a dyn Model,
    confirmer: &'a dyn Confirmer,
    config: RunConfig,
    audit: AuditLog,
    toolbox: Toolbox,
    workbench: Workbench,
    inbox: Steering,
    memory: Option<Memory>,
    /// What the run's tree shares: profiles, limits, slots, tokens.
    team: Arc<Team>,
    /// Where this loop stands in the tree (the run itself, or a worker).
    scope: delegate::Scope,
    /// How much of their grants its skills may use.
    reach: Reach,
    /// A worker's return format: its answer must match.
    answer_format: Option<Value>,
    /// A worker's slot among the run's `max_workers`.
    slot: Option<tokio::sync::OwnedSemaphorePermit>,
    /// Delegations made, by envelope key, with how each ended.
    delegated: std::collections::HashMap<String, String>,
    /// The skills this loop may hand to workers: its own, even when it
    /// delegates rather than using them
    /// ([`DelegationSettings::supervisor_skills`][supervisor_skills]).
    ///
    /// [supervisor_skills]: crate::policy::DelegationSettings::supervisor_skills
    passable: Vec<String>,
    /// Where the skills' changes to granted folders are journaled: beside
    /// a log kept in a folder (`.reach/runs` → `.reach/runs/journal`).
    journal: Option<crate::journal::RunJournal>,
    /// The past run this one plays back (the run's own loop; workers
    /// find it in the team's [`playback::Taping`]).
    playback: Option<Arc<playback::Playback>>,
}

impl<'a> Harness<'a> {
    /// A harness over `host`'s skills and policy, asking `model`, with
    /// `confirmer` deciding `confirm`-level calls and `audit` recording.
    pub(crate) fn new(
        host: &'a Host,
        model: &'a dyn Model,
        confirmer: &'a dyn Confirmer,
        config: RunConfig,
        audit: AuditLog,
    ) -> Self {
        let mut harness = Harness {
            host,
            model,
            confirmer,
            config,
            audit,
            toolbox: Toolbox::default(),
            workbench: Workbench::default(),
            inbox: Steering::default(),
            memory: None,
            team: Arc::new(Team::from_policy(host.policy())),
            scope: delegate::Scope::default(),
            reach: Reach::Granted,
            answer_format: None,
            slot: None,
            delegated: Default::default(),
            passable: Vec::new(),
            journal: None,
            playback: None,
        };
        harness.journal = crate::journal::beside_log(harness.audit.path()).map(|root| {
            crate::journal::RunJournal::after_recovery(
                &root,
                harness.audit.run_id(),
                host.policy().journal(),
            )
        });
        harness.fresh_toolbox();
        harness.offer_delegate();
        harness
    }

    /// Delegate to `team`'s profiles (with its models) instead of the
    /// table's profiles alone. `agents__delegate` is offered when the team
    /// has a profile with a skill this run may use.
    ///
    /// Call it before [`Harness::with_memory`]: the tools are offered anew.
    pub(crate) fn with_team(mut self, team: Team) -> Self {
        self.team = Arc::new(team);
        self.fresh_toolbox();
        self.offer_delegate();
        self
    }

    /// Every tool of the host again, before the delegation tool decides
    /// what this loop keeps.
    fn fresh_toolbox(&mut self) {
        self.toolbox = Toolbox::from_host(self.host, self.config.compact_schemas);
        if self.config.disclose != Disclosure::All {
            self.toolbox.enable_open();
        }
        self.passable = Vec::new();
    }

    /// Gives the run a long-term memory: the notes relevant to the task go
    /// into the prompt (within `settings.budget_tokens`), and the model is
    /// offered `memory__remember` and `memory__recall` at the levels the
    /// settings give (a note's provenance, and when a person must say yes,
    /// are decided by the harness, not the model).
    pub(crate) fn with_memory(
        mut self,
        store: Arc<dyn MemoryStore>,
        settings: MemorySettings,
    ) -> Self {
        self.toolbox.add_memory(settings.remember, settings.recall);
        self.memory = Some(Memory { store, settings });
        self
    }

    /// Play `playback` back: its recorded replies stand in for the model,
    /// and each call is compared with the one the run made.
    pub(crate) fn playing(mut self, playback: Arc<playback::Playback>) -> Self {
        self.playback = Some(playback);
        self
    }

    /// Takes the person's messages from `steering`, a handle made before
    /// the harness (e.g. returned to a caller before the run is spawned).
    pub(crate) fn steered_by(mut self, steering: Steering) -> Self {
        self.inbox = steering;
        self
    }

    /// The tools offered to the model.
    pub(crate) fn toolbox(&self) -> &Toolbox {
        &self.toolbox
    }

    /// Run `task` to a stop.
    pub(crate) async fn run(
        &mut self,
        run_id: &str,
        task: &str,
        progress: &dyn Progress,
    ) -> RunReport {
        let (mut run, not_recorded) = self.begin(run_id, task, progress).await;
        let stop = match not_recorded {
            Some(stop) => stop,
            None => loop {
                if let Some(stop) = self.step(&mut run, progress).await {
                    break stop;
                }
            },
        };
        self.finish(run, stop)
    }
}

/// Every value that must never reach the model or the audit log: the
/// values of host environment variables granted to the active skills, the
/// credentials bound to them, and `extra` (e.g. the model's API key).
pub fn secrets(host: &Host, extra: impl IntoIterator<Item = String>) -> Vec<String> {
    let mut out: Vec<String> = extra.into_iter().filter(|s| !s.is_empty()).collect();
    for active in host.registry().active_skills() {
        let grants = host.policy().grants(&active.manifest.name);
        out.extend(grants.env.iter().filter_map(|name| std::env::var(name).ok()));
        for credential in &grants.credentials {
            if let Ok(secret) = credential.secret() {
                out.push(secret.expose().to_owned());
            }
        }
    }
    out
}
