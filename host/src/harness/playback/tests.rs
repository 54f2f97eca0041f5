//! A playback over records built here: replies per loop, each kind of
//! call divergence, checkpoints one side did not ask for, and a log that
//! cannot be played back.

use super::*;
use crate::harness::audit::record::{
    Body, CallEnded, CallHead, Compaction, ModelReply, ModelRequest, Record, Worker,
};
use crate::model::ToolCall;

fn record(worker: Option<&str>, body: Body) -> Record {
    let worker = worker.map(|task| Worker { task: task.to_owned(), agent: "helper".to_owned() });
    Record::new("2026-12-07T00:00:00.000Z".into(), "r1".into(), worker, body)
}

fn started() -> Record {
    record(None, Body::RunStarted(RunStarted { task: "do it".into(), ..RunStarted::default() }))
}

fn reply(worker: Option<&str>, step: usize, content: &str, calls: &[(&str, &str)]) -> Record {
    let tool_calls = calls
        .iter()
        .enumerate()
        .map(|(i, (name, arguments))| ToolCall {
            id: format!("c{i}"),
            name: (*name).to_owned(),
            arguments: (*arguments).to_owned(),
        })
        .collect();
    let reply = ModelReply { content: content.to_owned(), tool_calls };
    record(
        worker,
        Body::ModelRequest(ModelRequest {
            step,
            model: "m".into(),
            reply: Some(reply),
            ..ModelRequest::default()
        }),
    )
}

fn made(call: usize, tool: &str, result: &str) -> Record {
    record(
        None,
        Body::ToolCall(CallEnded {
            head: CallHead {
                step: Some(1),
                call: Some(call),
                tool: tool.into(),
                ..CallHead::default()
            },
            decision: Some(Decision::Auto),
            result_digest: Some(blake3::hash(result.as_bytes()).to_hex().to_string()),
            ..CallEnded::default()
        }),
    )
}

fn playback(records: &[Record]) -> Playback {
    let empty = tempfile::tempdir().unwrap();
    let tape = Tape::load(empty.path(), "r1", Vec::new()).unwrap();
    Playback::from_records(records, Arc::new(tape), false).expect("a playback")
}

fn seen<'a>(call: &'a str, tool: &'a str, outcome: &'a Result<String, ToolFailure>) -> Seen<'a> {
    let result = match outcome {
        Ok(text) => text.as_str(),
        Err(_) => "{\"error\":\"…\"}",
    };
    Seen { call, step: 1, tool, decision: Decision::Auto, outcome, result, denied_by_table: false }
}

fn kinds(p: &Playback) -> Vec<DivergenceKind> {
    p.divergences().iter().map(|d| d.kind).collect()
}

#[test]
fn each_loop_gets_its_own_replies_in_order_and_one_more_is_a_divergence() {
    let p = playback(&[
        started(),
        reply(None, 1, "", &[("files__read", "{}")]),
        reply(Some("t1"), 1, "worker's", &[]),
        reply(None, 2, "done", &[]),
    ]);
    assert_eq!(p.steps(), 2);
    let first = p.reply(None, 1, Purpose::Step).unwrap();
    assert_eq!(first.message.tool_calls[0].name, "files__read");
    assert_eq!(p.reply(Some("t1"), 1, Purpose::Step).unwrap().message.content, "worker's");
    assert_eq!(p.reply(None, 2, Purpose::Step).unwrap().message.content, "done");
    assert!(p.reply(None, 3, Purpose::Step).is_err());
    assert_eq!(kinds(&p), [DivergenceKind::Unrecorded]);
}

#[test]
fn a_call_is_compared_denied_refused_gone_or_by_its_result() {
    let same = Ok("{\"status\":200,\"text\":\"tides\"}".to_owned());
    let p = playback(&[
        started(),
        made(1, "web__fetch", same.as_ref().unwrap()),
        made(2, "web__fetch", "x"),
        made(3, "web__fetch", "x"),
        made(4, "files__write", "x"),
        made(5, "files__read", "{\"status\":200,\"text\":\"tides\"}"),
        made(6, "files__read", "never replayed"),
    ]);
    p.check_call(seen("#1", "web__fetch", &same));
    let denied = Err(ToolFailure::new(ErrorCode::Denied, "net: not granted"));
    p.check_call(seen("#2", "web__fetch", &denied));
    let refused = Err(ToolFailure::new(ErrorCode::InvalidArgs, "`url` is required"));
    p.check_call(seen("#3", "web__fetch", &refused));
    let gone = Err(ToolFailure::new(ErrorCode::NoSuchTool, "no tool"));
    p.check_call(seen("#4", "files__write", &gone));
    let text = "{\"status\":404,\"text\":\"tides\"}";
    let other = Ok(text.to_owned());
    p.check_call(seen("#5", "files__read", &other));
    p.check_call(seen("#7", "files__read", &other));
    let found = p.divergences();
    let kinds: Vec<_> = found.iter().map(|d| (d.call.as_deref().unwrap_or(""), d.kind)).collect();
    assert_eq!(
        kinds,
        [
            ("#2", DivergenceKind::Denied),
            ("#3", DivergenceKind::Refused),
            ("#4", DivergenceKind::Gone),
            ("#5", DivergenceKind::Result),
            ("#7", DivergenceKind::Unrecorded),
            ("#6", DivergenceKind::Missing),
        ]
    );
    // A JSON result is compared a field a line; the run's was not recorded here.
    assert!(found[3].diff.as_deref().unwrap().contains("not recorded"), "{:?}", found[3]);
    let diff = divergence::unified("{\"status\":200,\"text\":\"tides\"}", text);
    assert!(diff.contains("-  \"status\": 200,") && diff.contains("+  \"status\": 404,"), "{diff}");
    assert!(diff.contains("\n   \"text\": \"tides\""), "an unchanged field is context: {diff}");
}

#[test]
fn a_tool_the_table_now_denies_is_a_denial_not_a_tool_gone() {
    let p = playback(&[started(), made(1, "web__fetch", "x")]);
    let gone = Err(ToolFailure::new(ErrorCode::NoSuchTool, "no tool"));
    p.check_call(Seen { denied_by_table: true, ..seen("#1", "web__fetch", &gone) });
    let found = p.divergences();
    assert_eq!(found[0].kind, DivergenceKind::Denied);
    assert!(found[0].detail.contains("level deny"), "{}", found[0].detail);
}

#[test]
fn a_checkpoint_only_one_side_asked_for_is_named_and_skipped() {
    let checkpoint = record(
        None,
        Body::Compaction(Compaction {
            reply: Some(ModelReply { content: "summary".into(), tool_calls: Vec::new() }),
            ..Compaction::default()
        }),
    );
    let p = playback(&[started(), reply(None, 1, "a", &[]), checkpoint, reply(None, 2, "b", &[])]);
    // The replay did not compact: its step gets the step's reply, past the checkpoint.
    assert_eq!(p.reply(None, 1, Purpose::Step).unwrap().message.content, "a");
    assert_eq!(p.reply(None, 2, Purpose::Step).unwrap().message.content, "b");
    // It compacts where the run did not: the harness writes its own checkpoint.
    assert!(p.reply(None, 3, Purpose::Checkpoint).is_err());
    assert_eq!(kinds(&p), [DivergenceKind::Compaction, DivergenceKind::Compaction]);
}

#[test]
fn a_log_without_replies_or_of_a_front_end_cannot_be_played_back() {
    let empty = tempfile::tempdir().unwrap();
    let tape = Arc::new(Tape::load(empty.path(), "r1", Vec::new()).unwrap());
    let old = record(None, Body::ModelRequest(ModelRequest { step: 1, ..ModelRequest::default() }));
    let why = Playback::from_records(&[started(), old], Arc::clone(&tape), false).unwrap_err();
    assert!(why.contains("did not record the model's replies"), "{why}");
    let call = record(
        None,
        Body::RunStarted(RunStarted::of_front(
            crate::harness::audit::record::FrontEnd::Call,
            "files.read".into(),
        )),
    );
    let why = Playback::from_records(&[call], tape, false).unwrap_err();
    assert!(why.contains("reach call"), "{why}");
    let why = Playback::from_records(
        &[],
        Arc::new(Tape::load(empty.path(), "r1", Vec::new()).unwrap()),
        false,
    )
    .unwrap_err();
    assert!(why.contains("not a run's log"), "{why}");
}
