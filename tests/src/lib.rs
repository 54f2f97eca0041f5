//! What the integration tests of every crate share: the real skill
//! components built from source ([`guests`]), a throw-away workspace with a
//! skills folder and a permission table, the one way a test builds an
//! agent ([`agent`], through the library's front door), and the one HTTP
//! test server ([`server`]) with the servers made of it: a scripted model
//! ([`openai`]), fixture pages ([`pages`]), recorders ([`recorder`],
//! [`TestServer`]).

pub mod guests;
pub mod openai;
pub mod pages;
pub mod recorder;
pub mod server;

use agent_reach::harness::{RunConfig, RunReport};
use agent_reach::model::Model;
use agent_reach::policy::Policy;
use agent_reach::runtime::RuntimeConfig;
use agent_reach::{Agent, AgentBuilder, AlwaysConfirm, AuditSink, Confirmer, Host, ToolFailure};
use guests::Guest;
use server::{Response, Server};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The workspace root.
pub fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("tests/ has a parent").to_owned()
}

/// Copy of the `echo` test skill with its name and version rewritten in
/// place (same length, so the component stays valid).
pub fn echo_variant(name: &str, version: &str) -> Vec<u8> {
    let bytes = guests::TEST_SKILL_ECHO.bytes();
    let from = b"@@name=echo____________@@version=1.0.0   @@";
    let to = format!("@@name={name:_<16}@@version={version:<8}@@");
    assert_eq!(to.len(), from.len(), "name ≤ 16 and version ≤ 8 characters");
    let at = bytes.windows(from.len()).position(|w| w == from).expect("stamp present in echo.wasm");
    let mut out = bytes.clone();
    out[at..at + from.len()].copy_from_slice(to.as_bytes());
    out
}

/// An agent over `host` asking `model`, built the way an embedder builds
/// one ([`Agent::builder`]): the one place the tests do, so they follow the
/// library's front door. `runs` is the folder of the run logs (`None`: no
/// log).
pub fn agent(
    host: impl Into<Arc<Host>>,
    model: impl Model + 'static,
    confirmer: impl Confirmer + 'static,
    config: RunConfig,
    runs: Option<PathBuf>,
) -> AgentBuilder {
    Agent::builder(host, model)
        .confirmer(confirmer)
        .config(config)
        .audit(runs.map_or(AuditSink::Disabled, AuditSink::Dir))
}

/// Every file under `dir`, at any depth (in no particular order).
pub fn files_under(dir: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .flat_map(|e| {
            let path = e.expect("entry").path();
            if path.is_dir() { files_under(&path) } else { vec![path] }
        })
        .collect()
}

/// Runs `task` as run `run_id` with the agent `builder` makes.
pub async fn run(builder: AgentBuilder, run_id: &str, task: &str) -> RunReport {
    let agent = builder.build().expect("the agent builds");
    agent.run_with_id(run_id, task).await.expect("the run starts")
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

    /// Install a built guest into `skills/` as `<skill name>.wasm`.
    pub fn install(&self, guest: Guest) -> &Self {
        std::fs::copy(guest.path(), self.path("skills").join(guest.file_name()))
            .expect("copy skill");
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

/// A web server on 127.0.0.1 for network tests. Routes:
/// `/redirect?to=URL` answers 302 to URL; `/status/N` answers N;
/// anything else answers 200 with `hello from <path>`.
pub struct TestServer {
    /// Where it listens.
    pub addr: SocketAddr,
}

impl TestServer {
    /// Start serving on an ephemeral port.
    pub fn start() -> Self {
        let server = Server::start(|request| {
            let path = request.target.as_str();
            if let Some(to) = path.strip_prefix("/redirect?to=") {
                Response::new(302).header("Location", to).close()
            } else if let Some(code) = path.strip_prefix("/status/") {
                Response::new(code.parse().expect("/status/N")).close()
            } else {
                Response::new(200)
                    .header("Content-Type", "text/plain")
                    .close()
                    .body(format!("hello from {path}"))
            }
        });
        TestServer { addr: server.addr }
    }

    /// `http://127.0.0.1:PORT<path>`.
    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }
}
