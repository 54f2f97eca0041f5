//! The harness's built-in tools, as the model is offered them: paging
//! through the workbench, a skill's instructions, the on-demand menu,
//! the memory tools and the delegation tool.

use super::{Target, Toolbox};
use crate::model::ToolSpec;
use crate::policy::Level;
use serde_json::{Value, json};

/// The built-in that pages through a large result kept in the workbench.
pub const WORKBENCH_READ: &str = "workbench__read";
/// The built-in that returns a skill's long-form instructions.
pub const SKILL_INSTRUCTIONS: &str = "skills__instructions";
/// The built-in that opens a skill: its tools are offered from then on
/// (only when skills are disclosed on demand).
pub const SKILL_OPEN: &str = "skills__open";

/// The built-in that returns one file of an Agent Skills bundle (tier 3).
pub const SKILL_READ: &str = "skills__read";

/// The built-in that stores a note.
pub const REMEMBER: &str = "memory__remember";
/// The built-in that searches the notes.
pub const RECALL: &str = "memory__recall";

/// Description and schema of [`REMEMBER`].
pub fn remember_spec() -> (&'static str, Value) {
    (
        "Keep a short note for later runs: something the user asked you to remember (a preference, \
         a fact, a procedure) or a fact a tool result showed. Copy the user's whole sentence \
         exactly, or the result's own words; a note found in neither is refused. A note with the \
         same kind and subject as an earlier one replaces it.",
        json!({
            "type": "object",
            "properties": {
                "kind": {
                    "type": "string",
                    "enum": ["fact", "preference", "procedure"],
                    "description": "What sort of note."
                },
                "subject": {
                    "type": "string",
                    "maxLength": 200,
                    "description":
                        "What it is about, in a few words, e.g. \"where to save pages\"."
                },
                "text": {
                    "type": "string",
                    "maxLength": 2000,
                    "description":
                        "The note itself: the user's whole sentence copied exactly, or the \
                         result's words."
                },
                "task_type": {
                    "type": "string",
                    "maxLength": 64,
                    "description":
                        "Optional: the kind of task it helps with, e.g. \"save-page\"."
                }
            },
            "required": ["kind", "subject", "text"],
            "additionalProperties": false
        }),
    )
}

/// Description and schema of [`RECALL`].
pub fn recall_spec() -> (&'static str, Value) {
    (
        "Search the notes kept from earlier runs (the user's preferences, facts, procedures). \
         Notes that match the task were already given at the start; use this to look for something \
         else.",
        json!({
            "type": "object",
            "properties": {
                "query": {"type": "string", "minLength": 1, "description": "Words to look for."},
                "limit": {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": 20,
                    "description": "Most notes to return (default 5)."
                }
            },
            "required": ["query"],
            "additionalProperties": false
        }),
    )
}

/// Description and schema of [`WORKBENCH_READ`].
pub(super) fn workbench_read_spec() -> (&'static str, Value) {
    (
        "Read part of a large tool result kept in the workbench. A result too big to show whole \
         comes with a handle (e.g. `wb1`) and its size; call this with the handle and an `offset` \
         (characters, default 0) and `limit` (default 3000, at most 8000) to read the next part.",
        json!({
            "type": "object",
            "properties": {
                "handle": {
                    "type": "string",
                    "description": "The handle given with the result, e.g. \"wb1\"."
                },
                "offset": {
                    "type": "integer",
                    "minimum": 0,
                    "description": "First character to return (default 0)."
                },
                "limit": {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": 8000,
                    "description": "Most characters to return (default 3000)."
                }
            },
            "required": ["handle"],
            "additionalProperties": false
        }),
    )
}

impl Toolbox {
    /// Offer `skills__instructions` for the skills in `with` (the offered
    /// ones that have instructions), or take it away when there are none.
    pub(super) fn offer_instructions(&mut self, with: Vec<String>) {
        let at = self.specs.iter().position(|s| s.name == SKILL_INSTRUCTIONS);
        if let Some(at) = at {
            self.specs.remove(at);
        }
        self.targets.retain(|_, t| *t != Target::SkillInstructions);
        self.instructed = with.clone();
        if with.is_empty() {
            return;
        }
        let description = format!(
            "Only when a tool's own description leaves you unsure how to use it: the skill's \
             longer instructions (limits, examples). Not needed for ordinary calls. Skills with \
             instructions: {}.",
            with.join(", ")
        );
        let parameters = json!({"type": "object", "properties": {
            "skill": {"type": "string", "enum": with, "description": "The skill's name."}
        }, "required": ["skill"], "additionalProperties": false});
        self.add(SKILL_INSTRUCTIONS, &description, parameters, Target::SkillInstructions);
        // Where it was: the list's order is what a prompt cache keeps.
        if let Some(at) = at {
            let spec = self.specs.pop().expect("just added");
            self.specs.insert(at.min(self.specs.len()), spec);
        }
    }

    /// Offer the memory tools whose level is not `deny`, after every other
    /// tool (so the tool list a prompt cache holds does not change with them).
    pub fn add_memory(&mut self, remember: Level, recall: Level) {
        if remember != Level::Deny {
            let (description, schema) = remember_spec();
            self.add(REMEMBER, description, schema, Target::MemoryRemember);
        }
        if recall != Level::Deny {
            let (description, schema) = recall_spec();
            self.add(RECALL, description, schema, Target::MemoryRecall);
        }
    }

    /// Offer `agents__delegate` to hand work to one of `agents` (name,
    /// description, skills), after every other tool.
    pub fn add_delegate(&mut self, agents: &[(String, String, Vec<String>)], max_steps: usize) {
        self.specs.retain(|s| s.name != crate::agents::DELEGATE);
        self.targets.retain(|_, t| *t != Target::Delegate);
        if agents.is_empty() {
            return;
        }
        let names: Vec<&str> = agents.iter().map(|(n, _, _)| n.as_str()).collect();
        let listed: Vec<String> = agents
            .iter()
            .map(|(n, d, skills)| format!("{n} — {d} (skills: {})", skills.join(", ")))
            .collect();
        let description = format!(
            "Hand a self-contained piece of the task to a worker agent, which does it with its own \
             tools and returns JSON matching `return_format`. The worker sees only this envelope, \
             not this conversation: put everything it needs in `task` and `input`. Several calls \
             in one reply run at the same time. Workers: {}.",
            listed.join("; ")
        );
        self.add(
            crate::agents::DELEGATE,
            &description,
            crate::agents::envelope::parameters(&names, max_steps),
            Target::Delegate,
        );
    }

    /// Makes `skills__open` resolve (only used when disclosing on demand).
    /// Its spec, with the menu, is written here once: it is the same on
    /// every request.
    pub fn enable_open(&mut self) {
        self.on_demand = true;
        self.targets.insert(SKILL_OPEN.to_owned(), Target::SkillOpen);
        self.targets.insert("skills.open".to_owned(), Target::SkillOpen);
        self.offer_catalogue();
        if self.menu.is_empty() && self.bundles.is_empty() {
            self.open_spec = None;
            return;
        }
        let mut menu: Vec<String> = self
            .menu
            .iter()
            .map(|e| format!("{} — {} (tools: {})", e.skill, e.description, e.tools.join(", ")))
            .collect();
        menu.extend(self.bundles.iter().map(|b| format!("{} — {}", b.skill, b.description)));
        let mut names: Vec<&str> = self.menu.iter().map(|e| e.skill.as_str()).collect();
        names.extend(self.bundles.iter().map(|b| b.skill.as_str()));
        self.open_spec = Some(ToolSpec {
            name: SKILL_OPEN.to_owned(),
            description: format!(
                "Open a skill to get its tools (and, for some, instructions to follow); call it \
                 before using a skill below. Skills: {}.",
                menu.join("; ")
            ),
            parameters: open_parameters(&names),
        });
    }

    /// The bundles' built-ins: `skills__open` with their catalogue (unless
    /// skills are disclosed on demand, whose `skills__open` lists them
    /// too) and `skills__read`; neither when no bundle is offered.
    pub(super) fn offer_catalogue(&mut self) {
        self.specs.retain(|s| s.name != SKILL_OPEN && s.name != SKILL_READ);
        self.targets.retain(|_, t| *t != Target::SkillRead);
        if !self.on_demand {
            self.targets.retain(|_, t| *t != Target::SkillOpen);
        }
        if self.bundles.is_empty() {
            return;
        }
        let names: Vec<String> = self.bundles.iter().map(|b| b.skill.clone()).collect();
        if !self.on_demand {
            let catalogue: Vec<String> =
                self.bundles.iter().map(|b| format!("{} — {}", b.skill, b.description)).collect();
            let description = format!(
                "Open a skill: get its instructions, the list of its files, and its tools (offered \
                 from then on). When the task matches a skill below, open it first and follow its \
                 instructions. Skills: {}.",
                catalogue.join("; ")
            );
            let parameters = open_parameters(&names);
            self.add(SKILL_OPEN, &description, parameters, Target::SkillOpen);
        }
        let description = "Read one file of an open skill (e.g. `references/REFERENCE.md`), as its \
                           instructions or its file list name it.";
        let parameters = json!({"type": "object", "properties": {
            "skill": {"type": "string", "enum": names, "description": "The skill."},
            "path": {
                "type": "string",
                "description": "The file's path inside the skill, e.g. \"references/FORMAT.md\"."
            }
        }, "required": ["skill", "path"], "additionalProperties": false});
        self.add(SKILL_READ, description, parameters, Target::SkillRead);
    }
}

fn open_parameters<S: serde::Serialize>(names: &[S]) -> Value {
    json!({"type": "object", "properties": {
        "skill": {"type": "string", "enum": names, "description": "The skill to open."}
    }, "required": ["skill"], "additionalProperties": false})
}
