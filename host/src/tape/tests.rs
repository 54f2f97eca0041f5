use super::*;

fn exchange(call: &str, url: &str) -> Exchange {
    Exchange {
        call: call.into(),
        skill: "web".into(),
        method: "GET".into(),
        url: url.into(),
        status: 200,
        headers: vec![("content-type".into(), "text/html".into())],
        complete: true,
        ..Exchange::default()
    }
}

#[test]
fn a_recording_gives_back_each_response_once_in_order_with_secrets_masked() {
    let root = tempfile::tempdir().unwrap();
    let secret = "sk-live-0123456789".to_owned();
    let recorder = Recorder::new(root.path(), "run1", DEFAULT_RECORD_BYTES, vec![secret.clone()]);
    recorder.exchange(exchange("#1", "http://a.test/p"), Some(&b"first"[..]));
    recorder.exchange(exchange("#1", "http://a.test/p"), Some(format!("echo {secret}").as_bytes()));
    recorder.exchange(exchange("t1#1", "http://a.test/p"), Some(&b"worker's"[..]));
    recorder.result("#1", "web__fetch", &format!("page with {secret}"));

    let tape = Tape::load(root.path(), "run1", vec![secret.clone()]).unwrap();
    let one = tape.take("#1", "GET", "http://a.test/p").unwrap();
    assert_eq!(one.body.as_deref(), Some(&b"first"[..]));
    assert_eq!(one.exchange.headers, exchange("", "").headers);
    let two = tape.take("#1", "GET", "http://a.test/p").unwrap();
    let two = String::from_utf8(two.body.unwrap()).unwrap();
    assert!(!two.contains(&secret) && two.starts_with("echo "), "{two}");
    assert!(tape.take("#1", "GET", "http://a.test/p").is_none(), "each response is given once");
    assert_eq!(tape.take("t1#1", "GET", "http://a.test/p").unwrap().body.unwrap(), b"worker's");
    assert!(tape.take("#1", "POST", "http://a.test/p").is_none());
    let (tool, text) = tape.result("#1").unwrap();
    assert_eq!(tool, "web__fetch");
    assert!(text.unwrap().starts_with("page with ") && !text.unwrap().contains(&secret));
    assert!(!tape.was_full());
    let on_disk = std::fs::read_to_string(root.path().join("run1/tape.jsonl")).unwrap();
    assert!(!on_disk.contains(&secret));
}

#[test]
fn past_its_budget_a_recording_marks_what_it_left_out() {
    let root = tempfile::tempdir().unwrap();
    let recorder = Recorder::new(root.path(), "run1", 10, Vec::new());
    recorder.exchange(exchange("#1", "http://a.test/small"), Some(&b"12345"[..]));
    recorder.exchange(exchange("#1", "http://a.test/big"), Some(&b"0123456789"[..]));
    let tape = Tape::load(root.path(), "run1", Vec::new()).unwrap();
    assert!(tape.was_full());
    assert_eq!(tape.take("#1", "GET", "http://a.test/small").unwrap().body.unwrap(), b"12345");
    let big = tape.take("#1", "GET", "http://a.test/big").unwrap();
    assert_eq!((big.body, big.exchange.body_bytes), (None, 10));
}

#[test]
fn a_changed_body_is_not_replayed() {
    let root = tempfile::tempdir().unwrap();
    let recorder = Recorder::new(root.path(), "run1", DEFAULT_RECORD_BYTES, Vec::new());
    recorder.exchange(exchange("#1", "http://a.test/p"), Some(&b"original"[..]));
    let blobs = root.path().join("run1/blobs");
    let blob = std::fs::read_dir(&blobs).unwrap().next().unwrap().unwrap().path();
    std::fs::write(&blob, b"forged").unwrap();
    let tape = Tape::load(root.path(), "run1", Vec::new()).unwrap();
    assert_eq!(tape.take("#1", "GET", "http://a.test/p").unwrap().body, None);
}

#[test]
fn a_run_without_a_recording_reads_as_empty() {
    let root = tempfile::tempdir().unwrap();
    let tape = Tape::load(root.path(), "none", Vec::new()).unwrap();
    assert!(tape.result("#1").is_none());
}

#[test]
fn clock_readings_are_given_back_once_per_call() {
    let root = tempfile::tempdir().unwrap();
    let recorder = Recorder::new(root.path(), "run1", 0, Vec::new());
    recorder.clock("#1", vec![10, 20]);
    recorder.clock("t1#1", vec![30]);
    let tape = Tape::load(root.path(), "run1", Vec::new()).unwrap();
    assert_eq!(tape.clock("#1"), [10, 20]);
    assert!(tape.clock("#1").is_empty(), "given once");
    assert_eq!(tape.clock("t1#1"), [30]);
}
