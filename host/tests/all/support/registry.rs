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

impl TestRegistry {
    /// Push an artifact of any layout, by hand over the distribution API
    /// (monolithic blob uploads, then the manifest), for layouts `reach`
    /// itself never writes. Returns the manifest's digest.
    pub fn push_raw(
        &self,
        repo: &str,
        tag: &str,
        config: (&str, &[u8]),
        layers: &[(&str, &[u8])],
    ) -> String {
        let descriptor = |media: &str, bytes: &[u8]| {
            let digest = self.upload(repo, bytes);
            serde_json::json!({"mediaType": media, "digest": digest, "size": bytes.len()})
        };
        let manifest = serde_json::json!({
            "schemaVersion": 2,
            "mediaType": "application/vnd.oci.image.manifest.v1+json",
            "config": descriptor(config.0, config.1),
            "layers": layers.iter().map(|(m, b)| descriptor(m, b)).collect::<Vec<_>>(),
        });
        let body = serde_json::to_vec(&manifest).unwrap();
        let (status, _) = self.http(
            "PUT",
            &format!("/v2/{repo}/manifests/{tag}"),
            "application/vnd.oci.image.manifest.v1+json",
            &body,
        );
        assert_eq!(status, 201, "manifest push");
        sha256(&body)
    }

    fn upload(&self, repo: &str, bytes: &[u8]) -> String {
        let digest = sha256(bytes);
        let (status, text) = self.http(
            "POST",
            &format!("/v2/{repo}/blobs/uploads/"),
            "application/octet-stream",
            b"",
        );
        assert_eq!(status, 202, "blob upload start: {text}");
        let location = text
            .lines()
            .find_map(|l| l.strip_prefix("Location: "))
            .expect("an upload location")
            .trim()
            .to_owned();
        let path = location.split_once(&self.addr).map_or(location.as_str(), |(_, p)| p);
        let sep = if path.contains('?') { '&' } else { '?' };
        let (status, text) = self.http(
            "PUT",
            &format!("{path}{sep}digest={digest}"),
            "application/octet-stream",
            bytes,
        );
        assert_eq!(status, 201, "blob upload: {text}");
        digest
    }

    /// One HTTP/1.1 request; the status and the response text.
    fn http(&self, method: &str, path: &str, content_type: &str, body: &[u8]) -> (u16, String) {
        use std::io::{Read, Write};
        let mut stream = TcpStream::connect(&self.addr).expect("connect");
        let head = format!(
            "{method} {path} HTTP/1.1\r\nHost: {}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
            self.addr,
            body.len()
        );
        stream.write_all(head.as_bytes()).and_then(|_| stream.write_all(body)).expect("send");
        let mut text = String::new();
        stream.read_to_string(&mut text).expect("read");
        let status = text.split(' ').nth(1).and_then(|s| s.parse().ok()).unwrap_or(0);
        (status, text)
    }
}

/// `sha256:HEX`.
pub fn sha256(bytes: &[u8]) -> String {
    use sha2::Digest;
    format!("sha256:{:x}", sha2::Sha256::digest(bytes))
}
