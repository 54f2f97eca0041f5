//! `reach skill add | publish | sign | keygen | update`: skills through OCI
//! registries. Adding installs a file and prints table lines; it never
//! edits the table, so nothing is granted until the operator writes it.

use crate::args::Cli;
use agent_reach::oci::signature::{self, PublicKey, SigningKey};
use agent_reach::oci::{OciRef, Registry};
use agent_reach::runtime::Runtime;
use anyhow::Context as _;
use std::path::Path;
use std::process::ExitCode;

pub mod add;
mod bundle;
mod keys;
mod update;

pub use add::add;
pub use keys::keygen;
pub use update::update;

/// A runtime for describing components, with the CLI's cache settings.
pub(crate) fn runtime(cli: &Cli) -> anyhow::Result<Runtime> {
    Ok(Runtime::new(crate::context::runtime_config(cli))?)
}

/// Parse a reference and connect to its registry.
fn connect(reference: &str) -> anyhow::Result<(OciRef, Registry)> {
    let r = OciRef::parse(reference)?;
    let registry = Registry::connect_with_lookup(&r)?;
    Ok((r, registry))
}

/// `reach skill publish FILE oci://…[:TAG] [--sign KEY]`.
pub async fn publish(
    cli: &Cli,
    wasm: &Path,
    reference: &str,
    sign: Option<&Path>,
    json: bool,
) -> anyhow::Result<ExitCode> {
    let key = sign.map(|k| SigningKey::read(k, &signature::password_from_env())).transpose()?;
    if wasm.is_dir() {
        return publish_bundle(wasm, reference, key.as_ref(), json).await;
    }
    let bytes = std::fs::read(wasm).with_context(|| format!("cannot read {}", wasm.display()))?;
    let runtime = runtime(cli)?;
    let entry = agent_reach::registry::describe_file(&runtime, wasm).await;
    let manifest = entry.manifest.as_ref().ok_or_else(|| {
        anyhow::anyhow!(
            "{} is not a skill this host loads, so it is not published: {}",
            wasm.display(),
            entry.reason.as_deref().unwrap_or("it does not describe itself")
        )
    })?;
    let (mut target, registry) = connect(reference)?;
    if target.tag.is_none() && target.digest.is_none() {
        target = target.at_tag(&manifest.version.to_string());
    }
    let annotations = [
        ("org.opencontainers.image.title", manifest.name.clone()),
        ("org.opencontainers.image.version", manifest.version.to_string()),
        ("org.opencontainers.image.description", manifest.description.clone()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v))
    .collect();
    let pushed = registry.push(&target, &bytes, annotations).await?;
    tracing::info!(reference = %pushed.reference, "published");
    let signed = sign_pushed(&registry, &pushed, key.as_ref()).await?;
    let fields =
        serde_json::json!({"skill": manifest.name, "version": manifest.version.to_string()});
    let what = format!("{} {}", manifest.name, manifest.version);
    print_published(&pushed, signed.as_ref(), &what, fields, json);
    Ok(ExitCode::SUCCESS)
}

/// `reach skill publish FOLDER oci://…:TAG`: a bundle (the tag is required:
/// a bundle has no version of its own to default to).
async fn publish_bundle(
    dir: &Path,
    reference: &str,
    key: Option<&SigningKey>,
    json: bool,
) -> anyhow::Result<ExitCode> {
    let (target, registry) = connect(reference)?;
    anyhow::ensure!(
        target.tag.is_some() && target.digest.is_none(),
        "publish a bundle to a tag: {reference}:TAG (a bundle has no version to default to)"
    );
    let pushed = bundle::publish(dir, &target, &registry).await?;
    let signed = sign_pushed(&registry, &pushed, key).await?;
    let what = format!("bundle {}", dir.display());
    print_published(&pushed, signed.as_ref(), &what, serde_json::json!({"kind": "bundle"}), json);
    Ok(ExitCode::SUCCESS)
}

/// What `publish` prints: `what` is `skill NAME VERSION` or `bundle FOLDER`.
fn print_published(
    pushed: &agent_reach::oci::Pushed,
    signed: Option<&(OciRef, String)>,
    what: &str,
    mut fields: serde_json::Value,
    json: bool,
) {
    if json {
        fields["reference"] = pushed.reference.to_string().into();
        fields["manifest_digest"] = pushed.manifest_digest.clone().into();
        fields["sha256"] = pushed.layer_digest.trim_start_matches("sha256:").into();
        fields["signature"] = signed
            .map(|(tag, signer)| serde_json::json!({"tag": tag.to_string(), "signer": signer}))
            .unwrap_or_default();
        println!("{fields}");
        return;
    }
    println!("published {what} as {}", pushed.reference);
    println!("  sha256 {}", pushed.layer_digest.trim_start_matches("sha256:"));
    if let Some((tag, signer)) = signed {
        println!("  signed by {signer} ({})", tag.tag.as_deref().unwrap_or(""));
    }
}

/// Sign what was pushed, when a key is given.
async fn sign_pushed(
    registry: &Registry,
    pushed: &agent_reach::oci::Pushed,
    key: Option<&SigningKey>,
) -> anyhow::Result<Option<(OciRef, String)>> {
    Ok(match key {
        Some(key) => Some((
            registry.sign(&pushed.reference, key).await?,
            key.public().fingerprint().to_owned(),
        )),
        None => None,
    })
}

/// `reach skill sign oci://… --key KEY`: sign what is already pushed.
pub async fn sign(reference: &str, key: &Path, json: bool) -> anyhow::Result<ExitCode> {
    let key = SigningKey::read(key, &signature::password_from_env())?;
    let (r, registry) = connect(reference)?;
    let digest = registry.resolve(&r).await?;
    let at = r.at_digest(&digest);
    let tag = registry.sign(&at, &key).await?;
    if json {
        println!(
            "{}",
            serde_json::json!({
                "reference": at.to_string(),
                "signature_tag": tag.to_string(),
                "signer": key.public().fingerprint(),
            })
        );
    } else {
        println!(
            "signed {at}\n  by {} ({})",
            key.public().fingerprint(),
            tag.tag.as_deref().unwrap_or("")
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// A `signed_by` value, read for the command line: a key file (when it
/// exists) or a fingerprint.
pub(crate) enum Wanted {
    Key(PublicKey),
    Fingerprint(String),
}

impl Wanted {
    pub(crate) fn fingerprint(&self) -> &str {
        match self {
            Wanted::Key(k) => k.fingerprint(),
            Wanted::Fingerprint(f) => f,
        }
    }
}
