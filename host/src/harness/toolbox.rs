//! The tools offered to the model: every active skill's tools that the
//! policy does not deny, under names every provider accepts, plus the
//! harness's built-ins (`workbench__read`, `skills__instructions`, and
//! `memory__remember` / `memory__recall` when the run has a memory).

use crate::Host;
use crate::model::ToolSpec;
use crate::policy::Level;
use serde_json::json;
use std::collections::HashMap;

/// The built-in that pages through a large result kept in the workbench.
pub const WORKBENCH_READ: &str = "workbench__read";
/// The built-in that returns a skill's long-form instructions.
pub const SKILL_INSTRUCTIONS: &str = "skills__instructions";
/// The built-in that opens a skill: its tools are offered from then on
/// (only when skills are disclosed on demand).
pub const SKILL_OPEN: &str = "skills__open";

/// What an offered name runs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Target {
    /// `skill.tool` in its sandbox.
    Skill {
        /// The skill.
        skill: String,
        /// The tool.
        tool: String,
    },
    /// [`WORKBENCH_READ`].
    WorkbenchRead,
    /// [`SKILL_INSTRUCTIONS`].
    SkillInstructions,
    /// [`super::remember::REMEMBER`].
    MemoryRemember,
    /// [`super::remember::RECALL`].
    MemoryRecall,
    /// [`SKILL_OPEN`].
    SkillOpen,
    /// [`crate::agents::DELEGATE`].
    Delegate,
}

/// One skill as the on-demand menu shows it.
#[derive(Clone, Debug)]
struct MenuEntry {
    skill: String,
    description: String,
    tools: Vec<String>,
    /// Every word the skill offers about itself, for choosing it by task.
    words: String,
}

/// The offered tools and what each name means.
#[derive(Clone, Debug, Default)]
pub struct Toolbox {
    specs: Vec<ToolSpec>,
    targets: HashMap<String, Target>,
    menu: Vec<MenuEntry>,
    /// `skills__open` with the menu, once [`Toolbox::enable_open`] ran.
    open_spec: Option<ToolSpec>,
    /// Tools of skills a worker's profile leaves out, by offered name
    /// (dotted aliases too), with the skill: a call to one is refused
    /// naming the profile rather than answered "no such tool".
    withheld: HashMap<String, String>,
    /// The offered skills that have instructions (`skills__instructions`).
    instructed: Vec<String>,
}

impl Toolbox {
    /// Offer every tool whose level is not `deny` of every active skill the
    /// permission table lists — the table is the operator's list of what the
    /// agent may use, and a tool that can reach nothing only distracts a
    /// model. A table that lists no skill (the built-in one) offers them all.
    /// With `compact`, each tool's parameters are offered as
    /// [`super::schema::compact`] writes them.
    pub fn from_host(host: &Host, compact: bool) -> Toolbox {
        let mut toolbox = Toolbox::default();
        let listed = host.policy.listed_skills();
        toolbox.add(
            WORKBENCH_READ,
            "Read part of a large tool result kept in the workbench. A result too big to show whole \
             comes with a handle (e.g. `wb1`) and its size; call this with the handle and an `offset` \
             (characters, default 0) and `limit` (default 3000, at most 8000) to read the next part.",
            json!({"type": "object", "properties": {
                "handle": {"type": "string", "description": "The handle given with the result, e.g. \"wb1\"."},
                "offset": {"type": "integer", "minimum": 0, "description": "First character to return (default 0)."},
                "limit": {"type": "integer", "minimum": 1, "maximum": 8000, "description": "Most characters to return (default 3000)."}
            }, "required": ["handle"], "additionalProperties": false}),
            Target::WorkbenchRead,
        );
        let mut with_instructions = Vec::new();
        for active in host.registry.active_skills() {
            let m = active.manifest;
            if !listed.is_empty() && !listed.contains(&m.name.as_str()) {
                continue;
            }
            if m.instructions.is_some() {
                with_instructions.push(m.name.clone());
            }
            let mut entry = MenuEntry {
                skill: m.name.clone(),
                description: first_sentence(&m.description),
                tools: Vec::new(),
                words: m.description.clone(),
            };
            for tool in &m.tools {
                if host.policy.level(&m.name, &tool.name) == Level::Deny {
                    continue;
                }
                let name = offered_name(&m.name, &tool.name);
                let description = format!("[{}] {}", m.name, tool.description);
                let target = Target::Skill { skill: m.name.clone(), tool: tool.name.clone() };
                if toolbox.targets.contains_key(&name) {
                    tracing::warn!(skill = %m.name, tool = %tool.name, "not offered: its name {name} is taken");
                    continue;
                }
                // What the model reads; the runtime checks the arguments against the skill's own schema.
                let parameters = if compact {
                    super::schema::compact(&tool.parameters)
                } else {
                    tool.parameters.clone()
                };
                toolbox.add(&name, &description, parameters, target);
                entry.tools.push(tool.name.clone());
                entry.words.push_str(&format!(" {} {}", tool.name, tool.description));
                schema_words(&tool.parameters, &mut entry.words);
            }
            if !entry.tools.is_empty() {
                toolbox.menu.push(entry);
            }
        }
        toolbox.offer_instructions(with_instructions);
        toolbox
    }

    /// Offer `skills__instructions` for the skills in `with` (the offered
    /// ones that have instructions), or take it away when there are none.
    fn offer_instructions(&mut self, with: Vec<String>) {
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
            "Only when a tool's own description leaves you unsure how to use it: the skill's longer \
             instructions (limits, examples). Not needed for ordinary calls. Skills with instructions: {}.",
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
        use super::remember::{RECALL, REMEMBER, recall_spec, remember_spec};
        if remember != Level::Deny {
            let (description, schema) = remember_spec();
            self.add(REMEMBER, description, schema, Target::MemoryRemember);
        }
        if recall != Level::Deny {
            let (description, schema) = recall_spec();
            self.add(RECALL, description, schema, Target::MemoryRecall);
        }
    }

    fn add(
        &mut self,
        name: &str,
        description: &str,
        parameters: serde_json::Value,
        target: Target,
    ) {
        self.specs.push(ToolSpec {
            name: name.to_owned(),
            description: description.to_owned(),
            parameters,
        });
        // `files.read`, as the skills' own docs write it, means `files__read`.
        if let Some(alias) = dotted(name)
            && !self.targets.contains_key(&alias)
        {
            self.targets.insert(alias, target.clone());
        }
        self.targets.insert(name.to_owned(), target);
    }

    /// Keep only the tools of `skills` (a worker's profile, within what
    /// its parent may use); the others are withheld ([`Toolbox::withheld`]).
    pub fn keep_skills(&mut self, skills: &[String]) {
        let outside =
            |t: &Target| matches!(t, Target::Skill { skill, .. } if !skills.contains(skill));
        for (name, target) in &self.targets {
            if let Target::Skill { skill, .. } = target
                && outside(target)
            {
                self.withheld.insert(name.clone(), skill.clone());
            }
        }
        self.targets.retain(|_, t| !outside(t));
        let targets = &self.targets;
        self.specs.retain(|s| targets.contains_key(&s.name));
        self.menu.retain(|e| skills.contains(&e.skill));
        // Instructions only for the skills still offered (none: no tool).
        let with = self.instructed.iter().filter(|name| skills.contains(name)).cloned().collect();
        self.offer_instructions(with);
    }

    /// The skill behind `name` when it is a tool this toolbox withholds.
    pub fn withheld(&self, name: &str) -> Option<&str> {
        self.withheld.get(name).map(String::as_str)
    }

    /// The skills whose tools are offered, in order.
    pub fn skills(&self) -> Vec<&str> {
        self.menu.iter().map(|e| e.skill.as_str()).collect()
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
            "Hand a self-contained piece of the task to a worker agent, which does it with its own tools and returns JSON \
             matching `return_format`. The worker sees only this envelope, not this conversation: put everything it needs \
             in `task` and `input`. Several calls in one reply run at the same time. Workers: {}.",
            listed.join("; ")
        );
        self.add(
            crate::agents::DELEGATE,
            &description,
            crate::agents::envelope::parameters(&names, max_steps),
            Target::Delegate,
        );
    }

    /// The specs to send to the model.
    pub fn specs(&self) -> &[ToolSpec] {
        &self.specs
    }

    /// The specs to send when skills are disclosed on demand: the
    /// built-ins, `skills__open` whose description is the menu of every
    /// skill, then the tools of each skill in `opened`, in the order they
    /// were opened. Each request's list starts with the previous one's, so
    /// a server's prompt cache keeps what it read.
    pub fn on_demand(&self, opened: &[String]) -> Vec<ToolSpec> {
        let mut out: Vec<ToolSpec> = self
            .specs
            .iter()
            .filter(|s| !matches!(self.targets.get(&s.name), Some(Target::Skill { .. })))
            .cloned()
            .collect();
        out.extend(self.open_spec.clone());
        for skill in opened {
            out.extend(self.tools_of(skill).into_iter().cloned());
        }
        out
    }

    /// Each offered skill's name and words (its description, and its tools'
    /// names, descriptions and parameters), for [`super::disclosure::choose`].
    pub fn skill_words(&self) -> Vec<(String, String)> {
        self.menu.iter().map(|e| (e.skill.clone(), e.words.clone())).collect()
    }

    /// The tools of `skill`, as offered names with their descriptions.
    pub fn tools_of(&self, skill: &str) -> Vec<&ToolSpec> {
        self.specs.iter().filter(|s| matches!(self.targets.get(&s.name), Some(Target::Skill { skill: k, .. }) if k == skill)).collect()
    }

    /// Makes `skills__open` resolve (only used when disclosing on demand).
    /// Its spec, with the menu, is written here once: it is the same on
    /// every request.
    pub fn enable_open(&mut self) {
        self.targets.insert(SKILL_OPEN.to_owned(), Target::SkillOpen);
        self.targets.insert("skills.open".to_owned(), Target::SkillOpen);
        if self.menu.is_empty() {
            return;
        }
        let menu: Vec<String> = self
            .menu
            .iter()
            .map(|e| format!("{} — {} (tools: {})", e.skill, e.description, e.tools.join(", ")))
            .collect();
        let names: Vec<&str> = self.menu.iter().map(|e| e.skill.as_str()).collect();
        self.open_spec = Some(ToolSpec {
            name: SKILL_OPEN.to_owned(),
            description: format!(
                "Open a skill to get its tools; call it before using a skill below. Skills: {}.",
                menu.join("; ")
            ),
            parameters: json!({"type": "object", "properties": {
                "skill": {"type": "string", "enum": names, "description": "The skill to open."}
            }, "required": ["skill"], "additionalProperties": false}),
        });
    }

    /// The parameters schema of the tool `name` runs, if it was offered.
    pub fn parameters(&self, name: &str) -> Option<&serde_json::Value> {
        let target = self.targets.get(name)?;
        self.specs.iter().find(|s| self.targets.get(&s.name) == Some(target)).map(|s| &s.parameters)
    }

    /// What `name` runs, if it was offered.
    pub fn target(&self, name: &str) -> Option<&Target> {
        self.targets.get(name)
    }

    /// Offered names closest to `name`, best first, for a `NO_SUCH_TOOL` hint.
    pub fn close_names(&self, name: &str) -> Vec<&str> {
        let wanted = name.to_ascii_lowercase();
        let mut scored: Vec<(usize, &str)> = self
            .specs
            .iter()
            .map(|s| {
                let offered = s.name.to_ascii_lowercase();
                // Shared words count for more than spelling: `read_file` means `files__read`.
                let shared = wanted
                    .split(['_', '-', '.'])
                    .filter(|w| w.len() >= 3 && offered.contains(*w))
                    .count();
                (distance(&wanted, &offered).saturating_sub(3 * shared), s.name.as_str())
            })
            .collect();
        scored.sort();
        let cutoff = (wanted.len() / 2).max(3);
        let close: Vec<&str> =
            scored.iter().filter(|(d, _)| *d <= cutoff).take(3).map(|(_, n)| *n).collect();
        if close.is_empty() { scored.iter().take(3).map(|(_, n)| *n).collect() } else { close }
    }
}

/// Appends a JSON Schema's property names and descriptions to `out`.
fn schema_words(schema: &serde_json::Value, out: &mut String) {
    match schema {
        serde_json::Value::Object(map) => {
            for (key, value) in map {
                if key == "description"
                    && let Some(text) = value.as_str()
                {
                    out.push(' ');
                    out.push_str(text);
                } else if key == "properties"
                    && let Some(props) = value.as_object()
                {
                    for (name, prop) in props {
                        out.push(' ');
                        out.push_str(name);
                        schema_words(prop, out);
                    }
                } else {
                    schema_words(value, out);
                }
            }
        }
        serde_json::Value::Array(items) => items.iter().for_each(|v| schema_words(v, out)),
        _ => {}
    }
}

/// The first sentence of a description, for a one-line menu entry.
fn first_sentence(text: &str) -> String {
    let text = text.trim();
    let end = text.find(". ").map_or(text.len(), |i| i + 1);
    crate::text::shorten_chars(&text[..end], 160)
}

/// `skill.tool` for an offered `skill__tool`: the spelling the skills'
/// instructions (and people) use, which models copy.
pub fn dotted(offered: &str) -> Option<String> {
    offered.split_once("__").map(|(skill, tool)| format!("{skill}.{tool}"))
}

/// `skill__tool`, with anything outside `[a-zA-Z0-9_-]` replaced by `_` and
/// cut to 64 characters — the strictest rule among providers.
pub fn offered_name(skill: &str, tool: &str) -> String {
    let name: String = format!("{skill}__{tool}")
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() || c == '_' || c == '-' { c } else { '_' })
        .take(64)
        .collect();
    name
}

/// Levenshtein distance, for suggestions; names are short.
fn distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let cur = row[j + 1];
            row[j + 1] = (prev + usize::from(ca != *cb)).min(row[j] + 1).min(cur + 1);
            prev = cur;
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_fit_every_provider() {
        assert_eq!(offered_name("files", "read"), "files__read");
        assert_eq!(offered_name("http_api", "request"), "http_api__request");
        assert_eq!(offered_name("my-skill", "do.it"), "my-skill__do_it");
        assert_eq!(offered_name(&"a".repeat(40), &"b".repeat(40)).len(), 64);
    }

    #[test]
    fn every_built_in_tool_name_is_under_a_reserved_skill_name() {
        use crate::policy::{BUILTIN_TOOL_NAMES, RESERVED_SKILL_NAMES};
        let built_ins = [
            WORKBENCH_READ,
            SKILL_INSTRUCTIONS,
            SKILL_OPEN,
            super::super::remember::REMEMBER,
            super::super::remember::RECALL,
            crate::agents::DELEGATE,
        ];
        assert_eq!(BUILTIN_TOOL_NAMES.split(", ").count(), built_ins.len());
        for name in built_ins {
            let (skill, tool) = name.split_once("__").expect("SKILL__TOOL");
            // The only skill whose tool could be offered under this name.
            assert!(RESERVED_SKILL_NAMES.contains(&skill), "{name}");
            assert_eq!(offered_name(skill, tool), name);
            assert!(
                BUILTIN_TOOL_NAMES.split(", ").any(|n| n == name),
                "{name} is named in the refusal"
            );
        }
    }

    #[test]
    fn on_demand_offers_built_ins_the_menu_and_only_opened_skills() {
        let mut tb = Toolbox::default();
        tb.add("workbench__read", "", json!({}), Target::WorkbenchRead);
        for (skill, tool) in [("files", "read"), ("files", "write"), ("web", "fetch")] {
            tb.add(
                &offered_name(skill, tool),
                "",
                json!({}),
                Target::Skill { skill: skill.into(), tool: tool.into() },
            );
        }
        tb.menu = vec![
            MenuEntry {
                skill: "files".into(),
                description: "Files in granted folders.".into(),
                tools: vec!["read".into(), "write".into()],
                words: String::new(),
            },
            MenuEntry {
                skill: "web".into(),
                description: "Web pages.".into(),
                tools: vec!["fetch".into()],
                words: String::new(),
            },
        ];
        let names = |specs: Vec<ToolSpec>| {
            specs.into_iter().map(|s| (s.name, s.description)).collect::<Vec<_>>()
        };
        tb.enable_open();
        let first = names(tb.on_demand(&[]));
        assert_eq!(
            first.iter().map(|(n, _)| n.as_str()).collect::<Vec<_>>(),
            ["workbench__read", "skills__open"]
        );
        assert!(first[1].1.contains("files — Files in granted folders. (tools: read, write); web — Web pages. (tools: fetch)"), "{}", first[1].1);
        let opened = names(tb.on_demand(&["web".to_owned(), "files".to_owned()]));
        // In the order opened, after the menu, which stays the same: each list starts with the last.
        assert_eq!(
            opened.iter().map(|(n, _)| n.as_str()).collect::<Vec<_>>(),
            ["workbench__read", "skills__open", "web__fetch", "files__read", "files__write"]
        );
        assert_eq!(opened[1], first[1]);
        assert_eq!(first_sentence("Reads files. Never writes."), "Reads files.");
    }

    #[test]
    fn close_names_rank_by_edit_distance() {
        let mut tb = Toolbox::default();
        for n in ["files__read", "files__write", "files__search", "web__fetch"] {
            tb.add(n, "", json!({}), Target::WorkbenchRead);
        }
        assert_eq!(tb.close_names("files_read")[0], "files__read");
        assert_eq!(tb.close_names("read_file")[..1], ["files__read"]);
        assert_eq!(tb.close_names("web_fetch")[0], "web__fetch");
    }
}
