//! What the `reach mcp` tests share: a workspace with skills and a
//! permission table, the server over HTTP, and the independent MCP clients
//! (installed by `scripts/mcp-clients.sh install`).

use agent_reach_tests::guests::Guest;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// The repository's root.
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The table every MCP test starts from: `files` reads ./docs and writes
/// ./notes, a person confirms each write, `search` is hidden; `echo` has no
/// grants; `web` may reach one host and write nothing.
pub const POLICY: &str = r#"
[skills.files]
level = "auto"
read = ["./docs"]
write = ["./notes"]
[skills.files.tools.write]
level = "confirm"
[skills.files.tools.search]
level = "deny"

[skills.echo]
level = "auto"

[skills.web]
level = "auto"
net = ["127.0.0.1:9"]
"#;

/// A temporary folder with `skills/`, `docs/a.txt`, `notes/` and `reach.toml`.
pub struct Workspace {
    pub dir: tempfile::TempDir,
}

impl Workspace {
    /// A workspace with `skills` installed.
    pub fn new(policy: &str, skills: &[Guest]) -> Workspace {
        let dir = tempfile::tempdir().unwrap();
        for sub in ["skills", "docs", "notes"] {
            std::fs::create_dir_all(dir.path().join(sub)).unwrap();
        }
        std::fs::write(dir.path().join("docs/a.txt"), "alpha\nbeta\n").unwrap();
        for guest in skills {
            std::fs::copy(guest.path(), dir.path().join("skills").join(guest.file_name())).unwrap();
        }
        std::fs::write(dir.path().join("reach.toml"), policy).unwrap();
        Workspace { dir }
    }

    pub fn path(&self, relative: &str) -> PathBuf {
        self.dir.path().join(relative)
    }

    /// `program` run in the workspace with none of the caller's reach or
    /// model settings, and the tests' shared compile cache.
    pub fn command(&self, program: impl AsRef<std::ffi::OsStr>) -> Command {
        super::isolated(program, self.dir.path())
    }

    /// `reach ARGS…` in the workspace.
    pub fn reach(&self, args: &[&str]) -> Command {
        let mut command = self.command(env!("CARGO_BIN_EXE_reach"));
        command.args(args);
        command
    }

    /// `reach mcp --http 127.0.0.1:0 EXTRA…`, with `env` set, once it says
    /// where it serves; its token is REACH_MCP_TOKEN from `env`, else the one
    /// it keeps in .reach/mcp-token.
    pub fn serve_http(&self, extra: &[&str], env: &[(&str, &str)]) -> HttpServer {
        let mut args = vec!["mcp", "--http", "127.0.0.1:0"];
        args.extend_from_slice(extra);
        let mut command = self.reach(&args);
        command
            .envs(env.iter().copied())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        let mut server = HttpServer::start(command);
        server.token = match env.iter().find(|(name, _)| *name == "REACH_MCP_TOKEN") {
            Some((_, token)) => Some((*token).to_owned()),
            None => std::fs::read_to_string(self.path(".reach/mcp-token"))
                .ok()
                .map(|t| t.trim().to_owned()),
        };
        server
    }
}

/// A running `reach mcp --http`, stopped when dropped.
pub struct HttpServer {
    child: Child,
    pub url: String,
    pub addr: SocketAddr,
    /// The bearer token clients must send (none with --no-auth).
    pub token: Option<String>,
    stderr: Arc<Mutex<String>>,
}

impl HttpServer {
    /// Spawns `command` and waits for its `reach mcp: serving URL` line;
    /// panics with what it printed if it exits or takes over a minute.
    pub fn start(mut command: Command) -> HttpServer {
        let mut child = command.spawn().expect("start reach mcp --http");
        let stderr = Arc::new(Mutex::new(String::new()));
        let (tx, rx) = mpsc::channel();
        let lines = BufReader::new(child.stderr.take().unwrap());
        let log = Arc::clone(&stderr);
        // Keeps draining stderr after the ready line, so a chatty server never blocks on a full
        // pipe.
        std::thread::spawn(move || {
            for line in lines.lines().map_while(Result::ok) {
                if let Some(url) = line.strip_prefix("reach mcp: serving ") {
                    let _ = tx.send(url.trim().to_owned());
                }
                log.lock().unwrap().push_str(&format!("{line}\n"));
            }
        });
        let Ok(url) = rx.recv_timeout(Duration::from_secs(60)) else {
            let _ = child.kill();
            let status = child.wait().unwrap();
            std::thread::sleep(Duration::from_millis(100));
            panic!(
                "reach mcp --http did not say `reach mcp: serving …` ({status}); stderr:\n{}",
                stderr.lock().unwrap()
            );
        };
        let authority = url
            .strip_prefix("http://")
            .and_then(|rest| rest.strip_suffix("/mcp"))
            .unwrap_or_else(|| panic!("unexpected URL {url}"));
        let addr = authority.parse().unwrap_or_else(|e| panic!("{authority} in {url}: {e}"));
        HttpServer { child, url, addr, token: None, stderr }
    }

    /// The server's process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// What the server printed on stderr so far.
    pub fn stderr(&self) -> String {
        self.stderr.lock().unwrap().clone()
    }

    /// `Authorization: Bearer TOKEN` for this server.
    pub fn authorization(&self) -> String {
        format!("Bearer {}", self.token.as_deref().expect("this server has no token"))
    }

    /// [`post`] to this server with its token, unless `headers` carry an
    /// `Authorization` of their own.
    pub fn post(&self, headers: &[(&str, &str)], body: &str) -> Response {
        let authorization = self.token.as_ref().map(|_| self.authorization());
        let mut all = headers.to_vec();
        if let Some(value) = &authorization
            && !headers.iter().any(|(name, _)| name.eq_ignore_ascii_case("authorization"))
        {
            all.push(("Authorization", value));
        }
        post(self.addr, &all, body)
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// An HTTP response as a test looks at it.
#[derive(Debug)]
pub struct Response {
    pub status: u16,
    /// Header names in lower case.
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl Response {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
    }
}

/// One `POST /mcp` written by hand, so a test controls every header
/// (`Host` included, which HTTP client libraries set themselves).
pub fn post(addr: SocketAddr, headers: &[(&str, &str)], body: &str) -> Response {
    let mut stream = TcpStream::connect(addr).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    let mut request = format!(
        "POST /mcp HTTP/1.1\r\n\
         Content-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\n\
         Content-Length: {}\r\n\
         Connection: close\r\n",
        body.len()
    );
    if !headers.iter().any(|(name, _)| name.eq_ignore_ascii_case("host")) {
        request.push_str(&format!("Host: {addr}\r\n"));
    }
    for (name, value) in headers {
        request.push_str(&format!("{name}: {value}\r\n"));
    }
    stream.write_all(format!("{request}\r\n{body}").as_bytes()).unwrap();
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw).unwrap();
    parse_response(&raw)
}

fn parse_response(raw: &[u8]) -> Response {
    let text = String::from_utf8_lossy(raw);
    let (head, body) =
        text.split_once("\r\n\r\n").unwrap_or_else(|| panic!("not an HTTP response: {text:?}"));
    let mut lines = head.lines();
    let status = lines
        .next()
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no status line: {text:?}"));
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    let chunked =
        headers.iter().any(|(n, v)| n == "transfer-encoding" && v.eq_ignore_ascii_case("chunked"));
    let body = if chunked { dechunk(body) } else { body.to_owned() };
    Response { status, headers, body }
}

/// The body of a `Transfer-Encoding: chunked` response.
fn dechunk(mut rest: &str) -> String {
    let mut body = String::new();
    while let Some((size, after)) = rest.split_once("\r\n") {
        let Ok(size) = usize::from_str_radix(size.split(';').next().unwrap().trim(), 16) else {
            break;
        };
        if size == 0 || after.len() < size {
            break;
        }
        body.push_str(&after[..size]);
        rest = after[size..].trim_start_matches("\r\n");
    }
    body
}

/// Where `scripts/mcp-clients.sh` keeps the clients.
pub struct Clients {
    pub python: PathBuf,
    pub inspector: PathBuf,
}

/// The installed clients; fails the test, naming the command that installs
/// them, when they are missing (CI installs them in `.ci/setup`).
pub fn clients() -> Clients {
    let script = root().join("scripts/mcp-clients.sh");
    let check = Command::new("bash")
        .arg(&script)
        .arg("check")
        .output()
        .expect("run scripts/mcp-clients.sh");
    assert!(
        check.status.success(),
        "the MCP clients these tests use are not installed (CI's .ci/setup installs them):\n{}",
        String::from_utf8_lossy(&check.stderr)
    );
    let paths = Command::new("bash").arg(&script).arg("paths").output().unwrap();
    let paths = String::from_utf8(paths.stdout).unwrap();
    let get = |key: &str| -> PathBuf {
        let prefix = format!("{key}=");
        paths
            .lines()
            .find_map(|l| l.strip_prefix(&prefix))
            .map(PathBuf::from)
            .unwrap_or_else(|| panic!("no {key} in: {paths}"))
    };
    // The conformance suite and its Node are found by
    // scripts/mcp-conformance.sh itself; here only checked to be there.
    get("CONFORMANCE");
    get("NODE22");
    Clients { python: get("PYTHON"), inspector: get("INSPECTOR") }
}

/// Runs `command` to the end, killing it after `limit`; panics then with what it printed.
pub fn output_within(mut command: Command, limit: Duration) -> std::process::Output {
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    // Both pipes read on their own threads: a child that fills one must not stall on it.
    let read = |mut pipe: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            let _ = pipe.read_to_end(&mut bytes);
            bytes
        })
    };
    let stdout = read(Box::new(child.stdout.take().unwrap()));
    let stderr = read(Box::new(child.stderr.take().unwrap()));
    let started = std::time::Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break Some(status);
        }
        if started.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let output = std::process::Output {
        status: status.unwrap_or_else(|| std::os::unix::process::ExitStatusExt::from_raw(9)),
        stdout: stdout.join().unwrap(),
        stderr: stderr.join().unwrap(),
    };
    assert!(
        status.is_some(),
        "{command:?} did not finish within {limit:?}; stdout:\n{}\nstderr:\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    output
}
