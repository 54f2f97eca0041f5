//! What a skill requests, beside what the table grants: the part of `reach skills inspect` and
//! `reach policy check` that tells an operator, before any call, which requests will be refused
//! and which grants nobody asked for; and `reach policy suggest`, the lines that would grant
//! exactly what is requested.

use crate::args::Cli;
use crate::context;
use agent_reach::policy::{Answer, Policy, RequestRow};
use agent_reach::registry::{Manifest, Registry};
use agent_reach::text::{escape_for_terminal, escape_keeping_lines};
use std::process::ExitCode;

/// The manifest of the active skill or bundle `name`: where its requests are.
pub fn declared<'a>(registry: &'a Registry, name: &str) -> Option<&'a Manifest> {
    registry
        .active(name)
        .map(|s| s.manifest)
        .or_else(|| registry.active_bundle(name).and_then(|b| b.manifest.as_ref()))
}

/// Its requests against its grants; empty when it requests nothing (then
/// no grant is "not requested": the skill said nothing either way).
pub fn rows(policy: &Policy, manifest: &Manifest) -> Vec<RequestRow> {
    if manifest.requests.is_empty() {
        return Vec::new();
    }
    manifest.requests.compare(&policy.grants(&manifest.name), policy.base_dir())
}

/// The block `reach skills inspect` prints under the grants.
pub fn print(policy: &Policy, manifest: &Manifest) {
    let name = escape_for_terminal(&manifest.name);
    if let Some(why) = &manifest.requests_problem {
        println!("requests: cannot be read ({}); shown as none", escape_for_terminal(why));
    }
    let rows = rows(policy, manifest);
    if rows.is_empty() {
        println!("requests: none declared (the grants above are the table's choice alone)");
        return;
    }
    println!("requests against grants:");
    // Requested items are the skill's own text: escaped.
    let width = rows.iter().map(|r| r.capability.key().len() + 1 + r.item.len()).max();
    for row in &rows {
        let what = escape_for_terminal(&format!("{} {}", row.capability.key(), row.item));
        let answer = match &row.answer {
            Answer::Granted(by) => format!("granted by {}", escape_for_terminal(by)),
            Answer::Refused => "requested, not granted: what needs it will be refused".to_owned(),
            Answer::NotRequested => "granted, not requested: more than it says it needs".to_owned(),
        };
        println!("  {what:<w$}  {answer}", w = width.unwrap_or(0));
    }
    if rows.iter().any(|r| r.answer == Answer::Refused) {
        println!(
            "  (`reach policy suggest {name}` prints the table lines that grant the requests)"
        );
    }
}

/// `reach policy suggest NAME`.
pub async fn suggest(cli: &Cli, name: &str) -> anyhow::Result<ExitCode> {
    let ctx = context::load(cli).await?;
    let Some(manifest) = declared(ctx.registry(), name) else {
        anyhow::bail!(
            "no active skill or bundle named `{name}` in {} (`reach skills list` shows what is \
             there and why a skill is broken)",
            ctx.registry().dir().display()
        );
    };
    if let Some(why) = &manifest.requests_problem {
        anyhow::bail!("the requests of `{name}` cannot be read: {why}");
    }
    if manifest.requests.is_empty() {
        eprintln!(
            "`{name}` requests nothing, so there is nothing to suggest; grant what its tools need \
             by hand (`reach skills inspect {name}` shows them)"
        );
        return Ok(ExitCode::SUCCESS);
    }
    let refused =
        rows(ctx.policy(), manifest).iter().filter(|r| r.answer == Answer::Refused).count();
    // The lines go to stdout alone, so they can be redirected and read.
    eprintln!(
        "# What `{name}` requests, as table lines; {} (read them before pasting them into {})",
        if refused == 0 {
            "the table grants all of it already".to_owned()
        } else {
            format!("{refused} request(s) not granted yet")
        },
        ctx.policy().origin().display()
    );
    print!("{}", escape_keeping_lines(&manifest.requests.suggest(name)));
    Ok(ExitCode::SUCCESS)
}
