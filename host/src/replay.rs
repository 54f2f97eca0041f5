//! Replaying a past run under the current skills and table: the same task,
//! the model's recorded replies in place of the model, the person's
//! recorded answers in place of the person, and — unless `live` — the
//! recorded responses in place of the network. What the replay's skills
//! write is compared with what the run's wrote, and put back afterwards:
//! a replay leaves the granted folders as it found them.
//!
//! Use it to check a skill upgrade or a table change against real past
//! runs (each place they part is a [`Divergence`]), and to explain a run
//! (the replay's own log says, call by call, what happened and why).

use crate::harness::audit::read_log;
use crate::harness::audit::record::Ended;
use crate::harness::playback::{Divergence, DivergenceKind, Playback};
use crate::harness::{Progress, RunConfig, RunReport};
use crate::host::{Confirmer, Host};
use crate::journal::{self, Budget, CallEnd, Fingerprint, RunJournal};
use crate::model::{ChatFuture, ChatRequest, Model, ModelError};
use crate::tape::Tape;
use crate::{Agent, AuditSink};
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use std::sync::Arc;

/// Why a run could not be replayed at all.
#[derive(Debug, thiserror::Error)]
pub enum ReplayError {
    /// The run's log (or recording) could not be read.
    #[error("could not read run {run_id}: {source}")]
    Read {
        /// The run.
        run_id: String,
        /// Why.
        source: std::io::Error,
    },
    /// The log is not one that can be played back.
    #[error("run {run_id} cannot be replayed: {why}")]
    NotReplayable {
        /// The run.
        run_id: String,
        /// Why.
        why: String,
    },
    /// The replay could not start.
    #[error(transparent)]
    Start(#[from] crate::RunError),
    /// The host refused the agent (its table lets a skill write the runs folder).
    #[error(transparent)]
    Host(#[from] crate::HostError),
}

/// What a replay found.
#[derive(Debug, Serialize)]
pub struct ReplayReport {
    /// The run played back.
    pub run_id: String,
    /// The replay's own run (its log is beside the run's).
    pub replay_id: String,
    /// Its skills sent their requests for real.
    pub live: bool,
    /// Where it parted from the run, in order; empty when it did not.
    pub divergences: Vec<Divergence>,
    /// Files the replay's skills changed, put back afterwards.
    pub restored: usize,
    /// The replay's run, as [`Agent::run`] reports it.
    pub report: RunReport,
}

impl ReplayReport {
    /// True when the replay did what the run did.
    pub fn matches(&self) -> bool {
        self.divergences.is_empty()
    }
}

/// Replay run `run_id`, whose log is in `runs_dir`, on `host` (its current
/// skills and table), reporting to `progress`.
pub async fn replay(
    host: Arc<Host>,
    runs_dir: &Path,
    run_id: &str,
    live: bool,
    progress: impl Progress + Send + 'static,
) -> Result<ReplayReport, ReplayError> {
    let read = |source| ReplayError::Read { run_id: run_id.to_owned(), source };
    let records = read_log(runs_dir, run_id).map_err(read)?;
    let secrets = crate::harness::secrets(&host, []);
    let tape = Tape::load(&runs_dir.join(crate::tape::TAPE_DIR), run_id, secrets).map_err(read)?;
    let playback = Playback::from_records(&records, Arc::new(tape), live)
        .map_err(|why| ReplayError::NotReplayable { run_id: run_id.to_owned(), why })?;
    let playback = Arc::new(playback);
    let started = &playback.started;
    let defaults = RunConfig::default();
    let config = RunConfig {
        max_steps: started.max_steps.unwrap_or(playback.steps()).max(1),
        token_budget: started.token_budget,
        context_tokens: started.context_tokens,
        compact_at: started.compact_at.unwrap_or(defaults.compact_at),
        task_type: started.task_type.clone(),
        disclose: started.disclose.unwrap_or(defaults.disclose),
        compact_schemas: started.compact_schemas.unwrap_or(defaults.compact_schemas),
        review: started.review.clone(),
        bundle_body: started.bundle_body.unwrap_or(defaults.bundle_body),
        ..defaults
    };
    let model = ReplayModel::named(started.model.clone().unwrap_or_default());
    let person = playback
        .finished
        .as_ref()
        .is_some_and(|f| matches!(f.stop, Ended::Run(crate::harness::Stop::Declined)));
    let mut agent = Agent::builder(Arc::clone(&host), model.clone())
        .confirmer(Answers { playback: Arc::clone(&playback), person })
        .audit(AuditSink::Dir(runs_dir.to_owned()))
        .config(config)
        .progress(progress)
        .replaying(Arc::clone(&playback));
    for profile in host.policy().agents() {
        if let Some(name) = &profile.model {
            agent = agent.worker_model(name.clone(), model.clone());
        }
    }
    let agent = agent.build()?;
    // From where the run started: the paths it changed as it found them.
    let root = runs_dir.join("journal");
    let rewound = rewind(&root, run_id);
    let report = agent.run(&started.task).await;
    // Back as they were before the replay: its own writes undone, then the rewind.
    let restored = report.as_ref().map_or(0, |r| restore(&root, &r.run_id));
    if let Some(rewound) = &rewound {
        restore(&root, rewound);
    }
    let report = report?;
    if let Some(finished) = &playback.finished {
        stop_divergence(&playback, finished, &report);
    }
    written_divergences(&playback, &root, run_id, &report.run_id);
    Ok(ReplayReport {
        run_id: run_id.to_owned(),
        replay_id: report.run_id.clone(),
        live,
        divergences: playback.divergences(),
        restored,
        report,
    })
}

/// The stop and answer, compared.
fn stop_divergence(
    playback: &Playback,
    finished: &crate::harness::audit::record::RunFinished,
    report: &RunReport,
) {
    let was = finished.stop.reason();
    let now = Ended::Run(report.stop.clone()).reason();
    if was != now {
        let why = match &report.stop {
            crate::harness::Stop::ModelError(e) => format!(" ({e})"),
            _ => String::new(),
        };
        playback.diverged(Divergence {
            kind: DivergenceKind::Stop,
            detail: format!("the run ended `{was}`, the replay `{now}`{why}"),
            ..Divergence::default()
        });
    } else if let Some(answer) = &finished.answer
        && answer.as_deref() != report.answer.as_deref()
    {
        playback.diverged(Divergence {
            kind: DivergenceKind::Stop,
            detail: "the final answer differs".to_owned(),
            diff: Some(crate::harness::playback::diff(
                answer.as_deref().unwrap_or(""),
                report.answer.as_deref().unwrap_or(""),
            )),
            ..Divergence::default()
        });
    }
}

/// How each call left each path it changed, by call (its worker and
/// number; calls rolled back left nothing).
type Written = BTreeMap<(Option<String>, u64, PathBuf, PathBuf), (String, Option<Fingerprint>)>;

fn written(root: &Path, run_id: &str) -> Written {
    let mut out = Written::new();
    for call in journal::read_calls(root, run_id).unwrap_or_default() {
        if call.end == CallEnd::RolledBack {
            continue;
        }
        for entry in call.entries {
            let key = (call.worker.clone(), call.call, entry.grant, entry.path);
            out.insert(key, (call.tool.clone(), entry.after));
        }
    }
    out
}

/// Each path a call wrote differently in the replay than in the run.
fn written_divergences(playback: &Playback, root: &Path, run_id: &str, replay_id: &str) {
    let (was, now) = (written(root, run_id), written(root, replay_id));
    let mut keys: Vec<_> = was.keys().chain(now.keys()).cloned().collect();
    keys.sort();
    keys.dedup();
    for key in keys {
        let (a, b) = (was.get(&key), now.get(&key));
        let left = |w: Option<&(String, Option<Fingerprint>)>| w.and_then(|(_, f)| f.clone());
        if a.is_some() && b.is_some() && left(a) == left(b) {
            continue;
        }
        let (worker, call, grant, path) = &key;
        // The journal's `skill.tool`, named as the model calls it.
        let tool = a.or(b).map_or(String::new(), |(t, _)| t.replacen('.', "__", 1));
        let describe = |w: Option<&(String, Option<Fingerprint>)>| match w {
            None => "did not change it".to_owned(),
            Some((_, f)) => format!("left {}", fingerprint(f.as_ref())),
        };
        playback.diverged(Divergence::at_call(
            &crate::tape::call_key(worker.as_deref(), *call as usize),
            0,
            &tool,
            DivergenceKind::Written,
            format!(
                "{} written differently: the run {}, the replay {}",
                grant.join(path).display(),
                describe(a),
                describe(b)
            ),
        ));
    }
}

fn fingerprint(f: Option<&Fingerprint>) -> String {
    match f {
        None => "it in an unknown state".to_owned(),
        Some(Fingerprint::Missing) => "nothing there".to_owned(),
        Some(Fingerprint::Dir) => "a folder".to_owned(),
        Some(Fingerprint::Symlink { target }) => format!("a link to {target}"),
        Some(Fingerprint::File { hash, size }) => {
            format!("{size} bytes (blake3 {})", &hash[..hash.len().min(12)])
        }
    }
}

/// Put every path run `run_id` changed back as the run found it, so the
/// replay starts where the run did; the id of the journal that puts them
/// back afterwards, `None` when the run changed nothing (or its journal
/// was pruned: the replay then starts from the folders as they are).
fn rewind(root: &Path, run_id: &str) -> Option<String> {
    let id = format!("{}-rewind", crate::harness::audit::new_run_id());
    let journal = RunJournal::new(root, &id, Budget::default());
    match journal::undo(root, run_id, 0, true, journal.call(1, 0, "replay.rewind")) {
        Ok(report) => {
            for (path, why) in &report.failed {
                tracing::warn!(
                    "replay of {run_id}: {} was not rewound ({why}); the replay starts from it as it is",
                    path.display()
                );
            }
            Some(id)
        }
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => None,
        Err(err) => {
            tracing::warn!("replay of {run_id}: the folders were not rewound: {err}");
            Some(id)
        }
    }
}

/// Put back what run `id` (the replay, or the rewind) changed; how many
/// paths it put back.
fn restore(root: &Path, id: &str) -> usize {
    let journal = RunJournal::new(root, &format!("{id}-restore"), Budget::default());
    let replay_id = id;
    match journal::undo(root, id, 0, false, journal.call(1, 0, "replay.restore")) {
        Ok(report) => {
            for conflict in &report.conflicts {
                tracing::warn!(
                    "replay {replay_id}: {} changed during the replay; left as it is",
                    conflict.path.display()
                );
            }
            report.restored.len()
        }
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => 0,
        Err(err) => {
            tracing::warn!("replay {replay_id}: its changes were not put back: {err}");
            0
        }
    }
}

/// The model of a replay: never asked (the recorded replies stand in for
/// it, [`crate::AgentBuilder::replaying`]); a request that reaches it fails.
#[derive(Clone, Debug)]
pub struct ReplayModel {
    name: String,
}

impl ReplayModel {
    /// A replay's model, named `name` (the run's model's name).
    pub fn named(name: impl Into<String>) -> ReplayModel {
        ReplayModel { name: name.into() }
    }
}

impl Model for ReplayModel {
    fn chat<'a>(&'a self, _request: ChatRequest<'a>) -> ChatFuture<'a> {
        Box::pin(async { Err(ModelError::Config("a replay asks no model".to_owned())) })
    }

    fn name(&self) -> &str {
        &self.name
    }
}

/// The person of a replay: their recorded answers, in order.
struct Answers {
    playback: Arc<Playback>,
    person: bool,
}

impl Confirmer for Answers {
    fn confirm(
        &self,
        skill: &str,
        tool: &str,
        _arguments: &serde_json::Value,
    ) -> Result<(), String> {
        match self.playback.answer() {
            Some(true) => Ok(()),
            Some(false) => Err("declined (as in the run replayed)".to_owned()),
            None => {
                self.playback.diverged(Divergence {
                    kind: DivergenceKind::Unrecorded,
                    tool: Some(format!("{skill}.{tool}")),
                    detail: format!(
                        "{skill}.{tool} asked for a confirmation the run was never asked for; \
                         declined"
                    ),
                    ..Divergence::default()
                });
                Err("no recorded answer (the run was not asked this)".to_owned())
            }
        }
    }

    fn person_present(&self) -> bool {
        self.person
    }
}
