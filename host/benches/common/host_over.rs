//! A host over a folder of skills and the single-threaded runtime a bench drives it from,
//! with the bench compile cache (a module of its own: not every bench needs one).

use agent_reach::Host;
use agent_reach::policy::Policy;
use agent_reach::runtime::RuntimeConfig;
use std::path::Path;

/// A loaded host, the runtime to call it on, and the folder it lives in.
pub struct Setup {
    /// Kept so the folder lives as long as the host.
    pub _dir: tempfile::TempDir,
    /// The host over `skills`.
    pub host: Host,
    /// Where calls are driven.
    pub rt: tokio::runtime::Runtime,
}

/// Load the skills in `skills` (inside `dir`) under `table`, relative paths meaning `dir`.
pub fn host_over(dir: tempfile::TempDir, skills: &Path, table: &str) -> Setup {
    let policy = Policy::parse(table, Path::new("bench.toml"), dir.path()).unwrap();
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let cache = super::root().join("target/bench-compile-cache");
    let config = RuntimeConfig { cache_dir: Some(cache), pooling: true };
    let host = rt.block_on(Host::load(config, policy, skills)).unwrap();
    Setup { _dir: dir, host, rt }
}
