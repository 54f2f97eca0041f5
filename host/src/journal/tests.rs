//! The journal on real folders: rollback, diff, undo (whole, from a step,
//! over someone else's change, of an undo), the budget, links.

use super::*;

struct Fixture {
    _tmp: tempfile::TempDir,
    grant: PathBuf,
    root: PathBuf,
    dir: Arc<Dir>,
}

fn fixture() -> Fixture {
    let tmp = tempfile::tempdir().expect("dir");
    let grant = tmp.path().join("notes");
    std::fs::create_dir_all(grant.join("sub")).expect("mkdir");
    std::fs::write(grant.join("a.txt"), "alpha\n").expect("write");
    std::fs::write(grant.join("sub/b.txt"), "beta\n").expect("write");
    let root = tmp.path().join(".reach/runs/journal");
    let dir = open_grant(&grant).expect("open");
    Fixture { _tmp: tmp, grant, root, dir }
}

fn read(path: &Path) -> Option<String> {
    std::fs::read_to_string(path).ok()
}

impl Fixture {
    /// Journal `path` as a change is about to happen, as the filesystem hook does.
    fn touch(&self, call: &mut CallJournal, path: &str) {
        call.before_change(&self.grant, &self.dir, Path::new(path), false).expect("journaled");
    }
}

#[test]
fn a_failed_call_leaves_nothing_behind() {
    let f = fixture();
    let run = RunJournal::new(&f.root, "r1", Budget::default());
    let mut call = run.call(1, 1, "files.write");
    f.touch(&mut call, "a.txt");
    std::fs::write(f.grant.join("a.txt"), "overwritten").expect("write");
    f.touch(&mut call, "new.txt");
    std::fs::write(f.grant.join("new.txt"), "created").expect("write");
    f.touch(&mut call, "sub/b.txt");
    std::fs::remove_file(f.grant.join("sub/b.txt")).expect("rm");
    f.touch(&mut call, "made");
    std::fs::create_dir(f.grant.join("made")).expect("mkdir");
    f.touch(&mut call, "made/x");
    std::fs::write(f.grant.join("made/x"), "x").expect("write");
    assert!(call.roll_back().is_empty());
    assert_eq!(read(&f.grant.join("a.txt")).as_deref(), Some("alpha\n"));
    assert_eq!(read(&f.grant.join("sub/b.txt")).as_deref(), Some("beta\n"));
    assert!(!f.grant.join("new.txt").exists());
    assert!(!f.grant.join("made").exists());
    let calls = read_calls(&f.root, "r1").expect("calls");
    assert_eq!(calls[0].end, CallEnd::RolledBack);
    assert!(changes(&f.root, "r1", 0).expect("changes").is_empty(), "rolled back: no change");
}

#[test]
fn a_run_is_diffed_and_undone_and_the_undo_undone() {
    let f = fixture();
    let run = RunJournal::new(&f.root, "r1", Budget::default());
    let mut one = run.call(1, 1, "files.write");
    f.touch(&mut one, "a.txt");
    std::fs::write(f.grant.join("a.txt"), "step one\n").expect("write");
    one.keep();
    let mut two = run.call(2, 2, "files.write");
    f.touch(&mut two, "a.txt");
    std::fs::write(f.grant.join("a.txt"), "step two\n").expect("write");
    f.touch(&mut two, "c.txt");
    std::fs::write(f.grant.join("c.txt"), "new\n").expect("write");
    two.keep();

    let all = changes(&f.root, "r1", 0).expect("changes");
    assert_eq!(all.len(), 2);
    assert!(all.iter().all(|c| !c.changed_since()));
    // From step 2: a.txt goes back to what step one left.
    let undo_run = RunJournal::new(&f.root, "u1", Budget::default());
    let report = undo(&f.root, "r1", 2, false, undo_run.call(1, 0, "undo")).expect("undo");
    assert_eq!(report.restored.len(), 2, "{report:?}");
    assert_eq!(read(&f.grant.join("a.txt")).as_deref(), Some("step one\n"));
    assert!(!f.grant.join("c.txt").exists());
    // The undo is journaled: undoing it brings step two back.
    let report = undo(
        &f.root,
        "u1",
        0,
        false,
        RunJournal::new(&f.root, "u2", Budget::default()).call(1, 0, "undo"),
    )
    .expect("undo of undo");
    assert!(report.conflicts.is_empty(), "{report:?}");
    assert_eq!(read(&f.grant.join("a.txt")).as_deref(), Some("step two\n"));
    assert_eq!(read(&f.grant.join("c.txt")).as_deref(), Some("new\n"));
}

#[test]
fn a_path_changed_since_the_run_is_not_clobbered_unless_forced() {
    let f = fixture();
    let run = RunJournal::new(&f.root, "r1", Budget::default());
    let mut call = run.call(1, 1, "files.write");
    f.touch(&mut call, "a.txt");
    std::fs::write(f.grant.join("a.txt"), "by the run\n").expect("write");
    call.keep();
    std::fs::write(f.grant.join("a.txt"), "by a person\n").expect("write");
    let journal = RunJournal::new(&f.root, "u1", Budget::default());
    let report = undo(&f.root, "r1", 0, false, journal.call(1, 0, "undo")).expect("undo");
    assert_eq!(report.conflicts.len(), 1);
    assert_eq!(read(&f.grant.join("a.txt")).as_deref(), Some("by a person\n"));
    let journal = RunJournal::new(&f.root, "u2", Budget::default());
    let report = undo(&f.root, "r1", 0, true, journal.call(1, 0, "undo")).expect("undo");
    assert_eq!(report.restored.len(), 1);
    assert_eq!(read(&f.grant.join("a.txt")).as_deref(), Some("alpha\n"));
}

#[test]
fn a_change_past_the_budget_is_refused_or_marked_not_undoable() {
    let f = fixture();
    std::fs::write(f.grant.join("big.bin"), vec![7u8; 4096]).expect("write");
    let strict = RunJournal::new(&f.root, "r1", Budget { max_bytes: 1024, mode: UndoMode::Strict });
    let mut call = strict.call(1, 1, "files.write");
    let err = call
        .before_change(&f.grant, &f.dir, Path::new("big.bin"), false)
        .expect_err("over the budget");
    assert!(err.to_string().contains("journal budget of 1024 bytes"), "{err}");
    let lax =
        RunJournal::new(&f.root, "r2", Budget { max_bytes: 1024, mode: UndoMode::BestEffort });
    let mut call = lax.call(1, 1, "files.write");
    call.before_change(&f.grant, &f.dir, Path::new("big.bin"), false).expect("allowed");
    assert!(call.entries()[0].not_undoable);
}

#[cfg(unix)]
#[test]
fn a_link_out_of_the_grant_is_never_followed_by_the_journal() {
    let f = fixture();
    let outside = f.grant.parent().expect("parent").join("secret.txt");
    std::fs::write(&outside, "outside").expect("write");
    std::os::unix::fs::symlink(&outside, f.grant.join("link")).expect("symlink");
    std::os::unix::fs::symlink(f.grant.parent().expect("p"), f.grant.join("up")).expect("symlink");
    let run = RunJournal::new(&f.root, "r1", Budget::default());
    let mut call = run.call(1, 1, "files.write");
    // The link itself is kept, not what it points to.
    call.before_change(&f.grant, &f.dir, Path::new("link"), false).expect("the link");
    assert!(matches!(call.entries()[0].before, State::Symlink { .. }));
    // Through a link that leaves the grant: refused.
    let err = call.before_change(&f.grant, &f.dir, Path::new("up/secret.txt"), false);
    assert!(err.is_err(), "{:?}", call.entries());
    assert!(
        !f.root.join("r1/blobs").exists()
            || std::fs::read_dir(f.root.join("r1/blobs")).expect("d").count() == 0
    );
}

#[test]
fn a_call_dropped_before_it_ended_is_rolled_back() {
    // A client that cancels a call drops its future, and the journal with it.
    let f = fixture();
    let run = RunJournal::new(&f.root, "r1", Budget::default());
    let mut call = run.call(1, 1, "files.write");
    f.touch(&mut call, "a.txt");
    std::fs::write(f.grant.join("a.txt"), "half done").expect("write");
    drop(call);
    assert_eq!(read(&f.grant.join("a.txt")).as_deref(), Some("alpha\n"));
    assert_eq!(read_calls(&f.root, "r1").expect("calls")[0].end, CallEnd::RolledBack);
}

/// The files in a run's in-flight folder.
fn in_flight_files(root: &Path, run: &str) -> Vec<PathBuf> {
    std::fs::read_dir(root.join(run).join("inflight"))
        .map(|d| d.filter_map(|e| e.ok()).map(|e| e.path()).collect())
        .unwrap_or_default()
}

#[test]
fn a_call_a_crash_interrupted_is_rolled_back_at_the_next_start_and_a_live_one_left_alone() {
    let f = fixture();
    let run = RunJournal::new(&f.root, "r1", Budget::default());
    let mut call = run.call(1, 2, "files.write");
    f.touch(&mut call, "a.txt");
    std::fs::write(f.grant.join("a.txt"), "half of the new").expect("write");
    f.touch(&mut call, "new.txt");
    std::fs::write(f.grant.join("new.txt"), "created").expect("write");
    // The process stops here: the call neither ends nor rolls back.
    std::mem::forget(call);
    assert_eq!(in_flight_files(&f.root, "r1").len(), 1);

    // While its process lives (holds the run's lock), a recovery leaves it be.
    assert!(recover(&f.root).expect("recover").is_empty());
    assert_eq!(read(&f.grant.join("a.txt")).as_deref(), Some("half of the new"));

    // The process dies: the system drops its lock.
    drop(run.inner.owner.lock().unwrap().take());
    let done = recover(&f.root).expect("recover");
    assert_eq!(done.len(), 1, "{done:?}");
    assert_eq!((done[0].record.call, done[0].record.step), (1, 2));
    assert_eq!(done[0].record.end, CallEnd::RolledBack);
    assert!(done[0].failed.is_empty(), "{:?}", done[0].failed);
    assert_eq!(read(&f.grant.join("a.txt")).as_deref(), Some("alpha\n"));
    assert!(!f.grant.join("new.txt").exists());
    // On record as rolled back: no change to diff or undo; nothing left to recover.
    let calls = read_calls(&f.root, "r1").expect("calls");
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0].end, CallEnd::RolledBack);
    assert!(in_flight_files(&f.root, "r1").is_empty());
    assert!(recover(&f.root).expect("recover").is_empty());
}

#[test]
fn a_call_that_ends_leaves_nothing_in_flight() {
    let f = fixture();
    let run = RunJournal::new(&f.root, "r1", Budget::default());
    let mut kept = run.call(1, 1, "files.write");
    f.touch(&mut kept, "a.txt");
    std::fs::write(f.grant.join("a.txt"), "new").expect("write");
    kept.keep();
    let mut failed = run.call(2, 2, "files.write");
    f.touch(&mut failed, "b.txt");
    std::fs::write(f.grant.join("b.txt"), "new").expect("write");
    assert!(failed.roll_back().is_empty());
    assert!(in_flight_files(&f.root, "r1").is_empty());
    // Nothing for a later start to undo: the kept change stands.
    drop(run);
    assert!(recover(&f.root).expect("recover").is_empty());
    assert_eq!(read(&f.grant.join("a.txt")).as_deref(), Some("new"));
}
