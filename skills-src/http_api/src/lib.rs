//! The `http_api` skill: call JSON HTTP APIs on the hosts the operator
//! granted, with credentials the host adds at egress.
//!
//! The skill never holds a credential. The operator binds a secret to a host
//! in `reach.toml` (`[[skills.http_api.credentials]]`); the host adds it to
//! requests to that host over https and masks it in responses. All this
//! skill can learn is *whether* a host has one
//! ([`agent_reach_sdk::http::credential_configured`]), which it reports so a
//! model can tell "no key configured" from "key rejected".

use agent_reach_sdk::http::{self, credential_configured};
use agent_reach_sdk::prelude::*;
use serde_json::{Value, json};
use std::collections::BTreeMap;

mod reply;

/// For the model choosing among skills.
const DESCRIPTION: &str = "Call JSON HTTP APIs (REST endpoints) on hosts the operator granted: \
GET, POST, PUT, PATCH, DELETE with a JSON body and extra headers. API keys are added by the host \
for hosts the operator configured; never pass them yourself. For web pages meant for people use \
the `web` skill instead.";

/// Shown when a model asks for this skill.
const INSTRUCTIONS: &str = r#"# Calling HTTP APIs

- **Authentication is not your job.** The operator binds API keys to hosts; the host adds the
  key to requests to that host over https. Never put `Authorization`, `Cookie` or API-key
  headers or query parameters in a request: they are refused. The result's `credential` field
  says whether the host has a key for this URL's host — if it is `false` and the API answers
  401/403, tell the user a key must be configured; do not guess one.
- **Hosts** must be granted in the permission table (`net`); a `denied` error names what is
  allowed. Redirects are followed (up to 5), each hop checked again; a key is never sent to
  a host it was not bound to.
- **Bodies:** `body` is any JSON value and is sent as `application/json`. Responses that are
  JSON come back parsed in `body`; anything else as text. Big responses are cut at
  `max_bytes` (default 32 KiB) with `truncated: true` — ask the API for fewer items
  (pagination, filters) rather than raising the cap.
- **Errors from the API** (4xx/5xx) are results, not failures: read `status` and `body`.
"#;

/// Headers the skill refuses to send: credentials are the host's job, and
/// these would either leak a model-invented secret or fight the host's.
const REFUSED_HEADERS: &[&str] =
    &["authorization", "proxy-authorization", "cookie", "x-api-key", "api-key"];

/// Query parameters refused for the same reason.
const REFUSED_QUERY: &[&str] = &["api_key", "apikey", "access_token", "token", "key"];

/// Default and largest response body returned.
const DEFAULT_MAX_BYTES: usize = 32 * 1024;
const MAX_MAX_BYTES: usize = 1024 * 1024;

// Variants carry no doc comments on purpose: schemars then emits a plain
// `enum` of names, whose validation error lists them.
/// An HTTP method, upper case.
#[derive(Clone, Copy, Debug, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "UPPERCASE")]
enum Method {
    Get,
    Post,
    Put,
    Patch,
    Delete,
    Head,
}

impl Method {
    fn as_str(self) -> &'static str {
        match self {
            Method::Get => "GET",
            Method::Post => "POST",
            Method::Put => "PUT",
            Method::Patch => "PATCH",
            Method::Delete => "DELETE",
            Method::Head => "HEAD",
        }
    }
}

/// Arguments of `request`.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct RequestArgs {
    /// HTTP method, upper case: GET (read), POST (create or act), PUT (replace),
    /// PATCH (change part), DELETE (remove) or HEAD (headers only).
    method: Method,
    /// The full URL, `https://host/path?query`.
    url: String,
    /// JSON body, sent as `application/json` (not allowed with GET or HEAD).
    #[serde(default)]
    body: Option<Value>,
    /// Extra request headers; leave this out unless the API's documentation
    /// asks for a header. No `Authorization`, `Cookie` or API-key headers: the
    /// host adds credentials.
    #[serde(default)]
    headers: BTreeMap<String, String>,
    /// Most response bytes to return (default 32768, at most 1048576).
    #[serde(default)]
    max_bytes: Option<usize>,
}

/// The reply is pretty-printed: API responses are read by a model, and
/// indentation makes nesting legible at a small cost in length.
fn request(args: RequestArgs) -> Result<String, ToolError> {
    // Messages quote the URL without its user info: `user:pass@` is refused
    // (by the SDK before sending, and by the host), never repeated.
    let shown = http::redact_url(&args.url);
    let url = url::Url::parse(&args.url).map_err(|e| {
        ToolError::invalid_arguments(format!("url {shown:?} is not a valid URL: {e}"))
    })?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(ToolError::invalid_arguments(format!(
            "url {shown:?}: only http and https are supported"
        )));
    }
    if let Some((name, _)) =
        url.query_pairs().find(|(k, _)| REFUSED_QUERY.contains(&k.to_ascii_lowercase().as_str()))
    {
        return Err(ToolError::invalid_arguments(format!(
            "url: the query parameter `{name}` looks like a credential; remove it — the host \
             adds API keys for the hosts the operator configured"
        )));
    }
    for name in args.headers.keys() {
        if REFUSED_HEADERS.contains(&name.to_ascii_lowercase().as_str()) {
            return Err(ToolError::invalid_arguments(format!(
                "headers.{name}: credentials are added by the host, not passed in a request; \
                 remove this header"
            )));
        }
    }
    if args.body.is_some() && matches!(args.method, Method::Get | Method::Head) {
        return Err(ToolError::invalid_arguments(format!(
            "body: a {} request has no body; use POST, PUT or PATCH",
            args.method.as_str()
        )));
    }
    let max_bytes = args.max_bytes.unwrap_or(DEFAULT_MAX_BYTES);
    if max_bytes == 0 || max_bytes > MAX_MAX_BYTES {
        return Err(ToolError::invalid_arguments(format!(
            "max_bytes must be 1 to {MAX_MAX_BYTES}, not {max_bytes}"
        )));
    }

    let host = match (url.host_str(), url.port()) {
        (Some(h), Some(p)) => format!("{h}:{p}"),
        (Some(h), None) => h.to_owned(),
        (None, _) => {
            return Err(ToolError::invalid_arguments(format!("url {shown:?} has no host")));
        }
    };
    let mut req = http::Request::new(args.method.as_str(), url.as_str())
        .header("accept", "application/json")
        .header("user-agent", concat!("agent-reach-http_api/", env!("CARGO_PKG_VERSION")))
        .max_body_bytes(max_bytes);
    let mut sent_headers: BTreeMap<String, String> = BTreeMap::new();
    if let Some(body) = &args.body {
        req = req.header("content-type", "application/json").body(body.to_string());
        sent_headers.insert("content-type".into(), "application/json".into());
    }
    for (name, value) in &args.headers {
        req = req.header(name, value);
        sent_headers.insert(name.to_ascii_lowercase(), value.clone());
    }
    let response = req.send()?;
    let content_type = response.header("content-type").unwrap_or("").to_owned();
    let reply = json!({
        "status": response.status,
        "content_type": content_type,
        "url": response.url,
        "credential": credential_configured(&host),
        "sent": {"method": args.method.as_str(), "url": url.as_str(), "headers": sent_headers},
        "body": reply::body(&response.body, &content_type, response.truncated),
        "truncated": response.truncated,
    });
    serde_json::to_string_pretty(&reply)
        .map_err(|e| ToolError::failed(format!("could not format the reply: {e}")))
}

/// The skill type exported to the host.
struct HttpApi;

impl Skill for HttpApi {
    fn define() -> Definition {
        Definition::new("http_api", env!("CARGO_PKG_VERSION"), DESCRIPTION)
            .instructions(INSTRUCTIONS)
            .tool(
                "request",
                "Send one HTTP request to a JSON API and return `status`, `content_type`, the \
                 final `url`, `credential` (whether the host adds an API key for this host), what \
                 was `sent` (without any credential) and the response `body` (parsed JSON, or \
                 text), cut at `max_bytes` with `truncated`. 4xx/5xx answers are results, not \
                 errors. Do not pass API keys: the host adds them.",
                request,
            )
            .example(
                "List the open issues of a repository.",
                json!({
                    "method": "GET",
                    "url": "https://api.github.com/repos/rust-lang/rust/issues\
                            ?state=open&per_page=5",
                }),
                Some(concat!(
                    r#"{"status":200,"content_type":"application/json; charset=utf-8","#,
                    r#""credential":true,"body":[{"number":1,"title":"…"}],"#,
                    r#""truncated":false,…}"#
                )),
            )
            .example(
                "Create an item with a JSON body.",
                json!({
                    "method": "POST",
                    "url": "https://api.example.com/v1/items",
                    "body": {"name": "report", "tags": ["q3"]},
                }),
                Some(concat!(
                    r#"{"status":201,"content_type":"application/json","credential":true,"#,
                    r#""body":{"id":42,"name":"report"},…}"#
                )),
            )
    }
}

export_skill!(HttpApi);
