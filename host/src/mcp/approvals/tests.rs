use super::*;
use serde_json::json;
use std::sync::atomic::AtomicU64;

const T0: u64 = 1_800_000_000;

fn write_call(arguments: &serde_json::Value) -> Subject<'_> {
    Subject { skill: "files", tool: "write", arguments }
}

fn http<'a>(token: &'a str, name: &'a str) -> Client<'a> {
    Client { authorization: Some(token.as_bytes()), session: None, http: true, name: Some(name) }
}

/// Approvals whose clock the test sets.
fn at(approvals: Approvals) -> (Approvals, Arc<AtomicU64>) {
    let now = Arc::new(AtomicU64::new(T0));
    let clock = Arc::clone(&now);
    (approvals.with_clock(move || clock.load(Ordering::Relaxed)), now)
}

fn valid(verdict: Verdict) -> Spendable {
    match verdict {
        Verdict::Valid(state) => state,
        other => panic!("expected a valid state, got {other:?}"),
    }
}

#[tokio::test]
async fn an_accepted_state_runs_once() {
    let (approvals, _) = at(Approvals::per_process());
    let args = json!({"path": "notes/a.md", "content": "x"});
    let client = http("Bearer t", "editor");
    let state = approvals.seal(&write_call(&args), &client);
    assert!(state.starts_with("v2."), "{state}");
    assert!(
        approvals
            .spend(valid(approvals.verify(&state, &write_call(&args), &client)))
            .await
            .unwrap(),
        "the first use runs"
    );
    // Regression: a state covered only skill, tool and arguments, so one
    // "accept" replayed without limit.
    let again = valid(approvals.verify(&state, &write_call(&args), &client));
    assert!(!approvals.spend(again).await.unwrap(), "a replay of the same state must not run");
}

#[tokio::test]
async fn a_state_used_at_one_instance_is_refused_at_another_sharing_the_key() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("approvals.db");
    let a = Approvals::shared("the balancer's secret", &store).unwrap();
    let b = Approvals::shared("the balancer's secret", &store).unwrap();
    let args = json!({"path": "notes/lb.md"});
    let client = http("Bearer t", "balanced");
    let state = a.seal(&write_call(&args), &client);
    assert!(b.spend(valid(b.verify(&state, &write_call(&args), &client))).await.unwrap());
    assert!(
        !a.spend(valid(a.verify(&state, &write_call(&args), &client))).await.unwrap(),
        "spent at b, so not again at a"
    );
    assert!(!b.spend(valid(b.verify(&state, &write_call(&args), &client))).await.unwrap());
}

#[test]
fn a_state_past_its_expiry_is_refused() {
    let (approvals, now) = at(Approvals::per_process());
    let args = json!({"path": "notes/late.md"});
    let client = http("Bearer t", "editor");
    let state = approvals.seal(&write_call(&args), &client);
    now.store(T0 + STATE_TTL.as_secs() - 1, Ordering::Relaxed);
    assert!(
        matches!(approvals.verify(&state, &write_call(&args), &client), Verdict::Valid(_)),
        "still good just before"
    );
    now.store(T0 + STATE_TTL.as_secs(), Ordering::Relaxed);
    assert_eq!(approvals.verify(&state, &write_call(&args), &client), Verdict::Expired);
}

#[test]
fn a_state_given_to_another_client_is_refused() {
    let (approvals, _) = at(Approvals::per_process());
    let args = json!({"path": "notes/mine.md"});
    let state = approvals.seal(&write_call(&args), &http("Bearer t", "editor"));
    let other = |client: Client<'_>| approvals.verify(&state, &write_call(&args), &client);
    assert_eq!(
        other(http("Bearer t", "another-client")),
        Verdict::OtherClient,
        "another declared name"
    );
    assert_eq!(
        other(http("Bearer another-token", "editor")),
        Verdict::OtherClient,
        "another token"
    );
    assert_eq!(
        other(Client { session: Some(b"s2"), ..http("Bearer t", "editor") }),
        Verdict::OtherClient,
        "another session"
    );
    assert_eq!(
        other(Client { authorization: None, session: None, http: false, name: Some("editor") }),
        Verdict::OtherClient,
        "stdio"
    );
    assert!(matches!(other(http("Bearer t", "editor")), Verdict::Valid(_)));
}

#[test]
fn a_stdio_state_is_good_at_its_own_process_only() {
    let key = "shared";
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (
        Approvals::shared(key, &dir.path().join("a.db")).unwrap(),
        Approvals::shared(key, &dir.path().join("a.db")).unwrap(),
    );
    let args = json!({});
    let stdio = Client { authorization: None, session: None, http: false, name: Some("desktop") };
    let state = a.seal(&write_call(&args), &stdio);
    assert!(matches!(a.verify(&state, &write_call(&args), &stdio), Verdict::Valid(_)));
    assert_eq!(b.verify(&state, &write_call(&args), &stdio), Verdict::OtherClient);
}

#[test]
fn a_state_for_other_arguments_another_key_or_altered_is_not_for_this_call() {
    let (approvals, _) = at(Approvals::per_process());
    let args = json!({"path": "notes/a.md"});
    let client = http("Bearer t", "editor");
    let state = approvals.seal(&write_call(&args), &client);
    let moved = json!({"path": "notes/b.md"});
    assert_eq!(approvals.verify(&state, &write_call(&moved), &client), Verdict::NotForThis);
    assert_eq!(
        approvals.verify(
            &state,
            &Subject { skill: "files", tool: "delete", arguments: &args },
            &client
        ),
        Verdict::NotForThis
    );
    let (stranger, _) = at(Approvals::per_process());
    assert_eq!(stranger.verify(&state, &write_call(&args), &client), Verdict::NotForThis);
    // A later expiry written into the state breaks its MAC.
    use base64::Engine as _;
    let engine = base64::engine::general_purpose::URL_SAFE_NO_PAD;
    let mut bytes = engine.decode(state.strip_prefix("v2.").unwrap()).unwrap();
    bytes[NONCE + 7] ^= 0x40;
    let altered = format!("v2.{}", engine.encode(&bytes));
    assert_eq!(approvals.verify(&altered, &write_call(&args), &client), Verdict::NotForThis);
    for junk in ["", "v2.", "v1.abc", "v2.!!!", &state[..state.len() - 4]] {
        assert_eq!(
            approvals.verify(junk, &write_call(&args), &client),
            Verdict::NotForThis,
            "{junk:?}"
        );
    }
}

#[test]
fn the_record_refuses_new_approvals_rather_than_grow_and_forgets_expired_ones() {
    for used in [Box::new(InMemory::new(2)) as Box<dyn UsedNonces>, {
        let dir = tempfile::tempdir().unwrap().keep();
        Box::new(Sqlite::open(&dir.join("a.db"), 2).unwrap())
    }] {
        assert!(used.first_use(&[1; NONCE], T0 + 10, T0).unwrap());
        assert!(used.first_use(&[2; NONCE], T0 + 20, T0).unwrap());
        assert!(!used.first_use(&[1; NONCE], T0 + 10, T0).unwrap(), "already used");
        let full = used.first_use(&[3; NONCE], T0 + 30, T0).unwrap_err();
        assert!(full.to_string().contains("wait a few minutes"), "{full}");
        // Once the first has expired, its place is free.
        assert!(used.first_use(&[3; NONCE], T0 + 30, T0 + 10).unwrap());
    }
}

#[cfg(unix)]
#[test]
fn the_record_is_created_private_and_refused_when_others_may_write_it() {
    use std::os::unix::fs::PermissionsExt as _;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("approvals.db");
    Approvals::shared("k", &path).unwrap();
    assert_eq!(std::fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o600);
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o666)).unwrap();
    let err = Approvals::shared("k", &path).unwrap_err().to_string();
    assert!(err.contains("chmod 600"), "{err}");
    let link = dir.path().join("link.db");
    std::os::unix::fs::symlink(&path, &link).unwrap();
    assert!(Approvals::shared("k", &link).is_err(), "a symbolic link is not followed");
}
