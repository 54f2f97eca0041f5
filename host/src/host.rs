//! The host facade: a runtime, a policy and a registry, and the one checked
//! path from "the model wants SKILL.TOOL with these arguments" to a result.

use crate::error::{ErrorCode, ToolFailure};
use crate::policy::{Level, Policy};
use crate::registry::{Registry, RegistryError};
use crate::runtime::{Runtime, RuntimeConfig, RuntimeError};
use std::path::Path;

/// Errors starting a [`Host`].
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum HostError {
    /// The runtime could not start.
    #[error(transparent)]
    Runtime(#[from] RuntimeError),
    /// The skills folder could not be read.
    #[error(transparent)]
    Registry(#[from] RegistryError),
}

/// Decides tools whose level is `confirm`.
pub trait Confirmer {
    /// Whether a person allows `skill.tool` with these (already validated)
    /// arguments. `Err(reason)` refuses and says why (e.g. no terminal).
    fn confirm(&self, skill: &str, tool: &str, arguments: &serde_json::Value) -> Result<(), String>;

    /// True when a person answers (a terminal, an embedder's dialog). The
    /// harness stops a run when a person declines; a refusal with no one
    /// there is only reported to the model, which may try another way.
    fn person_present(&self) -> bool {
        false
    }
}

/// Confirms everything (`--yes`, or an embedder that confirmed elsewhere).
pub struct AlwaysConfirm;

impl Confirmer for AlwaysConfirm {
    fn confirm(&self, _: &str, _: &str, _: &serde_json::Value) -> Result<(), String> {
        Ok(())
    }
}

/// Confirms nothing: `confirm`-level tools are refused.
pub struct NeverConfirm;

impl Confirmer for NeverConfirm {
    fn confirm(&self, _: &str, _: &str, _: &serde_json::Value) -> Result<(), String> {
        Err("no one is available to confirm it".to_owned())
    }
}

/// Skills, permissions and the sandbox runtime together.
pub struct Host {
    /// The wasmtime embedding.
    pub runtime: Runtime,
    /// The operator's permission table.
    pub policy: Policy,
    /// The skills found on disk.
    pub registry: Registry,
}

impl Host {
    /// Start a runtime and load every skill in `skills_dir`.
    pub async fn load(config: RuntimeConfig, policy: Policy, skills_dir: &Path) -> Result<Host, HostError> {
        let runtime = Runtime::new(config)?;
        let registry = Registry::scan(&runtime, skills_dir).await?;
        Ok(Host { runtime, policy, registry })
    }

    /// Call `skill.tool` with `arguments` (JSON text), checking in order:
    /// the tool exists, the arguments are JSON and match its schema, the
    /// policy level allows it (asking `confirmer` for `confirm`); then run it
    /// in its sandbox. Every refusal is a [`ToolFailure`] and is logged.
    pub async fn invoke(&self, skill: &str, tool: &str, arguments: &str, confirmer: &dyn Confirmer) -> Result<String, ToolFailure> {
        let (active, spec) = self.registry.tool(skill, tool)?;
        let value: serde_json::Value = serde_json::from_str(arguments).map_err(|err| {
            ToolFailure::new(ErrorCode::InvalidArgs, format!("{skill}.{tool}: the arguments are not valid JSON: {err}"))
        })?;
        spec.validate(skill, &value)?;
        let grants = self.policy.grants(skill);
        match grants.level_for(tool) {
            Level::Deny => {
                tracing::warn!(skill, tool, "denied: level = deny");
                return Err(ToolFailure::new(
                    ErrorCode::Denied,
                    format!("{skill}.{tool} is forbidden by the permission table {} (level = deny)", self.policy.origin().display()),
                ));
            }
            Level::Confirm => {
                if let Err(why) = confirmer.confirm(skill, tool, &value) {
                    tracing::warn!(skill, tool, reason = %why, "denied: not confirmed");
                    return Err(ToolFailure::new(
                        ErrorCode::Denied,
                        format!("{skill}.{tool} needs a person's confirmation (level = confirm): {why}"),
                    ));
                }
                tracing::info!(skill, tool, "confirmed");
            }
            Level::Auto => {}
        }
        // The text was just validated as this value: pass it on unchanged
        // rather than paying to serialise it again.
        self.runtime.call(active.loaded(), &grants, tool, arguments).await
    }
}
