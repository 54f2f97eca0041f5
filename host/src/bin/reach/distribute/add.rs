//! `reach skill add oci://…`: pull, verify, check it loads, install, and
//! print the table lines — granting nothing.

use super::{Wanted, connect, runtime};
use crate::args::Cli;
use agent_reach::oci::provenance::{Provenance, SignatureRecord};
use agent_reach::oci::signature::{self, PublicKey};
use agent_reach::oci::{OciError, OciRef, Pulled, Registry};
use agent_reach::policy::{Capability, Policy, SignedBy};
use agent_reach::registry::Manifest;
use agent_reach::text::{escape_for_terminal, escape_keeping_lines};
use anyhow::Context as _;
use sha2::Digest as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// What `add` was asked.
pub struct AddArgs<'a> {
    pub reference: &'a str,
    pub require_signature: bool,
    pub key: Option<&'a Path>,
    pub json: bool,
}

/// What was installed, for the printout and `update`.
pub(crate) struct Installed {
    pub path: PathBuf,
    pub manifest: Manifest,
    pub pulled: Pulled,
    pub signer: Option<String>,
    pub already: bool,
}

pub async fn add(cli: &Cli, args: &AddArgs<'_>) -> anyhow::Result<ExitCode> {
    let policy = crate::context::load_policy(cli)?;
    let (asked, registry) = connect(args.reference)?;
    if registry.is_bundle(&asked).await? {
        return super::bundle::add(cli, &policy, args, asked, registry).await;
    }
    let staged = stage(cli, args.reference).await?;
    let installed = install(cli, &policy, staged, args.require_signature, args.key, true).await?;
    print(&installed, &policy, args.json)?;
    Ok(ExitCode::SUCCESS)
}

/// A component pulled and described, not yet installed.
pub(crate) struct Staged {
    pub asked: OciRef,
    pub registry: Registry,
    pub pulled: Pulled,
    pub manifest: Manifest,
    part: tempfile::NamedTempFile,
}

/// Pull `reference` and describe it (digests checked, nothing installed).
pub(crate) async fn stage(cli: &Cli, reference: &str) -> anyhow::Result<Staged> {
    let (asked, registry) = connect(reference)?;
    let pulled = registry.pull(&asked).await?;

    // Describe it in a sandbox with nothing granted, from a file no host
    // scanning the folder would pick up (not `.wasm`).
    std::fs::create_dir_all(&cli.skills)
        .with_context(|| format!("cannot create the skills folder {}", cli.skills.display()))?;
    let mut part = tempfile::Builder::new()
        .prefix(".incoming-")
        .suffix(".part")
        .tempfile_in(&cli.skills)
        .with_context(|| format!("cannot write in {}", cli.skills.display()))?;
    std::io::Write::write_all(&mut part, &pulled.component)?;
    part.as_file().sync_all()?;
    let entry = agent_reach::registry::describe_file(&runtime(cli)?, part.path()).await;
    let manifest = entry.manifest.clone().ok_or_else(|| {
        anyhow::anyhow!(
            "{}: not installed, it does not load as a skill: {}",
            pulled.reference,
            entry.reason.as_deref().unwrap_or("it does not describe itself")
        )
    })?;
    Ok(Staged { asked, registry, pulled, manifest, part })
}

/// Check a staged component against the table and the signature asked
/// for, then install it; nothing is written unless every check passed.
/// `respect_pin` false is for `update`, which installs the new version
/// beside the pinned one and prints the pin line to change.
pub(crate) async fn install(
    cli: &Cli,
    policy: &Policy,
    staged: Staged,
    require_signature: bool,
    key: Option<&Path>,
    respect_pin: bool,
) -> anyhow::Result<Installed> {
    let Staged { asked, registry, pulled, manifest, part } = staged;
    let sha256 = pulled.layer_digest.trim_start_matches("sha256:").to_owned();
    let name = manifest.name.clone();
    let ask = Ask { name: &name, asked: &asked, reference: &pulled.reference, sha256: &sha256 };
    let wanted = table_check(policy, &ask, key, require_signature, respect_pin)?;
    let signature = match wanted {
        None => None,
        Some(w) => {
            Some(check_signature(&registry, &pulled.reference, &pulled.manifest_digest, &w).await?)
        }
    };

    let path = cli.skills.join(format!("{name}-{}.wasm", manifest.version));
    let already = match std::fs::read(&path) {
        Ok(bytes) if format!("{:x}", sha2::Sha256::digest(&bytes)) == sha256 => true,
        Ok(_) => anyhow::bail!(
            "{} already exists with other content; nothing was installed (remove it first if the \
             registry's {} {} should replace it)",
            path.display(),
            name,
            manifest.version
        ),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => false,
        Err(e) => return Err(e).with_context(|| format!("cannot read {}", path.display())),
    };
    let signer = signature.as_ref().map(|s| s.signer.clone());
    let record = Provenance::now(
        &pulled.reference,
        &pulled.manifest_digest,
        &pulled.manifest,
        pulled.layer_digest.clone(),
        signature,
    );
    // The record first: a host reloading on the new file finds it there.
    record
        .write_for(&path)
        .with_context(|| format!("cannot write the origin record for {}", path.display()))?;
    if !already {
        part.persist(&path)
            .map_err(|e| e.error)
            .with_context(|| format!("cannot install {}", path.display()))?;
    }
    tracing::info!(skill = %name, path = %path.display(), reference = %pulled.reference, "skill installed");
    Ok(Installed { path, manifest, pulled, signer, already })
}

/// What is being installed, for [`table_check`].
pub(crate) struct Ask<'a> {
    pub name: &'a str,
    /// As given (its repository is compared with the table's origin).
    pub asked: &'a OciRef,
    /// At its digest.
    pub reference: &'a OciRef,
    /// The file's (or bundle's) sha256, hex.
    pub sha256: &'a str,
}

/// The table's word on a skill before anything is written: its pin (when
/// `respect_pin`), its origin, and which signer must have signed it (the
/// table's `signed_by`, or `--key`; both must agree). `None`: no signature
/// is asked for.
pub(crate) fn table_check(
    policy: &Policy,
    ask: &Ask<'_>,
    key: Option<&Path>,
    require_signature: bool,
    respect_pin: bool,
) -> anyhow::Result<Option<Wanted>> {
    let name = ask.name;
    let given_key = key.map(|k| PublicKey::read(k).map(Wanted::Key)).transpose()?;
    if require_signature
        && given_key.is_none()
        && policy.trust(name).is_none_or(|t| t.signed_by.is_none())
    {
        // Without a key there is nobody to check a signature against: any
        // signature would pass, which is what this flag is there to prevent.
        anyhow::bail!(
            "--require-signature needs the publisher's public key: pass --key FILE.pub (or name \
             the signer in the table with [skills.{name}] signed_by)"
        );
    }
    if let Some(pin) = policy.pin(name).filter(|_| respect_pin)
        && pin.sha256 != ask.sha256
    {
        return Err(OciError::PinMismatch {
            reference: ask.reference.to_string(),
            skill: name.to_owned(),
            expected: pin.sha256.clone(),
            actual: ask.sha256.to_owned(),
            line: pin.line,
        }
        .into());
    }
    let trust = policy.trust(name);
    if let Some((origin, line)) = trust.and_then(|t| t.origin.as_ref())
        && (origin.registry != ask.asked.registry || origin.repository != ask.asked.repository)
    {
        anyhow::bail!(
            "{}: not installed, the table says [skills.{name}] comes from {} (origin, line {line})",
            ask.reference,
            origin.repository_url()
        );
    }
    let table_signer = match trust.and_then(|t| t.signed_by.as_ref()) {
        None => None,
        Some((SignedBy::Key { pem, path, .. }, _)) => Some(Wanted::Key(
            PublicKey::from_pem(pem).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?,
        )),
        Some((SignedBy::Fingerprint(f), _)) => Some(Wanted::Fingerprint(f.clone())),
        Some((keyless, line)) => anyhow::bail!(
            "[skills.{name}] signed_by (line {line}) names a keyless identity, {}; this host verifies \
             keyed signatures only, so nothing was installed — name the publisher's public key",
            keyless.describe()
        ),
    };
    if let (Some(t), Some(g)) = (&table_signer, &given_key)
        && t.fingerprint() != g.fingerprint()
    {
        anyhow::bail!(
            "--key is {}, but the table's [skills.{name}] signed_by is {}; nothing was installed",
            g.fingerprint(),
            t.fingerprint()
        );
    }
    Ok(table_signer.or(given_key))
}

/// A signature by `wanted` over `manifest_digest`, as found beside `reference`.
pub(crate) async fn check_signature(
    registry: &Registry,
    reference: &OciRef,
    manifest_digest: &str,
    wanted: &Wanted,
) -> anyhow::Result<SignatureRecord> {
    let found = registry.signatures(reference).await?;
    let refused = |reason: String| OciError::Signature {
        reference: reference.to_string(),
        reason: format!("{reason}; nothing was installed"),
    };
    let (hit, key) = match wanted {
        Wanted::Key(key) => {
            (signature::verify(manifest_digest, &found, key).map_err(refused)?, key.clone())
        }
        Wanted::Fingerprint(f) => {
            signature::verify_fingerprint(manifest_digest, &found, f).map_err(refused)?
        }
    };
    Ok(SignatureRecord {
        signer: key.fingerprint().to_owned(),
        public_key: key.pem().to_owned(),
        payload: hit.payload,
        signature: hit.signature,
    })
}

/// The lines to paste into the table: the pin, the origin, the signer, and
/// the skill's requests as comments (granted by nothing here).
pub(crate) fn table_lines(i: &Installed) -> String {
    let m = &i.manifest;
    let mut out = format!("[skills.{}]\n", m.name);
    out += &format!("origin = \"{}\"\n", i.pulled.reference.repository_url());
    out += &format!("sha256 = \"{}\"\n", i.pulled.layer_digest.trim_start_matches("sha256:"));
    if let Some(s) = &i.signer {
        out += &format!("signed_by = \"{s}\"\n");
    }
    let requested: Vec<String> = Capability::ALL
        .into_iter()
        .filter_map(|c| {
            let items = m.requests.list(c);
            (!items.is_empty()).then(|| format!("#   {} {}", c.key(), items.join(", ")))
        })
        .collect();
    if requested.is_empty() {
        out += "# it requests nothing\n";
    } else {
        out += &format!(
            "# it requests (granted only by lines you add; `reach policy suggest {}` prints them):\n",
            m.name
        );
        out += &(requested.join("\n") + "\n");
    }
    out
}

/// `--json`'s `signature`: who signed, when a signature was checked.
pub(crate) fn signature_json(signer: Option<&str>) -> serde_json::Value {
    signer.map_or(serde_json::Value::Null, |s| serde_json::json!({"verified": true, "signer": s}))
}

/// The printout's signature line.
pub(crate) fn print_signature(signer: Option<&str>, name: &str) {
    match signer {
        Some(s) => println!("  signature verified: signed by {s}"),
        None => println!(
            "  signature not checked (name the signer with --key FILE.pub or [skills.{name}] signed_by)"
        ),
    }
}

fn print(i: &Installed, policy: &Policy, json: bool) -> anyhow::Result<()> {
    let m = &i.manifest;
    if json {
        let value = serde_json::json!({
            "installed": i.path,
            "already_installed": i.already,
            "skill": m.name,
            "version": m.version.to_string(),
            "reference": i.pulled.reference.to_string(),
            "manifest_digest": i.pulled.manifest_digest,
            "sha256": i.pulled.layer_digest.trim_start_matches("sha256:"),
            "signature": signature_json(i.signer.as_deref()),
            "tools": m.tools.iter().map(|t| t.name.clone()).collect::<Vec<_>>(),
            "requests": m.requests,
            "table_lines": table_lines(i),
        });
        println!("{}", serde_json::to_string_pretty(&value)?);
        return Ok(());
    }
    let verb = if i.already { "already installed" } else { "installed" };
    println!("{verb} {} {} as {}", m.name, m.version, i.path.display());
    println!("  from {}", i.pulled.reference);
    print_signature(i.signer.as_deref(), &m.name);
    println!(
        "  tools: {}",
        escape_for_terminal(
            &m.tools.iter().map(|t| t.name.as_str()).collect::<Vec<_>>().join(", ")
        )
    );
    let listed = policy.listed_skills().contains(&m.name.as_str());
    println!(
        "\n{} reach.toml (nothing is granted until you do):\n",
        if listed {
            "Put these lines in its [skills.".to_owned() + &m.name + "] table in"
        } else {
            "Add to".to_owned()
        }
    );
    print!("{}", escape_keeping_lines(&table_lines(i)));
    Ok(())
}
