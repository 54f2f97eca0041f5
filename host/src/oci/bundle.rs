//! Agent Skills bundles (`SKILL.md` folders) as an OCI artifact: one layer
//! per file, named by its `org.opencontainers.image.title` annotation (as
//! ORAS names files), and a config that lists every file with its sha256
//! and the bundle's digest — the digest `[skills.NAME] sha256` pins. The
//! manifest's digest is what a signature vouches for, as for a component.

use super::artifact::sha256;
use super::{OciError, OciRef, Pushed, Registry};
use crate::bundle::{self, BundleFile};
use oci_client::manifest::{OciDescriptor, OciImageManifest};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;

/// The config's media type: what marks an artifact as a bundle.
pub const CONFIG_TYPE: &str = "application/vnd.agent-reach.bundle.config.v1+json";
/// Each file's layer type.
pub const FILE_TYPE: &str = "application/vnd.agent-reach.bundle.file.v1";
/// The annotation holding a file's path in the bundle.
pub const TITLE: &str = "org.opencontainers.image.title";
/// The most a bundle's config may be.
const MAX_CONFIG_BYTES: i64 = 1 << 20;

/// The bundle's config blob.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct BundleConfig {
    /// The skill's name (its folder's).
    pub name: String,
    /// The bundle's digest over its files (lowercase hex, no prefix).
    pub sha256: String,
    /// Every file, sorted by path.
    pub files: Vec<BundleFile>,
}

/// A bundle fetched from a registry, every file checked.
#[derive(Clone, Debug)]
pub struct PulledBundle {
    /// What was asked for, with the manifest digest.
    pub reference: OciRef,
    /// `sha256:…` of the manifest.
    pub manifest_digest: String,
    /// The manifest as sent.
    pub manifest: Vec<u8>,
    /// Its config.
    pub config: BundleConfig,
    /// Each file's path and bytes, in the config's order.
    pub files: Vec<(String, Vec<u8>)>,
}

impl PulledBundle {
    /// Write the files under `dir` (which must be empty), folders made as needed.
    pub fn write_to(&self, dir: &Path) -> std::io::Result<()> {
        for (path, bytes) in &self.files {
            let target = dir.join(path);
            if let Some(parent) = target.parent() {
                std::fs::create_dir_all(parent)?;
            }
            std::fs::write(&target, bytes)?;
        }
        Ok(())
    }
}

/// Whether a manifest is a bundle's.
pub(crate) fn is_bundle(manifest: &OciImageManifest) -> bool {
    manifest.config.media_type == CONFIG_TYPE
}

impl Registry {
    /// Whether the artifact at `reference` is a bundle (else it is read as a component).
    pub async fn is_bundle(&self, reference: &OciRef) -> Result<bool, OciError> {
        let (body, _) = self.manifest_raw(reference).await?;
        Ok(serde_json::from_slice::<OciImageManifest>(&body).is_ok_and(|m| is_bundle(&m)))
    }

    /// Push the bundle in `dir` (it must load) to `reference`.
    pub async fn push_bundle(
        &self,
        reference: &OciRef,
        dir: &Path,
        annotations: BTreeMap<String, String>,
    ) -> Result<Pushed, OciError> {
        let loaded = bundle::load(dir).map_err(|e| OciError::Layout {
            reference: reference.to_string(),
            reason: format!("{} is not a bundle that loads: {e}", dir.display()),
        })?;
        let image = reference.client_ref();
        let fail = |e| OciError::from_client(reference, e);
        self.client.store_auth_if_needed(&self.registry, &self.auth).await;
        let mut layers = Vec::with_capacity(loaded.files.len());
        for file in &loaded.files {
            let path = dir.join(&file.path);
            let bytes = std::fs::read(&path).map_err(|source| OciError::Io { path, source })?;
            let digest = sha256(&bytes);
            if digest != format!("sha256:{}", file.sha256) {
                return Err(OciError::Layout {
                    reference: reference.to_string(),
                    reason: format!("{} changed while it was published; publish again", file.path),
                });
            }
            self.client.push_blob(&image, bytes, &digest).await.map_err(fail)?;
            layers.push(OciDescriptor {
                media_type: FILE_TYPE.into(),
                digest,
                size: file.bytes as i64,
                annotations: Some(BTreeMap::from([(TITLE.to_owned(), file.path.clone())])),
                ..OciDescriptor::default()
            });
        }
        let config = serde_json::to_vec(&BundleConfig {
            name: loaded.name.clone(),
            sha256: loaded.sha256.clone(),
            files: loaded.files.clone(),
        })
        .expect("a config serializes");
        let config_digest = sha256(&config);
        self.client.push_blob(&image, config.clone(), &config_digest).await.map_err(fail)?;
        let manifest = OciImageManifest {
            media_type: Some(super::artifact::MANIFEST_TYPE.into()),
            config: OciDescriptor {
                media_type: CONFIG_TYPE.into(),
                digest: config_digest,
                size: config.len() as i64,
                ..OciDescriptor::default()
            },
            layers,
            annotations: Some(annotations),
            ..OciImageManifest::default()
        };
        let manifest_digest = self.push_manifest(reference, &manifest).await?;
        Ok(Pushed {
            reference: reference.at_digest(&manifest_digest),
            manifest_digest,
            layer_digest: format!("sha256:{}", loaded.sha256),
        })
    }

    /// Pull the bundle at `reference`: the manifest checked against its
    /// digest, the config against the manifest, every file against its
    /// layer and the config, the paths and sizes within a bundle's limits,
    /// and the bundle digest recomputed.
    pub async fn pull_bundle(&self, reference: &OciRef) -> Result<PulledBundle, OciError> {
        let (raw, manifest_digest) = self.manifest_raw(reference).await?;
        let at = reference.at_digest(&manifest_digest);
        let bad = |reason: String| OciError::Layout { reference: at.to_string(), reason };
        let manifest: OciImageManifest = serde_json::from_slice(&raw)
            .map_err(|e| bad(format!("the manifest does not parse: {e}")))?;
        if !is_bundle(&manifest) {
            return Err(bad(format!(
                "its config is {}, not a bundle's ({CONFIG_TYPE})",
                manifest.config.media_type
            )));
        }
        if manifest.config.size < 0 || manifest.config.size > MAX_CONFIG_BYTES {
            return Err(bad("its config is larger than a bundle's may be".into()));
        }
        let config_bytes = self.blob(&at, &manifest.config).await?;
        let config: BundleConfig = serde_json::from_slice(&config_bytes)
            .map_err(|e| bad(format!("its config does not parse: {e}")))?;
        check_listing(&manifest, &config).map_err(bad)?;
        let mut files = Vec::with_capacity(manifest.layers.len());
        for (layer, file) in manifest.layers.iter().zip(&config.files) {
            files.push((file.path.clone(), self.blob(&at, layer).await?));
        }
        Ok(PulledBundle { reference: at, manifest_digest, manifest: raw, config, files })
    }

    /// One blob, bounded by its descriptor's size and checked against its digest.
    async fn blob(&self, at: &OciRef, layer: &OciDescriptor) -> Result<Vec<u8>, OciError> {
        let mut out = super::artifact::Bounded::new(layer.size.max(0) as usize);
        self.client
            .pull_blob(&at.client_ref(), layer, &mut out)
            .await
            .map_err(|e| OciError::from_client(at, e))?;
        let bytes = out.into_inner();
        let actual = sha256(&bytes);
        if actual != layer.digest {
            return Err(OciError::Digest {
                reference: at.to_string(),
                what: format!("the blob {}", layer.digest),
                expected: layer.digest.clone(),
                actual,
            });
        }
        Ok(bytes)
    }
}

/// The manifest's layers are exactly the config's files, each path safe
/// to write under the bundle folder, within a bundle's limits, and the
/// config's digest is the one over its files.
pub(crate) fn check_listing(
    manifest: &OciImageManifest,
    config: &BundleConfig,
) -> Result<(), String> {
    if manifest.layers.len() != config.files.len() {
        return Err(format!(
            "its manifest has {} layers for the {} files its config lists",
            manifest.layers.len(),
            config.files.len()
        ));
    }
    if config.files.len() > bundle::files::MAX_FILES {
        return Err(format!("it has more than {} files", bundle::files::MAX_FILES));
    }
    let total: u64 = config.files.iter().map(|f| f.bytes).sum();
    if total > bundle::files::MAX_BYTES {
        return Err(format!("its files pass {} MiB together", bundle::files::MAX_BYTES >> 20));
    }
    let mut seen = std::collections::BTreeSet::new();
    for (layer, file) in manifest.layers.iter().zip(&config.files) {
        safe_path(&file.path)?;
        if !seen.insert(file.path.as_str()) {
            return Err(format!("it lists {} twice", file.path));
        }
        let title = layer.annotations.as_ref().and_then(|a| a.get(TITLE));
        if layer.media_type != FILE_TYPE
            || title != Some(&file.path)
            || layer.digest != format!("sha256:{}", file.sha256)
            || layer.size < 0
            || layer.size as u64 != file.bytes
        {
            return Err(format!("its layer for {} does not match its config", file.path));
        }
    }
    let mut sorted = config.files.clone();
    sorted.sort_by(|a, b| a.path.cmp(&b.path));
    if bundle::files::digest(&sorted).1 != config.sha256 {
        return Err("its config's digest is not the digest over its files".into());
    }
    if !seen.contains(bundle::SKILL_MD) {
        return Err(format!("it has no {}", bundle::SKILL_MD));
    }
    Ok(())
}

/// A relative path of plain names, `/` between them, at most as deep as a bundle may be.
fn safe_path(path: &str) -> Result<(), String> {
    let parts: Vec<&str> = path.split('/').collect();
    let bad = parts.iter().any(|p| {
        p.is_empty()
            || *p == "."
            || *p == ".."
            || p.contains('\\')
            || p.contains('\0')
            || p.contains(':')
    });
    if bad || parts.len() > bundle::files::MAX_DEPTH + 1 {
        return Err(format!("{path:?} is not a path inside a bundle"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_plain_relative_paths_may_be_written() {
        for ok in ["SKILL.md", "scripts/run.py", "a/b/c.txt", "…/x"] {
            assert!(safe_path(ok).is_ok(), "{ok}");
        }
        for bad in [
            "",
            "/etc/passwd",
            "../x",
            "a/../b",
            "a//b",
            "./a",
            "a\\b",
            "C:x",
            "a/",
            "a\0b",
            "1/2/3/4/5/6/7/8/9/10",
        ] {
            assert!(safe_path(bad).is_err(), "{bad:?}");
        }
    }
}
