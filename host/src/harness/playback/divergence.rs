//! Where a replay parted from the run it plays back, as `reach runs
//! replay` reports it (and `--json` writes it: the field names are stable).

use serde::{Deserialize, Serialize};

/// What kind of divergence.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum DivergenceKind {
    /// A call the run made is now denied (the table, its level, a grant).
    #[default]
    Denied,
    /// A call the run made is now refused by the tool's schema.
    Refused,
    /// A call's result differs (`diff` shows how).
    Result,
    /// A file a call wrote is written differently (or not at all).
    Written,
    /// A tool the run called is no longer offered (its skill is gone).
    Gone,
    /// The replay made a call, or asked for a reply, the run did not.
    Unrecorded,
    /// The run made a call, or had a reply, the replay did not reach.
    Missing,
    /// A skill sent a request the recording has no response to.
    Request,
    /// One of them compacted its context where the other did not.
    Compaction,
    /// The run stopped differently.
    Stop,
}

impl DivergenceKind {
    /// As the report writes it.
    pub fn as_str(self) -> &'static str {
        match self {
            DivergenceKind::Denied => "denied",
            DivergenceKind::Refused => "refused",
            DivergenceKind::Result => "result",
            DivergenceKind::Written => "written",
            DivergenceKind::Gone => "gone",
            DivergenceKind::Unrecorded => "unrecorded",
            DivergenceKind::Missing => "missing",
            DivergenceKind::Request => "request",
            DivergenceKind::Compaction => "compaction",
            DivergenceKind::Stop => "stop",
        }
    }
}

/// One place a replay parted from its run.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Divergence {
    /// What kind.
    pub kind: DivergenceKind,
    /// The call ([`crate::tape::call_key`]: `#3`, `t1#2`), when it is about one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub call: Option<String>,
    /// The worker, when it is about one (`t1`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub worker: Option<String>,
    /// The step, when known (0: not known).
    #[serde(skip_serializing_if = "is_zero")]
    pub step: usize,
    /// The tool, when it is about a call.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    /// What differs, in words.
    pub detail: String,
    /// For a result: a unified diff, the run's (`-`) to the replay's (`+`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub diff: Option<String>,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

impl Divergence {
    /// About call `call` of `tool` at `step`.
    pub fn at_call(
        call: &str,
        step: usize,
        tool: &str,
        kind: DivergenceKind,
        detail: String,
    ) -> Divergence {
        let worker = call.split_once('#').map(|(w, _)| w).filter(|w| !w.is_empty());
        Divergence {
            kind,
            call: Some(call.to_owned()),
            worker: worker.map(str::to_owned),
            step,
            tool: Some(tool.to_owned()),
            detail,
            diff: None,
        }
    }

    /// About loop `task` (`None`: the run's own) at `step`.
    pub fn loop_level(
        task: Option<&str>,
        step: usize,
        kind: DivergenceKind,
        detail: String,
    ) -> Divergence {
        Divergence { kind, worker: task.map(str::to_owned), step, detail, ..Divergence::default() }
    }
}

/// `before` to `after` as a unified diff, at most 200 lines of it. Two
/// JSON values (most tools' results) are compared pretty-printed, a field a
/// line, so the diff shows the fields that changed.
pub fn unified(before: &str, after: &str) -> String {
    const MOST_LINES: usize = 200;
    let pretty = |text: &str| {
        let value: serde_json::Value = serde_json::from_str(text).ok()?;
        value.is_object().then(|| serde_json::to_string_pretty(&value).ok()).flatten()
    };
    let (before, after) = match (pretty(before), pretty(after)) {
        (Some(b), Some(a)) => (b + "\n", a + "\n"),
        _ => (before.to_owned(), after.to_owned()),
    };
    let diff = similar::TextDiff::from_lines(&before, &after);
    let text = diff.unified_diff().context_radius(2).header("run", "replay").to_string();
    let lines: Vec<&str> = text.lines().collect();
    if lines.len() <= MOST_LINES {
        return text;
    }
    let mut out = lines[..MOST_LINES].join("\n");
    out.push_str(&format!("\n… {} more line(s) of diff\n", lines.len() - MOST_LINES));
    out
}

/// A call key's order: the run's calls first, by number, then each worker's.
pub(super) fn call_order(key: &str) -> (String, usize) {
    let (worker, n) = key.split_once('#').unwrap_or(("", key));
    (worker.to_owned(), n.parse().unwrap_or(usize::MAX))
}
