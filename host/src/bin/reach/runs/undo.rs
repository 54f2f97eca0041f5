//! `reach runs diff` and `reach runs undo`: what a run changed in the
//! granted folders, and putting it back.

use agent_reach::harness::audit::record::{FrontEnd, FrontStop, RunFinished, RunStarted, Undone};
use agent_reach::harness::audit::{AuditLog, new_run_id};
use agent_reach::journal::{self, Budget, Fingerprint, PathChange, RunJournal, State};
use agent_reach::text::escape_for_terminal;
use anyhow::{Context, bail};
use serde_json::json;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// The journals' folder of a runs folder (`.reach/runs/journal`).
pub fn journal_root(runs_dir: &Path) -> PathBuf {
    runs_dir.join("journal")
}

/// The one run whose journal `run` (a prefix) names.
fn resolve(root: &Path, run: &str) -> anyhow::Result<String> {
    let mut ids: Vec<String> = match std::fs::read_dir(root) {
        Ok(entries) => entries
            .filter_map(Result::ok)
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|id| id.starts_with(run))
            .collect(),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => Vec::new(),
        Err(err) => return Err(err).with_context(|| format!("reading {}", root.display())),
    };
    ids.sort();
    match ids.as_slice() {
        [one] => Ok(one.clone()),
        [] => bail!(
            "run {run:?} changed no file in a granted folder (no journal in {})",
            root.display()
        ),
        _ => bail!("{run:?} matches {} runs; give more of the id", ids.len()),
    }
}

/// `reach runs diff RUN`.
pub fn diff(runs_dir: &Path, run: &str, from_step: u64, json: bool) -> anyhow::Result<ExitCode> {
    let root = journal_root(runs_dir);
    let id = resolve(&root, run)?;
    let changes = journal::changes(&root, &id, from_step)
        .with_context(|| format!("reading the journal of {id}"))?;
    if json {
        println!("{}", json!({"run_id": id, "from_step": from_step, "changes": changes}));
        return Ok(ExitCode::SUCCESS);
    }
    if changes.is_empty() {
        println!(
            "{id} changed nothing that is still changed (every changing call was rolled back)"
        );
    }
    let blobs = root.join(&id).join("blobs");
    for change in &changes {
        print!("{}", render(change, &blobs));
    }
    Ok(ExitCode::SUCCESS)
}

/// One path's change as a reader wants it: a unified diff for text, sizes
/// for anything else.
fn render(change: &PathChange, blobs: &Path) -> String {
    let path = escape_for_terminal(&change.full_path().display().to_string());
    let mut out = String::new();
    let since = if change.changed_since() { " (changed again since the run)" } else { "" };
    let before_bytes = match &change.before {
        State::File { blob, .. } => std::fs::read(blobs.join(blob)).ok(),
        _ => None,
    };
    let now_bytes = match &change.now {
        Fingerprint::File { .. } => std::fs::read(change.full_path()).ok(),
        _ => None,
    };
    if change.not_undoable {
        out.push_str(&format!(
            "{path}: changed; its prior state was not kept (over the journal budget)\n"
        ));
        return out;
    }
    match (&change.before, &change.now) {
        (State::Missing, Fingerprint::Missing) => {
            out.push_str(&format!("{path}: created and removed again{since}\n"));
        }
        (State::Missing, Fingerprint::Dir) => {
            out.push_str(&format!("{path}: folder created{since}\n"))
        }
        (State::Dir { .. }, Fingerprint::Missing) => {
            out.push_str(&format!("{path}: folder removed{since}\n"))
        }
        (State::Symlink { target }, now) => out.push_str(&format!(
            "{path}: was a link to {}; now {}{since}\n",
            escape_for_terminal(target),
            what(now)
        )),
        (before, Fingerprint::Symlink { target }) => out.push_str(&format!(
            "{path}: was {}; now a link to {}{since}\n",
            what_state(before),
            escape_for_terminal(target)
        )),
        _ => {
            let old = before_bytes.unwrap_or_default();
            let new = now_bytes.unwrap_or_default();
            match (std::str::from_utf8(&old), std::str::from_utf8(&new)) {
                (Ok(a), Ok(b)) if !a.contains('\0') && !b.contains('\0') => {
                    let (from, to) = match (&change.before, &change.now) {
                        (State::Missing, _) => {
                            ("/dev/null".to_owned(), format!("b{}", change.full_path().display()))
                        }
                        (_, Fingerprint::Missing) => {
                            (format!("a{}", change.full_path().display()), "/dev/null".to_owned())
                        }
                        _ => (
                            format!("a{}", change.full_path().display()),
                            format!("b{}", change.full_path().display()),
                        ),
                    };
                    let text = similar::TextDiff::from_lines(a, b);
                    out.push_str(&format!(
                        "{}{}",
                        agent_reach::text::escape_keeping_lines(
                            &text.unified_diff().header(&from, &to).to_string()
                        ),
                        if since.is_empty() { String::new() } else { format!("# {path}{since}\n") }
                    ));
                }
                _ => out.push_str(&format!(
                    "{path}: binary, {} → {}{since}\n",
                    size_of(&change.before.clone(), old.len()),
                    what(&change.now)
                )),
            }
        }
    }
    out
}

fn size_of(state: &State, len: usize) -> String {
    match state {
        State::Missing => "did not exist".into(),
        _ => format!("{len} bytes"),
    }
}

fn what(now: &Fingerprint) -> String {
    match now {
        Fingerprint::Missing => "gone".into(),
        Fingerprint::File { size, .. } => format!("{size} bytes"),
        Fingerprint::Dir => "a folder".into(),
        Fingerprint::Symlink { target } => format!("a link to {}", escape_for_terminal(target)),
    }
}

fn what_state(state: &State) -> String {
    match state {
        State::Missing => "not there".into(),
        State::File { size, .. } => format!("a file of {size} bytes"),
        State::Dir { .. } => "a folder".into(),
        State::Symlink { target } => format!("a link to {}", escape_for_terminal(target)),
    }
}

/// `reach runs undo RUN`: audited, and journaled so it can be undone.
pub fn undo(
    runs_dir: &Path,
    run: &str,
    from_step: u64,
    force: bool,
    json: bool,
) -> anyhow::Result<ExitCode> {
    let root = journal_root(runs_dir);
    let of = resolve(&root, run)?;
    let id = new_run_id();
    let mut audit = AuditLog::create(runs_dir, &id, Vec::new())
        .with_context(|| format!("could not create the audit log in {}", runs_dir.display()))?;
    let mut task = format!("reach runs undo {of}");
    if from_step > 0 {
        task.push_str(&format!(" --from-step {from_step}"));
    }
    if force {
        task.push_str(" --force");
    }
    audit.record_before(RunStarted::of_front(FrontEnd::Undo, task)).map_err(anyhow::Error::msg)?;
    let journal = RunJournal::new(&root, &id, Budget::default());
    let report = journal::undo(&root, &of, from_step, force, journal.call(1, 0, "undo"));
    let report = match report {
        Ok(report) => report,
        Err(err) => {
            audit.record(RunFinished::of_front(FrontStop::Error, 0));
            audit.sync();
            return Err(err).with_context(|| format!("undoing {of}"));
        }
    };
    audit.record(Undone {
        of_run: of.clone(),
        from_step,
        force,
        restored: report.restored.iter().map(|p| p.display().to_string()).collect(),
        conflicts: report.conflicts.iter().map(|c| c.path.display().to_string()).collect(),
        failed: report.failed.iter().map(|(p, why)| format!("{}: {why}", p.display())).collect(),
    });
    let clean = report.conflicts.is_empty() && report.failed.is_empty();
    audit.record(RunFinished::of_front(
        if clean { FrontStop::Ok } else { FrontStop::Error },
        report.restored.len(),
    ));
    audit.sync();
    if json {
        println!(
            "{}",
            json!({"run_id": id, "undid": of, "from_step": from_step, "restored": report.restored, "conflicts": report.conflicts, "failed": report.failed})
        );
    } else {
        for path in &report.restored {
            println!("restored  {}", escape_for_terminal(&path.display().to_string()));
        }
        for conflict in &report.conflicts {
            println!(
                "SKIPPED   {}: changed since the run (the run left {}, it is now {}); `--force` puts it back anyway",
                escape_for_terminal(&conflict.path.display().to_string()),
                conflict.left.as_ref().map_or_else(|| "?".to_owned(), what),
                what(&conflict.now)
            );
            if let Some(diff) = forced(conflict, &root.join(&of).join("blobs")) {
                for line in diff.lines() {
                    println!("          {line}");
                }
            }
        }
        for (path, why) in &report.failed {
            println!(
                "FAILED    {}: {}",
                escape_for_terminal(&path.display().to_string()),
                escape_for_terminal(why)
            );
        }
        println!("undo recorded as run {id} (`reach runs undo {id}` undoes it)");
    }
    Ok(if clean { ExitCode::SUCCESS } else { ExitCode::from(1) })
}

/// What `--force` would do to a text file changed since the run: a diff
/// from it now to its state before the run (`None` for anything else).
fn forced(conflict: &journal::Conflict, blobs: &Path) -> Option<String> {
    let now = match &conflict.now {
        Fingerprint::File { .. } => std::fs::read(&conflict.path).ok()?,
        Fingerprint::Missing => Vec::new(),
        _ => return None,
    };
    let before = match &conflict.before {
        State::File { blob, .. } => std::fs::read(blobs.join(blob)).ok()?,
        State::Missing => Vec::new(),
        _ => return None,
    };
    let (now, before) = (std::str::from_utf8(&now).ok()?, std::str::from_utf8(&before).ok()?);
    if now.contains('\0') || before.contains('\0') {
        return None;
    }
    let diff = similar::TextDiff::from_lines(now, before);
    let text = diff.unified_diff().context_radius(2).header("now", "after --force").to_string();
    Some(agent_reach::text::escape_keeping_lines(&text))
}

/// `reach runs prune`.
pub fn prune(
    runs_dir: &Path,
    older_than_days: Option<u64>,
    max_mb: Option<u64>,
    dry_run: bool,
    json: bool,
) -> anyhow::Result<ExitCode> {
    if older_than_days.is_none() && max_mb.is_none() {
        bail!("say what to remove: --older-than DAYS, --max-mb N, or both");
    }
    let root = journal_root(runs_dir);
    let age = older_than_days.map(|d| std::time::Duration::from_secs(d * 86_400));
    let report = journal::prune(&root, age, max_mb.map(|m| m << 20), dry_run)
        .with_context(|| format!("pruning {}", root.display()))?;
    let tapes = runs_dir.join(agent_reach::tape::TAPE_DIR);
    let recordings = journal::prune(&tapes, age, max_mb.map(|m| m << 20), dry_run)
        .with_context(|| format!("pruning {}", tapes.display()))?;
    if json {
        println!(
            "{}",
            json!({"removed": report.removed, "kept": report.kept, "kept_bytes": report.kept_bytes, "dry_run": dry_run,
                   "recordings": {"removed": recordings.removed, "kept": recordings.kept, "kept_bytes": recordings.kept_bytes}})
        );
    } else {
        let verb = if dry_run { "would remove" } else { "removed" };
        for (what, report) in [("journals", &report), ("recordings", &recordings)] {
            for (run, bytes) in &report.removed {
                println!("{verb}  {what}/{}  ({bytes} bytes)", escape_for_terminal(run));
            }
            println!(
                "{} {what} {verb}; {} kept ({} bytes)",
                report.removed.len(),
                report.kept,
                report.kept_bytes
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}
