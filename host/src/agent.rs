//! The embedding API: an [`Agent`] runs tasks with a model over a
//! [`Host`]'s skills, within its permission table, and reports what it did
//! as it goes ([`Run`], a stream of [`Event`]s) and when it stops
//! ([`RunReport`]).

use crate::agents::Team;
use crate::harness::audit::{AuditLog, AuditSink, new_run_id};
use crate::harness::events::{self, Event, EventReceiver};
use crate::harness::{self, Harness, Progress, Quiet, RunConfig, RunReport, Steering};
use crate::host::{Confirmer, Host, HostError, NeverConfirm};
use crate::memory::MemoryStore;
use crate::model::Model;
use crate::policy::{MemorySettings, ProtectedPath};
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

/// Events a [`Run`] holds for a consumer that is behind, by default.
pub const DEFAULT_EVENT_CAPACITY: usize = 256;

/// Where runs are logged by default: where `reach run` logs them, so
/// `reach runs show ID` explains an embedded run too.
const DEFAULT_RUNS_DIR: &str = ".reach/runs";

/// Tries at a fresh run id when one is taken in the audit folder.
const RUN_ID_TRIES: usize = 4;

/// Why a run could not start.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RunError {
    /// The run's audit log could not be created; nothing ran (a run is
    /// never made unrecorded).
    #[error("could not create the audit log in {}: {source}", dir.display())]
    AuditLog {
        /// The audit folder.
        dir: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The runtime shut down before the run finished.
    #[error("the run was cancelled before it finished (its runtime shut down)")]
    Cancelled,
}

/// Runs tasks with a model over a host's skills.
///
/// An agent is cheap to clone and can run several tasks at once; each run
/// gets its own conversation, audit log and events. Build one with
/// [`Agent::builder`].
///
/// ```no_run
/// # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
/// use agent_reach::model::OpenAiClient;
/// use agent_reach::{Agent, Host};
///
/// let host = Host::builder().policy_file("reach.toml").build().await?;
/// let agent = Agent::builder(host, OpenAiClient::from_env("gpt-4.1-mini")?).build()?;
///
/// // Waiting for the end:
/// let report = agent.run("How many lines does docs/a.txt have?").await?;
/// println!("{}", report.answer.unwrap_or_default());
///
/// // Or watching it happen:
/// let mut run = agent.start("Summarise docs/a.txt")?;
/// while let Some(event) = run.next_event().await {
///     eprintln!("{event}");
/// }
/// let report = run.report().await?;
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct Agent {
    model: Arc<dyn Model>,
    parts: Parts,
}

/// Everything an agent's runs are made of but the model: what
/// [`AgentBuilder`] sets.
#[derive(Clone)]
pub(crate) struct Parts {
    host: Arc<Host>,
    confirmer: Arc<dyn Confirmer>,
    audit: AuditSink,
    config: RunConfig,
    memory: Option<(Arc<dyn MemoryStore>, MemorySettings)>,
    secrets: Vec<String>,
    event_capacity: usize,
    /// Models for `[agents.NAME]` profiles that name one, by name.
    worker_models: Vec<(String, Arc<dyn Model>)>,
    progress: Arc<dyn Progress + Send>,
    /// A past run its runs play back ([`crate::replay`]).
    playback: Option<Arc<crate::harness::playback::Playback>>,
}

/// Builds an [`Agent`]: made by [`Agent::builder`].
///
/// Defaults:
/// - [`NeverConfirm`]: tools at level `confirm` are refused (the model is
///   told so and may try another way);
/// - the audit log in `.reach/runs/<run id>.jsonl` under the working
///   directory, as `reach run` writes it;
/// - [`RunConfig::default`]: 8 model requests at most, no token budget, the
///   context window from the model's server or name, every tool offered,
///   no review;
/// - the table's `[agents.NAME]` profiles as workers (`agents__delegate`),
///   on the agent's model unless [`AgentBuilder::worker_model`] gives the
///   one a profile names;
/// - no long-term memory: the memory tools are not offered;
/// - events held for a slow consumer: [`DEFAULT_EVENT_CAPACITY`];
/// - no progress observer ([`Quiet`](crate::harness::Quiet)): watch a
///   run's [`Event`]s, or give one with [`AgentBuilder::progress`];
/// - run ids drawn fresh ([`new_run_id`](crate::harness::audit::new_run_id))
///   unless [`Agent::run_with_id`] names one.
///
/// The values of environment variables and credentials granted to skills
/// are masked in the audit log, the events and what the model sees;
/// [`AgentBuilder::secret`] adds others, such as the model's API key.
#[must_use = "a builder does nothing until `build` is called"]
pub struct AgentBuilder {
    model: Arc<dyn Model>,
    parts: Parts,
}

impl Agent {
    /// A builder for an agent over `host` asking `model` (any [`Model`]:
    /// the bundled OpenAI-compatible and Anthropic clients, a boxed one, or
    /// the embedder's own). `host` may be a `Host` or an `Arc<Host>` shared
    /// with other agents.
    pub fn builder(host: impl Into<Arc<Host>>, model: impl Model + 'static) -> AgentBuilder {
        AgentBuilder { model: Arc::new(model), parts: Parts::new(host.into()) }
    }

    /// The host whose skills and table the agent's runs use.
    pub fn host(&self) -> &Arc<Host> {
        &self.parts.host
    }

    /// The model.
    pub fn model(&self) -> &dyn Model {
        self.model.as_ref()
    }

    /// The tools a run is offered, by the names the model calls them
    /// (`files__read`, `agents__delegate`, `memory__recall`): the host's
    /// skills the table does not deny, and the agent's own tools (workers,
    /// memory). A run that discloses skills by task
    /// ([`RunConfig::disclose`]) starts from these too.
    pub fn tools(&self) -> Vec<String> {
        let log = AuditLog::disabled("", Vec::new());
        let harness = self.parts.harness(self.model.as_ref(), log);
        harness.toolbox().specs().iter().map(|spec| spec.name.clone()).collect()
    }

    /// Run `task` to a stop: the model answered, or a limit stopped it
    /// (see [`RunReport::stop`]). A model that fails is a stop, not an
    /// error; the only error is an audit log that cannot be created.
    ///
    /// The run lives in this future: dropping it stops the run where it is
    /// (the audit log then ends without `run_finished`).
    pub async fn run(&self, task: &str) -> Result<RunReport, RunError> {
        self.parts.run(self.model.as_ref(), None, task, self.parts.progress.as_ref()).await
    }

    /// [`Agent::run`] under an id the caller chose: the audit log is
    /// `<id>.jsonl`, and an [`AuditSink::Dir`] that has one already fails
    /// with [`RunError::AuditLog`] (a log is never appended to by another
    /// run). For runs named after something of the caller's (an evaluation
    /// case, a ticket); otherwise let the agent draw a fresh id.
    pub async fn run_with_id(&self, run_id: &str, task: &str) -> Result<RunReport, RunError> {
        let progress = self.parts.progress.as_ref();
        self.parts.run(self.model.as_ref(), Some(run_id), task, progress).await
    }

    /// [`Agent::run_with_id`] reporting to a `progress` that lives only as
    /// long as the call: the evaluation runner's per-run collector.
    #[cfg(feature = "eval")]
    pub(crate) async fn run_observed(
        &self,
        run_id: &str,
        task: &str,
        progress: &dyn Progress,
    ) -> Result<RunReport, RunError> {
        self.parts.run(self.model.as_ref(), Some(run_id), task, progress).await
    }

    /// Start `task` on the current Tokio runtime and return at once with a
    /// [`Run`]: its events as they happen, a way to talk to it, its report
    /// at the end.
    ///
    /// # Panics
    /// When called outside a Tokio runtime.
    pub fn start(&self, task: impl Into<String>) -> Result<Run, RunError> {
        self.start_as(None, task.into())
    }

    /// [`Agent::start`] under an id the caller chose (see
    /// [`Agent::run_with_id`]).
    ///
    /// # Panics
    /// When called outside a Tokio runtime.
    pub fn start_with_id(&self, run_id: &str, task: impl Into<String>) -> Result<Run, RunError> {
        self.start_as(Some(run_id), task.into())
    }

    fn start_as(&self, run_id: Option<&str>, task: String) -> Result<Run, RunError> {
        let (run_id, audit) = self.parts.open_log(run_id)?;
        let (sender, events) = events::channel(self.parts.event_capacity);
        let audit = audit.with_events(sender);
        let steering = Steering::default();
        let (agent, id, inbox) = (self.clone(), run_id.clone(), steering.clone());
        let handle = tokio::spawn(async move {
            let mut harness = agent.parts.harness(agent.model.as_ref(), audit).steered_by(inbox);
            harness.run(&id, &task, agent.parts.progress.as_ref()).await
        });
        Ok(Run { run_id, events, steering, handle: Some(handle) })
    }
}

impl Parts {
    fn new(host: Arc<Host>) -> Parts {
        Parts {
            host,
            confirmer: Arc::new(NeverConfirm),
            audit: AuditSink::Dir(PathBuf::from(DEFAULT_RUNS_DIR)),
            config: RunConfig::default(),
            memory: None,
            secrets: Vec::new(),
            event_capacity: DEFAULT_EVENT_CAPACITY,
            worker_models: Vec::new(),
            progress: Arc::new(Quiet),
            playback: None,
        }
    }

    /// Run `task` with `model` under `run_id` (or a fresh id), reporting
    /// to `progress`.
    pub(crate) async fn run(
        &self,
        model: &dyn Model,
        run_id: Option<&str>,
        task: &str,
        progress: &dyn Progress,
    ) -> Result<RunReport, RunError> {
        let (run_id, audit) = self.open_log(run_id)?;
        let mut harness = self.harness(model, audit);
        Ok(harness.run(&run_id, task, progress).await)
    }

    fn harness<'a>(&'a self, model: &'a dyn Model, audit: AuditLog) -> Harness<'a> {
        let mut team = Team::from_policy(self.host.policy());
        for (name, model) in &self.worker_models {
            team = team.with_model(name.clone(), Arc::clone(model));
        }
        let mut harness =
            Harness::new(&self.host, model, self.confirmer.as_ref(), self.config.clone(), audit)
                .with_team(team);
        if let Some(playback) = &self.playback {
            harness = harness.playing(Arc::clone(playback));
        }
        match &self.memory {
            Some((store, settings)) => harness.with_memory(Arc::clone(store), settings.clone()),
            None => harness,
        }
    }

    /// The audit log of run `run_id`, or of a new run id, secrets read now
    /// (a granted variable may have changed since the last run). Only a
    /// drawn id is drawn again when its log exists.
    fn open_log(&self, run_id: Option<&str>) -> Result<(String, AuditLog), RunError> {
        let secrets = harness::secrets(&self.host, self.secrets.iter().cloned());
        let mut tries = 0;
        loop {
            let id = run_id.map_or_else(new_run_id, str::to_owned);
            match AuditLog::open(&self.audit, &id, secrets.clone()) {
                Ok(log) => return Ok((id, log)),
                // Two runs started in the same second drew the same suffix.
                Err(err)
                    if err.kind() == std::io::ErrorKind::AlreadyExists
                        && run_id.is_none()
                        && tries + 1 < RUN_ID_TRIES =>
                {
                    tries += 1
                }
                Err(source) => {
                    let dir = match &self.audit {
                        AuditSink::Dir(dir) => dir.clone(),
                        _ => PathBuf::new(),
                    };
                    return Err(RunError::AuditLog { dir, source });
                }
            }
        }
    }

    /// The parts, once the audit folder is out of every skill's reach.
    fn checked(self) -> Result<Parts, HostError> {
        if let AuditSink::Dir(dir) = &self.audit {
            self.host.policy().check_protected(&[ProtectedPath::private("the audit logs", dir)])?;
        }
        Ok(self)
    }
}

impl AgentBuilder {
    /// Who decides calls of tools at level `confirm`: a dialog, a chat
    /// message, a rule of the embedder's, or [`AlwaysConfirm`](crate::AlwaysConfirm)
    /// when a person confirmed the task as a whole.
    pub fn confirmer(mut self, confirmer: impl Confirmer + 'static) -> Self {
        self.parts.confirmer = Arc::new(confirmer);
        self
    }

    /// Where each run's audit log goes ([`AuditSink`]).
    pub fn audit(mut self, sink: AuditSink) -> Self {
        self.parts.audit = sink;
        self
    }

    /// Limits and shape of each run: steps, token budget, context window,
    /// how tools are offered.
    pub fn config(mut self, config: RunConfig) -> Self {
        self.parts.config = config;
        self
    }

    /// After each answer, a reviewer with read-only skills checks the work
    /// against `criteria`; on `revise` the run gets one more round with
    /// the issues found (what `reach run --review` does; see
    /// [`RunConfig::review`]).
    pub fn review(mut self, criteria: impl Into<String>) -> Self {
        self.parts.config.review = Some(criteria.into());
        self
    }

    /// The model for workers whose profile says `model = "NAME"`. A worker
    /// whose model was not given fails (`WORKER_FAILED`) rather than run
    /// on another model than the operator chose.
    pub fn worker_model(mut self, name: impl Into<String>, model: impl Model + 'static) -> Self {
        self.parts.worker_models.push((name.into(), Arc::new(model)));
        self
    }

    /// Play `playback` back: the model's recorded replies stand in for the
    /// model, and each call is compared with the one the run made (what
    /// [`crate::replay::replay`] sets up; its report says where they part).
    pub fn replaying(mut self, playback: Arc<crate::harness::playback::Playback>) -> Self {
        self.parts.playback = Some(playback);
        self
    }

    /// Give runs a long-term memory: notes relevant to the task go into the
    /// prompt, and the model may remember and recall notes at the levels
    /// `settings` give (e.g. the table's `[memory]`,
    /// [`Policy::memory`](crate::policy::Policy::memory), with a
    /// [`SqliteStore`](crate::memory::SqliteStore) opened at its path).
    pub fn memory(mut self, store: Arc<dyn MemoryStore>, settings: MemorySettings) -> Self {
        self.parts.memory = Some((store, settings));
        self
    }

    /// A value never to be written to the audit log, the events or the
    /// model's context (masked as `[REDACTED]`), e.g. the model's API key.
    pub fn secret(mut self, value: impl Into<String>) -> Self {
        self.parts.secrets.push(value.into());
        self
    }

    /// How many events a [`Run`] holds for a consumer that falls behind
    /// (at least 2); past that, events are dropped and counted
    /// ([`Event::Lagged`]), and the run never waits.
    pub fn event_capacity(mut self, capacity: usize) -> Self {
        self.parts.event_capacity = capacity.max(2);
        self
    }

    /// Report the runs' progress to `progress` as they go, from the run's
    /// own task: what a terminal shows live, including what the
    /// [`Event`]s do not carry (a model request about to be sent, a tool's
    /// whole result). The agent's runs share it.
    pub fn progress(mut self, progress: impl Progress + Send + 'static) -> Self {
        self.parts.progress = Arc::new(progress);
        self
    }

    /// The agent. Fails when the table lets a skill write the audit folder
    /// (a skill must not rewrite the record of what it did) or read it (the
    /// log holds every call's arguments and results).
    pub fn build(self) -> Result<Agent, HostError> {
        let parts = self.parts.checked()?;
        Ok(Agent { model: self.model, parts })
    }
}

/// A run in progress, started by [`Agent::start`].
///
/// Read its events with [`Run::next_event`] (or as a
/// [`Stream`](futures_util::Stream)) until they end, then take its
/// [`Run::report`]. Reading events is optional: the run never waits for
/// its consumer, and drops events a slow one has no room for
/// ([`Event::Lagged`] says how many).
///
/// Dropping a `Run` stops the run where it is (a model request or tool call
/// under way is abandoned; the audit log ends without `run_finished`).
#[must_use = "a run is stopped when its handle is dropped"]
pub struct Run {
    run_id: String,
    events: EventReceiver,
    steering: Steering,
    handle: Option<tokio::task::JoinHandle<RunReport>>,
}

impl Run {
    /// The run's id: its audit log's name, [`RunReport::run_id`].
    pub fn id(&self) -> &str {
        &self.run_id
    }

    /// True once the run has stopped (its report is ready; events may be
    /// left to read).
    pub fn is_finished(&self) -> bool {
        self.handle.as_ref().is_none_or(tokio::task::JoinHandle::is_finished)
    }

    /// The next event; `None` once the run is over and all its events were
    /// read.
    pub async fn next_event(&mut self) -> Option<Event> {
        self.events.recv().await
    }

    /// Say something to the run, as the person: it joins the conversation
    /// before the next model request and is kept through compactions.
    pub fn say(&self, text: impl Into<String>) {
        self.steering.say(text);
    }

    /// A handle to [`say`](Run::say) things from elsewhere (another task).
    pub fn steering(&self) -> Steering {
        self.steering.clone()
    }

    /// Wait for the run to stop and return its report. Events not read
    /// are discarded. A panic in the run is resumed here.
    pub async fn report(mut self) -> Result<RunReport, RunError> {
        let Some(handle) = self.handle.take() else { return Err(RunError::Cancelled) };
        match handle.await {
            Ok(report) => Ok(report),
            Err(err) if err.is_panic() => std::panic::resume_unwind(err.into_panic()),
            Err(_) => Err(RunError::Cancelled),
        }
    }

    /// Stop the run now (as dropping it does).
    pub fn cancel(self) {}
}

impl Drop for Run {
    fn drop(&mut self) {
        if let Some(handle) = &self.handle {
            handle.abort();
        }
    }
}

impl futures_util::Stream for Run {
    type Item = Event;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Event>> {
        self.get_mut().events.poll_recv(cx)
    }
}

impl std::fmt::Debug for Run {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Run").field("run_id", &self.run_id).finish_non_exhaustive()
    }
}

impl std::fmt::Debug for Agent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Agent")
            .field("model", &self.model.name())
            .field("audit", &self.parts.audit)
            .field("config", &self.parts.config)
            .finish_non_exhaustive()
    }
}

impl std::fmt::Debug for AgentBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AgentBuilder")
            .field("model", &self.model.name())
            .field("audit", &self.parts.audit)
            .field("config", &self.parts.config)
            .finish_non_exhaustive()
    }
}
