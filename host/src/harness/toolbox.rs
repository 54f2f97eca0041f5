//! The tools offered to the model: every active skill's tools that the
//! policy does not deny, under names every provider accepts, plus the
//! harness's built-ins (`workbench__read`, `skills__instructions`, and
//! `memory__remember` / `memory__recall` when the run has a memory).
//!
//! Agent Skills bundles are disclosed progressively, in every disclosure
//! mode: their names and descriptions are the catalogue in `skills__open`
//! (tier 1); opening one returns its `SKILL.md` body and file list and
//! offers its tools from then on, appended after the others so the prompt
//! prefix stays cached (tier 2); `skills__read` returns one of its files
//! (tier 3).

use crate::Host;
use crate::model::ToolSpec;
use crate::policy::Level;
use names::{distance, first_sentence, schema_words};
use std::collections::HashMap;

pub(super) mod builtins;
mod names;

pub use builtins::WORKBENCH_READ;
#[cfg(test)]
use builtins::{SKILL_INSTRUCTIONS, SKILL_OPEN};
pub use names::{dotted, offered_name};

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
    /// [`SKILL_READ`].
    SkillRead,
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

/// One Agent Skills bundle as the catalogue shows it.
#[derive(Clone, Debug)]
pub(super) struct BundleMenu {
    pub(super) skill: String,
    pub(super) description: String,
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
    /// The offered bundles, in the catalogue's order.
    bundles: Vec<BundleMenu>,
    /// The bundles' tools: offered only once their bundle is open.
    bundle_specs: Vec<ToolSpec>,
    /// Whether [`Toolbox::enable_open`] ran (skills on demand).
    on_demand: bool,
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
        let listed = host.policy().listed_skills();
        let (description, parameters) = builtins::workbench_read_spec();
        toolbox.add(WORKBENCH_READ, description, parameters, Target::WorkbenchRead);
        let mut with_instructions = Vec::new();
        for active in host.registry().active_skills() {
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
                if host.policy().level(&m.name, &tool.name) == Level::Deny {
                    continue;
                }
                let name = offered_name(&m.name, &tool.name);
                let description = format!("[{}] {}", m.name, tool.description);
                let target = Target::Skill { skill: m.name.clone(), tool: tool.name.clone() };
                if toolbox.targets.contains_key(&name) {
                    tracing::warn!(
                        skill = %m.name,
                        tool = %tool.name,
                        "not offered: its name {name} is taken"
                    );
                    continue;
                }
                // What the model reads; the runtime checks the arguments against the skill's own
                // schema.
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
        toolbox.add_bundles(host, &listed, compact);
        toolbox
    }

    /// The active bundles the table lists (all, when it lists none): their
    /// tools resolve, but are offered only once opened; `skills__open`
    /// carries the catalogue and `skills__read` their files.
    fn add_bundles(&mut self, host: &Host, listed: &[&str], compact: bool) {
        for entry in host.registry().active_bundles() {
            let Some(m) = &entry.manifest else { continue };
            if !listed.is_empty() && !listed.contains(&m.name.as_str()) {
                continue;
            }
            for tool in &m.tools {
                if host.policy().level(&m.name, &tool.name) == Level::Deny {
                    continue;
                }
                let name = offered_name(&m.name, &tool.name);
                if self.targets.contains_key(&name) {
                    tracing::warn!(skill = %m.name, tool = %tool.name, "not offered: its name {name} is taken");
                    continue;
                }
                let parameters = if compact {
                    super::schema::compact(&tool.parameters)
                } else {
                    tool.parameters.clone()
                };
                let target = Target::Skill { skill: m.name.clone(), tool: tool.name.clone() };
                if let Some(alias) = dotted(&name)
                    && !self.targets.contains_key(&alias)
                {
                    self.targets.insert(alias, target.clone());
                }
                self.targets.insert(name.clone(), target);
                self.bundle_specs.push(ToolSpec {
                    name,
                    description: format!("[{}] {}", m.name, tool.description),
                    parameters,
                });
            }
            self.bundles
                .push(BundleMenu { skill: m.name.clone(), description: m.description.clone() });
        }
        self.offer_catalogue();
    }

    /// Whether `skill` is one of the offered bundles.
    pub fn is_bundle(&self, skill: &str) -> bool {
        self.bundles.iter().any(|b| b.skill == skill)
    }

    /// The offered bundles' names.
    pub fn bundles(&self) -> Vec<&str> {
        self.bundles.iter().map(|b| b.skill.as_str()).collect()
    }

    /// `specs` followed by the tools of the bundles in `opened`, in the
    /// order they were opened.
    pub fn with_opened_bundles(&self, opened: &[String]) -> Vec<ToolSpec> {
        let mut out = self.specs.clone();
        for skill in opened.iter().filter(|s| self.is_bundle(s)) {
            out.extend(self.tools_of(skill).into_iter().cloned());
        }
        out
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
        self.bundles.retain(|b| skills.contains(&b.skill));
        let targets = &self.targets;
        self.bundle_specs.retain(|s| targets.contains_key(&s.name));
        self.offer_catalogue();
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
        self.specs
            .iter()
            .chain(&self.bundle_specs)
            .filter(|s| {
                matches!(
                    self.targets.get(&s.name),
                    Some(Target::Skill { skill: k, .. }) if k == skill
                )
            })
            .collect()
    }

    /// The tools of `skill` as (offered name, description) pairs.
    pub fn described_tools(&self, skill: &str) -> Vec<(String, String)> {
        self.tools_of(skill).iter().map(|t| (t.name.clone(), t.description.clone())).collect()
    }

    /// The parameters schema of the tool `name` runs, if it was offered.
    pub fn parameters(&self, name: &str) -> Option<&serde_json::Value> {
        let target = self.targets.get(name)?;
        self.specs
            .iter()
            .chain(&self.bundle_specs)
            .find(|s| self.targets.get(&s.name) == Some(target))
            .map(|s| &s.parameters)
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

#[cfg(test)]
mod tests;
