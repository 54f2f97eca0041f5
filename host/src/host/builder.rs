//! [`HostBuilder`]: a [`Host`] from a skills folder, a permission table and
//! runtime options, for embedders.

use super::{Host, HostError};
use crate::policy::{Policy, ProtectedPath};
use crate::registry::Registry;
use crate::runtime::{Runtime, RuntimeConfig};
use std::path::{Path, PathBuf};

/// How [`HostBuilder::policy_str`] names its table in messages.
const INLINE_ORIGIN: &str = "<inline policy>";

/// Where the permission table comes from.
#[derive(Debug)]
enum PolicySource {
    Builtin,
    File(PathBuf),
    Text(String),
    Value(Box<Policy>),
}

/// Builds a [`Host`]: made by [`Host::builder`].
///
/// Defaults, each denying what it does not grant:
/// - skills from `./skills`;
/// - the built-in permission table ([`Policy::builtin`]): no folders, no
///   network, no environment variables, every tool at `confirm` — and with
///   [`NeverConfirm`](crate::NeverConfirm), an agent's default, nothing runs
///   until a table grants it;
/// - skills resolve relative paths against the process's working directory;
/// - the runtime's defaults ([`RuntimeConfig::default`]): compiled
///   components cached in the user's cache folder, pooling allocator on;
/// - no skill may write the table, the skills folder or the compile cache
///   (always), nor the paths given to [`HostBuilder::protect`].
#[must_use = "a builder does nothing until `build` is awaited"]
pub struct HostBuilder {
    skills_dir: PathBuf,
    policy: PolicySource,
    working_dir: Option<PathBuf>,
    runtime: RuntimeConfig,
    protected: Vec<ProtectedPath>,
    on_compile: Box<dyn FnMut(&Path) + Send>,
}

impl std::fmt::Debug for HostBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HostBuilder")
            .field("skills_dir", &self.skills_dir)
            .field("policy", &self.policy)
            .field("working_dir", &self.working_dir)
            .field("runtime", &self.runtime)
            .field("protected", &self.protected)
            .finish_non_exhaustive()
    }
}

impl Host {
    /// A builder for a host: where the skills are, what they may reach,
    /// how the runtime is set up. See [`HostBuilder`] for the defaults.
    ///
    /// ```no_run
    /// # async fn demo() -> Result<(), agent_reach::HostError> {
    /// use agent_reach::{AlwaysConfirm, Host};
    ///
    /// let host = Host::builder()
    ///     .skills_dir("skills")
    ///     .policy_str(r#"
    ///         [skills.files]
    ///         level = "auto"
    ///         read = ["./docs"]
    ///     "#)
    ///     .build()
    ///     .await?;
    /// let listing = host.invoke("files", "list", r#"{"path": "docs"}"#, &AlwaysConfirm).await;
    /// println!("{listing:?}");
    /// # Ok(()) }
    /// ```
    pub fn builder() -> HostBuilder {
        HostBuilder {
            skills_dir: PathBuf::from("skills"),
            policy: PolicySource::Builtin,
            working_dir: None,
            runtime: RuntimeConfig::default(),
            protected: Vec::new(),
            on_compile: Box::new(|_| {}),
        }
    }
}

impl HostBuilder {
    /// Load skills (`*.wasm` components) from `dir`.
    pub fn skills_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.skills_dir = dir.into();
        self
    }

    /// Read the permission table from a file, as `reach --policy` does:
    /// relative folders in it are relative to the file's folder, and no
    /// skill may write the file or the `.reach/` folder beside it.
    pub fn policy_file(mut self, path: impl Into<PathBuf>) -> Self {
        self.policy = PolicySource::File(path.into());
        self
    }

    /// Take the permission table from TOML text (the `reach.toml` format);
    /// relative folders in it are relative to the
    /// [working directory](HostBuilder::working_dir) if one is set, else to
    /// the process's, and no skill may write the `.reach/` folder there.
    /// Errors name it `<inline policy>`.
    pub fn policy_str(mut self, toml: impl Into<String>) -> Self {
        self.policy = PolicySource::Text(toml.into());
        self
    }

    /// Use a table already loaded or parsed ([`Policy::load`],
    /// [`Policy::parse`], [`Policy::builtin`]).
    pub fn policy(mut self, policy: Policy) -> Self {
        self.policy = PolicySource::Value(Box::new(policy));
        self
    }

    /// Skills resolve relative paths (`notes/a.md`) against `dir` instead of
    /// the process's working directory ([`Policy::with_working_dir`]); it
    /// grants nothing by itself.
    pub fn working_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.working_dir = Some(dir.into());
        self
    }

    /// How the WebAssembly runtime is set up: the compile cache folder (or
    /// none) and the pooling allocator.
    pub fn runtime_config(mut self, config: RuntimeConfig) -> Self {
        self.runtime = config;
        self
    }

    /// A path of the embedder's own that no skill may write, e.g. where it
    /// keeps its data. Building fails when the table grants a folder that
    /// contains it or lies inside it. May be given several times.
    pub fn protect(mut self, path: ProtectedPath) -> Self {
        self.protected.push(path);
        self
    }

    /// Call `on_compile` with each skill file about to be compiled: a
    /// first load (or a new wasmtime) takes seconds per skill, which a
    /// terminal may want to explain. Files found in the compile cache are
    /// not compiled and not reported.
    pub fn on_compile(mut self, on_compile: impl FnMut(&Path) + Send + 'static) -> Self {
        self.on_compile = Box::new(on_compile);
        self
    }

    /// Read the table, start the runtime and load the skills (compiling
    /// each on its first load; cached after), then check that they fit: no
    /// skill may write the host's own files, and every per-tool override in
    /// the table names a tool its skill has.
    ///
    /// A skill file that cannot be loaded does not fail the build: it is
    /// listed as broken in [`Host::registry`] and offers no tools.
    pub async fn build(self) -> Result<Host, HostError> {
        let mut protected = self.protected;
        let mut policy = match self.policy {
            PolicySource::Builtin => Policy::builtin(),
            PolicySource::File(path) => Policy::load(&path)?,
            PolicySource::Text(text) => {
                let base = self.working_dir.as_deref().unwrap_or(Path::new("."));
                // As `Policy::load` protects the `.reach/` beside the file.
                protected.push(ProtectedPath::private(
                    "the audit logs and memory in .reach/",
                    base.join(".reach"),
                ));
                Policy::parse(&text, Path::new(INLINE_ORIGIN), base)?
            }
            PolicySource::Value(policy) => *policy,
        };
        if let Some(dir) = self.working_dir {
            policy = policy.with_working_dir(dir);
        }
        let runtime = Runtime::new(self.runtime)?;
        let registry =
            Registry::scan_with_progress(&runtime, &self.skills_dir, &policy, self.on_compile)
                .await?;
        Host::new(runtime, policy, registry, &protected)
    }
}
