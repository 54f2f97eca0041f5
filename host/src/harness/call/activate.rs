//! Opening an Agent Skills bundle (tier 2) and reading one of its files
//! (tier 3).
//!
//! Opening returns the `SKILL.md` body, the list of the bundle's files
//! (not their contents) and the tools now offered; the body is sent once
//! per run — opening the skill again says where it already is — and
//! [`super::super::checkpoint`] keeps it through compaction
//! ([`activation_heading`] marks it).

use crate::bundle::read::{self, ReadError};
use crate::error::{ErrorCode, ToolFailure};
use crate::harness::Harness;
use crate::harness::state::RunState;
use crate::registry::{BundleEntry, RUN_SCRIPT};
use crate::text::shorten_chars;
use serde_json::Value;

/// The first line of a bundle's activation: how the harness finds the
/// instructions of an open skill in the conversation.
pub(crate) fn activation_heading(skill: &str) -> String {
    format!("[skill {skill}] instructions")
}

/// What the model reads when `entry` is opened: the heading, the body, the
/// files, the tools now offered (`tools`: offered name and description).
pub(crate) fn activation_text(entry: &BundleEntry, tools: &[(String, String)]) -> String {
    let Some(bundle) = entry.active() else { return String::new() };
    let mut out = format!("{}\n", activation_heading(&bundle.name));
    out.push_str(if bundle.body.is_empty() { "(no instructions)" } else { &bundle.body });
    let files: Vec<&str> = bundle
        .files
        .iter()
        .map(|f| f.path.as_str())
        .filter(|p| *p != crate::bundle::SKILL_MD && !p.starts_with("tools/"))
        .collect();
    if !files.is_empty() {
        out.push_str(&format!(
            "\n\nFiles of this skill (read one with skills__read when the instructions call for \
             it): {}",
            files.join(", ")
        ));
    }
    let cannot: Vec<&str> =
        entry.scripts.iter().filter(|s| s.cannot_run.is_some()).map(|s| s.path.as_str()).collect();
    if !tools.is_empty() {
        let listed: Vec<String> =
            tools.iter().map(|(n, d)| format!("- {n}: {}", shorten_chars(d, 160))).collect();
        out.push_str(&format!("\n\nTools offered from now on:\n{}", listed.join("\n")));
        if tools.iter().any(|(n, _)| n.ends_with(RUN_SCRIPT)) {
            out.push_str(&format!(
                "\nRun this skill's scripts with {}__{RUN_SCRIPT}, never by other means.",
                bundle.name
            ));
        }
    }
    if !cannot.is_empty() {
        out.push_str(&format!(
            "\n\nThese scripts cannot run here (only Python and JavaScript scripts run, in the sandbox): {}. Do \
             what they do with the tools you have, or tell the user.",
            cannot.join(", ")
        ));
    }
    out
}

impl Harness<'_> {
    /// `skills__open` of a bundle: its instructions, files and tools, once.
    pub(in crate::harness) fn open_bundle(
        &mut self,
        run: &mut RunState,
        skill: &str,
    ) -> Result<String, ToolFailure> {
        let Some(entry) = self.host.registry().active_bundle(skill) else {
            return Err(ToolFailure::new(
                ErrorCode::NoSuchTool,
                format!("no skill named `{skill}` can be opened; skills__open lists them"),
            ));
        };
        if run.opened.iter().any(|s| s == skill) {
            return Ok(format!(
                "{skill} is already open: its instructions are earlier in this conversation \
                 (\"{}\") and its tools are offered.",
                activation_heading(skill)
            ));
        }
        let tools = self.toolbox.described_tools(skill);
        let text = activation_text(entry, &tools);
        self.open(run, skill);
        Ok(text)
    }

    /// `skills__read`: one file of an offered bundle, as its manifest lists
    /// it and with the digest taken when it loaded.
    pub(super) fn read_bundle_file(&self, arguments: &Value) -> Result<String, ToolFailure> {
        let skill = arguments.get("skill").and_then(Value::as_str).unwrap_or("");
        let path = arguments.get("path").and_then(Value::as_str).unwrap_or("");
        let bundle = self
            .host
            .registry()
            .active_bundle(skill)
            .filter(|_| self.toolbox.is_bundle(skill))
            .and_then(BundleEntry::active)
            .ok_or_else(|| {
                ToolFailure::new(
                    ErrorCode::NoSuchTool,
                    format!(
                        "no skill named `{skill}` has files to read; skills: {}",
                        self.toolbox.bundles().join(", ")
                    ),
                )
            })?;
        read::text(bundle, path).map_err(|e| {
            let code = match e {
                ReadError::NotListed { .. } => ErrorCode::NotFound,
                ReadError::Changed { .. } => ErrorCode::Denied,
                ReadError::Binary { .. } | ReadError::TooLarge { .. } => ErrorCode::InvalidArgs,
            };
            ToolFailure::new(code, e.to_string())
        })
    }
}
