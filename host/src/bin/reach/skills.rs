//! `reach skills list` and `reach skills inspect`.

use crate::args::Cli;
use crate::context;
use agent_reach::registry::Status;
use serde_json::json;
use std::process::ExitCode;

pub async fn list(cli: &Cli, as_json: bool) -> anyhow::Result<ExitCode> {
    let ctx = context::load(cli).await?;
    let rows: Vec<serde_json::Value> = ctx
        .registry
        .entries()
        .iter()
        .map(|e| {
            let m = e.manifest.as_ref();
            json!({
                "name": m.map(|m| m.name.clone()),
                "version": m.map(|m| m.version.to_string()),
                "status": e.status,
                "path": e.path,
                "tools": m.map(|m| m.tools.iter().map(|t| t.name.clone()).collect::<Vec<_>>()).unwrap_or_default(),
                "description": m.map(|m| m.description.clone()),
                "reason": e.reason,
            })
        })
        .collect();
    if as_json {
        println!("{}", serde_json::to_string_pretty(&json!({ "skills_dir": ctx.registry.dir(), "skills": rows }))?);
        return Ok(ExitCode::SUCCESS);
    }
    if rows.is_empty() {
        println!("no skills in {} (drop .wasm files there, or build ours with `just skills`)", ctx.registry.dir().display());
        return Ok(ExitCode::SUCCESS);
    }
    println!("{:<16} {:<10} {:<11} TOOLS / REASON", "NAME", "VERSION", "STATUS");
    for e in ctx.registry.entries() {
        let (name, version, detail) = match &e.manifest {
            Some(m) => (
                m.name.clone(),
                m.version.to_string(),
                match e.status {
                    Status::Active => m.tools.iter().map(|t| t.name.as_str()).collect::<Vec<_>>().join(", "),
                    _ => e.reason.clone().unwrap_or_default(),
                },
            ),
            None => (
                e.path.file_name().map(|f| f.to_string_lossy().into_owned()).unwrap_or_default(),
                "-".to_owned(),
                e.reason.clone().unwrap_or_default(),
            ),
        };
        let status = match e.status {
            Status::Active => "active",
            Status::Superseded => "superseded",
            Status::Broken => "broken",
        };
        println!("{name:<16} {version:<10} {status:<11} {detail}");
    }
    Ok(ExitCode::SUCCESS)
}

pub async fn inspect(cli: &Cli, name: &str, as_json: bool) -> anyhow::Result<ExitCode> {
    let ctx = context::load(cli).await?;
    let Some(skill) = ctx.registry.active(name) else {
        let names: Vec<String> = ctx.registry.active_skills().iter().map(|s| s.manifest.name.clone()).collect();
        anyhow::bail!("no active skill named `{name}` in {}; active: {}", ctx.registry.dir().display(), names.join(", "));
    };
    let grants = ctx.policy.grants(name);
    let m = skill.manifest;
    if as_json {
        let out = json!({
            "manifest": m,
            "path": skill.loaded().path(),
            "contract": skill.loaded().contract().to_string(),
            "policy": ctx.policy.origin(),
            "grants": grants,
        });
        println!("{}", serde_json::to_string_pretty(&out)?);
        return Ok(ExitCode::SUCCESS);
    }
    println!("{} {} — {}", m.name, m.version, m.description);
    println!("file: {} (contract agent-reach:skill@{})", skill.loaded().path().display(), skill.loaded().contract());
    println!();
    println!("grants from {}{}:", ctx.policy.origin().display(), if grants.listed { "" } else { " (not listed: defaults only)" });
    let folders = |list: &[agent_reach::policy::FolderGrant]| {
        if list.is_empty() { "none".to_owned() } else { list.iter().map(|g| g.path.display().to_string()).collect::<Vec<_>>().join(", ") }
    };
    println!("  read-only folders: {}", folders(&grants.read));
    println!("  writable folders:  {}", folders(&grants.write));
    println!("  network:           {}", if grants.net.is_empty() { "none".to_owned() } else { grants.net.to_string() });
    println!("  environment:       {}", if grants.env.is_empty() { "none".to_owned() } else { grants.env.join(", ") });
    if !grants.credentials.is_empty() {
        let described: Vec<String> = grants.credentials.iter().map(describe_credential).collect();
        println!("  credentials:       {}", described.join("; "));
    }
    println!(
        "  limits:            {} MiB memory, {} ms, {} KiB output",
        grants.limits.memory_bytes >> 20,
        grants.limits.timeout.as_millis(),
        grants.limits.max_output_bytes / 1024
    );
    println!();
    for t in &m.tools {
        println!("tool {}.{} — level {}", m.name, t.name, grants.level_for(&t.name));
        println!("  {}", t.description.replace('\n', "\n  "));
        println!("  parameters: {}", serde_json::to_string(&t.parameters)?);
        for ex in &t.examples {
            println!("  example: {} → {}", ex.arguments, ex.result.as_deref().unwrap_or("…"));
        }
    }
    if let Some(text) = &m.instructions {
        println!();
        println!("{text}");
    }
    Ok(ExitCode::SUCCESS)
}

/// `api.example.com: header Authorization from $TOKEN (https only)` — where
/// the secret comes from, never its value.
fn describe_credential(c: &agent_reach::policy::Credential) -> String {
    use agent_reach::policy::{Injection, SecretSource};
    let how = match &c.inject {
        Injection::Header { name, .. } => format!("header {name}"),
        Injection::Query { name, .. } => format!("query parameter {name}"),
    };
    let from = match &c.source {
        SecretSource::Env(var) => format!("${var}"),
        SecretSource::File(path) => path.display().to_string(),
    };
    let scheme = if c.allow_http { "https, or http for this loopback host" } else { "https only" };
    format!("{}: {how} from {from} ({scheme})", c.target())
}
