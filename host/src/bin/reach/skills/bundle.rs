//! `reach skills list` and `reach skills inspect` for Agent Skills bundles.

use super::{print_grants, requests};
use agent_reach::Host as Context;
use agent_reach::policy::Policy;
use agent_reach::registry::BundleEntry;
use agent_reach::registry::seen::{Change, SeenSkill, SeenState};
use agent_reach::text::{escape_for_terminal, escape_keeping_lines};
use serde_json::json;
use std::process::ExitCode;

/// A bundle's row in `reach skills list --json`: the fields of a
/// component's row, plus its files and warnings.
pub(super) fn row(b: &BundleEntry, policy: &Policy, change: Option<&Change>) -> serde_json::Value {
    let bundle = b.bundle.as_ref();
    json!({
        "kind": "bundle",
        "name": b.name(),
        "version": bundle.and_then(|b| b.metadata.get("version")),
        "status": b.status,
        "path": b.path,
        "sha256": b.sha256(),
        "pinned": policy.pin(&b.name()).is_some(),
        "tools": b.manifest.iter().flat_map(|m| &m.tools).map(|t| t.name.clone()).collect::<Vec<_>>(),
        "description": bundle.map(|b| b.description.clone()),
        "reason": b.reason,
        "previous": change,
        "origin": b.origin,
        "files": bundle.map(|b| b.files.len()),
        "warnings": bundle.map(|b| b.problems.iter().map(|p| p.message.clone()).collect::<Vec<_>>()),
    })
}

/// `reach skills inspect NAME` for a bundle: what it is, its digest and
/// pin, its grants, its tools and scripts (which run, which never do), its
/// files and its instructions.
pub(super) fn inspect(
    ctx: &Context,
    b: &BundleEntry,
    seen_from: &std::path::Path,
    as_json: bool,
) -> anyhow::Result<ExitCode> {
    let name = b.name();
    let grants = ctx.policy().grants(&name);
    let pin = ctx.policy().pin(&name);
    let bundle = b.bundle.as_ref();
    // Read only, as for a component: what `skills list` last showed stays.
    let change = match (SeenState::load(&SeenState::beside(seen_from)), bundle, &b.manifest) {
        (Ok(state), Some(bundle), Some(manifest))
            if b.status == agent_reach::registry::Status::Active =>
        {
            state.last_change(&name, &SeenSkill::of_bundle(bundle, manifest))
        }
        (Err(err), ..) => {
            eprintln!(
                "warning: cannot tell whether {name} changed: {:#}",
                anyhow::Error::from(err)
            );
            None
        }
        _ => None,
    };
    if as_json {
        let out = json!({
            "kind": "bundle",
            "name": name,
            "status": b.status,
            "reason": b.reason,
            "path": b.path,
            "sha256": b.sha256(),
            "pin": pin,
            "bundle": bundle,
            "manifest": b.manifest,
            "scripts": b.scripts,
            "policy": ctx.policy().origin(),
            "grants": grants,
            "previous": change,
            "requests_against_grants": b.manifest.as_ref().map(|m| requests::rows(ctx.policy(), m)),
        });
        println!("{}", serde_json::to_string_pretty(&out)?);
        return Ok(ExitCode::SUCCESS);
    }
    let Some(bundle) = bundle else {
        println!(
            "{} — broken: {}",
            escape_for_terminal(&name),
            escape_for_terminal(b.reason.as_deref().unwrap_or(""))
        );
        println!("folder: {}", b.path.display());
        return Ok(ExitCode::SUCCESS);
    };
    // Everything from the bundle is its author's text: escaped.
    println!("{} — {}", escape_for_terminal(&name), escape_keeping_lines(&bundle.description));
    println!("bundle: {} ({} files)", b.path.display(), bundle.files.len());
    if let Some(reason) = &b.reason {
        println!("broken: {}", escape_for_terminal(reason));
    }
    match pin {
        Some(pin) => println!(
            "sha256: {} (over every file; pinned: {} line {})",
            bundle.sha256,
            ctx.policy().origin().display(),
            pin.line
        ),
        None => println!("sha256: {} (over every file; not pinned)", bundle.sha256),
    }
    for (key, value) in [("license", &bundle.license), ("compatibility", &bundle.compatibility)] {
        if let Some(value) = value {
            println!("{key}: {}", escape_for_terminal(value));
        }
    }
    if let Some(allowed) = &bundle.allowed_tools {
        println!(
            "allowed-tools: {} (shown only: the permission table decides what runs)",
            escape_for_terminal(allowed)
        );
    }
    for problem in &bundle.problems {
        println!("warning: {}", escape_for_terminal(&problem.message));
    }
    if let Some(change) = &change {
        println!("{}; review it below", escape_for_terminal(&change.to_string()));
    }
    println!();
    print_grants(ctx.policy(), &grants);
    if let Some(manifest) = &b.manifest {
        requests::print(ctx.policy(), manifest);
    }
    println!();
    for t in b.manifest.iter().flat_map(|m| &m.tools) {
        println!("tool {name}.{} — level {}", t.name, grants.level_for(&t.name));
        println!("  {}", escape_keeping_lines(&t.description).replace('\n', "\n  "));
    }
    if !b.scripts.is_empty() {
        println!("scripts:");
        for s in &b.scripts {
            match &s.cannot_run {
                None => println!(
                    "  {}: runs in the sandboxed Python runner (run_script)",
                    escape_for_terminal(&s.path)
                ),
                Some(why) => println!(
                    "  {}: never runs — {}",
                    escape_for_terminal(&s.path),
                    escape_for_terminal(why)
                ),
            }
        }
    }
    println!("files:");
    for f in &bundle.files {
        println!("  {} ({} bytes)", escape_for_terminal(&f.path), f.bytes);
    }
    println!();
    println!("{}", escape_keeping_lines(&bundle.body));
    Ok(ExitCode::SUCCESS)
}
