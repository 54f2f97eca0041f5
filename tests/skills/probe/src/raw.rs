//! Raw `wasi:http`: no URL parsing, no redirects, no checks of its own, so
//! whatever the host lets through reaches the server exactly as written.

use agent_reach_sdk::prelude::*;
use std::collections::BTreeMap;
use wasi::http::outgoing_handler;
use wasi::http::types::{
    ErrorCode, Fields, FutureIncomingResponse, IncomingBody, IncomingResponse, OutgoingBody,
    OutgoingRequest, Scheme,
};
use wasi::io::streams::StreamError;

/// Where to send one request, written as `wasi:http` takes it.
#[derive(Deserialize, JsonSchema)]
pub(crate) struct RawArg {
    /// `http` or `https`.
    scheme: String,
    /// As sent, e.g. `127.0.0.1:8080` or `user:pw@127.0.0.1:8080`.
    authority: String,
    /// Path and query, e.g. `/echo?a=1`.
    path: String,
    /// Request headers.
    #[serde(default)]
    headers: BTreeMap<String, String>,
}

/// `n` requests at once.
#[derive(Deserialize, JsonSchema)]
pub(crate) struct ParallelArg {
    /// `http` or `https`.
    scheme: String,
    /// Host and port.
    authority: String,
    /// Path and query.
    path: String,
    /// How many to send before waiting.
    n: u32,
}

fn start(
    scheme: &str,
    authority: &str,
    path: &str,
    headers: &BTreeMap<String, String>,
) -> Result<FutureIncomingResponse, ToolError> {
    let fields = Fields::new();
    for (name, value) in headers {
        fields
            .append(name, value.as_bytes())
            .map_err(|e| ToolError::failed(format!("header {name}: {e:?}")))?;
    }
    let request = OutgoingRequest::new(fields);
    let scheme = if scheme == "https" { Scheme::Https } else { Scheme::Http };
    request
        .set_scheme(Some(&scheme))
        .map_err(|()| ToolError::failed("scheme refused by wasi:http"))?;
    request
        .set_authority(Some(authority))
        .map_err(|()| ToolError::failed(format!("authority {authority:?} refused by wasi:http")))?;
    request
        .set_path_with_query(Some(path))
        .map_err(|()| ToolError::failed("path refused by wasi:http"))?;
    let body = request.body().map_err(|()| ToolError::failed("no request body"))?;
    let pending = outgoing_handler::handle(request, None).map_err(error)?;
    OutgoingBody::finish(body, None).map_err(error)?;
    Ok(pending)
}

fn error(code: ErrorCode) -> ToolError {
    let text = format!("{code:?}");
    match code {
        ErrorCode::HttpRequestDenied | ErrorCode::DestinationIpProhibited => {
            ToolError::denied(text)
        }
        _ => ToolError::failed(text),
    }
}

fn wait(pending: &FutureIncomingResponse) -> Result<IncomingResponse, ToolError> {
    pending.subscribe().block();
    match pending.get() {
        Some(Ok(Ok(response))) => Ok(response),
        Some(Ok(Err(code))) => Err(error(code)),
        Some(Err(())) | None => Err(ToolError::failed("no response")),
    }
}

/// The fields as `[name, value]` pairs, and appended to `held` as bytes.
fn pairs(fields: &Fields, held: &mut Vec<u8>) -> serde_json::Value {
    let list: Vec<serde_json::Value> = fields
        .entries()
        .into_iter()
        .map(|(k, v)| {
            held.extend_from_slice(k.as_bytes());
            held.extend_from_slice(b": ");
            held.extend_from_slice(&v);
            held.push(b'\n');
            serde_json::json!([k, String::from_utf8_lossy(&v)])
        })
        .collect();
    serde_json::Value::Array(list)
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Status, headers, the whole body and the trailers of a response; and
/// `held_hex`, every byte of them in hex. The host masks secrets in results
/// on their way out, as a last net; in hex, tests see what the skill held.
fn read(response: IncomingResponse) -> Result<serde_json::Value, ToolError> {
    let status = response.status();
    let mut held = Vec::new();
    let headers = pairs(&response.headers(), &mut held);
    let body = response.consume().map_err(|()| ToolError::failed("no response body"))?;
    let stream = body.stream().map_err(|()| ToolError::failed("no response body stream"))?;
    let mut bytes = Vec::new();
    loop {
        match stream.blocking_read(64 * 1024) {
            Ok(chunk) => bytes.extend_from_slice(&chunk),
            Err(StreamError::Closed) => break,
            Err(StreamError::LastOperationFailed(e)) => {
                return Err(ToolError::failed(format!(
                    "reading the body: {}",
                    e.to_debug_string()
                )));
            }
        }
    }
    drop(stream);
    held.extend_from_slice(&bytes);
    let trailers = IncomingBody::finish(body);
    trailers.subscribe().block();
    let trailers = match trailers.get() {
        Some(Ok(Ok(Some(fields)))) => pairs(&fields, &mut held),
        Some(Ok(Ok(None))) => serde_json::Value::Null,
        Some(Ok(Err(code))) => return Err(error(code)),
        Some(Err(())) | None => return Err(ToolError::failed("trailers unavailable")),
    };
    drop(response);
    Ok(serde_json::json!({
        "status": status,
        "headers": headers,
        "body": String::from_utf8_lossy(&bytes),
        "trailers": trailers,
        "held_hex": hex(&held),
    }))
}

pub(crate) fn one(a: RawArg) -> Result<serde_json::Value, ToolError> {
    let pending = start(&a.scheme, &a.authority, &a.path, &a.headers)?;
    read(wait(&pending)?)
}

pub(crate) fn parallel(a: ParallelArg) -> Result<serde_json::Value, ToolError> {
    let none = BTreeMap::new();
    let started: Vec<_> =
        (0..a.n).map(|_| start(&a.scheme, &a.authority, &a.path, &none)).collect();
    let outcome = |pending: Result<FutureIncomingResponse, ToolError>| match pending
        .and_then(|p| wait(&p))
        .and_then(read)
    {
        Ok(reply) => reply["status"].clone(),
        Err(e) => serde_json::Value::String(e.message),
    };
    let results: Vec<serde_json::Value> = started.into_iter().map(outcome).collect();
    // Every response above was read to its end: the slots are free again.
    let after = outcome(start(&a.scheme, &a.authority, &a.path, &none));
    Ok(serde_json::json!({"results": results, "after": after}))
}
