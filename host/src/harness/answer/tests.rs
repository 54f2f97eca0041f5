//! The harness's questions and notes: when each applies, and what it says.

use super::*;

#[test]
fn only_a_short_call_reply_runs_a_described_call() {
    for yes in ["CALL", "call", "CALL.", "`CALL`", "CALL to run it now", "**Call**"] {
        assert!(says(yes, "call"), "{yes}");
    }
    for no in [
        "ANSWER",
        "",
        "I will not call it.",
        "Calling it would overwrite your notes, so I did not.",
        "recall",
    ] {
        assert!(!says(no, "call"), "{no}");
    }
    assert!(says("ANSWER", "answer") && !says("CALL", "answer"));
}

#[test]
fn client_errors_are_results_with_a_4xx_status() {
    assert_eq!(
        client_error(r#"{"status": 404, "body": {"error": "no such customer"}}"#),
        Some(404)
    );
    for other in
        [r#"{"status": 200}"#, r#"{"status": 503}"#, r#"{"status": "404"}"#, "404 Not Found", "[]"]
    {
        assert_eq!(client_error(other), None, "{other}");
    }
}

#[test]
fn the_error_of_a_failure_is_quoted_and_other_results_whole() {
    let failure = ToolFailure::new(
        ErrorCode::NotFound,
        "notes/a.md: no such file or folder. notes/ has: b.md",
    )
    .to_json()
    .to_string();
    assert_eq!(error_text(&failure), "notes/a.md: no such file or folder. notes/ has: b.md");
    assert_eq!(error_text("plain text"), "plain text");
    let note = retry_back("files__read", "NOT_FOUND", &"x".repeat(5_000));
    assert!(note.len() < 1_200, "the error is cut: {} bytes", note.len());
}
