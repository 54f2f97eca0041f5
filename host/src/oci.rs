//! Skills from OCI registries: pull and publish the standard Wasm OCI
//! artifact, pinned by digest and verified by cosign-compatible signatures.
//!
//! - [`OciRef`]: `oci://REGISTRY/REPO[:TAG][@sha256:…]`, the registry always
//!   written out; plain HTTP only for a loopback registry.
//! - [`Registry`]: one registry, with the credentials from the environment or
//!   the Docker config file ([`Credentials`], never printed).
//! - [`Registry::pull`] resolves a tag to its manifest digest and fetches the
//!   one component layer, every byte checked against its digest;
//!   [`Registry::push`] writes the layout the Bytecode Alliance's tools
//!   write (config `application/vnd.wasm.config.v0+json` with the
//!   component's imports and exports, one `application/wasm` layer).
//! - [`signature`]: keys in cosign's encrypted format, signatures as
//!   cosign's `sha256-DIGEST.sig` tag (no referrers API needed), verified
//!   against the key an operator names in the table.
//! - [`Provenance`]: what `reach skill add` learned about a file (origin,
//!   digests, the verified signature), kept beside it so the host checks the
//!   signature again, offline, every time it loads the skill.
//!
//! Nothing here grants anything: an installed skill gets what the table
//! says, and a table that names a signer refuses a skill whose signature is
//! missing or made by another key.

//! Without the `oci` feature only [`OciRef`] is here (the table names
//! origins with it); a table that asks for a signature then fails closed.

#[cfg(feature = "oci")]
mod artifact;
#[cfg(feature = "oci")]
pub mod bundle;
#[cfg(feature = "oci")]
mod client;
mod error;
#[cfg(feature = "oci")]
pub mod provenance;
mod reference;
#[cfg(feature = "oci")]
pub mod signature;

#[cfg(feature = "oci")]
pub use artifact::{MAX_LAYER_BYTES, Pulled, Pushed};
#[cfg(feature = "oci")]
pub use client::{Credentials, PASSWORD_VAR, Registry, USERNAME_VAR};
pub use error::OciError;
#[cfg(feature = "oci")]
pub use provenance::Provenance;
pub use reference::{OciRef, SCHEME};
