//! Agent Reach: run an LLM agent whose every tool is a sandboxed
//! WebAssembly component, allowed only what an operator's permission
//! table grants.
//!
//! Every tool belongs to a *skill*: a WASI 0.2 component built against the
//! `agent-reach:skill` WIT contract. A [`Host`] loads skills from a folder
//! ([`registry`]), reads the permission table ([`policy`]), and runs each
//! call in a fresh wasmtime instance that can reach exactly the folders,
//! hosts and environment variables the table grants, within its memory,
//! time and output limits ([`runtime`]). An [`Agent`] runs a task over a
//! host with a [`Model`](model::Model): it offers the tools, checks each
//! call the model makes (known tool, valid arguments, the level, a person
//! for `confirm`), runs it, and feeds the result back until the model
//! answers or a limit stops it ([`harness`]), writing an audit log of every
//! model request and tool call ([`AuditSink`]) and reporting [`Event`]s as
//! they happen.
//!
//! # Embedding
//!
//! ```no_run
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! use agent_reach::model::OpenAiClient;
//! use agent_reach::{Agent, Host};
//!
//! let host = Host::builder()
//!     .skills_dir("skills")
//!     .policy_str(r#"
//!         [skills.files]
//!         level = "auto"
//!         read = ["./docs"]
//!     "#)
//!     .build()
//!     .await?;
//! let model = OpenAiClient::from_env("gpt-4.1-mini")?; // OPENAI_API_KEY or OPENAI_BASE_URL
//! let agent = Agent::builder(host, model).build()?;
//!
//! let mut run = agent.start("Which files are in ./docs?")?;
//! while let Some(event) = run.next_event().await {
//!     eprintln!("{event}"); // step 1: files__list {"path":"./docs"} …
//! }
//! let report = run.report().await?;
//! println!("{}", report.answer.unwrap_or_default());
//! # Ok(()) }
//! ```
//!
//! - [`Host::builder`]: the skills folder, the table (a file, a string or a
//!   [`Policy`](policy::Policy)), runtime options, paths of the embedder's
//!   that no skill may write.
//! - [`Agent::builder`]: the model, who confirms ([`Confirmer`]), where the
//!   audit log goes, limits ([`RunConfig`](harness::RunConfig)), a model
//!   per worker profile, long-term memory, a live
//!   [`Progress`](harness::Progress) observer.
//! - [`Agent::run`] waits for the [`RunReport`](harness::RunReport);
//!   [`Agent::start`] returns a [`Run`] to watch and steer;
//!   [`Agent::run_with_id`] names the run (its audit log's name).
//! - Bring any model by implementing [`Model`](model::Model).
//!
//! `reach run` and `reach eval` are built on these same builders.
//!
//! # Cargo features
//!
//! The default, `cli`, is the `reach` command and everything it serves. An
//! embedder that wants the sandbox and the loop alone depends on
//! `agent-reach` with `default-features = false` and adds what it serves:
//!
//! - `mcp`: [`mcp`], serving a host's skills to MCP clients (stdio and
//!   streamable HTTP);
//! - `memory-sqlite`: [`memory::SqliteStore`], the bundled long-term
//!   memory (the [`memory::MemoryStore`] trait is always there);
//! - `reload`: [`reload::watch`], reloading when the skills folder or the
//!   table change ([`reload::LiveHost`] is always there);
//! - `eval`: [`eval`], the evaluation runner and its fixture web server;
//! - `cli`: all of the above, and the `reach` binary's own dependencies.
//!
//! # Without a model
//!
//! A host calls tools directly, with the same checks:
//!
//! ```no_run
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! use agent_reach::{AlwaysConfirm, Host};
//!
//! let host = Host::builder().policy_file("reach.toml").build().await?;
//! let listing = host.invoke("files", "list", r#"{"path": "."}"#, &AlwaysConfirm).await;
//! println!("{listing:?}");
//! # Ok(()) }
//! ```
//!
//! # Serving other agents, and changing skills while serving
//!
//! [`mcp::McpServer`] serves a host's skills to MCP clients over stdio or
//! streamable HTTP (what `reach mcp` runs), with the table still in charge.
//! [`reload::LiveHost`] holds the host a long-running program serves and
//! swaps in a new one when [`reload::watch`] sees the skills folder or the
//! table change; calls in flight finish on the host they started with.
//!
//! ```no_run
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! use agent_reach::mcp::{McpServer, serve_stdio};
//! use agent_reach::reload::{self, LiveHost, ReloadSource};
//! use agent_reach::Host;
//!
//! let host = Host::builder().skills_dir("skills").policy_file("reach.toml").build().await?;
//! let live = LiveHost::new(host);
//! let _watching =
//!     reload::watch(live.clone(), ReloadSource::new(Some("reach.toml".into()), "skills"))?;
//! serve_stdio(McpServer::live(live)).await?;
//! # Ok(()) }
//! ```
//!
//! # Workers and a reviewer
//!
//! A table's `[agents.NAME]` profiles become workers the run's model hands
//! pieces of its task to with `agents__delegate`: each with
//! only its profile's skills, only its task envelope as context, and an
//! answer checked against the envelope's JSON Schema; limits hold across
//! the whole tree. [`AgentBuilder::review`] adds a reviewer with read-only
//! skills that checks the answer against criteria.

mod agent;
pub(crate) mod agents;
/// Agent Skills bundles (`SKILL.md` folders): reading, checking, digests.
pub mod bundle;
pub mod error;
#[cfg(feature = "eval")]
pub mod eval;
#[cfg(test)]
mod fuzz;
pub mod harness;
mod host;
/// Journaled writes: what a run changed in granted folders, rolled back or undone.
pub mod journal;
#[cfg(feature = "mcp")]
pub mod mcp;
pub mod memory;
pub mod model;
pub mod oci;
pub mod policy;
pub(crate) mod private_fs;
pub mod registry;
pub mod reload;
pub mod replay;
pub mod runtime;
/// Recordings of runs' host I/O, for replay.
pub mod tape;
pub mod text;
mod tls;

pub use agent::{Agent, AgentBuilder, DEFAULT_EVENT_CAPACITY, Run, RunError};
pub use error::{ErrorCode, ToolFailure};
pub use harness::audit::AuditSink;
pub use harness::events::Event;
pub use host::{
    AlwaysConfirm, CheckedCall, Confirmer, Host, HostBuilder, HostError, NeverConfirm, Reach,
    confirmation_prompt,
};
