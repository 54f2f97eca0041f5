//! Agent Reach: run an LLM agent's tools as sandboxed WebAssembly components.
//!
//! Every tool belongs to a *skill*: a WASI 0.2 component built against the
//! `agent-reach:skill` WIT contract. The host loads skills from a folder
//! ([`registry`]), reads the operator's permission table ([`policy`]), and
//! runs each call in a fresh wasmtime instance that can reach exactly the
//! folders, hosts and environment variables the table grants, within its
//! memory, time and output limits ([`runtime`]).
//!
//! ```no_run
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! use agent_reach::{policy::Policy, registry::Registry, runtime::{Runtime, RuntimeConfig}};
//! use std::path::Path;
//!
//! let runtime = Runtime::new(RuntimeConfig::default())?;
//! let policy = Policy::load(Path::new("reach.toml"))?;
//! let registry = Registry::scan(&runtime, Path::new("skills"), &policy).await?;
//! let skill = registry.active("files").expect("files skill is installed");
//! let grants = policy.grants("files");
//! let listing = runtime.call(skill.loaded(), &grants, "list", r#"{"path": "."}"#).await;
//! println!("{listing:?}");
//! # Ok(()) }
//! ```

pub mod error;
pub mod eval;
pub mod harness;
mod host;
pub mod mcp;
pub mod memory;
pub mod model;
pub mod policy;
pub mod registry;
pub mod reload;
pub mod runtime;
pub mod text;

pub use error::{ErrorCode, ToolFailure};
pub use host::{AlwaysConfirm, CheckedCall, Confirmer, Host, HostError, NeverConfirm, confirmation_prompt};
