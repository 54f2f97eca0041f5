//! Signatures checked offline: the verdicts and what a refusal names.

use super::*;

const DIGEST: &str = "sha256:1111111111111111111111111111111111111111111111111111111111111111";
const OTHER: &str = "sha256:2222222222222222222222222222222222222222222222222222222222222222";

/// A signature by `key` over a cosign payload for `digest`, naming the signer or not.
fn signed(key: &SigningKey, digest: &str, name_signer: bool) -> Found {
    let optional = name_signer.then(|| Optional {
        creator: None,
        timestamp: None,
        extra: BTreeMap::from([(SIGNER_KEY_FIELD.to_owned(), key.public().pem().into())]),
    });
    let payload = serde_json::to_vec(&SimpleSigning {
        critical: Critical {
            identity: Identity { docker_reference: "127.0.0.1:5000/skills/echo".into() },
            image: Image { docker_manifest_digest: digest.into() },
            type_name: PAYLOAD_TYPE.into(),
        },
        optional,
    })
    .unwrap();
    Found { signature: key.sign(&payload).unwrap(), payload: B64.encode(payload) }
}

#[test]
fn a_signature_by_the_named_key_over_the_digest_verifies() {
    let key = SigningKey::generate().unwrap();
    let found = [signed(&key, DIGEST, true)];
    assert_eq!(verify(DIGEST, &found, key.public()).unwrap(), found[0]);
    // Cosign's signatures carry no signer: they verify the same way.
    let cosign_style = [signed(&key, DIGEST, false)];
    assert!(verify(DIGEST, &cosign_style, key.public()).is_ok());
}

#[test]
fn a_signature_by_another_key_is_refused_naming_both() {
    let ours = SigningKey::generate().unwrap();
    let theirs = SigningKey::generate().unwrap();
    let err = verify(DIGEST, &[signed(&theirs, DIGEST, true)], ours.public()).unwrap_err();
    assert!(err.contains(ours.public().fingerprint()), "names the expected key: {err}");
    assert!(err.contains(theirs.public().fingerprint()), "names the signer: {err}");
    // Without a signer named in the payload, the refusal says it cannot tell.
    let err = verify(DIGEST, &[signed(&theirs, DIGEST, false)], ours.public()).unwrap_err();
    assert!(
        err.contains(ours.public().fingerprint()) && err.contains("a key it does not name"),
        "{err}"
    );
}

#[test]
fn a_signature_for_another_digest_is_refused() {
    let key = SigningKey::generate().unwrap();
    let err = verify(DIGEST, &[signed(&key, OTHER, true)], key.public()).unwrap_err();
    assert!(err.contains("names another digest"), "{err}");
}

#[test]
fn a_changed_payload_or_signature_is_refused() {
    let key = SigningKey::generate().unwrap();
    let mut found = signed(&key, DIGEST, true);
    let mut payload = B64.decode(&found.payload).unwrap();
    payload.push(b' ');
    found.payload = B64.encode(payload);
    assert!(verify(DIGEST, &[found], key.public()).is_err());
    let mut found = signed(&key, DIGEST, true);
    found.signature = signed(&key, OTHER, true).signature;
    assert!(verify(DIGEST, &[found], key.public()).is_err());
    // A signer that claims a key whose signature this is not.
    let impostor = SigningKey::generate().unwrap();
    let mut found = signed(&key, DIGEST, false);
    let mut claim: SimpleSigning =
        serde_json::from_slice(&B64.decode(&found.payload).unwrap()).unwrap();
    claim.optional = Some(Optional {
        extra: BTreeMap::from([(SIGNER_KEY_FIELD.to_owned(), impostor.public().pem().into())]),
        ..Optional::default()
    });
    found.payload = B64.encode(serde_json::to_vec(&claim).unwrap());
    let err = verify(DIGEST, &[found], impostor.public()).unwrap_err();
    assert!(err.contains("does not verify with the key it names"), "{err}");
}

#[test]
fn no_signature_says_which_tag_is_missing() {
    let key = SigningKey::generate().unwrap();
    let err = verify(DIGEST, &[], key.public()).unwrap_err();
    assert!(
        err.contains(&signature_tag(DIGEST)) && err.contains(key.public().fingerprint()),
        "{err}"
    );
    assert_eq!(signature_tag(DIGEST), format!("sha256-{}.sig", &DIGEST[7..]));
}

#[test]
fn keys_round_trip_through_cosigns_file_formats() {
    let key = SigningKey::generate().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let private = dir.path().join("cosign.key");
    std::fs::write(&private, key.to_encrypted_pem(b"pw").unwrap().as_bytes()).unwrap();
    let text = std::fs::read_to_string(&private).unwrap();
    assert!(text.starts_with("-----BEGIN ENCRYPTED SIGSTORE PRIVATE KEY-----"), "{text}");
    let back = SigningKey::read(&private, b"pw").unwrap();
    assert_eq!(back.public().fingerprint(), key.public().fingerprint());
    let err = SigningKey::read(&private, b"wrong").unwrap_err().to_string();
    assert!(err.contains("cannot decrypt") && err.contains(PASSWORD_VARS[0]), "{err}");
    let public = dir.path().join("cosign.pub");
    std::fs::write(&public, key.public().pem()).unwrap();
    assert_eq!(PublicKey::read(&public).unwrap().fingerprint(), key.public().fingerprint());
    std::fs::write(&public, text).unwrap();
    let err = PublicKey::read(&public).unwrap_err().to_string();
    assert!(err.contains("not a PUBLIC KEY"), "{err}");
}
