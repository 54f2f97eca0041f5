//! `memory__remember`: a note's source found in what the run saw, the
//! person asked when the level or the network says so, then the store.

use super::provenance::{COVERAGE, Found, coverage, source_of};
use crate::error::{ErrorCode, ToolFailure};
use crate::harness::Harness;
use crate::harness::audit::record::{Decision, MemoryRemembered};
use crate::harness::state::RunState;
use crate::harness::toolbox::Target;
use crate::memory::{Added, Kind, NewEntry, Provenance};
use crate::policy::Level;
use serde_json::{Value, json};

/// A memory call's outcome and its decision.
type Outcome = (Result<String, ToolFailure>, Decision);

impl Harness<'_> {
    /// `memory__remember`: where the note came from, the level (and a
    /// person for notes from the network), then the store. Returns the
    /// outcome and the decision.
    pub(in crate::harness) fn remember(&mut self, arguments: &Value, run: &RunState) -> Outcome {
        let Some((store, level)) =
            self.memory.as_ref().map(|m| (m.store.clone(), m.settings.remember))
        else {
            return (
                Err(ToolFailure::new(ErrorCode::NoSuchTool, "this run has no memory")),
                Decision::NotReached,
            );
        };
        let text =
            |k: &str| arguments.get(k).and_then(Value::as_str).unwrap_or("").trim().to_owned();
        let (note, subject) = (text("text"), text("subject"));
        let kind = Kind::from_name(&text("kind")).unwrap_or(Kind::Fact);
        let task_type = Some(text("task_type")).filter(|t| !t.is_empty());
        let (provenance, from_network) = match self.note_source(run, &subject, &note) {
            Ok(found) => found,
            Err(refused) => return refused,
        };
        if from_network && !self.confirmer.person_present() {
            // `--yes` and unattended runs approve calls, not an outsider's words as memory.
            let reason = format!(
                "not remembered: the note comes from a tool that reads the network ({}); only a \
                 person asked at the moment can let such a note into memory, and no one is there \
                 (--yes does not cover it)",
                provenance.describe()
            );
            return (Err(ToolFailure::new(ErrorCode::Denied, reason)), Decision::Denied);
        }
        // Words from the network are an outsider's: a person decides, whatever the level.
        let ask = level == Level::Confirm || from_network;
        let decision = if ask {
            let shown = json!({
                "kind": kind.name(),
                "subject": subject,
                "text": note,
                "source": provenance.describe()
            });
            match self.confirmer.confirm("memory", "remember", &shown) {
                Ok(()) => Decision::Confirmed,
                Err(why) => {
                    let reason = if from_network {
                        format!(
                            "not remembered: the note comes from a tool that reads the network \
                             ({}), and a person must confirm such notes: {why}",
                            provenance.describe()
                        )
                    } else {
                        format!(
                            "not remembered: [memory] remember needs a person's confirmation: {why}"
                        )
                    };
                    let decision = if self.confirmer.person_present() {
                        Decision::Declined
                    } else {
                        Decision::Denied
                    };
                    return (Err(ToolFailure::new(ErrorCode::Denied, reason)), decision);
                }
            }
        } else {
            Decision::Auto
        };
        let added = store.add(NewEntry { kind, subject, text: note, task_type, provenance });
        let out = match added {
            Ok(Added::New(e)) => Ok(json!({"remembered": e.id, "source": e.provenance.describe()})),
            Ok(Added::Superseded { entry, previous }) => Ok(json!({
                "remembered": entry.id,
                "replaces": previous.id,
                "source": entry.provenance.describe()
            })),
            Ok(Added::Existing(e)) => Ok(json!({"remembered": e.id, "already_known": true})),
            Err(err) => {
                Err(ToolFailure::new(ErrorCode::InvalidArgs, format!("not remembered: {err}")))
            }
        };
        if let Ok(v) = &out {
            self.audit.record(MemoryRemembered { entry: v["remembered"].as_i64(), decision });
        }
        (out.map(|v| v.to_string()), decision)
    }

    /// Where the note (`subject`, `note`) came from, and whether that may
    /// hold text from the network; the refusal (or "already known") when
    /// it came from nowhere the run can name.
    fn note_source(
        &self,
        run: &RunState,
        subject: &str,
        note: &str,
    ) -> Result<(Provenance, bool), Outcome> {
        let person: Vec<(usize, &str)> = run
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
            run.actions
                .get(i)
                .is_some_and(|a| matches!(self.toolbox.target(&a.tool), Some(Target::MemoryRecall)))
        };
        let results: Vec<&str> = run
            .results
            .iter()
            .enumerate()
            .map(|(i, r)| if recalled(i) { "" } else { r.as_str() })
            .collect();
        let known = || {
            let mut known: Vec<&str> = vec![run.remembered.as_str()];
            known.extend(
                run.results
                    .iter()
                    .enumerate()
                    .filter(|(i, _)| recalled(*i))
                    .map(|(_, r)| r.as_str()),
            );
            known.iter().any(|k| coverage(note, k) >= COVERAGE)
        };
        match source_of(subject, note, &person, &results) {
            Some(Found::Person { step }) => Ok((
                Provenance::User { run_id: Some(run.run_id.clone()), step: Some(step as u32) },
                false,
            )),
            Some(Found::Result { index }) => {
                let action = &run.actions[index];
                // Words from the network can reach a result three ways: the skill
                // (or a worker) fetched them; a skill that fetches wrote them where
                // this one reads (a page saved in any run); or this run fetched
                // something and the model moved it on (written, then read back).
                let network = run.actions.iter().any(|a| a.network);
                let provenance = Provenance::Tool {
                    run_id: run.run_id.clone(),
                    step: action.step as u32,
                    tool: Some(action.tool.clone()),
                };
                Ok((provenance, network))
            }
            _ if known() => {
                // The model copied a note it was given at the start, or one a
                // recall returned: already kept.
                let out = json!({
                    "already_known": true,
                    "note": "This is already remembered; go on with the task."
                });
                Err((Ok(out.to_string()), Decision::Auto))
            }
            Some(Found::Reworded { sentences, .. }) => {
                // Not the person's words, whoever wrote them: the model
                // rewording them can turn them around, and a page can use
                // their vocabulary. The person's own sentence is kept instead.
                let quoted: Vec<String> = sentences.iter().map(|s| format!("{s:?}")).collect();
                let failure = ToolFailure::new(
                    ErrorCode::InvalidArgs,
                    format!(
                        "not remembered: this note rewords the user's message, and a note is the \
                         user's only when it copies one or more of their sentences exactly, every \
                         word; copy the sentence itself as the text{}",
                        if quoted.is_empty() {
                            String::new()
                        } else {
                            format!(", e.g. {}", quoted.join(" or "))
                        }
                    ),
                );
                Err((Err(failure), Decision::NotReached))
            }
            None => {
                let failure = ToolFailure::new(
                    ErrorCode::InvalidArgs,
                    "not remembered: neither the user's messages nor any tool result of this run \
                     contains this note's words; remember only what the user said (their whole \
                     sentence, copied exactly) or a tool returned, in their words",
                );
                Err((Err(failure), Decision::NotReached))
            }
        }
    }
}
