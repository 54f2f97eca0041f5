//! `reach call SKILL.TOOL ARGS`: check, confirm, run, print.

use crate::args::{CallArgs, Cli};
use crate::context;
use agent_reach::policy::Level;
use agent_reach::{ErrorCode, ToolFailure};
use std::io::{BufRead, IsTerminal, Read, Write};
use std::process::ExitCode;

/// Print a tool failure as one JSON object on stdout and exit 1.
fn fail(failure: &ToolFailure) -> anyhow::Result<ExitCode> {
    println!("{}", failure.to_json());
    Ok(ExitCode::from(1))
}

pub async fn run(cli: &Cli, call: &CallArgs) -> anyhow::Result<ExitCode> {
    let Some((skill, tool)) = call.target.split_once('.') else {
        anyhow::bail!("`{}` is not SKILL.TOOL (for example: reach call files.read '{{\"path\": \"README.md\"}}')", call.target);
    };
    let raw = if call.arguments == "-" {
        let mut text = String::new();
        std::io::stdin().read_to_string(&mut text)?;
        text
    } else {
        call.arguments.clone()
    };
    let ctx = context::load(cli).await?;

    let (active, spec) = match ctx.registry.tool(skill, tool) {
        Ok(found) => found,
        Err(failure) => return fail(&failure),
    };
    let arguments: serde_json::Value = match serde_json::from_str(&raw) {
        Ok(v) => v,
        Err(err) => {
            return fail(&ToolFailure::new(
                ErrorCode::InvalidArgs,
                format!("{skill}.{tool}: the arguments are not valid JSON: {err}"),
            ));
        }
    };
    if let Err(failure) = spec.validate(skill, &arguments) {
        return fail(&failure);
    }

    let grants = ctx.policy.grants(skill);
    match grants.level_for(tool) {
        Level::Deny => {
            tracing::warn!(skill, tool, "denied: level deny");
            return fail(&ToolFailure::new(
                ErrorCode::Denied,
                format!("{skill}.{tool} is forbidden by the permission table {} (level = deny)", ctx.policy.origin().display()),
            ));
        }
        Level::Confirm if call.yes => tracing::info!(skill, tool, "confirmed with --yes"),
        Level::Confirm => {
            if !confirm(skill, tool, &arguments)? {
                tracing::warn!(skill, tool, "denied: not confirmed");
                let how = if std::io::stdin().is_terminal() {
                    "the person at the terminal declined"
                } else {
                    "no terminal to ask on; pass --yes to confirm"
                };
                return fail(&ToolFailure::new(
                    ErrorCode::Denied,
                    format!("{skill}.{tool} needs confirmation (level = confirm): {how}"),
                ));
            }
        }
        Level::Auto => {}
    }

    let arguments = arguments.to_string();
    match ctx.runtime.call(active.loaded(), &grants, tool, &arguments).await {
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

/// Ask on the terminal, showing the key parameters. No terminal: no.
fn confirm(skill: &str, tool: &str, arguments: &serde_json::Value) -> anyhow::Result<bool> {
    if !std::io::stdin().is_terminal() || !std::io::stderr().is_terminal() {
        return Ok(false);
    }
    let mut err = std::io::stderr().lock();
    writeln!(err, "{skill}.{tool} needs your confirmation. Arguments:")?;
    if let Some(map) = arguments.as_object() {
        for (key, value) in map {
            let shown = match value {
                serde_json::Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            let shown: String = if shown.chars().count() > 200 {
                format!("{}… ({} chars)", shown.chars().take(200).collect::<String>(), shown.chars().count())
            } else {
                shown
            };
            writeln!(err, "  {key}: {shown}")?;
        }
    }
    write!(err, "Run it? [y/N] ")?;
    err.flush()?;
    let mut answer = String::new();
    std::io::stdin().lock().read_line(&mut answer)?;
    Ok(matches!(answer.trim().to_ascii_lowercase().as_str(), "y" | "yes"))
}
