//! `reach memory …`: the long-term memory store, read and pruned by a person.
//!
//! JSON output (`--json`), one object on stdout; fields are only ever added:
//! - `list`: `{"db", "entries": [entry…]}`
//! - `search`: `{"db", "query", "task_type", "entries": [entry…]}`
//! - `show`: `{"db", "entry": entry, "versions": [entry…]}` (oldest first, the entry included)
//! - `forget`: `{"db", "forgotten": [id…]}`
//! - `export FILE`: `{"db", "file", "exported": n}` (without FILE, the JSON Lines go to stdout)
//! - `import`: `{"db", "file", "added": n, "existing": n}`
//!
//! Imported entries are marked as imported from the file (as given, or
//! `standard input` for `-`): what the file says about where a note came from
//! is kept as its claim (`show` prints it), never taken as the user's word.
//!
//! An entry is [`Entry`]'s JSON form, the same as a line of an export.
//! Exit codes: 0 done, 1 no such entry, 2 usage or database error, 3 a
//! person declined to forget.

use crate::args::{Cli, MemoryArgs, MemoryCommand};
use crate::context;
use agent_reach::memory::{
    Entry, EntryId, MAX_FILE_CHARS, MemoryError, MemoryStore, PostgresStore, SqliteStore,
    parse_export, to_export,
};
use agent_reach::policy::{MEMORY_PASSWORD_ENV, check_url};
use agent_reach::text::{escape_for_terminal, shorten_chars};
use anyhow::Context as _;
use serde_json::json;
use std::io::{BufRead as _, IsTerminal as _, Read as _, Write as _};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Run one `reach memory` command.
pub fn run(cli: &Cli, args: &MemoryArgs) -> anyhow::Result<ExitCode> {
    let (path, url) = match &args.db {
        Some(given) => match given.to_str().filter(|s| s.contains("://")) {
            Some(url) => {
                check_url(url).map_err(|e| anyhow::anyhow!("--db: {e}"))?;
                (PathBuf::new(), Some(url.to_owned()))
            }
            None => (given.clone(), None),
        },
        None => {
            let settings = context::load_policy(cli)?.memory().clone();
            (settings.path, settings.url)
        }
    };
    let (store, db): (Box<dyn MemoryStore>, String) = match &url {
        Some(url) => {
            let password = std::env::var(MEMORY_PASSWORD_ENV).ok();
            let store = PostgresStore::connect(url, password.as_deref())?;
            let db = store.url().to_owned();
            (Box::new(store), db)
        }
        // Reading a store that is not there is reading an empty one: looking
        // must not create `.reach/memory.db` in whatever folder reach was run.
        None if path.exists() || matches!(args.command, MemoryCommand::Import { .. }) => {
            (Box::new(SqliteStore::open(&path)?), path.display().to_string())
        }
        None => (Box::new(SqliteStore::in_memory()?), path.display().to_string()),
    };
    let json = args.json;
    match &args.command {
        MemoryCommand::List { all } => {
            let entries = store.list(*all)?;
            if json {
                println!("{}", json!({"db": db, "entries": entries}));
            } else if entries.is_empty() {
                println!("no {}entries in {db}", if *all { "" } else { "active " });
            } else {
                print_table(&entries, *all);
            }
        }
        MemoryCommand::Search { query, task_type, limit } => {
            let entries = store.search(query, task_type.as_deref(), *limit)?;
            if json {
                println!(
                    "{}",
                    json!({"db": db, "query": query, "task_type": task_type, "entries": entries})
                );
            } else if entries.is_empty() {
                println!("nothing in {db} matches {}", escape_for_terminal(query));
            } else {
                print_table(&entries, false);
            }
        }
        MemoryCommand::Show { id } => {
            let Some(history) = store.get(*id)? else {
                return Ok(not_found(*id, &db));
            };
            if json {
                println!(
                    "{}",
                    json!({"db": db, "entry": history.entry, "versions": history.versions})
                );
            } else {
                print_entry(&history.entry, &history.versions);
            }
        }
        MemoryCommand::Forget { id, yes } => {
            let Some(history) = store.get(*id)? else {
                return Ok(not_found(*id, &db));
            };
            if !yes {
                let older = history
                    .versions
                    .iter()
                    .filter(|v| (v.created.as_str(), v.id) < (history.entry.created.as_str(), *id))
                    .count();
                if !std::io::stdin().is_terminal() || !std::io::stderr().is_terminal() {
                    anyhow::bail!(
                        "not forgetting entry {id} without confirmation: there is no terminal to \
                         ask on; pass --yes"
                    );
                }
                if !ask_forget(&history.entry, older)? {
                    eprintln!("nothing forgotten");
                    return Ok(ExitCode::from(3));
                }
            }
            let forgotten = store.forget(*id)?;
            if json {
                println!("{}", json!({"db": db, "forgotten": forgotten}));
            } else {
                let ids: Vec<String> = forgotten.iter().map(EntryId::to_string).collect();
                println!(
                    "forgot {} entr{} ({}) in {db}",
                    ids.len(),
                    if ids.len() == 1 { "y" } else { "ies" },
                    ids.join(", ")
                );
            }
        }
        MemoryCommand::Export { file } => {
            let entries = store.export()?;
            let text = to_export(&entries);
            match file {
                None => std::io::stdout().lock().write_all(text.as_bytes())?,
                Some(file) => {
                    write_private(file, &text)?;
                    if json {
                        println!("{}", json!({"db": db, "file": file, "exported": entries.len()}));
                    } else {
                        println!(
                            "exported {} entries from {db} to {}",
                            entries.len(),
                            file.display()
                        );
                    }
                }
            }
        }
        MemoryCommand::Import { file } => {
            let text = read_input(file)?;
            let name = file.display();
            let entries =
                parse_export(&text).with_context(|| format!("{name}: nothing imported"))?;
            // Shown in prompts as where the notes came from: one line, and
            // no character that could move a terminal's cursor.
            let from = if file == Path::new("-") {
                "standard input".to_owned()
            } else {
                shorten_chars(&escape_for_terminal(&file.display().to_string()), MAX_FILE_CHARS - 1)
            };
            let report = store.import(&entries, &from).map_err(|e| match e {
                // Positions are lines only when the file has no blank lines;
                // `parse_export` has already checked every line, so this is rare.
                MemoryError::Import { line, message } => {
                    anyhow::anyhow!("{name}: entry {line}: {message}; nothing imported")
                }
                other => anyhow::Error::new(other).context(format!("{name}: nothing imported")),
            })?;
            if json {
                println!(
                    "{}",
                    json!({
                        "db": db,
                        "file": file,
                        "added": report.added,
                        "existing": report.existing,
                    })
                );
            } else {
                println!(
                    "imported {} entries into {db} ({} already there)",
                    report.added, report.existing
                );
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn not_found(id: EntryId, db: &str) -> ExitCode {
    eprintln!("error: no memory entry {id} in {db} (see `reach memory list --all`)");
    ExitCode::from(1)
}

/// One line per entry; notes came from models and pages, so they are
/// shown escaped.
fn print_table(entries: &[Entry], with_state: bool) {
    let state_header = if with_state { format!("{:<16} ", "STATE") } else { String::new() };
    println!("{:>6}  {:<10}  {state_header}{:<24}  TEXT", "ID", "KIND", "SUBJECT");
    for e in entries {
        let state = match (with_state, e.superseded_by) {
            (false, _) => String::new(),
            (true, None) => format!("{:<16} ", "active"),
            (true, Some(by)) => format!("{:<16} ", format!("superseded by {by}")),
        };
        let subject = escape_for_terminal(&shorten_chars(&e.subject, 24));
        let text = escape_for_terminal(&shorten_chars(&e.text, 60));
        println!("{:>6}  {:<10}  {state}{subject:<24}  {text}", e.id, e.kind.name());
    }
}

fn print_entry(entry: &Entry, versions: &[Entry]) {
    let state =
        entry.superseded_by.map_or_else(|| "active".to_owned(), |by| format!("superseded by {by}"));
    println!("entry {} ({}, {state})", entry.id, entry.kind);
    println!("subject:   {}", escape_for_terminal(&entry.subject));
    println!("text:      {}", escape_for_terminal(&entry.text));
    if let Some(t) = &entry.task_type {
        println!("task type: {}", escape_for_terminal(t));
    }
    println!("source:    {}", escape_for_terminal(&entry.provenance.describe()));
    if let Some(claim) = entry.provenance.claim() {
        println!("claimed:   {} (by the file, not checked)", escape_for_terminal(&claim));
    }
    println!("created:   {}", entry.created);
    println!(
        "used:      {} time(s){}",
        entry.use_count,
        entry.last_used.as_deref().map_or(String::new(), |t| format!(", last {t}"))
    );
    if versions.len() > 1 {
        println!("versions (oldest first):");
        for v in versions {
            let marker = if v.id == entry.id { "  ← this entry" } else { "" };
            let state = if v.is_active() { "active" } else { "superseded" };
            println!(
                "  {:>6}  {}  {state:<10}  {}{marker}",
                v.id,
                v.created,
                escape_for_terminal(&shorten_chars(&v.text, 60))
            );
        }
    }
}

fn ask_forget(entry: &Entry, older: usize) -> std::io::Result<bool> {
    let mut err = std::io::stderr().lock();
    let also = match older {
        0 => String::new(),
        1 => " and the older version it superseded".to_owned(),
        n => format!(" and the {n} older versions it superseded"),
    };
    writeln!(
        err,
        "\x1b[0mForget entry {} ({} {:?}){also}? It is deleted for good.",
        entry.id,
        entry.kind,
        escape_for_terminal(&entry.subject)
    )?;
    write!(err, "Forget? [y/N] ")?;
    err.flush()?;
    let mut answer = String::new();
    std::io::stdin().lock().read_line(&mut answer)?;
    Ok(matches!(answer.trim().to_ascii_lowercase().as_str(), "y" | "yes"))
}

fn read_input(file: &Path) -> anyhow::Result<String> {
    if file == Path::new("-") {
        let mut text = String::new();
        std::io::stdin().read_to_string(&mut text).context("reading stdin")?;
        return Ok(text);
    }
    std::fs::read_to_string(file).with_context(|| format!("reading {}", file.display()))
}

/// Write `text` to `file` whole or not at all, readable by its owner only:
/// notes can be private.
fn write_private(file: &Path, text: &str) -> anyhow::Result<()> {
    let dir = match file.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_owned(),
        _ => PathBuf::from("."),
    };
    let mut tmp = tempfile::NamedTempFile::new_in(&dir)
        .with_context(|| format!("writing to {}", dir.display()))?;
    tmp.write_all(text.as_bytes())?;
    tmp.persist(file).with_context(|| format!("writing {}", file.display()))?;
    Ok(())
}
