//! `reach runs list` and `reach runs show`: the audit logs, read back.

use agent_reach::text::escape_for_terminal;
use anyhow::{Context, bail};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// One audit log's events.
fn events(path: &Path) -> anyhow::Result<Vec<Value>> {
    Ok(read_log(path)?.0)
}

/// One audit log's events, and the numbers of lines that are not JSON
/// other than a last, half-written one (a run that crashed mid-write).
fn read_log(path: &Path) -> anyhow::Result<(Vec<Value>, Vec<usize>)> {
    let text = std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
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

fn logs(dir: &Path) -> anyhow::Result<Vec<PathBuf>> {
    let mut paths: Vec<PathBuf> = match std::fs::read_dir(dir) {
        Ok(entries) => entries.filter_map(Result::ok).map(|e| e.path()).filter(|p| p.extension().is_some_and(|e| e == "jsonl")).collect(),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => Vec::new(),
        Err(err) => return Err(err).with_context(|| format!("reading {}", dir.display())),
    };
    // Run ids start with the time, so names sort by age.
    paths.sort();
    paths.reverse();
    Ok(paths)
}

/// `reach runs list`.
pub fn list(dir: &Path, json: bool) -> anyhow::Result<ExitCode> {
    let mut rows = Vec::new();
    for path in logs(dir)? {
        let events = events(&path)?;
        let find = |name: &str| events.iter().find(|e| e["event"] == name).cloned().unwrap_or(Value::Null);
        let (start, finish) = (find("run_started"), find("run_finished"));
        rows.push(serde_json::json!({
            "run_id": start["run_id"], "started": start["time"], "task": start["task"], "model": start["model"],
            "stop": finish["stop"]["reason"], "steps": finish["steps"], "tool_calls": finish["tool_calls"],
            "log": path,
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

/// `reach runs show RUN`: a readable timeline.
pub fn show(dir: &Path, run: &str) -> anyhow::Result<ExitCode> {
    let matches: Vec<PathBuf> = logs(dir)?
        .into_iter()
        .filter(|p| p.file_stem().and_then(|s| s.to_str()).is_some_and(|s| s.starts_with(run)))
        .collect();
    let path = match matches.as_slice() {
        [one] => one,
        [] => bail!("no run {run:?} in {} (see `reach runs list`)", dir.display()),
        _ => bail!("{run:?} matches {} runs; give more of the id", matches.len()),
    };
    let (events, bad) = read_log(path)?;
    if !bad.is_empty() {
        // Records are written whole; a broken one in the middle means the
        // log was changed or damaged after the fact.
        println!("warning: {} line(s) of {} are not JSON: {:?} (changed or damaged?)", bad.len(), path.display(), bad);
    }
    // Calls with an outcome; a `tool_call_started` without one is a call the
    // host never finished (it died, or was stopped, mid-call).
    let finished: Vec<&Value> = events.iter().filter(|e| e["event"] == "tool_call").map(|e| &e["call"]).collect();
    // Text in the log came from models, pages and skills: shown escaped.
    let safe = |v: &Value| escape_for_terminal(v.as_str().unwrap_or(""));
    // `reach mcp` names the client of each call.
    let for_client = |e: &Value| e["client"].as_str().map_or(String::new(), |c| format!(" for {}", escape_for_terminal(c)));
    for e in &events {
        let time = e["time"].as_str().unwrap_or("").get(11..19).unwrap_or("");
        let line = match e["event"].as_str().unwrap_or("") {
            "run_started" if e["kind"] == "mcp" => format!("MCP server {} — {}", e["run_id"].as_str().unwrap_or("?"), safe(&e["task"])),
            "run_started" => format!("run {} — model {}\n  task: {}", e["run_id"].as_str().unwrap_or("?"), e["model"], safe(&e["task"])),
            // Shown with its call (`tool_call` carries the decision).
            "decision" => continue,
            "tool_call_started" if finished.contains(&&e["call"]) => continue,
            "tool_call_started" => format!(
                "  {} {} … started, no outcome recorded (the host stopped during the call)",
                safe(&e["tool"]),
                brief(&e["arguments"])
            ),
            "model_request" => match e.get("error") {
                Some(err) => format!("step {}: model failed after {} ms: {}", e["step"], e["latency_ms"], safe(err)),
                None => format!(
                    "step {}: model answered in {} ms ({} in / {} out tokens{}), {} tool call(s){}",
                    e["step"], e["latency_ms"], e["usage"]["input_tokens"], e["usage"]["output_tokens"],
                    if e["usage"]["estimated"] == true { ", estimated" } else { "" }, e["tool_calls"],
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
                e["version"].as_str().map_or(String::new(), |v| format!(" (skill {} {v})", e["skill"].as_str().unwrap_or(""))),
                for_client(e)
            ),
            "run_finished" => format!(
                "finished: {} after {} step(s), {} tool call(s){}",
                e["stop"]["reason"].as_str().unwrap_or("?"),
                e["steps"],
                e["tool_calls"],
                e["answer"].as_str().map_or(String::new(), |a| format!("\n  answer: {}", escape_for_terminal(a)))
            ),
            "compaction" => format!(
                "step {}: context compacted: ~{} → ~{} tokens (threshold {} of {}), {} message(s) replaced, checkpoint by the {}{}\n  checkpoint: {}",
                e["step"], e["tokens_before"], e["tokens_after"], e["threshold"], e["context_tokens"], e["replaced_messages"],
                e["checkpoint_by"].as_str().unwrap_or("?"),
                e["error"].as_str().map_or(String::new(), |err| format!(" ({})", escape_for_terminal(err))),
                // Line by line: each escaped, the checkpoint's own line breaks kept.
                e["checkpoint"].as_str().unwrap_or("").lines().map(escape_for_terminal).collect::<Vec<_>>().join("\n  ")
            ),
            "compaction_skipped" => format!("step {}: compaction needed but skipped: {}", e["step"], safe(&e["reason"])),
            "user_message" => format!("step {}: the person said: {}", e["step"], safe(&e["text"])),
            "memory_recalled" => format!("  remembered notes given: {} (~{} tokens)", e["entries"], e["tokens"]),
            "memory_remembered" => format!("  note #{} kept [{}]", e["entry"], e["decision"].as_str().unwrap_or("-")),
            other => format!("{other}: {e}"),
        };
        println!("{time}  {line}");
    }
    Ok(ExitCode::SUCCESS)
}

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
