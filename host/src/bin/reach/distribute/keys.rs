//! `reach skill keygen`: a signing key pair in cosign's file formats.

use agent_reach::oci::signature::{self, SigningKey};
use anyhow::Context as _;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Write `PREFIX.key` (encrypted, readable by you only) and `PREFIX.pub`;
/// refuse to replace either.
pub fn keygen(prefix: &Path, json: bool) -> anyhow::Result<ExitCode> {
    let private = with_suffix(prefix, "key");
    let public = with_suffix(prefix, "pub");
    for path in [&private, &public] {
        if path.exists() {
            anyhow::bail!(
                "{} exists; keygen never replaces a key (choose another --out)",
                path.display()
            );
        }
    }
    let password = signature::password_from_env();
    if password.is_empty() {
        eprintln!(
            "warning: {} is not set, so the private key is encrypted with an empty password",
            signature::PASSWORD_VARS[0]
        );
    }
    let key = SigningKey::generate().map_err(|e| anyhow::anyhow!(e))?;
    let pem = key.to_encrypted_pem(&password).map_err(|e| anyhow::anyhow!(e))?;
    write_new(&private, pem.as_bytes(), 0o600)?;
    write_new(&public, key.public().pem().as_bytes(), 0o644)?;
    if json {
        println!(
            "{}",
            serde_json::json!({
                "private_key": private,
                "public_key": public,
                "fingerprint": key.public().fingerprint(),
            })
        );
    } else {
        println!("wrote {} (private: keep it secret) and {}", private.display(), public.display());
        println!("fingerprint {}", key.public().fingerprint());
        println!(
            "operators trust it with  signed_by = \"{}\"  (or the .pub file's path)",
            key.public().fingerprint()
        );
    }
    Ok(ExitCode::SUCCESS)
}

fn with_suffix(prefix: &Path, ext: &str) -> PathBuf {
    let mut name = prefix.as_os_str().to_owned();
    name.push(".");
    name.push(ext);
    PathBuf::from(name)
}

/// Create `path` (never replacing a file) with `mode`.
fn write_new(path: &Path, bytes: &[u8], mode: u32) -> anyhow::Result<()> {
    use std::os::unix::fs::OpenOptionsExt as _;
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(mode)
        .open(path)
        .with_context(|| format!("cannot create {}", path.display()))?;
    file.write_all(bytes).with_context(|| format!("cannot write {}", path.display()))?;
    file.sync_all()?;
    Ok(())
}
