//! The Wasm OCI artifact: pull one (every byte checked against its digest)
//! and push one (the layout `wkg` and `wasm-pkg-tools` write).

use super::{OciError, OciRef, Registry};
use oci_client::manifest::{OciDescriptor, OciImageManifest};
use oci_wasm::{ToConfig, WasmConfig};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::pin::Pin;
use std::task::{Context, Poll};

/// The most a component layer may be: larger is refused before it is fetched.
pub const MAX_LAYER_BYTES: u64 = 256 << 20;
/// The manifest media type this host writes and reads.
pub const MANIFEST_TYPE: &str = oci_wasm::WASM_MANIFEST_MEDIA_TYPE;
/// The Docker manifest type, accepted on pull (same shape).
const DOCKER_MANIFEST_TYPE: &str = "application/vnd.docker.distribution.manifest.v2+json";
/// The component layer's media type.
pub const LAYER_TYPE: &str = oci_wasm::WASM_LAYER_MEDIA_TYPE;
/// The older layout's layer type (wasm-to-oci), accepted on pull.
pub const LEGACY_LAYER_TYPE: &str = "application/vnd.wasm.content.layer.v1+wasm";
/// The config media types accepted on pull: today's and wasm-to-oci's.
const CONFIG_TYPES: [&str; 2] =
    [oci_wasm::WASM_MANIFEST_CONFIG_MEDIA_TYPE, "application/vnd.wasm.config.v1+json"];

/// A component fetched from a registry, every digest checked.
#[derive(Clone, Debug)]
pub struct Pulled {
    /// What was asked for, now with the manifest digest.
    pub reference: OciRef,
    /// `sha256:…` of the manifest.
    pub manifest_digest: String,
    /// The manifest as the registry sent it (its digest is `manifest_digest`).
    pub manifest: Vec<u8>,
    /// The component layer's digest, `sha256:…` (the file's sha256).
    pub layer_digest: String,
    /// The component.
    pub component: Vec<u8>,
    /// The layer had the older `…wasm.content.layer.v1+wasm` type.
    pub legacy_layout: bool,
}

/// What a push wrote.
#[derive(Clone, Debug)]
pub struct Pushed {
    /// The reference pushed to, with the manifest digest.
    pub reference: OciRef,
    /// `sha256:…` of the manifest.
    pub manifest_digest: String,
    /// `sha256:…` of the component layer (the file's sha256).
    pub layer_digest: String,
}

impl Registry {
    /// The manifest digest a tag (or digest) points at now.
    pub async fn resolve(&self, reference: &OciRef) -> Result<String, OciError> {
        let (_, digest, _) = self.manifest(reference).await?;
        Ok(digest)
    }

    /// Pull the component `reference` names: resolve the tag to a manifest
    /// digest, check the manifest's bytes against it (and against the
    /// digest in the reference, if any), check the layout, then fetch the one
    /// layer (refused before the fetch when larger than
    /// [`MAX_LAYER_BYTES`]) and check its bytes against its digest.
    pub async fn pull(&self, reference: &OciRef) -> Result<Pulled, OciError> {
        let (manifest, manifest_digest, raw) = self.manifest(reference).await?;
        let at = reference.at_digest(&manifest_digest);
        let layer = component_layer(&at, &manifest)?;
        let mut out =
            Bounded { buf: Vec::with_capacity(layer.size as usize), limit: layer.size as usize };
        self.client.pull_blob(&at.client_ref(), &layer, &mut out).await.map_err(|e| {
            match OciError::from_client(&at, e) {
                OciError::Digest { reference, expected, actual, .. } => OciError::Digest {
                    reference,
                    what: "the component layer".into(),
                    expected,
                    actual,
                },
                other => other,
            }
        })?;
        let component = out.buf;
        // oci-client checked this already; checked again here because the
        // install and the pin depend on it and it costs one hash.
        let actual = sha256(&component);
        if actual != layer.digest || component.len() as i64 != layer.size {
            return Err(OciError::Digest {
                reference: at.to_string(),
                what: "the component layer".into(),
                expected: layer.digest.clone(),
                actual,
            });
        }
        Ok(Pulled {
            manifest: raw,
            reference: at,
            manifest_digest,
            layer_digest: layer.digest.clone(),
            legacy_layout: layer.media_type == LEGACY_LAYER_TYPE,
            component,
        })
    }

    /// Push `component` to `reference` (a tag; a digest in it is refused)
    /// as the standard Wasm artifact; `annotations` go on the manifest.
    pub async fn push(
        &self,
        reference: &OciRef,
        component: &[u8],
        annotations: BTreeMap<String, String>,
    ) -> Result<Pushed, OciError> {
        if reference.digest.is_some() || reference.tag.is_none() {
            return Err(OciError::Reference {
                reference: reference.to_string(),
                reason: "publish to a tag (oci://REGISTRY/REPO:TAG), not a digest".into(),
            });
        }
        let (config, layer) =
            WasmConfig::from_raw_component(component.to_vec(), None).map_err(|e| {
                OciError::Layout {
                    reference: reference.to_string(),
                    reason: format!("not a WebAssembly component: {e:#}"),
                }
            })?;
        let config = config.to_config().map_err(|e| OciError::Layout {
            reference: reference.to_string(),
            reason: format!("cannot describe the component: {e:#}"),
        })?;
        let mut manifest =
            OciImageManifest::build(std::slice::from_ref(&layer), &config, Some(annotations));
        manifest.media_type = Some(MANIFEST_TYPE.to_owned());
        let body = serde_json::to_vec(&manifest).expect("a manifest serializes");
        let manifest_digest = sha256(&body);
        let layer_digest = layer.sha256_digest();
        let image = reference.client_ref();
        let fail = |e| OciError::from_client(reference, e);
        self.client.store_auth_if_needed(&self.registry, &self.auth).await;
        self.client.push_blob(&image, layer.data.clone(), &layer_digest).await.map_err(fail)?;
        self.client
            .push_blob(&image, config.data.clone(), &manifest.config.digest)
            .await
            .map_err(fail)?;
        self.client
            .push_manifest_raw(&image, body, MANIFEST_TYPE.parse().expect("a header value"))
            .await
            .map_err(fail)?;
        Ok(Pushed {
            reference: reference.at_digest(&manifest_digest),
            manifest_digest,
            layer_digest,
        })
    }

    /// Push `manifest` to `reference` (a tag); its digest.
    pub(crate) async fn push_manifest(
        &self,
        reference: &OciRef,
        manifest: &OciImageManifest,
    ) -> Result<String, OciError> {
        let body = serde_json::to_vec(manifest).expect("a manifest serializes");
        let digest = sha256(&body);
        self.client
            .push_manifest_raw(
                &reference.client_ref(),
                body,
                MANIFEST_TYPE.parse().expect("a header value"),
            )
            .await
            .map_err(|e| OciError::from_client(reference, e))?;
        Ok(digest)
    }

    /// The image manifest at `reference`, its digest, and its bytes, checked.
    async fn manifest(
        &self,
        reference: &OciRef,
    ) -> Result<(OciImageManifest, String, Vec<u8>), OciError> {
        let (body, digest) = self.manifest_raw(reference).await?;
        let manifest: OciImageManifest = serde_json::from_slice(&body).map_err(|e| OciError::Registry {
            registry: reference.registry.clone(),
            reason: format!(
                "answered {reference} with something that is not an OCI image manifest ({e}); is \
                 this an OCI registry?"
            ),
        })?;
        if let Some(t) = manifest.media_type.as_deref()
            && t != MANIFEST_TYPE
            && t != DOCKER_MANIFEST_TYPE
        {
            return Err(OciError::Layout {
                reference: reference.to_string(),
                reason: format!(
                    "the manifest is a {t}, not a single image manifest (an index of platforms is not a skill)"
                ),
            });
        }
        Ok((manifest, digest, body))
    }

    /// The manifest's bytes at `reference` and their digest, checked against
    /// the digest in the reference when it has one.
    pub(crate) async fn manifest_raw(
        &self,
        reference: &OciRef,
    ) -> Result<(Vec<u8>, String), OciError> {
        self.client.store_auth_if_needed(&self.registry, &self.auth).await;
        let (body, digest) = self
            .client
            .pull_manifest_raw(
                &reference.client_ref(),
                &self.auth,
                &[MANIFEST_TYPE, DOCKER_MANIFEST_TYPE],
            )
            .await
            .map_err(|e| OciError::from_client(reference, e))?;
        let actual = sha256(&body);
        let expected = reference.digest.clone().unwrap_or_else(|| digest.clone());
        if actual != expected || actual != digest {
            return Err(OciError::Digest {
                reference: reference.to_string(),
                what: "the manifest".into(),
                expected,
                actual,
            });
        }
        Ok((body.to_vec(), digest))
    }
}

/// The one component layer of a manifest, its types and size checked.
fn component_layer<'m>(
    at: &OciRef,
    manifest: &'m OciImageManifest,
) -> Result<&'m OciDescriptor, OciError> {
    let bad = |reason: String| OciError::Layout { reference: at.to_string(), reason };
    if !CONFIG_TYPES.contains(&manifest.config.media_type.as_str()) {
        return Err(bad(format!(
            "its config is {}, not a Wasm artifact's ({}): is this a container image?",
            manifest.config.media_type, CONFIG_TYPES[0]
        )));
    }
    let [layer] = manifest.layers.as_slice() else {
        return Err(bad(format!(
            "a Wasm component artifact has exactly one layer; this one has {}",
            manifest.layers.len()
        )));
    };
    if layer.media_type != LAYER_TYPE && layer.media_type != LEGACY_LAYER_TYPE {
        return Err(bad(format!("its layer is {}, not {LAYER_TYPE}", layer.media_type)));
    }
    if layer.size < 0 || layer.size as u64 > MAX_LAYER_BYTES {
        return Err(bad(format!(
            "its layer is {} bytes, more than the {} MiB a skill may be",
            layer.size,
            MAX_LAYER_BYTES >> 20
        )));
    }
    Ok(layer)
}

/// `sha256:HEX` of `bytes`.
pub(crate) fn sha256(bytes: &[u8]) -> String {
    let hash = Sha256::digest(bytes);
    let mut out = String::with_capacity(71);
    out.push_str("sha256:");
    for b in hash {
        out.push_str(&format!("{b:02x}"));
    }
    out
}

/// A writer that refuses more than `limit` bytes, so a registry that sends
/// more than the manifest said cannot fill the memory.
pub(crate) struct Bounded {
    buf: Vec<u8>,
    limit: usize,
}

impl Bounded {
    pub(crate) fn new(limit: usize) -> Self {
        Bounded { buf: Vec::with_capacity(limit.min(1 << 20)), limit }
    }

    pub(crate) fn into_inner(self) -> Vec<u8> {
        self.buf
    }
}

impl tokio::io::AsyncWrite for Bounded {
    fn poll_write(
        mut self: Pin<&mut Self>,
        _: &mut Context<'_>,
        data: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        if self.buf.len() + data.len() > self.limit {
            return Poll::Ready(Err(std::io::Error::other(format!(
                "the registry sent more than the {} bytes the manifest gives for the layer",
                self.limit
            ))));
        }
        self.buf.extend_from_slice(data);
        Poll::Ready(Ok(data.len()))
    }
    fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Poll::Ready(Ok(()))
    }
    fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn manifest(config: &str, layers: &[(&str, i64)]) -> OciImageManifest {
        OciImageManifest {
            config: OciDescriptor { media_type: config.into(), ..OciDescriptor::default() },
            layers: layers
                .iter()
                .map(|(t, size)| OciDescriptor {
                    media_type: (*t).into(),
                    size: *size,
                    ..OciDescriptor::default()
                })
                .collect(),
            ..OciImageManifest::default()
        }
    }

    #[test]
    fn the_layouts_of_wasm_artifacts_are_read_and_others_refused_saying_why() {
        let at = OciRef::parse("oci://127.0.0.1:5000/skills/echo:1.0.0").unwrap();
        let ok: &[(&str, &str)] = &[
            (CONFIG_TYPES[0], LAYER_TYPE),
            (CONFIG_TYPES[1], LEGACY_LAYER_TYPE),
            (CONFIG_TYPES[0], LEGACY_LAYER_TYPE),
        ];
        for (config, layer) in ok {
            assert!(
                component_layer(&at, &manifest(config, &[(layer, 10)])).is_ok(),
                "{config} {layer}"
            );
        }
        let refused: &[(OciImageManifest, &str)] = &[
            (
                manifest(
                    "application/vnd.oci.image.config.v1+json",
                    &[("application/vnd.oci.image.layer.v1.tar+gzip", 10)],
                ),
                "is this a container image?",
            ),
            (manifest(CONFIG_TYPES[0], &[]), "exactly one layer; this one has 0"),
            (
                manifest(CONFIG_TYPES[0], &[(LAYER_TYPE, 1), (LAYER_TYPE, 1)]),
                "exactly one layer; this one has 2",
            ),
            (manifest(CONFIG_TYPES[0], &[("application/octet-stream", 1)]), "not application/wasm"),
            (
                manifest(CONFIG_TYPES[0], &[(LAYER_TYPE, (MAX_LAYER_BYTES + 1) as i64)]),
                "more than the 256 MiB",
            ),
            (manifest(CONFIG_TYPES[0], &[(LAYER_TYPE, -1)]), "bytes"),
        ];
        for (m, says) in refused {
            let err = component_layer(&at, m).unwrap_err().to_string();
            assert!(
                err.contains(says) && err.contains("oci://127.0.0.1:5000/skills/echo"),
                "{says}: {err}"
            );
        }
    }

    #[test]
    fn a_registry_that_sends_more_than_the_manifest_says_is_cut_off() {
        use tokio::io::AsyncWriteExt;
        let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
        rt.block_on(async {
            let mut out = Bounded { buf: Vec::new(), limit: 4 };
            out.write_all(b"abcd").await.unwrap();
            let err = out.write_all(b"e").await.unwrap_err().to_string();
            assert!(err.contains("more than the 4 bytes"), "{err}");
            assert_eq!(out.buf, b"abcd");
        });
    }
}
