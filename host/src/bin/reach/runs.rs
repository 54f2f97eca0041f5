//! `reach runs list` and `reach runs show`: the audit logs, read back.

mod tree;

use agent_reach::harness::events::worker_of;
use agent_reach::text::{escape_for_terminal, shorten_chars};
use anyhow::{Context, bail};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// One audit log's events.
fn events(path: &Path) -> anyhow::Result<Vec<Value>> {
    Ok(read_log(path)?.0)
}

/// One audit log's events, and the numbers of lines that are not JSON
/// other than a last, half-written one (a run that crashed mid-write).
fn read_log(path: &Path) -> anyhow::Result<(Vec<Value>, Vec<usize>)> {
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

    /// What the list needs: the first and last files' events (a rotating
    /// log's middle parts hold only calls).
    fn ends(&self) -> anyhow::Result<Vec<Value>> {
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
        let find = |name: &str| {
            events
                .iter()
                .find(|e| e["event"] == name && worker_of(e).is_none())
                .cloned()
                .unwrap_or(Value::Null)
        };
        // A rotated log whose first part was removed repeats its start.
        let start = match find("run_started") {
            Value::Null => find("log_continued")["run_started"].clone(),
            start => start,
        };
        let finish = find("run_finished");
        let parts: Vec<&PathBuf> = log.parts.iter().map(|(_, p)| p).collect();
        rows.push(serde_json::json!({
            "run_id": start["run_id"], "started": start["time"], "task": start["task"], "model": start["model"],
            "stop": finish["stop"]["reason"], "steps": finish["steps"], "tool_calls": finish["tool_calls"],
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
fn workers_started(events: &[Value]) -> usize {
    let mut ids = BTreeSet::new();
    for e in events {
        if let Some(id) = worker_of(e) {
            ids.insert(id);
        }
        if matches!(e["event"].as_str(), Some("delegation_started" | "review_started"))
            && let Some(id) = e["task_id"].as_str()
        {
            ids.insert(id);
        }
    }
    ids.len()
}

/// `reach runs show RUN`: a readable timeline, each worker's records under
/// the call that started it; or the same tree as one JSON object.
pub fn show(dir: &Path, run: &str, json: bool) -> anyhow::Result<ExitCode> {
    let matches: Vec<Log> = logs(dir)?.into_iter().filter(|log| log.id.starts_with(run)).collect();
    let log = match matches.as_slice() {
        [one] => one,
        [] => bail!("no run {run:?} in {} (see `reach runs list`)", dir.display()),
        _ => bail!("{run:?} matches {} runs; give more of the id", matches.len()),
    };
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
                "{time}  {indent}  ↳ worker {}: no delegation_started in the log (cut short or damaged?); its records:",
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
    root: Vec<&'a Value>,
    /// Each worker's and reviewer's, by task id.
    tasks: BTreeMap<&'a str, Vec<&'a Value>>,
}

impl<'a> Scopes<'a> {
    fn of(events: &'a [Value]) -> Scopes<'a> {
        let mut scopes = Scopes { root: Vec::new(), tasks: BTreeMap::new() };
        for e in events {
            match worker_of(e) {
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
fn clock(e: &Value) -> &str {
    e["time"].as_str().unwrap_or("").get(11..19).unwrap_or("")
}

/// One scope's records at `depth`, each delegation followed by the
/// worker's own records one level deeper.
fn print_scope<'a>(
    records: &[&'a Value],
    level: usize,
    scopes: &Scopes<'a>,
    shown: &mut BTreeSet<&'a str>,
) {
    let indent = indent(level);
    // Calls with an outcome; a `tool_call_started` without one is a call the
    // host never finished (it died, or was stopped, mid-call). Call numbers
    // are per scope: a worker counts its own.
    let finished: Vec<&Value> =
        records.iter().filter(|e| e["event"] == "tool_call").map(|e| &e["call"]).collect();
    for e in records {
        if e["event"] == "tool_call_started" && finished.contains(&&e["call"]) {
            continue;
        }
        if let Some(line) = line(e) {
            println!("{}  {indent}{}", clock(e), line.replace('\n', &format!("\n{indent}")));
        }
        if matches!(e["event"].as_str(), Some("delegation_started" | "review_started"))
            && let Some((id, own)) =
                e["task_id"].as_str().and_then(|id| scopes.tasks.get_key_value(id))
            && shown.insert(id)
        {
            print_scope(own, depth(id), scopes, shown);
        }
    }
}

/// Text in the log came from models, pages and skills: shown escaped.
fn safe(v: &Value) -> String {
    escape_for_terminal(v.as_str().unwrap_or(""))
}

/// Text from the log, escaped and cut to `chars`; JSON other than a string as JSON.
fn cut(v: &Value, chars: usize) -> String {
    let text = v.as_str().map_or_else(|| v.to_string(), str::to_owned);
    escape_for_terminal(&shorten_chars(&text, chars))
}

/// `reach mcp` names the client of each call.
fn for_client(e: &Value) -> String {
    e["client"].as_str().map_or(String::new(), |c| format!(" for {}", escape_for_terminal(c)))
}

/// Tokens of a `usage` object.
fn tokens(usage: &Value) -> u64 {
    usage["input_tokens"].as_u64().unwrap_or(0) + usage["output_tokens"].as_u64().unwrap_or(0)
}

/// A record as a timeline line (lines after the first indented by two);
/// `None` for records shown with another (a `decision` with its call).
fn line(e: &Value) -> Option<String> {
    Some(match e["event"].as_str().unwrap_or("") {
        "run_started" if e["kind"] == "mcp" => {
            format!("MCP server {} — {}", e["run_id"].as_str().unwrap_or("?"), safe(&e["task"]))
        }
        // A worker's: the run id is the run's, the task is in the header.
        "run_started" if worker_of(e).is_some() => {
            format!(
                "worker {} ({}) started — model {}",
                safe(&e["worker"]),
                safe(&e["worker_agent"]),
                e["model"]
            )
        }
        "run_started" => format!(
            "run {} — model {}\n  task: {}",
            e["run_id"].as_str().unwrap_or("?"),
            e["model"],
            safe(&e["task"])
        ),
        // Shown with its call (`tool_call` carries the decision).
        "decision" => return None,
        "tool_call_started" => {
            format!(
                "  {} {} … started, no outcome recorded (the host stopped during the call)",
                safe(&e["tool"]),
                brief(&e["arguments"])
            )
        }
        "model_request" => match e.get("error") {
            Some(err) if !err.is_null() => format!(
                "step {}: model failed after {} ms: {}",
                e["step"],
                e["latency_ms"],
                safe(err)
            ),
            _ => format!(
                "step {}: model answered in {} ms ({} in / {} out tokens{}), {} tool call(s){}",
                e["step"],
                e["latency_ms"],
                e["usage"]["input_tokens"],
                e["usage"]["output_tokens"],
                if e["usage"]["estimated"] == true { ", estimated" } else { "" },
                e["tool_calls"],
                if e["text_call"] == true { " written in its text" } else { "" }
            ),
        },
        "tool_call" if e["outcome"] == "refused" => format!(
            "  {} {} [refused] → {}: {}{}",
            safe(&e["tool"]),
            brief(&e["arguments"]),
            e["error_code"].as_str().unwrap_or("?"),
            safe(&e["error"]),
            for_client(e)
        ),
        "tool_call" => format!(
            "  {} {} [{}] → {} in {} ms, {} bytes{}{}",
            safe(&e["tool"]),
            brief(&e["arguments"]),
            // `reach mcp` records an outcome (ok, error, refused).
            e["decision"].as_str().or(e["outcome"].as_str()).unwrap_or("-"),
            e["error_code"].as_str().unwrap_or("ok"),
            e["duration_ms"],
            e["result_bytes"],
            e["version"].as_str().map_or(String::new(), |v| format!(
                " (skill {} {v})",
                e["skill"].as_str().unwrap_or("")
            )),
            for_client(e)
        ),
        "run_finished" => format!(
            "finished: {} after {} step(s), {} tool call(s){}",
            e["stop"]["reason"].as_str().unwrap_or("?"),
            e["steps"],
            e["tool_calls"],
            e["answer"]
                .as_str()
                .map_or(String::new(), |a| format!("\n  answer: {}", escape_for_terminal(a)))
        ),
        "compaction" => format!(
            "step {}: context compacted: ~{} → ~{} tokens (threshold {} of {}), {} message(s) replaced, checkpoint by the {}{}\n  checkpoint: {}",
            e["step"],
            e["tokens_before"],
            e["tokens_after"],
            e["threshold"],
            e["context_tokens"],
            e["replaced_messages"],
            e["checkpoint_by"].as_str().unwrap_or("?"),
            e["error"]
                .as_str()
                .map_or(String::new(), |err| format!(" ({})", escape_for_terminal(err))),
            // Line by line: each escaped, the checkpoint's own line breaks kept.
            e["checkpoint"]
                .as_str()
                .unwrap_or("")
                .lines()
                .map(escape_for_terminal)
                .collect::<Vec<_>>()
                .join("\n  ")
        ),
        "compaction_skipped" => {
            format!("step {}: compaction needed but skipped: {}", e["step"], safe(&e["reason"]))
        }
        "user_message" => format!("step {}: the person said: {}", e["step"], safe(&e["text"])),
        "answer_questioned" => {
            let why = if e["promised_delegation"] == true {
                "it announced a delegation it did not make: told nothing was done".to_owned()
            } else {
                let names: Vec<String> = e["unsupported"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(|v| escape_for_terminal(v.as_str().unwrap_or("")))
                    .collect();
                format!("it names what no tool returned ({}): asked to check", names.join(", "))
            };
            format!("step {}: answer sent back: {why}", e["step"])
        }
        "answer_format" => {
            let errors: Vec<String> = e["errors"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|v| escape_for_terminal(v.as_str().unwrap_or("")))
                .collect();
            format!(
                "step {}: answer not in the return format ({}): asked once to fix it",
                e["step"],
                errors.join("; ")
            )
        }
        "memory_recalled" => {
            format!("  remembered notes given: {} (~{} tokens)", e["entries"], e["tokens"])
        }
        "memory_remembered" => {
            format!("  note #{} kept [{}]", e["entry"], e["decision"].as_str().unwrap_or("-"))
        }
        "delegation_started" => format!(
            "  ↳ worker {} ({}, depth {}): {}",
            safe(&e["task_id"]),
            safe(&e["agent"]),
            e["depth"].as_u64().map_or_else(
                || depth(e["task_id"].as_str().unwrap_or("")).to_string(),
                |d| d.to_string()
            ),
            cut(&e["task"], SHOWN_TASK)
        ),
        "delegation_finished" if e["outcome"] == "ok" => format!(
            "  ↳ {} done: ok in {} ms, {} step(s), {} tokens → {}",
            safe(&e["task_id"]),
            e["duration_ms"],
            e["steps"],
            tokens(&e["usage"]),
            match &e["output"] {
                Value::Object(_) => shorten_chars(&brief(&e["output"]), SHOWN_TASK),
                other => cut(other, SHOWN_TASK),
            }
        ),
        // Refused before a worker was started (unknown profile, a limit).
        "delegation_finished" if e["task_id"].is_null() => {
            format!(
                "  ↳ delegation to {} not run: {}: {}",
                cut(&e["agent"], SHOWN_TASK),
                safe(&e["outcome"]),
                safe(&e["error"])
            )
        }
        "delegation_finished" => format!(
            "  ↳ {} failed: {}: {} (after {} ms, {} step(s), {} tokens)",
            safe(&e["task_id"]),
            safe(&e["outcome"]),
            safe(&e["error"]),
            e["duration_ms"],
            e["steps"],
            tokens(&e["usage"])
        ),
        "review_started" => format!(
            "  ↳ review {} ({}): {}",
            e["round"],
            safe(&e["task_id"]),
            cut(&e["criteria"], SHOWN_TASK)
        ),
        "review_finished" => match e["verdict"].as_str() {
            Some(verdict) => {
                let issues: Vec<String> =
                    e["issues"].as_array().into_iter().flatten().map(safe).collect();
                let issues = if issues.is_empty() {
                    String::new()
                } else {
                    format!(" — {}", issues.join("; "))
                };
                format!("  ↳ review {}: {}{issues}", e["round"], escape_for_terminal(verdict))
            }
            None => format!("  ↳ review {}: no verdict: {}", e["round"], safe(&e["error"])),
        },
        // A rotating log's links between its files.
        "log_rotated" => format!("(the log goes on in {})", safe(&e["next"])),
        "log_continued" => {
            format!("(part {} of the log, continued from {})", e["part"], safe(&e["previous"]))
        }
        other => format!("{}: {e}", escape_for_terminal(other)),
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
