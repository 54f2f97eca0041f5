//! The reminder on long runs: when it comes, and that it stays bounded.

use super::*;
use serde_json::json;

fn action(step: usize, content: &str) -> Action {
    Action {
        step,
        tool: "files__write".into(),
        arguments: json!({"path": format!("n{step}.md"), "content": content}),
        decision: crate::harness::Decision::Auto,
        outcome: crate::harness::Outcome::Ok,
        result_bytes: 10,
        duration_ms: 1,
        network: false,
    }
}

#[test]
fn short_runs_get_no_summary_long_ones_a_bounded_one() {
    let few: Vec<Action> = (1..SUMMARY_AFTER).map(|i| action(i, "x")).collect();
    assert_eq!(reminder("T", &few), None);

    let big = "é".repeat(5_000);
    let many: Vec<Action> = (1..=20).map(|i| action(i, &big)).collect();
    let prompt = reminder("Write twenty notes", &many).expect("a long run gets a reminder");
    assert!(prompt.contains("Your task (stay on it): Write twenty notes"));
    assert!(prompt.contains("(8 earlier call(s) not listed)"), "{prompt}");
    assert!(
        !prompt.contains("step 8:") && prompt.contains("step 9:") && prompt.contains("step 20:")
    );
    assert!(
        prompt.len() < 8_000,
        "bounded, not 20 copies of 5,000 characters: {} bytes",
        prompt.len()
    );
}
