//! What `reach skill add` learned about an installed file, kept beside it
//! (`NAME-VERSION.wasm.origin.json`), so the host can check the origin and
//! the signature again, offline, every time it loads the skill.
//!
//! The record holds the manifest as the registry sent it and the signature
//! as found: checking it needs no network and trusts nothing in the record
//! itself — the file's sha256 must be the manifest's one layer, the manifest
//! must hash to the digest the signature vouches for, and the signature must
//! verify with the key the *table* names. Editing the record can only make a
//! check fail.

use super::OciRef;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// The suffix of a record beside its `.wasm` file.
pub const SUFFIX: &str = ".origin.json";

/// Where an installed skill came from.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct Provenance {
    /// The reference as given to `reach skill add`, with the digest it resolved to.
    pub origin: String,
    /// `sha256:…` of the manifest.
    pub manifest_digest: String,
    /// The manifest's bytes, base64.
    pub manifest: String,
    /// `sha256:…` of the component layer: the file's digest.
    pub layer_digest: String,
    /// The signature verified at install, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signature: Option<SignatureRecord>,
    /// When it was installed (an HTTP date, UTC).
    pub installed_at: String,
}

/// A signature that verified at install.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct SignatureRecord {
    /// The key's fingerprint (`sha256:…`).
    pub signer: String,
    /// The key, PEM (so a table that names the signer by fingerprint can
    /// still check the signature offline).
    pub public_key: String,
    /// The signed payload, base64.
    pub payload: String,
    /// The signature, base64.
    pub signature: String,
}

/// How a file stands against its record and the table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Checked {
    /// `oci://REGISTRY/REPO:TAG@sha256:…` it was installed from.
    pub origin: String,
    /// The signer whose signature verified just now, when the table asks for one.
    pub verified_signer: Option<String>,
}

/// What the table asks of a skill's origin.
#[derive(Clone, Debug, Default)]
pub struct Expect<'a> {
    /// `origin = "oci://…"`: the repository it must come from.
    pub origin: Option<&'a OciRef>,
    /// `signed_by`: the public key (PEM) the table names, or only its fingerprint.
    pub signer: Option<Signer<'a>>,
}

/// A signer as the table names it.
#[derive(Clone, Copy, Debug)]
pub enum Signer<'a> {
    /// The key itself (a `.pub` file's content).
    Key(&'a str),
    /// `sha256:…` of the key; the key comes from the record.
    Fingerprint(&'a str),
}

impl Provenance {
    /// The record of an artifact installed now from `origin` (at its
    /// digest): its manifest as the registry sent it, the digest of what was
    /// installed, and the signature that verified, if one was asked for.
    pub fn now(
        origin: &OciRef,
        manifest_digest: &str,
        manifest: &[u8],
        layer_digest: String,
        signature: Option<SignatureRecord>,
    ) -> Provenance {
        use base64::Engine;
        Provenance {
            origin: origin.to_string(),
            manifest_digest: manifest_digest.to_owned(),
            manifest: base64::engine::general_purpose::STANDARD.encode(manifest),
            layer_digest,
            signature,
            installed_at: httpdate::fmt_http_date(std::time::SystemTime::now()),
        }
    }

    /// The record's path for `wasm`.
    pub fn path_for(wasm: &Path) -> PathBuf {
        let mut name = wasm.as_os_str().to_owned();
        name.push(SUFFIX);
        PathBuf::from(name)
    }

    /// The record's path for a bundle folder: `NAME.origin.json` beside it.
    pub fn path_for_bundle(dir: &Path) -> PathBuf {
        Self::path_for(dir)
    }

    /// Read the record beside `wasm` (or a bundle folder): `Ok(None)` when there is none.
    pub fn read_for(wasm: &Path) -> Result<Option<Provenance>, String> {
        let path = Self::path_for(wasm);
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(format!("{}: {e}", path.display())),
        };
        serde_json::from_str(&text)
            .map(Some)
            .map_err(|e| format!("{}: not an origin record: {e}", path.display()))
    }

    /// Write the record beside `wasm` (whole or not at all).
    pub fn write_for(&self, wasm: &Path) -> std::io::Result<()> {
        let path = Self::path_for(wasm);
        let dir = path.parent().unwrap_or(Path::new("."));
        let mut tmp = tempfile::NamedTempFile::new_in(dir)?;
        serde_json::to_writer_pretty(&mut tmp, self)?;
        std::io::Write::write_all(&mut tmp, b"\n")?;
        tmp.as_file().sync_all()?;
        tmp.persist(&path).map_err(|e| e.error)?;
        Ok(())
    }

    /// Check the file (its sha256, lowercase hex) against this record and
    /// what the table expects. Err says what does not hold.
    pub fn check(&self, file_sha256: &str, expect: &Expect<'_>) -> Result<Checked, String> {
        let file = format!("sha256:{file_sha256}");
        self.check_with(expect, |parsed| {
            if parsed.layers.len() != 1
                || parsed.layers[0].digest != file
                || self.layer_digest != file
            {
                return Err(format!(
                    "the file ({file}) is not the component {} published (layer {})",
                    self.origin,
                    parsed.layers.first().map_or("none", |l| l.digest.as_str())
                ));
            }
            Ok(())
        })
    }

    /// [`Provenance::check`] for a bundle folder: its files now must be
    /// exactly the manifest's layers (paths and digests), and its digest the
    /// recorded one.
    pub fn check_bundle(
        &self,
        files: &[crate::bundle::BundleFile],
        digest: &str,
        expect: &Expect<'_>,
    ) -> Result<Checked, String> {
        self.check_with(expect, |parsed| {
            let now: Vec<(String, String)> =
                files.iter().map(|f| (f.path.clone(), format!("sha256:{}", f.sha256))).collect();
            let mut published: Vec<(String, String)> = parsed
                .layers
                .iter()
                .map(|l| {
                    let title = l.annotations.as_ref().and_then(|a| a.get(super::bundle::TITLE));
                    (title.cloned().unwrap_or_default(), l.digest.clone())
                })
                .collect();
            published.sort();
            if now != published || self.layer_digest != format!("sha256:{digest}") {
                let changed: Vec<&str> = now
                    .iter()
                    .filter(|f| !published.contains(f))
                    .chain(published.iter().filter(|f| !now.contains(f)))
                    .map(|(p, _)| p.as_str())
                    .collect();
                return Err(format!(
                    "its files are not the bundle {} published (added, removed or changed: {})",
                    self.origin,
                    changed.join(", ")
                ));
            }
            Ok(())
        })
    }

    fn check_with(
        &self,
        expect: &Expect<'_>,
        contents: impl FnOnce(&oci_client::manifest::OciImageManifest) -> Result<(), String>,
    ) -> Result<Checked, String> {
        use base64::Engine;
        let b64 = base64::engine::general_purpose::STANDARD;
        let manifest = b64
            .decode(&self.manifest)
            .map_err(|_| "its record's manifest is not base64".to_owned())?;
        if super::artifact::sha256(&manifest) != self.manifest_digest {
            return Err("its origin record's manifest does not match the manifest digest".into());
        }
        let parsed: oci_client::manifest::OciImageManifest = serde_json::from_slice(&manifest)
            .map_err(|e| format!("its origin record's manifest does not parse: {e}"))?;
        contents(&parsed)?;
        let installed =
            OciRef::parse(&self.origin).map_err(|e| format!("its origin record: {e}"))?;
        if let Some(want) = expect.origin
            && (want.registry != installed.registry || want.repository != installed.repository)
        {
            return Err(format!(
                "it was installed from {}, not from the origin the table names ({})",
                installed.repository_url(),
                want.repository_url()
            ));
        }
        let verified_signer = match expect.signer {
            None => None,
            Some(signer) => Some(self.check_signature(signer)?),
        };
        Ok(Checked { origin: self.origin.clone(), verified_signer })
    }

    fn check_signature(&self, signer: Signer<'_>) -> Result<String, String> {
        use super::signature::{Found, PublicKey, verify};
        let key = match signer {
            Signer::Key(pem) => {
                PublicKey::from_pem(pem).map_err(|e| format!("the table's signed_by key {e}"))?
            }
            Signer::Fingerprint(fp) => {
                let Some(record) = &self.signature else {
                    return Err(format!(
                        "no signature was verified when it was installed, but the table wants signed_by \
                         {fp} (add it again with `reach skill add`)"
                    ));
                };
                let key = PublicKey::from_pem(&record.public_key)
                    .map_err(|e| format!("its record's key {e}"))?;
                if key.fingerprint() != fp {
                    return Err(format!(
                        "it was signed by {} when installed, not by the table's signed_by {fp}",
                        key.fingerprint()
                    ));
                }
                key
            }
        };
        let found: Vec<Found> = self
            .signature
            .iter()
            .map(|s| Found { payload: s.payload.clone(), signature: s.signature.clone() })
            .collect();
        verify(&self.manifest_digest, &found, &key).map(|_| key.fingerprint().to_owned())
    }
}
