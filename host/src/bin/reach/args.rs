//! Command-line arguments.

use clap::{Parser, Subcommand, ValueEnum};
use std::path::PathBuf;

/// Run LLM agent tools as sandboxed WebAssembly skills, with exactly the
/// permissions your reach.toml grants.
#[derive(Debug, Parser)]
#[command(name = "reach", version, about, max_term_width = 100)]
pub struct Cli {
    /// Folder with the skill components (*.wasm).
    #[arg(long, global = true, env = "REACH_SKILLS", default_value = "./skills")]
    pub skills: PathBuf,

    /// The permission table.
    #[arg(long, global = true, env = "REACH_POLICY", default_value = "./reach.toml")]
    pub policy: PathBuf,

    /// Folder for compiled skills [default: ~/.cache/agent-reach].
    #[arg(long, global = true, env = "REACH_CACHE_DIR")]
    pub cache_dir: Option<PathBuf>,

    /// Compile every skill on each start instead of using the compile cache.
    #[arg(long, global = true)]
    pub no_cache: bool,

    /// Log format on stderr.
    #[arg(long, global = true, value_enum, default_value_t = LogFormat::Text)]
    pub log_format: LogFormat,

    /// More log output from Agent Reach (-v info, -vv debug: every grant, -vvv trace;
    /// dependencies stay at warn, info with -vvv). REACH_LOG overrides, e.g. `REACH_LOG=wasmtime=debug`.
    #[arg(short, long, global = true, action = clap::ArgAction::Count)]
    pub verbose: u8,

    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// Log output format.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum LogFormat {
    /// Human-readable lines.
    Text,
    /// One JSON object per line.
    Json,
}

/// Top-level commands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// List and inspect installed skills.
    Skills {
        /// What to do with skills.
        #[command(subcommand)]
        command: SkillsCommand,
    },
    /// Call one tool: `reach call files.read '{"path": "README.md"}'`.
    Call(CallArgs),
    /// Check the permission table.
    Policy {
        /// What to do with the policy.
        #[command(subcommand)]
        command: PolicyCommand,
    },
    /// Create skills.
    Skill {
        /// What to do.
        #[command(subcommand)]
        command: SkillCommand,
    },
}

/// `reach skills …`
#[derive(Debug, Subcommand)]
pub enum SkillsCommand {
    /// Name, version, status (active / superseded / broken) and tools of every skill.
    List {
        /// Machine-readable output.
        #[arg(long)]
        json: bool,
    },
    /// A skill's manifest, schemas, and what the policy grants it.
    Inspect {
        /// Skill name.
        name: String,
        /// Machine-readable output.
        #[arg(long)]
        json: bool,
    },
}

/// `reach call …`
#[derive(Debug, clap::Args)]
pub struct CallArgs {
    /// `SKILL.TOOL`, e.g. `files.read`.
    pub target: String,
    /// Arguments as a JSON object; `-` reads them from stdin.
    #[arg(default_value = "{}")]
    pub arguments: String,
    /// Confirm tools whose level is `confirm` without asking.
    #[arg(long, short = 'y')]
    pub yes: bool,
}

/// `reach policy …`
#[derive(Debug, Subcommand)]
pub enum PolicyCommand {
    /// Validate the permission table against the installed skills.
    Check {
        /// Machine-readable output.
        #[arg(long)]
        json: bool,
    },
}

/// `reach skill …`
#[derive(Debug, Subcommand)]
pub enum SkillCommand {
    /// Create a new skill crate that builds to a .wasm with `cargo build --release`.
    New {
        /// Skill name, [a-z][a-z0-9_-]*.
        name: String,
        /// Parent folder for the new crate [default: current folder].
        #[arg(long)]
        dir: Option<PathBuf>,
    },
}
