//! The host facade: a runtime, a policy and a registry, and the one checked
//! path from "the model wants SKILL.TOOL with these arguments" to a result.

use crate::error::{ErrorCode, ToolFailure};
use crate::policy::{Level, Policy, PolicyError, ProtectedPath};
use crate::registry::{Registry, RegistryError};
use crate::runtime::{Runtime, RuntimeConfig, RuntimeError};
use std::path::Path;
use std::sync::Arc;

mod builder;
mod scripts;
pub use builder::HostBuilder;

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
    /// The permission table does not fit the installed skills or lets a
    /// skill write the host's own files.
    #[error(transparent)]
    Policy(#[from] PolicyError),
    /// `[skills.S.tools.T]` names a tool skill `S` does not have: the
    /// override (often a `deny`) would silently apply to nothing.
    #[error(
        "{file}:{line}: [skills.{skill}.tools.{tool}]: skill {skill} has no tool `{tool}` \
         (its tools: {tools}); fix the name — tool names are case-sensitive — or remove the \
         override"
    )]
    UnknownTool {
        /// The policy file.
        file: String,
        /// Line of the override.
        line: usize,
        /// The skill.
        skill: String,
        /// The tool named by the override.
        tool: String,
        /// The skill's tools, comma-separated.
        tools: String,
    },
}

/// Decides tools whose level is `confirm`.
///
/// `confirm` is called on the run's task and blocks it until it returns: an
/// embedder that asks a person through an async UI can wait inside it with
/// `tokio::task::block_in_place` on a multi-threaded runtime. `Send + Sync`,
/// so that a run can be spawned.
///
/// ```
/// use agent_reach::Confirmer;
///
/// /// Allows reads, refuses everything else.
/// struct ReadsOnly;
///
/// impl Confirmer for ReadsOnly {
///     fn confirm(
///         &self,
///         _skill: &str,
///         tool: &str,
///         _arguments: &serde_json::Value,
///     ) -> Result<(), String> {
///         if tool.starts_with("read") { Ok(()) } else { Err(format!("{tool} is not a read")) }
///     }
/// }
/// ```
pub trait Confirmer: Send + Sync {
    /// Whether a person allows `skill.tool` with these (already validated)
    /// arguments. `Err(reason)` refuses and says why (e.g. no terminal).
    fn confirm(&self, skill: &str, tool: &str, arguments: &serde_json::Value)
    -> Result<(), String>;

    /// True when a person answers (a terminal, an embedder's dialog). The
    /// harness stops a run when a person declines; a refusal with no one
    /// there is only reported to the model, which may try another way.
    fn person_present(&self) -> bool {
        false
    }
}

/// Implements [`Confirmer`] for a pointer to one by asking what it points at.
macro_rules! forward_confirmer {
    ($(#[$doc:meta])* $pointer:ty) => {
        $(#[$doc])*
        impl<C: Confirmer + ?Sized> Confirmer for $pointer {
            fn confirm(
                &self,
                skill: &str,
                tool: &str,
                arguments: &serde_json::Value,
            ) -> Result<(), String> {
                (**self).confirm(skill, tool, arguments)
            }

            fn person_present(&self) -> bool {
                (**self).person_present()
            }
        }
    };
}

forward_confirmer!(
    /// A shared confirmer: the embedder keeps a handle (to read what a person
    /// was asked, say) while an [`Agent`](crate::Agent) holds another.
    Arc<C>
);
forward_confirmer!(
    /// A borrowed confirmer: `&'static` ones (a unit struct's, a leaked
    /// one) can be handed to an [`Agent`](crate::Agent) as they are.
    &C
);

/// Longest argument value shown whole when a person is asked to confirm.
const CONFIRM_VALUE_CHARS: usize = 200;

/// What a person is shown to confirm `skill.tool`: one line naming the call,
/// then one line per argument. Keys and values have control and invisible
/// characters escaped (a value cannot move the cursor and redraw the
/// question), and a long value is cut with its full length stated. Nested
/// values are shown as compact JSON, escaped the same way.
pub fn confirmation_prompt(skill: &str, tool: &str, arguments: &serde_json::Value) -> String {
    use crate::text::shown_value;
    let mut out = format!(
        "{}.{} needs your confirmation. Arguments:",
        shown_value(skill, 64),
        shown_value(tool, 64)
    );
    match arguments.as_object() {
        Some(map) if !map.is_empty() => {
            for (key, value) in map {
                let text = match value {
                    serde_json::Value::String(s) => s.clone(),
                    other => other.to_string(),
                };
                out.push_str(&format!(
                    "\n  {}: {}",
                    shown_value(key, 64),
                    shown_value(&text, CONFIRM_VALUE_CHARS)
                ));
            }
        }
        Some(_) => out.push_str("\n  (none)"),
        None => out
            .push_str(&format!("\n  {}", shown_value(&arguments.to_string(), CONFIRM_VALUE_CHARS))),
    }
    out
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
///
/// Its parts are read through [`Host::policy`], [`Host::registry`] and
/// [`Host::runtime`]; they cannot be swapped one by one, because
/// [`Host::new`] checked that they fit together (no skill may write the
/// host's own files, every per-tool override names a tool).
pub struct Host {
    runtime: Arc<Runtime>,
    policy: Policy,
    registry: Registry,
}

impl Host {
    /// Start a runtime and load every skill in `skills_dir`, holding each
    /// to the pins in `policy`.
    pub async fn load(
        config: RuntimeConfig,
        policy: Policy,
        skills_dir: &Path,
    ) -> Result<Host, HostError> {
        let runtime = Runtime::new(config)?;
        let registry = Registry::scan(&runtime, skills_dir, &policy).await?;
        Host::new(runtime, policy, registry, &[])
    }

    /// Put the parts together after checking that they fit: no skill may
    /// write the host's own files (the table, the skills folder, the compile
    /// cache, and `protected`, e.g. the audit folder), and every per-tool
    /// override names a tool the installed skill has.
    pub fn new(
        runtime: impl Into<Arc<Runtime>>,
        policy: Policy,
        registry: Registry,
        protected: &[ProtectedPath],
    ) -> Result<Host, HostError> {
        let runtime = runtime.into();
        let mut own = vec![ProtectedPath::new("the skills folder", registry.dir())];
        if let Some(cache) = runtime.cache_dir() {
            own.push(ProtectedPath::new("the compile cache", cache));
        }
        if let Some(key) = runtime.cache_key_file() {
            own.push(ProtectedPath::new("the compile cache's key", key));
        }
        if policy.origin().is_file() {
            own.push(ProtectedPath::new("the permission table", policy.origin()));
        }
        own.extend_from_slice(protected);
        policy.check_protected(&own)?;
        check_overrides(&policy, &registry)?;
        Ok(Host { runtime, policy, registry })
    }

    /// The operator's permission table the host enforces.
    pub fn policy(&self) -> &Policy {
        &self.policy
    }

    /// The skills found on disk: the active version of each, the broken
    /// and superseded files.
    pub fn registry(&self) -> &Registry {
        &self.registry
    }

    /// The wasmtime embedding: one engine and compile cache, shared with
    /// the hosts that replace this one on reload ([`crate::reload`]).
    pub fn runtime(&self) -> &Arc<Runtime> {
        &self.runtime
    }

    /// Call `skill.tool` with `arguments` (JSON text), checking in order:
    /// the tool exists, the arguments are JSON and match its schema, the
    /// policy level allows it (asking `confirmer` for `confirm`); then run it
    /// in its sandbox. Every refusal is a [`ToolFailure`] and is logged.
    pub async fn invoke(
        &self,
        skill: &str,
        tool: &str,
        arguments: &str,
        confirmer: &dyn Confirmer,
    ) -> Result<String, ToolFailure> {
        self.invoke_within(skill, tool, arguments, confirmer, Reach::Granted).await
    }

    /// The checks of [`Host::invoke`] without running anything: the tool
    /// exists, the arguments are JSON matching its schema, and its level is
    /// not `deny` (a denial is logged and returned). A caller that asks a
    /// person asynchronously (an MCP client's elicitation) checks, asks when
    /// [`CheckedCall::level`] is `confirm` — showing
    /// [`CheckedCall::value`] — marks the call [`CheckedCall::confirmed`],
    /// then calls [`Host::run_checked`].
    ///
    /// The arguments are parsed once, here; the skill is sent that value
    /// serialised again, never `arguments` itself, so text the parser reads
    /// one way (a key given twice) cannot show a person one value and run
    /// the skill with another.
    pub fn check(
        &self,
        skill: &str,
        tool: &str,
        arguments: &str,
    ) -> Result<CheckedCall, ToolFailure> {
        let spec = self.registry.tool(skill, tool)?.spec;
        let value: serde_json::Value = serde_json::from_str(arguments).map_err(|err| {
            ToolFailure::new(
                ErrorCode::InvalidArgs,
                format!("{skill}.{tool}: the arguments are not valid JSON: {err}"),
            )
        })?;
        spec.validate(skill, &value)?;
        // Only the level: the grants are resolved once, when the call runs.
        let level = self.policy.level(skill, tool);
        if level == Level::Deny {
            return Err(self.denied(skill, tool));
        }
        let arguments = value.to_string();
        Ok(CheckedCall {
            skill: skill.to_owned(),
            tool: tool.to_owned(),
            arguments,
            value,
            level,
            confirmed: false,
        })
    }

    /// The refusal of a `deny`-level tool, logged.
    fn denied(&self, skill: &str, tool: &str) -> ToolFailure {
        tracing::warn!(skill, tool, "denied: level = deny");
        ToolFailure::new(
            ErrorCode::Denied,
            format!(
                "{skill}.{tool} is forbidden by the permission table {} (level = deny)",
                self.policy.origin().display()
            ),
        )
    }

    /// [`Host::invoke`] with the skill's grants narrowed to `reach`.
    pub async fn invoke_within(
        &self,
        skill: &str,
        tool: &str,
        arguments: &str,
        confirmer: &dyn Confirmer,
        reach: Reach,
    ) -> Result<String, ToolFailure> {
        let mut call = self.check(skill, tool, arguments)?;
        if call.level == Level::Confirm {
            if let Err(why) = confirmer.confirm(skill, tool, &call.value) {
                return Err(call.refused(&why));
            }
            call.confirmed();
        }
        self.run_within(call, reach).await
    }

    /// Run a call [`Host::check`] accepted, in its sandbox, once. A
    /// `confirm` call must have been marked [`CheckedCall::confirmed`]
    /// first, or it is refused.
    pub async fn run_checked(&self, call: CheckedCall) -> Result<String, ToolFailure> {
        self.run_within(call, Reach::Granted).await
    }

    /// [`Host::run_checked`] with the skill's grants narrowed to `reach`.
    ///
    /// The call is checked again against this host's table and skill
    /// first: it may have been checked on another host (the one serving
    /// before a reload), whose table allowed what this one does not.
    pub async fn run_within(&self, call: CheckedCall, reach: Reach) -> Result<String, ToolFailure> {
        let found = self.registry.tool(&call.skill, &call.tool)?;
        found.spec.validate(&call.skill, &call.value)?;
        match self.policy.level(&call.skill, &call.tool) {
            Level::Deny => return Err(self.denied(&call.skill, &call.tool)),
            Level::Confirm if !call.confirmed => {
                return Err(call.refused(
                    "it was not confirmed: ask a person, then mark the call confirmed before \
                     running it",
                ));
            }
            Level::Auto | Level::Confirm => {}
        }
        let grants = match reach {
            Reach::Granted => self.policy.grants(&call.skill),
            Reach::ReadOnly => self.policy.grants(&call.skill).read_only(),
        };
        if let Some((bundle, runners)) = found.script_of() {
            return scripts::run(&self.runtime, runners, bundle, grants, &call.value).await;
        }
        self.runtime.call(found.loaded(), &grants, &call.tool, &call.arguments).await
    }
}

/// How much of its grants a call may use. Narrowing only: nothing here
/// can add to what the table grants.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Reach {
    /// Everything the table grants the skill.
    #[default]
    Granted,
    /// Its folders read-only; no network, credentials or environment
    /// ([`SkillGrants::read_only`](crate::policy::SkillGrants::read_only)).
    ReadOnly,
}

/// A call that passed [`Host::check`]: the tool exists, its arguments match
/// its schema and its level is `auto` or `confirm`.
///
/// Sealed: only [`Host::check`] makes one, and nothing in it can be changed
/// afterwards, so what a person confirms ([`CheckedCall::value`]) is what
/// the skill is sent. Running it ([`Host::run_checked`]) consumes it and
/// checks it again against the host that runs it.
#[derive(Debug)]
pub struct CheckedCall {
    skill: String,
    tool: String,
    /// `value` serialised: the text the skill is sent.
    arguments: String,
    value: serde_json::Value,
    level: Level,
    /// Whether a person allowed it ([`CheckedCall::confirmed`]).
    confirmed: bool,
}

impl CheckedCall {
    /// The skill.
    pub fn skill(&self) -> &str {
        &self.skill
    }

    /// The tool.
    pub fn tool(&self) -> &str {
        &self.tool
    }

    /// The arguments as checked: what a person is shown
    /// ([`confirmation_prompt`]) and, serialised, what the skill receives.
    pub fn value(&self) -> &serde_json::Value {
        &self.value
    }

    /// The level the checking host's table gives the tool: `auto` or
    /// `confirm` (a `deny` never gets this far).
    pub fn level(&self) -> Level {
        self.level
    }

    /// The refusal when a `confirm` call is not confirmed, logged: `why`
    /// says what happened (declined, no one to ask).
    pub fn refused(&self, why: &str) -> ToolFailure {
        let (skill, tool) = (&self.skill, &self.tool);
        tracing::warn!(skill, tool, reason = %why, "denied: not confirmed");
        ToolFailure::new(
            ErrorCode::Denied,
            format!("{skill}.{tool} needs a person's confirmation (level = confirm): {why}"),
        )
    }

    /// Record, and log, that a person allowed the call after being shown
    /// [`CheckedCall::value`]. Without it a `confirm` call does not run.
    pub fn confirmed(&mut self) {
        tracing::info!(skill = %self.skill, tool = %self.tool, "confirmed");
        self.confirmed = true;
    }
}

/// Every `[skills.S.tools.T]` must name a tool of the active `S`. A skill
/// that is not installed (or broken) is left alone: nothing of it can run,
/// and `reach policy check` warns about it.
fn check_overrides(policy: &Policy, registry: &Registry) -> Result<(), HostError> {
    for skill in policy.listed_skills() {
        let Some(active) = registry.active(skill) else { continue };
        for (tool, line) in policy.tool_overrides(skill) {
            if active.manifest.tool(tool).is_none() {
                let tools: Vec<&str> =
                    active.manifest.tools.iter().map(|t| t.name.as_str()).collect();
                return Err(HostError::UnknownTool {
                    file: policy.origin().display().to_string(),
                    line,
                    skill: skill.to_owned(),
                    tool: tool.to_owned(),
                    tools: tools.join(", "),
                });
            }
        }
    }
    Ok(())
}
