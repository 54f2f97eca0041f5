//! Tampering with real log files, each kind caught with the record named.

use super::super::{AuditKey, AuditLog, Body};
use super::*;
use serde_json::Value;
use serde_json::json;

/// A finished run's log in `dir`: `run_started`, `n` calls, `run_finished`
/// and the signed head.
fn finished_log(dir: &Path, run_id: &str, n: usize) -> PathBuf {
    let mut log = AuditLog::create(dir, run_id, Vec::new()).expect("log");
    log.record(Body::from_json("run_started", json!({"task": "t"})));
    for step in 1..=n {
        log.record(Body::from_json("tool_call", json!({"step": step, "tool": "files__read"})));
    }
    log.record(Body::from_json("run_finished", json!({"steps": n})));
    log.sync();
    log.path().to_owned()
}

fn key(dir: &Path) -> PublicKey {
    AuditKey::load_or_create(dir).expect("key").public()
}

fn lines(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path).expect("read").split_inclusive('\n').map(str::to_owned).collect()
}

fn write(path: &Path, lines: &[String]) {
    std::fs::write(path, lines.concat()).expect("write");
}

fn verdict(dir: &Path, run: &str) -> VerifyReport {
    verify_log(dir, run, &key(dir)).expect("verify")
}

/// The problem's kind and record.
fn problem(report: &VerifyReport) -> (&'static str, Option<u64>) {
    let p = report.problem.as_ref().expect("a problem");
    (p.kind, p.record)
}

#[test]
fn a_finished_log_verifies_and_ends_with_a_signed_head() {
    let dir = tempfile::tempdir().expect("dir");
    let path = finished_log(dir.path(), "r1", 3);
    let report = verdict(dir.path(), "r1");
    assert_eq!(report.verdict, Verdict::Intact, "{report:?}");
    assert_eq!(report.records, 6, "5 records and the head");
    assert_eq!(report.key, Some(key(dir.path()).to_hex()));
    let last: Value = serde_json::from_str(lines(&path).last().expect("a line")).expect("json");
    assert_eq!(last["event"], "log_sealed");
    assert_eq!(last["records"], 5);
}

#[test]
fn a_changed_byte_names_the_record_it_changed() {
    let dir = tempfile::tempdir().expect("dir");
    let path = finished_log(dir.path(), "r1", 3);
    let mut all = lines(&path);
    all[2] = all[2].replace("files__read", "files__reaD");
    write(&path, &all);
    let report = verdict(dir.path(), "r1");
    assert_eq!(report.verdict, Verdict::Tampered);
    assert_eq!(problem(&report), ("changed", Some(3)), "{report:?}");
    assert_eq!(report.problem.as_ref().map(|p| p.line), Some(3));
    assert_eq!(report.records, 2, "linked up to the record before");
}

#[test]
fn a_change_to_the_last_record_is_caught_by_the_head() {
    let dir = tempfile::tempdir().expect("dir");
    let path = finished_log(dir.path(), "r1", 1);
    let mut all = lines(&path);
    let n = all.len();
    all[n - 2] = all[n - 2].replace("\"steps\":1", "\"steps\":7");
    write(&path, &all);
    assert_eq!(problem(&verdict(dir.path(), "r1")), ("changed", Some(3)));
}

#[test]
fn a_dropped_line_is_named_as_removed() {
    let dir = tempfile::tempdir().expect("dir");
    let path = finished_log(dir.path(), "r1", 3);
    let mut all = lines(&path);
    all.remove(3);
    write(&path, &all);
    assert_eq!(problem(&verdict(dir.path(), "r1")), ("removed", Some(4)));
    // The first line too: the second no longer links to the run's genesis.
    let path = finished_log(dir.path(), "r2", 1);
    let mut all = lines(&path);
    all.remove(0);
    write(&path, &all);
    assert_eq!(problem(&verdict(dir.path(), "r2")), ("removed", Some(1)));
}

#[test]
fn an_inserted_line_is_named_whether_forged_in_place_or_copied() {
    let dir = tempfile::tempdir().expect("dir");
    let path = finished_log(dir.path(), "r1", 3);
    let original = lines(&path);
    // A line by hand, with no place in the chain.
    let mut all = original.clone();
    all.insert(2, "{\"event\":\"tool_call\",\"run_id\":\"r1\",\"step\":9}\n".into());
    write(&path, &all);
    let report = verdict(dir.path(), "r1");
    assert_eq!(problem(&report), ("inserted", Some(3)), "{report:?}");
    // A forger who links the new line to the one before: the next record
    // no longer links to what comes before it.
    let mut forged: Value = serde_json::from_str(&original[2]).expect("json");
    forged["step"] = json!(9);
    let mut all = original.clone();
    all.insert(2, format!("{forged}\n"));
    write(&path, &all);
    let report = verdict(dir.path(), "r1");
    assert_eq!(problem(&report), ("inserted", Some(3)), "{report:?}");
    assert_eq!(report.problem.as_ref().map(|p| p.line), Some(3), "the inserted line");
    // A copy of an earlier line.
    let mut all = original.clone();
    all.insert(4, original[1].clone());
    write(&path, &all);
    assert_eq!(problem(&verdict(dir.path(), "r1")).0, "inserted");
}

#[test]
fn a_truncated_log_is_unsealed_and_says_how_far_it_is_linked() {
    let dir = tempfile::tempdir().expect("dir");
    let path = finished_log(dir.path(), "r1", 3);
    let mut all = lines(&path);
    all.truncate(4);
    write(&path, &all);
    let report = verdict(dir.path(), "r1");
    assert_eq!(report.verdict, Verdict::Unsealed);
    assert_eq!(problem(&report), ("missing_head", Some(4)));
    assert!(report.problem.expect("problem").message.contains("records 1 to 4 are linked"));
    // Cut in the middle of a line.
    let mut all = lines(&path);
    let half = all[3].len() / 2;
    all[3].truncate(half);
    write(&path, &all);
    let report = verdict(dir.path(), "r1");
    assert_eq!((report.verdict, problem(&report)), (Verdict::Unsealed, ("cut", Some(4))));
}

#[test]
fn heads_swapped_between_two_runs_are_caught_in_both() {
    let dir = tempfile::tempdir().expect("dir");
    let (a, b) = (finished_log(dir.path(), "ra", 2), finished_log(dir.path(), "rb", 2));
    let (mut la, mut lb) = (lines(&a), lines(&b));
    let (na, nb) = (la.len() - 1, lb.len() - 1);
    std::mem::swap(&mut la[na], &mut lb[nb]);
    write(&a, &la);
    write(&b, &lb);
    for (run, other) in [("ra", "rb"), ("rb", "ra")] {
        let report = verdict(dir.path(), run);
        assert_eq!(problem(&report).0, "foreign", "{report:?}");
        assert!(report.problem.expect("p").message.contains(&format!("run {other}")));
    }
    // Rewritten to claim the right run: the signature no longer verifies.
    let mut la = lines(&a);
    la[na] = la[na].replace("\"rb\"", "\"ra\"");
    write(&a, &la);
    assert_eq!(problem(&verdict(dir.path(), "ra")).0, "bad_signature");
}

#[test]
fn a_head_signed_by_another_key_is_refused_with_both_keys_named() {
    let dir = tempfile::tempdir().expect("dir");
    finished_log(dir.path(), "r1", 1);
    let other = AuditKey::load_or_create(tempfile::tempdir().expect("d").path()).expect("k");
    let report = verify_log(dir.path(), "r1", &other.public()).expect("verify");
    assert_eq!(problem(&report).0, "wrong_key");
    let message = report.problem.expect("p").message;
    assert!(message.contains(&key(dir.path()).to_hex()) && message.contains(&other.public_hex()));
}

#[test]
fn a_worker_writing_the_same_file_stays_in_the_chain() {
    let dir = tempfile::tempdir().expect("dir");
    let mut log = AuditLog::create(dir.path(), "r1", Vec::new()).expect("log");
    let mut worker = log.child("t1", "researcher").expect("child");
    log.record(Body::from_json("run_started", json!({})));
    worker.record(Body::from_json("run_started", json!({})));
    log.record(Body::from_json("delegation_started", json!({})));
    worker.record(Body::from_json("run_finished", json!({})));
    worker.sync();
    log.sync();
    let report = verdict(dir.path(), "r1");
    assert_eq!(report.verdict, Verdict::Intact, "{report:?}");
    assert_eq!(report.records, 5, "one head, the run's");
}

#[test]
fn a_rotating_log_verifies_across_parts_and_a_missing_part_is_named() {
    let dir = tempfile::tempdir().expect("dir");
    let mut log = AuditLog::create(dir.path(), "srv", Vec::new()).expect("log").rotate_at(600, 3);
    log.record(Body::from_json("run_started", json!({"front": "mcp"})));
    for step in 0..30 {
        log.record(Body::from_json("tool_call", json!({"step": step, "pad": "x".repeat(80)})));
    }
    log.sync();
    let report = verdict(dir.path(), "srv");
    assert_eq!(report.verdict, Verdict::Intact, "{report:?}");
    assert_eq!(report.files.len(), 3, "three parts kept");
    assert!(report.notes[0].contains("rotated away"), "{:?}", report.notes);
    // A middle part taken away.
    let middle = report.files[1].clone();
    std::fs::remove_file(&middle).expect("rm");
    let report = verdict(dir.path(), "srv");
    assert_eq!(problem(&report).0, "missing_part", "{report:?}");
}

#[test]
fn a_log_of_an_earlier_version_is_unchained_not_tampered() {
    let dir = tempfile::tempdir().expect("dir");
    std::fs::write(
        dir.path().join("old.jsonl"),
        "{\"event\":\"run_started\",\"run_id\":\"old\"}\n",
    )
    .expect("write");
    let reports = verify_runs(dir.path(), &key(dir.path())).expect("verify");
    assert_eq!(reports.len(), 1);
    assert_eq!(reports[0].verdict, Verdict::Unchained);
}

#[test]
fn the_logs_this_version_wrote_verify_against_their_public_key() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/audit");
    let key = std::fs::read_to_string(root.join("chained.pub")).expect("key");
    let key = PublicKey::from_hex(&key).expect("hex");
    let reports = verify_runs(&root.join("chained"), &key).expect("verify");
    assert_eq!(reports.len(), 3);
    for report in reports {
        assert_eq!(report.verdict, Verdict::Intact, "{report:?}");
    }
}
