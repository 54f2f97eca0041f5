//! The key that signs the head of every audit log: Ed25519, made on first
//! use in the runs folder (`.reach/runs/.signing-key`, `0600`, never inside
//! a grant — the table refuses a runs folder a skill could reach).
//!
//! Anyone who can act as the host's user can read this key, so a signature
//! proves a log unchanged only against someone who cannot: ship logs off
//! the machine with the public key (`reach runs pubkey`) and verify there
//! with `reach runs verify --key`.

use ed25519_dalek::{Signature, Signer as _, SigningKey, Verifier as _, VerifyingKey};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// The key file's name in the runs folder.
pub const KEY_FILE: &str = ".signing-key";

/// What the key file starts with: which format the rest is.
const KEY_HEADER: &str = "agent-reach audit signing key v1 (ed25519 seed, hex)";

/// The audit logs' signing key.
#[derive(Clone)]
pub struct AuditKey {
    signing: SigningKey,
    path: PathBuf,
}

impl std::fmt::Debug for AuditKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never the secret half.
        f.debug_struct("AuditKey")
            .field("public", &self.public_hex())
            .field("path", &self.path)
            .finish()
    }
}

impl AuditKey {
    /// The key of the runs folder `dir`, made (`0600`) when there is none.
    /// Two hosts starting at once agree on one key: it is written aside and
    /// linked into place, so nobody reads a half-written key.
    pub fn load_or_create(dir: &Path) -> io::Result<AuditKey> {
        let path = dir.join(KEY_FILE);
        match AuditKey::load(&path) {
            Err(err) if err.kind() == io::ErrorKind::NotFound => {}
            other => return other,
        }
        crate::private_fs::create_dir_all(dir)?;
        let mut seed = [0u8; 32];
        getrandom::fill(&mut seed).map_err(|e| io::Error::other(format!("no randomness: {e}")))?;
        let aside = dir.join(format!("{KEY_FILE}.{}.tmp", std::process::id()));
        let written = crate::private_fs::create_new_append(&aside).and_then(|mut file| {
            file.write_all(format!("{KEY_HEADER}\n{}\n", hex(&seed)).as_bytes())?;
            file.sync_all()
        });
        let linked = written.and_then(|()| match std::fs::hard_link(&aside, &path) {
            Err(err) if err.kind() == io::ErrorKind::AlreadyExists => Ok(()),
            other => other,
        });
        let _ = std::fs::remove_file(&aside);
        linked?;
        let key = AuditKey::load(&path)?;
        tracing::info!(path = %path.display(), public = %key.public_hex(), "made the audit signing key");
        Ok(key)
    }

    /// The key in `path`.
    pub fn load(path: &Path) -> io::Result<AuditKey> {
        let text = std::fs::read_to_string(path)?;
        let bad = |why: &str| {
            io::Error::new(
                io::ErrorKind::InvalidData,
                format!(
                    "{} is not an audit signing key ({why}); move it away and a new key is made \
                     (logs signed by the old one then verify only with `--key` and its public key)",
                    path.display()
                ),
            )
        };
        let mut lines = text.lines();
        if lines.next() != Some(KEY_HEADER) {
            return Err(bad("its first line is not the header"));
        }
        let seed =
            lines.next().and_then(|l| unhex::<32>(l.trim())).ok_or_else(|| bad("no seed"))?;
        Ok(AuditKey { signing: SigningKey::from_bytes(&seed), path: path.to_owned() })
    }

    /// The file it is kept in.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The public key, 64 hex characters: what `reach runs pubkey` prints and
    /// each signed record names.
    pub fn public_hex(&self) -> String {
        hex(self.signing.verifying_key().as_bytes())
    }

    /// The public half, to verify with.
    pub fn public(&self) -> PublicKey {
        PublicKey(self.signing.verifying_key())
    }

    /// The signature of `message`, hex.
    pub(super) fn sign(&self, message: &[u8]) -> String {
        hex(&self.signing.sign(message).to_bytes())
    }
}

/// A public key that audit heads are checked against.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PublicKey(VerifyingKey);

impl PublicKey {
    /// From 64 hex characters (what `reach runs pubkey` prints).
    pub fn from_hex(text: &str) -> Option<PublicKey> {
        VerifyingKey::from_bytes(&unhex::<32>(text.trim())?).ok().map(PublicKey)
    }

    /// As 64 hex characters.
    pub fn to_hex(&self) -> String {
        hex(self.0.as_bytes())
    }

    /// Whether `signature` (hex) is this key's over `message`.
    pub fn verifies(&self, message: &[u8], signature: &str) -> bool {
        unhex::<64>(signature)
            .is_some_and(|s| self.0.verify(message, &Signature::from_bytes(&s)).is_ok())
    }
}

/// Lowercase hex of `bytes`.
pub(super) fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write as _;
    bytes.iter().fold(String::with_capacity(bytes.len() * 2), |mut out, b| {
        let _ = write!(out, "{b:02x}");
        out
    })
}

fn unhex<const N: usize>(text: &str) -> Option<[u8; N]> {
    if text.len() != N * 2 || !text.is_ascii() {
        return None;
    }
    let mut out = [0u8; N];
    for (i, byte) in out.iter_mut().enumerate() {
        *byte = u8::from_str_radix(&text[i * 2..i * 2 + 2], 16).ok()?;
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_key_is_made_once_private_and_signs_what_its_public_half_verifies() {
        let dir = tempfile::tempdir().expect("tempdir");
        let key = AuditKey::load_or_create(dir.path()).expect("made");
        let again = AuditKey::load_or_create(dir.path()).expect("loaded");
        assert_eq!(key.public_hex(), again.public_hex(), "the same key the second time");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(key.path()).expect("stat").permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        let signature = key.sign(b"head");
        let public = PublicKey::from_hex(&key.public_hex()).expect("hex");
        assert!(public.verifies(b"head", &signature));
        assert!(!public.verifies(b"heads", &signature), "another message");
        let other = AuditKey::load_or_create(tempfile::tempdir().expect("dir").path()).expect("k");
        assert!(!other.public().verifies(b"head", &signature), "another key");
        assert!(!format!("{key:?}").contains(&hex(&key.signing.to_bytes())), "no secret in Debug");
    }

    #[test]
    fn a_damaged_key_file_is_an_error_that_says_what_to_do() {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::write(dir.path().join(KEY_FILE), "garbage").expect("write");
        let err = AuditKey::load_or_create(dir.path()).expect_err("refused");
        assert!(err.to_string().contains("move it away"), "{err}");
    }
}
