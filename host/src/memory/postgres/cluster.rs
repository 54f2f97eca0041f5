//! A throwaway PostgreSQL cluster for tests and benchmarks: `initdb` in a
//! temporary folder, the server on 127.0.0.1 and a Unix socket in that
//! folder, password authentication over TCP, and everything removed when
//! the process that started it exits.
//!
//! Shared as a file (`#[path]`) by the library's tests, the host's CLI
//! tests and the memory benchmark, so it uses the standard library only.
//! The server binaries come from `REACH_PG_BIN` or the newest
//! `/usr/lib/postgresql/*/bin` (Debian's `postgresql` package); a machine
//! without them fails the test saying how to install them, rather than
//! skipping it.

use std::io::Write as _;
use std::net::{TcpListener, TcpStream};
use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// The superuser the cluster is made with, and its password.
pub const USER: &str = "reach";
/// `USER`'s password (TCP connections must give it).
pub const PASSWORD: &str = "throwaway-test-password";

/// A running cluster.
pub struct Cluster {
    /// The temporary folder: `data/`, the socket, the logs.
    pub dir: PathBuf,
    /// The TCP port on 127.0.0.1.
    pub port: u16,
    bin: PathBuf,
    /// Held open for the life of the process: when it closes, the watchdog
    /// stops the server and removes the folder.
    _watchdog: ChildStdin,
    next_db: AtomicUsize,
}

impl Cluster {
    /// One cluster per process, started on first use.
    pub fn shared() -> &'static Cluster {
        // The outcome is kept, a failure too: every test then fails at once with its reason.
        static CLUSTER: std::sync::OnceLock<Result<Cluster, String>> = std::sync::OnceLock::new();
        match CLUSTER.get_or_init(|| Cluster::start(false)) {
            Ok(cluster) => cluster,
            Err(e) => panic!("{e}"),
        }
    }

    /// `initdb` and start a new cluster; `durable` as a production server
    /// is (every commit flushed), or not, as tests want it (faster).
    pub fn start(durable: bool) -> Result<Cluster, String> {
        let bin = server_bin()?;
        // Kept: the watchdog removes it, after the server has stopped.
        let dir = tempfile::Builder::new()
            .prefix("reach-pg-")
            .tempdir()
            .map_err(|e| format!("a temporary folder: {e}"))?
            .keep();
        let owner = unprivileged_owner()?;
        let as_owner = |mut command: Command| {
            if let Some((uid, gid)) = owner {
                command.uid(uid).gid(gid);
            }
            command
        };
        if let Some((uid, gid)) = owner {
            std::os::unix::fs::chown(&dir, Some(uid), Some(gid))
                .map_err(|e| format!("chown {}: {e}", dir.display()))?;
        }
        let pwfile = dir.join("pw");
        std::fs::write(&pwfile, PASSWORD).map_err(|e| e.to_string())?;
        if let Some((uid, gid)) = owner {
            std::os::unix::fs::chown(&pwfile, Some(uid), Some(gid)).map_err(|e| e.to_string())?;
        }
        let out = as_owner(Command::new(bin.join("initdb")))
            .args(["-D", "data", "-U", USER, "-E", "UTF8", "--no-locale", "--no-sync"])
            .args(["--auth-local=trust", "--auth-host=scram-sha-256", "--pwfile=pw"])
            .current_dir(&dir)
            .output()
            .map_err(|e| format!("initdb: {e}"))?;
        if !out.status.success() {
            return Err(format!("initdb failed: {}", String::from_utf8_lossy(&out.stderr)));
        }
        let _ = std::fs::remove_file(&pwfile);
        let watchdog = watchdog(&dir)?;
        for attempt in 0.. {
            let port = free_port();
            let log = std::fs::File::create(dir.join("server.log")).map_err(|e| e.to_string())?;
            if let Some((uid, gid)) = owner {
                let _ = std::os::unix::fs::chown(dir.join("server.log"), Some(uid), Some(gid));
            }
            let mut server = as_owner(Command::new(bin.join("postgres")))
                .args(["-D", "data", "-p", &port.to_string(), "-k"])
                // Absolute: the server works in its data folder.
                .arg(&dir)
                .args(["-c", "listen_addresses=127.0.0.1", "-c", "max_connections=200"])
                // A test's database is thrown away: durability buys nothing there.
                .args(if durable {
                    &[][..]
                } else {
                    &["-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off"]
                })
                .current_dir(&dir)
                .stdin(Stdio::null())
                .stdout(log.try_clone().map_err(|e| e.to_string())?)
                .stderr(log)
                .spawn()
                .map_err(|e| format!("postgres: {e}"))?;
            if wait_ready(&bin, &dir, port, &mut server) {
                return Ok(Cluster {
                    dir,
                    port,
                    bin,
                    _watchdog: watchdog,
                    next_db: AtomicUsize::new(0),
                });
            }
            // Most likely another process took the port first: try another.
            let _ = server.kill();
            let _ = server.wait();
            if attempt == 3 {
                let log = std::fs::read_to_string(dir.join("server.log")).unwrap_or_default();
                return Err(format!("the PostgreSQL server did not start: {log}"));
            }
            std::thread::sleep(Duration::from_millis(500));
        }
        unreachable!()
    }

    /// The URL of the server without a database, for the superuser (no
    /// password in it: give [`PASSWORD`]).
    pub fn url(&self, database: &str) -> String {
        format!("postgres://{USER}@127.0.0.1:{}/{database}", self.port)
    }

    /// A new, empty database; its URL.
    pub fn database(&self) -> String {
        let name =
            format!("t{}_{}", std::process::id(), self.next_db.fetch_add(1, Ordering::SeqCst));
        self.psql("postgres", &format!("CREATE DATABASE {name}"));
        self.url(&name)
    }

    /// Run `sql` in `database` over the socket with `psql`; its output.
    pub fn psql(&self, database: &str, sql: &str) -> String {
        let out = Command::new(self.bin.join("psql"))
            .args(["-h"])
            .arg(&self.dir)
            .args(["-p", &self.port.to_string(), "-U", USER, "-d", database])
            .args(["-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-c", sql])
            .output()
            .expect("psql runs");
        assert!(out.status.success(), "psql {sql:?}: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout).trim().to_owned()
    }
}

/// The folder with `initdb`, `postgres` and `psql`.
fn server_bin() -> Result<PathBuf, String> {
    if let Some(dir) = std::env::var_os("REACH_PG_BIN") {
        return Ok(PathBuf::from(dir));
    }
    let mut found: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let version = e.file_name().to_str()?.parse().ok()?;
            let bin = e.path().join("bin");
            bin.join("initdb").exists().then_some((version, bin))
        })
        .collect();
    found.sort();
    found.pop().map(|(_, bin)| bin).ok_or_else(|| {
        "PostgreSQL's server programs (initdb, postgres) were not found in /usr/lib/postgresql/*/bin; \
         install them (Debian: apt-get install postgresql, as .ci/setup does) or set REACH_PG_BIN \
         to their folder"
            .to_owned()
    })
}

/// PostgreSQL refuses to run as root: when the tests are root, the
/// cluster belongs to the `postgres` account (or `nobody`).
fn unprivileged_owner() -> Result<Option<(u32, u32)>, String> {
    let me = std::fs::metadata("/proc/self").map(|m| std::os::unix::fs::MetadataExt::uid(&m));
    if me.map_err(|e| e.to_string())? != 0 {
        return Ok(None);
    }
    let passwd = std::fs::read_to_string("/etc/passwd").map_err(|e| e.to_string())?;
    for name in ["postgres", "nobody"] {
        for line in passwd.lines() {
            let fields: Vec<&str> = line.split(':').collect();
            if fields.len() > 3
                && fields[0] == name
                && let (Ok(uid), Ok(gid)) = (fields[2].parse(), fields[3].parse())
            {
                return Ok(Some((uid, gid)));
            }
        }
    }
    Err("running as root and no postgres or nobody account to run PostgreSQL as".into())
}

/// A shell that waits for its stdin to close — when this process exits,
/// however it exits — then stops the server (its PID is the first line of
/// `postmaster.pid`) and removes the folder.
fn watchdog(dir: &Path) -> Result<ChildStdin, String> {
    let script = format!(
        "cat >/dev/null; cd '{dir}' || exit; pid=$(head -n 1 data/postmaster.pid 2>/dev/null); \
         if [ -n \"$pid\" ]; then kill -INT \"$pid\"; \
         for _ in $(seq 100); do kill -0 \"$pid\" 2>/dev/null || break; sleep 0.1; done; \
         kill -KILL \"$pid\" 2>/dev/null; fi; cd / && rm -rf '{dir}'",
        dir = dir.display()
    );
    let mut child = Command::new("sh")
        .args(["-c", &script])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        // Its own process group: a Ctrl-C meant for the tests reaches it only as the pipe closing.
        .process_group(0)
        .spawn()
        .map_err(|e| format!("sh: {e}"))?;
    let mut stdin = child.stdin.take().ok_or("no stdin")?;
    stdin.flush().map_err(|e| e.to_string())?;
    Ok(stdin)
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr()).map(|a| a.port()).unwrap_or(0)
}

/// True once this server accepts connections on its socket (in `dir`, so
/// no other server answers for it) and on its TCP port; false when it
/// exits first (the port was taken) or takes more than 30 s.
fn wait_ready(bin: &Path, dir: &Path, port: u16, server: &mut Child) -> bool {
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(30) {
        if server.try_wait().ok().flatten().is_some() {
            return false;
        }
        let ready = Command::new(bin.join("pg_isready"))
            .arg("-h")
            .arg(dir)
            .args(["-p", &port.to_string(), "-q"])
            .status()
            .is_ok_and(|s| s.success());
        if ready && TcpStream::connect(("127.0.0.1", port)).is_ok() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    false
}
