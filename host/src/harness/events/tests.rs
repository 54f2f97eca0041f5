//! Events read from records, shown, and sent through the channel.

use super::*;
use serde_json::json;

fn started(call: usize) -> Value {
    json!({
        "event": "tool_call_started", "time": "t", "run_id": "r", "step": 1, "call": call,
        "tool": "files__list", "skill": "files", "version": "1.0.0", "wasm_hash": "h",
        "arguments": {"path": "."}
    })
}

fn record(line: Value) -> Record {
    Record::from_value(line).expect("a record")
}

#[tokio::test]
async fn a_slow_consumer_is_told_how_many_events_it_missed() {
    let (tx, mut rx) = channel(2);
    for call in 1..=5 {
        tx.record(&record(started(call)));
    }
    // 1 and 2 fit; 3, 4, 5 were dropped.
    let calls: Vec<Event> = vec![rx.recv().await.unwrap(), rx.recv().await.unwrap()];
    assert!(
        matches!(calls[0], Event::ToolCallStarted { call: 1, .. })
            && matches!(calls[1], Event::ToolCallStarted { call: 2, .. })
    );
    tx.record(&record(started(6)));
    assert_eq!(rx.recv().await, Some(Event::Lagged { missed: 3 }), "said before the next event");
    assert!(matches!(rx.recv().await, Some(Event::ToolCallStarted { call: 6, .. })));
    // Full again at the end of the run: the count comes after the last event.
    for call in 7..=10 {
        tx.record(&record(started(call)));
    }
    drop(tx);
    assert!(matches!(rx.recv().await, Some(Event::ToolCallStarted { call: 7, .. })));
    assert!(matches!(rx.recv().await, Some(Event::ToolCallStarted { call: 8, .. })));
    assert_eq!(rx.recv().await, Some(Event::Lagged { missed: 2 }));
    assert_eq!(rx.recv().await, None);
}

#[test]
fn records_that_are_not_events_are_skipped() {
    assert_eq!(Event::from_record(&json!({"event": "skills_chosen", "chosen": []})), None);
    assert_eq!(Event::from_record(&json!({"no": "event"})), None);
    let event = Event::from_record(&started(1)).expect("an event");
    assert_eq!(event.to_string(), r#"step 1: files__list {"path":"."}"#);
}

#[test]
fn display_escapes_what_the_model_wrote() {
    let record = json!({
        "event": "decision", "step": 2, "call": 3, "tool": "files__write\u{1b}[2J",
        "decision": "declined", "reason": "the person said no"
    });
    let shown = Event::from_record(&record).expect("an event").to_string();
    assert!(!shown.contains('\u{1b}'), "{shown}");
    assert!(
        shown.starts_with("step 2: files__write")
            && shown.ends_with("declined: the person said no"),
        "{shown}"
    );
}

fn finished(extra: Value) -> Value {
    let mut record = json!({
        "event": "run_finished", "time": "t", "run_id": "r", "stop": {"reason": "answered"},
        "answer": "42", "steps": 2,
        "usage": {"input_tokens": 10, "output_tokens": 5, "estimated": false}, "tool_calls": 1
    });
    record.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
    record
}

#[test]
fn a_workers_run_finished_is_not_the_runs() {
    let event = Event::from_record(&finished(json!({"worker": "t1", "worker_agent": "web"})))
        .expect("an event");
    let Event::Worker { task, agent, event } = &event else {
        panic!("not a worker's event: {event:?}")
    };
    assert_eq!((task.as_str(), agent.as_str()), ("t1", "web"));
    assert!(matches!(**event, Event::RunFinished { steps: 2, .. }), "{event:?}");
    assert!(
        matches!(Event::from_record(&finished(json!({}))), Some(Event::RunFinished { .. })),
        "the run's own"
    );
    let nested =
        Event::from_record(&finished(json!({"worker": "t1.2", "worker_agent": "files\u{1b}[2J"})))
            .expect("an event");
    assert!(matches!(&nested, Event::Worker { task, .. } if task == "t1.2"), "{nested:?}");
    assert_eq!(
        nested.to_string(),
        "[t1.2 files\\u{1b}[2J] run finished (the model answered): 2 step(s), 1 \
         tool call(s), 15 tokens"
    );
}

#[test]
fn delegation_records_decode_in_the_scope_that_delegated() {
    let started = json!({
        "event": "delegation_started", "time": "t", "run_id": "r", "step": 3, "call": 4,
        "task_id": "t1", "agent": "web", "depth": 1, "task": "Find the page\u{1b}[2J",
        "expected_output": "a URL", "return_format": {}, "max_steps": 8
    });
    let event = Event::from_record(&started).expect("an event");
    assert!(
        matches!(
            &event,
            Event::DelegationStarted { step: 3, task_id, agent, depth: 1, .. }
                if task_id == "t1" && agent == "web"
        ),
        "{event:?}"
    );
    let shown = event.to_string();
    assert!(
        shown.starts_with("step 3: worker t1 (web, depth 1) started: Find the page")
            && !shown.contains('\u{1b}'),
        "{shown}"
    );

    let failed = json!({
        "event": "delegation_finished", "time": "t", "run_id": "r", "step": 3, "task_id": "t1",
        "agent": "web", "outcome": "INVALID_OUTPUT", "error": "missing `url`", "output": null,
        "steps": 3, "usage": {"input_tokens": 800, "output_tokens": 50, "estimated": false},
        "duration_ms": 1234
    });
    let event = Event::from_record(&failed).expect("an event");
    assert!(
        matches!(
            &event,
            Event::DelegationFinished { steps: 3, outcome, error: Some(_), .. }
                if outcome == "INVALID_OUTPUT"
        ),
        "{event:?}"
    );
    assert_eq!(
        event.to_string(),
        "step 3: worker t1 failed: INVALID_OUTPUT: missing `url` (3 step(s), \
         850 tokens, 1234 ms)"
    );

    // Refused before a worker started: no task id.
    let refused = json!({
        "event": "delegation_finished", "time": "t", "run_id": "r", "step": 1, "call": 1,
        "task_id": null, "agent": "nope", "outcome": "LIMIT", "error": "too many workers",
        "output": null, "steps": 0,
        "usage": {"input_tokens": 0, "output_tokens": 0, "estimated": false}, "duration_ms": 0
    });
    let event = Event::from_record(&refused).expect("an event");
    assert!(
        matches!(&event, Event::DelegationFinished { steps: 0, task_id: None, .. }),
        "{event:?}"
    );
    assert_eq!(event.to_string(), "step 1: delegation to nope refused: LIMIT: too many workers");
    // The model named no agent, or not as text: still the event.
    for agent in [Value::Null, json!(3)] {
        let mut unnamed = refused.clone();
        unnamed["agent"] = agent;
        assert!(
            matches!(
                Event::from_record(&unnamed),
                Some(Event::DelegationFinished { agent, .. }) if agent.is_empty()
            ),
            "{unnamed}"
        );
    }

    // Written by worker t1 for its own worker t1.1: t1's event.
    let nested = json!({
        "event": "delegation_finished", "time": "t", "run_id": "r", "worker": "t1",
        "worker_agent": "web", "step": 2, "task_id": "t1.1", "agent": "files", "outcome": "ok",
        "error": null, "output": {"url": "u"}, "steps": 1,
        "usage": {"input_tokens": 1, "output_tokens": 1, "estimated": true}, "duration_ms": 5
    });
    let event = Event::from_record(&nested).expect("an event");
    let Event::Worker { task, agent, event } = &event else {
        panic!("not a worker's event: {event:?}")
    };
    assert_eq!((task.as_str(), agent.as_str()), ("t1", "web"));
    assert!(
        matches!(
            &**event,
            Event::DelegationFinished { task_id: Some(id), agent, .. }
                if id == "t1.1" && agent == "files"
        ),
        "{event:?}"
    );

    let review = json!({
        "event": "review_finished", "time": "t", "run_id": "r", "round": 1,
        "task_id": "review1", "verdict": "revise", "issues": ["no source", "too long"],
        "error": null, "usage": {"input_tokens": 1, "output_tokens": 1, "estimated": false},
        "duration_ms": 9
    });
    let event = Event::from_record(&review).expect("an event");
    assert!(
        matches!(&event, Event::ReviewFinished { round: 1, verdict: Some(_), .. }),
        "{event:?}"
    );
    assert_eq!(event.to_string(), "review 1: revise — no source; too long");
    assert_eq!(
        Event::from_record(&json!({
            "event": "review_started", "round": 1, "task_id": "review1", "criteria": "x"
        })),
        None
    );
}

#[test]
fn a_workers_event_survives_a_round_trip() {
    let event = Event::from_record(&finished(json!({"worker": "t2", "worker_agent": "web"})))
        .expect("an event");
    let text = serde_json::to_string(&event).unwrap();
    assert_eq!(serde_json::from_str::<Event>(&text).unwrap(), event, "{text}");
}
