//! The network allowlist and SSRF guard, against a real HTTP server on 127.0.0.1.

use agent_reach::ErrorCode;
use agent_reach_tests::guests;
use agent_reach_tests::{TestServer, Workspace, call};
use serde_json::json;

fn ws() -> Workspace {
    let ws = Workspace::new();
    ws.install(guests::TEST_SKILL_PROBE);
    ws
}

#[tokio::test]
async fn an_explicitly_granted_loopback_address_is_reachable() {
    let server = TestServer::start();
    let ws = ws();
    let host =
        ws.host(&format!("[skills.probe]\nlevel = \"auto\"\nnet = [\"{}\"]\n", server.addr)).await;
    let out = call(&host, "probe.fetch", json!({"url": server.url("/page")})).await.expect("fetch");
    let out: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(out["status"], 200);
    assert_eq!(out["body"], "hello from /page");
}

#[tokio::test]
async fn hosts_not_on_the_allowlist_are_denied() {
    let server = TestServer::start();
    let ws = ws();
    let host = ws.host("[skills.probe]\nlevel = \"auto\"\n").await;
    let err = call(&host, "probe.fetch", json!({"url": server.url("/")})).await.unwrap_err();
    assert_eq!(err.code, ErrorCode::Denied, "{err}");
    assert!(err.message.contains(&server.addr.to_string()), "names the refused address: {err}");
}

#[tokio::test]
async fn another_port_on_a_granted_host_is_denied() {
    let server = TestServer::start();
    let other = TestServer::start();
    let ws = ws();
    let host =
        ws.host(&format!("[skills.probe]\nlevel = \"auto\"\nnet = [\"{}\"]\n", server.addr)).await;
    let err = call(&host, "probe.fetch", json!({"url": other.url("/")})).await.unwrap_err();
    assert_eq!(err.code, ErrorCode::Denied, "{err}");
}

#[tokio::test]
async fn a_name_that_resolves_to_loopback_is_refused_unless_the_address_is_named() {
    let server = TestServer::start();
    let ws = ws();
    // `localhost` is on the allowlist, but it resolves to an internal
    // address that the table does not name: the SSRF guard refuses it.
    let port = server.addr.port();
    let host =
        ws.host(&format!("[skills.probe]\nlevel = \"auto\"\nnet = [\"localhost:{port}\"]\n")).await;
    let err = call(&host, "probe.fetch", json!({"url": format!("http://localhost:{port}/")}))
        .await
        .unwrap_err();
    assert_eq!(err.code, ErrorCode::Denied, "{err}");
    assert!(err.message.contains("internal address"), "{err}");
}

#[tokio::test]
async fn a_redirect_to_a_host_that_is_not_granted_is_denied_at_that_hop() {
    let server = TestServer::start();
    let ws = ws();
    let host =
        ws.host(&format!("[skills.probe]\nlevel = \"auto\"\nnet = [\"{}\"]\n", server.addr)).await;
    let evil = format!("http://127.0.0.2:{}/stolen", server.addr.port());
    let err =
        call(&host, "probe.fetch", json!({"url": server.url(&format!("/redirect?to={evil}"))}))
            .await
            .unwrap_err();
    assert_eq!(err.code, ErrorCode::Denied, "{err}");
    assert!(err.message.contains("127.0.0.2"), "{err}");
    // A redirect that stays on the granted host is followed.
    let ok = call(
        &host,
        "probe.fetch",
        json!({"url": server.url(&format!("/redirect?to={}", server.url("/landed")))}),
    )
    .await
    .expect("same-host redirect");
    assert!(ok.contains("hello from /landed"), "{ok}");
}

#[tokio::test]
async fn non_http_schemes_are_refused() {
    let ws = ws();
    let host = ws.host("[skills.probe]\nlevel = \"auto\"\nnet = [\"example.com\"]\n").await;
    let err =
        call(&host, "probe.fetch", json!({"url": "ftp://example.com/file"})).await.unwrap_err();
    assert_eq!(err.code, ErrorCode::InvalidArgs, "{err}");
}

#[tokio::test]
async fn a_url_with_a_user_name_or_password_is_refused() {
    // Regression: `user:pass@host` passed the allowlist (which reads only
    // the host) and went out with the user info in its Host header.
    let server = agent_reach_tests::recorder::Recorder::start();
    let ws = ws();
    let host =
        ws.host(&format!("[skills.probe]\nlevel = \"auto\"\nnet = [\"{}\"]\n", server.addr)).await;
    let args = json!({
        "scheme": "http", "authority": format!("user:hunter2@{}", server.addr), "path": "/"
    });
    let err = call(&host, "probe.raw", args).await.unwrap_err();
    assert_eq!(err.code, ErrorCode::Denied, "{err}");
    assert!(err.message.contains("user name or password"), "says why: {err}");
    assert!(!err.message.contains("hunter2"), "never repeats the password: {err}");
    assert!(server.heads().is_empty(), "nothing was sent");
    // The same request without user info goes through.
    let args = json!({"scheme": "http", "authority": server.addr.to_string(), "path": "/"});
    call(&host, "probe.raw", args).await.expect("plain authority");
}

#[tokio::test]
async fn requests_in_flight_per_call_are_capped() {
    // Regression: a call could open as many concurrent requests (and
    // connections, and host tasks) as it liked.
    let server = agent_reach_tests::recorder::Recorder::start();
    let ws = ws();
    let host =
        ws.host(&format!("[skills.probe]\nlevel = \"auto\"\nnet = [\"{}\"]\n", server.addr)).await;
    let args =
        json!({"scheme": "http", "authority": server.addr.to_string(), "path": "/slow", "n": 12});
    let out: serde_json::Value =
        serde_json::from_str(&call(&host, "probe.parallel", args).await.expect("parallel"))
            .unwrap();
    let results = out["results"].as_array().expect("results");
    let ok = results.iter().filter(|r| **r == 200).count();
    let refused = results
        .iter()
        .filter(|r| r.as_str().is_some_and(|e| e.contains("ConnectionLimitReached")))
        .count();
    assert_eq!((ok, refused), (8, 4), "{out}");
    assert_eq!(out["after"], 200, "slots come back once responses are read: {out}");
    assert_eq!(server.heads().len(), 9, "the refused ones never left the host");
}
