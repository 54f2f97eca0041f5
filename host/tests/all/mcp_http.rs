//! `reach mcp --http` against what a web page or a neighbour on the network
//! could send: requests written by hand, so every header is the test's.

use crate::support::mcp::{HttpServer, Response, Workspace, output_within, post};
use agent_reach_tests::guests;
use std::io::{Read as _, Write as _};
use std::net::TcpStream;
use std::time::{Duration, Instant};

/// files may write ./notes without a person, so a request that gets
/// through leaves a file behind.
const AUTO_WRITE: &str =
    "[skills.files]\nlevel = \"auto\"\nread = [\"./docs\"]\nwrite = [\"./notes\"]\n";

pub(crate) const INITIALIZE: &str = concat!(
    r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","#,
    r#""capabilities":{},"clientInfo":{"name":"by-hand","version":"1"}}}"#,
);

fn workspace() -> Workspace {
    Workspace::new(AUTO_WRITE, &[guests::SKILL_FILES])
}

/// `tools/call files__write` creating `path`.
fn write_call(path: &str) -> String {
    serde_json::json!({
        "jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "files__write", "arguments": {"path": path, "content": "x"}}
    })
    .to_string()
}

/// A 2025-11-25 session opened the ordinary way (with the server's token
/// and `extra` headers on each request); its id.
pub(crate) fn open_session(server: &HttpServer, extra: &[(&str, &str)]) -> String {
    let opened = server.post(extra, INITIALIZE);
    assert_eq!(opened.status, 200, "initialize: {opened:?}");
    let id = opened
        .header("mcp-session-id")
        .unwrap_or_else(|| panic!("no Mcp-Session-Id: {opened:?}"))
        .to_owned();
    let mut headers = extra.to_vec();
    headers.extend([("Mcp-Session-Id", id.as_str()), ("MCP-Protocol-Version", "2025-11-25")]);
    let initialized =
        server.post(&headers, r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
    assert!(
        initialized.status == 202 || initialized.status == 200,
        "notifications/initialized: {initialized:?}"
    );
    id
}

/// `body` on the session, with the server's token and `extra` headers.
pub(crate) fn on_session(
    server: &HttpServer,
    session: &str,
    extra: &[(&str, &str)],
    body: &str,
) -> Response {
    let mut headers = vec![("Mcp-Session-Id", session), ("MCP-Protocol-Version", "2025-11-25")];
    headers.extend_from_slice(extra);
    server.post(&headers, body)
}

fn refused(response: &Response) -> bool {
    response.status == 403 || response.status == 421
}

#[test]
fn a_foreign_host_header_is_refused_before_any_tool_runs() {
    let ws = workspace();
    let server = ws.serve_http(&[], &[]);
    let port = server.addr.port().to_string();
    // DNS rebinding: a page on evil.example whose name now resolves to
    // 127.0.0.1 reaches the server with its own name as Host. (With the
    // token, so that the Host is the reason.)
    for host in [
        "evil.example".to_owned(),
        format!("evil.example:{port}"),
        format!("localhost.evil.example:{port}"),
        "127.0.0.1.nip.io".to_owned(),
    ] {
        let response = server.post(&[("Host", host.as_str())], INITIALIZE);
        assert!(refused(&response), "Host: {host} was served: {response:?}");
    }
    for host in [format!("localhost:{port}"), format!("127.0.0.1:{port}")] {
        let response = server.post(&[("Host", host.as_str())], INITIALIZE);
        assert_eq!(response.status, 200, "Host: {host}: {response:?}");
    }

    let session = open_session(&server, &[]);
    let rebound =
        on_session(&server, &session, &[("Host", "evil.example")], &write_call("notes/rebound.md"));
    assert!(refused(&rebound), "a call with a foreign Host was served: {rebound:?}");
    assert!(!ws.path("notes/rebound.md").exists(), "the tool ran for a foreign Host");
    // The same call with the server's own name runs: the Host was the reason.
    let direct = on_session(&server, &session, &[], &write_call("notes/direct.md"));
    assert_eq!(direct.status, 200, "{direct:?}");
    assert!(
        ws.path("notes/direct.md").exists(),
        "the call did not run: {direct:?}\n{}",
        server.stderr()
    );
}

#[test]
fn a_foreign_origin_is_refused_and_an_allowed_one_passes() {
    let ws = workspace();
    let server = ws.serve_http(&["--allow-origin", "http://localhost:5173"], &[]);
    for origin in ["http://evil.example", "http://localhost:5174", "https://localhost:5173", "null"]
    {
        let response = server.post(&[("Origin", origin)], INITIALIZE);
        assert_eq!(response.status, 403, "Origin: {origin} was served: {response:?}");
    }
    let allowed = server.post(&[("Origin", "http://localhost:5173")], INITIALIZE);
    assert_eq!(allowed.status, 200, "{allowed:?}");

    let session = open_session(&server, &[]);
    let foreign = on_session(
        &server,
        &session,
        &[("Origin", "http://evil.example")],
        &write_call("notes/from-a-page.md"),
    );
    assert_eq!(foreign.status, 403, "{foreign:?}");
    assert!(!ws.path("notes/from-a-page.md").exists(), "the tool ran for a foreign Origin");
    let page = on_session(
        &server,
        &session,
        &[("Origin", "http://localhost:5173")],
        &write_call("notes/allowed-page.md"),
    );
    assert_eq!(page.status, 200, "{page:?}");
    assert!(
        ws.path("notes/allowed-page.md").exists(),
        "the allowed origin's call did not run: {page:?}"
    );
}

#[test]
fn only_the_servers_own_origin_passes_when_none_is_allowed() {
    let ws = workspace();
    let server = ws.serve_http(&[], &[]);
    let own = server.post(&[("Origin", &format!("http://{}", server.addr))], INITIALIZE);
    assert_eq!(
        own.status, 200,
        "the server's own origin (no page can carry it) is served: {own:?}"
    );
    // A page of another local web app (another port), or of any site, is not.
    for origin in [
        "http://localhost:5173",
        &format!("http://127.0.0.1:{}", server.addr.port() ^ 1),
        "http://evil.example",
    ] {
        let response = server.post(&[("Origin", origin)], INITIALIZE);
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
    for authorization in [
        None,
        Some("Bearer wrong"),
        Some(&format!("Bearer {token}x")[..]),
        Some(&format!("Basic {token}")[..]),
        Some("Bearer "),
    ] {
        let headers: Vec<(&str, &str)> =
            authorization.map(|a| ("Authorization", a)).into_iter().collect();
        let response = post(addr, &headers, INITIALIZE);
        assert_eq!(
            response.status, 401,
            "Authorization: {authorization:?} was served: {response:?}"
        );
    }
    let session = open_session(&server, &[("Authorization", &good)]);
    let without = post(
        addr,
        &[("Mcp-Session-Id", &session), ("MCP-Protocol-Version", "2025-11-25")],
        &write_call("notes/no-token.md"),
    );
    assert_eq!(without.status, 401, "a session id is not a token: {without:?}");
    assert!(!ws.path("notes/no-token.md").exists(), "the tool ran without the token");
    let with =
        on_session(&server, &session, &[("Authorization", &good)], &write_call("notes/token.md"));
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
fn stateless_write(
    server: &HttpServer,
    path: &str,
    answer: Option<(&str, &str)>,
) -> serde_json::Value {
    stateless_write_as(server, "balanced", path, answer)
}

/// [`stateless_write`] from the client that declares itself `client`.
fn stateless_write_as(
    server: &HttpServer,
    client: &str,
    path: &str,
    answer: Option<(&str, &str)>,
) -> serde_json::Value {
    let authorization = server.token.as_ref().map(|_| server.authorization());
    stateless_write_at(server.addr, authorization.as_deref(), client, path, answer).1
}

/// A stateless `tools/call` of `files__write` (protocol 2026-07-28) sent to
/// `addr` — an instance or a balancer in front of several — with
/// `authorization`, from `client`, with `answer` (action, request state)
/// to a confirmation; the response and the call's result.
pub(crate) fn stateless_write_at(
    addr: std::net::SocketAddr,
    authorization: Option<&str>,
    client: &str,
    path: &str,
    answer: Option<(&str, &str)>,
) -> (Response, serde_json::Value) {
    let mut params = serde_json::json!({
        "name": "files__write",
        "arguments": {"path": path, "content": "written after the person said yes"},
        "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}},
            "io.modelcontextprotocol/clientInfo": {"name": client, "version": "1"}
        }
    });
    if let Some((action, state)) = answer {
        params["inputResponses"] =
            serde_json::json!({"confirm": {"action": action, "content": {}}});
        params["requestState"] = serde_json::json!(state);
    }
    let body =
        serde_json::json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": params})
            .to_string();
    let mut headers = vec![
        ("MCP-Protocol-Version", "2026-07-28"),
        ("Mcp-Method", "tools/call"),
        ("Mcp-Name", "files__write"),
    ];
    headers.extend(authorization.map(|value| ("Authorization", value)));
    let response = post(addr, &headers, &body);
    assert_eq!(response.status, 200, "{response:?}");
    let data =
        response.body.lines().find_map(|l| l.strip_prefix("data: ")).unwrap_or(&response.body);
    let message: serde_json::Value =
        serde_json::from_str(data).unwrap_or_else(|e| panic!("{e}: {response:?}"));
    let result = message["result"].clone();
    (response, result)
}

#[test]
fn a_confirmation_asked_by_one_instance_is_answered_at_another_without_sticky_sessions() {
    let policy = "[skills.files]\n\
                  level = \"auto\"\n\
                  read = [\"./docs\"]\n\
                  write = [\"./notes\"]\n\
                  [skills.files.tools.write]\n\
                  level = \"confirm\"\n";
    let ws = Workspace::new(policy, &[guests::SKILL_FILES]);
    let record = ws.path("approvals.db");
    let shared = [
        ("REACH_MCP_STATE_KEY", "the balancer's shared secret"),
        ("REACH_MCP_APPROVALS", record.to_str().unwrap()),
    ];
    let (a, b) = (ws.serve_http(&[], &shared), ws.serve_http(&[], &shared));
    let stranger = ws.serve_http(
        &[],
        &[
            ("REACH_MCP_STATE_KEY", "another secret"),
            ("REACH_MCP_APPROVALS", ws.path("other.db").to_str().unwrap()),
        ],
    );

    let asked = stateless_write(&a, "notes/lb.md", None);
    assert_eq!(asked["resultType"], "input_required", "{asked}");
    let question = &asked["inputRequests"]["confirm"];
    assert_eq!(question["method"], "elicitation/create");
    assert!(question["params"]["message"].as_str().unwrap().contains("notes/lb.md"), "{question}");
    let state = asked["requestState"].as_str().unwrap();
    assert!(!ws.path("notes/lb.md").exists(), "nothing runs before the answer");

    // The retry lands on another instance with the same key: it runs there.
    let done = stateless_write(&b, "notes/lb.md", Some(("accept", state)));
    assert_eq!(done["isError"], false, "{done}");
    assert!(ws.path("notes/lb.md").exists());

    // The sealed state names those arguments: a yes does not carry over to
    // another path, and an instance with another key asks again.
    let moved = stateless_write(&b, "notes/elsewhere.md", Some(("accept", state)));
    assert_eq!(moved["resultType"], "input_required", "{moved}");
    let foreign = stateless_write(&stranger, "notes/lb.md", Some(("accept", state)));
    assert_eq!(foreign["resultType"], "input_required", "{foreign}");
    assert!(!ws.path("notes/elsewhere.md").exists());

    let declined = stateless_write(
        &a,
        "notes/no.md",
        Some((
            "decline",
            stateless_write(&a, "notes/no.md", None)["requestState"].as_str().unwrap(),
        )),
    );
    assert_eq!(declined["structuredContent"]["error_code"], "DENIED", "{declined}");
    assert!(!ws.path("notes/no.md").exists());
}

/// `files.write` needs a person; everything else runs.
const CONFIRM_WRITE: &str = "[skills.files]\n\
    level = \"auto\"\n\
    read = [\"./docs\"]\n\
    write = [\"./notes\"]\n\
    [skills.files.tools.write]\n\
    level = \"confirm\"\n";

/// The audit records of every `reach mcp` in `ws` with `event`, as JSON.
fn audit_records(ws: &Workspace, event: &str) -> Vec<serde_json::Value> {
    let mut records = Vec::new();
    for entry in std::fs::read_dir(ws.path(".reach/runs")).unwrap() {
        let path = entry.unwrap().path();
        // The logs; the journals' folder and the signing key are beside them.
        if path.extension().is_none_or(|e| e != "jsonl") {
            continue;
        }
        let text = std::fs::read_to_string(path).unwrap();
        records.extend(
            text.lines()
                .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
                .filter(|r| r["event"] == event),
        );
    }
    records
}

/// Writes of `path` that ran, as the audit logs record them.
fn writes_run(ws: &Workspace, path: &str) -> usize {
    audit_records(ws, "tool_call")
        .iter()
        .filter(|r| {
            r["tool"] == "files.write" && r["outcome"] == "ok" && r["arguments"]["path"] == path
        })
        .count()
}

#[test]
fn a_request_without_the_token_on_loopback_is_refused_and_nothing_runs() {
    // Regression: on loopback no token was asked for, so any local process
    // could call `auto` tools (and answer its own confirmations).
    let ws = workspace();
    let server = ws.serve_http(&[], &[]);
    let file = ws.path(".reach/mcp-token");
    let token = server
        .token
        .clone()
        .unwrap_or_else(|| panic!("no token in {}; stderr:\n{}", file.display(), server.stderr()));
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        assert_eq!(
            std::fs::metadata(&file).unwrap().permissions().mode() & 0o777,
            0o600,
            "the token is for this user only"
        );
    }
    let stderr = server.stderr();
    assert!(
        stderr.contains("Authorization: Bearer") && stderr.contains(".reach/mcp-token"),
        "says how to configure a client: {stderr}"
    );
    assert!(!stderr.contains(&token), "the token itself is not printed: {stderr}");

    assert_eq!(post(server.addr, &[], INITIALIZE).status, 401);
    let stateless = serde_json::json!({
        "jsonrpc": "2.0",
        "id": 3,
        "method": "tools/call",
        "params": {
            "name": "files__write",
            "arguments": {"path": "notes/no-token.md", "content": "x"},
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {},
                "io.modelcontextprotocol/clientInfo": {"name": "a-local-process", "version": "1"}
            }
        }
    });
    let headers = [
        ("MCP-Protocol-Version", "2026-07-28"),
        ("Mcp-Method", "tools/call"),
        ("Mcp-Name", "files__write"),
    ];
    let refused = post(server.addr, &headers, &stateless.to_string());
    assert_eq!(refused.status, 401, "{refused:?}");
    assert!(!ws.path("notes/no-token.md").exists(), "the tool ran without the token");
    // The same call with the token runs: the token was the reason.
    let with = server.post(&headers, &stateless.to_string());
    assert_eq!(with.status, 200, "{with:?}");
    assert!(ws.path("notes/no-token.md").exists(), "the call with the token did not run: {with:?}");

    // The next start (and any instance in this folder) uses the same token.
    let again = ws.serve_http(&[], &[]);
    assert_eq!(again.token.as_deref(), Some(token.as_str()));
}

#[test]
fn serving_without_a_token_is_an_explicit_choice_for_loopback_only() {
    let ws = workspace();
    let server = ws.serve_http(&["--no-auth"], &[]);
    assert!(server.token.is_none() && !ws.path(".reach/mcp-token").exists(), "no token is made");
    assert!(
        server.stderr().contains("without a bearer token"),
        "warns at start: {}",
        server.stderr()
    );
    assert_eq!(post(server.addr, &[], INITIALIZE).status, 200);

    let out = output_within(
        ws.reach(&["mcp", "--http", "0.0.0.0:0", "--no-auth"]),
        Duration::from_secs(60),
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("REACH_MCP_TOKEN"),
        "off loopback a token is needed whatever was chosen: {stderr}"
    );
}

#[test]
fn a_token_file_that_others_can_read_is_refused() {
    let ws = workspace();
    std::fs::create_dir_all(ws.path(".reach")).unwrap();
    std::fs::write(ws.path(".reach/mcp-token"), "x".repeat(43)).unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        std::fs::set_permissions(
            ws.path(".reach/mcp-token"),
            std::fs::Permissions::from_mode(0o644),
        )
        .unwrap();
    }
    let out = output_within(ws.reach(&["mcp", "--http", "127.0.0.1:0"]), Duration::from_secs(60));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("mcp-token") && stderr.contains("delete it"), "{stderr}");
}

#[test]
fn a_replayed_confirmation_runs_nothing_the_second_time() {
    let ws = Workspace::new(CONFIRM_WRITE, &[guests::SKILL_FILES]);
    let server = ws.serve_http(&[], &[]);
    let asked = stateless_write(&server, "notes/once.md", None);
    let state = asked["requestState"].as_str().unwrap_or_else(|| panic!("{asked}")).to_owned();
    let done = stateless_write(&server, "notes/once.md", Some(("accept", &state)));
    assert_eq!(done["isError"], false, "{done}");
    assert!(ws.path("notes/once.md").exists());
    std::fs::remove_file(ws.path("notes/once.md")).unwrap();

    // Regression: the sealed state had no nonce, so one "accept" replayed
    // without limit.
    let replayed = stateless_write(&server, "notes/once.md", Some(("accept", &state)));
    assert_eq!(replayed["structuredContent"]["error_code"], "DENIED", "{replayed}");
    assert!(
        replayed["structuredContent"]["error"].as_str().unwrap().contains("already used"),
        "{replayed}"
    );
    assert!(!ws.path("notes/once.md").exists(), "the replay wrote the file again");
    assert_eq!(writes_run(&ws, "notes/once.md"), 1, "the audit log shows one write");
    assert!(
        audit_records(&ws, "tool_call").iter().any(|r| r["outcome"] == "refused"
            && r["error"].as_str().unwrap_or("").contains("already used")),
        "the refusal is recorded"
    );
}

#[test]
fn a_confirmation_used_at_one_instance_is_refused_at_another() {
    let ws = Workspace::new(CONFIRM_WRITE, &[guests::SKILL_FILES]);
    let record = ws.path("shared/approvals.db");
    let shared = [
        ("REACH_MCP_STATE_KEY", "the balancer's shared secret"),
        ("REACH_MCP_APPROVALS", record.to_str().unwrap()),
    ];
    let (a, b) = (ws.serve_http(&[], &shared), ws.serve_http(&[], &shared));
    let state =
        stateless_write(&a, "notes/lb-once.md", None)["requestState"].as_str().unwrap().to_owned();
    assert_eq!(stateless_write(&b, "notes/lb-once.md", Some(("accept", &state)))["isError"], false);
    std::fs::remove_file(ws.path("notes/lb-once.md")).unwrap();
    for instance in [&a, &b] {
        let replayed = stateless_write(instance, "notes/lb-once.md", Some(("accept", &state)));
        assert_eq!(replayed["structuredContent"]["error_code"], "DENIED", "{replayed}");
    }
    assert!(
        !ws.path("notes/lb-once.md").exists(),
        "a replay at another instance wrote the file again"
    );
    assert_eq!(writes_run(&ws, "notes/lb-once.md"), 1);
}

#[test]
fn a_shared_state_key_without_a_shared_record_is_refused_at_start() {
    let ws = Workspace::new(CONFIRM_WRITE, &[guests::SKILL_FILES]);
    let mut command = ws.reach(&["mcp", "--http", "127.0.0.1:0"]);
    command.env("REACH_MCP_STATE_KEY", "a shared secret").env_remove("REACH_MCP_APPROVALS");
    let out = output_within(command, Duration::from_secs(60));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "one yes would run once at every instance: {stderr}");
    assert!(stderr.contains("REACH_MCP_APPROVALS"), "names what to set: {stderr}");
}

#[test]
fn a_confirmation_given_to_one_client_is_refused_for_another() {
    let ws = Workspace::new(CONFIRM_WRITE, &[guests::SKILL_FILES]);
    let server = ws.serve_http(&[], &[]);
    let state = stateless_write_as(&server, "the-editor", "notes/theirs.md", None)["requestState"]
        .as_str()
        .unwrap()
        .to_owned();
    // Regression: the state named no client, so another one could use an
    // answer it was never asked for.
    let other =
        stateless_write_as(&server, "another-client", "notes/theirs.md", Some(("accept", &state)));
    assert_eq!(other["structuredContent"]["error_code"], "DENIED", "{other}");
    assert!(
        other["structuredContent"]["error"].as_str().unwrap().contains("another client"),
        "{other}"
    );
    assert!(!ws.path("notes/theirs.md").exists(), "the write ran for a client that was not asked");
    // The client that was asked can still use it.
    let asked =
        stateless_write_as(&server, "the-editor", "notes/theirs.md", Some(("accept", &state)));
    assert_eq!(asked["isError"], false);
    assert!(ws.path("notes/theirs.md").exists());
}

/// A token set by hand for the tests of limits, so that they do not depend
/// on the token the server makes.
const LIMITS_TOKEN: &str = "a-token-for-the-tests-of-limits";

/// Bytes `stream` gets until the server closes it, or `None` when it is
/// still open after `limit`.
fn until_closed(stream: &mut TcpStream, limit: Duration) -> Option<String> {
    stream.set_read_timeout(Some(limit)).unwrap();
    let mut bytes = Vec::new();
    match stream.read_to_end(&mut bytes) {
        Ok(_) => Some(String::from_utf8_lossy(&bytes).into_owned()),
        Err(e)
            if matches!(
                e.kind(),
                std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
            ) =>
        {
            None
        }
        Err(_) => Some(String::from_utf8_lossy(&bytes).into_owned()),
    }
}

#[test]
fn a_slow_loris_header_is_cut_off() {
    let ws = workspace();
    let server = ws.serve_http(&[], &[]);
    let mut stream = TcpStream::connect(server.addr).unwrap();
    stream
        .write_all(format!("POST /mcp HTTP/1.1\r\nHost: {}\r\nX-Slow: ", server.addr).as_bytes())
        .unwrap();
    let started = Instant::now();
    // Regression: a connection that never finished its headers was held forever.
    let closed = until_closed(&mut stream, Duration::from_secs(25));
    assert!(
        closed.is_some(),
        "a connection whose headers never end is still open after {:?}",
        started.elapsed()
    );
    assert!(
        started.elapsed() >= Duration::from_secs(9),
        "cut off after {:?}, before the 10 s allowed",
        started.elapsed()
    );
}

#[test]
fn a_slow_body_is_cut_off() {
    let ws = workspace();
    let server = ws.serve_http(&[], &[("REACH_MCP_TOKEN", LIMITS_TOKEN)]);
    let mut stream = TcpStream::connect(server.addr).unwrap();
    let head = format!(
        "POST /mcp HTTP/1.1\r\n\
         Host: {}\r\n\
         Authorization: {}\r\n\
         Content-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\n\
         Content-Length: 1000\r\n\
         \r\n\
         {{\"jsonrpc\"",
        server.addr,
        server.authorization()
    );
    stream.write_all(head.as_bytes()).unwrap();
    let started = Instant::now();
    let answer = until_closed(&mut stream, Duration::from_secs(50)).unwrap_or_else(|| {
        panic!("a body that never arrives held the connection for {:?}", started.elapsed())
    });
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
    assert!(answer.contains("did not arrive within 30 s"), "{answer}");
}

#[test]
fn an_oversize_body_gets_413_without_being_read() {
    let ws = workspace();
    let server = ws.serve_http(&[], &[("REACH_MCP_TOKEN", LIMITS_TOKEN)]);
    // Declared too large: refused on the header alone.
    let mut stream = TcpStream::connect(server.addr).unwrap();
    let head = format!(
        "POST /mcp HTTP/1.1\r\n\
         Host: {}\r\n\
         Authorization: {}\r\n\
         Content-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\n\
         Content-Length: {}\r\n\
         Connection: close\r\n\
         \r\n",
        server.addr,
        server.authorization(),
        64 * 1024 * 1024
    );
    stream.write_all(head.as_bytes()).unwrap();
    let answer = until_closed(&mut stream, Duration::from_secs(20)).expect("answered at once");
    assert!(answer.starts_with("HTTP/1.1 413"), "{answer}");
    assert!(answer.contains("over 4 MiB"), "says the limit: {answer}");
}

#[test]
fn the_session_past_the_cap_is_refused() {
    let ws = workspace();
    let server = ws.serve_http(&[], &[]);
    let sessions: Vec<String> = (0..256).map(|_| open_session(&server, &[])).collect();
    // Regression: sessions were opened as long as clients asked.
    let refused = server.post(&[], INITIALIZE);
    assert_eq!(refused.status, 503, "{refused:?}");
    assert!(refused.body.contains("256 MCP sessions are open"), "{refused:?}");
    // Open sessions still work, and closing one makes room.
    let listed =
        on_session(&server, &sessions[0], &[], r#"{"jsonrpc":"2.0","id":5,"method":"tools/list"}"#);
    assert_eq!(listed.status, 200, "{listed:?}");
    let mut delete = TcpStream::connect(server.addr).unwrap();
    let request = format!(
        "DELETE /mcp HTTP/1.1\r\n\
         Host: {}\r\n\
         Authorization: {}\r\n\
         Mcp-Session-Id: {}\r\n\
         MCP-Protocol-Version: 2025-11-25\r\n\
         Connection: close\r\n\
         \r\n",
        server.addr,
        server.authorization(),
        sessions[1]
    );
    delete.write_all(request.as_bytes()).unwrap();
    let deleted = until_closed(&mut delete, Duration::from_secs(20)).expect("answered");
    assert!(deleted.starts_with("HTTP/1.1 2"), "{deleted}");
    assert_eq!(server.post(&[], INITIALIZE).status, 200);
}

#[test]
fn the_mcp_audit_log_goes_on_in_a_new_file_past_its_size() {
    let ws = workspace();
    let server = ws.serve_http(&[], &[]);
    let session = open_session(&server, &[]);
    // Each refused call (an unknown tool) is recorded with its arguments:
    // ~3.5 MB a record, 20 of them pass the 64 MiB of a part.
    let pad = "y".repeat(3_500_000);
    for i in 0..20 {
        let call = serde_json::json!({
            "jsonrpc": "2.0", "id": 10 + i, "method": "tools/call",
            "params": {"name": "files__nope", "arguments": {"pad": pad}}
        });
        let response = on_session(&server, &session, &[], &call.to_string());
        assert_eq!(response.status, 200, "{}", &response.body[..response.body.len().min(300)]);
    }
    let runs = ws.path(".reach/runs");
    let mut files: Vec<String> = std::fs::read_dir(&runs)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.ends_with(".jsonl"))
        .collect();
    files.sort();
    // Regression: one file per server, growing without bound.
    assert_eq!(files.len(), 2, "{files:?}");
    let first = std::fs::read_to_string(runs.join(&files[0])).unwrap();
    let id = files[0].strip_suffix(".jsonl").unwrap();
    assert_eq!(files[1], format!("{id}.part2.jsonl"));
    assert!(
        first.len() <= 64 * 1024 * 1024 + 4096,
        "the first part stops at 64 MiB: {}",
        first.len()
    );
    let last: serde_json::Value = serde_json::from_str(first.lines().last().unwrap()).unwrap();
    assert_eq!(last["event"], "log_rotated");
    assert_eq!(last["next"], files[1]);
    let second = std::fs::read_to_string(runs.join(&files[1])).unwrap();
    let opening: serde_json::Value = serde_json::from_str(second.lines().next().unwrap()).unwrap();
    assert_eq!(opening["event"], "log_continued");
    assert_eq!(opening["previous"], files[0]);
    assert_eq!(
        opening["run_started"]["kind"], "mcp",
        "each part says what it is the log of: {}",
        opening["run_started"]
    );

    // `reach runs` sees one server, shown across both files.
    let listed = output_within(ws.reach(&["runs", "list", "--json"]), Duration::from_secs(60));
    let listed: serde_json::Value = serde_json::from_slice(&listed.stdout).unwrap();
    let rows = listed["runs"].as_array().unwrap();
    assert_eq!(rows.len(), 1, "{listed}");
    assert_eq!(rows[0]["run_id"], id);
    assert_eq!(rows[0]["parts"].as_array().map(Vec::len), Some(2));
    let shown = output_within(ws.reach(&["runs", "show", id]), Duration::from_secs(60));
    let shown = String::from_utf8_lossy(&shown.stdout);
    assert_eq!(shown.matches("[refused]").count(), 20, "every call of both parts is shown");
    assert!(
        shown.contains("goes on in") && shown.contains("continued from"),
        "{}",
        &shown[..shown.len().min(2000)]
    );
}

/// One `tools/call` of `echo` on `session`, written on `stream` (kept alive); the time from
/// sending it to the end of its answer's stream.
fn echo_on(stream: &mut TcpStream, server: &HttpServer, session: &str) -> Duration {
    let body = r#"{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"echo__echo","arguments":{"a":1}}}"#;
    let request = format!(
        "POST /mcp HTTP/1.1\r\n\
         Host: {}\r\n\
         Authorization: {}\r\n\
         Content-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\n\
         Mcp-Session-Id: {session}\r\n\
         MCP-Protocol-Version: 2025-11-25\r\n\
         Content-Length: {}\r\n\
         \r\n\
         {body}",
        server.addr,
        server.authorization(),
        body.len()
    );
    let sent = Instant::now();
    stream.write_all(request.as_bytes()).unwrap();
    let mut answer = Vec::new();
    let mut buffer = [0u8; 4096];
    // The answer is an event stream in chunks: it ends with the empty chunk.
    while !answer.ends_with(b"\r\n0\r\n\r\n") {
        let n = stream.read(&mut buffer).unwrap();
        assert!(n > 0, "closed mid-answer: {}", String::from_utf8_lossy(&answer));
        answer.extend_from_slice(&buffer[..n]);
    }
    let took = sent.elapsed();
    let text = String::from_utf8_lossy(&answer);
    assert!(text.starts_with("HTTP/1.1 200") && text.contains(r#"\"a\":1"#), "{text}");
    took
}

#[test]
fn calls_on_a_kept_alive_connection_are_not_held_back_by_delayed_acks() {
    let ws = Workspace::new(crate::support::mcp::POLICY, &[guests::TEST_SKILL_ECHO]);
    let server = ws.serve_http(&[], &[]);
    let session = open_session(&server, &[]);
    let mut stream = TcpStream::connect(server.addr).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    let mut took: Vec<Duration> =
        (0..15).map(|_| echo_on(&mut stream, &server, &session)).collect();
    took.sort();
    // Regression: with Nagle's algorithm on the server's sockets, the end of each answer
    // waited for the client's delayed acknowledgement: 40 ms or more a call, every call,
    // where the call itself takes about a millisecond.
    assert!(took[7] < Duration::from_millis(30), "median {:?} of {took:?}", took[7]);
}
