//! Cosign-compatible signatures on skills.
//!
//! A signature is cosign's *simple signing* payload (the manifest digest it
//! vouches for, under `critical.image.docker-manifest-digest`) signed with an
//! ECDSA P-256 key, stored as a layer of the manifest at the tag
//! `sha256-HEX.sig` beside the artifact, the signature in the layer's
//! `dev.cosignproject.cosign/signature` annotation — what `cosign sign
//! --key` writes and `cosign verify --key` reads, on any registry (no
//! referrers API needed). Keys are cosign's files: the private key in its
//! encrypted PEM, the public key as a PEM `PUBLIC KEY`.
//!
//! A key's *fingerprint* is `sha256:` and the hex SHA-256 of its DER
//! SubjectPublicKeyInfo; the table may name a signer by it. Our signatures
//! also carry the signer's public key in the payload's optional part, so a
//! refusal can name who did sign; a signature without it (made by cosign)
//! verifies the same way.

use super::artifact::sha256;
use super::{OciError, OciRef, Registry};
use base64::Engine;
use base64::engine::general_purpose::STANDARD as B64;
use oci_client::manifest::{OciDescriptor, OciImageManifest};
use sigstore::cosign::simple_signing::{Critical, Identity, Image, Optional, SimpleSigning};
use sigstore::crypto::signing_key::SigStoreKeyPair;
use sigstore::crypto::{CosignVerificationKey, SigStoreSigner, Signature, SigningScheme};
use std::collections::BTreeMap;
use std::fmt;
use std::path::Path;
use zeroize::Zeroizing;

/// The media type of a signature layer.
pub const LAYER_TYPE: &str = "application/vnd.dev.cosign.simplesigning.v1+json";
/// The layer annotation holding the base64 signature.
pub const SIGNATURE_ANNOTATION: &str = "dev.cosignproject.cosign/signature";
/// The payload's `critical.type`.
pub const PAYLOAD_TYPE: &str = "cosign container image signature";
/// Where our signatures name their signer's public key (PEM), inside the
/// signed payload.
pub const SIGNER_KEY_FIELD: &str = "dev.agent-reach.signer.public-key";
/// The variables a private key's password is read from, in order (the
/// second is cosign's, so one password serves both tools).
pub const PASSWORD_VARS: [&str; 2] = ["REACH_SIGNING_PASSWORD", "COSIGN_PASSWORD"];
/// The most a signature payload may be.
const MAX_PAYLOAD_BYTES: i64 = 64 << 10;
/// The most signatures read for one artifact.
const MAX_SIGNATURES: usize = 64;
/// The config of a new signature manifest (cosign's is an empty image config too).
const SIGNATURE_CONFIG: &[u8] = b"{}";
const SIGNATURE_CONFIG_TYPE: &str = "application/vnd.oci.image.config.v1+json";

/// A public key that can verify signatures.
#[derive(Clone)]
pub struct PublicKey {
    pem: String,
    fingerprint: String,
    key: CosignVerificationKey,
}

impl fmt::Debug for PublicKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.fingerprint)
    }
}

impl PublicKey {
    /// A PEM `PUBLIC KEY` (what `cosign generate-key-pair` writes to `cosign.pub`).
    pub fn from_pem(pem: &str) -> Result<Self, String> {
        let parsed = pem::parse(pem.trim()).map_err(|e| format!("not a PEM file: {e}"))?;
        if parsed.tag() != "PUBLIC KEY" {
            return Err(format!("holds a {}, not a PUBLIC KEY", parsed.tag()));
        }
        let key = CosignVerificationKey::try_from_der(parsed.contents())
            .map_err(|e| format!("not a public key cosign can use: {e}"))?;
        Ok(PublicKey {
            pem: pem.trim().to_owned() + "\n",
            fingerprint: sha256(parsed.contents()),
            key,
        })
    }

    /// Read a public key file.
    pub fn read(path: &Path) -> Result<Self, OciError> {
        let text = std::fs::read_to_string(path)
            .map_err(|source| OciError::Io { path: path.to_owned(), source })?;
        Self::from_pem(&text).map_err(|reason| OciError::Key { path: path.to_owned(), reason })
    }

    /// `sha256:HEX` of the key's DER form.
    pub fn fingerprint(&self) -> &str {
        &self.fingerprint
    }

    /// The key as PEM.
    pub fn pem(&self) -> &str {
        &self.pem
    }

    /// Whether `signature` (base64) is this key's signature of `payload`.
    pub fn verifies(&self, payload: &[u8], signature: &str) -> bool {
        self.key.verify_signature(Signature::Base64Encoded(signature.as_bytes()), payload).is_ok()
    }
}

/// A private key that signs.
pub struct SigningKey {
    signer: SigStoreSigner,
    pair: SigStoreKeyPair,
    public: PublicKey,
}

impl fmt::Debug for SigningKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "SigningKey({})", self.public.fingerprint)
    }
}

impl SigningKey {
    /// A new ECDSA P-256 key (cosign's default).
    pub fn generate() -> Result<Self, String> {
        let signer = SigningScheme::ECDSA_P256_SHA256_ASN1
            .create_signer()
            .map_err(|e| format!("cannot make a key: {e}"))?;
        let pair = signer.to_sigstore_keypair().map_err(|e| e.to_string())?;
        Self::from_pair(pair)
    }

    /// Read a cosign private key file (encrypted PEM), decrypted with `password`.
    pub fn read(path: &Path, password: &[u8]) -> Result<Self, OciError> {
        let text = Zeroizing::new(
            std::fs::read(path).map_err(|source| OciError::Io { path: path.to_owned(), source })?,
        );
        let key_err = |reason: String| OciError::Key { path: path.to_owned(), reason };
        let pair = SigStoreKeyPair::from_encrypted_pem(&text, password).map_err(|e| {
            key_err(format!(
                "cannot decrypt it ({e}); set {} (or {}) to its password",
                PASSWORD_VARS[0], PASSWORD_VARS[1]
            ))
        })?;
        Self::from_pair(pair).map_err(key_err)
    }

    fn from_pair(pair: SigStoreKeyPair) -> Result<Self, String> {
        let signer = pair
            .to_sigstore_signer(&SigningScheme::ECDSA_P256_SHA256_ASN1)
            .map_err(|e| format!("not an ECDSA P-256 key: {e}"))?;
        let pem = pair.public_key_to_pem().map_err(|e| e.to_string())?;
        let public = PublicKey::from_pem(&pem)?;
        Ok(SigningKey { signer, pair, public })
    }

    /// The private key in cosign's encrypted PEM.
    pub fn to_encrypted_pem(&self, password: &[u8]) -> Result<Zeroizing<String>, String> {
        self.pair.private_key_to_encrypted_pem(password).map_err(|e| e.to_string())
    }

    /// The public half.
    pub fn public(&self) -> &PublicKey {
        &self.public
    }

    /// Sign `payload`; the signature in base64.
    fn sign(&self, payload: &[u8]) -> Result<String, String> {
        self.signer.sign(payload).map(|raw| B64.encode(raw)).map_err(|e| e.to_string())
    }
}

/// The password for a private key: the first of [`PASSWORD_VARS`] set, else empty.
pub fn password_from_env() -> Zeroizing<Vec<u8>> {
    PASSWORD_VARS
        .iter()
        .find_map(|v| std::env::var(v).ok())
        .map(|p| Zeroizing::new(p.into_bytes()))
        .unwrap_or_default()
}

/// One signature found beside an artifact (not yet checked).
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize, PartialEq, Eq)]
pub struct Found {
    /// The signed payload, base64 (its exact bytes are what was signed).
    pub payload: String,
    /// The signature, base64.
    pub signature: String,
}

impl Found {
    fn payload_bytes(&self) -> Option<Vec<u8>> {
        B64.decode(&self.payload).ok()
    }

    /// The signer the payload names (ours do; cosign's do not), unchecked.
    fn claimed_signer(&self) -> Option<PublicKey> {
        let payload: SimpleSigning = serde_json::from_slice(&self.payload_bytes()?).ok()?;
        let pem = payload.optional?.extra.get(SIGNER_KEY_FIELD)?.as_str()?.to_owned();
        PublicKey::from_pem(&pem).ok()
    }
}

/// The signature tag for a manifest digest: `sha256-HEX.sig`.
pub fn signature_tag(digest: &str) -> String {
    format!("{}.sig", digest.replace(':', "-"))
}

/// Check `found` for a signature by `expected` over the manifest `digest`:
/// the signature verifies with the key, and the payload is a cosign image
/// signature naming exactly that digest. Err says what was found instead,
/// naming the signers it can.
pub fn verify(digest: &str, found: &[Found], expected: &PublicKey) -> Result<Found, String> {
    for f in found {
        let Some(payload) = f.payload_bytes() else { continue };
        if expected.verifies(&payload, &f.signature) && vouches_for(&payload, digest) {
            return Ok(f.clone());
        }
    }
    let wanted = format!("signed_by {}", expected.fingerprint());
    if found.is_empty() {
        return Err(format!(
            "has no signature ({} is missing), but {wanted} is required",
            signature_tag(digest)
        ));
    }
    Err(format!(
        "is not signed by the required key ({wanted}); its {} signed by {}",
        if found.len() == 1 { "signature is" } else { "signatures are" },
        signers(found, Some(expected))
    ))
}

/// [`verify`] for a signer named by fingerprint only: the key is taken
/// from a signature that names it (ours carry the signer's key), and must
/// have that fingerprint. Err when no signature names such a key.
pub fn verify_fingerprint(
    digest: &str,
    found: &[Found],
    fingerprint: &str,
) -> Result<(Found, PublicKey), String> {
    let key =
        found.iter().filter_map(Found::claimed_signer).find(|k| k.fingerprint() == fingerprint);
    match key {
        Some(key) => verify(digest, found, &key).map(|f| (f, key)),
        None if found.is_empty() => Err(format!(
            "has no signature ({} is missing), but signed_by {fingerprint} is required",
            signature_tag(digest)
        )),
        None => Err(format!(
            "is not signed by the required key (signed_by {fingerprint}); its {} signed by {} \
             (if the publisher signed with cosign, name their public key file instead of its fingerprint)",
            if found.len() == 1 { "signature is" } else { "signatures are" },
            signers(found, None)
        )),
    }
}

/// Who signed `found`, as far as can be told: the keys the signatures name
/// and verify with, `expected` where it verifies.
fn signers(found: &[Found], expected: Option<&PublicKey>) -> String {
    let mut seen: Vec<String> = Vec::new();
    for f in found {
        let by_expected =
            expected.zip(f.payload_bytes()).filter(|(k, p)| k.verifies(p, &f.signature));
        let text = if let Some((k, _)) = by_expected {
            format!("{} (for another artifact: the payload names another digest)", k.fingerprint())
        } else {
            match (f.claimed_signer(), f.payload_bytes()) {
                (Some(k), Some(p)) if k.verifies(&p, &f.signature) => k.fingerprint().to_owned(),
                (Some(k), _) => format!(
                    "a signature that does not verify with the key it names ({})",
                    k.fingerprint()
                ),
                _ => "a key it does not name (e.g. made with cosign)".to_owned(),
            }
        };
        if !seen.contains(&text) {
            seen.push(text);
        }
    }
    seen.join(", ")
}

/// Whether a payload is a cosign image signature for `digest`.
fn vouches_for(payload: &[u8], digest: &str) -> bool {
    serde_json::from_slice::<SimpleSigning>(payload).is_ok_and(|p| {
        p.critical.type_name == PAYLOAD_TYPE && p.critical.image.docker_manifest_digest == digest
    })
}

impl Registry {
    /// The signatures stored beside the artifact at `at` (which must carry
    /// its digest); none when there is no signature tag.
    pub async fn signatures(&self, at: &OciRef) -> Result<Vec<Found>, OciError> {
        let digest = at.digest.as_deref().expect("signatures are looked up by digest");
        let tag = at.at_tag(&signature_tag(digest));
        let (body, sig_digest) = match self.manifest_raw(&tag).await {
            Ok(found) => found,
            Err(OciError::NotFound { .. }) => return Ok(Vec::new()),
            Err(e) => return Err(e),
        };
        let manifest: OciImageManifest =
            serde_json::from_slice(&body).map_err(|e| OciError::Layout {
                reference: tag.to_string(),
                reason: format!("the signature manifest is not an image manifest: {e}"),
            })?;
        let at_sig = tag.at_digest(&sig_digest);
        let mut out = Vec::new();
        for layer in
            manifest.layers.iter().filter(|l| l.media_type == LAYER_TYPE).take(MAX_SIGNATURES)
        {
            let Some(signature) =
                layer.annotations.as_ref().and_then(|a| a.get(SIGNATURE_ANNOTATION))
            else {
                continue; // keyless signatures without a key signature: not ours to read
            };
            if layer.size > MAX_PAYLOAD_BYTES || layer.size < 0 {
                continue;
            }
            let mut payload = Vec::new();
            self.client
                .pull_blob(&at_sig.client_ref(), layer, &mut payload)
                .await
                .map_err(|e| OciError::from_client(&at_sig, e))?;
            out.push(Found { payload: B64.encode(&payload), signature: signature.clone() });
        }
        Ok(out)
    }

    /// Sign the artifact at `at` (its digest) with `key`, adding the
    /// signature to those already at its signature tag (kept byte for
    /// byte). Signing twice with the same key adds nothing.
    pub async fn sign(&self, at: &OciRef, key: &SigningKey) -> Result<OciRef, OciError> {
        let digest = at.digest.clone().expect("signing is by digest");
        let tag = at.at_tag(&signature_tag(&digest));
        let existing = match self.manifest_raw(&tag).await {
            Ok((body, _)) => {
                Some(serde_json::from_slice::<OciImageManifest>(&body).map_err(|e| {
                    OciError::Layout {
                        reference: tag.to_string(),
                        reason: format!("the signature manifest is not an image manifest: {e}"),
                    }
                })?)
            }
            Err(OciError::NotFound { .. }) => None,
            Err(e) => return Err(e),
        };
        if self.signatures(at).await?.iter().any(|f| {
            f.payload_bytes()
                .is_some_and(|p| key.public.verifies(&p, &f.signature) && vouches_for(&p, &digest))
        }) {
            return Ok(tag);
        }
        let payload = serde_json::to_vec(&SimpleSigning {
            critical: Critical {
                identity: Identity {
                    docker_reference: format!("{}/{}", at.registry, at.repository),
                },
                image: Image { docker_manifest_digest: digest.clone() },
                type_name: PAYLOAD_TYPE.to_owned(),
            },
            optional: Some(Optional {
                creator: Some(concat!("agent-reach ", env!("CARGO_PKG_VERSION")).to_owned()),
                timestamp: None,
                extra: BTreeMap::from([(
                    SIGNER_KEY_FIELD.to_owned(),
                    key.public.pem.clone().into(),
                )]),
            }),
        })
        .expect("a payload serializes");
        let signature = key.sign(&payload).map_err(|reason| OciError::Signature {
            reference: at.to_string(),
            reason: format!("cannot sign: {reason}"),
        })?;
        let image = tag.client_ref();
        let fail = |e| OciError::from_client(&tag, e);
        let payload_digest = sha256(&payload);
        self.client.store_auth_if_needed(&self.registry, &self.auth).await;
        self.client.push_blob(&image, payload.clone(), &payload_digest).await.map_err(fail)?;
        let layer = OciDescriptor {
            media_type: LAYER_TYPE.to_owned(),
            digest: payload_digest,
            size: payload.len() as i64,
            annotations: Some(BTreeMap::from([(SIGNATURE_ANNOTATION.to_owned(), signature)])),
            ..OciDescriptor::default()
        };
        let manifest = match existing {
            Some(mut m) => {
                m.layers.push(layer);
                m
            }
            None => {
                let config_digest = sha256(SIGNATURE_CONFIG);
                self.client
                    .push_blob(&image, SIGNATURE_CONFIG, &config_digest)
                    .await
                    .map_err(fail)?;
                OciImageManifest {
                    media_type: Some(super::artifact::MANIFEST_TYPE.to_owned()),
                    config: OciDescriptor {
                        media_type: SIGNATURE_CONFIG_TYPE.to_owned(),
                        digest: config_digest,
                        size: SIGNATURE_CONFIG.len() as i64,
                        ..OciDescriptor::default()
                    },
                    layers: vec![layer],
                    ..OciImageManifest::default()
                }
            }
        };
        self.push_manifest(&tag, &manifest).await?;
        Ok(tag)
    }
}

#[cfg(test)]
mod tests;
