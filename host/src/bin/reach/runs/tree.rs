//! `reach runs show RUN --json`: one run's log as a tree, each worker with
//! its own records and its own workers (the layout is in `reach runs show
//! --help`).

use super::{Scopes, depth, parent_task};
use agent_reach::harness::events::worker_of;
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::path::Path;

/// What the log says about one task id.
struct Task<'a> {
    /// Index of the first record that names it: siblings in that order.
    first: usize,
    /// Its `delegation_started` or `review_started`.
    started: Option<&'a Value>,
    /// Its `delegation_finished` or `review_finished`.
    finished: Option<&'a Value>,
    /// A reviewer, not a worker.
    review: bool,
}

/// The whole log as one JSON object.
pub(super) fn json(path: &Path, events: &[Value], scopes: &Scopes<'_>) -> Value {
    let tasks = tasks(events);
    let (reviews, workers): (Vec<&str>, Vec<&str>) =
        children(&tasks, None).into_iter().partition(|id| tasks[id].review);
    let run_id = scopes
        .root
        .iter()
        .find(|e| e["event"] == "run_started")
        .copied()
        .or(events.first())
        .and_then(|e| e["run_id"].as_str())
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

/// Every task id the log names (with its ancestors, so that a worker whose
/// parent left no record still has a place in the tree).
fn tasks(events: &[Value]) -> BTreeMap<&str, Task<'_>> {
    let mut tasks: BTreeMap<&str, Task<'_>> = BTreeMap::new();
    for (i, e) in events.iter().enumerate() {
        let name = e["event"].as_str().unwrap_or("");
        let about = match name {
            "delegation_started" | "delegation_finished" | "review_started" | "review_finished" => {
                e["task_id"].as_str()
            }
            _ => worker_of(e),
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
        match name {
            "delegation_started" => task.started = Some(e),
            "delegation_finished" => task.finished = Some(e),
            "review_started" => (task.started, task.review) = (Some(e), true),
            "review_finished" => (task.finished, task.review) = (Some(e), true),
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
fn own<'a>(id: &str, scopes: &Scopes<'a>) -> Vec<&'a Value> {
    scopes.tasks.get(id).cloned().unwrap_or_default()
}

fn worker(id: &str, tasks: &BTreeMap<&str, Task<'_>>, scopes: &Scopes<'_>) -> Value {
    let task = &tasks[id];
    let started = task.started.unwrap_or(&Value::Null);
    let finished = task.finished.unwrap_or(&Value::Null);
    let records = own(id, scopes);
    // Its own records name its profile when the delegation's are missing.
    let agent = [&started["agent"], &finished["agent"]]
        .into_iter()
        .chain(records.iter().map(|e| &e["worker_agent"]))
        .find(|a| a.is_string())
        .unwrap_or(&Value::Null);
    json!({
        "task_id": id,
        "agent": agent,
        "depth": if started["depth"].is_u64() { started["depth"].clone() } else { json!(depth(id)) },
        "task": started["task"],
        "outcome": finished["outcome"],
        "error": finished["error"],
        "output": finished["output"],
        "steps": finished["steps"],
        "usage": finished["usage"],
        "duration_ms": finished["duration_ms"],
        "started": started["time"],
        "finished": finished["time"],
        "records": records,
        "workers": children(tasks, Some(id)).iter().map(|child| worker(child, tasks, scopes)).collect::<Vec<_>>(),
    })
}

fn review(id: &str, tasks: &BTreeMap<&str, Task<'_>>, scopes: &Scopes<'_>) -> Value {
    let task = &tasks[id];
    let started = task.started.unwrap_or(&Value::Null);
    let finished = task.finished.unwrap_or(&Value::Null);
    let round = if finished["round"].is_null() { &started["round"] } else { &finished["round"] };
    json!({
        "round": round,
        "task_id": id,
        "criteria": started["criteria"],
        "verdict": finished["verdict"],
        "issues": if finished["issues"].is_array() { finished["issues"].clone() } else { json!([]) },
        "error": finished["error"],
        "records": own(id, scopes),
    })
}
