//! Evaluation: how well an agent does on a set of tasks. Each case runs
//! in a fresh working folder with its own permission table and fixture
//! server, through the same harness as `reach run`, and is scored on what
//! a user would notice — the task done, the right tools with the right
//! inputs, nothing forbidden attempted, an answer backed by what the tools
//! returned. `reach eval` is the command line over this module.
//!
//! The parts: [`case`] (the JSON Lines format), [`server`] (the fixture
//! server), [`trust`] (what a case's table may grant without
//! `--trust-cases`), [`runner`] (one run of one case), [`score`] (the checks),
//! [`report`] (results and figures, the `--json` layout), [`baseline`]
//! (regressions against a saved run) and [`html`] (the HTML report).

pub mod baseline;
pub mod case;
pub mod html;
mod replayed;
pub mod report;
pub mod runner;
pub mod score;
pub mod server;
pub mod trust;

use case::LoadedCase;
use futures_util::StreamExt;
use report::{CaseResult, EvalReport, RunResult};
use runner::{RunProgress, Setting};

/// Progress of a whole evaluation.
pub trait EvalProgress: RunProgress {
    /// A run is about to start.
    fn started(&self, _case: &LoadedCase, _repeat: usize) {}
    /// A run finished; `done` of `total` runs are finished.
    fn finished(&self, _case: &LoadedCase, _result: &RunResult, _done: usize, _total: usize) {}
}

/// Reports nothing.
pub struct Quiet;
impl RunProgress for Quiet {}
impl EvalProgress for Quiet {}

/// Run every case `repeat` times, `jobs` runs at a time, and gather the
/// results (figures filled in; no gates yet). Cases stay in the order given,
/// runs in repeat order, whatever order they finish in.
pub async fn evaluate(
    setting: &Setting,
    cases: &[LoadedCase],
    repeat: usize,
    jobs: usize,
    progress: &dyn EvalProgress,
) -> EvalReport {
    let started_at = crate::harness::audit::now_rfc3339();
    let started = std::time::Instant::now();
    let repeat = repeat.max(1);
    let work: Vec<(usize, usize)> =
        (1..=repeat).flat_map(|r| (0..cases.len()).map(move |c| (c, r))).collect();
    let total = work.len();
    let done = std::sync::atomic::AtomicUsize::new(0);
    let mut results: Vec<Vec<RunResult>> = vec![Vec::new(); cases.len()];
    let mut stream = futures_util::stream::iter(work)
        .map(|(c, r)| {
            let case = &cases[c];
            let done = &done;
            async move {
                progress.started(case, r);
                let result = runner::run_once(setting, case, r, progress).await;
                let n = done.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
                progress.finished(case, &result, n, total);
                (c, result)
            }
        })
        .buffer_unordered(jobs.max(1));
    while let Some((c, result)) = stream.next().await {
        results[c].push(result);
    }
    drop(stream);
    let cases: Vec<CaseResult> = cases
        .iter()
        .zip(results)
        .map(|(case, mut runs)| {
            runs.sort_by_key(|r| r.repeat);
            CaseResult {
                id: case.case.id.clone(),
                domain: case.case.domain.clone(),
                task: case.case.task.clone(),
                source: case.location(),
                passes: runs.iter().filter(|r| r.passed).count(),
                runs,
            }
        })
        .collect();
    let mut report = EvalReport {
        schema: report::SCHEMA,
        started: started_at,
        model: setting.model.name().to_owned(),
        repeat,
        out_dir: setting.out_dir.display().to_string(),
        wall_ms: started.elapsed().as_millis() as u64,
        cases,
        overall: report::Metrics::default(),
        by_domain: Default::default(),
        failure_kinds: Default::default(),
        gates: Vec::new(),
        baseline: None,
    };
    report.summarise();
    report
}
