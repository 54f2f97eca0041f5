//! How a run is limited and shaped: the caller's [`RunConfig`].

use super::Disclosure;
use super::{compaction, workbench};

/// How a run is limited and shaped.
#[derive(Clone, Debug)]
pub struct RunConfig {
    /// Most model requests (default 8).
    pub max_steps: usize,
    /// Stop once this many tokens (input + output, all requests) are used.
    pub token_budget: Option<u64>,
    /// Results up to this many characters are shown whole (default 3000).
    pub view_chars: usize,
    /// Results above this many characters go to the workbench (default 8000).
    pub keep_chars: usize,
    /// Identical consecutive calls that count as no progress (default 3).
    pub repeat_limit: usize,
    /// The model's context window in tokens; `None` asks the model's
    /// server ([`Model::context_tokens`](crate::model::Model::context_tokens)),
    /// then goes by the model's name (known families), then assumes 32,768.
    pub context_tokens: Option<u64>,
    /// Percent of the context window at which older turns are compacted
    /// into a checkpoint (default 80).
    pub compact_at: u8,
    /// The kind of task (`save-page`), if known: remembered notes of that
    /// kind rank first.
    pub task_type: Option<String>,
    /// How tools are offered ([`Disclosure`]): every tool up front (the
    /// default, until the eval set says otherwise), or a menu of skills
    /// whose tools are offered once opened — by the model, or by the
    /// harness from the task's words.
    pub disclose: Disclosure,
    /// Offer each tool's parameters compacted (local `$ref`s inlined,
    /// annotations no model needs removed: fewer tokens for every
    /// request). Off by default: the eval set did not say it
    /// helps (figures in the book's "Run an agent" chapter).
    pub compact_schemas: bool,
    /// Criteria a reviewer checks the answer against (`reach run
    /// --review`): a worker with read-only skills returns `pass` or
    /// `revise` with issues, and on `revise` the run gets one more round
    /// (up to `max_steps` more requests) with the issues. `None`: no review.
    pub review: Option<String>,
    /// When an Agent Skills bundle's instructions reach the model: when it
    /// opens the bundle (the default), or up front for the bundle the task's
    /// words match best ([`BundleBody::UpFront`]).
    pub bundle_body: BundleBody,
}

/// When a bundle's `SKILL.md` body is given to the model.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum BundleBody {
    /// When the model opens the bundle with `skills__open`. The default:
    /// with the local 1.5B model, opening the best-matching bundle up front
    /// completed no more of the bundle cases, and costs its tokens on
    /// every run it matches.
    #[default]
    OnActivation,
    /// The bundle whose name and description the task's words match best
    /// is opened before the first request (its body after the task, its
    /// tools offered); the others stay in the catalogue.
    UpFront,
}

impl Default for RunConfig {
    fn default() -> Self {
        RunConfig {
            max_steps: 8,
            token_budget: None,
            view_chars: workbench::VIEW_CHARS,
            keep_chars: workbench::KEEP_CHARS,
            repeat_limit: 3,
            context_tokens: None,
            compact_at: compaction::DEFAULT_COMPACT_AT,
            task_type: None,
            disclose: Disclosure::All,
            compact_schemas: false,
            review: None,
            bundle_body: BundleBody::OnActivation,
        }
    }
}
