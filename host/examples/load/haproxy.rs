//! HAProxy in front of the instances, configured from the shipped example configuration
//! (`deploy/many-instances/haproxy.cfg`) with its addresses replaced by the ones of this run.

use crate::Error;
use crate::report::BalancerLog;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The shipped configuration, built in so that what runs is what operators are given.
const TEMPLATE: &str = include_str!("../../../deploy/many-instances/haproxy.cfg");

/// The addresses the shipped configuration names: where it listens, instance `a`, instance `b`.
const LISTEN: &str = "127.0.0.1:8080";
const INSTANCE_A: &str = "127.0.0.1:8701";
const INSTANCE_B: &str = "127.0.0.1:8702";

/// A running `haproxy -db`, killed when dropped.
pub struct Balancer {
    child: Child,
    /// `http://127.0.0.1:PORT/mcp`, the address clients use.
    pub url: String,
    /// Its configuration, in the workspace.
    pub config: PathBuf,
    /// Its log (stdout and stderr), beside the configuration.
    log: PathBuf,
}

impl Balancer {
    /// `program` with the shipped configuration balancing `a` and `b` (each `host:port`)
    /// whose token is `token` (its health checks send it), listening on a free port; its
    /// configuration and log are written in `dir`. Returns once it accepts connections.
    pub async fn start(
        program: &Path,
        dir: &Path,
        [a, b]: [&str; 2],
        token: &str,
    ) -> Result<Balancer, Error> {
        let listen = format!("127.0.0.1:{}", free_port()?);
        let mut text = TEMPLATE.to_owned();
        for (shipped, here) in [(LISTEN, listen.as_str()), (INSTANCE_A, a), (INSTANCE_B, b)] {
            if !text.contains(shipped) {
                return Err(format!(
                    "deploy/many-instances/haproxy.cfg no longer names {shipped}: \
                                    update the driver's addresses"
                )
                .into());
            }
            text = text.replace(shipped, here);
        }
        let config = dir.join("haproxy.cfg");
        std::fs::write(&config, text)?;
        let checked =
            Command::new(program).arg("-c").arg("-f").arg(&config).output().map_err(|e| {
                format!(
                    "could not run {} ({e}): install HAProxy (apt-get install haproxy)",
                    program.display()
                )
            })?;
        if !checked.status.success() {
            return Err(format!(
                "haproxy refuses the configuration:\n{}{}",
                String::from_utf8_lossy(&checked.stdout),
                String::from_utf8_lossy(&checked.stderr)
            )
            .into());
        }
        let log = dir.join("haproxy.log");
        let file = std::fs::File::create(&log)?;
        let child = Command::new(program)
            .env("REACH_MCP_TOKEN", token)
            .arg("-db")
            .arg("-f")
            .arg(&config)
            .stdin(Stdio::null())
            .stdout(file.try_clone()?)
            .stderr(file)
            .spawn()?;
        let balancer = Balancer { child, url: format!("http://{listen}/mcp"), config, log };
        let started = Instant::now();
        while tokio::net::TcpStream::connect(&listen).await.is_err() {
            if started.elapsed() > Duration::from_secs(10) {
                return Err(format!("haproxy did not listen on {listen} within 10 s").into());
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        Ok(balancer)
    }

    /// Its log so far, summed up.
    pub fn log(&self) -> BalancerLog {
        let text = std::fs::read_to_string(&self.log).unwrap_or_default();
        let mut log = BalancerLog::default();
        for line in text.lines() {
            // `<6>CLIENT [DATE] FRONTEND BACKEND/SERVER TIMERS STATUS BYTES - - STATE
            // CONNECTIONS/…/RETRIES QUEUES "REQUEST"` (the `short` format of `option httplog`).
            let fields: Vec<&str> = line.split_whitespace().collect();
            if line.starts_with("<6>") && fields.len() > 10 {
                let server = fields[3].rsplit('/').next().unwrap_or(fields[3]);
                let redispatched =
                    fields[10].rsplit('/').next().is_some_and(|r| r.starts_with('+'));
                let key = format!(
                    "{server} {} {}{}",
                    fields[5],
                    fields[9],
                    if redispatched { " redispatched" } else { "" }
                );
                *log.requests.entry(key).or_default() += 1;
            } else if line.starts_with('[') {
                // The same events are also written as syslog lines (`<1>…`): kept once.
                log.events.push(line.to_owned());
            }
        }
        log
    }

    /// The first line of `program -v`.
    pub fn version(program: &Path) -> String {
        Command::new(program)
            .arg("-v")
            .output()
            .ok()
            .and_then(|out| String::from_utf8_lossy(&out.stdout).lines().next().map(str::to_owned))
            .unwrap_or_default()
    }
}

impl Drop for Balancer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A port nothing listens on now (the system picks it; the balancer binds it a moment later).
fn free_port() -> Result<u16, Error> {
    Ok(std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?.port())
}
