//! What can go wrong getting a skill from a registry, each with what to do.

use std::path::PathBuf;

/// An error pulling, publishing, signing or verifying a skill.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum OciError {
    /// The `oci://` reference is malformed.
    #[error("{reference:?} is not an oci:// reference: {reason}")]
    Reference {
        /// As written.
        reference: String,
        /// Which part is wrong.
        reason: String,
    },
    /// The registry could not be reached, refused, or answered something
    /// that is not the distribution API.
    #[error("registry {registry}: {reason}")]
    Registry {
        /// `host[:port]`.
        registry: String,
        /// What happened (never a credential).
        reason: String,
    },
    /// No manifest at that tag or digest.
    #[error("{reference}: not found in the registry ({reason})")]
    NotFound {
        /// The reference.
        reference: String,
        /// The registry's words.
        reason: String,
    },
    /// A manifest or layer whose bytes do not match their digest: changed in
    /// the registry or on the way.
    #[error(
        "{reference}: {what} does not match its digest (expected {expected}, got {actual}); \
         nothing was installed"
    )]
    Digest {
        /// The reference.
        reference: String,
        /// `the manifest`, `the component layer`.
        what: String,
        /// What the manifest or reference says.
        expected: String,
        /// What the bytes hash to.
        actual: String,
    },
    /// The artifact is not a Wasm component artifact this host reads.
    #[error("{reference}: {reason}")]
    Layout {
        /// The reference.
        reference: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The artifact's digest is not the one the table pins.
    #[error(
        "{reference} is {actual}, but the table pins [skills.{skill}] sha256 = \"{expected}\" \
         (line {line}); the tag now points at something else — check who published it, then \
         change the pin if you trust it"
    )]
    PinMismatch {
        /// The reference.
        reference: String,
        /// The skill.
        skill: String,
        /// The pinned file digest.
        expected: String,
        /// What the registry has.
        actual: String,
        /// The pin's line.
        line: usize,
    },
    /// A signature was required and none verified.
    #[error("{reference}: {reason}")]
    Signature {
        /// The reference (at its digest).
        reference: String,
        /// Expected signer, and what was found instead.
        reason: String,
    },
    /// A key file could not be read or used.
    #[error("key {path}: {reason}")]
    Key {
        /// The file.
        path: PathBuf,
        /// Why.
        reason: String,
    },
    /// A local file could not be read or written.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
}

#[cfg(feature = "oci")]
impl OciError {
    /// A registry error from `oci-client`'s, in words an operator can act on.
    pub(crate) fn from_client(
        reference: &super::OciRef,
        e: oci_client::errors::OciDistributionError,
    ) -> Self {
        use oci_client::errors::OciDistributionError as E;
        let registry = reference.registry.clone();
        match e {
            E::ImageManifestNotFoundError(m) => {
                OciError::NotFound { reference: reference.to_string(), reason: m }
            }
            E::RegistryError { envelope, .. }
                if envelope.errors.iter().any(|e| {
                    matches!(
                        e.code,
                        oci_client::errors::OciErrorCode::ManifestUnknown
                            | oci_client::errors::OciErrorCode::NameUnknown
                            | oci_client::errors::OciErrorCode::BlobUnknown
                    )
                }) =>
            {
                OciError::NotFound {
                    reference: reference.to_string(),
                    reason: envelope
                        .errors
                        .iter()
                        .map(|e| e.message.clone())
                        .collect::<Vec<_>>()
                        .join("; "),
                }
            }
            E::DigestError(d) => {
                let (expected, actual) = match &d {
                    oci_client::errors::DigestError::VerificationError { expected, actual } => {
                        (expected.clone(), actual.clone())
                    }
                    other => (String::new(), other.to_string()),
                };
                OciError::Digest {
                    reference: reference.to_string(),
                    what: "a blob".into(),
                    expected,
                    actual,
                }
            }
            E::AuthenticationFailure(_) | E::UnauthorizedError { .. } => login_needed(reference),
            E::ServerError { code: 401 | 403, .. } => login_needed(reference),
            E::RegistryError { envelope, .. }
                if envelope.errors.iter().any(|e| {
                    matches!(
                        e.code,
                        oci_client::errors::OciErrorCode::Unauthorized
                            | oci_client::errors::OciErrorCode::Denied
                    )
                }) =>
            {
                login_needed(reference)
            }
            E::RequestError(r) => OciError::Registry {
                registry,
                reason: if r.is_connect() {
                    "cannot connect (is the registry running, and is the address right?)".into()
                } else if r.is_timeout() {
                    "timed out".into()
                } else {
                    format!("request failed: {}", redact(&r.to_string()))
                },
            },
            other => OciError::Registry {
                registry,
                reason: format!(
                    "answered something that is not the OCI distribution API: {}",
                    redact(&other.to_string())
                ),
            },
        }
    }
}

/// A registry that wants a login (or a better one): where ours come from.
#[cfg(feature = "oci")]
fn login_needed(reference: &super::OciRef) -> OciError {
    OciError::Registry {
        registry: reference.registry.clone(),
        reason: format!(
            "refused access to {} without a login that may do this (set REACH_REGISTRY_USERNAME \
             and REACH_REGISTRY_PASSWORD, or log in with `docker login {}`)",
            reference.repository, reference.registry
        ),
    }
}

#[cfg(feature = "oci")]
/// Drop anything after `@` in a URL's authority, in case an error quotes a
/// URL with userinfo in it.
fn redact(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for word in text.split_inclusive(' ') {
        match (word.find("://"), word.find('@')) {
            (Some(s), Some(a)) if a > s => {
                out.push_str(&word[..s + 3]);
                out.push_str("…@");
                out.push_str(&word[a + 1..]);
            }
            _ => out.push_str(word),
        }
    }
    out
}
