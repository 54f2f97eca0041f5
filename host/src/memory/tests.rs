//! Entries, kinds and provenance: validation, rendering and the rules
//! every store shares.

use super::*;

fn entry(subject: &str, text: &str) -> NewEntry {
    NewEntry {
        kind: Kind::Fact,
        subject: subject.into(),
        text: text.into(),
        task_type: None,
        provenance: Provenance::User { run_id: None, step: None },
    }
}

#[test]
fn subjects_compare_without_case_or_whitespace_runs() {
    assert_eq!(subject_key("  Staging   API\tURL "), "staging api url");
    assert_eq!(subject_key("Café"), subject_key("CAFÉ"));
    assert_ne!(subject_key("staging api"), subject_key("staging-api"));
}

#[test]
fn limits_name_the_field_and_the_limit() {
    let err = checked(entry("s", &"x".repeat(MAX_TEXT_CHARS + 1))).unwrap_err();
    assert_eq!(
        err.to_string(),
        "memory: the text is 2001 characters; the limit is 2000 — shorten it or split it into \
         several entries"
    );
    let err = checked(entry(&"é".repeat(201), "t")).unwrap_err();
    assert_eq!(
        err.to_string(),
        "memory: the subject is 201 characters; the limit is 200 — shorten it"
    );
    checked(entry(&"é".repeat(200), &"x".repeat(MAX_TEXT_CHARS))).expect("at the limits");
    let err = checked(entry("  ", "t")).unwrap_err();
    assert_eq!(err.to_string(), "memory: the subject is empty; write a few words");
    let err = checked(entry("s", "a\u{1b}[2Jb")).unwrap_err();
    assert!(err.to_string().contains("control character '\\u{1b}'"), "{err}");
    checked(entry("s", "line one\n\tline two")).expect("newlines and tabs in text");
    assert!(checked(entry("a\nb", "t")).is_err(), "no newline in a subject");
}

#[test]
fn task_types_are_trimmed_and_lower_case() {
    let mut e = entry("s", "t");
    e.task_type = Some(" Save-Page ".into());
    assert_eq!(checked(e.clone()).unwrap().task_type.as_deref(), Some("save-page"));
    e.task_type = Some("   ".into());
    assert_eq!(checked(e).unwrap().task_type, None);
}

#[test]
fn provenance_json_is_tagged_by_source() {
    let tool =
        Provenance::Tool { run_id: "r1".into(), step: 3, tool: Some("http_api__get".into()) };
    assert_eq!(
        serde_json::to_string(&tool).unwrap(),
        r#"{"source":"tool","run_id":"r1","step":3,"tool":"http_api__get"}"#
    );
    let user = Provenance::User { run_id: None, step: None };
    assert_eq!(serde_json::to_string(&user).unwrap(), r#"{"source":"user"}"#);
    assert_eq!(tool.describe(), "verified by http_api__get's result in run r1, step 3");
    assert_eq!(user.describe(), "stated by the user");
    assert!(serde_json::from_str::<Provenance>(r#"{"source":"web"}"#).is_err());
    let imported = user.imported_from("old\nfile.jsonl");
    assert_eq!(
        serde_json::to_string(&imported).unwrap(),
        r#"{"source":"imported","file":"old\nfile.jsonl","claimed":{"source":"user"}}"#
    );
    assert_eq!(imported.describe(), r#"imported from "old\nfile.jsonl""#);
    assert_eq!(imported.claim().as_deref(), Some("stated by the user"));
}
