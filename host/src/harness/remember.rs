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

use super::Harness;
use super::audit::record::{MemoryError, MemoryRecalled};
use super::report::Action;
use super::toolbox::Target;
use crate::error::{ErrorCode, ToolFailure};
use crate::harness::Decision;
use crate::memory::{MemoryStore, relevant, render};
use crate::policy::{Level, MemorySettings};
use serde_json::{Value, json};
use std::sync::Arc;

mod note;
mod provenance;

/// The run's long-term memory: the store and the `[memory]` settings.
pub(super) struct Memory {
    pub(super) store: Arc<dyn MemoryStore>,
    pub(super) settings: MemorySettings,
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
        let found =
            match relevant(memory.store.as_ref(), task, self.config.task_type.as_deref(), budget) {
                Ok(found) => found,
                Err(err) => {
                    // A broken memory must not stop the task: the run goes on without notes.
                    tracing::warn!(
                        error = %err,
                        "could not read the memory; the run goes on without notes"
                    );
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
        let policy = self.host.policy();
        let grants = policy.grants(skill);
        if !grants.net.is_empty() {
            return true;
        }
        let folders: Vec<&std::path::Path> =
            grants.read.iter().chain(&grants.write).map(|g| g.path.as_path()).collect();
        self.host.registry().active_skills().into_iter().any(|other| {
            let g = policy.grants(&other.manifest.name);
            !g.net.is_empty()
                && g.write.iter().any(|w| {
                    folders.iter().any(|f| f.starts_with(&w.path) || w.path.starts_with(f))
                })
        })
    }

    /// `memory__recall`: a search of the active notes, at its level.
    pub(super) fn recall(&mut self, arguments: &Value) -> (Result<String, ToolFailure>, Decision) {
        let Some(memory) = &self.memory else {
            return (
                Err(ToolFailure::new(ErrorCode::NoSuchTool, "this run has no memory")),
                Decision::NotReached,
            );
        };
        let decision = match memory.settings.recall {
            Level::Confirm => match self.confirmer.confirm("memory", "recall", arguments) {
                Ok(()) => Decision::Confirmed,
                Err(why) => {
                    return (
                        Err(ToolFailure::new(
                            ErrorCode::Denied,
                            format!("notes not searched: {why}"),
                        )),
                        Decision::Denied,
                    );
                }
            },
            _ => Decision::Auto,
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
            .map(|e| {
                json!({
                    "id": e.id,
                    "kind": e.kind.name(),
                    "subject": e.subject,
                    "text": e.text,
                    "source": e.provenance.describe()
                })
            })
            .collect();
        (Ok(json!({"count": notes.len(), "notes": notes}).to_string()), decision)
    }
}
