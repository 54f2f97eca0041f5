//! One GET over `wasi:http`, shared by both tools.
//!
//! The host checks the request — and every redirect hop, which the SDK
//! follows in the guest — against the permission table's `net` list, so
//! nothing here decides which hosts are reachable.

use agent_reach_sdk::http::Request;
use agent_reach_sdk::prelude::*;
use std::time::Duration;

/// Connect, first-byte and between-chunks timeout. The host's per-call
/// `timeout_ms` bounds the whole call as well.
const TIMEOUT: Duration = Duration::from_secs(15);

/// What browsers send, so servers answer with the page a person would see.
const ACCEPT: &str =
    "text/html,application/xhtml+xml,application/xml;q=0.9,text/plain;q=0.8,*/*;q=0.5";

/// A fetched response.
pub(crate) struct Page {
    /// HTTP status of the final response.
    pub status: u16,
    /// The URL that answered, after redirects.
    pub url: String,
    /// The `Content-Type` header, if any.
    pub content_type: Option<String>,
    /// The body, at most the cap.
    pub body: Vec<u8>,
    /// Whether the body was cut at the cap.
    pub truncated: bool,
}

/// GET `url` with a browser's headers, reading at most `max_bytes` of body.
pub(crate) fn get(url: &str, max_bytes: usize) -> Result<Page, ToolError> {
    let url = web_convert::with_scheme(url);
    let response = Request::new("GET", &url)
        .header("accept", ACCEPT)
        .header("accept-language", "en-US,en;q=0.9")
        .max_body_bytes(max_bytes)
        .timeout(TIMEOUT)
        .send()?;
    Ok(Page {
        status: response.status,
        content_type: response.header("content-type").map(str::to_owned),
        url: response.url,
        body: response.body,
        truncated: response.truncated,
    })
}

/// The reason phrase of common statuses, for messages.
pub(crate) fn reason(status: u16) -> &'static str {
    match status {
        400 => "Bad Request",
        401 => "Unauthorized",
        402 => "Payment Required",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        406 => "Not Acceptable",
        408 => "Request Timeout",
        410 => "Gone",
        429 => "Too Many Requests",
        451 => "Unavailable For Legal Reasons",
        500 => "Internal Server Error",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        504 => "Gateway Timeout",
        _ if status < 400 => "Redirect",
        _ if status < 500 => "Client Error",
        _ => "Server Error",
    }
}
