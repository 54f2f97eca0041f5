//! `reach call SKILL.TOOL ARGS`: check, confirm, run, print.

use crate::args::{CallArgs, Cli};
use crate::context;
use agent_reach::harness::audit::record::{
    CallEnded, CallHead, FrontEnd, FrontStop, RunFinished, RunStarted,
};
use agent_reach::harness::{self, audit::AuditLog};
use agent_reach::{Confirmer, ToolFailure};
use serde_json::{Value, json};
use std::io::{BufRead, IsTerminal, Read, Write};
use std::process::ExitCode;

pub async fn run(cli: &Cli, call: &CallArgs) -> anyhow::Result<ExitCode> {
    let Some((skill, tool)) = call.target.split_once('.') else {
        anyhow::bail!(
            "`{}` is not SKILL.TOOL (for example: reach call files.read '{{\"path\": \
             \"README.md\"}}')",
            call.target
        );
    };
    let arguments = if call.arguments == "-" {
        let mut text = String::new();
        std::io::stdin().read_to_string(&mut text)?;
        text
    } else {
        call.arguments.clone()
    };
    let host = context::load_with_runs(cli, &call.runs_dir).await?;
    let confirmer = TerminalConfirmer { yes: call.yes };
    // A call that cannot be recorded does not run.
    let id = agent_reach::harness::audit::new_run_id();
    let mut audit =
        AuditLog::create(&call.runs_dir, &id, harness::secrets(&host, [])).map_err(|e| {
            anyhow::anyhow!("could not create the audit log in {}: {e}", call.runs_dir.display())
        })?;
    let (version, hash) = match host.registry().active(skill) {
        Some(a) => (Some(a.manifest.version.to_string()), Some(a.loaded().wasm_hash().to_owned())),
        None => (None, None),
    };
    let asked = serde_json::from_str::<Value>(&arguments).unwrap_or_else(|_| json!(arguments));
    audit.record(RunStarted::of_front(FrontEnd::Call, format!("reach call {}", call.target)));
    let head = CallHead {
        arguments: asked,
        ..CallHead::of_run(0, 1, &call.target, Some(skill.to_owned()), version, hash)
    };
    audit.call_started(&head).map_err(|failure| anyhow::Error::msg(failure.message))?;
    let started = std::time::Instant::now();
    // Its changes to granted folders are journaled (`reach runs diff/undo`).
    let scope = agent_reach::journal::CallScope {
        run: agent_reach::journal::RunJournal::after_recovery(
            &super::runs::undo::journal_root(&call.runs_dir),
            &id,
            host.policy().journal(),
        ),
        call: 1,
        step: 0,
        worker: None,
    };
    let result =
        agent_reach::journal::scoped(scope, host.invoke(skill, tool, &arguments, &confirmer)).await;
    let bytes = result.as_ref().map_or(0, String::len);
    let mut ended = CallEnded::of(head, &result, bytes, started.elapsed().as_millis() as u64);
    // Known once it ran: `reach call` writes the level with the outcome.
    ended.head.level = Some(host.policy().level(skill, tool));
    audit.call_ended(ended);
    audit.record(RunFinished::of_front(
        if result.is_ok() { FrontStop::Ok } else { FrontStop::Error },
        1,
    ));
    audit.sync();
    match result {
        Ok(output) => {
            let mut stdout = std::io::stdout().lock();
            // The result is a skill's (or a page's) text: raw for a pipe, the
            // product; escaped for a terminal, which it could otherwise drive.
            let output = if stdout.is_terminal() {
                agent_reach::text::escape_keeping_lines(&output)
            } else {
                output
            };
            stdout.write_all(output.as_bytes())?;
            if !output.ends_with('\n') {
                stdout.write_all(b"\n")?;
            }
            Ok(ExitCode::SUCCESS)
        }
        Err(failure) => fail(&failure),
    }
}

/// Print a tool failure as one JSON object on stdout and exit 1.
fn fail(failure: &ToolFailure) -> anyhow::Result<ExitCode> {
    println!("{}", failure.to_json());
    Ok(ExitCode::from(1))
}

/// Asks on the terminal, showing the key parameters; `--yes` skips the question.
pub struct TerminalConfirmer {
    /// Confirm without asking.
    pub yes: bool,
}

impl Confirmer for TerminalConfirmer {
    fn confirm(
        &self,
        skill: &str,
        tool: &str,
        arguments: &serde_json::Value,
    ) -> Result<(), String> {
        if self.yes {
            return Ok(());
        }
        if !std::io::stdin().is_terminal() || !std::io::stderr().is_terminal() {
            return Err("there is no terminal to ask on; pass --yes to confirm".to_owned());
        }
        match ask(skill, tool, arguments) {
            Ok(true) => Ok(()),
            Ok(false) => Err("the person at the terminal declined".to_owned()),
            Err(err) => Err(format!("could not ask on the terminal: {err}")),
        }
    }

    fn person_present(&self) -> bool {
        !self.yes && std::io::stdin().is_terminal() && std::io::stderr().is_terminal()
    }
}

fn ask(skill: &str, tool: &str, arguments: &serde_json::Value) -> std::io::Result<bool> {
    let mut err = std::io::stderr().lock();
    // Reset colours and visibility first: nothing printed before (a model's
    // text, a progress line) can leave the question hidden or disguised.
    writeln!(err, "\x1b[0m{}", agent_reach::confirmation_prompt(skill, tool, arguments))?;
    write!(err, "Run it? [y/N] ")?;
    err.flush()?;
    let mut answer = String::new();
    std::io::stdin().lock().read_line(&mut answer)?;
    Ok(matches!(answer.trim().to_ascii_lowercase().as_str(), "y" | "yes"))
}
