//! Test skill `probe`: touches files, environment and network with plain
//! `std` calls and raw `wasi:http`, so tests prove that the *runtime*
//! enforces the permission table, not checks in the SDK. `fetch` goes
//! through the SDK (which follows redirects); `raw` and `parallel` speak
//! `wasi:http` directly, sending exactly what they are given.

mod raw;

use agent_reach_sdk::prelude::*;

/// A path.
#[derive(Deserialize, JsonSchema)]
struct PathArg {
    /// Absolute path inside the sandbox.
    path: String,
}

/// A path and content.
#[derive(Deserialize, JsonSchema)]
struct WriteArg {
    /// Absolute path inside the sandbox.
    path: String,
    /// What to write.
    content: String,
}

/// An environment variable name.
#[derive(Deserialize, JsonSchema)]
struct EnvArg {
    /// Variable name.
    name: String,
}

/// A URL.
#[derive(Deserialize, JsonSchema)]
struct UrlArg {
    /// http(s) URL.
    url: String,
}

/// No arguments.
#[derive(Deserialize, JsonSchema)]
struct Nothing {}

fn io(e: std::io::Error) -> ToolError {
    ToolError::failed(format!("{:?}: {e}", e.kind()))
}

struct Probe;

impl Skill for Probe {
    fn define() -> Definition {
        Definition::new("probe", "0.1.0", "Probes the sandbox. Test skill.")
            .tool("read", "std::fs::read_to_string", |a: PathArg| {
                std::fs::read_to_string(&a.path).map_err(io)
            })
            .tool("write", "std::fs::write", |a: WriteArg| {
                std::fs::write(&a.path, a.content).map(|()| "written".to_owned()).map_err(io)
            })
            .tool("env", "std::env::var", |a: EnvArg| {
                Ok(std::env::var(&a.name).unwrap_or_else(|_| "<unset>".to_owned()))
            })
            .tool("env_all", "All environment variables as JSON.", |_: Nothing| {
                let all: serde_json::Map<String, serde_json::Value> =
                    std::env::vars().map(|(k, v)| (k, serde_json::Value::String(v))).collect();
                Ok(serde_json::Value::Object(all))
            })
            .tool("grants", "The preopened folders.", |_: Nothing| {
                let list: Vec<serde_json::Value> = agent_reach_sdk::fs::grants()
                    .into_iter()
                    .map(|g| serde_json::json!({"path": g.path, "writable": g.writable}))
                    .collect();
                Ok(serde_json::Value::Array(list))
            })
            .tool(
                "fetch",
                "GET a URL, following redirects; returns status and body.",
                |a: UrlArg| {
                    let r = agent_reach_sdk::http::get(&a.url)?;
                    Ok(serde_json::json!({"status": r.status, "body": r.text(), "url": r.url}))
                },
            )
            .tool(
                "raw",
                "One GET over raw wasi:http with the scheme, authority, path and headers as given; \
                 returns status, headers, body and trailers.",
                raw::one,
            )
            .tool(
                "parallel",
                "Send `n` GETs over raw wasi:http before waiting for any; returns each status or \
                 error, then one more request's.",
                raw::parallel,
            )
    }
}

export_skill!(Probe);

// What the host shows beside the grants (tests/tests/all/skill_requests.rs).
agent_reach_sdk::requests!(
    r#"
net = ["127.0.0.1:*", "api.example.com"]
env = ["PROBE_TOKEN"]
read = ["./data"]
"#
);
