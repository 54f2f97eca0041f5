//! The bearer token of `reach mcp --http` on loopback when the operator set
//! none: made from the kernel's randomness, kept in a file only its owner
//! can read ([`TOKEN_FILE`]), so a client of the same user reads it and any
//! other user's process (or a page in a browser) cannot. The same file is
//! used again at the next start, and by every instance started in the same
//! folder, so a configured client keeps working; delete it for a new token.

use std::io::{Read as _, Write as _};
use std::path::{Path, PathBuf};

/// Where `reach mcp --http` keeps the token it made, under the working folder.
pub const TOKEN_FILE: &str = ".reach/mcp-token";

/// Random bytes in a new token (256 bits), written as 43 URL-safe characters.
const TOKEN_BYTES: usize = 32;

/// Why the token file could not be used.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TokenError {
    /// Reading, writing or checking failed.
    #[error("the MCP token file {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The file is not one this server made for its user alone.
    #[error(
        "refusing the MCP token file {path}: it {why}; delete it and a new one is made at the next \
         start"
    )]
    NotPrivate {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        why: String,
    },
}

/// The token in `path`, made (0600, created whole) when the file is missing.
/// An existing file is used only when it is a plain file of this user that
/// no one else can read, holding a token of the length made here.
pub fn load_or_create(path: &Path) -> Result<String, TokenError> {
    let io = |source| TokenError::Io { path: path.to_owned(), source };
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        crate::private_fs::create_dir_all(parent).map_err(io)?;
    }
    // Twice at most: when another instance writes the file between our
    // look and our write, we take the one it wrote.
    for _ in 0..2 {
        match read_private(path) {
            Err(TokenError::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => {
            }
            found => return found,
        }
        let token = new_token().map_err(io)?;
        // Written whole under a temporary name (NamedTempFile is 0600 from
        // the start), then linked into place without replacing a file
        // another instance put there first.
        let mut tmp =
            tempfile::NamedTempFile::new_in(path.parent().unwrap_or(Path::new("."))).map_err(io)?;
        tmp.write_all(token.as_bytes()).and_then(|()| tmp.as_file().sync_all()).map_err(io)?;
        match tmp.persist_noclobber(path) {
            Ok(_) => return Ok(token),
            Err(e) if e.error.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(io(e.error)),
        }
    }
    read_private(path)
}

fn new_token() -> std::io::Result<String> {
    use base64::Engine as _;
    let mut bytes = [0u8; TOKEN_BYTES];
    let mut filled = 0;
    while filled < TOKEN_BYTES {
        filled +=
            rustix::rand::getrandom(&mut bytes[filled..], rustix::rand::GetRandomFlags::empty())?;
    }
    Ok(base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes))
}

/// The token in an existing file, checked on the open file itself (no
/// symbolic link followed, so what is checked is what is read).
#[cfg(unix)]
fn read_private(path: &Path) -> Result<String, TokenError> {
    use std::os::unix::fs::{MetadataExt as _, OpenOptionsExt as _};
    let io = |source| TokenError::Io { path: path.to_owned(), source };
    let refuse = |why: String| Err(TokenError::NotPrivate { path: path.to_owned(), why });
    let mut file = match std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(rustix::fs::OFlags::NOFOLLOW.bits() as i32)
        .open(path)
    {
        Ok(file) => file,
        Err(e) if e.raw_os_error() == Some(rustix::io::Errno::LOOP.raw_os_error()) => {
            return refuse("is a symbolic link".to_owned());
        }
        Err(e) => return Err(io(e)),
    };
    let meta = file.metadata().map_err(io)?;
    let me = rustix::process::geteuid().as_raw();
    if !meta.is_file() {
        return refuse("is not a plain file".to_owned());
    }
    if meta.uid() != me {
        return refuse(format!("belongs to user {}, not to {me} who runs the server", meta.uid()));
    }
    if meta.mode() & 0o077 != 0 {
        return refuse(format!(
            "has mode {:o}, so other users may have read the token",
            meta.mode() & 0o777
        ));
    }
    let mut token = String::new();
    (&mut file).take(256).read_to_string(&mut token).map_err(io)?;
    let token = token.trim();
    if token.len() < 43
        || !token.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
    {
        return refuse(
            "does not hold a token made by reach (43 or more URL-safe characters)".to_owned(),
        );
    }
    Ok(token.to_owned())
}

#[cfg(not(unix))]
fn read_private(path: &Path) -> Result<String, TokenError> {
    let token = std::fs::read_to_string(path)
        .map_err(|source| TokenError::Io { path: path.to_owned(), source })?;
    Ok(token.trim().to_owned())
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt as _;

    #[test]
    fn a_token_is_made_private_and_used_again() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(".reach/mcp-token");
        let token = load_or_create(&path).unwrap();
        assert_eq!(token.len(), 43, "{token}");
        assert_eq!(std::fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o600);
        assert_eq!(
            std::fs::metadata(path.parent().unwrap()).unwrap().permissions().mode() & 0o777,
            0o700
        );
        assert_eq!(load_or_create(&path).unwrap(), token, "the next start uses the same token");
        std::fs::remove_file(&path).unwrap();
        assert_ne!(load_or_create(&path).unwrap(), token, "deleting the file makes a new one");
    }

    #[test]
    fn a_token_file_others_may_read_or_a_link_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("mcp-token");
        load_or_create(&path).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        let err = load_or_create(&path).unwrap_err().to_string();
        assert!(err.contains("mode 644") && err.contains("delete it"), "{err}");

        let elsewhere = dir.path().join("planted");
        std::fs::write(&elsewhere, "A".repeat(43)).unwrap();
        std::fs::set_permissions(&elsewhere, std::fs::Permissions::from_mode(0o600)).unwrap();
        let link = dir.path().join("linked-token");
        std::os::unix::fs::symlink(&elsewhere, &link).unwrap();
        let err = load_or_create(&link).unwrap_err().to_string();
        assert!(err.contains("symbolic link"), "{err}");

        let short = dir.path().join("short-token");
        std::fs::write(&short, "guessable").unwrap();
        std::fs::set_permissions(&short, std::fs::Permissions::from_mode(0o600)).unwrap();
        assert!(load_or_create(&short).unwrap_err().to_string().contains("43 or more"));
    }
}
