//! `reach agents list`: the worker profiles of the table and what each may reach.

use crate::args::Cli;
use crate::context;
use agent_reach::Host;
use agent_reach::policy::{AgentProfile, DELEGATE_SKILL, FolderGrant, Level, SkillGrants};
use agent_reach::text::escape_for_terminal;
use serde_json::{Value, json};
use std::process::ExitCode;

pub async fn list(cli: &Cli, as_json: bool) -> anyhow::Result<ExitCode> {
    let host = context::load(cli).await?;
    let policy = &host.policy();
    let delegation = policy.delegation();
    if as_json {
        let agents: Vec<Value> = policy.agents().iter().map(|a| profile_json(&host, a)).collect();
        println!(
            "{}",
            serde_json::to_string_pretty(&json!({ "agents": agents, "delegation": delegation }))?
        );
        return Ok(ExitCode::SUCCESS);
    }
    let origin = policy.origin().display().to_string();
    if policy.agents().is_empty() {
        println!(
            "no agent profiles in {}; add an [agents.NAME] table with description = \"…\" and \
             skills = [\"…\"] (skills listed under [skills.*]) to let a run delegate to workers",
            escape_for_terminal(&origin)
        );
        return Ok(ExitCode::SUCCESS);
    }
    // Profiles, instructions and paths are the operator's text, but a table
    // can come from anywhere: escaped like everything else we print.
    for a in policy.agents() {
        println!(
            "{} ({}:{}) — {}",
            escape_for_terminal(&a.name),
            escape_for_terminal(&origin),
            a.line,
            escape_for_terminal(&a.description)
        );
        let model =
            a.model.as_deref().map_or_else(|| "the run's model".to_owned(), escape_for_terminal);
        println!("  model:        {model}");
        match a.max_steps {
            Some(n) => println!("  max_steps:    {n}"),
            None => println!(
                "  max_steps:    {} ([delegation] worker_max_steps)",
                delegation.worker_max_steps
            ),
        }
        match a.token_budget {
            Some(n) => println!("  token_budget: {n}"),
            None => println!("  token_budget: none of its own (the run's budget)"),
        }
        let delegates = if a.may_delegate() {
            format!("yes (lists `{DELEGATE_SKILL}`; at most depth {})", delegation.max_depth)
        } else {
            "no".to_owned()
        };
        println!("  may delegate: {delegates}");
        if let Some(text) = &a.instructions {
            println!("  instructions: {}", escape_for_terminal(text));
        }
        println!("  skills:");
        for skill in a.skills.iter().filter(|s| *s != DELEGATE_SKILL) {
            println!("    {}: {}", escape_for_terminal(skill), reach_of(&host, skill));
        }
        println!();
    }
    println!(
        "[delegation]: max_workers {}, max_depth {}, max_delegations {}, worker_max_steps {}",
        delegation.max_workers,
        delegation.max_depth,
        delegation.max_delegations,
        delegation.worker_max_steps
    );
    println!(
        "the run itself: {}",
        if delegation.supervisor_skills {
            "uses the skills too (supervisor_skills = true)"
        } else {
            "only delegates (supervisor_skills = false)"
        }
    );
    Ok(ExitCode::SUCCESS)
}

/// One line on what a worker can reach through `skill`:
/// `read ./docs; write ./notes; net api.example.com`.
fn reach_of(host: &Host, skill: &str) -> String {
    if host.registry().active(skill).is_none() {
        return "(not installed)".to_owned();
    }
    let grants = host.policy().grants(skill);
    if !offered(&grants) {
        return "(level deny: not offered)".to_owned();
    }
    let folders = |list: &[FolderGrant]| {
        list.iter().map(|g| escape_for_terminal(&g.declared)).collect::<Vec<_>>().join(", ")
    };
    let mut parts = Vec::new();
    if !grants.read.is_empty() {
        parts.push(format!("read {}", folders(&grants.read)));
    }
    if !grants.write.is_empty() {
        parts.push(format!("write {}", folders(&grants.write)));
    }
    if !grants.net.is_empty() {
        parts.push(format!("net {}", grants.net));
    }
    if parts.is_empty() {
        return "no folders, no network".to_owned();
    }
    parts.join("; ")
}

/// False when every tool of the skill is at `deny`: no worker is offered it.
fn offered(grants: &SkillGrants) -> bool {
    grants.level != Level::Deny || grants.tool_levels.values().any(|l| *l != Level::Deny)
}

/// The `--json` object of one profile (layout in `reach agents list --help`).
fn profile_json(host: &Host, a: &AgentProfile) -> Value {
    let skills: Vec<Value> = a
        .skills
        .iter()
        .filter(|s| *s != DELEGATE_SKILL)
        .map(|skill| {
            let grants = host.policy().grants(skill);
            let paths = |list: &[FolderGrant]| {
                list.iter().map(|g| g.path.display().to_string()).collect::<Vec<_>>()
            };
            json!({
                "skill": skill,
                "installed": host.registry().active(skill).is_some(),
                "level": grants.level,
                "offered": offered(&grants),
                "read": paths(&grants.read),
                "write": paths(&grants.write),
                "net": grants.net.patterns().iter().map(ToString::to_string).collect::<Vec<_>>(),
            })
        })
        .collect();
    json!({
        "name": a.name,
        "line": a.line,
        "description": a.description,
        "model": a.model,
        "max_steps": a.max_steps.unwrap_or(host.policy().delegation().worker_max_steps),
        "token_budget": a.token_budget,
        "may_delegate": a.may_delegate(),
        "instructions": a.instructions,
        "skills": skills,
    })
}
