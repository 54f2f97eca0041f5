//! `reach runs replay RUN`: the run's task again, under the current skills
//! and table, and where it diverges.

use crate::args::Cli;
use crate::context;
use crate::run::TerminalProgress;
use agent_reach::harness::playback::Divergence;
use agent_reach::replay::replay;
use agent_reach::text::{escape_for_terminal, escape_keeping_lines};
use serde_json::json;
use std::io::IsTerminal;
use std::path::Path;
use std::process::ExitCode;

/// `reach runs replay`: exit 0 when nothing diverges, 1 when something does.
pub async fn run(
    cli: &Cli,
    runs_dir: &Path,
    run: &str,
    live: bool,
    json: bool,
) -> anyhow::Result<ExitCode> {
    let id = super::resolve(runs_dir, run)?;
    let host = std::sync::Arc::new(context::load_with_runs(cli, runs_dir).await?);
    let on = !json && std::io::stderr().is_terminal();
    if !json {
        eprintln!(
            "replaying run {id} under the current skills and table ({})",
            if live {
                "live: skills send their requests"
            } else {
                "offline: responses from the recording"
            }
        );
    }
    let found = replay(host, runs_dir, &id, live, TerminalProgress { on }).await?;
    if json {
        let out = json!({
            "run_id": found.run_id,
            "replay_id": found.replay_id,
            "live": found.live,
            "matches": found.matches(),
            "restored": found.restored,
            "stop": found.report.stop,
            "divergences": found.divergences,
        });
        println!("{out}");
    } else {
        if found.divergences.is_empty() {
            println!("no divergence: the replay made the same calls with the same results");
        } else {
            println!("{} divergence(s) from run {}:", found.divergences.len(), found.run_id);
        }
        for divergence in &found.divergences {
            print!("{}", render(divergence));
        }
        if found.restored > 0 {
            println!("the replay's changes to {} path(s) were put back", found.restored);
        }
        println!(
            "the replay's own log: reach runs show {} (reach runs verify {0})",
            found.replay_id
        );
    }
    Ok(if found.matches() { ExitCode::SUCCESS } else { ExitCode::from(1) })
}

/// One divergence for a person: its kind, where, what; a diff indented under it.
fn render(d: &Divergence) -> String {
    let mut at = Vec::new();
    if let Some(call) = &d.call {
        at.push(format!("call {call}"));
    } else if let Some(worker) = &d.worker {
        at.push(format!("worker {worker}"));
    }
    if d.step > 0 {
        at.push(format!("step {}", d.step));
    }
    if let Some(tool) = &d.tool {
        at.push(escape_for_terminal(tool));
    }
    let at = if at.is_empty() { String::new() } else { format!("{}: ", at.join(" ")) };
    let mut out = format!(
        "  {:<10} {at}{}\n",
        d.kind.as_str().to_uppercase(),
        escape_for_terminal(&d.detail)
    );
    if let Some(diff) = &d.diff {
        for line in escape_keeping_lines(diff).lines() {
            out.push_str(&format!("      {line}\n"));
        }
    }
    out
}
