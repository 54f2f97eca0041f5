//! A real OCI registry for the tests: the Distribution registry (Debian's
//! `docker-registry`, installed by `.ci/setup`) on 127.0.0.1 with its
//! storage in a temporary folder, stopped when dropped.

use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub struct TestRegistry {
    /// `127.0.0.1:PORT`.
    pub addr: String,
    /// Where it keeps blobs and manifests.
    pub storage: PathBuf,
    child: Child,
    _dir: tempfile::TempDir,
}

impl TestRegistry {
    pub fn start() -> TestRegistry {
        Self::start_with(None)
    }

    /// A registry that wants this user name and password (htpasswd, bcrypt).
    pub fn with_login(user: &str, password: &str) -> TestRegistry {
        Self::start_with(Some((user, password)))
    }

    fn start_with(login: Option<(&str, &str)>) -> TestRegistry {
        let dir = tempfile::tempdir().expect("registry dir");
        let auth = match login {
            None => String::new(),
            Some((user, password)) => {
                let out = Command::new("htpasswd")
                    .args(["-Bbn", user, password])
                    .output()
                    .expect("htpasswd (Debian's apache2-utils; .ci/setup installs it)");
                assert!(out.status.success(), "{out:?}");
                let file = dir.path().join("htpasswd");
                std::fs::write(&file, out.stdout).expect("htpasswd file");
                format!("auth:\n  htpasswd:\n    realm: test\n    path: {}\n", file.display())
            }
        };
        let storage = dir.path().join("data");
        let port = free_port();
        let addr = format!("127.0.0.1:{port}");
        let config = dir.path().join("config.yml");
        std::fs::write(
            &config,
            format!(
                "version: 0.1\nlog:\n  level: error\nstorage:\n  filesystem:\n    rootdirectory: {}\n  \
                 delete:\n    enabled: true\nhttp:\n  addr: {addr}\n{auth}",
                storage.display()
            ),
        )
        .expect("registry config");
        let child = Command::new("docker-registry")
            .arg("serve")
            .arg(&config)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect(
                "start docker-registry (Debian's docker-registry package; .ci/setup installs it)",
            );
        let registry = TestRegistry { addr, storage, child, _dir: dir };
        let deadline = Instant::now() + Duration::from_secs(20);
        while TcpStream::connect(&registry.addr).is_err() {
            assert!(
                Instant::now() < deadline,
                "docker-registry did not start on {}",
                registry.addr
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        registry
    }

    /// `oci://127.0.0.1:PORT/PATH`.
    pub fn url(&self, path: &str) -> String {
        format!("oci://{}/{path}", self.addr)
    }

    /// The file the registry serves for a blob (`sha256:…`).
    pub fn blob_file(&self, digest: &str) -> PathBuf {
        let hex = digest.trim_start_matches("sha256:");
        self.storage.join("docker/registry/v2/blobs/sha256").join(&hex[..2]).join(hex).join("data")
    }
}

impl Drop for TestRegistry {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A port nothing listens on (bound, then released).
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").expect("bind").local_addr().expect("addr").port()
}

/// Every `.wasm` in `dir`, by name.
pub fn wasm_files(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .map(|r| {
            r.filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.ends_with(".wasm"))
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}
