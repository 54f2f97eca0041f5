//! A skill's manifest as the host uses it: validated, with parsed schemas.

use crate::error::{ErrorCode, ToolFailure};
use crate::policy::{BUILTIN_TOOL_NAMES, RESERVED_SKILL_NAMES, Requests};
use crate::runtime::RawManifest;
use serde::Serialize;
use std::sync::{Arc, OnceLock};

/// What a skill says about itself, checked by the host.
#[derive(Clone, Debug, Serialize)]
pub struct Manifest {
    /// Skill name, `[a-z][a-z0-9_-]*`.
    pub name: String,
    /// Semantic version.
    pub version: semver::Version,
    /// Description written for a model.
    pub description: String,
    /// Tools, in the order the skill lists them.
    pub tools: Vec<ToolSpec>,
    /// Long-form Markdown instructions, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub instructions: Option<String>,
    /// What the skill asks the table for: a component's
    /// `agent-reach:requests` section, a bundle's `metadata`. Grants nothing.
    #[serde(skip_serializing_if = "Requests::is_empty")]
    pub requests: Requests,
    /// Why its requests could not be read, when they could not (the skill
    /// loads: requests only inform the operator).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub requests_problem: Option<String>,
}

/// One tool of a skill.
#[derive(Clone, Debug, Serialize)]
pub struct ToolSpec {
    /// Tool name, `[a-z][a-z0-9_]*`.
    pub name: String,
    /// Description written for a model.
    pub description: String,
    /// JSON Schema of the arguments object.
    pub parameters: serde_json::Value,
    /// Example calls.
    pub examples: Vec<Example>,
    #[serde(skip)]
    validator: Arc<OnceLock<jsonschema::Validator>>,
}

/// An example call of a tool.
#[derive(Clone, Debug, Serialize)]
pub struct Example {
    /// What it shows.
    pub description: String,
    /// Arguments object.
    pub arguments: serde_json::Value,
    /// What the tool returns, if given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub result: Option<String>,
}

fn valid_name(name: &str, extra: &[char]) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c.is_ascii_lowercase())
        && chars
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || extra.contains(&c))
        && name.len() <= 64
}

impl Manifest {
    /// Check a manifest returned by `describe`; the error says what to fix.
    pub(crate) fn from_raw(raw: RawManifest) -> Result<Manifest, String> {
        if !valid_name(&raw.name, &['-']) {
            return Err(format!(
                "skill name {:?} is invalid: use [a-z][a-z0-9_-]*, at most 64 characters",
                raw.name
            ));
        }
        if RESERVED_SKILL_NAMES.contains(&raw.name.as_str()) {
            // Its tools would be offered, confirmed and logged under a built-in's name.
            return Err(format!(
                "skill name {:?} is reserved for the harness's built-in tools \
                 ({BUILTIN_TOOL_NAMES}); rename the skill (its name in the manifest, and its file \
                 to match) to anything but {}",
                raw.name,
                RESERVED_SKILL_NAMES.join(", ")
            ));
        }
        let version = semver::Version::parse(&raw.version).map_err(|e| {
            format!(
                "version {:?} of skill {} is not semver (e.g. 1.2.0): {e}",
                raw.version, raw.name
            )
        })?;
        let mut tools: Vec<ToolSpec> = Vec::with_capacity(raw.tools.len());
        for tool in raw.tools {
            let at = format!("{}.{}", raw.name, tool.name);
            if !valid_name(&tool.name, &[]) {
                return Err(format!(
                    "tool name {at:?} is invalid: use [a-z][a-z0-9_]*, at most 64 characters"
                ));
            }
            if tools.iter().any(|t| t.name == tool.name) {
                return Err(format!("tool {at} is listed twice"));
            }
            let parameters: serde_json::Value = serde_json::from_str(&tool.parameters)
                .map_err(|e| format!("{at}: parameters are not JSON: {e}"))?;
            if let Err(err) = jsonschema::meta::validate(&parameters) {
                return Err(format!("{at}: parameters are not a valid JSON Schema: {err}"));
            }
            if parameters.get("type").and_then(|t| t.as_str()) != Some("object") {
                return Err(format!(
                    "{at}: the parameters schema must describe an object (\"type\": \"object\")"
                ));
            }
            let spec = ToolSpec {
                name: tool.name,
                description: tool.description,
                parameters,
                examples: Vec::new(),
                validator: Arc::default(),
            };
            let mut examples = Vec::new();
            for ex in tool.examples {
                let arguments: serde_json::Value = serde_json::from_str(&ex.arguments)
                    .map_err(|e| format!("{at}: an example's arguments are not JSON: {e}"))?;
                if let Err(f) = spec.validate(&raw.name, &arguments) {
                    return Err(format!(
                        "{at}: example {:?} does not match the schema: {}",
                        ex.description, f.message
                    ));
                }
                examples.push(Example {
                    description: ex.description,
                    arguments,
                    result: ex.output,
                });
            }
            tools.push(ToolSpec { examples, ..spec });
        }
        Ok(Manifest {
            name: raw.name,
            version,
            description: raw.description,
            tools,
            instructions: raw.instructions,
            requests: Requests::default(),
            requests_problem: None,
        })
    }

    /// The tool with this name.
    pub fn tool(&self, name: &str) -> Option<&ToolSpec> {
        self.tools.iter().find(|t| t.name == name)
    }
}

impl ToolSpec {
    /// A tool the host itself defines for a skill (a bundle's
    /// `run_script`): no examples, the schema trusted as written.
    pub(crate) fn host_defined(
        name: &str,
        description: String,
        parameters: serde_json::Value,
    ) -> Self {
        ToolSpec {
            name: name.to_owned(),
            description,
            parameters,
            examples: Vec::new(),
            validator: Arc::default(),
        }
    }

    /// Check arguments against the schema; the error names the JSON path
    /// that failed and what the schema wanted there.
    pub fn validate(&self, skill: &str, arguments: &serde_json::Value) -> Result<(), ToolFailure> {
        let validator = match self.validator.get() {
            Some(v) => v,
            None => {
                let compiled = jsonschema::validator_for(&self.parameters).map_err(|e| {
                    ToolFailure::new(
                        ErrorCode::Failed,
                        format!("{skill}.{}: the tool's schema does not compile: {e}", self.name),
                    )
                })?;
                self.validator.get_or_init(|| compiled)
            }
        };
        let problems: Vec<String> = validator
            .iter_errors(arguments)
            .take(5)
            .map(|e| {
                let at = e.instance_path().to_string();
                let at = if at.is_empty() { "/".to_owned() } else { at };
                format!("at {at}: {e} (schema: {})", e.schema_path())
            })
            .collect();
        if problems.is_empty() {
            Ok(())
        } else if problems.iter().any(|p| p.contains("additionalProperties")) {
            // Say what the tool does take: a small model that invented a key
            // can only fix the call if it knows the real ones.
            let known: Vec<&str> = self
                .parameters
                .get("properties")
                .and_then(|p| p.as_object())
                .map(|p| p.keys().map(String::as_str).collect())
                .unwrap_or_default();
            Err(ToolFailure::new(
                ErrorCode::InvalidArgs,
                format!(
                    "{skill}.{}: invalid arguments: {}; this tool takes only: {}",
                    self.name,
                    problems.join("; "),
                    known.join(", ")
                ),
            ))
        } else {
            Err(ToolFailure::new(
                ErrorCode::InvalidArgs,
                format!("{skill}.{}: invalid arguments: {}", self.name, problems.join("; ")),
            ))
        }
    }
}
