//! The wasmtime embedding: one engine, a compile cache, a linker with WASI
//! 0.2 and `wasi:http`, and a fresh, sandboxed instance for every call.

mod bindings;
mod cache;
mod clock_tape;
mod engine;
mod folders;
mod journal_fs;
mod net;
mod net_tape;
pub(crate) mod redact;
pub mod requests_section;
mod sandbox;
mod state;
pub mod toolchain;

pub(crate) use bindings::Manifest as RawManifest;
#[cfg(test)]
pub(crate) use bindings::{Example as RawExample, Tool as RawTool};
pub use cache::LoadSource;

use crate::error::{ErrorCode, ToolFailure};
use crate::policy::SkillGrants;
use crate::text::shorten_bytes;
use bindings::{SkillPre, ToolError};
use state::StoreState;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use wasmtime::component::{Component, Linker};
use wasmtime::{Engine, Store, Trap};

/// The major.minor of the `agent-reach:skill` contract this host runs.
pub const CONTRACT: semver::Version = semver::Version::new(0, 1, 0);

/// The largest `.wasm` file loaded: far above what a real skill weighs, so
/// it refuses only a file that is not a skill at all.
pub(crate) const MAX_COMPONENT_BYTES: u64 = 256 << 20;

/// Time allowed for `describe`, which should only return constants.
const DESCRIBE_TIMEOUT: Duration = Duration::from_secs(5);

/// Errors setting up the runtime or loading a component.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RuntimeError {
    /// The engine or linker could not be created.
    #[error("could not start the WebAssembly engine: {0:#}")]
    Engine(wasmtime::Error),
    /// A skill file could not be read.
    #[error("{path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A skill file is not a valid component for this host.
    #[error("{path}: {reason}")]
    Invalid {
        /// The file.
        path: PathBuf,
        /// What is wrong, and how to fix it.
        reason: String,
    },
}

/// How to build a [`Runtime`].
#[derive(Clone, Debug)]
pub struct RuntimeConfig {
    /// Folder for compiled components; `None` disables the cache.
    pub cache_dir: Option<PathBuf>,
    /// Use the pooling instance allocator (falls back automatically when unavailable).
    pub pooling: bool,
}

impl Default for RuntimeConfig {
    /// Cache in the user's cache folder (`~/.cache/agent-reach`), pooling on.
    fn default() -> Self {
        RuntimeConfig { cache_dir: dirs::cache_dir().map(|d| d.join("agent-reach")), pooling: true }
    }
}

/// The engine, linker and compile cache shared by every call.
pub struct Runtime {
    engine: Engine,
    linker: Linker<StoreState>,
    cache: cache::CompileCache,
    folders: folders::FolderCache,
    pooled: bool,
    _ticker: engine::EpochTicker,
}

/// A compiled skill component, ready to instantiate.
#[derive(Clone)]
pub struct LoadedSkill {
    pre: SkillPre<StoreState>,
    path: PathBuf,
    contract: semver::Version,
    source: LoadSource,
    digest: String,
    sha256: String,
    requests: Result<Option<String>, String>,
}

impl LoadedSkill {
    /// The file it was loaded from.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The contract version the component was built against.
    pub fn contract(&self) -> &semver::Version {
        &self.contract
    }

    /// Whether it came from the compile cache.
    pub fn source(&self) -> LoadSource {
        self.source
    }

    /// The blake3 hash of the `.wasm` file, hex: which exact build ran.
    pub fn wasm_hash(&self) -> &str {
        &self.digest
    }

    /// The sha256 of the `.wasm` file, lowercase hex: what an operator pins
    /// in `reach.toml` (`[skills.NAME] sha256`). Taken from the very bytes
    /// that were compiled, so a pin check cannot race a file swap.
    pub fn sha256(&self) -> &str {
        &self.sha256
    }

    /// The text of its `agent-reach:requests` custom section (what it asks
    /// the table for, TOML; see [`crate::policy::Requests`]), `None`
    /// without one, or why the section cannot be read.
    pub fn requests_section(&self) -> Result<Option<&str>, &str> {
        match &self.requests {
            Ok(text) => Ok(text.as_deref()),
            Err(why) => Err(why),
        }
    }

    /// The interfaces the component imports, by full name (`wasi:http/outgoing-handler@0.2.0`),
    /// sorted: what it could reach if the table granted it.
    pub fn imports(&self) -> Vec<String> {
        let pre = self.pre.instance_pre();
        let component = pre.component();
        let mut names: Vec<String> =
            component.component_type().imports(pre.engine()).map(|(n, _)| n.to_owned()).collect();
        names.sort();
        names
    }
}

/// The sha256 of `bytes`, as 64 lowercase hex characters.
pub(crate) fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::Digest as _;
    format!("{:x}", sha2::Sha256::digest(bytes))
}

impl Runtime {
    /// Create the engine (pooling allocator where possible), the linker with
    /// WASI 0.2 and `wasi:http`, and the epoch thread that enforces timeouts.
    pub fn new(config: RuntimeConfig) -> Result<Self, RuntimeError> {
        let (engine, pooled) = engine::build(config.pooling).map_err(RuntimeError::Engine)?;
        let mut linker = Linker::new(&engine);
        wasmtime_wasi::p2::add_to_linker_async(&mut linker).map_err(RuntimeError::Engine)?;
        wasmtime_wasi_http::p2::add_only_http_to_linker_async(&mut linker)
            .map_err(RuntimeError::Engine)?;
        folders::add_to_linker(&mut linker).map_err(RuntimeError::Engine)?;
        journal_fs::add_to_linker(&mut linker).map_err(RuntimeError::Engine)?;
        let cache = cache::CompileCache::new(&engine, config.cache_dir);
        let ticker = engine::EpochTicker::start(&engine);
        Ok(Runtime {
            engine,
            linker,
            cache,
            folders: folders::FolderCache::default(),
            pooled,
            _ticker: ticker,
        })
    }

    /// The compile cache folder, if caching is on.
    pub fn cache_dir(&self) -> Option<&Path> {
        self.cache.dir()
    }

    /// The key that vouches for the compile cache's entries (beside the
    /// folder), if caching is on: as much the host's own as the cache.
    pub fn cache_key_file(&self) -> Option<PathBuf> {
        self.cache.key_file()
    }

    /// Whether the pooling allocator is in use.
    pub fn is_pooled(&self) -> bool {
        self.pooled
    }

    /// Load a `.wasm` component: from the compile cache when possible,
    /// otherwise compile it (calling `on_compile` first, for progress output).
    pub fn load(
        &self,
        path: &Path,
        on_compile: impl FnOnce(),
    ) -> Result<LoadedSkill, RuntimeError> {
        let invalid = |reason: String| RuntimeError::Invalid { path: path.to_owned(), reason };
        let read_err = |source| RuntimeError::Read { path: path.to_owned(), source };
        // A dropped multi-gigabyte file must not stall every start: compiling
        // is roughly linear in size, and no real skill comes near this.
        let size = std::fs::metadata(path).map_err(read_err)?.len();
        if size > MAX_COMPONENT_BYTES {
            return Err(invalid(format!(
                "is {} MiB; components over {} MiB are not loaded",
                size >> 20,
                MAX_COMPONENT_BYTES >> 20
            )));
        }
        let wasm = std::fs::read(path).map_err(read_err)?;
        if wasm.get(..4) != Some(b"\0asm") {
            return Err(invalid(
                "not a WebAssembly file (wrong magic bytes); build skills with `--target \
                 wasm32-wasip2`"
                    .into(),
            ));
        }
        // Core modules (version 1) share the magic; only components (layer 1) are skills.
        if wasm.get(6..8) != Some(&[1, 0]) {
            return Err(invalid(
                "a core WebAssembly module, not a component; build with `--target wasm32-wasip2` \
                 (not wasm32-wasip1/unknown)"
                    .into(),
            ));
        }
        let digest = blake3::hash(&wasm).to_hex().to_string();
        let sha256 = sha256_hex(&wasm);
        // From the very bytes compiled, like the digest.
        let requests = requests_section::read(&wasm);
        let (component, source) = self
            .cache
            .load(&self.engine, &wasm, &digest, on_compile)
            .map_err(|e| invalid(format!("does not compile: {e:#}")))?;
        let contract = contract_version(&self.engine, &component).map_err(invalid)?;
        let pre = self
            .linker
            .instantiate_pre(&component)
            .map_err(|e| invalid(format!("imports something this host does not provide: {e:#}")))?;
        let pre = SkillPre::new(pre).map_err(|e| {
            invalid(format!("does not match the agent-reach:skill contract: {e:#}"))
        })?;
        Ok(LoadedSkill { pre, path: path.to_owned(), contract, source, digest, sha256, requests })
    }

    /// Call `describe` in a sandbox with nothing granted.
    pub(crate) async fn describe(
        &self,
        skill: &LoadedSkill,
        name_hint: &str,
    ) -> Result<bindings::Manifest, ToolFailure> {
        let mut grants = SkillGrants::none(name_hint);
        grants.limits.timeout = DESCRIBE_TIMEOUT;
        self.run(skill, &grants, None, |store, instance| {
            Box::pin(async move {
                instance.agent_reach_skill_guest().call_describe(store).await.map(Ok)
            })
        })
        .await
        .0
    }

    /// Run one tool call in a fresh instance with exactly `grants`, within its limits.
    ///
    /// The arguments are passed as they are: validate them against the
    /// tool's schema first (the registry does). Every failure — a tool error,
    /// a trap, a timeout, running out of memory, too much output — comes back
    /// as a [`ToolFailure`]; this never panics because of the guest.
    pub async fn call(
        &self,
        skill: &LoadedSkill,
        grants: &SkillGrants,
        tool: &str,
        arguments: &str,
    ) -> Result<String, ToolFailure> {
        let started = Instant::now();
        let tool_owned = tool.to_owned();
        let args = arguments.to_owned();
        // Journaled when the call runs in a journal's scope and can write.
        let journal = (!grants.write.is_empty())
            .then(|| crate::journal::current_call(&format!("{}.{tool}", grants.skill)))
            .flatten();
        let (result, fs) = self
            .run(skill, grants, journal, move |store, instance| {
                Box::pin(async move {
                    instance.agent_reach_skill_guest().call_call(store, &tool_owned, &args).await
                })
            })
            .await;
        // A server may have echoed a credential in a way the response
        // filter could not see; mask it before it reaches the model or the
        // log — and before anything is cut, so a cut cannot leave half a
        // secret that no longer matches.
        let result = if grants.credentials.is_empty() {
            result
        } else {
            let redactor = net::credential_redactor(&grants.credentials);
            match result {
                Ok(out) => Ok(redactor.text(&out).into_owned()),
                Err(f) => Err(ToolFailure::new(f.code, redactor.text(&f.message).into_owned())),
            }
        };
        let max = grants.limits.max_output_bytes;
        let result = match result {
            Ok(out) if out.len() > max => Err(ToolFailure::new(
                ErrorCode::OutputTooLarge,
                format!(
                    "{}.{tool}: the result is {} bytes; the limit is {max} bytes (max_output_kb = \
                     {})",
                    grants.skill,
                    out.len(),
                    max / 1024
                ),
            )),
            Ok(out) => Ok(out),
            Err(f) => Err(bound_message(f, max)),
        };
        let result = fs.settle(result);
        match &result {
            Ok(out) => {
                tracing::info!(
                    skill = %grants.skill,
                    tool,
                    bytes = out.len(),
                    elapsed_us = started.elapsed().as_micros() as u64,
                    "call succeeded"
                )
            }
            Err(f) => {
                tracing::info!(
                    skill = %grants.skill,
                    tool,
                    code = %f.code,
                    error = %f.message,
                    elapsed_us = started.elapsed().as_micros() as u64,
                    "call failed"
                )
            }
        }
        result
    }

    async fn run<T, F>(
        &self,
        skill: &LoadedSkill,
        grants: &SkillGrants,
        journal: Option<crate::journal::CallJournal>,
        body: F,
    ) -> (Result<T, ToolFailure>, journal_fs::FsJournal)
    where
        F: for<'a> FnOnce(
            &'a mut Store<StoreState>,
            bindings::Skill,
        ) -> std::pin::Pin<
            Box<dyn Future<Output = wasmtime::Result<Result<T, ToolError>>> + Send + 'a>,
        >,
    {
        let name = grants.skill.as_str();
        let sandbox = sandbox::build(grants, &self.folders, journal);
        let (stdout, stderr) = (sandbox.stdout, sandbox.stderr);
        let denials = sandbox.state.net.denials.clone();
        let mut store = Store::new(&self.engine, sandbox.state);
        store.limiter(|s| &mut s.memory);
        store.set_epoch_deadline(engine::ticks_for(grants.limits.timeout));
        store.epoch_deadline_trap();

        let timeout = grants.limits.timeout;
        let outcome = {
            let store = &mut store;
            let pre = &skill.pre;
            // The epoch deadline stops guest code; this outer timeout also
            // covers time spent blocked in the host (sleeps, slow servers).
            tokio::time::timeout(timeout + engine::EPOCH_TICK * 4, async move {
                let instance = pre.instantiate_async(&mut *store).await?;
                body(store, instance).await
            })
            .await
        };

        let stderr_text = stderr.text();
        if !stderr_text.is_empty() {
            tracing::debug!(skill = name, stderr = %stderr_text, "skill stderr");
        }
        let stdout_text = stdout.text();
        if !stdout_text.is_empty() {
            tracing::debug!(skill = name, stdout = %stdout_text, "skill stdout");
        }

        let limit_ms = timeout.as_millis();
        let fs = std::mem::take(&mut store.data_mut().fs_journal);
        let result = match outcome {
            Err(_elapsed) => Err(ToolFailure::new(
                ErrorCode::Timeout,
                format!("{name}: stopped after the wall-time limit of {limit_ms} ms (timeout_ms)"),
            )),
            Ok(Ok(Ok(value))) => Ok(value),
            Ok(Ok(Err(err))) => {
                Err(tool_error(name, err, &denials, store.data().memory.hit, grants))
            }
            Ok(Err(trap)) => Err(classify_trap(
                name,
                &trap,
                store.data().memory.hit,
                grants,
                limit_ms,
                &stderr_text,
            )),
        };
        (result, fs)
    }
}

/// Map a skill's own error, adding what the host refused during the call.
///
/// An interpreter catches a refused memory growth itself (Python's `MemoryError`, a
/// JavaScript exception) and fails the call; when the limiter refused growth during the call,
/// that failure is the memory limit's doing and is reported as such, whatever the skill says.
fn tool_error(
    skill: &str,
    err: ToolError,
    denials: &std::sync::Mutex<net::Denials>,
    memory_hit: bool,
    grants: &SkillGrants,
) -> ToolFailure {
    use bindings::ErrorCode as E;
    let code = match err.code {
        E::InvalidArguments => ErrorCode::InvalidArgs,
        E::NotFound => ErrorCode::NotFound,
        E::Denied => ErrorCode::Denied,
        E::Failed if memory_hit => ErrorCode::OutOfMemory,
        E::Failed => ErrorCode::Failed,
    };
    let mut message = shorten_bytes(&err.message, 4096);
    if !message.starts_with(&format!("{skill}:")) {
        message = format!("{skill}: {message}");
    }
    if code == ErrorCode::OutOfMemory {
        let said = message.strip_prefix(&format!("{skill}: ")).unwrap_or(&message);
        message = format!("{}; the skill said: {said}", past_memory_limit(skill, grants));
    }
    // A skill that loops on refused requests must not grow the message: the
    // first few say what is wrong; the count says how often.
    if let Some(summary) = denials.lock().unwrap_or_else(|e| e.into_inner()).summary() {
        message.push_str(&format!(" [host: {summary}]"));
    }
    ToolFailure::new(code, message)
}

/// Hold an error's message to the skill's output limit, like a result: an
/// error is output too, and reaches the model and the log.
fn bound_message(failure: ToolFailure, max_bytes: usize) -> ToolFailure {
    if failure.message.len() <= max_bytes {
        return failure;
    }
    let note = format!(
        " [cut: the message is {} bytes; max_output_kb = {}]",
        failure.message.len(),
        max_bytes / 1024
    );
    // `shorten_bytes` adds "…" (3 bytes) where it cuts.
    let keep = max_bytes.saturating_sub(note.len() + '…'.len_utf8());
    ToolFailure::new(failure.code, format!("{}{note}", shorten_bytes(&failure.message, keep)))
}

/// What an `OUT_OF_MEMORY` failure says, whether the limit trapped the skill or the skill
/// caught the refused growth and failed the call itself.
fn past_memory_limit(skill: &str, grants: &SkillGrants) -> String {
    format!(
        "{skill}: tried to use more than its memory limit of {} MiB (memory_mb)",
        grants.limits.memory_bytes >> 20
    )
}

fn classify_trap(
    skill: &str,
    err: &wasmtime::Error,
    memory_hit: bool,
    grants: &SkillGrants,
    limit_ms: u128,
    stderr: &str,
) -> ToolFailure {
    let trap = err.downcast_ref::<Trap>();
    if trap == Some(&Trap::Interrupt) {
        return ToolFailure::new(
            ErrorCode::Timeout,
            format!("{skill}: stopped after the time limit of {limit_ms} ms (timeout_ms)"),
        );
    }
    if memory_hit {
        return ToolFailure::new(ErrorCode::OutOfMemory, past_memory_limit(skill, grants));
    }
    // A Rust panic prints its message to stderr before aborting: show it.
    let panic_line = stderr.lines().find(|l| l.contains("panicked at")).map(|l| {
        let rest: Vec<&str> = stderr.lines().skip_while(|x| *x != l).skip(1).take(3).collect();
        format!("{l} {}", rest.join(" "))
    });
    let what = match (panic_line, trap) {
        (Some(p), _) => format!("panicked: {}", shorten_bytes(p.trim(), 1024)),
        (None, Some(t)) => format!("crashed: {t}"),
        (None, None) => format!("crashed: {}", shorten_bytes(&format!("{err:#}"), 1024)),
    };
    ToolFailure::new(ErrorCode::Trap, format!("{skill}: {what}"))
}

/// The contract version from the component's `agent-reach:skill/guest@X` export.
fn contract_version(engine: &Engine, component: &Component) -> Result<semver::Version, String> {
    let ty = component.component_type();
    let names: Vec<String> = ty.exports(engine).map(|(name, _)| name.to_owned()).collect();
    let Some(version) = names.iter().find_map(|n| n.strip_prefix("agent-reach:skill/guest@"))
    else {
        return Err(format!(
            "not an Agent Reach skill: it does not export `agent-reach:skill/guest` (it exports: \
             {}); build it with agent-reach-sdk",
            if names.is_empty() { "nothing".to_owned() } else { names.join(", ") }
        ));
    };
    let version = semver::Version::parse(version)
        .map_err(|e| format!("export `{version}` has an invalid version: {e}"))?;
    if version.major != CONTRACT.major || version.minor != CONTRACT.minor {
        return Err(format!(
            "built against contract agent-reach:skill@{version}; this host runs {}.{}.x — \
             rebuild the skill with a matching agent-reach-sdk",
            CONTRACT.major, CONTRACT.minor
        ));
    }
    Ok(version)
}
