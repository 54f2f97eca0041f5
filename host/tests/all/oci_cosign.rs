//! Our signatures against an independent cosign implementation, both ways,
//! on a real Distribution registry on 127.0.0.1.
//!
//! No cosign command line installs here (cosign is on none of the package
//! registries this project reaches, and Debian builds `skopeo` with sigstore
//! disabled), so the other side is the Sigstore project's Rust cosign
//! client (`sigstore::cosign::Client`): its own registry code finds the
//! signature at the `.sig` tag, and its own verifier checks it with the
//! public key — none of our signature code is on that path.

use crate::oci_cli::{Publisher, failed, fingerprint_of, json, ok, operator, reach};
use crate::support::registry::TestRegistry;
use sigstore::cosign::constraint::PrivateKeySigner;
use sigstore::cosign::verification_constraint::{PublicKeyVerifier, VerificationConstraintVec};
use sigstore::cosign::{
    Client, ClientBuilder, Constraint, CosignCapabilities, SignatureLayer, verify_constraints,
};
use sigstore::crypto::SigningScheme;
use sigstore::registry::{Auth, ClientConfig, ClientProtocol, OciReference};

/// The Sigstore project's cosign client, plain HTTP to the test registry only.
fn cosign_client(registry: &TestRegistry) -> Client {
    // Its HTTP client wants the process's rustls provider (as `reach` installs one).
    let _ = rustls::crypto::ring::default_provider().install_default();
    ClientBuilder::default()
        .with_oci_client_config(ClientConfig {
            protocol: ClientProtocol::HttpsExcept(vec![registry.addr.clone()]),
            ..ClientConfig::default()
        })
        .build()
        .expect("the cosign client")
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime")
}

/// `reach`'s `oci://HOST/REPO:TAG` as the cosign client writes it.
fn cosign_ref(reference: &str) -> OciReference {
    reference.trim_start_matches("oci://").parse().expect("a reference")
}

/// Whether the cosign client finds a signature by the key in `pub_file` on `reference`.
fn cosign_verifies(registry: &TestRegistry, reference: &str, pub_file: &str) -> bool {
    let key = std::fs::read(pub_file).expect("public key");
    let constraints: VerificationConstraintVec =
        vec![Box::new(PublicKeyVerifier::try_from(&key).expect("a cosign public key"))];
    let layers = runtime()
        .block_on(
            cosign_client(registry)
                .trusted_signature_layers(&Auth::Anonymous, &cosign_ref(reference)),
        )
        .expect("signature layers");
    verify_constraints(&layers, constraints.iter()).is_ok()
}

#[test]
fn a_signature_reach_made_verifies_with_the_cosign_client_and_only_with_its_key() {
    let registry = TestRegistry::start();
    let publisher = Publisher::new("acme");
    let stranger = Publisher::new("stranger");
    let repo = registry.url("skills/echo");
    let pushed = publisher.publish("1.0.0", &repo, Some("acme"));

    let reference = format!("{repo}:1.0.0");
    assert!(cosign_verifies(&registry, &reference, &publisher.key("acme", "pub")));
    assert!(!cosign_verifies(&registry, &reference, &stranger.key("stranger", "pub")));
    // The signature vouches for the manifest the tag resolves to.
    let layers = runtime()
        .block_on(
            cosign_client(&registry)
                .trusted_signature_layers(&Auth::Anonymous, &cosign_ref(&reference)),
        )
        .unwrap();
    assert_eq!(layers.len(), 1, "{layers:?}");
    assert_eq!(
        layers[0].simple_signing.critical.image.docker_manifest_digest,
        pushed["manifest_digest"].as_str().unwrap()
    );
}

#[test]
fn a_signature_the_cosign_client_made_is_verified_by_reach_add_and_at_load() {
    let registry = TestRegistry::start();
    let publisher = Publisher::new("acme");
    let repo = registry.url("skills/echo");
    publisher.publish("1.0.0", &repo, None);
    let reference = format!("{repo}:1.0.0");

    // Signed by the cosign client with a key of its own making.
    let signer = SigningScheme::ECDSA_P256_SHA256_ASN1.create_signer().expect("a key");
    let pem = signer.to_sigstore_keypair().unwrap().public_key_to_pem().unwrap();
    let pub_file = publisher.path().join("cosign.pub");
    std::fs::write(&pub_file, &pem).unwrap();
    runtime().block_on(async {
        let mut client = cosign_client(&registry);
        let image = cosign_ref(&reference);
        let (sig_image, digest) = client.triangulate(&image, &Auth::Anonymous).await.unwrap();
        let mut layer = SignatureLayer::new_unsigned(&image, &digest).unwrap();
        assert!(PrivateKeySigner::new_with_signer(signer).add_constraint(&mut layer).unwrap());
        client.push_signature(None, &Auth::Anonymous, &sig_image, vec![layer]).await.unwrap();
    });

    // Another key is refused, naming the key it wanted.
    let op = operator("");
    let other = publisher.key("acme", "pub");
    let err = failed(&reach(op.path(), &["skill", "add", &reference, "--key", &other]));
    assert!(
        err.contains("not signed by the required key")
            && err.contains(&fingerprint_of(&publisher, "acme")),
        "{err}"
    );

    // The cosign client's key is accepted.
    let key = pub_file.display().to_string();
    let added = json(&reach(op.path(), &["skill", "add", &reference, "--key", &key, "--json"]));
    let fingerprint = agent_reach::policy::key_fingerprint(&pem).unwrap();
    assert_eq!(added["signature"]["signer"], fingerprint.as_str(), "{added:#}");

    // The printed lines name the signer by fingerprint; at load the key comes
    // from the origin record, so a cosign signature (which names no key)
    // still serves, and is still checked.
    let lines = added["table_lines"].as_str().unwrap();
    std::fs::write(op.path().join("reach.toml"), format!("{lines}level = \"auto\"\n")).unwrap();
    assert!(ok(&reach(op.path(), &["call", "echo.echo", "{\"a\":1}"])).contains("\"a\":1"));

    // Adding afresh under that fingerprint alone cannot work: the signature
    // names no key, so the refusal says to name the key file instead.
    let fresh = operator(&format!("[skills.echo]\nsigned_by = \"{fingerprint}\"\n"));
    let err = failed(&reach(fresh.path(), &["skill", "add", &reference]));
    assert!(err.contains("name their public key file"), "{err}");
}
