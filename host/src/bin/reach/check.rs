//! `reach policy check`: validate the table against the installed skills.

use crate::args::Cli;
use crate::context;
use agent_reach::policy::Answer;
use agent_reach::registry::Status;
use serde_json::json;
use std::process::ExitCode;

pub async fn run(cli: &Cli, as_json: bool) -> anyhow::Result<ExitCode> {
    // A syntax or validation error in the table, an override naming a tool the
    // skill lacks, or a grant to write the host's own files is reported by
    // `load` itself (exit 2), as for every other command.
    let ctx = context::load(cli).await?;
    let origin = ctx.policy().origin().display().to_string();
    // Every error stops `load` above; the field stays in the JSON output,
    // which only ever gains fields.
    let errors: Vec<String> = Vec::new();
    let mut warnings: Vec<String> = Vec::new();

    for name in ctx.policy().listed_skills() {
        let line = ctx.policy().skill_line(name).map(|l| format!(":{l}")).unwrap_or_default();
        let bundle = ctx.registry().bundles().iter().find(|b| b.name() == name);
        if ctx.registry().active(name).is_none() && bundle.and_then(|b| b.active()).is_none() {
            // A file that claims the name but was refused (wrong file name,
            // another pin) is the likelier story than "not installed".
            let refused: Vec<String> = ctx
                .registry()
                .entries()
                .iter()
                .filter(|e| {
                    e.status == Status::Broken
                        && e.manifest.as_ref().is_some_and(|m| m.name == name)
                })
                .map(|e| e.path.display().to_string())
                .chain(bundle.map(|b| b.path.display().to_string()))
                .collect();
            let why = if refused.is_empty() {
                format!("names a skill that is not installed in {}", ctx.registry().dir().display())
            } else {
                format!(
                    "names a skill whose files were refused ({}; see below)",
                    refused.join(", ")
                )
            };
            warnings.push(format!("{origin}{line}: [skills.{name}] {why}"));
            continue;
        }
        let grants = ctx.policy().grants(name);
        for folder in grants.read.iter().chain(&grants.write) {
            if !folder.exists {
                warnings.push(format!(
                    "{origin}{line}: skills.{name}: folder {:?} ({}) does not exist; the skill \
                     will run without it",
                    folder.declared,
                    folder.path.display()
                ));
            }
        }
    }
    // Requests against grants, for every active skill that declares any.
    let mut requests = serde_json::Map::new();
    let names: Vec<String> = ctx
        .registry()
        .active_skills()
        .iter()
        .map(|s| s.manifest.name.clone())
        .chain(ctx.registry().active_bundles().map(|b| b.name()))
        .collect();
    for name in names {
        let Some(manifest) = crate::skills::requests::declared(ctx.registry(), &name) else {
            continue;
        };
        if let Some(why) = &manifest.requests_problem {
            warnings.push(format!("skill {name}: its requests cannot be read: {why}"));
        }
        let rows = crate::skills::requests::rows(ctx.policy(), manifest);
        for row in &rows {
            let what = format!("{} {}", row.capability.key(), row.item);
            match row.answer {
                Answer::Refused => warnings.push(format!(
                    "{origin}: skill {name} requests {what}, which [skills.{name}] does not grant: \
                     what needs it will be refused (`reach policy suggest {name}`)"
                )),
                Answer::NotRequested => warnings.push(format!(
                    "{origin}: [skills.{name}] grants {what}, which the skill does not request"
                )),
                Answer::Granted(_) => {}
            }
        }
        if !rows.is_empty() {
            requests.insert(name, serde_json::to_value(&rows)?);
        }
    }
    for w in ctx.policy().auto_writes_where_confirm_asks() {
        warnings.push(format!("{origin}: {w}"));
    }
    for e in ctx.registry().entries() {
        if e.status == Status::Broken {
            warnings.push(format!(
                "{}: broken skill: {}",
                e.path.display(),
                e.reason.as_deref().unwrap_or("")
            ));
        }
    }
    for b in ctx.registry().bundles() {
        if b.status == Status::Broken {
            let reason = b.reason.as_deref().unwrap_or("");
            warnings.push(format!("{}: broken skill bundle: {reason}", b.path.display()));
        }
    }

    if as_json {
        println!(
            "{}",
            serde_json::to_string_pretty(&json!({
                "policy": origin,
                "ok": errors.is_empty(),
                "errors": errors,
                "warnings": warnings,
                "requests": requests,
            }))?
        );
    } else {
        // Warnings quote skills' own error text and file names: escaped.
        for e in &errors {
            println!("error: {}", agent_reach::text::escape_for_terminal(e));
        }
        for w in &warnings {
            println!("warning: {}", agent_reach::text::escape_for_terminal(w));
        }
        let listed = ctx.policy().listed_skills().len();
        let verdict = if errors.is_empty() { "OK" } else { "FAILED" };
        println!(
            "{origin}: {verdict} ({listed} skills listed, {} errors, {} warnings)",
            errors.len(),
            warnings.len()
        );
    }
    Ok(if errors.is_empty() { ExitCode::SUCCESS } else { ExitCode::from(2) })
}
