//! Shared helpers for the integration tests: the real skill components
//! built from source, a throw-away workspace with a skills folder and a
//! permission table, and a small HTTP server on 127.0.0.1.

pub mod openai;
pub mod pages;
pub mod recorder;

use agent_reach::policy::Policy;
use agent_reach::runtime::RuntimeConfig;
use agent_reach::{AlwaysConfirm, Host, ToolFailure};
use std::io::{BufRead, BufReader, Write};
use std::net::{SocketAddr, TcpListener};
use std::path::{Path, PathBuf};

/// The workspace root.
pub fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("tests/ has a parent").to_owned()
}

/// A skill component built by `just skills` (`cargo build --release --target wasm32-wasip2`).
///
/// # Panics
/// When it has not been built, with the command that builds it.
pub fn wasm(crate_name: &str) -> PathBuf {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| workspace().join("target"));
    let path =
        target.join("wasm32-wasip2/release").join(format!("{}.wasm", crate_name.replace('-', "_")));
    assert!(
        path.exists(),
        "{} is missing: build the skills first with `just skills` (cargo build --release --target wasm32-wasip2 --workspace --exclude agent-reach --exclude agent-reach-tests)",
        path.display()
    );
    path
}

/// Copy of the `echo` test skill with its name and version rewritten in
/// place (same length, so the component stays valid).
pub fn echo_variant(name: &str, version: &str) -> Vec<u8> {
    let bytes = std::fs::read(wasm("test-skill-echo")).expect("read echo skill");
    let from = b"@@name=echo____________@@version=1.0.0   @@";
    let to = format!("@@name={name:_<16}@@version={version:<8}@@");
    assert_eq!(to.len(), from.len(), "name ≤ 16 and version ≤ 8 characters");
    let at = bytes.windows(from.len()).position(|w| w == from).expect("stamp present in echo.wasm");
    let mut out = bytes.clone();
    out[at..at + from.len()].copy_from_slice(to.as_bytes());
    out
}

/// A temporary folder with `skills/`, `reach.toml` and any files a test needs.
pub struct Workspace {
    /// Root of the temporary folder (removed on drop).
    pub dir: tempfile::TempDir,
}

impl Workspace {
    /// Empty workspace with an empty `skills/` folder.
    pub fn new() -> Self {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::create_dir(dir.path().join("skills")).expect("skills dir");
        Workspace { dir }
    }

    /// Absolute path of `rel` inside the workspace.
    pub fn path(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }

    /// Install a built skill (by crate name) into `skills/` as
    /// `<skill name>.wasm`, the only file name the registry accepts for it
    /// (`skill-http-api` → `http_api.wasm`, `test-skill-probe` → `probe.wasm`).
    pub fn install(&self, crate_name: &str) -> &Self {
        let skill = crate_name
            .strip_prefix("test-skill-")
            .or_else(|| crate_name.strip_prefix("skill-"))
            .unwrap_or(crate_name);
        let file = format!("{}.wasm", skill.replace('-', "_"));
        std::fs::copy(wasm(crate_name), self.path("skills").join(file)).expect("copy skill");
        self
    }

    /// Write raw bytes as `skills/<file>`.
    pub fn install_bytes(&self, file: &str, bytes: &[u8]) -> &Self {
        std::fs::write(self.path("skills").join(file), bytes).expect("write skill");
        self
    }

    /// Write a file (creating folders).
    pub fn write(&self, rel: &str, content: &str) -> PathBuf {
        let path = self.path(rel);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(&path, content).expect("write");
        path
    }

    /// Create a folder.
    pub fn mkdir(&self, rel: &str) -> PathBuf {
        let path = self.path(rel);
        std::fs::create_dir_all(&path).expect("mkdir");
        path
    }

    /// Write `reach.toml` and return its path.
    pub fn policy(&self, toml: &str) -> PathBuf {
        self.write("reach.toml", toml)
    }

    /// Load a host over this workspace with `policy_toml`, sharing one
    /// compile cache across tests so each component compiles once.
    pub async fn host(&self, policy_toml: &str) -> Host {
        let policy_path = self.policy(policy_toml);
        let policy = Policy::load(&policy_path).unwrap_or_else(|e| panic!("policy: {e}"));
        let config = RuntimeConfig {
            cache_dir: Some(workspace().join("target/test-compile-cache")),
            pooling: true,
        };
        Host::load(config, policy, &self.path("skills")).await.expect("host loads")
    }

    /// [`Workspace::host`] as if `reach` were started in this folder: skills
    /// resolve relative paths (`notes/a.md`) against it.
    pub async fn host_here(&self, policy_toml: &str) -> Host {
        let policy_path = self.policy(policy_toml);
        let policy = Policy::load(&policy_path)
            .unwrap_or_else(|e| panic!("policy: {e}"))
            .with_working_dir(self.path(""));
        let config = RuntimeConfig {
            cache_dir: Some(workspace().join("target/test-compile-cache")),
            pooling: true,
        };
        Host::load(config, policy, &self.path("skills")).await.expect("host loads")
    }
}

impl Default for Workspace {
    fn default() -> Self {
        Self::new()
    }
}

/// Call `skill.tool` with JSON arguments, confirming `confirm`-level tools.
pub async fn call(
    host: &Host,
    target: &str,
    args: serde_json::Value,
) -> Result<String, ToolFailure> {
    let (skill, tool) = target.split_once('.').expect("SKILL.TOOL");
    host.invoke(skill, tool, &args.to_string(), &AlwaysConfirm).await
}

/// A minimal HTTP/1.1 server on 127.0.0.1 for network tests. Routes:
/// `/redirect?to=URL` answers 302 to URL; `/status/N` answers N;
/// anything else answers 200 with `hello from <path>`. Every request's
/// head is recorded. The thread ends with the test process.
pub struct TestServer {
    /// Where it listens.
    pub addr: SocketAddr,
}

impl TestServer {
    /// Start serving on an ephemeral port.
    pub fn start() -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1");
        let addr = listener.local_addr().expect("addr");
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { continue };
                std::thread::spawn(move || {
                    let mut reader = BufReader::new(stream.try_clone().expect("clone"));
                    let mut request_line = String::new();
                    if reader.read_line(&mut request_line).is_err() {
                        return;
                    }
                    loop {
                        let mut line = String::new();
                        if reader.read_line(&mut line).map_or(true, |n| n == 0) || line == "\r\n" {
                            break;
                        }
                    }
                    let path = request_line.split_whitespace().nth(1).unwrap_or("/").to_owned();
                    let response = if let Some(to) = path.strip_prefix("/redirect?to=") {
                        format!(
                            "HTTP/1.1 302 Found\r\nLocation: {to}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
                        )
                    } else if let Some(code) = path.strip_prefix("/status/") {
                        format!(
                            "HTTP/1.1 {code} X\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
                        )
                    } else {
                        let body = format!("hello from {path}");
                        format!(
                            "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                            body.len()
                        )
                    };
                    let _ = stream.write_all(response.as_bytes());
                });
            }
        });
        TestServer { addr }
    }

    /// `http://127.0.0.1:PORT<path>`.
    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }
}
