//! `reach mcp --http` against what a web page or a neighbour on the network
//! could send: requests written by hand, so every header is the test's.

#[path = "support/mcp.rs"]
mod mcp;
mod support;

use mcp::{Response, Workspace, output_within, post};
use std::net::SocketAddr;
use std::time::Duration;

/// files may write ./notes without a person, so a request that gets
/// through leaves a file behind.
const AUTO_WRITE: &str = "[skills.files]\nlevel = \"auto\"\nread = [\"./docs\"]\nwrite = [\"./notes\"]\n";

const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"by-hand","version":"1"}}}"#;

fn workspace() -> Workspace {
    Workspace::new(AUTO_WRITE, &[("skill_files", "files")])
}

/// `tools/call files__write` creating `path`.
fn write_call(path: &str) -> String {
    serde_json::json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "files__write", "arguments": {"path": path, "content": "x"}}})
        .to_string()
}

/// A 2025-11-25 session opened the ordinary way (with `extra` headers on
/// each request); its id.
fn open_session(addr: SocketAddr, extra: &[(&str, &str)]) -> String {
    let opened = post(addr, extra, INITIALIZE);
    assert_eq!(opened.status, 200, "initialize: {opened:?}");
    let id = opened.header("mcp-session-id").unwrap_or_else(|| panic!("no Mcp-Session-Id: {opened:?}")).to_owned();
    let mut headers = extra.to_vec();
    headers.extend([("Mcp-Session-Id", id.as_str()), ("MCP-Protocol-Version", "2025-11-25")]);
    let initialized = post(addr, &headers, r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
    assert!(initialized.status == 202 || initialized.status == 200, "notifications/initialized: {initialized:?}");
    id
}

/// `body` on the session, with `extra` headers.
fn on_session(addr: SocketAddr, session: &str, extra: &[(&str, &str)], body: &str) -> Response {
    let mut headers = vec![("Mcp-Session-Id", session), ("MCP-Protocol-Version", "2025-11-25")];
    headers.extend_from_slice(extra);
    post(addr, &headers, body)
}

fn refused(response: &Response) -> bool {
    response.status == 403 || response.status == 421
}

#[test]
fn a_foreign_host_header_is_refused_before_any_tool_runs() {
    let ws = workspace();
    let server = ws.serve_http(&[], &[]);
    let addr = server.addr;
    let port = addr.port().to_string();
    // DNS rebinding: a page on evil.example whose name now resolves to
    // 127.0.0.1 reaches the server with its own name as Host.
    for host in ["evil.example".to_owned(), format!("evil.example:{port}"), format!("localhost.evil.example:{port}"), "127.0.0.1.nip.io".to_owned()] {
        let response = post(addr, &[("Host", host.as_str())], INITIALIZE);
        assert!(refused(&response), "Host: {host} was served: {response:?}");
    }
    for host in [format!("localhost:{port}"), format!("127.0.0.1:{port}")] {
        let response = post(addr, &[("Host", host.as_str())], INITIALIZE);
        assert_eq!(response.status, 200, "Host: {host}: {response:?}");
    }

    let session = open_session(addr, &[]);
    let rebound = on_session(addr, &session, &[("Host", "evil.example")], &write_call("notes/rebound.md"));
    assert!(refused(&rebound), "a call with a foreign Host was served: {rebound:?}");
    assert!(!ws.path("notes/rebound.md").exists(), "the tool ran for a foreign Host");
    // The same call with the server's own name runs: the Host was the reason.
    let direct = on_session(addr, &session, &[], &write_call("notes/direct.md"));
    assert_eq!(direct.status, 200, "{direct:?}");
    assert!(ws.path("notes/direct.md").exists(), "the call did not run: {direct:?}\n{}", server.stderr());
}

#[test]
fn a_foreign_origin_is_refused_and_an_allowed_one_passes() {
    let ws = workspace();
    let server = ws.serve_http(&["--allow-origin", "http://localhost:5173"], &[]);
    let addr = server.addr;
    for origin in ["http://evil.example", "http://localhost:5174", "https://localhost:5173", "null"] {
        let response = post(addr, &[("Origin", origin)], INITIALIZE);
        assert_eq!(response.status, 403, "Origin: {origin} was served: {response:?}");
    }
    let allowed = post(addr, &[("Origin", "http://localhost:5173")], INITIALIZE);
    assert_eq!(allowed.status, 200, "{allowed:?}");

    let session = open_session(addr, &[]);
    let foreign = on_session(addr, &session, &[("Origin", "http://evil.example")], &write_call("notes/from-a-page.md"));
    assert_eq!(foreign.status, 403, "{foreign:?}");
    assert!(!ws.path("notes/from-a-page.md").exists(), "the tool ran for a foreign Origin");
    let page = on_session(addr, &session, &[("Origin", "http://localhost:5173")], &write_call("notes/allowed-page.md"));
    assert_eq!(page.status, 200, "{page:?}");
    assert!(ws.path("notes/allowed-page.md").exists(), "the allowed origin's call did not run: {page:?}");
}

#[test]
fn only_the_servers_own_origin_passes_when_none_is_allowed() {
    let ws = workspace();
    let server = ws.serve_http(&[], &[]);
    let own = post(server.addr, &[("Origin", &format!("http://{}", server.addr))], INITIALIZE);
    assert_eq!(own.status, 200, "the server's own origin (no page can carry it) is served: {own:?}");
    // A page of another local web app (another port), or of any site, is not.
    for origin in ["http://localhost:5173", &format!("http://127.0.0.1:{}", server.addr.port() ^ 1), "http://evil.example"] {
        let response = post(server.addr, &[("Origin", origin)], INITIALIZE);
        assert_eq!(response.status, 403, "{origin}: {response:?}");
    }
}

#[test]
fn a_token_is_required_when_reach_mcp_token_is_set() {
    let ws = workspace();
    let token = "test-token-0123456789abcdef";
    let server = ws.serve_http(&[], &[("REACH_MCP_TOKEN", token)]);
    let addr = server.addr;
    let good = format!("Bearer {token}");
    for authorization in [None, Some("Bearer wrong"), Some(&format!("Bearer {token}x")[..]), Some(&format!("Basic {token}")[..]), Some("Bearer ")] {
        let headers: Vec<(&str, &str)> = authorization.map(|a| ("Authorization", a)).into_iter().collect();
        let response = post(addr, &headers, INITIALIZE);
        assert_eq!(response.status, 401, "Authorization: {authorization:?} was served: {response:?}");
    }
    let session = open_session(addr, &[("Authorization", &good)]);
    let without = on_session(addr, &session, &[], &write_call("notes/no-token.md"));
    assert_eq!(without.status, 401, "a session id is not a token: {without:?}");
    assert!(!ws.path("notes/no-token.md").exists(), "the tool ran without the token");
    let with = on_session(addr, &session, &[("Authorization", &good)], &write_call("notes/token.md"));
    assert_eq!(with.status, 200, "{with:?}");
    assert!(ws.path("notes/token.md").exists(), "the call with the token did not run: {with:?}");
}

#[test]
fn a_non_loopback_address_without_a_token_is_refused() {
    let ws = workspace();
    let out = output_within(ws.reach(&["mcp", "--http", "0.0.0.0:0"]), Duration::from_secs(60));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("REACH_MCP_TOKEN"), "names the variable to set: {stderr}");
}

/// A `tools/call` of protocol 2026-07-28 (stateless: no session, every
/// request says who it is), as a load balancer would pass it to any instance.
fn stateless_write(addr: SocketAddr, path: &str, answer: Option<(&str, &str)>) -> serde_json::Value {
    let mut params = serde_json::json!({
        "name": "files__write",
        "arguments": {"path": path, "content": "written after the person said yes"},
        "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}},
            "io.modelcontextprotocol/clientInfo": {"name": "balanced", "version": "1"}
        }
    });
    if let Some((action, state)) = answer {
        params["inputResponses"] = serde_json::json!({"confirm": {"action": action, "content": {}}});
        params["requestState"] = serde_json::json!(state);
    }
    let body = serde_json::json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": params}).to_string();
    let headers = [("MCP-Protocol-Version", "2026-07-28"), ("Mcp-Method", "tools/call"), ("Mcp-Name", "files__write")];
    let response = post(addr, &headers, &body);
    assert_eq!(response.status, 200, "{response:?}");
    let data = response.body.lines().find_map(|l| l.strip_prefix("data: ")).unwrap_or(&response.body);
    let message: serde_json::Value = serde_json::from_str(data).unwrap_or_else(|e| panic!("{e}: {response:?}"));
    message["result"].clone()
}

#[test]
fn a_confirmation_asked_by_one_instance_is_answered_at_another_without_sticky_sessions() {
    let policy = "[skills.files]\nlevel = \"auto\"\nread = [\"./docs\"]\nwrite = [\"./notes\"]\n[skills.files.tools.write]\nlevel = \"confirm\"\n";
    let ws = Workspace::new(policy, &[("skill_files", "files")]);
    let shared = [("REACH_MCP_STATE_KEY", "the balancer's shared secret")];
    let (a, b) = (ws.serve_http(&[], &shared), ws.serve_http(&[], &shared));
    let stranger = ws.serve_http(&[], &[("REACH_MCP_STATE_KEY", "another secret")]);

    let asked = stateless_write(a.addr, "notes/lb.md", None);
    assert_eq!(asked["resultType"], "input_required", "{asked}");
    let question = &asked["inputRequests"]["confirm"];
    assert_eq!(question["method"], "elicitation/create");
    assert!(question["params"]["message"].as_str().unwrap().contains("notes/lb.md"), "{question}");
    let state = asked["requestState"].as_str().unwrap();
    assert!(!ws.path("notes/lb.md").exists(), "nothing runs before the answer");

    // The retry lands on another instance with the same key: it runs there.
    let done = stateless_write(b.addr, "notes/lb.md", Some(("accept", state)));
    assert_eq!(done["isError"], false, "{done}");
    assert!(ws.path("notes/lb.md").exists());

    // The sealed state names those arguments: a yes does not carry over to
    // another path, and an instance with another key asks again.
    let moved = stateless_write(b.addr, "notes/elsewhere.md", Some(("accept", state)));
    assert_eq!(moved["resultType"], "input_required", "{moved}");
    let foreign = stateless_write(stranger.addr, "notes/lb.md", Some(("accept", state)));
    assert_eq!(foreign["resultType"], "input_required", "{foreign}");
    assert!(!ws.path("notes/elsewhere.md").exists());

    let declined = stateless_write(a.addr, "notes/no.md", Some(("decline", stateless_write(a.addr, "notes/no.md", None)["requestState"].as_str().unwrap())));
    assert_eq!(declined["structuredContent"]["error_code"], "DENIED", "{declined}");
    assert!(!ws.path("notes/no.md").exists());
}
