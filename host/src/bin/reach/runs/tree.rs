//! `reach runs show RUN --json`: one run's log as a tree, each worker with
//! its own records and its own workers (the layout is in `reach runs show
//! --help`).

use super::{Scopes, depth, parent_task, started_task};
use agent_reach::harness::audit::record::{
    Body, DelegationFinished, DelegationStarted, Record, ReviewFinished, ReviewStarted,
};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::path::Path;

/// What the log says about one task id.
struct Task<'a> {
    /// Index of the first record that names it: siblings in that order.
    first: usize,
    /// Its `delegation_started` or `review_started`.
    started: Option<&'a Record>,
    /// Its `delegation_finished` or `review_finished`.
    finished: Option<&'a Record>,
    /// A reviewer, not a worker.
    review: bool,
}

/// The whole log as one JSON object.
pub(super) fn json(path: &Path, events: &[Record], scopes: &Scopes<'_>) -> Value {
    let tasks = tasks(events);
    let (reviews, workers): (Vec<&str>, Vec<&str>) =
        children(&tasks, None).into_iter().partition(|id| tasks[id].review);
    let run_id = scopes
        .root
        .iter()
        .find(|e| matches!(e.body, Body::RunStarted(_)))
        .copied()
        .or(events.first())
        .map(|e| e.run_id.as_str())
        .filter(|id| !id.is_empty())
        .map_or_else(
            || path.file_stem().map(|s| s.to_string_lossy().into_owned()),
            |id| Some(id.to_owned()),
        );
    json!({
        "run_id": run_id,
        "log": path,
        "records": scopes.root,
        "workers": workers.iter().map(|id| worker(id, &tasks, scopes)).collect::<Vec<_>>(),
        "reviews": reviews.iter().map(|id| review(id, &tasks, scopes)).collect::<Vec<_>>(),
    })
}

/// The task a `delegation_finished` or `review_finished` ends.
fn finished_task(e: &Record) -> Option<&str> {
    match &e.body {
        Body::DelegationFinished(d) => d.task_id.as_deref(),
        Body::ReviewFinished(r) => Some(&r.task_id),
        _ => None,
    }
}

/// Every task id the log names (with its ancestors, so that a worker whose
/// parent left no record still has a place in the tree).
fn tasks(events: &[Record]) -> BTreeMap<&str, Task<'_>> {
    let mut tasks: BTreeMap<&str, Task<'_>> = BTreeMap::new();
    for (i, e) in events.iter().enumerate() {
        let about = match &e.body {
            Body::DelegationStarted(_)
            | Body::DelegationFinished(_)
            | Body::ReviewStarted(_)
            | Body::ReviewFinished(_) => started_task(e).or(finished_task(e)),
            _ => e.worker_task(),
        };
        let Some(id) = about else { continue };
        let mut at = Some(id);
        while let Some(task) = at {
            tasks.entry(task).or_insert(Task {
                first: i,
                started: None,
                finished: None,
                review: false,
            });
            at = parent_task(task);
        }
        let Some(task) = tasks.get_mut(id) else { continue };
        match &e.body {
            Body::DelegationStarted(_) => task.started = Some(e),
            Body::DelegationFinished(_) => task.finished = Some(e),
            Body::ReviewStarted(_) => (task.started, task.review) = (Some(e), true),
            Body::ReviewFinished(_) => (task.finished, task.review) = (Some(e), true),
            _ => {}
        }
    }
    for (id, task) in &mut tasks {
        // A reviewer's records whose start and end are missing.
        task.review |=
            task.started.is_none() && task.finished.is_none() && id.starts_with("review");
    }
    tasks
}

/// The tasks `parent` started, in the order the log first names them.
fn children<'a>(tasks: &BTreeMap<&'a str, Task<'_>>, parent: Option<&str>) -> Vec<&'a str> {
    let mut ids: Vec<&str> = tasks.keys().copied().filter(|id| parent_task(id) == parent).collect();
    ids.sort_by_key(|id| tasks[id].first);
    ids
}

/// A task's own records (those that carry its id).
fn own<'a>(id: &str, scopes: &Scopes<'a>) -> Vec<&'a Record> {
    scopes.tasks.get(id).cloned().unwrap_or_default()
}

fn worker(id: &str, tasks: &BTreeMap<&str, Task<'_>>, scopes: &Scopes<'_>) -> Value {
    let task = &tasks[id];
    let started = task.started.and_then(|e| match &e.body {
        Body::DelegationStarted(d) => Some((e, d)),
        _ => None,
    });
    let finished = task.finished.and_then(|e| match &e.body {
        Body::DelegationFinished(d) => Some((e, d)),
        _ => None,
    });
    let (start, end): (Option<&DelegationStarted>, Option<&DelegationFinished>) =
        (started.map(|s| s.1), finished.map(|f| f.1));
    let records = own(id, scopes);
    // Its own records name its profile when the delegation's are missing.
    let agent = start
        .map(|s| s.agent.as_str())
        .or(end.and_then(|f| f.agent.as_str()))
        .or(records.iter().find_map(|e| e.worker.as_ref().map(|w| w.agent.as_str())));
    json!({
        "task_id": id,
        "agent": agent,
        "depth": start.and_then(|s| s.depth).unwrap_or_else(|| depth(id)),
        "task": start.map(|s| &s.task),
        "outcome": end.map(|f| f.outcome),
        "error": end.map(|f| &f.error),
        "output": end.map(|f| &f.output),
        "steps": end.map(|f| f.steps),
        "usage": end.map(|f| f.usage),
        "duration_ms": end.map(|f| f.duration_ms),
        "started": started.map(|s| &s.0.time),
        "finished": finished.map(|f| &f.0.time),
        "records": records,
        "workers": children(tasks, Some(id))
            .iter()
            .map(|child| worker(child, tasks, scopes))
            .collect::<Vec<_>>(),
    })
}

fn review(id: &str, tasks: &BTreeMap<&str, Task<'_>>, scopes: &Scopes<'_>) -> Value {
    let task = &tasks[id];
    let started: Option<&ReviewStarted> = task.started.and_then(|e| match &e.body {
        Body::ReviewStarted(r) => Some(r),
        _ => None,
    });
    let finished: Option<&ReviewFinished> = task.finished.and_then(|e| match &e.body {
        Body::ReviewFinished(r) => Some(r),
        _ => None,
    });
    json!({
        "round": finished.map(|f| f.round).or(started.map(|s| s.round)),
        "task_id": id,
        "criteria": started.map(|s| &s.criteria),
        "verdict": finished.map(|f| f.verdict),
        "issues": finished.map_or(&[][..], |f| &f.issues),
        "error": finished.map(|f| &f.error),
        "records": own(id, scopes),
    })
}
