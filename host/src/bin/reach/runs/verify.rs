//! `reach runs verify` and `reach runs pubkey`: are the audit logs as written?

use agent_reach::harness::audit::{
    AuditKey, PublicKey, Verdict, VerifyReport, verify_log, verify_runs,
};
use agent_reach::text::escape_for_terminal;
use anyhow::{Context, bail};
use serde_json::json;
use std::path::Path;
use std::process::ExitCode;

/// Check one run (`run`, a unique prefix) or every run in `dir`.
pub fn run(
    dir: &Path,
    run: Option<&str>,
    key: Option<&str>,
    json: bool,
) -> anyhow::Result<ExitCode> {
    let key = match key {
        Some(given) => parse_key(given)?,
        None => AuditKey::load(&dir.join(agent_reach::harness::audit::key::KEY_FILE))
            .with_context(|| {
                format!(
                    "{} has no signing key to check against; give the writer's public key with \
                     `--key`",
                    dir.display()
                )
            })?
            .public(),
    };
    let reports = match run {
        Some(run) => {
            let ids: Vec<String> = super::logs(dir)?
                .into_iter()
                .map(|log| log.id)
                .filter(|id| id.starts_with(run))
                .collect();
            let id = match ids.as_slice() {
                [one] => one,
                [] => bail!("no run {run:?} in {} (see `reach runs list`)", dir.display()),
                _ => bail!("{run:?} matches {} runs; give more of the id", ids.len()),
            };
            vec![verify_log(dir, id, &key)?]
        }
        None => verify_runs(dir, &key).with_context(|| format!("reading {}", dir.display()))?,
    };
    if json {
        println!("{}", json!({"runs_dir": dir, "key": key.to_hex(), "runs": reports}));
    } else {
        for report in &reports {
            print_report(report);
        }
        if reports.len() > 1 {
            let count = |v: Verdict| reports.iter().filter(|r| r.verdict == v).count();
            println!(
                "{} logs: {} intact, {} tampered, {} without a signed head, {} unchained",
                reports.len(),
                count(Verdict::Intact),
                count(Verdict::Tampered),
                count(Verdict::Unsealed),
                count(Verdict::Unchained)
            );
        }
    }
    let any = |v: Verdict| reports.iter().any(|r| r.verdict == v);
    Ok(if any(Verdict::Tampered) {
        ExitCode::from(1)
    } else if any(Verdict::Unsealed) {
        ExitCode::from(3)
    } else {
        ExitCode::SUCCESS
    })
}

fn print_report(report: &VerifyReport) {
    let id = escape_for_terminal(&report.run_id);
    match report.verdict {
        Verdict::Intact => println!(
            "intact     {id}  {} records, signed by {}",
            report.records,
            report.key.as_deref().unwrap_or("?")
        ),
        Verdict::Unchained => println!("unchained  {id}  written before audit logs were chained"),
        Verdict::Tampered | Verdict::Unsealed => {
            let word = if report.verdict == Verdict::Tampered { "TAMPERED" } else { "unsealed" };
            let message = report.problem.as_ref().map_or("", |p| p.message.as_str());
            println!("{word:<10} {id}  {}", escape_for_terminal(message));
        }
    }
    for note in &report.notes {
        println!("           {id}  note: {}", escape_for_terminal(note));
    }
}

/// A key given as hex or as a file holding it.
fn parse_key(given: &str) -> anyhow::Result<PublicKey> {
    if let Some(key) = PublicKey::from_hex(given) {
        return Ok(key);
    }
    let text = std::fs::read_to_string(given).with_context(|| {
        format!("--key {given:?} is neither 64 hex characters nor a file that can be read")
    })?;
    PublicKey::from_hex(text.trim()).with_context(|| {
        format!(
            "{given} does not hold a public key (64 hex characters, as `reach runs pubkey` prints)"
        )
    })
}

/// Print the runs folder's public key, making the key pair on first use.
pub fn pubkey(dir: &Path) -> anyhow::Result<ExitCode> {
    let key = AuditKey::load_or_create(dir)
        .with_context(|| format!("the signing key in {}", dir.display()))?;
    println!("{}", key.public_hex());
    Ok(ExitCode::SUCCESS)
}
