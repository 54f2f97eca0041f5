//! Records against the logs earlier code wrote (`host/tests/fixtures/audit`):
//! every line decodes to its type and encodes back to the same JSON.

use super::*;
use crate::error::ErrorCode;
use crate::harness::Stop;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// Every line of every fixture log, with where it is.
fn fixture_lines() -> Vec<(String, Value)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/audit");
    let mut files: Vec<PathBuf> = ["runs", "rotated", "rotated-cut", "chained"]
        .iter()
        .flat_map(|dir| std::fs::read_dir(root.join(dir)).expect("fixture folder"))
        .map(|entry| entry.unwrap().path())
        .collect();
    files.sort();
    let mut lines = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        for (i, line) in text.lines().enumerate() {
            let at = format!("{}:{}", file.display(), i + 1);
            lines.push((at, serde_json::from_str(line).unwrap()));
        }
    }
    lines
}

#[test]
fn every_line_earlier_code_wrote_decodes_to_its_type_and_back() {
    let lines = fixture_lines();
    assert!(lines.len() > 300, "{} lines", lines.len());
    let mut seen = BTreeSet::new();
    for (at, line) in lines {
        let record = Record::from_value(line.clone()).expect("a record");
        assert!(record.fits(), "{at}: not typed whole: {record:?}\n{line}");
        // The chain's `seq` and `prev` belong to the line's place, not the record.
        let mut unchained = line.clone();
        if let Some(map) = unchained.as_object_mut() {
            map.remove("seq");
            map.remove("prev");
        }
        let line = unchained;
        assert_eq!(record.to_value(), line, "{at}");
        // Through serde too, as a reader decodes a line.
        let decoded: Record = serde_json::from_str(&line.to_string()).unwrap();
        assert_eq!(decoded, record, "{at}");
        assert_eq!(serde_json::to_value(&decoded).unwrap(), line, "{at}");
        if let Body::LogContinued(LogContinued { run_started: Some(first), .. }) = &record.body {
            assert!(first.fits(), "{at}: the copied first record");
        }
        seen.insert(record.body.event().to_owned());
    }
    // The logs hold every kind of record but two no test run writes to a file.
    let all: BTreeSet<String> = Body::EVENTS.iter().map(|e| (*e).to_owned()).collect();
    let missing: Vec<&String> = all.difference(&seen).collect();
    assert_eq!(missing, ["compaction_skipped", "memory_error"]);
}

#[test]
fn the_records_no_fixture_holds_read_back_too() {
    for (event, fields) in [
        (
            "compaction_skipped",
            serde_json::json!({
                "step": 4, "tokens": 5000, "threshold": 4800,
                "reason": "nothing older than the last exchange to replace"
            }),
        ),
        ("memory_error", serde_json::json!({"step": 0, "error": "database is locked"})),
    ] {
        let body = Body::from_json(event, fields.clone());
        assert_eq!(body.event(), event);
        assert!(!matches!(body, Body::Other { .. }), "{body:?}");
        assert_eq!(Value::Object(body.fields()), fields);
    }
}

#[test]
fn a_record_this_version_does_not_know_is_kept_whole() {
    let line = serde_json::json!({
        "event": "skill_signed", "time": "t", "run_id": "r", "skill": "files", "by": {"key": "k1"}
    });
    let record = Record::from_value(line.clone()).unwrap();
    assert!(matches!(&record.body, Body::Other { event, .. } if event == "skill_signed"));
    assert_eq!(record.to_value(), line);
    // A known event with a field it does not know: kept whole too.
    let line = serde_json::json!({
        "event": "user_message", "time": "t", "run_id": "r", "step": 2, "text": "hi", "lang": "en"
    });
    let record = Record::from_value(line.clone()).unwrap();
    assert!(!record.fits() && matches!(record.body, Body::Other { .. }));
    assert_eq!(record.to_value(), line);
}

#[test]
fn a_record_missing_fields_reads_with_defaults_and_writes_as_it_was() {
    // As a hand-made or older log has them: no `messages`, `text_call`, ….
    let line = serde_json::json!({
        "event": "model_request", "time": "t", "run_id": "r", "step": 1, "model": "m",
        "latency_ms": 40, "usage": {"input_tokens": 100, "output_tokens": 10, "estimated": false},
        "tool_calls": 1
    });
    let record = Record::from_value(line.clone()).unwrap();
    let Body::ModelRequest(request) = &record.body else { panic!("{record:?}") };
    assert_eq!((request.step, request.tool_calls, request.text_call), (1, Some(1), None));
    assert_eq!(record.to_value(), line);
    // `reason` is always written (`null` when there is none): a line
    // without it reads as none, and is written back without it.
    let line = serde_json::json!({
        "event": "decision", "time": "t", "run_id": "r", "step": 2, "call": 3,
        "tool": "files__write", "decision": "declined"
    });
    let record = Record::from_value(line.clone()).unwrap();
    assert!(matches!(
        &record.body,
        Body::Decision(d) if d.decision == Decision::Declined && d.reason.is_none()
    ));
    assert!(!record.fits());
    assert_eq!(record.to_value(), line);
}

#[test]
fn typed_values_are_written_as_the_strings_they_replace() {
    for (value, text) in [
        (serde_json::to_value(Decision::NotReached).unwrap(), "-"),
        (serde_json::to_value(Decision::Confirmed).unwrap(), "confirmed"),
        (serde_json::to_value(Outcome::Ok).unwrap(), "ok"),
        (
            serde_json::to_value(Outcome::Failed(ErrorCode::InvalidOutput)).unwrap(),
            "INVALID_OUTPUT",
        ),
        (serde_json::to_value(Verdict::Revise).unwrap(), "revise"),
        (serde_json::to_value(CallOutcome::Refused).unwrap(), "refused"),
        (serde_json::to_value(CheckpointBy::Harness).unwrap(), "harness"),
    ] {
        assert_eq!(value, text);
    }
    for decision in ["auto", "confirmed", "declined", "denied", "-"] {
        assert_eq!(Decision::named(decision).as_str(), decision);
    }
    assert_eq!(
        serde_json::to_value(Ended::Front(FrontStop::Error)).unwrap(),
        serde_json::json!({"reason": "error"})
    );
    assert_eq!(Ended::Run(Stop::ModelError("x".into())).reason(), "model_error");
}
