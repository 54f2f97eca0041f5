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
    /// dependencies stay at warn, info with -vvv). REACH_LOG overrides, e.g.
    /// `REACH_LOG=wasmtime=debug`.
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
    /// Check the permission table; what skills request against what it grants.
    Policy {
        /// What to do with the policy.
        #[command(subcommand)]
        command: PolicyCommand,
    },
    /// The worker profiles of the permission table ([agents.NAME]) a run may delegate to.
    Agents {
        /// What to do with agent profiles.
        #[command(subcommand)]
        command: AgentsCommand,
    },
    /// Run an agent on a task: the model calls skills, each in its sandbox.
    Run(RunArgs),
    /// Measure the agent on a set of tasks: completion, tool and argument accuracy,
    /// boundary compliance, steps, tokens and time. Exit 0 when every gate holds,
    /// 1 when one fails, 2 for usage or case-file errors.
    Eval(EvalArgs),
    /// Past runs and their audit logs.
    Runs {
        /// What to do with runs.
        #[command(subcommand)]
        command: RunsCommand,
    },
    /// The long-term memory runs keep: list, search, show, forget, export, import.
    /// Exit 1 when an entry is not found, 2 for usage or database errors.
    Memory(MemoryArgs),
    /// Serve the skills to MCP clients (editors, desktop assistants, other agents) over
    /// stdio, or over streamable HTTP with `--http 127.0.0.1:PORT`. The permission table
    /// stays in charge: denied tools are not listed, `confirm` tools ask the client's user.
    Mcp(McpArgs),
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
    /// Name, version, status (active / superseded / broken), file digest and tools of
    /// every skill, and where each installed from a registry came from and who signed it;
    /// says which active skills changed since the last listing.
    List {
        /// Machine-readable output.
        #[arg(long)]
        json: bool,
    },
    /// A skill's manifest, schemas, file digest, last change, and what the policy grants it.
    Inspect {
        /// Skill name.
        name: String,
        /// Machine-readable output.
        #[arg(long)]
        json: bool,
    },
    /// Print the reach.toml lines that pin a skill to its active file's sha256.
    Pin {
        /// Skill name.
        name: String,
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
    /// Where the call's audit log is written (as for `reach run`).
    #[arg(long, env = "REACH_RUNS_DIR", default_value = ".reach/runs")]
    pub runs_dir: PathBuf,
}

/// `reach mcp …`
#[derive(Debug, clap::Args)]
pub struct McpArgs {
    /// Serve streamable HTTP at http://ADDR/mcp instead of stdio (port 0 picks a free
    /// one). Every request needs `Authorization: Bearer TOKEN`: REACH_MCP_TOKEN when set
    /// (needed for anything but a loopback address), else a token made once and kept in
    /// .reach/mcp-token (readable by you only).
    #[arg(long, value_name = "ADDR")]
    pub http: Option<std::net::SocketAddr>,
    /// Serve HTTP on loopback without a token: any process on this machine can then call
    /// the tools and answer their confirmation questions.
    #[arg(long, requires = "http")]
    pub no_auth: bool,
    /// The SQLite file where instances sharing REACH_MCP_STATE_KEY record which
    /// confirmation answers were used (each is good for one call); required with that key.
    #[arg(long, env = "REACH_MCP_APPROVALS", value_name = "FILE")]
    pub approvals: Option<PathBuf>,
    /// A browser origin allowed to call the HTTP server (`http://localhost:6274`);
    /// repeatable. Requests with any other Origin header are refused.
    #[arg(long, value_name = "URL")]
    pub allow_origin: Vec<String>,
    /// A Host name clients use to reach the HTTP server, besides localhost and the
    /// loopback addresses (e.g. the name a load balancer forwards); repeatable.
    #[arg(long, value_name = "NAME")]
    pub allow_host: Vec<String>,
    /// Serve the skills and table as loaded at start: do not watch them for changes.
    #[arg(long)]
    pub no_watch: bool,
    /// Where the server's audit log is written (one per server process: every call
    /// before it runs and with its outcome, and every refusal).
    #[arg(long, env = "REACH_RUNS_DIR", default_value = ".reach/runs")]
    pub runs_dir: PathBuf,
}

/// `reach policy …`
#[derive(Debug, Subcommand)]
pub enum PolicyCommand {
    /// Validate the permission table against the installed skills, and
    /// each skill's requests against its grants.
    ///
    /// `--json` prints {"policy", "ok", "errors", "warnings", "requests":
    /// {SKILL: [{"capability", "item", "state": "granted"|"refused"|"not_requested",
    /// "by" (the grant, when granted)}]}} — only skills that declare requests.
    Check {
        /// Machine-readable output.
        #[arg(long)]
        json: bool,
    },
    /// Print the narrowest table lines that grant what a skill requests, to
    /// read and paste into the table (nothing is edited).
    Suggest {
        /// The skill (a `.wasm` skill or a bundle).
        name: String,
    },
}

/// `reach agents …`
#[derive(Debug, Subcommand)]
pub enum AgentsCommand {
    /// Each [agents.NAME] profile: its description, model, steps, token budget, whether
    /// it may delegate, what each of its skills can reach; then the [delegation] limits.
    ///
    /// `--json` prints one object:
    ///   {"agents": [{"name", "line", "description", "model" (null: the run's model),
    ///     "max_steps" (the [delegation] worker_max_steps when the profile sets none),
    ///     "token_budget" (null: none of its own), "may_delegate", "instructions",
    ///     "skills": [{"skill", "installed", "level", "offered" (false: every tool deny),
    ///       "read": [absolute folders], "write": [..], "net": [host patterns]}]}],
    ///    "delegation": {"max_workers", "max_depth", "max_delegations", "worker_max_steps"}}
    /// Profiles are in name order; the pseudo skill `agents` is not in "skills"
    /// ("may_delegate" says it). Fields are only ever added.
    #[command(verbatim_doc_comment)]
    List {
        /// Machine-readable output (layout above).
        #[arg(long)]
        json: bool,
    },
}

/// `reach skill …`
#[derive(Debug, Subcommand)]
pub enum SkillCommand {
    /// Create a skill folder that builds to NAME.wasm with one command, with a README and a
    /// test that loads it with reach and calls it.
    New {
        /// Skill name, [a-z][a-z0-9_-]*.
        name: String,
        /// Parent folder for the new skill's folder [default: current folder].
        #[arg(long)]
        dir: Option<PathBuf>,
        /// The language the skill is written in.
        #[arg(long, value_enum, default_value_t = Lang::Rust)]
        lang: Lang,
        /// Use the Rust SDK from this folder (`sdk/` of an Agent Reach checkout) instead of
        /// agent-reach-sdk from crates.io (with `--lang rust` only).
        #[arg(long, value_name = "PATH")]
        sdk_path: Option<PathBuf>,
    },
    /// Show the requests a built component carries, or add them with `--set`: how a
    /// Python, JavaScript or Go skill says which folders, hosts, credentials and variables
    /// it needs (a Rust skill uses `agent_reach_sdk::requests!`). Requests grant nothing;
    /// `reach skills inspect` shows them beside the table's grants.
    Requests {
        /// The component (`.wasm`).
        wasm: PathBuf,
        /// Add the requests in this TOML file (keys read, write, net, credentials, env, each
        /// a list) to the component, in place. Refused when it already carries requests.
        #[arg(long, value_name = "FILE")]
        set: Option<PathBuf>,
        /// Print {"wasm", "requests": {…} | null} as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Get a skill from an OCI registry: resolve the tag to a digest, pull it (every byte
    /// checked against its digest), verify its signature when the table or --key asks,
    /// check it loads and describes itself, install it as NAME-VERSION.wasm with its origin
    /// record, and print the table lines to add. Grants nothing by itself.
    Add {
        /// `oci://REGISTRY/REPO:TAG` or `oci://REGISTRY/REPO@sha256:…`.
        reference: String,
        /// Refuse it unless a signature by --key (or the table's signed_by) verifies.
        #[arg(long)]
        require_signature: bool,
        /// The publisher's public key (cosign's .pub format): its signature must verify.
        #[arg(long, value_name = "FILE.pub")]
        key: Option<PathBuf>,
        /// Machine-readable output.
        #[arg(long)]
        json: bool,
    },
    /// Push a component to an OCI registry as the standard Wasm artifact (the tag defaults
    /// to the skill's version), and sign it with --sign.
    Publish {
        /// The component (`.wasm`).
        wasm: PathBuf,
        /// `oci://REGISTRY/REPO[:TAG]`.
        reference: String,
        /// Sign it with this private key (cosign's format; password from
        /// REACH_SIGNING_PASSWORD or COSIGN_PASSWORD).
        #[arg(long, value_name = "FILE.key")]
        sign: Option<PathBuf>,
        /// Machine-readable output.
        #[arg(long)]
        json: bool,
    },
    /// Sign an artifact already in a registry (cosign-compatible, at the sha256-DIGEST.sig tag).
    Sign {
        /// `oci://REGISTRY/REPO:TAG` or `…@sha256:…` (a tag is resolved and the digest signed).
        reference: String,
        /// The private key (cosign's format; password from REACH_SIGNING_PASSWORD or
        /// COSIGN_PASSWORD).
        #[arg(long, value_name = "FILE.key")]
        key: PathBuf,
        /// Machine-readable output.
        #[arg(long)]
        json: bool,
    },
    /// Make a signing key pair in cosign's formats: PREFIX.key (encrypted with
    /// REACH_SIGNING_PASSWORD, readable by you only) and PREFIX.pub; prints its fingerprint.
    Keygen {
        /// Path prefix of the two files.
        #[arg(long, default_value = "reach-signing")]
        out: PathBuf,
        /// Machine-readable output.
        #[arg(long)]
        json: bool,
    },
    /// Look for newer releases (semver tags) at the origin of each skill installed from a
    /// registry (or of NAME), show what changes, and install with --yes or your answer. The
    /// table is never edited: the pin line to change is printed.
    Update {
        /// Only this skill.
        name: Option<String>,
        /// Install without asking.
        #[arg(long, short = 'y')]
        yes: bool,
        /// Machine-readable output (never asks: installs only with --yes).
        #[arg(long)]
        json: bool,
    },
}

/// The languages `reach skill new` writes a skill in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Lang {
    /// A crate against agent-reach-sdk, built with cargo.
    Rust,
    /// A module against the vendored Python SDK, built with componentize-py.
    Python,
    /// An ES module against the vendored JavaScript SDK, bundled with esbuild and built with
    /// jco componentize.
    Js,
}

/// `reach run …`
#[derive(Debug, clap::Args)]
pub struct RunArgs {
    /// The task, e.g. "Save https://example.com/post as Markdown in notes/".
    pub task: String,
    /// Which model.
    #[command(flatten)]
    pub model: ModelFlags,
    /// Most model requests [default: [model] max_steps in reach.toml, else 8].
    #[arg(long)]
    pub max_steps: Option<usize>,
    /// Stop after this many tokens (input + output, all requests).
    #[arg(long)]
    pub token_budget: Option<u64>,
    /// Confirm tools whose level is `confirm` without asking.
    #[arg(long, short = 'y')]
    pub yes: bool,
    /// Print the report as one JSON object on stdout.
    #[arg(long)]
    pub json: bool,
    /// Folder for audit logs.
    #[arg(long, env = "REACH_RUNS_DIR", default_value = ".reach/runs")]
    pub runs_dir: PathBuf,
    /// Run without long-term memory: no notes in the prompt, no memory tools.
    #[arg(long)]
    pub no_memory: bool,
    /// The kind of task, e.g. save-page: remembered notes of that kind rank first.
    #[arg(long)]
    pub task_type: Option<String>,
    /// How tools are offered: all up front, a menu of skills opened on demand, or the skills the
    /// task's words point to.
    #[arg(long, value_enum, default_value_t = Disclose::All)]
    pub disclose: Disclose,
    /// When an Agent Skills bundle's instructions reach the model: when it opens the bundle (the
    /// default), or up front for the bundle the task's words match best.
    #[arg(long, value_enum, default_value_t = BundleBodyArg::OnActivation)]
    pub bundle_body: BundleBodyArg,
    /// Offer tool parameters compacted (inlined references, choices as enums): ~20% fewer tokens;
    /// off until the eval set says it helps.
    #[arg(long)]
    pub compact_schemas: bool,
    /// After the answer, a reviewer with read-only skills checks the work against these criteria;
    /// on "revise" the run gets one more round with the issues found.
    #[arg(long, value_name = "CRITERIA")]
    pub review: Option<String>,
}

/// Which model to talk to (shared by `run` and `eval`).
#[derive(Clone, Debug, clap::Args)]
pub struct ModelFlags {
    /// Model name [env: REACH_MODEL; default: [model] name in reach.toml, else the local model's].
    #[arg(long, env = "REACH_MODEL")]
    pub model: Option<String>,
    /// OpenAI-compatible base URL, e.g. http://127.0.0.1:8691/v1 [env: OPENAI_BASE_URL;
    /// default: [model] base_url in reach.toml].
    #[arg(long, env = "OPENAI_BASE_URL")]
    pub base_url: Option<String>,
    /// Which API to speak [default: [model] provider in reach.toml, else openai].
    #[arg(long, value_enum, env = "REACH_PROVIDER")]
    pub provider: Option<Provider>,
    /// How an OpenAI-compatible server is offered the tools [env: REACH_TOOL_FORMAT; default:
    /// [model] tool_format in reach.toml, else native].
    #[arg(long, value_enum, env = "REACH_TOOL_FORMAT")]
    pub tool_format: Option<ToolFormatArg>,
}

/// `--disclose`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Disclose {
    /// Every tool of every offered skill, in every request.
    All,
    /// A menu of skills and `skills__open`; a skill's tools once it is opened.
    OnDemand,
    /// As on-demand, with the skills the task's words point to open from
    /// the start (every tool when they point to none).
    ByTask,
}

impl From<Disclose> for agent_reach::harness::Disclosure {
    fn from(d: Disclose) -> Self {
        match d {
            Disclose::All => Self::All,
            Disclose::OnDemand => Self::OnDemand,
            Disclose::ByTask => Self::ByTask,
        }
    }
}

/// `--bundle-body`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum BundleBodyArg {
    /// When the model opens the bundle (`skills__open`).
    OnActivation,
    /// Before the first request, for the bundle the task's words match best.
    UpFront,
}

impl From<BundleBodyArg> for agent_reach::harness::BundleBody {
    fn from(b: BundleBodyArg) -> Self {
        match b {
            BundleBodyArg::OnActivation => Self::OnActivation,
            BundleBodyArg::UpFront => Self::UpFront,
        }
    }
}

/// `--tool-format`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum ToolFormatArg {
    /// The API's own tools and tool calls, as the chat template renders them.
    Native,
    /// Tools in the system message; every reply constrained by a JSON Schema to one call or the
    /// answer.
    Constrained,
}

/// `reach eval …`
#[derive(Debug, clap::Args)]
pub struct EvalArgs {
    /// Case files (*.jsonl) or folders of them.
    #[arg(default_value = "evals")]
    pub paths: Vec<PathBuf>,
    /// Which model.
    #[command(flatten)]
    pub model: ModelFlags,
    /// Runs per case (pass^K needs K > 1).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..=100))]
    pub repeat: u16,
    /// Only cases with this id or domain (repeatable, or comma-separated).
    #[arg(long, value_delimiter = ',')]
    pub only: Vec<String>,
    /// Print the report as one JSON object on stdout (layout in the book's JSON outputs chapter).
    #[arg(long)]
    pub json: bool,
    /// Also write the report as one self-contained HTML file.
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
    /// Compare with a saved baseline; a regression fails the run (exit 1).
    #[arg(long, value_name = "FILE")]
    pub baseline: Option<PathBuf>,
    /// Save this run's per-case results as a baseline.
    #[arg(long, value_name = "FILE")]
    pub save_baseline: Option<PathBuf>,
    /// Fail (exit 1) when completion is below this percentage.
    #[arg(long, value_name = "PCT", value_parser = percentage)]
    pub min_completion: Option<f64>,
    /// Runs at a time (a model server with one slot answers one at a time).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..=64))]
    pub jobs: u16,
    /// Most model requests per run, unless a case allows more.
    #[arg(long, default_value_t = 8)]
    pub max_steps: usize,
    /// How tools are offered: all up front, a menu of skills opened on demand, or the skills the
    /// task's words point to.
    #[arg(long, value_enum, default_value_t = Disclose::All)]
    pub disclose: Disclose,
    /// When an Agent Skills bundle's instructions reach the model: when it opens the bundle (the
    /// default), or up front for the bundle the task's words match best.
    #[arg(long, value_enum, default_value_t = BundleBodyArg::OnActivation)]
    pub bundle_body: BundleBodyArg,
    /// Offer tool parameters compacted (inlined references, choices as enums): ~20% fewer tokens;
    /// off until the eval set says it helps.
    #[arg(long)]
    pub compact_schemas: bool,
    /// Folder for this evaluation's audit logs and report.json; one that
    /// holds an earlier evaluation's logs is refused [default: .reach/evals/<id>].
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// List the cases (checking every file) without running them.
    #[arg(long)]
    pub list: bool,
    /// Grant case tables as written: folders outside a case's working folder, hosts other than its
    /// fixture server, environment variables and credentials. Only for case files you wrote or
    /// checked — a case's table is granted without a person, like --yes.
    #[arg(long)]
    pub trust_cases: bool,
    /// Keep every run's audit log and recording in DIR (a new or empty folder), with what
    /// `--replay DIR` needs to play them back later.
    #[arg(long, value_name = "DIR")]
    pub record: Option<PathBuf>,
    /// Play back the runs `--record DIR` kept instead of asking a model (no model server
    /// needed): the same cases and repeats, each with its recorded replies, scored anew
    /// under the current harness and skills. A case not recorded there fails at setup.
    #[arg(long, value_name = "DIR", conflicts_with = "record")]
    pub replay: Option<PathBuf>,
}

/// A percentage, 0 to 100.
fn percentage(text: &str) -> Result<f64, String> {
    let value: f64 =
        text.trim_end_matches('%').parse().map_err(|_| format!("{text:?} is not a number"))?;
    if (0.0..=100.0).contains(&value) {
        Ok(value)
    } else {
        Err(format!("{value} is not between 0 and 100"))
    }
}

/// The model API.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Provider {
    /// OpenAI Chat Completions and compatible servers (llama.cpp, Ollama, vLLM).
    Openai,
    /// Anthropic Messages API (ANTHROPIC_API_KEY).
    Anthropic,
}

/// `reach runs …`
#[derive(Debug, Subcommand)]
pub enum RunsCommand {
    /// Every run in the runs folder, newest first.
    List {
        /// Folder of audit logs.
        #[arg(long, env = "REACH_RUNS_DIR", default_value = ".reach/runs")]
        runs_dir: PathBuf,
        /// Machine-readable output: {"runs_dir", "runs": [{"run_id", "started", "task", "model",
        /// "stop", "steps", "tool_calls", "workers" (workers and reviewers started), "log"}]}.
        #[arg(long)]
        json: bool,
    },
    /// A readable timeline of one run, each worker's steps indented under the call that
    /// delegated to it (and its own workers deeper), then its outcome.
    ///
    /// `--json` prints one object:
    ///   {"run_id", "log", "records": [the run's own records, in order],
    ///    "workers": [{"task_id" ("t1"; its workers "t1.1"), "agent", "depth", "task",
    ///      "outcome" ("ok" or an error code; null: no delegation_finished), "error",
    ///      "output", "steps", "usage", "duration_ms", "started", "finished" (times),
    ///      "records": [the worker's own records], "workers": [its own, same layout]}],
    ///    "reviews": [{"round", "task_id", "criteria", "verdict" ("pass", "revise" or null),
    ///      "issues", "error", "records": [the reviewer's records]}]}
    /// Records are the log's lines as written. Workers are in the order the log first
    /// names them; a delegation refused before a worker started is only a record of its
    /// parent ("delegation_finished", "task_id": null). A value the log does not hold is
    /// null. Fields are only ever added.
    #[command(verbatim_doc_comment)]
    Show {
        /// The run id (or a unique prefix).
        run: String,
        /// Folder of audit logs.
        #[arg(long, env = "REACH_RUNS_DIR", default_value = ".reach/runs")]
        runs_dir: PathBuf,
        /// Machine-readable output (layout above).
        #[arg(long)]
        json: bool,
    },
    /// Check that audit logs are as written: every record linked to the one before it
    /// (sha256 chain), every head signed (Ed25519) by the expected key, every log ended
    /// by a signed head. Names the first record changed, removed or inserted.
    ///
    /// Exit status: 0 every log intact; 1 a log was tampered with; 3 none tampered, but
    /// one has no signed head (a run not finished, a host stopped or killed, or an end cut
    /// off) — its chain is checked up to its last record.
    ///
    /// `--json` prints {"runs_dir", "key", "runs": [{"run_id", "verdict" ("intact",
    /// "unsealed", "tampered", "unchained": written before logs were chained), "records",
    /// "files", "key", "problem": null or {"kind" ("changed", "removed", "inserted",
    /// "foreign", "bad_signature", "wrong_key", "cut", "missing_head", "missing_part"),
    /// "record", "file", "line", "message"}, "notes"}]}. Fields are only ever added.
    #[command(verbatim_doc_comment)]
    Verify {
        /// The run id (or a unique prefix); leave out with `--all`.
        #[arg(required_unless_present = "all", conflicts_with = "all")]
        run: Option<String>,
        /// Every log in the runs folder.
        #[arg(long)]
        all: bool,
        /// The public key to check against: 64 hex characters, or a file holding them
        /// (what `reach runs pubkey` printed on the host that wrote the logs). Default:
        /// this runs folder's own key.
        #[arg(long)]
        key: Option<String>,
        /// Folder of audit logs.
        #[arg(long, env = "REACH_RUNS_DIR", default_value = ".reach/runs")]
        runs_dir: PathBuf,
        /// Machine-readable output (layout above).
        #[arg(long)]
        json: bool,
    },
    /// What a run changed in the granted folders, file by file: a unified diff for text,
    /// sizes for anything else, from the journal the host kept of every change.
    ///
    /// `--json` prints {"run_id", "from_step", "changes": [{"grant", "path", "before"
    /// ({"kind": "missing"|"file"|"dir"|"symlink", …}), "after" and "now" ({"kind", "hash",
    /// "size"} or {"kind": "missing"|"dir"} or {"kind": "symlink", "target"}),
    /// "not_undoable"}]}. Fields are only ever added.
    #[command(verbatim_doc_comment)]
    Diff {
        /// The run id (or a unique prefix).
        run: String,
        /// Only what steps N and later changed.
        #[arg(long, default_value_t = 0)]
        from_step: u64,
        /// Folder of audit logs (the journals are in its `journal/` folder).
        #[arg(long, env = "REACH_RUNS_DIR", default_value = ".reach/runs")]
        runs_dir: PathBuf,
        /// Machine-readable output (layout above).
        #[arg(long)]
        json: bool,
    },
    /// Put every path a run changed back as it was before the run (or before step N). A
    /// path changed since by someone else is listed and left alone unless `--force`. The
    /// undo is itself a run, audited and journaled: `reach runs undo` of it undoes it.
    /// Exit status 1 when a path was left alone or could not be restored.
    Undo {
        /// The run id (or a unique prefix).
        run: String,
        /// Only undo steps N and later.
        #[arg(long, default_value_t = 0)]
        from_step: u64,
        /// Put back paths changed since the run too.
        #[arg(long)]
        force: bool,
        /// Folder of audit logs (the journals are in its `journal/` folder).
        #[arg(long, env = "REACH_RUNS_DIR", default_value = ".reach/runs")]
        runs_dir: PathBuf,
        /// Machine-readable output: {"run_id" (the undo's), "undid", "from_step",
        /// "restored": [paths], "conflicts": [{"path", "left", "now"}], "failed": [[path, why]]}.
        #[arg(long)]
        json: bool,
    },
    /// Remove old journals (what `diff` and `undo` read) and recordings (what `replay`
    /// reads): those last changed more than `--older-than` days ago, then the oldest until
    /// the rest fit in `--max-mb` (journals and recordings each). The runs' audit logs stay;
    /// a pruned run can no longer be diffed, undone or replayed offline.
    Prune {
        /// Remove journals older than this many days.
        #[arg(long)]
        older_than: Option<u64>,
        /// Then keep at most this many MiB of journals, removing the oldest first.
        #[arg(long)]
        max_mb: Option<u64>,
        /// Only say what would be removed.
        #[arg(long)]
        dry_run: bool,
        /// Folder of audit logs (the journals are in its `journal/` folder).
        #[arg(long, env = "REACH_RUNS_DIR", default_value = ".reach/runs")]
        runs_dir: PathBuf,
        /// Machine-readable output: {"removed": [[run id, bytes]], "kept", "kept_bytes", "dry_run",
        /// "recordings": {"removed", "kept", "kept_bytes"}}.
        #[arg(long)]
        json: bool,
    },
    /// Run a past run's task again under the current skills and table, with the model's
    /// recorded replies in place of the model and (unless `--live`) the recorded responses
    /// in place of the network, and report where it diverges: a call now denied or refused
    /// by its schema, a result that differs (with a diff), a file written differently, a
    /// call made or not made. What the replay's skills write is put back afterwards.
    /// Exit status 0 when nothing diverges, 1 when something does.
    ///
    /// `--json` prints {"run_id", "replay_id", "live", "matches", "restored", "stop",
    /// "divergences": [{"kind": "denied"|"refused"|"result"|"written"|"unrecorded"|
    /// "missing"|"request"|"compaction"|"stop", "call", "worker", "step", "tool", "detail",
    /// "diff"}]}. Fields are only ever added.
    #[command(verbatim_doc_comment)]
    Replay {
        /// The run id (or a unique prefix).
        run: String,
        /// Let the skills send their requests for real (and record them) instead of
        /// answering them from the run's recording.
        #[arg(long)]
        live: bool,
        /// Folder of audit logs (the recordings are in its `recordings/` folder).
        #[arg(long, env = "REACH_RUNS_DIR", default_value = ".reach/runs")]
        runs_dir: PathBuf,
        /// Machine-readable output (layout above).
        #[arg(long)]
        json: bool,
    },
    /// Print the public key that signs this runs folder's audit logs (64 hex characters;
    /// made on first use): keep it off this machine to verify its logs with `--key`.
    Pubkey {
        /// Folder of audit logs.
        #[arg(long, env = "REACH_RUNS_DIR", default_value = ".reach/runs")]
        runs_dir: PathBuf,
    },
}

/// `reach memory …`
#[derive(Debug, clap::Args)]
pub struct MemoryArgs {
    /// The memory database: a file, or a `postgres://` URL (its password in
    /// REACH_MEMORY_PASSWORD) [default: [memory] in reach.toml, else .reach/memory.db].
    #[arg(long, global = true, value_name = "PATH|URL")]
    pub db: Option<PathBuf>,
    /// Machine-readable output: one JSON object (`export` writes JSON Lines either way).
    #[arg(long, global = true)]
    pub json: bool,
    /// What to do with memory.
    #[command(subcommand)]
    pub command: MemoryCommand,
}

/// `reach memory …` subcommands.
#[derive(Debug, Subcommand)]
pub enum MemoryCommand {
    /// Active entries, oldest first.
    List {
        /// Superseded entries too.
        #[arg(long)]
        all: bool,
    },
    /// Active entries matching the words of QUERY, best first.
    Search {
        /// Words to look for (any of them; not a query language).
        query: String,
        /// Entries for this task type rank first.
        #[arg(long, value_name = "TYPE")]
        task_type: Option<String>,
        /// Most entries shown.
        #[arg(long, default_value_t = 10)]
        limit: usize,
    },
    /// One entry, with every version of its subject.
    Show {
        /// The entry's id.
        id: i64,
    },
    /// Delete an entry and the older versions it superseded, for good.
    Forget {
        /// The entry's id.
        id: i64,
        /// Do not ask (required without a terminal).
        #[arg(long, short = 'y')]
        yes: bool,
    },
    /// Write every entry, superseded ones too, as JSON Lines.
    Export {
        /// Where to write [default: stdout].
        file: Option<PathBuf>,
    },
    /// Add the entries of an export file, all or none (`-` reads stdin).
    Import {
        /// The JSON Lines file.
        file: PathBuf,
    },
}
