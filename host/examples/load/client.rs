//! An MCP client over streamable HTTP, as small as the driver needs: `initialize` and
//! `tools/call` in either protocol revision, and every failure sorted into a kind the reports
//! count.

use reqwest::StatusCode;
use reqwest::header::HeaderMap;
use serde_json::{Value, json};
use std::time::Duration;

/// How long a call may take before the client gives up on it. A call here takes
/// milliseconds; thirty seconds is far beyond any queue a loaded server builds.
pub const TIMEOUT: Duration = Duration::from_secs(30);

/// The protocol revision a client speaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Protocol {
    /// 2025-11-25: `initialize` opens a session the server holds, and every later request
    /// names it (`Mcp-Session-Id`). What MCP clients speak today.
    Session,
    /// 2026-07-28: no session; every request carries its protocol version, capabilities and
    /// client, so any instance can answer it.
    Stateless,
}

impl Protocol {
    /// The revision's name, as `MCP-Protocol-Version` carries it.
    pub fn version(self) -> &'static str {
        match self {
            Protocol::Session => "2025-11-25",
            Protocol::Stateless => "2026-07-28",
        }
    }
}

/// A tool the driver calls: its MCP name, its arguments and a piece of text its answer must
/// hold (a call answered with anything else counts as an error).
#[derive(Clone, Copy, Debug)]
pub struct Tool {
    /// How the table and the reports name it.
    pub label: &'static str,
    /// How MCP names it (`SKILL__TOOL`).
    pub name: &'static str,
    /// Its arguments, a JSON object.
    pub arguments: &'static str,
    /// Text every good answer holds.
    pub expect: &'static str,
}

/// `echo.echo`: the sandbox and the protocol, no file touched.
pub const ECHO: Tool = Tool {
    label: "echo",
    name: "echo__echo",
    arguments: r#"{"text":"ping from the load driver"}"#,
    expect: "ping from the load driver",
};

/// `files.read` of the workspace's 224-byte file (the one `cargo bench --bench mcp` reads).
pub const FILES_READ: Tool = Tool {
    label: "files.read",
    name: "files__read",
    arguments: r#"{"path":"docs/small.txt"}"#,
    expect: "A small file read over MCP.",
};

impl Tool {
    /// The tool labelled `label`.
    pub fn named(label: &str) -> Option<Tool> {
        [ECHO, FILES_READ].into_iter().find(|tool| tool.label == label)
    }
}

/// Why a call did not come back with a good answer.
#[derive(Clone, Debug)]
pub struct CallError {
    /// How the reports count it: `connect`, `disconnected`, `timeout`, `http_STATUS`,
    /// `session_lost`, `bad_answer`, `rpc_error`, `tool_CODE`, `input_required` or
    /// `wrong_result`.
    pub kind: String,
    /// What happened, for the person reading the progress lines.
    pub detail: String,
}

impl CallError {
    fn new(kind: impl Into<String>, detail: impl Into<String>) -> CallError {
        CallError { kind: kind.into(), detail: detail.into() }
    }

    /// A transport failure, by what reqwest says of it (its message, then each cause).
    fn transport(err: &reqwest::Error) -> CallError {
        let kind = if err.is_timeout() {
            "timeout"
        } else if err.is_connect() {
            "connect"
        } else {
            // Sent, and the connection ended before a whole answer came back.
            "disconnected"
        };
        let mut detail = err.to_string();
        let mut source = std::error::Error::source(err);
        while let Some(cause) = source {
            detail.push_str(&format!(": {cause}"));
            source = cause.source();
        }
        CallError::new(kind, detail)
    }

    /// Whether a client may send the call again and expect an answer: nothing reached a
    /// server (`connect`, a balancer's 503), or the server that held the call or the session is
    /// gone (`disconnected`, a balancer's 502 or 504, `session_lost`: initialize again). Whether
    /// that is safe is the tool's business: a call whose connection was lost may have run. A
    /// tool's own error, or a wrong answer, is not retriable.
    pub fn retriable(&self) -> bool {
        matches!(
            self.kind.as_str(),
            "connect" | "disconnected" | "http_502" | "http_503" | "http_504" | "session_lost"
        )
    }
}

/// A `tools/call` result and who answered it.
#[derive(Debug)]
pub struct Answer {
    /// The JSON-RPC `result`.
    pub result: Value,
    /// The instance, when a balancer says (`X-Served-By`).
    pub served_by: Option<String>,
}

/// One MCP client: its own connection to `url`, its token, its protocol and (for
/// [`Protocol::Session`]) its session.
pub struct Client {
    http: reqwest::Client,
    url: String,
    authorization: String,
    protocol: Protocol,
    name: String,
    session: Option<String>,
    next_id: u64,
}

impl Client {
    /// A client named `name` of the server at `url` (`http://…/mcp`); nothing is sent yet.
    pub fn new(url: &str, token: &str, protocol: Protocol, name: &str) -> Client {
        let http = reqwest::Client::builder()
            .timeout(TIMEOUT)
            .pool_max_idle_per_host(1)
            .build()
            .expect("a plain-HTTP client builds once a TLS provider is installed");
        Client {
            http,
            url: url.to_owned(),
            authorization: format!("Bearer {token}"),
            protocol,
            name: name.to_owned(),
            session: None,
            next_id: 1,
        }
    }

    /// The name it gives the server.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The protocol this client speaks.
    pub fn protocol(&self) -> Protocol {
        self.protocol
    }

    /// Open a session, unless the protocol has none or one is open: `initialize`, then
    /// `notifications/initialized`.
    pub async fn open(&mut self) -> Result<(), CallError> {
        if self.protocol == Protocol::Stateless || self.session.is_some() {
            return Ok(());
        }
        let id = self.id();
        let initialize = json!({
            "jsonrpc": "2.0", "id": id, "method": "initialize",
            "params": {
                "protocolVersion": self.protocol.version(),
                "capabilities": {},
                "clientInfo": {"name": self.name, "version": "1"}
            }
        });
        let (headers, body) = self.post(&initialize, &[]).await?;
        message(&body, id)?;
        let session = headers
            .get("mcp-session-id")
            .and_then(|v| v.to_str().ok())
            .ok_or_else(|| CallError::new("bad_answer", "initialize gave no Mcp-Session-Id"))?;
        self.session = Some(session.to_owned());
        let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        self.post(&initialized, &[]).await?;
        Ok(())
    }

    /// Call `tool` and check its answer holds what it must.
    pub async fn call(&mut self, tool: Tool) -> Result<Answer, CallError> {
        let arguments = serde_json::from_str(tool.arguments).expect("the tools' arguments parse");
        let answer = self.tools_call(tool.name, arguments, None).await?;
        let result = &answer.result;
        if result["resultType"] == "input_required" {
            return Err(CallError::new("input_required", format!("{}: {result}", tool.label)));
        }
        if result["isError"] == true {
            let code = result["structuredContent"]["error_code"].as_str().unwrap_or("unknown");
            return Err(CallError::new(format!("tool_{code}"), result.to_string()));
        }
        let text = result["content"][0]["text"].as_str().unwrap_or("");
        if !text.contains(tool.expect) {
            return Err(CallError::new("wrong_result", format!("{}: {result}", tool.label)));
        }
        Ok(answer)
    }

    /// `tools/call` of `name` with `arguments`; with `reply` (an action and the
    /// `requestState` it answers), the retry of a stateless call that asked a question.
    /// The result is returned as it came, error or not.
    pub async fn tools_call(
        &mut self,
        name: &str,
        arguments: Value,
        reply: Option<(&str, &str)>,
    ) -> Result<Answer, CallError> {
        self.open().await?;
        let id = self.id();
        let mut params = json!({"name": name, "arguments": arguments});
        if self.protocol == Protocol::Stateless {
            params["_meta"] = json!({
                "io.modelcontextprotocol/protocolVersion": self.protocol.version(),
                "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}},
                "io.modelcontextprotocol/clientInfo": {"name": self.name, "version": "1"}
            });
            if let Some((action, state)) = reply {
                params["inputResponses"] = json!({"confirm": {"action": action, "content": {}}});
                params["requestState"] = json!(state);
            }
        }
        let call = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params});
        let routing = [("mcp-method", "tools/call"), ("mcp-name", name)];
        let (headers, body) = self.post(&call, &routing).await?;
        let mut answered = message(&body, id)?;
        let served_by = headers.get("x-served-by").and_then(|v| v.to_str().ok()).map(str::to_owned);
        Ok(Answer { result: answered["result"].take(), served_by })
    }

    /// Close the session, if one is open, as a client that is done does.
    pub async fn close(&mut self) {
        let Some(session) = self.session.take() else { return };
        let _ = self
            .http
            .delete(&self.url)
            .header("authorization", &self.authorization)
            .header("mcp-session-id", session)
            .header("mcp-protocol-version", self.protocol.version())
            .send()
            .await;
    }

    fn id(&mut self) -> u64 {
        self.next_id += 1;
        self.next_id
    }

    /// POST `body` with the headers of this client's protocol (and, for a stateless call,
    /// `routing`); the response's headers and body when it is a success.
    async fn post(
        &mut self,
        body: &Value,
        routing: &[(&str, &str)],
    ) -> Result<(HeaderMap, String), CallError> {
        let mut request = self
            .http
            .post(&self.url)
            .header("authorization", &self.authorization)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .body(body.to_string());
        match (&self.session, self.protocol) {
            (Some(session), _) => {
                request = request
                    .header("mcp-session-id", session)
                    .header("mcp-protocol-version", self.protocol.version());
            }
            (None, Protocol::Stateless) => {
                request = request.header("mcp-protocol-version", self.protocol.version());
                for (name, value) in routing {
                    request = request.header(*name, *value);
                }
            }
            (None, Protocol::Session) => {}
        }
        let response = request.send().await.map_err(|e| CallError::transport(&e))?;
        let status = response.status();
        let headers = response.headers().clone();
        let text = response.text().await.map_err(|e| CallError::transport(&e))?;
        if status == StatusCode::NOT_FOUND && self.session.is_some() {
            // The instance that held the session is gone (or forgot it): open another.
            self.session = None;
            return Err(CallError::new("session_lost", text));
        }
        if !status.is_success() {
            let head: String = text.chars().take(200).collect();
            return Err(CallError::new(format!("http_{}", status.as_u16()), head));
        }
        Ok((headers, text))
    }
}

/// The JSON-RPC answer to request `id` in `body`: the body itself (JSON) or one of its
/// `data:` lines (an event stream, which may open with an empty priming event).
fn message(body: &str, id: u64) -> Result<Value, CallError> {
    let candidates = std::iter::once(body)
        .chain(body.lines().filter_map(|line| line.strip_prefix("data:")).map(str::trim));
    let found = candidates
        .filter_map(|text| serde_json::from_str::<Value>(text).ok())
        .find(|message| message["id"] == id);
    let Some(message) = found else {
        let head: String = body.chars().take(200).collect();
        return Err(CallError::new("bad_answer", format!("no answer to request {id} in: {head}")));
    };
    if let Some(error) = message.get("error") {
        return Err(CallError::new("rpc_error", error.to_string()));
    }
    Ok(message)
}
