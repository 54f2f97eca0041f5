//! `reach skills list`, `reach skills inspect` and `reach skills pin`.

use crate::args::Cli;
use crate::context;
use agent_reach::policy::Policy;
use agent_reach::registry::seen::{Change, SeenSkill, SeenState};
use agent_reach::registry::{Registry, SkillEntry, Status};
use agent_reach::text::{escape_for_terminal, escape_keeping_lines};
use serde_json::json;
use std::collections::BTreeMap;
use std::process::ExitCode;

mod bundle;
mod imports;
pub mod requests;

/// Hex characters of a digest shown in the table: enough to tell files
/// apart at a glance; `--json`, `inspect` and `pin` give all 64.
const SHORT_DIGEST: usize = 12;

pub async fn list(cli: &Cli, as_json: bool) -> anyhow::Result<ExitCode> {
    let ctx = context::load(cli).await?;
    let changes = record_seen(cli, ctx.registry());
    let rows: Vec<serde_json::Value> = ctx
        .registry()
        .entries()
        .iter()
        .map(|e| {
            let m = e.manifest.as_ref();
            let change = active_change(e, &changes);
            json!({
                "kind": "component",
                "name": m.map(|m| m.name.clone()),
                "version": m.map(|m| m.version.to_string()),
                "status": e.status,
                "path": e.path,
                "sha256": e.sha256,
                "pinned": m.is_some_and(|m| ctx.policy().pin(&m.name).is_some()),
                "tools": m
                    .map(|m| m.tools.iter().map(|t| t.name.clone()).collect::<Vec<_>>())
                    .unwrap_or_default(),
                "description": m.map(|m| m.description.clone()),
                "reason": e.reason,
                "previous": change,
                "origin": e.origin,
            })
        })
        .chain(ctx.registry().bundles().iter().map(|b| {
            let change = changes.get(&b.name()).filter(|_| b.active().is_some());
            bundle::row(b, ctx.policy(), change)
        }))
        .collect();
    if as_json {
        println!(
            "{}",
            serde_json::to_string_pretty(
                &json!({ "skills_dir": ctx.registry().dir(), "skills": rows })
            )?
        );
        return Ok(ExitCode::SUCCESS);
    }
    if rows.is_empty() {
        println!(
            "no skills in {} (drop .wasm files there, or build ours with `just skills`)",
            ctx.registry().dir().display()
        );
        return Ok(ExitCode::SUCCESS);
    }
    println!(
        "{:<16} {:<10} {:<11} {:<SHORT_DIGEST$}  TOOLS / REASON",
        "NAME", "VERSION", "STATUS", "DIGEST"
    );
    for e in ctx.registry().entries() {
        let (name, version, detail) = match &e.manifest {
            Some(m) => (
                m.name.clone(),
                m.version.to_string(),
                match e.status {
                    Status::Active => {
                        m.tools.iter().map(|t| t.name.as_str()).collect::<Vec<_>>().join(", ")
                    }
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
        let digest = e.sha256.as_deref().map_or("-", |d| d.get(..SHORT_DIGEST).unwrap_or(d));
        // Reasons carry a skill's own error text and file names: escaped.
        let (name, detail) = (escape_for_terminal(&name), escape_for_terminal(&detail));
        println!("{name:<16} {version:<10} {status:<11} {digest:<SHORT_DIGEST$}  {detail}");
        if let Some(change) = active_change(e, &changes) {
            println!("{:<16} {change} — review: reach skills inspect {name}", "");
        }
        if let Some(origin) = &e.origin {
            let signature = match (&origin.verified_signer, &origin.signed_at_install) {
                (Some(s), _) => format!("signature verified: signed by {s}"),
                (None, Some(s)) => format!("signed by {s} at install (the table names no signer)"),
                (None, None) => "not signed".to_owned(),
            };
            println!("{:<16} from {}; {signature}", "", escape_for_terminal(&origin.reference));
        }
    }
    for b in ctx.registry().bundles() {
        let bundle = b.bundle.as_ref();
        let version = bundle.and_then(|b| b.metadata.get("version")).map_or("-", String::as_str);
        let status = if b.status == Status::Active { "active" } else { "broken" };
        let digest = b.sha256().map_or("-", |d| d.get(..SHORT_DIGEST).unwrap_or(d));
        let detail = match (b.status, bundle) {
            (Status::Active, Some(bundle)) => {
                let tools: Vec<&str> =
                    b.manifest.iter().flat_map(|m| &m.tools).map(|t| t.name.as_str()).collect();
                let mut detail = format!(
                    "bundle: {}{} file(s)",
                    if tools.is_empty() {
                        "instructions, ".to_owned()
                    } else {
                        format!("{}; ", tools.join(", "))
                    },
                    bundle.files.len()
                );
                if let Some(first) = bundle.problems.first() {
                    detail.push_str(&format!(
                        "; {} warning(s): {}",
                        bundle.problems.len(),
                        first.message
                    ));
                }
                detail
            }
            _ => b.reason.clone().unwrap_or_default(),
        };
        let (name, version) = (escape_for_terminal(&b.name()), escape_for_terminal(version));
        let detail = escape_for_terminal(&detail);
        println!("{name:<16} {version:<10} {status:<11} {digest:<SHORT_DIGEST$}  {detail}");
        if let Some(change) = changes.get(&b.name()).filter(|_| b.status == Status::Active) {
            // File names are the bundle author's: escaped.
            let change = escape_for_terminal(&change.to_string());
            println!("{:<16} {change} — review: reach skills inspect {name}", "");
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// The change recorded by this listing for an active entry.
fn active_change<'a>(e: &SkillEntry, changes: &'a BTreeMap<String, Change>) -> Option<&'a Change> {
    let m = e.manifest.as_ref().filter(|_| e.status == Status::Active)?;
    changes.get(&m.name)
}

/// Record every active skill as seen by a person and return those whose file
/// changed since the last listing. Only this command records (see
/// `agent_reach::registry::seen`); a state file that cannot be read or
/// written is a warning, never a reason to hide the list.
fn record_seen(cli: &Cli, registry: &Registry) -> BTreeMap<String, Change> {
    let path = SeenState::beside(&cli.policy);
    let mut state = match SeenState::load(&path) {
        Ok(state) => state,
        Err(err) => {
            eprintln!(
                "warning: upgrade notices are off until this is fixed: {:#}",
                anyhow::Error::from(err)
            );
            return BTreeMap::new();
        }
    };
    let mut changes = BTreeMap::new();
    for skill in registry.active_skills() {
        let name = skill.manifest.name.clone();
        if let Some(change) = state.record(&name, SeenSkill::of(&skill)) {
            tracing::warn!(
                skill = %name,
                change = %change,
                sha256 = skill.loaded().sha256(),
                "active skill file changed since the last listing"
            );
            changes.insert(name, change);
        }
    }
    for b in registry.active_bundles() {
        let (Some(bundle), Some(manifest)) = (b.active(), b.manifest.as_ref()) else { continue };
        if let Some(change) = state.record(&b.name(), SeenSkill::of_bundle(bundle, manifest)) {
            tracing::warn!(
                skill = %b.name(),
                change = %change,
                sha256 = %bundle.sha256,
                "active skill bundle changed since the last listing"
            );
            changes.insert(b.name(), change);
        }
    }
    if let Err(err) = state.save() {
        eprintln!(
            "warning: could not record what was listed, so changes will be reported again: {:#}",
            anyhow::Error::from(err)
        );
    }
    changes
}

pub async fn inspect(cli: &Cli, name: &str, as_json: bool) -> anyhow::Result<ExitCode> {
    let ctx = context::load(cli).await?;
    if let Some(entry) = ctx.registry().bundles().iter().find(|b| b.name() == name) {
        return bundle::inspect(&ctx, entry, &cli.policy, as_json);
    }
    let Some(skill) = ctx.registry().active(name) else {
        anyhow::bail!(
            "no active skill named `{name}` in {}; active: {}",
            ctx.registry().dir().display(),
            active_names(ctx.registry())
        );
    };
    let grants = ctx.policy().grants(name);
    let m = skill.manifest;
    let sha256 = skill.loaded().sha256();
    let pin = ctx.policy().pin(name);
    // Read only: what `skills list` last showed a person stays as it is.
    let change = match SeenState::load(&SeenState::beside(&cli.policy)) {
        Ok(state) => state.last_change(name, &SeenSkill::of(&skill)),
        Err(err) => {
            eprintln!(
                "warning: cannot tell whether {name} changed: {:#}",
                anyhow::Error::from(err)
            );
            None
        }
    };
    // What the file says about its build, read again here: nothing else needs it.
    let wasm = std::fs::read(skill.loaded().path()).unwrap_or_default();
    let toolchain = agent_reach::runtime::toolchain::toolchain(&wasm);
    let imports = imports::checked(skill.loaded().imports(), &grants);
    if as_json {
        let out = json!({
            "size_bytes": wasm.len(),
            "toolchain": toolchain,
            "imports": imports,
            "manifest": m,
            "path": skill.loaded().path(),
            "sha256": sha256,
            "pin": pin,
            "previous": change,
            "contract": skill.loaded().contract().to_string(),
            "policy": ctx.policy().origin(),
            "grants": grants,
            "requests_against_grants": requests::rows(ctx.policy(), m),
        });
        println!("{}", serde_json::to_string_pretty(&out)?);
        return Ok(ExitCode::SUCCESS);
    }
    // Descriptions, examples and instructions are the skill's own text.
    println!("{} {} — {}", m.name, m.version, escape_keeping_lines(&m.description));
    println!(
        "file: {} (contract agent-reach:skill@{})",
        skill.loaded().path().display(),
        skill.loaded().contract()
    );
    match pin {
        Some(pin) => println!(
            "sha256: {sha256} (pinned: {} line {})",
            ctx.policy().origin().display(),
            pin.line
        ),
        None => println!(
            "sha256: {sha256} (not pinned; `reach skills pin {name}` prints the line that pins it)"
        ),
    }
    println!(
        "built with: {}; {:.1} MB",
        toolchain.language.as_deref().unwrap_or("unknown (the component does not say)"),
        wasm.len() as f64 / 1e6
    );
    if let Some(change) = &change {
        println!("{change}; review its tools below");
    }
    println!();
    print_grants(ctx.policy(), &grants);
    requests::print(ctx.policy(), m);
    println!();
    println!("imports (what it can reach under these grants):");
    let mut plain = Vec::new();
    for import in &imports {
        match &import.note {
            Some(note) => println!("  {}: {note}", import.name),
            None => plain.push(import.name.as_str()),
        }
    }
    if !plain.is_empty() {
        // Clocks, random, streams and stdio: every skill has them, so one line.
        println!("  and what every skill has: {}", plain.join(", "));
    }
    println!();
    for t in &m.tools {
        println!("tool {}.{} — level {}", m.name, t.name, grants.level_for(&t.name));
        println!("  {}", escape_keeping_lines(&t.description).replace('\n', "\n  "));
        println!("  parameters: {}", serde_json::to_string(&t.parameters)?);
        for ex in &t.examples {
            println!(
                "  example: {} → {}",
                escape_for_terminal(&ex.arguments.to_string()),
                escape_for_terminal(ex.result.as_deref().unwrap_or("…"))
            );
        }
    }
    if let Some(text) = &m.instructions {
        println!();
        println!("{}", escape_keeping_lines(text));
    }
    Ok(ExitCode::SUCCESS)
}

pub async fn pin(cli: &Cli, name: &str) -> anyhow::Result<ExitCode> {
    let ctx = context::load(cli).await?;
    // The file to pin is the one that would be active if the table pinned
    // nothing: the newest correctly named file. So the same command pins a
    // first file and accepts an upgrade the current pin refuses.
    let unpinned = Registry::scan(ctx.runtime(), &cli.skills, &Policy::builtin()).await?;
    let Some(skill) = unpinned.active(name) else {
        anyhow::bail!(
            "no skill named `{name}` in {} to pin (active: {}); `reach skills list` shows broken \
             files and why",
            unpinned.dir().display(),
            active_names(&unpinned)
        );
    };
    let sha256 = skill.loaded().sha256();
    let origin = ctx.policy().origin().display();
    eprintln!(
        "{name} {} from {}: sha256 {sha256}",
        skill.manifest.version,
        skill.loaded().path().display()
    );
    let line = format!("sha256 = \"{sha256}\"");
    match (ctx.policy().pin(name), ctx.policy().skill_line(name)) {
        (Some(pin), _) if pin.sha256 == sha256 => {
            eprintln!("{origin} line {} already pins `{name}` to this file", pin.line)
        }
        (Some(pin), _) => eprintln!(
            "{origin} line {} pins `{name}` to another file (sha256 {}); replace that line with:",
            pin.line, pin.sha256
        ),
        (None, Some(table)) => {
            eprintln!("add this line to [skills.{name}] ({origin} line {table}):")
        }
        (None, None) => {
            eprintln!("add these lines to {origin}:");
            println!("[skills.{name}]");
        }
    }
    println!("{line}");
    Ok(ExitCode::SUCCESS)
}

/// The grants of one skill, as `inspect` shows them.
fn print_grants(policy: &Policy, grants: &agent_reach::policy::SkillGrants) {
    println!(
        "grants from {}{}:",
        policy.origin().display(),
        if grants.listed { "" } else { " (not listed: defaults only)" }
    );
    let folders = |list: &[agent_reach::policy::FolderGrant]| {
        if list.is_empty() {
            "none".to_owned()
        } else {
            list.iter().map(|g| g.path.display().to_string()).collect::<Vec<_>>().join(", ")
        }
    };
    println!("  read-only folders: {}", folders(&grants.read));
    println!("  writable folders:  {}", folders(&grants.write));
    println!(
        "  network:           {}",
        if grants.net.is_empty() { "none".to_owned() } else { grants.net.to_string() }
    );
    println!(
        "  environment:       {}",
        if grants.env.is_empty() { "none".to_owned() } else { grants.env.join(", ") }
    );
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
}

fn active_names(registry: &Registry) -> String {
    let names: Vec<String> =
        registry.active_skills().iter().map(|s| s.manifest.name.clone()).collect();
    if names.is_empty() { "none".to_owned() } else { names.join(", ") }
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
