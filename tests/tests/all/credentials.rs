//! Credentials the host adds at egress: the `http_api` skill against a real
//! recording server on 127.0.0.1. The server sees the secret; the skill, its
//! result and the model never do.

use agent_reach::ErrorCode;
use agent_reach_tests::guests;
use agent_reach_tests::recorder::Recorder;
use agent_reach_tests::{Workspace, call};
use serde_json::{Value, json};

const SECRET: &str = "s3cr3t-tok-9f8e7d6c";

/// A workspace with `http_api` and `probe`, the secret in a file, and a
/// table that binds it to `server` with `inject` (TOML lines).
fn setup(server: &Recorder, inject: &str, extra: &str) -> (Workspace, String) {
    let ws = Workspace::new();
    ws.install(guests::SKILL_HTTP_API).install(guests::TEST_SKILL_PROBE);
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
    let (ws, policy) =
        setup(&server, "header = \"Authorization\"\nprefix = \"Bearer \"\nallow_http = true", "");
    let host = ws.host(&policy).await;
    let out =
        call(&host, "http_api.request", json!({"method": "GET", "url": server.url("/v1/me")}))
            .await
            .expect("request");

    let heads = server.heads();
    assert_eq!(heads.len(), 1);
    assert!(
        heads[0].contains(&format!("authorization: Bearer {SECRET}")),
        "the server got the credential: {}",
        heads[0]
    );

    assert!(!out.contains(SECRET), "the result must not carry the secret: {out}");
    let reply = parse(&out);
    assert_eq!(reply["status"], 200);
    assert_eq!(reply["credential"], true, "the skill may know a credential is configured");
    let echoed = reply["body"]["head"].as_str().expect("echoed head");
    assert!(echoed.contains("authorization: [REDACTED]"), "the echo is masked: {echoed}");
    assert!(
        reply["sent"]["headers"].get("authorization").is_none(),
        "the skill sent no credential itself: {out}"
    );
    assert!(out.contains("\n  \"status\": 200"), "pretty-printed: {out}");
}

#[tokio::test]
async fn a_query_credential_is_appended_and_masked() {
    let server = Recorder::start();
    let (ws, policy) = setup(&server, "query = \"api_key\"\nallow_http = true", "");
    let host = ws.host(&policy).await;
    let out = call(
        &host,
        "http_api.request",
        json!({"method": "GET", "url": server.url("/search?q=rust")}),
    )
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
    let out = call(
        &host,
        "http_api.request",
        json!({"method": "GET", "url": server.url(&format!("/redirect?to={target}"))}),
    )
    .await
    .expect("request");
    assert!(
        server.heads()[0].contains(&format!("x-api-key: {SECRET}")),
        "first hop is the bound host"
    );
    let second = &other.heads()[0];
    assert!(second.starts_with("GET /landing "), "{second}");
    assert!(
        !second.to_ascii_lowercase().contains("x-api-key"),
        "no credential for another host: {second}"
    );
    assert!(!second.contains(SECRET));
    assert_eq!(parse(&out)["url"], target);
}

#[tokio::test]
async fn plain_http_does_not_get_the_credential_without_allow_http() {
    let server = Recorder::start();
    let (ws, policy) = setup(&server, "header = \"Authorization\"\nprefix = \"Bearer \"", "");
    let host = ws.host(&policy).await;
    let out = call(&host, "http_api.request", json!({"method": "GET", "url": server.url("/")}))
        .await
        .expect("request");
    let head = &server.heads()[0];
    assert!(
        !head.to_ascii_lowercase().contains("authorization"),
        "http without allow_http: {head}"
    );
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
    let out = call(&host, "http_api.request", json!({"method": "GET", "url": server.url("/")}))
        .await
        .expect("request");
    assert_eq!(parse(&out)["credential"], true);
    // probe reaches the same host without any credential being added.
    call(&host, "probe.fetch", json!({"url": server.url("/probe")})).await.expect("probe fetch");
    let probe_head =
        server.heads().into_iter().find(|h| h.starts_with("GET /probe ")).expect("probe request");
    assert!(
        !probe_head.to_ascii_lowercase().contains("authorization"),
        "credentials are per skill: {probe_head}"
    );
}

#[tokio::test]
async fn a_missing_secret_refuses_the_request_and_names_the_source() {
    let server = Recorder::start();
    let (ws, policy) = setup(&server, "header = \"Authorization\"\nallow_http = true", "");
    std::fs::remove_file(ws.path("secrets/token")).expect("remove secret");
    let host = ws.host(&policy).await;
    let err = call(&host, "http_api.request", json!({"method": "GET", "url": server.url("/")}))
        .await
        .unwrap_err();
    assert_eq!(err.code, ErrorCode::Denied, "{err}");
    assert!(
        err.message.contains("secrets/token") && err.message.contains("cannot be read"),
        "{err}"
    );
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
        json!({
            "method": "GET", "url": server.url("/"), "headers": {"Authorization": "Bearer made-up"}
        }),
    )
    .await
    .unwrap_err();
    assert_eq!(err.code, ErrorCode::InvalidArgs, "{err}");
    assert!(err.message.contains("added by the host"), "{err}");
    let err = call(
        &host,
        "http_api.request",
        json!({"method": "GET", "url": server.url("/?api_key=guess")}),
    )
    .await
    .unwrap_err();
    assert_eq!(err.code, ErrorCode::InvalidArgs, "{err}");
    assert!(server.heads().is_empty());
}

#[tokio::test]
async fn a_url_with_a_user_name_or_password_is_refused_and_never_repeated() {
    // Regression: the SDK dropped the user info, sent the request, and the
    // reply's `url` and `sent.url` carried the password.
    let server = Recorder::start();
    let (ws, policy) = setup(&server, "header = \"Authorization\"\nallow_http = true", "");
    let host = ws.host(&policy).await;
    let password = "hunter2-Xq7";
    let url = format!("http://admin:{password}@{}/v1/me", server.addr);
    let err =
        call(&host, "http_api.request", json!({"method": "GET", "url": url})).await.unwrap_err();
    assert_eq!(err.code, ErrorCode::Denied, "{err}");
    assert!(
        err.message.contains("user name or password (user:pass@host), which is refused"),
        "the host's words: {err}"
    );
    assert!(!err.message.contains(password), "never repeats the password: {err}");
    let invalid = format!("http://admin:{password}@{}:notaport/", server.addr);
    let err = call(&host, "http_api.request", json!({"method": "GET", "url": invalid}))
        .await
        .unwrap_err();
    assert_eq!(err.code, ErrorCode::InvalidArgs, "{err}");
    assert!(!err.message.contains(password), "not in an invalid-URL message either: {err}");
    assert!(server.heads().is_empty(), "nothing was sent: {:?}", server.heads());
}

#[tokio::test]
async fn json_bodies_and_extra_headers_are_sent() {
    let server = Recorder::start();
    let (ws, policy) = setup(&server, "header = \"Authorization\"\nallow_http = true", "");
    let host = ws.host(&policy).await;
    let out = call(
        &host,
        "http_api.request",
        json!({
            "method": "POST", "url": server.url("/v1/items"), "body": {"name": "report"},
            "headers": {"X-Trace": "abc"}
        }),
    )
    .await
    .expect("request");
    let head = &server.heads()[0];
    assert!(head.starts_with("POST /v1/items "), "{head}");
    assert!(
        head.contains("content-type: application/json") && head.contains("x-trace: abc"),
        "{head}"
    );
    let err = call(
        &host,
        "http_api.request",
        json!({"method": "GET", "url": server.url("/"), "body": {"a": 1}}),
    )
    .await
    .unwrap_err();
    assert_eq!(err.code, ErrorCode::InvalidArgs, "GET with a body: {err}");
    let err = call(&host, "http_api.request", json!({"method": "FETCH", "url": server.url("/")}))
        .await
        .unwrap_err();
    assert_eq!(err.code, ErrorCode::InvalidArgs, "{err}");
    assert!(
        err.message.contains("/method") && err.message.contains("\"GET\""),
        "names the field and the choices: {err}"
    );
    assert_eq!(parse(&out)["sent"]["method"], "POST");
}

// --- what a server can hand back, read by `probe` over raw wasi:http. Its
// `held_hex` is every byte the skill received, so these tests see what the
// skill held, not what the host's last net (masking the result) let out.

/// A secret with the characters encoders treat differently.
const ODD_SECRET: &str = "tok/9f+8e 7d&q=s3cr3t";

/// A workspace where `probe` has a credential for `server`: header
/// `Authorization: Bearer <secret>`, over plain http (loopback test host).
async fn probe_with_credential(server: &Recorder, secret: &str) -> (Workspace, agent_reach::Host) {
    let ws = Workspace::new();
    ws.install(guests::TEST_SKILL_PROBE);
    let file = ws.write("secrets/token", &format!("{secret}\n"));
    let policy = format!(
        "[skills.probe]\n\
         level = \"auto\"\n\
         net = [\"{addr}\"]\n\n\
         [[skills.probe.credentials]]\n\
         host = \"{addr}\"\n\
         file = \"{file}\"\n\
         header = \"Authorization\"\n\
         prefix = \"Bearer \"\n\
         allow_http = true\n",
        addr = server.addr,
        file = file.display(),
    );
    let host = ws.host(&policy).await;
    (ws, host)
}

async fn raw(
    host: &agent_reach::Host,
    server: &Recorder,
    path: &str,
    headers: Value,
) -> Result<Value, agent_reach::ToolFailure> {
    let args = json!({
        "scheme": "http", "authority": server.addr.to_string(), "path": path, "headers": headers
    });
    call(host, "probe.raw", args).await.map(|out| parse(&out))
}

/// `probe`, holding a credential whose value is `secret`, sends GET `path`
/// with `headers` to a fresh recording server.
async fn probe_echo(
    secret: &str,
    path: &str,
    headers: Value,
) -> (Recorder, Result<Value, agent_reach::ToolFailure>) {
    let server = Recorder::start();
    let (_ws, host) = probe_with_credential(&server, secret).await;
    let reply = raw(&host, &server, path, headers).await;
    (server, reply)
}

/// What the skill held (the raw reply's `held_hex`, decoded), after
/// checking that `secret` is not in it.
fn held_without(reply: &Value, secret: &str) -> String {
    let hex = reply["held_hex"].as_str().expect("held_hex");
    let bytes: Vec<u8> = (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).expect("hex"))
        .collect();
    let held = String::from_utf8_lossy(&bytes).into_owned();
    assert!(!held.contains(secret), "the skill held the secret: {held}");
    held
}

#[tokio::test]
async fn a_credentialed_request_asks_for_an_uncompressed_answer_and_gets_it_masked() {
    let (server, reply) = probe_echo(SECRET, "/gzip", json!({"accept-encoding": "gzip, br"})).await;
    let head = &server.heads()[0];
    let asked: Vec<&str> =
        head.lines().filter(|l| l.to_ascii_lowercase().starts_with("accept-encoding:")).collect();
    assert_eq!(asked, ["accept-encoding: identity"], "the host decides the encoding: {head}");
    let held = held_without(&reply.expect("raw"), SECRET);
    // The value as sent, prefix and all, is one mask.
    assert!(held.contains("authorization: [REDACTED]\\r\\n"), "a readable, masked echo: {held}");
}

#[tokio::test]
async fn a_compressed_answer_to_a_credentialed_request_is_refused() {
    // Regression: a gzip body went to the skill as it came; the mask cannot
    // see into it, and the skill can decompress it.
    let (server, reply) = probe_echo(SECRET, "/gzip-always", json!({})).await;
    let err = reply.unwrap_err();
    assert!(err.message.contains("HttpResponseContentCoding"), "{err}");
    assert!(
        err.message.contains("content-encoding: gzip")
            && err.message.contains("an encoded body cannot be"),
        "the denial says why: {err}"
    );
    assert_eq!(server.heads().len(), 1);
    // Without a credential nothing needs masking, and compression is the skill's business.
    let ws = Workspace::new();
    ws.install(guests::TEST_SKILL_PROBE);
    let plain =
        ws.host(&format!("[skills.probe]\nlevel = \"auto\"\nnet = [\"{}\"]\n", server.addr)).await;
    let reply =
        raw(&plain, &server, "/gzip-always", json!({})).await.expect("no credential, no refusal");
    assert_eq!(reply["status"], 200);
}

#[tokio::test]
async fn a_secret_in_a_header_value_that_is_not_ascii_is_masked() {
    // Regression: only visible-ASCII header values were masked; `é <secret>`
    // reached the skill as it was.
    let (_server, reply) = probe_echo(SECRET, "/raw-header", json!({})).await;
    let held = held_without(&reply.expect("raw"), SECRET);
    assert!(held.contains("x-echo-raw: \u{e9} [REDACTED] \u{fc}"), "{held}");
}

#[tokio::test]
async fn a_secret_in_a_trailer_is_masked() {
    // Regression: trailer frames passed through the masking body untouched.
    let (_server, reply) = probe_echo(SECRET, "/trailers", json!({})).await;
    let reply = reply.expect("raw");
    assert_eq!(reply["body"], "ok");
    held_without(&reply, SECRET);
    assert_eq!(reply["trailers"], json!([["x-echo-trailer", "[REDACTED]"]]), "{reply}");
}

#[tokio::test]
async fn every_spelling_of_an_echoed_secret_is_masked() {
    // Regression: only the exact value, the value with its prefix and one
    // percent-encoding were masked; JSON's `\/`, lower-case hex, a form's
    // `+` and base64 (`Basic user:…`) reached the skill.
    use agent_reach_tests::recorder::{base64, percent};
    let (_server, reply) = probe_echo(ODD_SECRET, "/encoded", json!({})).await;
    let reply = reply.expect("raw");
    let held = held_without(&reply, ODD_SECRET);
    let body: Value = serde_json::from_str(reply["body"].as_str().expect("body"))
        .expect("the masked body is still JSON");
    for key in ["json", "percent", "lower", "form", "html", "basic", "basic_url"] {
        assert!(body[key].as_str().is_some_and(|v| v.contains("[REDACTED]")), "{key}: {body}");
    }
    // The secret sits at byte 12 of `user:Bearer <secret>`, a multiple of 3:
    // its base64 starts on a character boundary.
    let basic_core = |url| {
        let encoded = base64(format!("user:Bearer {ODD_SECRET}").as_bytes(), url);
        encoded[16..16 + ODD_SECRET.len() * 8 / 6].to_owned()
    };
    for spelled in [
        ODD_SECRET.to_owned(),
        ODD_SECRET.replace('/', "\\/"),
        percent(ODD_SECRET, true, false),
        percent(ODD_SECRET, false, false),
        percent(ODD_SECRET, true, true),
        ODD_SECRET.replace('&', "&amp;"),
        basic_core(false),
        basic_core(true),
    ] {
        assert!(!held.contains(&spelled), "{spelled:?} reached the skill: {held}");
    }
}
