//! `reach skill publish FOLDER` and `reach skill add` of an Agent Skills
//! bundle: the same checks as a component, the folder installed whole or
//! not at all.

use super::add::{AddArgs, Ask, check_signature, print_signature, signature_json, table_check};
use crate::args::Cli;
use agent_reach::oci::provenance::Provenance;
use agent_reach::oci::{OciRef, Registry};
use agent_reach::policy::Policy;
use agent_reach::text::escape_keeping_lines;
use anyhow::Context as _;
use std::path::Path;
use std::process::ExitCode;

/// Push the bundle in `dir` to `target` (a tag).
pub async fn publish(
    dir: &Path,
    target: &OciRef,
    registry: &Registry,
) -> anyhow::Result<agent_reach::oci::Pushed> {
    let name = dir.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let annotations = [("org.opencontainers.image.title".to_owned(), name)].into_iter().collect();
    Ok(registry.push_bundle(target, dir, annotations).await?)
}

/// Pull, check and install the bundle at `asked` as `skills/NAME/`.
pub async fn add(
    cli: &Cli,
    policy: &Policy,
    args: &AddArgs<'_>,
    asked: OciRef,
    registry: Registry,
) -> anyhow::Result<ExitCode> {
    let pulled = registry.pull_bundle(&asked).await?;
    let name = pulled.config.name.clone();
    // Staged one level down, where no host scanning the skills folder looks
    // (it reads only the folders directly in it).
    std::fs::create_dir_all(&cli.skills)
        .with_context(|| format!("cannot create the skills folder {}", cli.skills.display()))?;
    let stage = tempfile::Builder::new()
        .prefix(".incoming-")
        .tempdir_in(&cli.skills)
        .with_context(|| format!("cannot write in {}", cli.skills.display()))?;
    let staged = stage.path().join(&name);
    std::fs::create_dir(&staged).with_context(|| format!("{name:?} is not a folder name"))?;
    pulled.write_to(&staged).context("cannot write the bundle's files")?;
    let loaded = agent_reach::bundle::load(&staged).map_err(|e| {
        anyhow::anyhow!("{}: not installed, the bundle does not load: {e}", pulled.reference)
    })?;
    anyhow::ensure!(
        loaded.sha256 == pulled.config.sha256,
        "{}: not installed, its files hash to {} but its config says {}",
        pulled.reference,
        loaded.sha256,
        pulled.config.sha256
    );
    let ask =
        Ask { name: &name, asked: &asked, reference: &pulled.reference, sha256: &loaded.sha256 };
    let signature = match table_check(policy, &ask, args.key, args.require_signature, true)? {
        None => None,
        Some(w) => {
            Some(check_signature(&registry, &pulled.reference, &pulled.manifest_digest, &w).await?)
        }
    };
    let dest = cli.skills.join(&name);
    let already = match agent_reach::bundle::load(&dest) {
        Ok(b) if b.sha256 == loaded.sha256 => true,
        _ if !dest.exists() => false,
        _ => anyhow::bail!(
            "{} already exists with other content; nothing was installed (remove it first if the \
             registry's bundle should replace it)",
            dest.display()
        ),
    };
    let signer = signature.as_ref().map(|s| s.signer.clone());
    let record = Provenance::now(
        &pulled.reference,
        &pulled.manifest_digest,
        &pulled.manifest,
        format!("sha256:{}", loaded.sha256),
        signature,
    );
    record
        .write_for(&dest)
        .with_context(|| format!("cannot write the origin record for {}", dest.display()))?;
    if !already {
        std::fs::rename(&staged, &dest)
            .with_context(|| format!("cannot install {}", dest.display()))?;
    }
    let mut lines = format!(
        "[skills.{name}]\norigin = \"{}\"\nsha256 = \"{}\"\n",
        pulled.reference.repository_url(),
        loaded.sha256
    );
    if let Some(s) = &signer {
        lines += &format!("signed_by = \"{s}\"\n");
    }
    if args.json {
        let value = serde_json::json!({
            "installed": dest,
            "already_installed": already,
            "skill": name,
            "kind": "bundle",
            "reference": pulled.reference.to_string(),
            "manifest_digest": pulled.manifest_digest,
            "sha256": loaded.sha256,
            "files": loaded.files.len(),
            "signature": signature_json(signer.as_deref()),
            "requests": loaded.requests,
            "table_lines": lines,
        });
        println!("{}", serde_json::to_string_pretty(&value)?);
    } else {
        println!(
            "{} bundle {name} ({} files) as {}",
            if already { "already installed" } else { "installed" },
            loaded.files.len(),
            dest.display()
        );
        println!("  from {}", pulled.reference);
        print_signature(signer.as_deref(), &name);
        println!("\nAdd to reach.toml (nothing is granted until you do):\n");
        print!("{}", escape_keeping_lines(&lines));
    }
    Ok(ExitCode::SUCCESS)
}
