//! The network allowlist and SSRF guard, against a real HTTP server on 127.0.0.1.

use agent_reach::ErrorCode;
use agent_reach_tests::{TestServer, Workspace, call};
use serde_json::json;

fn ws() -> Workspace {
    let ws = Workspace::new();
    ws.install("test-skill-probe");
    ws
}

#[tokio::test]
async fn an_explicitly_granted_loopback_address_is_reachable() {
    let server = TestServer::start();
    let ws = ws();
    let host = ws.host(&format!("[skills.probe]\nlevel = \"auto\"\nnet = [\"{}\"]\n", server.addr)).await;
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
    let host = ws.host(&format!("[skills.probe]\nlevel = \"auto\"\nnet = [\"{}\"]\n", server.addr)).await;
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
    let host = ws.host(&format!("[skills.probe]\nlevel = \"auto\"\nnet = [\"localhost:{port}\"]\n")).await;
    let err = call(&host, "probe.fetch", json!({"url": format!("http://localhost:{port}/")})).await.unwrap_err();
    assert_eq!(err.code, ErrorCode::Denied, "{err}");
    assert!(err.message.contains("internal address"), "{err}");
}

#[tokio::test]
async fn a_redirect_to_a_host_that_is_not_granted_is_denied_at_that_hop() {
    let server = TestServer::start();
    let ws = ws();
    let host = ws.host(&format!("[skills.probe]\nlevel = \"auto\"\nnet = [\"{}\"]\n", server.addr)).await;
    let evil = format!("http://127.0.0.2:{}/stolen", server.addr.port());
    let err = call(&host, "probe.fetch", json!({"url": server.url(&format!("/redirect?to={evil}"))})).await.unwrap_err();
    assert_eq!(err.code, ErrorCode::Denied, "{err}");
    assert!(err.message.contains("127.0.0.2"), "{err}");
    // A redirect that stays on the granted host is followed.
    let ok = call(&host, "probe.fetch", json!({"url": server.url(&format!("/redirect?to={}", server.url("/landed")))})).await.expect("same-host redirect");
    assert!(ok.contains("hello from /landed"), "{ok}");
}

#[tokio::test]
async fn non_http_schemes_are_refused() {
    let ws = ws();
    let host = ws.host("[skills.probe]\nlevel = \"auto\"\nnet = [\"example.com\"]\n").await;
    let err = call(&host, "probe.fetch", json!({"url": "ftp://example.com/file"})).await.unwrap_err();
    assert_eq!(err.code, ErrorCode::InvalidArgs, "{err}");
}
