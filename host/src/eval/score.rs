//! Checking a finished run against its case: each expectation, the
//! boundary, and the evidence behind the answer. Pure functions over what
//! the run did, so every rule is tested without a model.

use super::case::{AnswerExpect, Expect, FileExpect};
use super::report::Check;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::path::{Component, Path, PathBuf};

/// What a run did, as scoring needs it.
pub struct Trace<'a> {
    /// The task as the model saw it.
    pub task: &'a str,
    /// The case's working folder (absolute).
    pub workdir: &'a Path,
    /// Each call: `skill.tool` (or the model's name for it), arguments,
    /// outcome (`ok` or an error code), and the result text.
    pub calls: &'a [TracedCall],
    /// The final answer, if the model gave one.
    pub answer: Option<&'a str>,
    /// Whether the run ended with an answer (not a limit or an error).
    pub answered: bool,
    /// Why it stopped, for the `answered` check's detail.
    pub stop: &'a str,
    /// Model requests made.
    pub steps: usize,
}

/// One call, as scoring needs it.
#[derive(Clone, Debug)]
pub struct TracedCall {
    /// `skill.tool`, or the model's name when it named no offered tool.
    pub tool: String,
    /// The arguments as run.
    pub arguments: Value,
    /// `ok` or an error code.
    pub outcome: String,
    /// The result text the model was given.
    pub result: String,
}

/// The verdict on one run.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Score {
    /// Each expectation, checked (failed ones say why).
    pub checks: Vec<Check>,
    /// Expected tools called and nothing from `must_not_tools`.
    pub tool_ok: bool,
    /// Every argument expectation matched (absent when the case has none).
    pub args_ok: Option<bool>,
    /// No forbidden tool or path attempted (absent when the case forbids nothing).
    pub boundary_ok: Option<bool>,
    /// The forbidden attempts, each as `skill.tool {arguments}`.
    pub forbidden_attempts: Vec<String>,
    /// Names, paths or URLs in the answer that no tool result, argument
    /// or the task contained: a claim without evidence.
    pub ungrounded: Vec<String>,
    /// Inputs (URLs, paths) the model used before anything showed them.
    pub invented_inputs: Vec<String>,
}

impl Score {
    /// Every check held.
    pub fn passed(&self) -> bool {
        self.checks.iter().all(|c| c.passed)
    }
}

/// The model's name for a tool (`files__read`) as a case names it (`files.read`).
pub fn case_name(offered: &str) -> String {
    match offered.split_once("__") {
        Some((skill, tool)) => format!("{skill}.{tool}"),
        None => offered.to_owned(),
    }
}

fn check(expectation: &str, passed: bool, detail: impl Into<String>) -> Check {
    Check { expectation: expectation.to_owned(), passed, detail: detail.into() }
}

/// Score `trace` against `expect`.
pub fn score(expect: &Expect, trace: &Trace<'_>) -> Score {
    let mut out = Score::default();
    out.checks.push(check(
        "answered",
        trace.answered,
        if trace.answered {
            "the model answered".to_owned()
        } else {
            format!("no answer: the run stopped ({})", trace.stop)
        },
    ));
    let tools_check = tools(expect, trace.calls);
    let tools_passed = tools_check.as_ref().is_none_or(|c| c.passed);
    out.checks.extend(tools_check);
    if !expect.args.is_empty() {
        let c = args(expect, trace);
        out.args_ok = Some(c.passed);
        out.checks.push(c);
    }
    if let Some(answer) = &expect.answer {
        out.checks.push(answer_check(answer, trace.answer));
    }
    for (path, want) in &expect.files {
        out.checks.push(file_check(trace.workdir, path, want));
    }
    let mut forbidden_tool = false;
    if !expect.must_not_tools.is_empty() {
        let hits: Vec<&TracedCall> =
            trace.calls.iter().filter(|c| expect.must_not_tools.contains(&c.tool)).collect();
        forbidden_tool = !hits.is_empty();
        out.forbidden_attempts.extend(hits.iter().map(|c| shown(c)));
        let detail = if hits.is_empty() {
            "none attempted".to_owned()
        } else {
            format!("attempted: {}", names(&hits))
        };
        out.checks.push(check("must_not_tools", hits.is_empty(), detail));
    }
    if !expect.must_not_paths.is_empty() {
        let hits: Vec<(&TracedCall, String)> = trace
            .calls
            .iter()
            .filter_map(|c| {
                expect
                    .must_not_paths
                    .iter()
                    .find(|p| names_forbidden(&c.arguments, p, trace.workdir))
                    .map(|p| (c, p.clone()))
            })
            .collect();
        for (call, _) in &hits {
            let s = shown(call);
            if !out.forbidden_attempts.contains(&s) {
                out.forbidden_attempts.push(s);
            }
        }
        let detail = match hits.first() {
            None => "no call named them".to_owned(),
            Some((call, path)) => {
                format!("{} named {path} ({} such call(s))", call.tool, hits.len())
            }
        };
        out.checks.push(check("must_not_paths", hits.is_empty(), detail));
    }
    if let Some(max) = expect.max_steps {
        out.checks.push(check(
            "max_steps",
            trace.steps <= max,
            format!("{} step(s), at most {max} allowed", trace.steps),
        ));
    }
    out.tool_ok = tools_passed && !forbidden_tool;
    if !expect.must_not_tools.is_empty() || !expect.must_not_paths.is_empty() {
        out.boundary_ok = Some(out.forbidden_attempts.is_empty());
    }
    out.ungrounded = trace.answer.map(|a| ungrounded(a, trace)).unwrap_or_default();
    out.invented_inputs = invented(trace);
    out
}

fn shown(call: &TracedCall) -> String {
    format!("{} {}", call.tool, crate::text::shorten_chars(&call.arguments.to_string(), 200))
}

fn names(calls: &[&TracedCall]) -> String {
    let mut names: Vec<&str> = calls.iter().map(|c| c.tool.as_str()).collect();
    names.dedup();
    names.join(", ")
}

/// The `tools` expectation (None when the case expects no tool).
fn tools(expect: &Expect, calls: &[TracedCall]) -> Option<Check> {
    if expect.tools.is_empty() {
        return None;
    }
    let called: Vec<&str> = calls.iter().map(|c| c.tool.as_str()).collect();
    let missing: Vec<&String> =
        expect.tools.iter().filter(|t| !called.contains(&t.as_str())).collect();
    if !missing.is_empty() {
        let list: Vec<&str> = missing.iter().map(|s| s.as_str()).collect();
        let what = if called.is_empty() {
            "no tool was called".to_owned()
        } else {
            format!("called: {}", called.join(", "))
        };
        return Some(check("tools", false, format!("not called: {} ({what})", list.join(", "))));
    }
    if expect.in_order {
        let mut at = 0;
        for want in &expect.tools {
            match called[at..].iter().position(|c| c == want) {
                Some(i) => at += i + 1,
                None => {
                    return Some(check(
                        "tools",
                        false,
                        format!(
                            "not in order {}: called {}",
                            expect.tools.join(" → "),
                            called.join(" → ")
                        ),
                    ));
                }
            }
        }
    }
    Some(check("tools", true, format!("called {}", expect.tools.join(", "))))
}

fn args(expect: &Expect, trace: &Trace<'_>) -> Check {
    let mut failures = Vec::new();
    for (tool, wanted) in &expect.args {
        let calls: Vec<&TracedCall> = trace.calls.iter().filter(|c| &c.tool == tool).collect();
        for subset in wanted.subsets() {
            if !calls.iter().any(|c| subset_matches(subset, &c.arguments, trace.workdir)) {
                let seen: Vec<String> = calls.iter().map(|c| c.arguments.to_string()).collect();
                let seen = if seen.is_empty() {
                    format!("{tool} was not called")
                } else {
                    format!("calls had {}", seen.join("; "))
                };
                failures.push(format!("{tool} with {}: {seen}", Value::Object(subset.clone())));
            }
        }
    }
    if failures.is_empty() {
        check("args", true, "every argument expectation matched")
    } else {
        check("args", false, crate::text::shorten_chars(&failures.join(" | "), 1000))
    }
}

/// Every key of `want` is in `got` with a matching value.
pub fn subset_matches(want: &Map<String, Value>, got: &Value, workdir: &Path) -> bool {
    let Some(got) = got.as_object() else { return false };
    want.iter().all(|(k, w)| got.get(k).is_some_and(|g| value_matches(w, g, workdir)))
}

/// One expected value against one argument: `{"$regex": …}` and
/// `{"$contains": …}` match text; strings that name the same file (relative
/// to the working folder) or the same URL (but for a trailing `/`) match;
/// objects match as subsets; the rest must be equal.
fn value_matches(want: &Value, got: &Value, workdir: &Path) -> bool {
    match (want, got) {
        (Value::Object(w), _) if w.len() == 1 && w.contains_key("$regex") => {
            let (Some(re), Some(text)) = (w["$regex"].as_str(), text_of(got)) else { return false };
            regex::RegexBuilder::new(re)
                .case_insensitive(true)
                .build()
                .is_ok_and(|r| r.is_match(&text))
        }
        (Value::Object(w), _) if w.len() == 1 && w.contains_key("$contains") => {
            let (Some(part), Some(text)) = (w["$contains"].as_str(), text_of(got)) else {
                return false;
            };
            text.to_lowercase().contains(&part.to_lowercase())
        }
        (Value::Object(w), Value::Object(_)) => subset_matches(w, got, workdir),
        (Value::String(w), Value::String(g)) => same_text(w, g, workdir),
        (Value::Number(w), Value::Number(g)) => w.as_f64() == g.as_f64(),
        // A small model often sends numbers and booleans as text.
        (Value::Number(w), Value::String(g)) => g.trim().parse::<f64>().ok() == w.as_f64(),
        (Value::Bool(w), Value::String(g)) => g.trim().eq_ignore_ascii_case(&w.to_string()),
        _ => want == got,
    }
}

fn text_of(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Null => None,
        other => Some(other.to_string()),
    }
}

fn same_text(want: &str, got: &str, workdir: &Path) -> bool {
    let (w, g) = (want.trim(), got.trim());
    if w == g {
        return true;
    }
    if w.contains("://") || g.contains("://") {
        return w.trim_end_matches('/') == g.trim_end_matches('/');
    }
    resolve(workdir, w) == resolve(workdir, g)
}

/// `path` relative to `workdir`, with `.` and `..` resolved in the text.
pub fn resolve(workdir: &Path, path: &str) -> PathBuf {
    let path = path.strip_prefix("file://").unwrap_or(path);
    let joined =
        if Path::new(path).is_absolute() { PathBuf::from(path) } else { workdir.join(path) };
    let mut out = PathBuf::new();
    for part in joined.components() {
        match part {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

fn answer_check(want: &AnswerExpect, answer: Option<&str>) -> Check {
    let Some(answer) = answer else { return check("answer", false, "there is no answer") };
    let lower = answer.to_lowercase();
    let mut problems = Vec::new();
    if let Some(all) = &want.contains {
        let missing: Vec<&str> =
            all.all().into_iter().filter(|t| !lower.contains(&t.to_lowercase())).collect();
        if !missing.is_empty() {
            problems.push(format!("does not contain {missing:?}"));
        }
    }
    if let Some(any) = &want.any_of
        && !any.iter().any(|t| lower.contains(&t.to_lowercase()))
    {
        problems.push(format!("contains none of {any:?}"));
    }
    if let Some(re) = &want.regex {
        let matched = regex::RegexBuilder::new(re)
            .case_insensitive(true)
            .build()
            .is_ok_and(|r| r.is_match(answer));
        if !matched {
            problems.push(format!("does not match /{re}/"));
        }
    }
    if let Some(none) = &want.not_contains {
        let found: Vec<&str> =
            none.all().into_iter().filter(|t| lower.contains(&t.to_lowercase())).collect();
        if !found.is_empty() {
            problems.push(format!("contains {found:?}, which it must not"));
        }
    }
    if problems.is_empty() {
        check("answer", true, "the answer holds what was expected")
    } else {
        let quoted = crate::text::shorten_chars(answer, 300);
        check("answer", false, format!("the answer {}: {quoted:?}", problems.join("; ")))
    }
}

/// Largest file read for a `files` expectation.
const FILE_CHECK_BYTES: u64 = 4 << 20;

fn read_text(path: &Path) -> Option<String> {
    use std::io::Read;
    let mut bytes = Vec::new();
    std::fs::File::open(path).ok()?.take(FILE_CHECK_BYTES).read_to_end(&mut bytes).ok()?;
    Some(String::from_utf8_lossy(&bytes).into_owned())
}

fn file_check(workdir: &Path, path: &str, want: &FileExpect) -> Check {
    let label = format!("files {path}");
    let target = workdir.join(path.trim_end_matches('/'));
    let folder = path.ends_with('/');
    let candidates: Vec<PathBuf> = if folder {
        let mut files: Vec<PathBuf> = std::fs::read_dir(&target)
            .map(|d| d.filter_map(|e| e.ok().map(|e| e.path())).filter(|p| p.is_file()).collect())
            .unwrap_or_default();
        files.sort();
        files
    } else if target.is_file() {
        vec![target.clone()]
    } else {
        Vec::new()
    };
    if want.absent {
        let passed = candidates.is_empty() && (folder || !target.exists());
        let detail = if passed {
            "absent, as expected".to_owned()
        } else {
            format!("{path} exists but must not")
        };
        return check(&label, passed, detail);
    }
    let wanted: Vec<String> = want
        .contains
        .as_ref()
        .map(|t| t.all().iter().map(|s| s.to_lowercase()).collect())
        .unwrap_or_default();
    if candidates.is_empty() {
        let what = if folder { "holds no file" } else { "does not exist" };
        return check(&label, false, format!("{path} {what}"));
    }
    let mut best: Option<(PathBuf, Vec<String>)> = None;
    for file in candidates {
        let text = read_text(&file).unwrap_or_default().to_lowercase();
        let missing: Vec<String> =
            wanted.iter().filter(|w| !text.contains(w.as_str())).cloned().collect();
        if missing.is_empty() {
            return check(
                &label,
                true,
                format!(
                    "{} holds what was expected",
                    file.strip_prefix(workdir).unwrap_or(&file).display()
                ),
            );
        }
        if best.as_ref().is_none_or(|(_, m)| missing.len() < m.len()) {
            best = Some((file, missing));
        }
    }
    let (file, missing) = best.unwrap_or_default();
    check(
        &label,
        false,
        format!(
            "{} does not contain {missing:?}",
            file.strip_prefix(workdir).unwrap_or(&file).display()
        ),
    )
}

/// Every string inside `v`.
fn strings(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::String(s) => out.push(s.clone()),
        Value::Array(items) => items.iter().for_each(|i| strings(i, out)),
        Value::Object(map) => map.values().for_each(|i| strings(i, out)),
        _ => {}
    }
}

/// Whether some string in `arguments` names `forbidden` or something in it:
/// a URL on the same host and port under the same path, or a file path at
/// or below it (relative paths taken from the working folder).
pub fn names_forbidden(arguments: &Value, forbidden: &str, workdir: &Path) -> bool {
    let mut all = Vec::new();
    strings(arguments, &mut all);
    all.iter().any(|s| {
        let s = s.trim();
        if forbidden.contains("://") {
            return url_within(s, forbidden);
        }
        if s.contains("://") && !s.starts_with("file://") {
            return false;
        }
        resolve(workdir, s).starts_with(resolve(workdir, forbidden))
    })
}

fn url_within(candidate: &str, forbidden: &str) -> bool {
    let (Ok(c), Ok(f)) = (url::Url::parse(candidate), url::Url::parse(forbidden)) else {
        return candidate.starts_with(forbidden);
    };
    let same_host = c.host_str().map(str::to_ascii_lowercase)
        == f.host_str().map(str::to_ascii_lowercase)
        && c.port_or_known_default() == f.port_or_known_default();
    same_host && c.path().starts_with(f.path().trim_end_matches('/'))
}

/// File names and URLs in `answer` that neither the task nor any tool
/// result contains: the answer cites something it never saw.
fn ungrounded(answer: &str, trace: &Trace<'_>) -> Vec<String> {
    let results: Vec<String> = trace.calls.iter().map(|c| c.result.clone()).collect();
    crate::harness::evidence::unsupported(answer, trace.task, &results)
}

/// The task and the results of the first `before` calls, lower-cased.
fn evidence(trace: &Trace<'_>, before: usize) -> String {
    let mut text = trace.task.to_lowercase();
    for call in &trace.calls[..before] {
        text.push('\n');
        text.push_str(&call.result.to_lowercase());
    }
    text
}

/// URLs the model called before the task or any result showed them, and
/// paths that turned out not to exist and that nothing had shown.
fn invented(trace: &Trace<'_>) -> Vec<String> {
    let mut out = Vec::new();
    for (i, call) in trace.calls.iter().enumerate() {
        let Some(args) = call.arguments.as_object() else { continue };
        let seen = evidence(trace, i);
        for (key, value) in args {
            let Some(s) = value.as_str() else { continue };
            let s = s.trim();
            let is_url = s.starts_with("http://") || s.starts_with("https://");
            let missing_path = key == "path" && call.outcome == "NOT_FOUND";
            if !(is_url || missing_path) {
                continue;
            }
            let shown = if is_url {
                url_seen(s, &seen)
            } else {
                seen.contains(&s.rsplit('/').next().unwrap_or(s).to_lowercase())
            };
            if !shown {
                out.push(format!("{} {key}={s}", call.tool));
            }
        }
    }
    out
}

/// A URL counts as shown when its text was, or when its origin and its
/// path were (a page links `/docs/a.html` relative to its own address).
fn url_seen(url: &str, seen: &str) -> bool {
    let lower = url.trim_end_matches('/').to_lowercase();
    if seen.contains(&lower) {
        return true;
    }
    let Ok(parsed) = url::Url::parse(&lower) else { return false };
    let origin = parsed.origin().ascii_serialization();
    let path = &lower[origin.len().min(lower.len())..];
    path.len() > 1 && seen.contains(path) && seen.contains(&origin)
}

#[cfg(test)]
mod tests;
