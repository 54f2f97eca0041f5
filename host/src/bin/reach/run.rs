//! `reach run "TASK"`: the agent loop on the command line.
//!
//! Exit codes: 0 the model answered; 4 it answered, but `--review`'s last
//! verdict was not `pass`; 3 stopped by a limit (steps, tokens, no
//! progress) or a person declining; 1 the model failed; 2 usage or
//! configuration error.

use crate::args::{Cli, RunArgs};
use crate::call::TerminalConfirmer;
use crate::{context, model_setup};
use agent_reach::harness::{self, Progress, RunConfig, Stop};
use agent_reach::model::Usage;
use agent_reach::text::{escape_for_terminal, escape_keeping_lines};
use agent_reach::{Agent, AgentBuilder, AuditSink};
use std::io::{IsTerminal, Write};
use std::process::ExitCode;

/// Live progress on stderr when it is a terminal: which step, which tool, how long.
pub struct TerminalProgress {
    /// Show it (stderr is a terminal and no `--json`).
    pub on: bool,
}

impl Progress for TerminalProgress {
    fn run_started(&self, run_id: &str, model: &str, tools: &[&str]) {
        if self.on {
            eprintln!(
                "run {run_id}: {} tool(s) offered, model {}",
                tools.len(),
                escape_for_terminal(model)
            );
        }
    }

    fn model_request(&self, step: usize) {
        if self.on {
            eprint!("step {step}: asking the model… ");
            let _ = std::io::stderr().flush();
        }
    }

    fn model_finished(&self, _step: usize, ms: u64, usage: &Usage, tool_calls: usize) {
        if self.on {
            let what = match tool_calls {
                0 => "an answer".to_owned(),
                1 => "1 tool call".to_owned(),
                n => format!("{n} tool calls"),
            };
            let approx = if usage.estimated { "~" } else { "" };
            eprintln!("{what} ({:.1} s, {approx}{} tokens)", ms as f64 / 1000.0, usage.total());
        }
    }

    fn compacted(&self, step: usize, before: u64, after: u64) {
        if self.on {
            eprintln!(
                "step {step}: context compacted: ~{before} → ~{after} tokens (checkpoint in the \
                 audit log)"
            );
        }
    }

    fn tool_started(&self, _step: usize, tool: &str) {
        if self.on {
            // The name is the model's text: escaped, like everything the
            // model, a page or a skill wrote that reaches the terminal.
            eprint!("  {} … ", escape_for_terminal(tool));
            let _ = std::io::stderr().flush();
        }
    }

    fn tool_finished(&self, _step: usize, _tool: &str, outcome: &str, ms: u64) {
        if self.on {
            eprintln!("{} ({ms} ms)", escape_for_terminal(outcome));
        }
    }

    fn worker_started(&self, task: &str, agent: &str) {
        if self.on {
            eprintln!("\n  ↳ worker {task} ({}) started", escape_for_terminal(agent));
        }
    }

    fn worker_tool(&self, task: &str, tool: &str, outcome: &str, ms: u64) {
        if self.on {
            eprintln!(
                "    [{task}] {} → {} ({ms} ms)",
                escape_for_terminal(tool),
                escape_for_terminal(outcome)
            );
        }
    }

    fn reviewed(&self, review: &harness::Review) {
        if self.on {
            let verdict = review.verdict.map_or_else(
                || format!("the reviewer failed: {}", review.error.as_deref().unwrap_or("?")),
                |v| v.to_string(),
            );
            let issues = if review.issues.is_empty() {
                String::new()
            } else {
                format!(" — {}", review.issues.join("; "))
            };
            eprintln!(
                "  review {}: {}{}",
                review.round,
                escape_for_terminal(&verdict),
                escape_for_terminal(&issues)
            );
        }
    }

    fn worker_finished(&self, task: &str, outcome: &str, ms: u64) {
        if self.on {
            eprintln!(
                "  ↳ worker {task}: {} ({:.1} s)",
                escape_for_terminal(outcome),
                ms as f64 / 1000.0
            );
        }
    }
}

/// The model of each agent profile that names one: a client to the same
/// endpoint, with the same key, asking for another model name.
fn worker_models(
    mut agent: AgentBuilder,
    host: &agent_reach::Host,
    flags: &crate::args::ModelFlags,
    table: &agent_reach::policy::ModelSettings,
) -> anyhow::Result<AgentBuilder> {
    let names: std::collections::BTreeSet<String> =
        host.policy().agents().iter().filter_map(|a| a.model.clone()).collect();
    for name in names {
        let settings =
            agent_reach::policy::ModelSettings { name: Some(name.clone()), ..table.clone() };
        let flags = crate::args::ModelFlags { model: Some(name.clone()), ..flags.clone() };
        let (model, _) = model_setup::build(&flags, &settings)?;
        agent = agent.worker_model(name, model);
    }
    Ok(agent)
}

/// `reach run`.
pub async fn run(cli: &Cli, args: &RunArgs) -> anyhow::Result<ExitCode> {
    let host = std::sync::Arc::new(context::load_with_runs(cli, &args.runs_dir).await?);
    let table = host.policy().model().clone();
    let (model, api_key) = model_setup::build(&args.model, &table)?;
    let config = RunConfig {
        max_steps: args.max_steps.or(table.max_steps).unwrap_or(RunConfig::default().max_steps),
        token_budget: args.token_budget.or(table.token_budget),
        context_tokens: table.context_tokens,
        compact_at: table.compact_at.unwrap_or(RunConfig::default().compact_at),
        task_type: args.task_type.clone(),
        disclose: args.disclose.into(),
        compact_schemas: args.compact_schemas,
        review: args.review.clone(),
        bundle_body: args.bundle_body.into(),
        ..RunConfig::default()
    };
    let mut agent = Agent::builder(std::sync::Arc::clone(&host), model)
        .confirmer(TerminalConfirmer { yes: args.yes })
        .audit(AuditSink::Dir(args.runs_dir.clone()))
        .config(config)
        .progress(TerminalProgress { on: !args.json && std::io::stderr().is_terminal() });
    for key in api_key {
        agent = agent.secret(key);
    }
    agent = worker_models(agent, &host, &args.model, &table)?;
    if !args.no_memory {
        let settings = host.policy().memory().clone();
        let store = agent_reach::memory::open(&settings).map_err(|e| {
            anyhow::anyhow!(
                "could not open the memory: {e} (fix [memory] in the table, or pass --no-memory)"
            )
        })?;
        agent = agent.memory(store, settings);
    }
    let report = agent.build()?.run(&args.task).await?;
    if args.json {
        println!("{}", serde_json::to_string(&report)?);
    } else {
        if let Some(answer) = &report.answer {
            println!("{}", escape_keeping_lines(answer));
        }
        eprintln!("\n{}", escape_keeping_lines(&report.summary()));
        let log = report.audit_log.as_deref().unwrap_or(std::path::Path::new(""));
        eprintln!("audit log: {}  (reach runs show {})", log.display(), report.run_id);
    }
    Ok(match report.stop {
        // A script asked for a review: work the reviewer did not pass is not done.
        Stop::Answered
            if report.reviews.last().is_some_and(|r| r.verdict != Some(harness::Verdict::Pass)) =>
        {
            ExitCode::from(4)
        }
        Stop::Answered => ExitCode::SUCCESS,
        Stop::ModelError(_) | Stop::NotRecorded(_) => ExitCode::from(1),
        Stop::MaxSteps | Stop::TokenBudget | Stop::NoProgress | Stop::Declined => ExitCode::from(3),
    })
}
