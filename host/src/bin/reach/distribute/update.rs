//! `reach skill update [NAME]`: newer versions at each skill's origin,
//! what would change, installed only when a person (or `--yes`) says so.

use super::add::{self, Installed};
use crate::args::Cli;
use agent_reach::oci::OciRef;
use agent_reach::policy::Capability;
use agent_reach::registry::{Manifest, Status};
use agent_reach::text::escape_for_terminal;
use std::collections::BTreeSet;
use std::io::{BufRead as _, IsTerminal as _, Write as _};
use std::process::ExitCode;

/// Look for, show, and (when confirmed) install newer versions.
pub async fn update(
    cli: &Cli,
    name: Option<&str>,
    yes: bool,
    json: bool,
) -> anyhow::Result<ExitCode> {
    let host = crate::context::load(cli).await?;
    let policy = host.policy().clone();
    let installed: Vec<(Manifest, OciRef)> = host
        .registry()
        .entries()
        .iter()
        .filter(|e| e.status == Status::Active)
        .filter_map(|e| {
            let m = e.manifest.clone()?;
            let origin = OciRef::parse(&e.origin.as_ref()?.reference).ok()?;
            Some((m, origin))
        })
        .filter(|(m, _)| name.is_none_or(|n| n == m.name))
        .collect();
    if let Some(n) = name
        && installed.is_empty()
    {
        anyhow::bail!(
            "{n} is not an active skill installed from a registry (`reach skills list` shows each \
             skill's origin; `reach skill add oci://…` installs one)"
        );
    }
    let mut reports = Vec::new();
    let mut changed = false;
    for (current, origin) in installed {
        let registry = agent_reach::oci::Registry::connect_with_lookup(&origin)?;
        let newest = registry
            .tags(&origin)
            .await?
            .into_iter()
            .filter_map(|t| {
                semver::Version::parse(t.strip_prefix('v').unwrap_or(&t)).ok().map(|v| (v, t))
            })
            .filter(|(v, _)| v.pre.is_empty() && *v > current.version)
            .max();
        let Some((version, tag)) = newest else {
            if !json {
                println!(
                    "{} {} is the newest release at {}",
                    current.name,
                    current.version,
                    origin.repository_url()
                );
            }
            reports.push(serde_json::json!({"skill": current.name, "version": current.version.to_string(), "newer": null}));
            continue;
        };
        let staged = add::stage(cli, &origin.at_tag(&tag).to_string()).await?;
        let diff = Diff::between(&current, &staged.manifest);
        if !json {
            println!(
                "{} {} → {} at {}",
                current.name, current.version, version, staged.pulled.reference
            );
            for line in diff.lines() {
                println!("  {}", escape_for_terminal(&line));
            }
        }
        let go = yes || (!json && ask(&format!("install {} {}?", current.name, version)));
        let installed = if go {
            // Installed beside the pinned file: the pin keeps the old one
            // active until the operator changes it.
            Some(add::install(cli, &policy, staged, false, None, false).await?)
        } else {
            None
        };
        if !json {
            match &installed {
                Some(i) => print_installed(i, &policy),
                None => println!("  not installed (run again with --yes to install)"),
            }
        }
        changed |= installed.is_some();
        reports.push(serde_json::json!({
            "skill": current.name,
            "version": current.version.to_string(),
            "newer": version.to_string(),
            "changes": diff.lines(),
            "installed": installed.as_ref().map(|i| i.path.clone()),
            "sha256": installed.as_ref().map(|i| i.pulled.layer_digest.trim_start_matches("sha256:").to_owned()),
            "signer": installed.as_ref().and_then(|i| i.signer.clone()),
        }));
    }
    if json {
        println!(
            "{}",
            serde_json::to_string_pretty(
                &serde_json::json!({ "updates": reports, "installed_any": changed })
            )?
        );
    }
    Ok(ExitCode::SUCCESS)
}

fn print_installed(i: &Installed, policy: &agent_reach::policy::Policy) {
    println!("  installed {}", i.path.display());
    match &i.signer {
        Some(s) => println!("  signature verified: signed by {s}"),
        None => println!("  signature not checked (the table names no signer for it)"),
    }
    let sha = i.pulled.layer_digest.trim_start_matches("sha256:");
    match policy.pin(&i.manifest.name) {
        Some(pin) => println!(
            "  change line {} of the table to  sha256 = \"{sha}\"  to use it (the table is not edited)",
            pin.line
        ),
        None => println!("  pin it with  sha256 = \"{sha}\"  in [skills.{}]", i.manifest.name),
    }
}

/// Ask on the terminal; no terminal means no.
fn ask(question: &str) -> bool {
    if !std::io::stdin().is_terminal() {
        return false;
    }
    eprint!("{question} [y/N] ");
    let _ = std::io::stderr().flush();
    let mut line = String::new();
    std::io::stdin().lock().read_line(&mut line).is_ok() && matches!(line.trim(), "y" | "Y" | "yes")
}

/// What changes between two versions of a skill.
struct Diff {
    added_tools: Vec<String>,
    removed_tools: Vec<String>,
    added_requests: Vec<String>,
    removed_requests: Vec<String>,
}

impl Diff {
    fn between(old: &Manifest, new: &Manifest) -> Diff {
        let tools = |m: &Manifest| m.tools.iter().map(|t| t.name.clone()).collect::<BTreeSet<_>>();
        let requests = |m: &Manifest| {
            Capability::ALL
                .into_iter()
                .flat_map(|c| m.requests.list(c).iter().map(move |i| format!("{} {i}", c.key())))
                .collect::<BTreeSet<_>>()
        };
        let (ot, nt, or, nr) = (tools(old), tools(new), requests(old), requests(new));
        Diff {
            added_tools: nt.difference(&ot).cloned().collect(),
            removed_tools: ot.difference(&nt).cloned().collect(),
            added_requests: nr.difference(&or).cloned().collect(),
            removed_requests: or.difference(&nr).cloned().collect(),
        }
    }

    fn lines(&self) -> Vec<String> {
        let mut out = Vec::new();
        let mut push = |label: &str, items: &[String]| {
            if !items.is_empty() {
                out.push(format!("{label}: {}", items.join(", ")));
            }
        };
        push("new tools", &self.added_tools);
        push("tools gone", &self.removed_tools);
        push("new requests", &self.added_requests);
        push("requests dropped", &self.removed_requests);
        if out.is_empty() {
            out.push("same tools and requests".into());
        }
        out
    }
}
