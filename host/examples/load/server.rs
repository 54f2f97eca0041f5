//! The server under load: a temporary folder with the skills and a table, and `reach mcp
//! --http` started in it (one process per instance), sampled through `/proc`.

use crate::Error;
use agent_reach_tests::guests;
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The table of `load` and `soak`: `echo` and `files.read` run without a person; the
/// folder `files` reads is `./docs`.
pub const POLICY: &str = "\
[skills.echo]
level = \"auto\"

[skills.files]
level = \"auto\"
read = [\"./docs\"]
";

/// How long an instance may take to say where it serves: it compiles the skills first
/// (seconds on two cores), and more while the other instance compiles too.
const READY_WITHIN: Duration = Duration::from_secs(180);

/// A temporary folder with `skills/` (`echo`, `files`), `docs/small.txt`, `notes/` and
/// `reach.toml`; removed when dropped.
pub struct Workspace {
    dir: tempfile::TempDir,
}

impl Workspace {
    /// A workspace whose table is `policy`; with `keep`, left in place at the end (its path
    /// is printed on stderr).
    pub fn new(policy: &str, keep: bool) -> Result<Workspace, Error> {
        let mut dir = tempfile::Builder::new().prefix("reach-load-").tempdir()?;
        if keep {
            dir.disable_cleanup(true);
            eprintln!("load: the workspace is {} (kept)", dir.path().display());
        }
        for sub in ["skills", "docs", "notes"] {
            std::fs::create_dir_all(dir.path().join(sub))?;
        }
        for guest in [guests::TEST_SKILL_ECHO, guests::SKILL_FILES] {
            std::fs::copy(guest.path(), dir.path().join("skills").join(guest.file_name()))?;
        }
        std::fs::write(
            dir.path().join("docs/small.txt"),
            "A small file read over MCP.\n".repeat(8),
        )?;
        std::fs::write(dir.path().join("reach.toml"), policy)?;
        Ok(Workspace { dir })
    }

    /// `relative` in the workspace.
    pub fn path(&self, relative: &str) -> PathBuf {
        self.dir.path().join(relative)
    }

    /// `reach mcp --http 127.0.0.1:0` as instance `name`, with `env` set and none of the
    /// caller's reach or model settings: its audit log in `runs-NAME/`, its compile cache in
    /// `cache-NAME/`, its stderr in `NAME.log`. Returns once it says where it serves.
    pub async fn start(
        &self,
        reach: &Path,
        name: &str,
        env: &[(&str, &str)],
    ) -> Result<Server, Error> {
        let log = self.path(&format!("{name}.log"));
        let runs = self.path(&format!("runs-{name}"));
        let mut command = Command::new(reach);
        command
            .current_dir(self.dir.path())
            .args(["mcp", "--http", "127.0.0.1:0", "--runs-dir"])
            .arg(&runs)
            .env("REACH_CACHE_DIR", self.path(&format!("cache-{name}")))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log)?);
        for unset in [
            "REACH_POLICY",
            "REACH_SKILLS",
            "REACH_LOG",
            "REACH_RUNS_DIR",
            "REACH_MCP_TOKEN",
            "REACH_MCP_STATE_KEY",
            "REACH_MCP_APPROVALS",
            "OPENAI_BASE_URL",
            "OPENAI_API_KEY",
            "ANTHROPIC_API_KEY",
        ] {
            command.env_remove(unset);
        }
        command.envs(env.iter().copied());
        let child =
            command.spawn().map_err(|e| format!("could not start {}: {e}", reach.display()))?;
        let mut server = Server { name: name.to_owned(), child, url: String::new(), runs, log };
        server.url = server.ready().await?;
        Ok(server)
    }
}

/// A running `reach mcp --http`, killed when dropped.
pub struct Server {
    /// Its name in the reports (`a`, `b`).
    pub name: String,
    child: Child,
    /// `http://127.0.0.1:PORT/mcp`.
    pub url: String,
    /// Its audit folder (`--runs-dir`).
    pub runs: PathBuf,
    /// Where its stderr goes.
    pub log: PathBuf,
}

impl Server {
    /// Its URL once its log says `reach mcp: serving URL`; an error with the log when it
    /// exits first or takes longer than [`READY_WITHIN`].
    async fn ready(&mut self) -> Result<String, Error> {
        let started = Instant::now();
        loop {
            let log = std::fs::read_to_string(&self.log).unwrap_or_default();
            if let Some(url) = log.lines().find_map(|l| l.strip_prefix("reach mcp: serving ")) {
                return Ok(url.trim().to_owned());
            }
            if let Some(status) = self.child.try_wait()? {
                return Err(format!(
                    "reach mcp {} exited ({status}) before serving:\n{log}",
                    self.name
                )
                .into());
            }
            if started.elapsed() > READY_WITHIN {
                return Err(format!(
                    "reach mcp {} did not serve within {READY_WITHIN:?}:\n{log}",
                    self.name
                )
                .into());
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// `host:port` it listens on.
    pub fn authority(&self) -> &str {
        self.url.trim_start_matches("http://").trim_end_matches("/mcp")
    }

    /// Kill it with SIGKILL, as the system would a process out of memory, and reap it.
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// The names of the log files in its audit folder, sorted.
    pub fn log_files(&self) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(&self.runs)
            .map(|entries| {
                entries
                    .flatten()
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .filter(|name| name.ends_with(".jsonl"))
                    .collect()
            })
            .unwrap_or_default();
        names.sort();
        names
    }

    /// Its process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// What `/proc` says of it now, and the size of its audit folder.
    pub fn sample(&self) -> Result<Usage, Error> {
        let pid = self.pid();
        Ok(Usage {
            rss_kib: status_field(pid, "VmRSS:")?,
            threads: status_field(pid, "Threads:")?,
            fds: std::fs::read_dir(format!("/proc/{pid}/fd"))?.count() as u64,
            audit_bytes: size_of(&self.runs),
        })
    }
}

/// The number after `name` in `/proc/PID/status` (0 if it is not there).
pub fn status_field(pid: u32, name: &str) -> Result<u64, Error> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status"))?;
    Ok(status
        .lines()
        .find_map(|l| l.strip_prefix(name))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or(0))
}

impl Drop for Server {
    fn drop(&mut self) {
        self.kill();
    }
}

/// A server's resources at one moment.
#[derive(Clone, Copy, Debug, Default, Serialize)]
pub struct Usage {
    /// Resident memory (`VmRSS`), KiB.
    pub rss_kib: u64,
    /// Open file descriptors (entries of `/proc/PID/fd`).
    pub fds: u64,
    /// Threads.
    pub threads: u64,
    /// Bytes of every file under the audit folder.
    pub audit_bytes: u64,
}

/// Bytes of the files under `path`, all the way down (0 if it is not there).
fn size_of(path: &Path) -> u64 {
    let Ok(entries) = std::fs::read_dir(path) else { return 0 };
    entries
        .flatten()
        .map(|entry| match entry.file_type() {
            Ok(kind) if kind.is_dir() => size_of(&entry.path()),
            _ => entry.metadata().map_or(0, |m| m.len()),
        })
        .sum()
}

/// A fresh secret for one run of the driver (the token, the state key): 24 random bytes in hex.
pub fn secret() -> String {
    let mut bytes = [0u8; 24];
    getrandom::fill(&mut bytes).expect("the system has a random source");
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
