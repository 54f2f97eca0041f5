//! What MCP clients see of the skills: tools named `SKILL__TOOL` with
//! annotations read off the grants, results with `structuredContent`, and
//! skill instructions as prompts and resources.

use crate::Host;
use crate::error::{ErrorCode, ToolFailure};
use crate::policy::{Level, SkillGrants};
use crate::registry::{ActiveSkill, Manifest};
use rmcp::model::{
    CallToolResult, ContentBlock, JsonObject, Prompt, Resource, Tool, ToolAnnotations,
};
use std::sync::Arc;

/// Scheme and prefix of the resources holding skills' instructions.
const INSTRUCTIONS_URI: &str = "reach://skills/";

/// The MCP name of `skill.tool`: `skill__tool`, the form the harness offers
/// models too (clients commonly allow only `[A-Za-z0-9_-]` in tool names).
pub fn tool_name(skill: &str, tool: &str) -> String {
    format!("{skill}__{tool}")
}

/// Whether `skill` is served: the skills the table names under
/// `[skills.NAME]`, so that an operator serves exactly those (an installed
/// skill the table does not name is left out, however the table's
/// `[defaults]` would treat it). With the built-in table — no file, so
/// nothing named — every skill, each at `confirm` with nothing granted.
pub fn served(host: &Host, skill: &str) -> bool {
    host.policy().is_builtin() || host.policy().lists(skill)
}

/// The active skills that are [`served`], in the registry's order.
fn served_skills(host: &Host) -> impl Iterator<Item = ActiveSkill<'_>> {
    host.registry().active_skills().into_iter().filter(|skill| served(host, &skill.manifest.name))
}

/// What the served skills and bundles offer, `.wasm` skills first: a
/// bundle's tools (`tools/*.wasm`, `run_script`) are served like any
/// skill's, with the bundle's grants.
fn served_manifests(host: &Host) -> Vec<&Manifest> {
    let mut all: Vec<&Manifest> = served_skills(host).map(|s| s.manifest).collect();
    all.extend(
        host.registry()
            .active_bundles()
            .filter_map(|b| b.manifest.as_ref())
            .filter(|m| served(host, &m.name)),
    );
    all
}

/// Every active skill and bundle, served or not.
fn all_manifests(host: &Host) -> Vec<&Manifest> {
    let mut all: Vec<&Manifest> =
        host.registry().active_skills().into_iter().map(|s| s.manifest).collect();
    all.extend(host.registry().active_bundles().filter_map(|b| b.manifest.as_ref()));
    all
}

/// The active skills left out because the table does not name them, for
/// the log.
pub fn unserved(host: &Host) -> Vec<String> {
    host.registry()
        .active_skills()
        .into_iter()
        .map(|s| s.manifest.name.clone())
        .filter(|name| !served(host, name))
        .collect()
}

/// The `(skill, tool)` an MCP tool name stands for, looked up among the
/// served skills (not split on `__`, which a skill name may contain).
pub fn resolve(host: &Host, name: &str) -> Result<(String, String), ToolFailure> {
    let tool_of = |manifest: &&Manifest| {
        name.strip_prefix(manifest.name.as_str())
            .and_then(|rest| rest.strip_prefix("__"))
            .filter(|tool| manifest.tool(tool).is_some())
            .map(|tool| (manifest.name.clone(), tool.to_owned()))
    };
    if let Some(found) = served_manifests(host).iter().find_map(tool_of) {
        return Ok(found);
    }
    // Installed but not named: say so, so the operator sees why.
    let message = match all_manifests(host).iter().find_map(tool_of) {
        Some((skill, _)) => format!(
            "no tool `{name}`: the permission table {} does not name skill `{skill}` \
             ([skills.{skill}]), so it is not served; the tools served are listed with tools/list",
            host.policy().origin().display()
        ),
        None => format!("no tool `{name}`: tools are named SKILL__TOOL; list them with tools/list"),
    };
    Err(ToolFailure::new(ErrorCode::NoSuchTool, message))
}

/// Every tool of every served skill whose level is not `deny`, in the
/// registry's order. Denied tools are left out: a client cannot call them
/// and a model should not be offered them.
pub fn list(host: &Host) -> Vec<Tool> {
    let mut tools = Vec::new();
    for manifest in served_manifests(host) {
        let grants = host.policy().grants(&manifest.name);
        let annotations = annotations(&grants);
        for spec in &manifest.tools {
            if grants.level_for(&spec.name) == Level::Deny {
                continue;
            }
            let schema: JsonObject = match &spec.parameters {
                serde_json::Value::Object(map) => map.clone(),
                _ => serde_json::json!({"type": "object"}).as_object().cloned().unwrap_or_default(),
            };
            let description = described(&spec.description, grants.level_for(&spec.name));
            tools.push(
                Tool::new(tool_name(&manifest.name, &spec.name), description, Arc::new(schema))
                    .with_annotations(annotations.clone()),
            );
        }
    }
    tools
}

/// A tool's description, saying when a person will be asked first (a
/// client can tell its user before the model calls it).
fn described(description: &str, level: Level) -> String {
    match level {
        Level::Confirm => format!("{description} (Needs the user's confirmation on each call.)"),
        _ => description.to_owned(),
    }
}

/// Hints from what the table grants the skill: read-only when it can write
/// no folder and reach no host, destructive when it can write a folder,
/// open-world when it can reach the network. Hints only — the sandbox
/// enforces the grants whatever a client makes of them.
pub fn annotations(grants: &SkillGrants) -> ToolAnnotations {
    let writes = !grants.write.is_empty();
    let network = !grants.net.is_empty();
    ToolAnnotations::new().read_only(!writes && !network).destructive(writes).open_world(network)
}

/// A successful call: the skill's output as text, and as
/// `structuredContent` when it is a JSON object.
pub fn success(output: String) -> CallToolResult {
    let structured = match serde_json::from_str::<serde_json::Value>(&output) {
        Ok(value @ serde_json::Value::Object(_)) => Some(value),
        _ => None,
    };
    let mut result = CallToolResult::success(vec![ContentBlock::text(output)]);
    result.structured_content = structured;
    result
}

/// A failed call as a tool result (`isError`), not a protocol error, so the
/// client's model reads the code, the message and the suggestion.
pub fn failure(failure: &ToolFailure) -> CallToolResult {
    let json = failure.to_json();
    let mut result = CallToolResult::error(vec![ContentBlock::text(json.to_string())]);
    result.structured_content = Some(json);
    result
}

/// One prompt per served skill with instructions, named after the skill.
pub fn prompts(host: &Host) -> Vec<Prompt> {
    with_instructions(host)
        .map(|(skill, _)| {
            Prompt::new(
                skill.manifest.name.clone(),
                Some(format!(
                    "How to use the {} skill: {}",
                    skill.manifest.name, skill.manifest.description
                )),
                None,
            )
        })
        .collect()
}

/// One resource per served skill with instructions.
pub fn resources(host: &Host) -> Vec<Resource> {
    with_instructions(host)
        .map(|(skill, _)| {
            let mut resource = Resource::new(
                instructions_uri(&skill.manifest.name),
                format!("{} instructions", skill.manifest.name),
            );
            resource.description = Some(skill.manifest.description.clone());
            resource.mime_type = Some("text/markdown".to_owned());
            resource
        })
        .collect()
}

/// The instructions of the skill a prompt name or resource URI names.
pub fn instructions<'h>(host: &'h Host, skill: &str) -> Option<&'h str> {
    host.registry()
        .active(skill)
        .filter(|_| served(host, skill))
        .and_then(|active| active.manifest.instructions.as_deref())
}

/// The skill a resource URI names (`reach://skills/NAME/instructions`).
pub fn skill_of_uri(uri: &str) -> Option<&str> {
    uri.strip_prefix(INSTRUCTIONS_URI)?.strip_suffix("/instructions")
}

/// The URI of a skill's instructions.
pub fn instructions_uri(skill: &str) -> String {
    format!("{INSTRUCTIONS_URI}{skill}/instructions")
}

fn with_instructions(host: &Host) -> impl Iterator<Item = (ActiveSkill<'_>, &str)> {
    served_skills(host).filter_map(|skill| {
        let text = skill.manifest.instructions.as_deref()?;
        // A skill all of whose tools are denied is not offered at all.
        let grants = host.policy().grants(&skill.manifest.name);
        let offered = skill.manifest.tools.iter().any(|t| grants.level_for(&t.name) != Level::Deny);
        offered.then_some((skill, text))
    })
}
