//! `reach call SKILL.TOOL ARGS`: check, confirm, run, print.

use crate::args::{CallArgs, Cli};
use crate::context;
use agent_reach::{Confirmer, ToolFailure};
use std::io::{BufRead, IsTerminal, Read, Write};
use std::process::ExitCode;

pub async fn run(cli: &Cli, call: &CallArgs) -> anyhow::Result<ExitCode> {
    let Some((skill, tool)) = call.target.split_once('.') else {
        anyhow::bail!("`{}` is not SKILL.TOOL (for example: reach call files.read '{{\"path\": \"README.md\"}}')", call.target);
    };
    let arguments = if call.arguments == "-" {
        let mut text = String::new();
        std::io::stdin().read_to_string(&mut text)?;
        text
    } else {
        call.arguments.clone()
    };
    let host = context::load(cli).await?;
    let confirmer = TerminalConfirmer { yes: call.yes };
    match host.invoke(skill, tool, &arguments, &confirmer).await {
        Ok(output) => {
            let mut stdout = std::io::stdout().lock();
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
    fn confirm(&self, skill: &str, tool: &str, arguments: &serde_json::Value) -> Result<(), String> {
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
    writeln!(err, "{skill}.{tool} needs your confirmation. Arguments:")?;
    if let Some(map) = arguments.as_object() {
        for (key, value) in map {
            let shown = match value {
                serde_json::Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            let count = shown.chars().count();
            let shown = if count > 200 { format!("{}… ({count} chars)", shown.chars().take(200).collect::<String>()) } else { shown };
            writeln!(err, "  {key}: {shown}")?;
        }
    }
    write!(err, "Run it? [y/N] ")?;
    err.flush()?;
    let mut answer = String::new();
    std::io::stdin().lock().read_line(&mut answer)?;
    Ok(matches!(answer.trim().to_ascii_lowercase().as_str(), "y" | "yes"))
}
