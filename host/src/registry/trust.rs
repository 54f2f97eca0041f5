//! The table's `origin` and `signed_by`, checked every time a skill loads.
//!
//! A file `reach skill add` installed has its origin record beside it
//! ([`crate::oci::Provenance`]). When the table names an origin or a signer
//! for the skill, the record must be there and hold: the file is the layer
//! of the manifest the record keeps, the manifest came from that
//! repository, and its signature verifies with the table's key — offline,
//! against the table as it is now, so revoking a key in the table refuses
//! the skill at the next load. A file that fails is broken and never
//! supersedes another. Without the `oci` feature nothing can be checked,
//! and a skill the table asks this of is refused (fail closed).

use super::{SkillEntry, Status};
use crate::policy::Policy;
use serde::Serialize;

/// Where an installed skill came from.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Origin {
    /// `oci://REGISTRY/REPO:TAG@sha256:…` it was installed from.
    pub reference: String,
    /// The signer whose signature verified at this load (the table asked
    /// for one); `None` when the table names no signer.
    pub verified_signer: Option<String>,
    /// The signer whose signature verified when it was installed.
    pub signed_at_install: Option<String>,
}

/// Check each loaded file against its record and the table's trust lines.
pub(super) fn apply(entries: &mut [SkillEntry], policy: &Policy) {
    for entry in entries.iter_mut().filter(|e| e.status != Status::Broken) {
        let (Some(manifest), Some(sha256)) = (&entry.manifest, &entry.sha256) else { continue };
        match check(entry, &manifest.name.clone(), &sha256.clone(), policy) {
            Ok(origin) => entry.origin = origin,
            Err(reason) => {
                tracing::warn!(skill = %manifest.name, path = %entry.path.display(), %reason, "skill refused by its origin or signature");
                entry.status = Status::Broken;
                entry.reason = Some(reason);
            }
        }
    }
}

/// Whether the table's trust lines refuse `entry` (kept through a reload
/// only when they do not).
pub(super) fn refuses(entry: &SkillEntry, name: &str, sha256: &str, policy: &Policy) -> bool {
    check(entry, name, sha256, policy).is_err()
}

#[cfg(feature = "oci")]
fn check(
    entry: &SkillEntry,
    name: &str,
    sha256: &str,
    policy: &Policy,
) -> Result<Option<Origin>, String> {
    check_path(&entry.path, name, policy, |record, expect| record.check(sha256, expect))
}

/// The same for a bundle folder (its record is `NAME.origin.json` beside it).
#[cfg(feature = "oci")]
pub(super) fn check_bundle(
    dir: &std::path::Path,
    name: &str,
    bundle: &crate::bundle::Bundle,
    policy: &Policy,
) -> Result<Option<Origin>, String> {
    check_path(dir, name, policy, |record, expect| {
        record.check_bundle(&bundle.files, &bundle.sha256, expect)
    })
}

#[cfg(not(feature = "oci"))]
pub(super) fn check_bundle(
    _: &std::path::Path,
    name: &str,
    _: &crate::bundle::Bundle,
    policy: &Policy,
) -> Result<Option<Origin>, String> {
    fail_closed(name, policy)
}

/// Read the record beside `path` and check it with `against` under what
/// the table asks of `name`.
#[cfg(feature = "oci")]
fn check_path(
    path: &std::path::Path,
    name: &str,
    policy: &Policy,
    against: impl Fn(
        &crate::oci::Provenance,
        &crate::oci::provenance::Expect<'_>,
    ) -> Result<crate::oci::provenance::Checked, String>,
) -> Result<Option<Origin>, String> {
    use crate::oci::provenance::{Expect, Provenance, Signer};
    use crate::policy::SignedBy;
    let record = Provenance::read_for(path);
    let trust = policy.trust(name);
    let Some(trust) = trust else {
        // Nothing asked: show what the record says, checking only that it
        // is this file's (a stale record beside a replaced file shows nothing).
        return Ok(record.ok().flatten().and_then(|r| {
            against(&r, &Expect::default()).ok().map(|c| Origin {
                reference: c.origin,
                verified_signer: None,
                signed_at_install: r.signature.map(|s| s.signer),
            })
        }));
    };
    let record = record?.ok_or_else(|| {
        format!(
            "the table names its {} for [skills.{name}], but {} has no origin record \
             (install it with `reach skill add oci://…`, which checks and records both)",
            if trust.signed_by.is_some() { "signer" } else { "origin" },
            path.display()
        )
    })?;
    let signer = match &trust.signed_by {
        None => None,
        Some((SignedBy::Key { pem, .. }, _)) => Some(Signer::Key(pem)),
        Some((SignedBy::Fingerprint(f), _)) => Some(Signer::Fingerprint(f)),
        Some((keyless @ SignedBy::Keyless { .. }, line)) => {
            return Err(format!(
                "signed_by (line {line}) names a keyless identity, {}, and this host verifies \
                 keyed signatures only (keyless ones need Sigstore's Fulcio and Rekor roots); \
                 name the publisher's public key instead",
                keyless.describe()
            ));
        }
    };
    let expect = Expect { origin: trust.origin.as_ref().map(|(r, _)| r), signer };
    let checked = against(&record, &expect).map_err(|why| format!("{}: {why}", path.display()))?;
    Ok(Some(Origin {
        reference: checked.origin,
        verified_signer: checked.verified_signer,
        signed_at_install: record.signature.map(|s| s.signer),
    }))
}

#[cfg(not(feature = "oci"))]
fn check(_: &SkillEntry, name: &str, _: &str, policy: &Policy) -> Result<Option<Origin>, String> {
    fail_closed(name, policy)
}

#[cfg(not(feature = "oci"))]
fn fail_closed(name: &str, policy: &Policy) -> Result<Option<Origin>, String> {
    match policy.trust(name) {
        None => Ok(None),
        Some(_) => Err(format!(
            "the table names an origin or signer for [skills.{name}], and this build of \
             agent-reach cannot check them (built without the `oci` feature)"
        )),
    }
}
