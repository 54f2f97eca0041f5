//! Orchestration: a supervisor hands pieces of its task to workers.
//!
//! A worker is the same agent loop ([`crate::harness`]) with its own
//! model requests, its own context (only the [`Envelope`] and its
//! profile's instructions — never the parent's conversation) and only the
//! skills of its `[agents.NAME]` profile that its parent may also use, on
//! the same sandbox and permission table: a worker never reaches further
//! than its parent. Its final answer must be JSON matching the envelope's
//! `return_format`; a wrong one is sent back once to be fixed, then comes
//! back as a structured error (`INVALID_OUTPUT`).
//!
//! The [`Team`] is what one run shares across its whole tree of workers:
//! the profiles, the models, and the limits that keep a run from freezing
//! the machine or burning a quota — at most `max_workers` running at
//! once (a parent waiting on its own workers gives its slot back), at most
//! `max_delegations` started, at most `max_depth` levels, and every
//! worker's tokens counted toward the run's `token_budget`.

pub(crate) mod envelope;

pub use envelope::Envelope;

use crate::model::Model;
use crate::policy::{AgentProfile, DelegationSettings, Policy};
use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// The built-in tool that delegates.
pub const DELEGATE: &str = "agents__delegate";

/// What the whole tree of one run shares.
pub struct Team {
    profiles: Vec<AgentProfile>,
    limits: DelegationSettings,
    /// Models named by profiles (`model = "…"`), by name.
    models: HashMap<String, Arc<dyn Model>>,
    slots: Arc<Semaphore>,
    started: AtomicUsize,
    /// Tokens used by every model request of the run, the root's included.
    tokens: AtomicU64,
    /// The run's token budget; `u64::MAX` when none.
    budget: AtomicU64,
    /// What the run records, or plays back: set when the run starts.
    taping: std::sync::OnceLock<crate::harness::playback::Taping>,
}

impl std::fmt::Debug for Team {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Team")
            .field("profiles", &self.profiles.len())
            .field("limits", &self.limits)
            .finish_non_exhaustive()
    }
}

impl Team {
    /// The profiles and limits of `policy`.
    pub fn from_policy(policy: &Policy) -> Team {
        Team::new(policy.agents().to_vec(), policy.delegation())
    }

    /// A team of `profiles` within `limits`.
    pub fn new(profiles: Vec<AgentProfile>, limits: DelegationSettings) -> Team {
        Team {
            profiles,
            limits,
            models: HashMap::new(),
            slots: Arc::new(Semaphore::new(limits.max_workers.max(1))),
            started: AtomicUsize::new(0),
            tokens: AtomicU64::new(0),
            budget: AtomicU64::new(u64::MAX),
            taping: std::sync::OnceLock::new(),
        }
    }

    /// Serve profiles that name `name` as their `model` with `model`.
    pub fn with_model(mut self, name: impl Into<String>, model: Arc<dyn Model>) -> Team {
        self.models.insert(name.into(), model);
        self
    }

    /// The profiles.
    pub fn profiles(&self) -> &[AgentProfile] {
        &self.profiles
    }

    /// The profile named `name`.
    pub fn profile(&self, name: &str) -> Option<&AgentProfile> {
        self.profiles.iter().find(|p| p.name == name)
    }

    /// The limits.
    pub fn limits(&self) -> DelegationSettings {
        self.limits
    }

    /// The model a profile names, if one was given for that name.
    pub fn model(&self, name: &str) -> Option<&Arc<dyn Model>> {
        self.models.get(name)
    }

    /// Count the run's token budget (the root's `token_budget`) across the tree.
    pub(crate) fn set_budget(&self, budget: Option<u64>) {
        self.budget.store(budget.unwrap_or(u64::MAX), Ordering::Relaxed);
    }

    /// What the run records or plays back; set once, by the run's own loop.
    pub(crate) fn set_taping(&self, taping: crate::harness::playback::Taping) {
        let _ = self.taping.set(taping);
    }

    /// What the run records or plays back (nothing before it started).
    pub(crate) fn taping(&self) -> crate::harness::playback::Taping {
        self.taping.get().cloned().unwrap_or_default()
    }

    /// Add the tokens of one model request, anywhere in the tree.
    pub(crate) fn spend(&self, tokens: u64) {
        self.tokens.fetch_add(tokens, Ordering::Relaxed);
    }

    /// Tokens used so far by the whole run.
    pub fn spent(&self) -> u64 {
        self.tokens.load(Ordering::Relaxed)
    }

    /// True once the whole run has used its token budget.
    pub fn over_budget(&self) -> bool {
        self.spent() >= self.budget.load(Ordering::Relaxed)
    }

    /// Counts a new delegation; `false` once `max_delegations` have started.
    pub(crate) fn start_one(&self) -> bool {
        self.started
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| {
                (n < self.limits.max_delegations).then_some(n + 1)
            })
            .is_ok()
    }

    /// Delegations started so far.
    #[cfg(test)]
    pub fn started(&self) -> usize {
        self.started.load(Ordering::SeqCst)
    }

    /// Waits for one of the `max_workers` slots.
    pub(crate) async fn slot(&self) -> OwnedSemaphorePermit {
        // The semaphore is never closed.
        Arc::clone(&self.slots).acquire_owned().await.expect("the team's semaphore is never closed")
    }
}

/// Words that say something will be done later, not that it was done.
const FUTURE: [&str; 9] = [
    "i will",
    "i'll",
    "let me",
    "going to",
    "i am about to",
    "i'm about to",
    "will now",
    "i shall",
    "next, i",
];

/// True when `answer` says the model will hand work to a worker (a
/// supervisor that announces a delegation and then stops): a future-tense
/// phrase near "delegat…", or near the name of one of `agents` with
/// "agent" or "worker".
pub fn promises_delegation(answer: &str, agents: &[&str]) -> bool {
    let text = answer.to_lowercase();
    let future = FUTURE.iter().any(|f| text.contains(f));
    if !future {
        return false;
    }
    if text.contains("delegat") || text.contains("hand this") || text.contains("hand it") {
        return true;
    }
    let names_worker = text.contains("agent") || text.contains("worker");
    names_worker
        && agents.iter().any(|a| {
            text.split(|c: char| !c.is_alphanumeric() && c != '-' && c != '_').any(|w| w == *a)
        })
}

/// What the supervisor is told when it announced a delegation but made none.
pub fn promise_back() -> String {
    "[harness] You said you would hand work to a worker, but you made no agents__delegate call, \
     so nothing was done. Call agents__delegate now (or do the task with your own tools); \
     answer only once the work is done."
        .to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_announced_delegation_is_told_from_a_report() {
        let agents = ["web", "files"];
        for said in [
            "I will delegate this to the web agent.",
            "Let me ask the web agent to fetch the page.",
            "I'll hand this to a worker now.",
            "Next, I will have the files worker list the headings.",
            "I'm going to delegate the download.",
        ] {
            assert!(promises_delegation(said, &agents), "{said}");
        }
        for said in [
            "The web agent saved the page to notes/a.md; its headings are Intro and Usage.",
            "Delegated to web: saved notes/a.md.",
            "I will not be able to reach that site: it is not granted.",
            "The page says: let me know if you have questions.",
            "",
        ] {
            assert!(!promises_delegation(said, &agents), "{said}");
        }
    }

    #[test]
    fn delegations_stop_at_the_limit_and_slots_are_shared() {
        let team = Team::new(
            Vec::new(),
            DelegationSettings { max_delegations: 2, ..DelegationSettings::default() },
        );
        assert!(team.start_one() && team.start_one());
        assert!(!team.start_one(), "the third is over max_delegations");
        assert_eq!(team.started(), 2);
        team.set_budget(Some(100));
        team.spend(60);
        assert!(!team.over_budget());
        team.spend(40);
        assert!(team.over_budget());
    }
}
