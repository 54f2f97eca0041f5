//! Credentials the host adds at egress: the `http_api` skill against a real
//! recording server on 127.0.0.1. The server sees the secret; the skill, its
//! result and the model never do.

use agent_reach::ErrorCode;
use agent_reach_tests::recorder::Recorder;
use agent_reach_tests::{Workspace, call};
use serde_json::{Value, json};

const SECRET: &str = "s3cr3t-tok-9f8e7d6c";

/// A workspace with `http_api` and `probe`, the secret in a file, and a
/// table that binds it to `server` with `inject` (TOML lines).
fn setup(server: &Recorder, inject: &str, extra: &str) -> (Workspace, String) {
    let ws = Workspace::new();
    ws.install("skill-http-api").install("test-skill-probe");
    let secret = ws.write("secrets/token", &format!("{SECRET}\n"));
    let policy = format!(
        r#"
[skills.http_api]
level = "auto"
net = ["{addr}"{extra}]

[[skills.http_api.credentials]]
host = "{addr}"
file = "{secret}"
{inject}

[skills.probe]
level = "auto"
net = ["{addr}"]
"#,
        addr = server.addr,
        secret = secret.display(),
    );
    (ws, policy)
}

fn parse(out: &str) -> Value {
    serde_json::from_str(out).unwrap_or_else(|e| panic!("not JSON ({e}): {out}"))
}

#[tokio::test]
async fn the_host_adds_the_header_and_the_skill_sees_it_masked() {
    let server = Recorder::start();
    let (ws, policy) = setup(&server, "header = \"Authorization\"\nprefix = \"Bearer \"\nallow_http = true", "");
    let host = ws.host(&policy).await;
    let out = call(&host, "http_api.request", json!({"method": "GET", "url": server.url("/v1/me")})).await.expect("request");

    let heads = server.heads();
    assert_eq!(heads.len(), 1);
    assert!(heads[0].contains(&format!("authorization: Bearer {SECRET}")), "the server got the credential: {}", heads[0]);

    assert!(!out.contains(SECRET), "the result must not carry the secret: {out}");
    let reply = parse(&out);
    assert_eq!(reply["status"], 200);
    assert_eq!(reply["credential"], true, "the skill may know a credential is configured");
    let echoed = reply["body"]["head"].as_str().expect("echoed head");
    assert!(echoed.contains("authorization: [REDACTED]"), "the echo is masked: {echoed}");
    assert!(reply["sent"]["headers"].get("authorization").is_none(), "the skill sent no credential itself: {out}");
    assert!(out.contains("\n  \"status\": 200"), "pretty-printed: {out}");
}

#[tokio::test]
async fn a_query_credential_is_appended_and_masked() {
    let server = Recorder::start();
    let (ws, policy) = setup(&server, "query = \"api_key\"\nallow_http = true", "");
    let host = ws.host(&policy).await;
    let out = call(&host, "http_api.request", json!({"method": "GET", "url": server.url("/search?q=rust")}))
        .await
        .expect("request");
    let head = &server.heads()[0];
    assert!(head.starts_with(&format!("GET /search?q=rust&api_key={SECRET} ")), "{head}");
    assert!(!out.contains(SECRET), "{out}");
    assert_eq!(parse(&out)["body"]["path"], "/search?q=rust&api_key=[REDACTED]");
}

#[tokio::test]
async fn a_redirect_to_another_host_does_not_carry_the_credential() {
    let server = Recorder::start();
    let other = Recorder::start();
    let extra = format!(", \"{}\"", other.addr);
    let (ws, policy) = setup(&server, "header = \"X-Api-Key\"\nallow_http = true", &extra);
    let host = ws.host(&policy).await;
    let target = other.url("/landing");
    let out = call(&host, "http_api.request", json!({"method": "GET", "url": server.url(&format!("/redirect?to={target}"))}))
        .await
        .expect("request");
    assert!(server.heads()[0].contains(&format!("x-api-key: {SECRET}")), "first hop is the bound host");
    let second = &other.heads()[0];
    assert!(second.starts_with("GET /landing "), "{second}");
    assert!(!second.to_ascii_lowercase().contains("x-api-key"), "no credential for another host: {second}");
    assert!(!second.contains(SECRET));
    assert_eq!(parse(&out)["url"], target);
}

#[tokio::test]
async fn plain_http_does_not_get_the_credential_without_allow_http() {
    let server = Recorder::start();
    let (ws, policy) = setup(&server, "header = \"Authorization\"\nprefix = \"Bearer \"", "");
    let host = ws.host(&policy).await;
    let out = call(&host, "http_api.request", json!({"method": "GET", "url": server.url("/")})).await.expect("request");
    let head = &server.heads()[0];
    assert!(!head.to_ascii_lowercase().contains("authorization"), "http without allow_http: {head}");
    assert!(!head.contains(SECRET));
    assert_eq!(parse(&out)["status"], 200);
}

#[tokio::test]
async fn the_skill_cannot_read_the_secret_and_only_learns_the_host() {
    let server = Recorder::start();
    let (ws, policy) = setup(&server, "header = \"Authorization\"\nallow_http = true", "");
    let host = ws.host(&policy).await;
    // The probe skill has no credential: it sees neither variable.
    let env = parse(&call(&host, "probe.env_all", json!({})).await.expect("env"));
    assert_eq!(env, json!({}), "probe has no environment");
    // A skill with a credential sees only where one is configured.
    let out = call(&host, "http_api.request", json!({"method": "GET", "url": server.url("/")})).await.expect("request");
    assert_eq!(parse(&out)["credential"], true);
    // probe reaches the same host without any credential being added.
    call(&host, "probe.fetch", json!({"url": server.url("/probe")})).await.expect("probe fetch");
    let probe_head = server.heads().into_iter().find(|h| h.starts_with("GET /probe ")).expect("probe request");
    assert!(!probe_head.to_ascii_lowercase().contains("authorization"), "credentials are per skill: {probe_head}");
}

#[tokio::test]
async fn a_missing_secret_refuses_the_request_and_names_the_source() {
    let server = Recorder::start();
    let (ws, policy) = setup(&server, "header = \"Authorization\"\nallow_http = true", "");
    std::fs::remove_file(ws.path("secrets/token")).expect("remove secret");
    let host = ws.host(&policy).await;
    let err = call(&host, "http_api.request", json!({"method": "GET", "url": server.url("/")})).await.unwrap_err();
    assert_eq!(err.code, ErrorCode::Denied, "{err}");
    assert!(err.message.contains("secrets/token") && err.message.contains("cannot be read"), "{err}");
    assert!(server.heads().is_empty(), "nothing was sent without the credential");
}

#[tokio::test]
async fn a_model_cannot_pass_its_own_credentials() {
    let server = Recorder::start();
    let (ws, policy) = setup(&server, "header = \"Authorization\"\nallow_http = true", "");
    let host = ws.host(&policy).await;
    let err = call(
        &host,
        "http_api.request",
        json!({"method": "GET", "url": server.url("/"), "headers": {"Authorization": "Bearer made-up"}}),
    )
    .await
    .unwrap_err();
    assert_eq!(err.code, ErrorCode::InvalidArgs, "{err}");
    assert!(err.message.contains("added by the host"), "{err}");
    let err = call(&host, "http_api.request", json!({"method": "GET", "url": server.url("/?api_key=guess")})).await.unwrap_err();
    assert_eq!(err.code, ErrorCode::InvalidArgs, "{err}");
    assert!(server.heads().is_empty());
}

#[tokio::test]
async fn json_bodies_and_extra_headers_are_sent() {
    let server = Recorder::start();
    let (ws, policy) = setup(&server, "header = \"Authorization\"\nallow_http = true", "");
    let host = ws.host(&policy).await;
    let out = call(
        &host,
        "http_api.request",
        json!({"method": "POST", "url": server.url("/v1/items"), "body": {"name": "report"}, "headers": {"X-Trace": "abc"}}),
    )
    .await
    .expect("request");
    let head = &server.heads()[0];
    assert!(head.starts_with("POST /v1/items "), "{head}");
    assert!(head.contains("content-type: application/json") && head.contains("x-trace: abc"), "{head}");
    let err = call(&host, "http_api.request", json!({"method": "GET", "url": server.url("/"), "body": {"a": 1}})).await.unwrap_err();
    assert_eq!(err.code, ErrorCode::InvalidArgs, "GET with a body: {err}");
    let err = call(&host, "http_api.request", json!({"method": "FETCH", "url": server.url("/")})).await.unwrap_err();
    assert_eq!(err.code, ErrorCode::InvalidArgs, "{err}");
    assert!(err.message.contains("/method") && err.message.contains("\"GET\""), "names the field and the choices: {err}");
    assert_eq!(parse(&out)["sent"]["method"], "POST");
}
