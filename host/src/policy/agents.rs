//! The optional `[agents.NAME]` profiles and `[delegation]` limits: which
//! workers a supervisor may hand a piece of its task to, what each may
//! reach, and how far delegation may go.
//!
//! ```toml
//! [agents.web]
//! description = "Fetches web pages and saves them as Markdown."
//! skills = ["web", "files"]        # at most these; never more than the parent has
//! instructions = "Save pages under notes/."
//! model = "qwen2.5-coder-1.5b-instruct"   # optional: another model name at the same endpoint
//! max_steps = 6                    # optional (default: [delegation] worker_max_steps)
//! token_budget = 20000             # optional: most tokens this worker may use
//!
//! [delegation]                     # every key optional
//! max_workers = 4                  # workers running at once, whole run
//! max_depth = 2                    # a worker's worker is depth 2
//! max_delegations = 16             # workers started, whole run
//! worker_max_steps = 6             # default max_steps of a worker
//! ```
//!
//! A worker's skills are the intersection of its profile and what its
//! parent may use; the grants of each skill are the table's, never more.

/// One `[agents.NAME]` profile, checked.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct AgentProfile {
    /// The profile's name (`[agents.NAME]`): `[a-z][a-z0-9_-]*`.
    pub name: String,
    /// What it is for, as the supervisor's model reads it.
    pub description: String,
    /// The skills it may use (each listed in `[skills.*]`); the pseudo
    /// skill `agents` lets it delegate in turn, within `max_depth`.
    pub skills: Vec<String>,
    /// Another model name at the same endpoint; `None` is the parent's model.
    pub model: Option<String>,
    /// Most model requests of one delegation; `None` is
    /// [`DelegationSettings::worker_max_steps`].
    pub max_steps: Option<usize>,
    /// Most tokens one delegation may use.
    pub token_budget: Option<u64>,
    /// Given to the worker with each task.
    pub instructions: Option<String>,
    /// Line of `[agents.NAME]` in the table (for messages).
    pub line: usize,
}

impl AgentProfile {
    /// True when the profile lists the pseudo skill `agents` (it may delegate).
    pub fn may_delegate(&self) -> bool {
        self.skills.iter().any(|s| s == DELEGATE_SKILL)
    }
}

/// The pseudo skill that lets a worker delegate in turn.
pub const DELEGATE_SKILL: &str = "agents";

/// The `[delegation]` table, defaults filled in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct DelegationSettings {
    /// Workers running at the same time across the whole run (default 4).
    pub max_workers: usize,
    /// Deepest worker: the supervisor's workers are depth 1 (default 2).
    pub max_depth: usize,
    /// Workers started across the whole run (default 16).
    pub max_delegations: usize,
    /// `max_steps` of a worker whose profile does not say (default 6).
    pub worker_max_steps: usize,
}

impl Default for DelegationSettings {
    fn default() -> Self {
        DelegationSettings { max_workers: 4, max_depth: 2, max_delegations: 16, worker_max_steps: 6 }
    }
}
