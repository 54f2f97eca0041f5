//! Turn a skill's resolved grants into a WASI context: the only place where
//! folders, environment variables and sockets are handed to a guest.
//!
//! Defaults (everything not listed here is denied): no preopened folders, no
//! environment variables, no arguments, stdin closed, stdout/stderr captured
//! into bounded buffers, no TCP/UDP sockets and no name lookups (the network
//! is reachable only through `wasi:http`, see `net`), host clocks and a
//! fresh random seed per call.

use super::folders::FolderCache;
use super::journal_fs::FsJournal;
use super::net::NetGuard;
use super::state::{Capture, MemoryGuard, StoreState};
use crate::policy::SkillGrants;
use std::sync::Arc;
use std::time::Instant;
use wasmtime::component::ResourceTable;
use wasmtime_wasi::{FsPerms, WasiCtxBuilder};
use wasmtime_wasi_http::WasiHttpCtx;

/// The variable that lists the hosts with a host-held credential.
pub(crate) const CREDENTIALS_ENV: &str = "AGENT_REACH_CREDENTIALS";

/// How much of a skill's stdout and stderr is kept for logs and crash reports.
const STDIO_CAP: usize = 64 * 1024;

/// The store state for one call, plus handles to what it captures.
pub(crate) struct Sandbox {
    pub(crate) state: StoreState,
    pub(crate) stdout: Capture,
    pub(crate) stderr: Capture,
}

/// The host's working directory, read once: a syscall per call is measurable
/// at tens of microseconds per call, and the host does not `chdir`.
fn host_cwd() -> Option<&'static str> {
    static CWD: std::sync::OnceLock<Option<String>> = std::sync::OnceLock::new();
    CWD.get_or_init(|| std::env::current_dir().ok().map(|p| p.to_string_lossy().into_owned()))
        .as_deref()
}

/// Build the sandbox for one call of `grants.skill`, its changes journaled
/// into `journal` when there is one.
pub(crate) fn build(
    grants: &SkillGrants,
    cache: &FolderCache,
    journal: Option<crate::journal::CallJournal>,
) -> Sandbox {
    let skill = grants.skill.as_str();
    let mut wasi = WasiCtxBuilder::new();
    let stdout = Capture::new(STDIO_CAP);
    let stderr = Capture::new(STDIO_CAP);
    wasi.stdout(stdout.clone()).stderr(stderr.clone());
    // Sockets stay closed: outgoing HTTP goes through the checked wasi:http hook only.
    wasi.allow_tcp(false).allow_udp(false).allow_ip_name_lookup(false);
    let own = grants.working_dir.as_deref().and_then(|d| d.to_str());
    if let Some(cwd) = own.or(host_cwd()) {
        // Lets skills resolve paths relative to the host's working directory;
        // the path itself grants nothing.
        wasi.initial_cwd(cwd);
    }

    // Each folder is preopened at its absolute host path, so the same path
    // means the same file inside and outside. wasmtime-wasi confines every
    // access to the opened folder: `..` and symlinks cannot leave it.
    let mut preopens = Vec::with_capacity(grants.read.len() + grants.write.len());
    let folders = grants
        .read
        .iter()
        .map(|g| (g, FsPerms::ReadOnly, "read"))
        .chain(grants.write.iter().map(|g| (g, FsPerms::ReadWrite, "write")));
    for (grant, perms, kind) in folders {
        let guest = grant.path.to_string_lossy();
        match cache.get(&grant.path, perms) {
            Ok(dir) => {
                tracing::debug!(
                    skill,
                    capability = "files",
                    access = kind,
                    path = %guest,
                    "granted"
                );
                preopens.push((dir, guest.into_owned()));
            }
            Err(err) => tracing::warn!(
                skill, capability = "files", access = kind, path = %guest, error = %err,
                "granted folder could not be opened; the skill runs without it"
            ),
        }
    }

    let fs_journal = match journal {
        None => FsJournal::default(),
        Some(call) => {
            // The journal's own handle on each writable grant, opened as the
            // sandbox's are: never through a symbolic link.
            let mut handles = Vec::with_capacity(grants.write.len());
            for grant in &grants.write {
                let dir = super::folders::open_dir(&grant.path)
                    .map(|file| Arc::new(cap_std::fs::Dir::from_std_file(file)))
                    .map_err(|err| {
                        tracing::warn!(
                            skill, path = %grant.path.display(), error = %err,
                            "the journal could not open a writable grant; changes there are refused"
                        )
                    })
                    .ok();
                handles.push((grant.path.clone(), dir));
            }
            FsJournal::new(handles, Some(call))
        }
    };

    for name in &grants.env {
        match std::env::var(name) {
            Ok(value) => {
                // The value is never logged: it may be a secret.
                tracing::debug!(skill, capability = "env", name, "granted");
                wasi.env(name, value);
            }
            Err(_) => tracing::warn!(
                skill,
                capability = "env",
                name,
                "granted variable is not set on the host"
            ),
        }
    }

    if !grants.credentials.is_empty() {
        // Where a credential will be added, never what it is: lets a skill
        // say "no API key is configured" instead of failing with a 401.
        let hosts: Vec<String> = grants.credentials.iter().map(|c| c.target()).collect();
        wasi.env(CREDENTIALS_ENV, hosts.join(","));
    }
    // A recorded call's clock readings are kept; a replayed call reads them again.
    if let Some(scope) = crate::tape::current() {
        wasi.wall_clock(super::clock_tape::TapedClock::of(&scope));
    }

    Sandbox {
        state: StoreState {
            wasi: wasi.build(),
            http: WasiHttpCtx::new(),
            table: ResourceTable::new(),
            folders: preopens,
            // The call's deadline starts now, give or take the instantiation.
            net: NetGuard::new(
                skill,
                grants.net.clone(),
                &grants.credentials,
                Instant::now() + grants.limits.timeout,
            ),
            memory: MemoryGuard::new(grants.limits.memory_bytes),
            fs_journal,
        },
        stdout,
        stderr,
    }
}
