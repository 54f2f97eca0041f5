//! One run of one case: a fresh working folder with the case's files, a
//! fixture server with its pages, a host under its own policy, and the same
//! harness as `reach run` — then the run is scored.

use super::case::{LoadedCase, Placeholders};
use super::report::{CallRecord, Check, RunResult};
use super::score::{self, Score, Trace, TracedCall};
use super::server::FixtureServer;
use crate::harness::audit::{Body, Record};
use crate::harness::{Progress, RunConfig, RunReport, Stop};
use crate::model::{Model, Usage};
use crate::policy::{Policy, ProtectedPath};
use crate::runtime::RuntimeConfig;
use crate::runtime::redact::Redactor;
use crate::{Agent, AlwaysConfirm, AuditSink, Host, HostError, RunError};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// Most characters of a result kept in a report's trajectory.
const RESULT_EXCERPT: usize = 1500;

/// What every run of an evaluation shares.
pub struct Setting {
    /// The skills folder.
    pub skills_dir: PathBuf,
    /// How each case's runtime is built (the compile cache is shared).
    pub runtime: RuntimeConfig,
    /// The model under test.
    pub model: Arc<dyn Model>,
    /// Values never to be written to a log (the model's API key). Each
    /// run adds the values of the environment variables and credentials
    /// its case's table grants.
    pub secrets: Vec<String>,
    /// Where audit logs go (`<out_dir>/runs/<case>-<repeat>.jsonl`). A log
    /// is never overwritten: a run whose log exists already fails at setup,
    /// so each evaluation needs a folder of its own.
    pub out_dir: PathBuf,
    /// Model requests per run, unless a case allows more.
    pub max_steps: usize,
    /// How tools are offered ([`RunConfig::disclose`]).
    pub disclose: crate::harness::Disclosure,
    /// When bundles' instructions are given ([`RunConfig::bundle_body`]).
    pub bundle_body: crate::harness::BundleBody,
    /// Offer compacted parameter schemas ([`RunConfig::compact_schemas`]).
    pub compact_schemas: bool,
    /// Grant case tables as written. When false (the default of `reach
    /// eval`), a case whose table reaches beyond its working folder and its
    /// fixture server, or grants environment variables or credentials,
    /// fails at setup without running (see [`trust`](super::trust)). Only
    /// for case files the operator wrote or checked.
    pub trust_cases: bool,
    /// Where each run's audit log, recording and the case's placeholders
    /// (its working folder and fixture port, `<case>-<repeat>.case.json`)
    /// go instead of `<out_dir>/runs`, for a later [`Setting::replay`].
    pub record: Option<PathBuf>,
    /// Play back the runs recorded in this folder (by `record`) instead of
    /// asking the model: each case's recorded replies, its paths and port
    /// rewritten to this run's, against the fixture server as it is now.
    pub replay: Option<PathBuf>,
}

/// Live progress of one run.
pub trait RunProgress: Sync {
    /// A model request is about to be made.
    fn step(&self, _case: &str, _repeat: usize, _step: usize) {}
    /// A tool is about to run.
    fn tool(&self, _case: &str, _repeat: usize, _tool: &str) {}
}

/// Reports nothing.
pub struct Silent;
impl RunProgress for Silent {}

/// Collects what the harness reports: times and whole results.
struct Collector<'a> {
    case: &'a str,
    repeat: usize,
    live: &'a dyn RunProgress,
    model_ms: Mutex<u64>,
    tool_ms: Mutex<u64>,
    results: Mutex<Vec<String>>,
}

impl Progress for Collector<'_> {
    fn model_request(&self, step: usize) {
        self.live.step(self.case, self.repeat, step);
    }
    fn model_finished(&self, _step: usize, ms: u64, _usage: &Usage, _calls: usize) {
        *self.model_ms.lock().unwrap_or_else(|e| e.into_inner()) += ms;
    }
    fn tool_started(&self, _step: usize, tool: &str) {
        self.live.tool(self.case, self.repeat, tool);
    }
    fn tool_finished(&self, _step: usize, _tool: &str, _outcome: &str, ms: u64) {
        *self.tool_ms.lock().unwrap_or_else(|e| e.into_inner()) += ms;
    }
    fn tool_result(&self, _step: usize, _tool: &str, result: &str) {
        self.results.lock().unwrap_or_else(|e| e.into_inner()).push(result.to_owned());
    }
    fn worker_tool(&self, _task: &str, tool: &str, _outcome: &str, ms: u64) {
        self.live.tool(self.case, self.repeat, tool);
        *self.tool_ms.lock().unwrap_or_else(|e| e.into_inner()) += ms;
    }
}

/// Run `case` once (repeat number `repeat`, 1-based) and score it. Never
/// fails: a case that cannot be set up is a failed run that says why.
pub async fn run_once(
    setting: &Setting,
    case: &LoadedCase,
    repeat: usize,
    live: &dyn RunProgress,
) -> RunResult {
    let started = Instant::now();
    let root = match tempfile::Builder::new().prefix("reach-eval-").tempdir() {
        Ok(dir) => dir,
        Err(e) => {
            return setup_failure(
                repeat,
                format!("could not create a working folder: {e}"),
                started,
            );
        }
    };
    match prepare_and_run(setting, case, repeat, live, root.path(), started).await {
        Ok(result) => result,
        Err(why) => setup_failure(repeat, why, started),
    }
}

async fn prepare_and_run(
    setting: &Setting,
    case: &LoadedCase,
    repeat: usize,
    live: &dyn RunProgress,
    root: &Path,
    started: Instant,
) -> Result<RunResult, String> {
    let workdir = root.join("work");
    std::fs::create_dir(&workdir)
        .map_err(|e| format!("could not create {}: {e}", workdir.display()))?;
    // The real path: skills see resolved folders, and paths are compared to it.
    let workdir = workdir.canonicalize().map_err(|e| format!("{}: {e}", workdir.display()))?;
    let server = FixtureServer::start()
        .await
        .map_err(|e| format!("could not start the fixture server: {e}"))?;
    let values =
        Placeholders { workdir: workdir.to_string_lossy().into_owned(), port: server.port() };
    let filled = case.instantiate(&values);
    let fixtures = case.fixtures_dir();
    let mut pages = BTreeMap::new();
    for (path, spec) in &filled.setup.pages {
        let mut spec = spec.clone();
        if let Some(name) = spec.fixture.take() {
            spec.content = Some(fixture_text(&fixtures, &name, &values)?);
            if spec.content_type.is_none() {
                spec.content_type = Some(super::server::guess_type(&name).to_owned());
            }
        }
        pages.insert(path.clone(), spec);
    }
    server.set_pages(&pages, &fixtures).map_err(|e| e.to_string())?;
    for (path, spec) in &filled.setup.files {
        let text = match (&spec.content, &spec.fixture) {
            (Some(text), _) => text.clone(),
            (None, Some(name)) => fixture_text(&fixtures, name, &values)?,
            (None, None) => String::new(),
        };
        let target = workdir.join(path);
        if let Some(parent) = target.parent() {
            std::fs::create_dir_all(parent)
                .map_err(|e| format!("setup: {}: {e}", parent.display()))?;
        }
        std::fs::write(&target, text).map_err(|e| format!("setup: {}: {e}", target.display()))?;
    }

    // The table lives beside the working folder, not in it: a case that
    // grants writing its working folder cannot rewrite its own policy.
    let table = root.join("reach.toml");
    std::fs::write(&table, &filled.policy).map_err(|e| format!("{}: {e}", table.display()))?;
    let policy = Policy::parse(&filled.policy, &table, &workdir)
        .map_err(|e| format!("the case's policy is invalid: {e}"))?
        .with_working_dir(&workdir);
    // Checked here too, with the run's own folder and port, so an embedder
    // that calls `evaluate` without `check_case` gets the same refusal.
    if !setting.trust_cases {
        let found = super::trust::overreach(&policy, &workdir, server.addr());
        if !found.is_empty() {
            let refusal = super::trust::refusal(&found);
            tracing::warn!(case = %case.case.id, %refusal, "case refused");
            return Err(refusal);
        }
    }
    let built = Host::builder()
        .skills_dir(&setting.skills_dir)
        .policy(policy)
        .runtime_config(setting.runtime.clone())
        .protect(ProtectedPath::private("the evaluation's audit logs", &setting.out_dir))
        .build()
        .await;
    let host = match built {
        Ok(host) => host,
        Err(e @ (HostError::Runtime(_) | HostError::Registry(_))) => return Err(e.to_string()),
        Err(e) => return Err(format!("the case's policy does not fit: {e}")),
    };

    let run_id = format!("{}-{repeat}", case.case.id);
    let runs = setting.record.clone().unwrap_or_else(|| setting.out_dir.join("runs"));
    if setting.record.is_some() {
        let file = runs.join(format!("{run_id}.case.json"));
        let recorded =
            super::replayed::Recorded { workdir: values.workdir.clone(), port: values.port };
        crate::private_fs::create_dir_all(&runs).map_err(|e| format!("{}: {e}", runs.display()))?;
        std::fs::write(&file, serde_json::to_vec(&recorded).unwrap_or_default())
            .map_err(|e| format!("{}: {e}", file.display()))?;
    }
    let playback = match &setting.replay {
        Some(dir) => Some(super::replayed::played_back(dir, &run_id, &values)?),
        None => None,
    };
    // What the case grants from the runner's environment is masked like
    // the API key: in the log, in what the model sees, in the report.
    let redactor = Redactor::new(crate::harness::secrets(&host, setting.secrets.iter().cloned()));
    let mut config = RunConfig {
        max_steps: setting.max_steps.max(filled.expect.max_steps.unwrap_or(0)),
        disclose: setting.disclose,
        bundle_body: setting.bundle_body,
        compact_schemas: setting.compact_schemas,
        ..RunConfig::default()
    };
    if let Some(playback) = &playback {
        // As the run was: no model server is asked for its window.
        config.context_tokens = playback.started.context_tokens;
        config.max_steps = playback.started.max_steps.unwrap_or(config.max_steps);
    }
    let collector = Collector {
        case: &case.case.id,
        repeat,
        live,
        model_ms: Mutex::new(0),
        tool_ms: Mutex::new(0),
        results: Mutex::new(Vec::new()),
    };
    let agent = setting
        .secrets
        .iter()
        .fold(Agent::builder(host, Arc::clone(&setting.model)), |agent, secret| {
            agent.secret(secret.clone())
        })
        .confirmer(AlwaysConfirm)
        .audit(AuditSink::Dir(runs.clone()));
    let agent = match playback {
        Some(playback) => agent.replaying(playback),
        None => agent,
    };
    let agent =
        agent.config(config).build().map_err(|e| format!("the case's policy does not fit: {e}"))?;
    let report = match agent.run_observed(&run_id, &filled.task, &collector).await {
        Ok(report) => report,
        Err(RunError::AuditLog { source, .. }) => {
            return Err(format!("audit log in {}: {source}", runs.display()));
        }
        Err(e) => return Err(e.to_string()),
    };
    let log = report.audit_log.clone().unwrap_or_default();

    let results = collector.results.into_inner().unwrap_or_else(|e| e.into_inner());
    let mut calls: Vec<TracedCall> = report
        .actions
        .iter()
        .enumerate()
        .map(|(i, a)| TracedCall {
            tool: score::case_name(&a.tool),
            arguments: a.arguments.clone(),
            outcome: a.outcome.to_string(),
            result: results.get(i).cloned().unwrap_or_default(),
        })
        .collect();
    // Workers' calls count as the run's (a boundary is crossed whoever
    // crosses it); their results reached the run as the worker's output.
    calls.extend(worker_calls(&report.workers));
    let (stop, stop_detail) = stop_parts(&report.stop);
    // A model server's error may quote the request; everything else in
    // the result was masked by the harness already.
    let stop_detail = stop_detail.map(|d| redactor.text(&d).into_owned());
    let trace = Trace {
        task: &filled.task,
        workdir: &workdir,
        calls: &calls,
        answer: report.answer.as_deref(),
        answered: report.stop == Stop::Answered,
        stop: &stop,
        steps: report.steps,
    };
    let verdict = score::score(&filled.expect, &trace);
    Ok(RunResult {
        repeat,
        passed: verdict.passed(),
        stop,
        stop_detail,
        answer: report.answer.clone(),
        steps: report.steps,
        input_tokens: report.usage.input_tokens,
        output_tokens: report.usage.output_tokens,
        tokens_estimated: report.usage.estimated,
        wall_ms: started.elapsed().as_millis() as u64,
        model_ms: collector.model_ms.into_inner().unwrap_or_else(|e| e.into_inner()),
        tool_ms: collector.tool_ms.into_inner().unwrap_or_else(|e| e.into_inner()),
        score: verdict,
        text_calls: text_calls(&log),
        calls: records(&report, &calls),
        audit_log: Some(log.to_string_lossy().into_owned()),
    })
}

/// Every call of `workers` and of their workers, depth first.
fn worker_calls(workers: &[crate::harness::WorkerSummary]) -> Vec<TracedCall> {
    let mut out = Vec::new();
    for worker in workers {
        out.extend(worker.actions.iter().map(|a| TracedCall {
            tool: score::case_name(&a.tool),
            arguments: a.arguments.clone(),
            outcome: a.outcome.to_string(),
            result: String::new(),
        }));
        out.extend(worker_calls(&worker.workers));
    }
    out
}

/// A fixture's text with the placeholders filled in.
fn fixture_text(fixtures: &Path, name: &str, values: &Placeholders) -> Result<String, String> {
    let path = fixtures.join(name);
    let text =
        std::fs::read_to_string(&path).map_err(|e| format!("fixture {}: {e}", path.display()))?;
    Ok(values.fill(&text))
}

/// The stop as the report names it: `Stop`'s own serialised `reason` and `detail`.
fn stop_parts(stop: &Stop) -> (String, Option<String>) {
    let value = serde_json::to_value(stop).unwrap_or_default();
    let reason = value["reason"].as_str().unwrap_or("unknown").to_owned();
    (reason, value["detail"].as_str().map(str::to_owned))
}

fn records(report: &RunReport, calls: &[TracedCall]) -> Vec<CallRecord> {
    report
        .actions
        .iter()
        .zip(calls)
        .map(|(a, c)| CallRecord {
            step: a.step,
            tool: c.tool.clone(),
            arguments: a.arguments.clone(),
            decision: a.decision.to_string(),
            outcome: a.outcome.to_string(),
            result: crate::text::shorten_chars(&c.result, RESULT_EXCERPT),
            duration_ms: a.duration_ms,
        })
        .collect()
}

/// Model replies whose call was read from the text (the audit log says which).
fn text_calls(log: &Path) -> usize {
    let Ok(text) = std::fs::read_to_string(log) else { return 0 };
    text.lines()
        .filter_map(|l| serde_json::from_str::<Record>(l).ok())
        .filter(|e| matches!(&e.body, Body::ModelRequest(m) if m.text_call == Some(true)))
        .count()
}

fn setup_failure(repeat: usize, why: String, started: Instant) -> RunResult {
    RunResult {
        repeat,
        passed: false,
        score: Score {
            checks: vec![Check { expectation: "setup".into(), passed: false, detail: why.clone() }],
            ..Score::default()
        },
        stop: "setup_error".into(),
        stop_detail: Some(why),
        answer: None,
        steps: 0,
        input_tokens: 0,
        output_tokens: 0,
        tokens_estimated: false,
        wall_ms: started.elapsed().as_millis() as u64,
        model_ms: 0,
        tool_ms: 0,
        text_calls: 0,
        calls: Vec::new(),
        audit_log: None,
    }
}
