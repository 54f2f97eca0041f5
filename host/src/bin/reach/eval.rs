//! `reach eval`: run a case set against a model and report how it did.
//!
//! Exit codes: 0 every gate holds; 1 a gate failed (completion below
//! `--min-completion`, a regression against `--baseline`); 2 usage or a
//! case-file error.

use crate::args::{Cli, EvalArgs};
use crate::model_setup;
use agent_reach::eval::baseline::Baseline;
use agent_reach::eval::case::{self, LoadedCase};
use agent_reach::eval::report::{EvalReport, Gate, Metrics, RunResult};
use agent_reach::eval::runner::{RunProgress, Setting};
use agent_reach::eval::{self, EvalProgress, html};
use agent_reach::harness::audit::new_run_id;
use agent_reach::policy::{ModelSettings, Policy};
use agent_reach::runtime::RuntimeConfig;
use agent_reach::text::{escape_for_terminal, shorten_chars};
use anyhow::{Context as _, bail};
use std::io::{IsTerminal, Write};
use std::path::Path;
use std::process::ExitCode;
use std::sync::atomic::{AtomicUsize, Ordering};

/// One line per run on stderr; on a terminal with one job, a live line
/// that shows the step and tool of the run in progress.
struct Lines {
    live: bool,
    total: usize,
    started: AtomicUsize,
}

impl Lines {
    fn status(&self, text: &str) {
        if self.live {
            eprint!("\r\x1b[2K{}", shorten_chars(text, 110));
            let _ = std::io::stderr().flush();
        }
    }
}

impl RunProgress for Lines {
    fn step(&self, case: &str, repeat: usize, step: usize) {
        self.status(&format!(
            "[{}/{}] {case} #{repeat}: step {step}, asking the model…",
            self.started.load(Ordering::Relaxed),
            self.total
        ));
    }

    fn tool(&self, case: &str, repeat: usize, tool: &str) {
        let tool = escape_for_terminal(tool);
        self.status(&format!(
            "[{}/{}] {case} #{repeat}: running {tool}…",
            self.started.load(Ordering::Relaxed),
            self.total
        ));
    }
}

impl EvalProgress for Lines {
    fn started(&self, _case: &LoadedCase, _repeat: usize) {
        self.started.fetch_add(1, Ordering::Relaxed);
    }

    fn finished(&self, case: &LoadedCase, result: &RunResult, done: usize, total: usize) {
        let verdict = if result.passed { "pass" } else { "FAIL" };
        let mut line = format!(
            "[{done}/{total}] {verdict} {} #{} ({} step(s), {:.1} s)",
            case.case.id,
            result.repeat,
            result.steps,
            result.wall_ms as f64 / 1000.0
        );
        if let Some(check) = result.score.checks.iter().find(|c| !c.passed) {
            line.push_str(&format!(
                " — {}: {}",
                check.expectation,
                escape_for_terminal(&shorten_chars(&check.detail, 160))
            ));
        }
        if self.live {
            eprint!("\r\x1b[2K");
        }
        eprintln!("{line}");
    }
}

/// The `[model]` table of the operator's reach.toml, when there is one.
fn model_table(cli: &Cli) -> anyhow::Result<ModelSettings> {
    if !cli.policy.exists() {
        return Ok(ModelSettings::default());
    }
    Ok(Policy::load(&cli.policy)?.model().clone())
}

/// Cases whose id or domain is in `only` (all when empty); a filter that
/// matches nothing is a usage error.
fn select(cases: Vec<LoadedCase>, only: &[String]) -> anyhow::Result<Vec<LoadedCase>> {
    if only.is_empty() {
        return Ok(cases);
    }
    for want in only {
        if !cases.iter().any(|c| &c.case.id == want || &c.case.domain == want) {
            let mut domains: Vec<&str> = cases.iter().map(|c| c.case.domain.as_str()).collect();
            domains.sort();
            domains.dedup();
            bail!("--only {want}: no case has this id or domain (domains: {})", domains.join(", "));
        }
    }
    Ok(cases
        .into_iter()
        .filter(|c| only.iter().any(|w| w == &c.case.id || w == &c.case.domain))
        .collect())
}

/// Refuse, before anything runs, every case whose table grants more than
/// its own working folder and fixture server, unless `--trust-cases`.
fn confine(cases: &[LoadedCase], trusted: bool) -> anyhow::Result<()> {
    if trusted {
        eprintln!(
            "warning: --trust-cases: every case's permission table is granted as written, without \
             a person"
        );
        return Ok(());
    }
    let refused: Vec<String> = cases
        .iter()
        .filter_map(|c| eval::trust::check_case(c).err())
        .map(|e| e.to_string())
        .collect();
    if !refused.is_empty() {
        bail!("{} case(s) refused:\n{}", refused.len(), refused.join("\n"));
    }
    Ok(())
}

/// `dir` made (if need be) and absolute: runs write there from their own
/// working folders.
fn absolute(dir: &Path) -> anyhow::Result<std::path::PathBuf> {
    std::fs::create_dir_all(dir).with_context(|| format!("could not create {}", dir.display()))?;
    Ok(dir.canonicalize()?)
}

/// `reach eval`.
pub async fn run(cli: &Cli, args: &EvalArgs) -> anyhow::Result<ExitCode> {
    let cases = select(case::load(&args.paths)?, &args.only)?;
    confine(&cases, args.trust_cases)?;
    if args.list {
        list(&cases);
        return Ok(ExitCode::SUCCESS);
    }
    let baseline =
        args.baseline.as_deref().map(Baseline::load).transpose().map_err(anyhow::Error::msg)?;
    let (model, api_key): (std::sync::Arc<dyn agent_reach::model::Model>, _) = match &args.replay {
        // The recorded replies stand in for the model: none is asked.
        Some(_) => {
            (std::sync::Arc::new(agent_reach::replay::ReplayModel::named("replay")), Vec::new())
        }
        None => {
            let (model, key) = model_setup::build(&args.model, &model_table(cli)?)?;
            (model.into(), key)
        }
    };
    if let Some(dir) = &args.record
        && std::fs::read_dir(dir).is_ok_and(|mut entries| entries.next().is_some())
    {
        bail!("--record {}: the folder is not empty; give a new or empty folder", dir.display());
    }
    if let Some(dir) = &args.replay
        && !dir.is_dir()
    {
        bail!(
            "--replay {}: no such folder (record one with `reach eval --record DIR`)",
            dir.display()
        );
    }
    let id = new_run_id();
    let out_dir = match &args.out {
        Some(dir) => dir.clone(),
        None => Path::new(".reach").join("evals").join(&id),
    };
    // Audit logs are named after case and repeat and never overwritten: in
    // a folder that holds an earlier evaluation's logs every run would fail.
    let runs_dir = out_dir.join("runs");
    if std::fs::read_dir(&runs_dir).is_ok_and(|mut entries| entries.next().is_some()) {
        bail!(
            "--out {}: {} already holds an evaluation's audit logs; give a new or empty folder",
            out_dir.display(),
            runs_dir.display()
        );
    }
    std::fs::create_dir_all(&out_dir)
        .with_context(|| format!("could not create {}", out_dir.display()))?;
    let out_dir = out_dir.canonicalize()?;
    let setting = Setting {
        skills_dir: cli.skills.clone(),
        runtime: RuntimeConfig {
            cache_dir: if cli.no_cache {
                None
            } else {
                cli.cache_dir.clone().or(RuntimeConfig::default().cache_dir)
            },
            ..RuntimeConfig::default()
        },
        model: std::sync::Arc::clone(&model),
        secrets: api_key,
        out_dir: out_dir.clone(),
        max_steps: args.max_steps,
        disclose: args.disclose.into(),
        bundle_body: args.bundle_body.into(),
        compact_schemas: args.compact_schemas,
        trust_cases: args.trust_cases,
        record: args.record.as_deref().map(absolute).transpose()?,
        replay: args.replay.clone(),
    };
    let runs = cases.len() * usize::from(args.repeat);
    let tty = std::io::stderr().is_terminal();
    let lines = Lines { live: tty && args.jobs == 1, total: runs, started: AtomicUsize::new(0) };
    eprintln!(
        "eval {id}: {} case(s) × {} = {runs} run(s), model {}, {} at a time; logs in {}",
        cases.len(),
        args.repeat,
        escape_for_terminal(model.name()),
        args.jobs,
        out_dir.display()
    );
    let mut report =
        eval::evaluate(&setting, &cases, usize::from(args.repeat), usize::from(args.jobs), &lines)
            .await;

    if let Some(min) = args.min_completion {
        let got = report.overall.completion * 100.0;
        report.gates.push(Gate {
            name: "min_completion".into(),
            passed: got + 1e-9 >= min,
            detail: format!("completion {got:.1}% (at least {min}% required)"),
        });
    }
    if let (Some(base), Some(file)) = (&baseline, &args.baseline) {
        let comparison = base.compare(&report, file);
        report.gates.push(Gate {
            name: "baseline".into(),
            passed: comparison.regressions.is_empty(),
            detail: format!(
                "{} regression(s), {} improvement(s) against {}",
                comparison.regressions.len(),
                comparison.improvements.len(),
                file.display()
            ),
        });
        report.baseline = Some(comparison);
    }
    write_outputs(args, &report, &out_dir)?;
    if args.json {
        println!("{}", serde_json::to_string(&report)?);
    } else {
        print!("{}", table(&report));
    }
    Ok(if report.gates_hold() { ExitCode::SUCCESS } else { ExitCode::from(1) })
}

/// report.json in the output folder, and the files asked for.
fn write_outputs(args: &EvalArgs, report: &EvalReport, out_dir: &Path) -> anyhow::Result<()> {
    let json = out_dir.join("report.json");
    std::fs::write(&json, serde_json::to_string_pretty(report)?)
        .with_context(|| format!("could not write {}", json.display()))?;
    if let Some(file) = &args.html {
        std::fs::write(file, html::render(report))
            .with_context(|| format!("could not write {}", file.display()))?;
        eprintln!("HTML report: {}", file.display());
    }
    if let Some(file) = &args.save_baseline {
        Baseline::of(report).save(file).map_err(anyhow::Error::msg)?;
        eprintln!("baseline saved: {}", file.display());
    }
    Ok(())
}

fn list(cases: &[LoadedCase]) {
    println!("{:<28} {:<15} TASK", "ID", "DOMAIN");
    for c in cases {
        println!(
            "{:<28} {:<15} {}",
            c.case.id,
            c.case.domain,
            shorten_chars(&c.case.task.replace('\n', " "), 90)
        );
    }
    println!("{} case(s)", cases.len());
}

fn pct(value: f64) -> String {
    format!("{:.1}%", value * 100.0)
}

fn row(name: &str, m: &Metrics) -> String {
    let opt = |v: Option<f64>| v.map_or("–".to_owned(), pct);
    format!(
        "{:<16} {:>5} {:>5} {:>7} {:>7} {:>7} {:>7} {:>7} {:>8} {:>6} {:>9} {:>7}\n",
        name,
        m.cases,
        m.runs,
        pct(m.completion),
        pct(m.pass_at_1),
        pct(m.pass_all),
        pct(m.tool_accuracy),
        opt(m.arg_accuracy),
        opt(m.boundary_compliance),
        format!("{:.1}", m.median_steps),
        format!("{:.0}", m.mean_input_tokens + m.mean_output_tokens),
        format!("{:.1}", m.median_seconds),
    )
}

/// The summary a person reads: figures per domain and overall, each
/// failed run with the expectation that failed and its audit log, the gates.
fn table(report: &EvalReport) -> String {
    let mut out = format!(
        "\n{:<16} {:>5} {:>5} {:>7} {:>7} {:>7} {:>7} {:>7} {:>8} {:>6} {:>9} {:>7}\n",
        "DOMAIN",
        "CASES",
        "RUNS",
        "DONE",
        "PASS@1",
        format!("PASS^{}", report.repeat),
        "TOOLS",
        "ARGS",
        "BOUNDARY",
        "STEPS",
        "TOKENS",
        "SECONDS"
    );
    for (domain, m) in &report.by_domain {
        out.push_str(&row(domain, m));
    }
    out.push_str(&row("overall", &report.overall));
    let o = &report.overall;
    out.push_str(&format!(
        "\nper run: {:.0} input + {:.0} output tokens, {:.1} s with the model, {:.1} s in tools \
         (means); {} answer(s) cite something no tool returned, {} run(s) used an input nothing \
         showed\n",
        o.mean_input_tokens,
        o.mean_output_tokens,
        o.mean_model_seconds,
        o.mean_tool_seconds,
        o.ungrounded_runs,
        o.invented_input_runs
    ));
    let failed: Vec<(&str, &RunResult)> = report
        .cases
        .iter()
        .flat_map(|c| c.runs.iter().filter(|r| !r.passed).map(move |r| (c.id.as_str(), r)))
        .collect();
    if !failed.is_empty() {
        out.push_str("\nfailed:\n");
        for (id, run) in failed {
            let why: Vec<String> = run
                .score
                .checks
                .iter()
                .filter(|c| !c.passed)
                .map(|c| format!("{}: {}", c.expectation, shorten_chars(&c.detail, 200)))
                .collect();
            out.push_str(&format!(
                "  {id} #{}: {}\n",
                run.repeat,
                escape_for_terminal(&why.join("; "))
            ));
            if let Some(log) = &run.audit_log {
                out.push_str(&format!("      audit log: {log}\n"));
            }
        }
    }
    if let Some(b) = &report.baseline {
        out.push_str(&format!(
            "\nagainst {}: completion {} → {}\n",
            b.file,
            pct(b.completion_before),
            pct(b.completion_after)
        ));
        for c in &b.regressions {
            out.push_str(&format!("  regression  {}: {} → {}\n", c.id, c.before, c.after));
        }
        for c in &b.improvements {
            out.push_str(&format!("  improvement {}: {} → {}\n", c.id, c.before, c.after));
        }
    }
    for gate in &report.gates {
        out.push_str(&format!(
            "gate {}: {} — {}\n",
            gate.name,
            if gate.passed { "holds" } else { "FAILED" },
            gate.detail
        ));
    }
    out.push_str(&format!("report: {}/report.json\n", report.out_dir));
    out
}
