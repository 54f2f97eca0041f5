//! One call checked and run: a skill a worker's profile leaves out, an
//! unknown name, arguments that cannot be read — each refused with what to
//! do instead; then the built-in or the skill the name stands for, with the
//! level decision (and the person's answer) recorded as soon as it is made.

use super::{At, decision_record};
use crate::error::{ErrorCode, ToolFailure};
use crate::harness::Decision;
use crate::harness::audit::{AuditLog, record};
use crate::harness::state::RunState;
use crate::harness::toolbox::Target;
use crate::harness::{Disclosure, Harness, repair, workbench};
use crate::host::Confirmer;
use crate::journal::{self, CallScope};
use crate::model::ToolCall;
use crate::policy::Level;
use crate::text::shorten_chars;
use serde_json::Value;
use std::sync::Mutex;

/// What a call came to: its outcome, the level decision, and its
/// arguments as understood.
type Ran = (Result<String, ToolFailure>, Decision, Value);

impl Harness<'_> {
    /// Run one call: the checks, then the tool. Returns the outcome, the
    /// level decision and the arguments as understood. `parsed` is
    /// `repair::arguments` of the call, read once by the caller. A decision
    /// other than `auto` is recorded (`decision`) as soon as it is made.
    pub(super) async fn execute(
        &mut self,
        call: &ToolCall,
        parsed: Result<serde_json::Map<String, Value>, String>,
        run: &mut RunState,
        at: At<'_>,
    ) -> Ran {
        if let Some(skill) = self.toolbox.withheld(&call.name) {
            // A worker reaches only its profile's skills; the runtime would
            // run this one, so it is refused here, by name.
            let failure = ToolFailure::new(
                ErrorCode::Denied,
                format!(
                    "{} may not use the skill `{skill}` itself: {}",
                    self.scope
                        .agent
                        .as_deref()
                        .map_or_else(|| "this run".to_owned(), |a| format!("agent `{a}`")),
                    match &self.scope.agent {
                        Some(_) => format!(
                            "its profile's skills here are {}",
                            self.toolbox.skills().join(", ")
                        ),
                        None => "it hands work to workers (agents__delegate) whose profiles have \
                                 the skills"
                            .to_owned(),
                    }
                ),
            );
            self.audit.record(decision_record(at, Decision::Denied, Some(&failure.message)));
            return (
                Err(failure),
                Decision::Denied,
                parsed.map(Value::Object).unwrap_or(Value::Null),
            );
        }
        let Some(target) = self.toolbox.target(&call.name).cloned() else {
            let close = self.toolbox.close_names(&call.name);
            let failure = ToolFailure::new(
                ErrorCode::NoSuchTool,
                format!(
                    "there is no tool named `{}`; did you mean: {}?",
                    call.name,
                    close.join(", ")
                ),
            );
            return (Err(failure), Decision::NotReached, Value::Null);
        };
        let arguments = match parsed {
            Ok(mut map) => {
                if let Some(schema) = self.toolbox.parameters(&call.name) {
                    repair::scalars_as_typed(&mut map, schema);
                }
                Value::Object(map)
            }
            Err(why) => {
                return (
                    Err(ToolFailure::new(ErrorCode::InvalidArgs, format!("{}: {why}", call.name))),
                    Decision::NotReached,
                    Value::Null,
                );
            }
        };
        self.run_target(target, arguments, run, at).await
    }

    /// The built-in or the skill `target` stands for, run with `arguments`.
    async fn run_target(
        &mut self,
        target: Target,
        arguments: Value,
        run: &mut RunState,
        at: At<'_>,
    ) -> Ran {
        match target {
            Target::WorkbenchRead => {
                let handle = arguments.get("handle").and_then(Value::as_str).unwrap_or("");
                let offset = arguments.get("offset").and_then(Value::as_u64).unwrap_or(0) as usize;
                let limit = arguments
                    .get("limit")
                    .and_then(Value::as_u64)
                    .unwrap_or(workbench::VIEW_CHARS as u64) as usize;
                let out = self
                    .workbench
                    .read(handle, offset, limit)
                    .map_err(|e| ToolFailure::new(ErrorCode::NotFound, e));
                (out, Decision::Auto, arguments)
            }
            Target::SkillOpen => {
                let skill = arguments.get("skill").and_then(Value::as_str).unwrap_or("");
                let out = if self.toolbox.is_bundle(skill) {
                    let skill = skill.to_owned();
                    self.open_bundle(run, &skill)
                } else {
                    self.open_skill(run, &arguments)
                };
                (out, Decision::Auto, arguments)
            }
            Target::SkillRead => {
                let out = self.read_bundle_file(&arguments);
                (out, Decision::Auto, arguments)
            }
            Target::MemoryRemember => {
                let (out, decision) = self.remember(&arguments, run);
                self.decided(at, decision, &out);
                (out, decision, arguments)
            }
            Target::MemoryRecall => {
                let (out, decision) = self.recall(&arguments);
                self.decided(at, decision, &out);
                (out, decision, arguments)
            }
            Target::Delegate => {
                // Delegations run before the other calls of their reply.
                (
                    Err(ToolFailure::new(
                        ErrorCode::Failed,
                        "a delegation reached the wrong path; nothing ran",
                    )),
                    Decision::NotReached,
                    arguments,
                )
            }
            Target::SkillInstructions => {
                let skill = arguments.get("skill").and_then(Value::as_str).unwrap_or("");
                let out = match self
                    .host
                    .registry()
                    .active(skill)
                    .filter(|_| self.toolbox.skills().contains(&skill))
                {
                    Some(a) => Ok(a.manifest.instructions.clone().unwrap_or_else(|| {
                        format!("{skill} has no instructions beyond its tool descriptions.")
                    })),
                    None => Err(ToolFailure::new(
                        ErrorCode::NoSuchTool,
                        format!("no active skill named `{skill}`"),
                    )),
                };
                (out, Decision::Auto, arguments)
            }
            Target::Skill { skill, tool } => {
                self.run_skill(run, &skill, &tool, arguments, at).await
            }
        }
    }

    /// `skills__open`: the skill's tools, offered from now on.
    fn open_skill(&mut self, run: &mut RunState, arguments: &Value) -> Result<String, ToolFailure> {
        let skill = arguments.get("skill").and_then(Value::as_str).unwrap_or("").to_owned();
        let tools: Vec<String> = self
            .toolbox
            .tools_of(&skill)
            .iter()
            .map(|t| format!("{}: {}", t.name, shorten_chars(&t.description, 120)))
            .collect();
        if tools.is_empty() {
            Err(ToolFailure::new(
                ErrorCode::NoSuchTool,
                format!(
                    "no skill named `{skill}` can be opened; the menu in skills__open lists them"
                ),
            ))
        } else {
            self.open(run, &skill);
            Ok(format!(
                "{skill} is open; its tools are offered from now on:\n- {}",
                tools.join("\n- ")
            ))
        }
    }

    /// `skill.tool` in its sandbox, at its level, with the person's answer
    /// (when one is asked) on record as soon as it is given.
    async fn run_skill(
        &mut self,
        run: &mut RunState,
        skill: &str,
        tool: &str,
        arguments: Value,
        at: At<'_>,
    ) -> Ran {
        // Called without opening it first: the call says which skill is wanted.
        self.open(run, skill);
        let level = self.host.policy().level(skill, tool);
        let host = self.host;
        let tape_scope = self.tape_scope(at.call);
        // The person's answer is on record as soon as it is given,
        // before a confirmed call runs.
        let recorder = Recorder {
            inner: self.confirmer,
            answer: Mutex::new(None),
            audit: Mutex::new(&mut self.audit),
            at,
        };
        let text = arguments.to_string();
        // Boxed: the loop's future nests every call's, and the scopes below
        // would otherwise take its type past the compiler's depth limit.
        let invoked: std::pin::Pin<Box<dyn Future<Output = _> + Send + '_>> =
            Box::pin(host.invoke_within(skill, tool, &text, &recorder, self.reach));
        // Its network traffic is recorded, or in a replay answered from the recording.
        let invoked = async {
            match tape_scope {
                Some(scope) => crate::tape::scoped(scope, invoked).await,
                None => invoked.await,
            }
        };
        // Its changes to granted folders are journaled, and rolled back if it fails.
        let out = match &self.journal {
            Some(run) => {
                let scope = CallScope {
                    run: run.clone(),
                    call: at.call as u64,
                    step: at.step as u64,
                    worker: self.scope.task.clone(),
                };
                journal::scoped(scope, invoked).await
            }
            None => invoked.await,
        };
        let asked = *recorder.answer.lock().unwrap_or_else(|e| e.into_inner());
        let decision = match (level, asked) {
            (Level::Deny, _) => Decision::Denied,
            (Level::Confirm, Some(true)) => Decision::Confirmed,
            (Level::Confirm, Some(false)) => Decision::Declined,
            (Level::Confirm, None) => Decision::NotReached,
            (Level::Auto, _) => Decision::Auto,
        };
        if asked.is_none() {
            self.decided(at, decision, &out);
        }
        (out, decision, arguments)
    }

    /// Records a decision other than `auto` (and `-`, no decision) made for
    /// the call at `at`, with the refusal's reason when it failed.
    fn decided(&mut self, at: At<'_>, decision: Decision, out: &Result<String, ToolFailure>) {
        if matches!(decision, Decision::Auto | Decision::NotReached) {
            return;
        }
        let reason = out
            .as_ref()
            .err()
            .filter(|_| decision != Decision::Confirmed)
            .map(|f| f.message.as_str());
        self.audit.record(decision_record(at, decision, reason));
    }

    /// Marks `skill` open (on-demand disclosure, and a bundle in every
    /// mode: its tools are offered only once it is open), once.
    pub(super) fn open(&mut self, run: &mut RunState, skill: &str) {
        let bundle = self.toolbox.is_bundle(skill);
        if (!bundle && (self.config.disclose == Disclosure::All || run.offer_all))
            || run.opened.iter().any(|s| s == skill)
        {
            return;
        }
        run.opened.push(skill.to_owned());
        self.audit.record(record::SkillOpened { skill: skill.to_owned() });
    }
}

/// Remembers what the person (or policy) answered, and records it.
struct Recorder<'a, 'c> {
    inner: &'a dyn Confirmer,
    answer: Mutex<Option<bool>>,
    audit: Mutex<&'a mut AuditLog>,
    at: At<'c>,
}

impl Confirmer for Recorder<'_, '_> {
    fn confirm(&self, skill: &str, tool: &str, arguments: &Value) -> Result<(), String> {
        let result = self.inner.confirm(skill, tool, arguments);
        *self.answer.lock().unwrap_or_else(|e| e.into_inner()) = Some(result.is_ok());
        let (decision, reason) = match &result {
            Ok(()) => (Decision::Confirmed, None),
            Err(why) => (Decision::Declined, Some(why.as_str())),
        };
        self.audit
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .record(decision_record(self.at, decision, reason));
        result
    }

    fn person_present(&self) -> bool {
        self.inner.person_present()
    }
}
