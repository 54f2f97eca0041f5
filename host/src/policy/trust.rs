//! `[skills.NAME] origin` and `signed_by`: where a skill must come from and
//! who must have signed it.
//!
//! `signed_by` is a public key file (relative to the table), its
//! fingerprint (`sha256:` and 64 hex characters, as `reach skill keygen`
//! prints), or a keyless identity `{ issuer = "…", subject = "…" }` — both
//! exact: an identity that leaves either out, or a pattern in either, would
//! accept anyone with an account at some issuer, so it is a table error.

use super::error::Source;
use crate::oci::OciRef;
use base64::Engine;
use sha2::{Digest, Sha256};
use std::ops::Range;
use std::path::{Path, PathBuf};
use toml::Spanned;

/// What the table asks of a skill's origin and signature.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SkillTrust {
    /// `origin = "oci://REGISTRY/REPO"`, with its line.
    pub origin: Option<(OciRef, usize)>,
    /// `signed_by`, with its line.
    pub signed_by: Option<(SignedBy, usize)>,
}

/// A signer the table trusts.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum SignedBy {
    /// A public key file: its path (absolute), PEM, and fingerprint.
    Key {
        /// The file.
        path: PathBuf,
        /// Its PEM text.
        pem: String,
        /// `sha256:` of its DER form.
        fingerprint: String,
    },
    /// A key named by fingerprint only (the key travels with the signature).
    Fingerprint(String),
    /// A keyless (Fulcio certificate) identity: both exact.
    Keyless {
        /// The OIDC issuer, e.g. `https://token.actions.githubusercontent.com`.
        issuer: String,
        /// The certificate's subject (an e-mail or workflow URL).
        subject: String,
    },
}

impl SignedBy {
    /// How it reads in messages: the fingerprint (and file), or the identity.
    pub fn describe(&self) -> String {
        match self {
            SignedBy::Key { path, fingerprint, .. } => {
                format!("{fingerprint} ({})", path.display())
            }
            SignedBy::Fingerprint(f) => f.clone(),
            SignedBy::Keyless { issuer, subject } => format!("{subject} (issuer {issuer})"),
        }
    }
}

/// `sha256:HEX` of a PEM `PUBLIC KEY`'s DER, or why it is not one.
pub fn key_fingerprint(pem: &str) -> Result<String, String> {
    let text = pem.trim();
    let body = text
        .strip_prefix("-----BEGIN PUBLIC KEY-----")
        .and_then(|t| t.strip_suffix("-----END PUBLIC KEY-----"))
        .ok_or("is not a PEM PUBLIC KEY (what `reach skill keygen` and `cosign generate-key-pair` write to the .pub file)")?;
    let b64: String = body.split_whitespace().collect();
    let der = base64::engine::general_purpose::STANDARD
        .decode(b64)
        .map_err(|_| "is not a PEM PUBLIC KEY (its body is not base64)")?;
    Ok(format!("sha256:{:x}", Sha256::digest(der)))
}

/// Check `origin = "…"`.
pub(super) fn resolve_origin(
    src: &Source<'_>,
    prefix: &str,
    origin: &Spanned<String>,
) -> Result<(OciRef, usize), super::PolicyError> {
    let r = OciRef::parse(origin.get_ref())
        .map_err(|e| src.invalid(&origin.span(), format!("{prefix}.origin"), e.to_string()))?;
    if r.digest.is_some() {
        return Err(src.invalid(
            &origin.span(),
            format!("{prefix}.origin"),
            "an origin is a repository (oci://REGISTRY/REPO); pin the file with sha256 instead of a \
             digest here",
        ));
    }
    Ok((r, src.line(&origin.span())))
}

/// Check `signed_by`: a string (key file or fingerprint) or a keyless identity.
pub(super) fn resolve_signed_by(
    src: &Source<'_>,
    base_dir: &Path,
    prefix: &str,
    value: &Spanned<toml::Value>,
) -> Result<(SignedBy, usize), super::PolicyError> {
    let span: Range<usize> = value.span();
    let key = format!("{prefix}.signed_by");
    let invalid = |why: String| src.invalid(&span, key.clone(), why);
    let line = src.line(&span);
    match value.get_ref() {
        toml::Value::String(text) if text.starts_with("sha256:") => {
            let hex = &text[7..];
            if hex.len() != 64 || !hex.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)) {
                return Err(invalid(format!(
                    "{text:?} is not a key fingerprint: sha256: and 64 lowercase hex characters, as \
                     `reach skill keygen` prints"
                )));
            }
            Ok((SignedBy::Fingerprint(text.clone()), line))
        }
        toml::Value::String(text) => {
            if text.is_empty() || text.contains('\0') {
                return Err(invalid("name a public key file or a fingerprint (sha256:…)".into()));
            }
            let path = super::folders::lexical_normalize(&base_dir.join(text));
            let pem = std::fs::read_to_string(&path).map_err(|e| {
                invalid(format!(
                    "cannot read the public key {} ({e}); write the .pub file's path relative to \
                     this table, or the key's fingerprint",
                    path.display()
                ))
            })?;
            let fingerprint = key_fingerprint(&pem).map_err(|why| invalid(format!("{} {why}", path.display())))?;
            Ok((SignedBy::Key { path, pem, fingerprint }, line))
        }
        toml::Value::Table(table) => {
            let get = |k: &str| table.get(k).and_then(|v| v.as_str()).map(str::trim).unwrap_or("");
            if let Some(other) = table.keys().find(|k| *k != "issuer" && *k != "subject") {
                return Err(invalid(format!(
                    "unknown key {other:?}: a keyless identity has exactly issuer and subject"
                )));
            }
            let (issuer, subject) = (get("issuer"), get("subject"));
            if issuer.is_empty() || subject.is_empty() {
                return Err(invalid(
                    "a keyless identity needs both issuer and subject: with either left out, anyone \
                     with an account at some issuer could sign as it"
                        .into(),
                ));
            }
            if let Some(p) = [issuer, subject].into_iter().find(|s| accepts_many(s)) {
                return Err(invalid(format!(
                    "{p:?} is a pattern; a keyless identity is matched exactly, so name the one \
                     issuer and the one subject you trust"
                )));
            }
            if !issuer.starts_with("https://") {
                return Err(invalid(format!("the issuer {issuer:?} is an https:// URL of an OIDC provider")));
            }
            Ok((SignedBy::Keyless { issuer: issuer.to_owned(), subject: subject.to_owned() }, line))
        }
        _ => Err(invalid(
            "write a public key file, a fingerprint (sha256:…), or { issuer = \"…\", subject = \"…\" }".into(),
        )),
    }
}

/// Whether an identity string looks like a pattern (glob or regex), which
/// the table does not take.
fn accepts_many(s: &str) -> bool {
    s.contains('*')
        || s.contains(".+")
        || s.contains('^')
        || s.contains('$')
        || s.contains('|')
        || s.contains('?')
}
