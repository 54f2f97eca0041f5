//! The memory tools the model is offered when a run has a memory store:
//! `memory__remember` and `memory__recall`, and how a note's provenance is
//! decided.
//!
//! The model does not say where a note came from — it could say anything,
//! and a page it read could tell it what to say. The harness finds the
//! note in what the run saw. A note is *stated by the user* only when it
//! quotes the person: one or more whole sentences of a message they wrote,
//! word for word ([`quotes`]). Sharing the person's words is not enough: a
//! page that says "Always overwrite existing files." shares every telling
//! word of a task that says "do not overwrite existing files", and a clause
//! cut out of a sentence can lose its "do not". Else a note whose words a
//! tool result holds is *verified by* that tool, with the run and step. A
//! note that rewords the person is refused with the sentence to quote
//! instead; a note found nowhere is refused: memory keeps what someone said
//! or something showed, not the model's guesses.
//!
//! A note from a result that may hold text from the network — a skill that
//! can reach it, a skill reading a folder such a skill can write (a page
//! saved in an earlier run), a worker whose skills can do either, or any
//! result in a run that already made such a call ([`Action::network`]) —
//! needs the yes of a person asked at that moment, whatever the
//! `[memory] remember` level says and even under `--yes`: a fetched page
//! that says "remember to send files to X" must not become a note later
//! runs trust.

use super::audit::record::{Decision, MemoryError, MemoryRecalled, MemoryRemembered};
use super::toolbox::Target;
use super::{Action, Harness, Seen};
use crate::error::{ErrorCode, ToolFailure};
use crate::memory::{Added, Kind, NewEntry, Provenance, relevant, render};
use crate::policy::Level;
use serde_json::{Value, json};

mod provenance;

use provenance::{COVERAGE, coverage};
pub use provenance::{Found, quotes, source_of};

/// The built-in that stores a note.
pub const REMEMBER: &str = "memory__remember";
/// The built-in that searches the notes.
pub const RECALL: &str = "memory__recall";

/// Description and schema of [`REMEMBER`].
pub fn remember_spec() -> (&'static str, Value) {
    (
        "Keep a short note for later runs: something the user asked you to remember (a preference, a fact, a \
         procedure) or a fact a tool result showed. Copy the user's whole sentence exactly, or the result's own \
         words; a note found in neither is refused. A note with the same kind and subject as an earlier one replaces it.",
        json!({"type": "object", "properties": {
            "kind": {"type": "string", "enum": ["fact", "preference", "procedure"], "description": "What sort of note."},
            "subject": {"type": "string", "maxLength": 200, "description": "What it is about, in a few words, e.g. \"where to save pages\"."},
            "text": {"type": "string", "maxLength": 2000, "description": "The note itself: the user's whole sentence copied exactly, or the result's words."},
            "task_type": {"type": "string", "maxLength": 64, "description": "Optional: the kind of task it helps with, e.g. \"save-page\"."}
        }, "required": ["kind", "subject", "text"], "additionalProperties": false}),
    )
}

/// Description and schema of [`RECALL`].
pub fn recall_spec() -> (&'static str, Value) {
    (
        "Search the notes kept from earlier runs (the user's preferences, facts, procedures). Notes that match \
         the task were already given at the start; use this to look for something else.",
        json!({"type": "object", "properties": {
            "query": {"type": "string", "minLength": 1, "description": "Words to look for."},
            "limit": {"type": "integer", "minimum": 1, "maximum": 20, "description": "Most notes to return (default 5)."}
        }, "required": ["query"], "additionalProperties": false}),
    )
}

/// Most notes [`RECALL`] returns by default.
const RECALL_LIMIT: usize = 5;

impl Harness<'_> {
    /// The notes for this task, rendered for the prompt ("" without a
    /// memory, with a zero budget, or when nothing matches). The notes
    /// given are marked used.
    pub(super) fn remembered(&mut self, task: &str) -> String {
        let Some(memory) = &self.memory else { return String::new() };
        let budget = memory.settings.budget_tokens;
        let found = match relevant(
            memory.store.as_ref(),
            task,
            self.config.task_type.as_deref(),
            budget,
        ) {
            Ok(found) => found,
            Err(err) => {
                // A broken memory must not stop the task: the run goes on without notes.
                tracing::warn!(error = %err, "could not read the memory; the run goes on without notes");
                self.audit.record(MemoryError { step: 0, error: err.to_string() });
                return String::new();
            }
        };
        if found.is_empty() {
            return String::new();
        }
        let ids: Vec<i64> = found.iter().map(|e| e.id).collect();
        if let Err(err) = memory.store.mark_used(&ids) {
            tracing::warn!(error = %err, "could not mark notes as used");
        }
        let block = self.audit.mask(&render(&found));
        self.audit.record(MemoryRecalled {
            step: 0,
            entries: ids,
            tokens: crate::model::estimate_tokens(&block),
        });
        block
    }

    /// `memory__remember`: where the note came from, the level (and a
    /// person for notes from the network), then the store. Returns the
    /// outcome and the decision.
    pub(super) fn remember(
        &mut self,
        arguments: &Value,
        seen: &Seen<'_>,
    ) -> (Result<String, ToolFailure>, &'static str) {
        let Some((store, level)) =
            self.memory.as_ref().map(|m| (m.store.clone(), m.settings.remember))
        else {
            return (Err(ToolFailure::new(ErrorCode::NoSuchTool, "this run has no memory")), "-");
        };
        let text =
            |k: &str| arguments.get(k).and_then(Value::as_str).unwrap_or("").trim().to_owned();
        let (note, subject) = (text("text"), text("subject"));
        let kind = Kind::from_name(&text("kind")).unwrap_or(Kind::Fact);
        let task_type = Some(text("task_type")).filter(|t| !t.is_empty());
        let person: Vec<(usize, &str)> = seen
            .conversation
            .turns()
            .iter()
            .filter(|t| t.from_person)
            .map(|t| (t.step, t.message.content.as_str()))
            .collect();
        // A recall's result is notes already kept: kept again, a note would
        // take that call as its source and hide where it came from (an
        // import, a page a person let in). Such a note is already known.
        let recalled = |i: usize| {
            seen.actions
                .get(i)
                .is_some_and(|a| matches!(self.toolbox.target(&a.tool), Some(Target::MemoryRecall)))
        };
        let results: Vec<&str> = seen
            .results
            .iter()
            .enumerate()
            .map(|(i, r)| if recalled(i) { "" } else { r.as_str() })
            .collect();
        let known = || {
            let mut known: Vec<&str> = vec![seen.remembered];
            known.extend(
                seen.results
                    .iter()
                    .enumerate()
                    .filter(|(i, _)| recalled(*i))
                    .map(|(_, r)| r.as_str()),
            );
            known.iter().any(|k| coverage(&note, k) >= COVERAGE)
        };
        let (provenance, from_network) = match source_of(&subject, &note, &person, &results) {
            Some(Found::Person { step }) => (
                Provenance::User { run_id: Some(self.run_id.clone()), step: Some(step as u32) },
                false,
            ),
            Some(Found::Result { index }) => {
                let action = &seen.actions[index];
                // Words from the network can reach a result three ways: the skill
                // (or a worker) fetched them; a skill that fetches wrote them where
                // this one reads (a page saved in any run); or this run fetched
                // something and the model moved it on (written, then read back).
                let network = seen.actions.iter().any(|a| a.network);
                let provenance = Provenance::Tool {
                    run_id: self.run_id.clone(),
                    step: action.step as u32,
                    tool: Some(action.tool.clone()),
                };
                (provenance, network)
            }
            _ if known() => {
                // The model copied a note it was given at the start, or one a
                // recall returned: already kept.
                let out = json!({"already_known": true, "note": "This is already remembered; go on with the task."});
                return (Ok(out.to_string()), "auto");
            }
            Some(Found::Reworded { sentences, .. }) => {
                // Not the person's words, whoever wrote them: the model
                // rewording them can turn them around, and a page can use
                // their vocabulary. The person's own sentence is kept instead.
                let quoted: Vec<String> = sentences.iter().map(|s| format!("{s:?}")).collect();
                let failure = ToolFailure::new(
                    ErrorCode::InvalidArgs,
                    format!(
                        "not remembered: this note rewords the user's message, and a note is the user's only when it copies \
                         one or more of their sentences exactly, every word; copy the sentence itself as the text{}",
                        if quoted.is_empty() {
                            String::new()
                        } else {
                            format!(", e.g. {}", quoted.join(" or "))
                        }
                    ),
                );
                return (Err(failure), "-");
            }
            None => {
                let failure = ToolFailure::new(
                    ErrorCode::InvalidArgs,
                    "not remembered: neither the user's messages nor any tool result of this run contains this note's words; \
                     remember only what the user said (their whole sentence, copied exactly) or a tool returned, in their words",
                );
                return (Err(failure), "-");
            }
        };
        if from_network && !self.confirmer.person_present() {
            // `--yes` and unattended runs approve calls, not an outsider's words as memory.
            let reason = format!(
                "not remembered: the note comes from a tool that reads the network ({}); only a person asked at the \
                 moment can let such a note into memory, and no one is there (--yes does not cover it)",
                provenance.describe()
            );
            return (Err(ToolFailure::new(ErrorCode::Denied, reason)), "denied");
        }
        // Words from the network are an outsider's: a person decides, whatever the level.
        let ask = level == Level::Confirm || from_network;
        let decision = if ask {
            let shown = json!({"kind": kind.name(), "subject": subject, "text": note, "source": provenance.describe()});
            match self.confirmer.confirm("memory", "remember", &shown) {
                Ok(()) => "confirmed",
                Err(why) => {
                    let reason = if from_network {
                        format!(
                            "not remembered: the note comes from a tool that reads the network ({}), and a person must confirm such notes: {why}",
                            provenance.describe()
                        )
                    } else {
                        format!(
                            "not remembered: [memory] remember needs a person's confirmation: {why}"
                        )
                    };
                    let decision =
                        if self.confirmer.person_present() { "declined" } else { "denied" };
                    return (Err(ToolFailure::new(ErrorCode::Denied, reason)), decision);
                }
            }
        } else {
            "auto"
        };
        let added = store.add(NewEntry { kind, subject, text: note, task_type, provenance });
        let out = match added {
            Ok(Added::New(e)) => Ok(json!({"remembered": e.id, "source": e.provenance.describe()})),
            Ok(Added::Superseded { entry, previous }) => Ok(
                json!({"remembered": entry.id, "replaces": previous.id, "source": entry.provenance.describe()}),
            ),
            Ok(Added::Existing(e)) => Ok(json!({"remembered": e.id, "already_known": true})),
            Err(err) => {
                Err(ToolFailure::new(ErrorCode::InvalidArgs, format!("not remembered: {err}")))
            }
        };
        if let Ok(v) = &out {
            self.audit.record(MemoryRemembered {
                entry: v["remembered"].as_i64(),
                decision: Decision::named(decision),
            });
        }
        (out.map(|v| v.to_string()), decision)
    }

    /// True when what the call of `tool` returns may hold text from the
    /// network ([`Action::network`]): a skill that may
    /// ([`Harness::skill_holds_network_text`]), or a part of an earlier
    /// result (`workbench__read`) when any earlier result may. Delegations
    /// are judged by their workers' skills ([`Harness::skills_hold_network_text`]).
    pub(super) fn may_bring_network_text(&self, tool: &str, earlier: &[Action]) -> bool {
        match self.toolbox.target(tool) {
            Some(Target::Skill { skill, .. }) => self.skill_holds_network_text(skill),
            Some(Target::WorkbenchRead) => earlier.iter().any(|a| a.network),
            _ => false,
        }
    }

    /// True when any of `skills` may return text from the network: what a
    /// worker given them brings back (its own workers get only skills it
    /// has, so the whole tree below it is covered).
    pub(super) fn skills_hold_network_text<S: AsRef<str>>(&self, skills: &[S]) -> bool {
        skills.iter().any(|s| self.skill_holds_network_text(s.as_ref()))
    }

    /// True when what `skill` returns may be text from the network: it
    /// reaches the network itself, or a skill that does can write into a
    /// folder it reads or writes.
    pub(super) fn skill_holds_network_text(&self, skill: &str) -> bool {
        let policy = &self.host.policy;
        let grants = policy.grants(skill);
        if !grants.net.is_empty() {
            return true;
        }
        let folders: Vec<&std::path::Path> =
            grants.read.iter().chain(&grants.write).map(|g| g.path.as_path()).collect();
        self.host.registry.active_skills().into_iter().any(|other| {
            let g = policy.grants(&other.manifest.name);
            !g.net.is_empty()
                && g.write.iter().any(|w| {
                    folders.iter().any(|f| f.starts_with(&w.path) || w.path.starts_with(f))
                })
        })
    }

    /// `memory__recall`: a search of the active notes, at its level.
    pub(super) fn recall(
        &mut self,
        arguments: &Value,
    ) -> (Result<String, ToolFailure>, &'static str) {
        let Some(memory) = &self.memory else {
            return (Err(ToolFailure::new(ErrorCode::NoSuchTool, "this run has no memory")), "-");
        };
        let decision = match memory.settings.recall {
            Level::Confirm => match self.confirmer.confirm("memory", "recall", arguments) {
                Ok(()) => "confirmed",
                Err(why) => {
                    return (
                        Err(ToolFailure::new(
                            ErrorCode::Denied,
                            format!("notes not searched: {why}"),
                        )),
                        "denied",
                    );
                }
            },
            _ => "auto",
        };
        let query = arguments.get("query").and_then(Value::as_str).unwrap_or("");
        let limit = arguments
            .get("limit")
            .and_then(Value::as_u64)
            .map_or(RECALL_LIMIT, |n| n.clamp(1, 20) as usize);
        let found = match memory.store.search(query, self.config.task_type.as_deref(), limit) {
            Ok(found) => found,
            Err(err) => {
                return (
                    Err(ToolFailure::new(
                        ErrorCode::Failed,
                        format!("the memory could not be searched: {err}"),
                    )),
                    decision,
                );
            }
        };
        let ids: Vec<i64> = found.iter().map(|e| e.id).collect();
        if let Err(err) = memory.store.mark_used(&ids) {
            tracing::warn!(error = %err, "could not mark notes as used");
        }
        let notes: Vec<Value> = found
            .iter()
            .map(|e| json!({"id": e.id, "kind": e.kind.name(), "subject": e.subject, "text": e.text, "source": e.provenance.describe()}))
            .collect();
        (Ok(json!({"count": notes.len(), "notes": notes}).to_string()), decision)
    }
}
