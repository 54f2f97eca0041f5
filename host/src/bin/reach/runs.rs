//! `reach runs list` and `reach runs show`: the audit logs, read back.

pub mod replay;
mod tree;
pub mod undo;
pub mod verify;

use agent_reach::harness::audit::record::{
    AnswerQuestioned, Body, CallEnded, CallOutcome, DelegationFinished, FrontEnd, Outcome, Record,
};
use agent_reach::text::{escape_for_terminal, shorten_chars};
use anyhow::{Context, bail};
use serde::Serialize;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// One audit log's records.
fn events(path: &Path) -> anyhow::Result<Vec<Record>> {
    Ok(read_log(path)?.0)
}

/// One audit log's records, and the numbers of lines that are not records
/// other than a last, half-written one (a run that crashed mid-write).
fn read_log(path: &Path) -> anyhow::Result<(Vec<Record>, Vec<usize>)> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    let lines: Vec<&str> = text.lines().collect();
    let mut events = Vec::with_capacity(lines.len());
    let mut bad = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        match serde_json::from_str(line) {
            Ok(event) => events.push(event),
            Err(_) if i + 1 == lines.len() && !text.ends_with('\n') => {}
            Err(_) => bad.push(i + 1),
        }
    }
    Ok((events, bad))
}

/// One run's audit log: its files, oldest first. A log that rotated
/// (`reach mcp`'s) has several: `ID.jsonl`, `ID.part2.jsonl`, … (the oldest
/// may have been removed).
struct Log {
    id: String,
    /// (part number, file), in order.
    parts: Vec<(u32, PathBuf)>,
}

/// The logs in `dir`, newest first.
fn logs(dir: &Path) -> anyhow::Result<Vec<Log>> {
    let paths: Vec<PathBuf> = match std::fs::read_dir(dir) {
        Ok(entries) => entries
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
            .collect(),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => Vec::new(),
        Err(err) => return Err(err).with_context(|| format!("reading {}", dir.display())),
    };
    let mut by_id: BTreeMap<String, Vec<(u32, PathBuf)>> = BTreeMap::new();
    for path in paths {
        let stem = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
        let (id, part) = match stem.rsplit_once(".part").map(|(id, n)| (id, n.parse::<u32>())) {
            Some((id, Ok(n))) if n >= 2 && !id.is_empty() => (id.to_owned(), n),
            _ => (stem, 1),
        };
        by_id.entry(id).or_default().push((part, path));
    }
    // Run ids start with the time, so names sort by age.
    let mut logs: Vec<Log> = by_id
        .into_iter()
        .map(|(id, mut parts)| {
            parts.sort();
            Log { id, parts }
        })
        .collect();
    logs.reverse();
    Ok(logs)
}

impl Log {
    fn first(&self) -> &Path {
        &self.parts[0].1
    }

    /// What the list needs: the first and last files' records (a rotating
    /// log's middle parts hold only calls).
    fn ends(&self) -> anyhow::Result<Vec<Record>> {
        let mut all = events(self.first())?;
        if let [_, .., (_, last)] = self.parts.as_slice() {
            all.extend(events(last)?);
        }
        Ok(all)
    }

    /// The first part kept, when earlier ones were removed.
    fn cut_at(&self) -> Option<u32> {
        Some(self.parts[0].0).filter(|&part| part > 1)
    }
}

/// `reach runs list`.
pub fn list(dir: &Path, json: bool) -> anyhow::Result<ExitCode> {
    let mut rows = Vec::new();
    for log in logs(dir)? {
        let events = log.ends()?;
        // The run's own records: a worker's `run_finished` is not the run's.
        let own = || events.iter().filter(|e| e.worker.is_none());
        // A rotated log whose first part was removed repeats its start.
        let start = own().find(|e| e.body.event() == "run_started").or_else(|| {
            own().find_map(|e| match &e.body {
                Body::LogContinued(part) => part.run_started.as_deref(),
                _ => None,
            })
        });
        let started = start.and_then(|e| match &e.body {
            Body::RunStarted(run) => Some(run),
            _ => None,
        });
        let finish = own().find_map(|e| match &e.body {
            Body::RunFinished(end) => Some(end),
            _ => None,
        });
        let parts: Vec<&PathBuf> = log.parts.iter().map(|(_, p)| p).collect();
        rows.push(serde_json::json!({
            "run_id": start.map(|e| &e.run_id), "started": start.map(|e| &e.time),
            "task": started.map(|r| &r.task), "model": started.map(|r| &r.model),
            "stop": finish.map(|f| f.stop.reason()), "steps": finish.map(|f| f.steps),
            "tool_calls": finish.map(|f| f.tool_calls),
            "workers": workers_started(&events), "log": log.first(), "parts": parts,
        }));
    }
    if json {
        println!("{}", serde_json::json!({"runs_dir": dir, "runs": rows}));
        return Ok(ExitCode::SUCCESS);
    }
    if rows.is_empty() {
        println!("no runs in {}", dir.display());
        return Ok(ExitCode::SUCCESS);
    }
    println!("{:<28} {:<12} {:>5}  TASK", "RUN", "STOP", "STEPS");
    for r in rows {
        let task: String = r["task"].as_str().unwrap_or("").chars().take(60).collect();
        println!(
            "{:<28} {:<12} {:>5}  {task}",
            r["run_id"].as_str().unwrap_or("?"),
            r["stop"].as_str().unwrap_or("(unfinished)"),
            r["steps"].as_u64().map_or("-".to_owned(), |n| n.to_string())
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// Workers and reviewers that started: task ids with a start record or
/// records of their own (a delegation refused up front started none).
fn workers_started(events: &[Record]) -> usize {
    let mut ids = BTreeSet::new();
    for e in events {
        if let Some(id) = e.worker_task() {
            ids.insert(id);
        }
        if let Some(id) = started_task(e) {
            ids.insert(id);
        }
    }
    ids.len()
}

/// The task a `delegation_started` or `review_started` starts.
fn started_task(e: &Record) -> Option<&str> {
    match &e.body {
        Body::DelegationStarted(d) => Some(&d.task_id),
        Body::ReviewStarted(r) => Some(&r.task_id),
        _ => None,
    }
}

/// The one log in `dir` whose run id starts with `run`.
fn find(dir: &Path, run: &str) -> anyhow::Result<Log> {
    let mut matches: Vec<Log> =
        logs(dir)?.into_iter().filter(|log| log.id.starts_with(run)).collect();
    match matches.len() {
        1 => Ok(matches.remove(0)),
        0 => bail!("no run {run:?} in {} (see `reach runs list`)", dir.display()),
        n => bail!("{run:?} matches {n} runs; give more of the id"),
    }
}

/// The id of the one run in `dir` whose id starts with `run`.
pub fn resolve(dir: &Path, run: &str) -> anyhow::Result<String> {
    Ok(find(dir, run)?.id)
}

/// `reach runs show RUN`: a readable timeline, each worker's records under
/// the call that started it; or the same tree as one JSON object.
pub fn show(dir: &Path, run: &str, json: bool) -> anyhow::Result<ExitCode> {
    let log = &find(dir, run)?;
    let mut events = Vec::new();
    let mut notes = Vec::new();
    if let Some(part) = log.cut_at() {
        notes.push(format!(
            "the log rotated: its parts before part {part} were removed; shown from {}",
            log.first().display()
        ));
    }
    for (_, path) in &log.parts {
        let (part, bad) = read_log(path)?;
        events.extend(part);
        if !bad.is_empty() {
            // Records are written whole; a broken one in the middle means the
            // log was changed or damaged after the fact.
            notes.push(format!(
                "warning: {} line(s) of {} are not JSON: {:?} (changed or damaged?)",
                bad.len(),
                path.display(),
                bad
            ));
        }
    }
    for note in notes {
        if json {
            eprintln!("{note}");
        } else {
            println!("{note}");
        }
    }
    let path = log.first();
    let scopes = Scopes::of(&events);
    if json {
        println!("{}", tree::json(path, &events, &scopes));
        return Ok(ExitCode::SUCCESS);
    }
    let mut shown = BTreeSet::new();
    print_scope(&scopes.root, 0, &scopes, &mut shown);
    // Workers whose `delegation_started` is not in the log (cut short or
    // damaged): their records still count.
    for (&id, records) in &scopes.tasks {
        if shown.insert(id) {
            let time = records.first().map_or("", |e| clock(e));
            let indent = indent(depth(id) - 1);
            println!(
                "{time}  {indent}  ↳ worker {}: no delegation_started in the log (cut short or \
                 damaged?); its records:",
                escape_for_terminal(id)
            );
            print_scope(records, depth(id), &scopes, &mut shown);
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// A log's records by the scope that wrote them.
struct Scopes<'a> {
    /// The run's own.
    root: Vec<&'a Record>,
    /// Each worker's and reviewer's, by task id.
    tasks: BTreeMap<&'a str, Vec<&'a Record>>,
}

impl<'a> Scopes<'a> {
    fn of(events: &'a [Record]) -> Scopes<'a> {
        let mut scopes = Scopes { root: Vec::new(), tasks: BTreeMap::new() };
        for e in events {
            match e.worker_task() {
                None => scopes.root.push(e),
                Some(id) => scopes.tasks.entry(id).or_default().push(e),
            }
        }
        scopes
    }
}

/// How deep task `id` is: 1 for the run's workers (`t1`), 2 for theirs (`t1.1`).
fn depth(id: &str) -> usize {
    id.split('.').count()
}

/// The task that started task `id` (`t1` for `t1.2`); `None` when the run
/// itself did (`t1`, `review1`).
fn parent_task(id: &str) -> Option<&str> {
    id.rsplit_once('.').map(|(parent, _)| parent)
}

fn indent(depth: usize) -> String {
    " ".repeat(4 * depth)
}

/// `HH:MM:SS` of a record.
fn clock(e: &Record) -> &str {
    e.time.get(11..19).unwrap_or("")
}

/// One scope's records at `depth`, each delegation followed by the
/// worker's own records one level deeper.
fn print_scope<'a>(
    records: &[&'a Record],
    level: usize,
    scopes: &Scopes<'a>,
    shown: &mut BTreeSet<&'a str>,
) {
    let indent = indent(level);
    // Calls with an outcome; a `tool_call_started` without one is a call the
    // host never finished (it died, or was stopped, mid-call). Call numbers
    // are per scope: a worker counts its own.
    let finished: Vec<Option<usize>> = records
        .iter()
        .filter_map(|e| match &e.body {
            Body::ToolCall(c) => Some(c.head.call),
            _ => None,
        })
        .collect();
    for e in records {
        if let Body::ToolCallStarted(c) = &e.body
            && finished.contains(&c.call)
        {
            continue;
        }
        if let Some(line) = line(e) {
            println!("{}  {indent}{}", clock(e), line.replace('\n', &format!("\n{indent}")));
        }
        if let Some((id, own)) = started_task(e).and_then(|id| scopes.tasks.get_key_value(id))
            && shown.insert(id)
        {
            print_scope(own, depth(id), scopes, shown);
        }
    }
}

/// Text in the log came from models, pages and skills: shown escaped.
fn safe(text: &str) -> String {
    escape_for_terminal(text)
}

/// Text that may be missing, shown escaped (missing: empty).
fn safe_or_empty(text: &Option<String>) -> String {
    safe(text.as_deref().unwrap_or(""))
}

/// Text from the log, escaped and cut to `chars`.
fn cut(text: &str, chars: usize) -> String {
    escape_for_terminal(&shorten_chars(text, chars))
}

/// A value from the log as cut shows it: text as text, other JSON as JSON.
fn cut_json(v: &Value, chars: usize) -> String {
    cut(&v.as_str().map_or_else(|| v.to_string(), str::to_owned), chars)
}

/// A value as JSON (`null` when missing): how the timeline has always
/// shown numbers, and the model's name.
fn js(value: impl Serialize) -> String {
    serde_json::to_string(&value).unwrap_or_default()
}

/// `reach mcp` names the client of each call.
fn for_client(c: &CallEnded) -> String {
    c.head
        .client
        .clone()
        .flatten()
        .map_or(String::new(), |c| format!(" for {}", escape_for_terminal(&c)))
}

/// Tokens of a `usage`.
fn tokens(usage: &agent_reach::model::Usage) -> u64 {
    usage.input_tokens + usage.output_tokens
}

/// A record as a timeline line (lines after the first indented by two);
/// `None` for records shown with another (a `decision` with its call).
fn line(e: &Record) -> Option<String> {
    let run_id = if e.run_id.is_empty() { "?" } else { e.run_id.as_str() };
    Some(match &e.body {
        Body::RunStarted(r) if r.kind == Some(FrontEnd::Mcp) => {
            format!("MCP server {run_id} — {}", safe(&r.task))
        }
        // A worker's: the run id is the run's, the task is in the header.
        Body::RunStarted(r) if let Some(worker) = &e.worker => {
            format!(
                "worker {} ({}) started — model {}",
                safe(&worker.task),
                safe(&worker.agent),
                js(&r.model)
            )
        }
        Body::RunStarted(r) => {
            format!("run {run_id} — model {}\n  task: {}", js(&r.model), safe(&r.task))
        }
        // Shown with its call (`tool_call` carries the decision).
        Body::Decision(_) => return None,
        Body::ToolCallStarted(c) => {
            format!(
                "  {} {} … started, no outcome recorded (the host stopped during the call)",
                safe(&c.tool),
                brief(&c.arguments)
            )
        }
        Body::ModelRequest(m) => match &m.error {
            Some(err) => {
                format!("step {}: model failed after {} ms: {}", m.step, m.latency_ms, safe(err))
            }
            None => format!(
                "step {}: model answered in {} ms ({} in / {} out tokens{}), {} tool call(s){}",
                m.step,
                m.latency_ms,
                js(m.usage.map(|u| u.input_tokens)),
                js(m.usage.map(|u| u.output_tokens)),
                if m.usage.is_some_and(|u| u.estimated) { ", estimated" } else { "" },
                js(m.tool_calls),
                if m.text_call == Some(true) { " written in its text" } else { "" }
            ),
        },
        Body::ToolCall(c) if c.outcome == CallOutcome::Refused => format!(
            "  {} {} [refused] → {}: {}{}",
            safe(&c.head.tool),
            brief(&c.head.arguments),
            c.error_code.map_or("?", |code| code.as_str()),
            safe_or_empty(&c.error),
            for_client(c)
        ),
        Body::ToolCall(c) => format!(
            "  {} {} [{}] → {} in {} ms, {} bytes{}{}",
            safe(&c.head.tool),
            brief(&c.head.arguments),
            // `reach mcp` and `reach call` record an outcome (ok, error).
            c.decision.map_or(c.outcome.as_str(), |d| d.as_str()),
            c.error_code.map_or("ok", |code| code.as_str()),
            js(c.duration_ms),
            js(c.result_bytes),
            c.head.version.clone().flatten().map_or(String::new(), |v| format!(
                " (skill {} {v})",
                c.head.skill.clone().flatten().unwrap_or_default()
            )),
            for_client(c)
        ),
        Body::RunFinished(r) => format!(
            "finished: {} after {} step(s), {} tool call(s){}",
            r.stop.reason(),
            r.steps,
            r.tool_calls,
            r.answer
                .clone()
                .flatten()
                .map_or(String::new(), |a| format!("\n  answer: {}", escape_for_terminal(&a)))
        ),
        Body::Compaction(c) => format!(
            "step {}: context compacted: ~{} → ~{} tokens (threshold {} of {}), {} message(s) \
             replaced, checkpoint by the {}{}\n  checkpoint: {}",
            c.step,
            c.tokens_before,
            c.tokens_after,
            c.threshold,
            c.context_tokens,
            c.replaced_messages,
            c.checkpoint_by.as_str(),
            c.error
                .as_ref()
                .map_or(String::new(), |err| format!(" ({})", escape_for_terminal(err))),
            // Line by line: each escaped, the checkpoint's own line breaks kept.
            c.checkpoint.lines().map(escape_for_terminal).collect::<Vec<_>>().join("\n  ")
        ),
        Body::CompactionSkipped(c) => {
            format!("step {}: compaction needed but skipped: {}", c.step, safe(&c.reason))
        }
        Body::UserMessage(m) => format!("step {}: the person said: {}", m.step, safe(&m.text)),
        Body::AnswerQuestioned(AnswerQuestioned {
            step, unsupported, promised_delegation, ..
        }) => {
            let why = if *promised_delegation == Some(true) {
                "it announced a delegation it did not make: told nothing was done".to_owned()
            } else {
                let names: Vec<String> = unsupported.iter().flatten().map(|v| safe(v)).collect();
                format!("it names what no tool returned ({}): asked to check", names.join(", "))
            };
            format!("step {step}: answer sent back: {why}")
        }
        Body::AnswerFormat(a) => {
            let errors: Vec<String> = a.errors.iter().map(|v| safe(v)).collect();
            format!(
                "step {}: answer not in the return format ({}): asked once to fix it",
                a.step,
                errors.join("; ")
            )
        }
        Body::MemoryRecalled(m) => {
            format!("  remembered notes given: {} (~{} tokens)", js(&m.entries), m.tokens)
        }
        Body::MemoryRemembered(m) => format!("  note #{} kept [{}]", js(m.entry), m.decision),
        Body::DelegationStarted(d) => format!(
            "  ↳ worker {} ({}, depth {}): {}",
            safe(&d.task_id),
            safe(&d.agent),
            d.depth.unwrap_or_else(|| depth(&d.task_id)),
            cut(&d.task, SHOWN_TASK)
        ),
        Body::DelegationFinished(d @ DelegationFinished { outcome: Outcome::Ok, .. }) => format!(
            "  ↳ {} done: ok in {} ms, {} step(s), {} tokens → {}",
            safe_or_empty(&d.task_id),
            d.duration_ms,
            d.steps,
            tokens(&d.usage),
            match &d.output {
                Value::Object(_) => shorten_chars(&brief(&d.output), SHOWN_TASK),
                other => cut_json(other, SHOWN_TASK),
            }
        ),
        // Refused before a worker was started (unknown profile, a limit).
        Body::DelegationFinished(d) if d.task_id.is_none() => {
            format!(
                "  ↳ delegation to {} not run: {}: {}",
                cut_json(&d.agent, SHOWN_TASK),
                safe(d.outcome.as_str()),
                safe_or_empty(&d.error)
            )
        }
        Body::DelegationFinished(d) => format!(
            "  ↳ {} failed: {}: {} (after {} ms, {} step(s), {} tokens)",
            safe_or_empty(&d.task_id),
            safe(d.outcome.as_str()),
            safe_or_empty(&d.error),
            d.duration_ms,
            d.steps,
            tokens(&d.usage)
        ),
        Body::ReviewStarted(r) => format!(
            "  ↳ review {} ({}): {}",
            r.round,
            safe(&r.task_id),
            cut(&r.criteria, SHOWN_TASK)
        ),
        Body::ReviewFinished(r) => match r.verdict {
            Some(verdict) => {
                let issues: Vec<String> = r.issues.iter().map(|i| safe(i)).collect();
                let issues = if issues.is_empty() {
                    String::new()
                } else {
                    format!(" — {}", issues.join("; "))
                };
                format!("  ↳ review {}: {}{issues}", r.round, verdict)
            }
            None => format!("  ↳ review {}: no verdict: {}", r.round, safe_or_empty(&r.error)),
        },
        // A rotating log's links between its files.
        Body::LogRotated(r) => format!("(the log goes on in {})", safe_or_empty(&r.next)),
        Body::LogContinued(c) => {
            format!("(part {} of the log, continued from {})", c.part, safe_or_empty(&c.previous))
        }
        Body::LogSealed(s) => {
            format!("(signed head over {} records: `reach runs verify` checks it)", s.records)
        }
        other => format!("{}: {}", escape_for_terminal(other.event()), e.to_value()),
    })
}

/// Longest task or output shown on a worker's line, in characters.
const SHOWN_TASK: usize = 100;

/// Arguments as `key=value, …`, values shortened: a timeline, not a dump.
fn brief(arguments: &Value) -> String {
    let Some(map) = arguments.as_object() else { return String::new() };
    map.iter()
        .map(|(k, v)| {
            let text = v.as_str().map_or_else(|| v.to_string(), str::to_owned);
            let short: String = text.chars().take(60).collect();
            let cut = if short.len() < text.len() { "…" } else { "" };
            format!("{}={}{cut}", escape_for_terminal(k), escape_for_terminal(&short))
        })
        .collect::<Vec<_>>()
        .join(", ")
}
