//! Shared start-up: logging, the runtime, the policy and the registry.

use crate::args::{Cli, LogFormat};
use agent_reach::policy::{Policy, ProtectedPath};
use agent_reach::runtime::RuntimeConfig;
use agent_reach::{Host, HostBuilder, HostError};
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use tracing_subscriber::EnvFilter;

/// Set up tracing on stderr.
pub fn init_logging(cli: &Cli) {
    // Verbosity raises our own crates only: a dependency's trace output
    // (Cranelift dumps whole functions while compiling) runs to gigabytes.
    // REACH_LOG takes any filter, dependencies included.
    // `reach eval` provokes denials on purpose (boundary cases); each is in
    // its run's audit log, and warnings would bury the progress lines.
    let quiet = matches!(cli.command, crate::args::Command::Eval(_));
    let default = match cli.verbose {
        0 if quiet => "error",
        0 => "warn",
        1 => "warn,agent_reach=info,reach=info",
        2 => "warn,agent_reach=debug,reach=debug",
        _ => "info,agent_reach=trace,reach=trace",
    };
    let filter = EnvFilter::try_from_env("REACH_LOG").unwrap_or_else(|_| EnvFilter::new(default));
    let builder = tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr);
    match cli.log_format {
        LogFormat::Json => builder.json().init(),
        LogFormat::Text => builder.with_ansi(std::io::stderr().is_terminal()).init(),
    }
}

/// Load the policy (the built-in one when the default file is absent).
pub fn load_policy(cli: &Cli) -> anyhow::Result<Policy> {
    let explicit = std::env::var_os("REACH_POLICY").is_some()
        || cli.policy != std::path::Path::new("./reach.toml");
    if !cli.policy.exists() && !explicit {
        tracing::warn!(
            "no ./reach.toml; using the built-in policy: no folders, no network, no environment, \
             every tool needs confirmation"
        );
        return Ok(Policy::builtin());
    }
    Ok(Policy::load(&cli.policy)?)
}

/// The runtime settings the command line asks for (the compile cache).
pub fn runtime_config(cli: &Cli) -> RuntimeConfig {
    RuntimeConfig {
        cache_dir: if cli.no_cache {
            None
        } else {
            cli.cache_dir.clone().or(RuntimeConfig::default().cache_dir)
        },
        ..RuntimeConfig::default()
    }
}

/// Start the runtime, read the policy and scan the skills folder.
pub async fn load(cli: &Cli) -> anyhow::Result<Host> {
    let runs =
        std::env::var_os("REACH_RUNS_DIR").map_or_else(|| PathBuf::from(".reach"), Into::into);
    load_with_runs(cli, &runs).await
}

/// [`load`] for a command that writes audit logs to `runs`: that folder is
/// protected from skills' `write` grants along with `.reach/`.
pub async fn load_with_runs(cli: &Cli, runs: &Path) -> anyhow::Result<Host> {
    load_protecting(cli, protected(runs)).await
}

/// [`load`], no skill allowed to write any of `protected`.
pub async fn load_protecting(cli: &Cli, protected: Vec<ProtectedPath>) -> anyhow::Result<Host> {
    let policy = load_policy(cli)?;
    let config = runtime_config(cli);
    let tty = std::io::stderr().is_terminal();
    let builder = protected.into_iter().fold(Host::builder(), HostBuilder::protect);
    let built = builder
        .skills_dir(&cli.skills)
        .policy(policy)
        .runtime_config(config)
        .on_compile(move |path| {
            if tty {
                eprintln!("compiling {} (first load; cached for next time)…", path.display());
            }
            tracing::info!(path = %path.display(), "compiling skill");
        })
        .build()
        .await;
    match built {
        Ok(host) => Ok(host),
        // Its message already says why (the I/O error): not chained again.
        Err(HostError::Registry(err)) => Err(anyhow::anyhow!("could not load skills: {err}")),
        Err(err) => Err(err.into()),
    }
}

/// The host's own files besides the table, skills and cache: the audit
/// logs (.reach/ under the working directory, or wherever `runs` points).
pub fn protected(runs: &Path) -> Vec<ProtectedPath> {
    vec![
        ProtectedPath::private("the audit logs and memory in .reach/", ".reach"),
        ProtectedPath::private("the audit logs", runs),
    ]
}
