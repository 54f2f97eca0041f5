//! How a run reports itself as it goes: the [`Progress`] a terminal (or an
//! evaluation) implements, and how a worker's progress shows in its run's.

use super::report::Review;
use crate::model::Usage;

/// Progress of a run, for a terminal. `Sync`, so that a run can be
/// spawned on a multi-threaded runtime.
pub trait Progress: Sync {
    /// Called once, before the run does anything: its id, the model's
    /// name and the tools offered (by the names the model calls them).
    fn run_started(&self, _run_id: &str, _model: &str, _tools: &[&str]) {}
    /// Called before each model request.
    fn model_request(&self, _step: usize) {}
    /// Called when the model answered: how long it took, the tokens of
    /// this request, and how many tool calls it made (text calls included).
    fn model_finished(&self, _step: usize, _ms: u64, _usage: &Usage, _tool_calls: usize) {}
    /// Called before each tool call.
    fn tool_started(&self, _step: usize, _tool: &str) {}
    /// Called after each tool call.
    fn tool_finished(&self, _step: usize, _tool: &str, _outcome: &str, _ms: u64) {}
    /// The whole result of a tool call (secrets masked), before it is cut
    /// to size for the model: an evaluation checks the answer against it.
    fn tool_result(&self, _step: usize, _tool: &str, _result: &str) {}
    /// Called after older turns were compacted: the request's estimated
    /// tokens before and after.
    fn compacted(&self, _step: usize, _before: u64, _after: u64) {}
    /// A worker (`agents__delegate`) is about to start, as `task` (`t1`);
    /// its tool calls are reported as they happen, like the run's own.
    fn worker_started(&self, _task: &str, _agent: &str) {}
    /// A worker ended: `ok` or the error code its parent got.
    fn worker_finished(&self, _task: &str, _outcome: &str, _ms: u64) {}
    /// A tool call of worker `task` ended (`ok` or the error code).
    fn worker_tool(&self, _task: &str, _tool: &str, _outcome: &str, _ms: u64) {}
    /// A review round (`RunConfig::review`) ended with this verdict.
    fn reviewed(&self, _review: &Review) {}
}

/// Reports nothing.
pub struct Quiet;
impl Progress for Quiet {}

/// A worker's progress, as its run's shows it: each tool call once it
/// ended (workers run side by side; a terminal gets whole lines), not its
/// model requests (their step numbers are the worker's own) nor its
/// results (the run's results are what its own model was given).
pub(super) struct WorkerProgress<'p> {
    pub(super) inner: &'p dyn Progress,
    pub(super) task: &'p str,
}

impl Progress for WorkerProgress<'_> {
    fn tool_finished(&self, _step: usize, tool: &str, outcome: &str, ms: u64) {
        self.inner.worker_tool(self.task, tool, outcome, ms);
    }
    fn worker_started(&self, task: &str, agent: &str) {
        self.inner.worker_started(task, agent);
    }
    fn worker_finished(&self, task: &str, outcome: &str, ms: u64) {
        self.inner.worker_finished(task, outcome, ms);
    }
}
