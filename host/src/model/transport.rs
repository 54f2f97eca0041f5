//! The HTTP side shared by the model clients: an [`Endpoint`] per client,
//! whose POST retries by the [`RetryPolicy`] and turns every failure into a
//! [`ModelError`] that says what the server answered. The clients only
//! build request bodies and parse answers.

use super::retry::{RetryPolicy, parse_retry_after, parse_retry_after_ms, retryable_status};
use super::tokens::estimate_usage;
use super::{ChatResponse, Message, ModelError, Usage};
use bytes::Bytes;
use reqwest::header::{CONTENT_TYPE, HeaderMap, HeaderValue};
use std::time::{Duration, SystemTime};

/// How much of an error body goes into a [`ModelError`]: enough for the
/// server's explanation, not a whole HTML error page.
const BODY_EXCERPT_CHARS: usize = 500;

/// A connection that cannot be opened in this long will not open: fail (and
/// retry) well before the whole-request timeout.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// What a client parsed from a 2xx answer, before usage is estimated.
pub(crate) struct Parsed {
    /// The assistant message.
    pub message: Message,
    /// The usage the server reported, if it reported any.
    pub usage: Option<Usage>,
    /// The model the server says answered.
    pub model: Option<String>,
}

/// One model server endpoint: its URL, the headers every request carries
/// (the key among them, marked sensitive), the HTTP client and the retry
/// policy.
#[derive(Debug)]
pub(crate) struct Endpoint {
    base: String,
    url: String,
    headers: HeaderMap,
    http: reqwest::Client,
    retry: RetryPolicy,
}

impl Endpoint {
    /// `path` under `base_url`, which must be http(s); `variable` is the
    /// environment variable an operator sets it with, for the error.
    pub(crate) fn new(
        base_url: &str,
        variable: &str,
        path: &str,
        headers: HeaderMap,
        timeout: Duration,
        retry: &RetryPolicy,
    ) -> Result<Endpoint, ModelError> {
        check_base_url(base_url, variable)?;
        Ok(Endpoint {
            base: base_url.to_owned(),
            url: join_url(base_url, path),
            headers,
            http: http_client(timeout)?,
            retry: retry.clone(),
        })
    }

    /// Sends `body`, parses the answer with `parse`, and estimates usage if
    /// the server gave none; `model` names the answer if the server does not.
    pub(crate) async fn chat(
        &self,
        body: serde_json::Value,
        parse: fn(&str) -> Result<Parsed, String>,
        model: &str,
    ) -> Result<ChatResponse, ModelError> {
        let body = body.to_string();
        let answer =
            post_json(&self.http, &self.url, &self.headers, Bytes::from(body.clone()), &self.retry)
                .await?;
        let parsed = parse(&answer)
            .map_err(|reason| ModelError::Protocol { endpoint: self.url.clone(), reason })?;
        let usage = parsed.usage.unwrap_or_else(|| estimate_usage(&body, &parsed.message));
        Ok(ChatResponse {
            message: parsed.message,
            usage,
            model: parsed.model.unwrap_or_else(|| model.to_owned()),
        })
    }
}

impl Endpoint {
    /// `GET path` under the base URL, once, with the same headers and a
    /// short timeout: for what a server says about itself. `None` on any
    /// failure — callers fall back to what they know.
    pub(crate) async fn get_json(&self, path: &str) -> Option<serde_json::Value> {
        let url = join_url(&self.base, path);
        let sent = self
            .http
            .get(&url)
            .headers(self.headers.clone())
            .timeout(PROBE_TIMEOUT)
            .send()
            .await
            .ok()?;
        if !sent.status().is_success() {
            return None;
        }
        let text = sent.text().await.ok()?;
        serde_json::from_str(&text).ok()
    }
}

/// How long a question about the server (not a chat request) may take.
const PROBE_TIMEOUT: Duration = Duration::from_secs(5);

/// An HTTP client whose whole request (connect, send, answer) times out after
/// `timeout`.
fn http_client(timeout: Duration) -> Result<reqwest::Client, ModelError> {
    reqwest::Client::builder()
        // The same TLS as the skills' outgoing HTTP (ring, webpki roots).
        .tls_backend_preconfigured(crate::tls::client_config().as_ref().clone())
        .timeout(timeout)
        .connect_timeout(CONNECT_TIMEOUT.min(timeout))
        .user_agent(concat!("agent-reach/", env!("CARGO_PKG_VERSION")))
        .build()
        .map_err(|e| {
            ModelError::Config(format!("cannot build the HTTP client for the model: {}", chain(&e)))
        })
}

/// A header value that reqwest and our logs must never print: API keys.
pub(crate) fn secret_header(value: &str) -> Result<HeaderValue, ModelError> {
    let mut header = HeaderValue::from_str(value).map_err(|_| {
        ModelError::Config("the API key contains characters not allowed in an HTTP header".into())
    })?;
    header.set_sensitive(true);
    Ok(header)
}

/// POST `body` (JSON) to `url` with `headers`, retrying by `policy`; the
/// 2xx answer's body.
async fn post_json(
    http: &reqwest::Client,
    url: &str,
    headers: &HeaderMap,
    body: Bytes,
    policy: &RetryPolicy,
) -> Result<String, ModelError> {
    let mut attempts = 0u32;
    loop {
        attempts += 1;
        let can_retry = attempts <= policy.max_retries;
        let sent = http
            .post(url)
            .headers(headers.clone())
            .header(CONTENT_TYPE, "application/json")
            .body(body.clone())
            .send()
            .await;
        let (failure, retry_after) = match sent {
            Ok(response) => {
                let status = response.status().as_u16();
                let retry_after = server_wait(response.headers());
                match response.text().await {
                    Ok(text) if (200..300).contains(&status) => return Ok(text),
                    Ok(text) => {
                        let failure = ModelError::Status {
                            endpoint: url.to_owned(),
                            status,
                            body: excerpt(&text),
                            attempts,
                        };
                        if !retryable_status(status) || !can_retry {
                            return Err(failure);
                        }
                        (failure, retry_after)
                    }
                    // The answer broke off mid-body: as transient as a reset.
                    Err(e) => (unreachable(url, &e, attempts), None),
                }
            }
            Err(e) if e.is_builder() => {
                return Err(ModelError::Config(format!("cannot request {url}: {}", chain(&e))));
            }
            Err(e) => (unreachable(url, &e, attempts), None),
        };
        if !can_retry {
            return Err(failure);
        }
        let wait = policy.delay(attempts - 1, retry_after);
        tracing::warn!(
            %failure,
            retry_in_ms = wait.as_millis() as u64,
            "model request failed; retrying"
        );
        tokio::time::sleep(wait).await;
    }
}

/// The wait the server asked for, preferring the precise `retry-after-ms`.
fn server_wait(headers: &HeaderMap) -> Option<Duration> {
    let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    header("retry-after-ms")
        .and_then(parse_retry_after_ms)
        .or_else(|| header("retry-after").and_then(|v| parse_retry_after(v, SystemTime::now())))
}

fn unreachable(url: &str, error: &reqwest::Error, attempts: u32) -> ModelError {
    let reason =
        if error.is_timeout() { format!("timed out ({})", chain(error)) } else { chain(error) };
    ModelError::Unreachable { endpoint: url.to_owned(), reason, attempts }
}

/// An error with its causes, `outer: inner: innermost`: reqwest's own
/// message ("error sending request") hides the useful part ("Connection
/// refused") in its sources.
fn chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        let cause_text = cause.to_string();
        if !text.contains(&cause_text) {
            text.push_str(": ");
            text.push_str(&cause_text);
        }
        source = cause.source();
    }
    text
}

/// The start of a response body, trimmed, on a character boundary.
pub(crate) fn excerpt(text: &str) -> String {
    crate::text::shorten_chars(text.trim(), BODY_EXCERPT_CHARS)
}

/// `base` and `path` joined with exactly one slash, whether or not the
/// operator wrote a trailing slash.
fn join_url(base: &str, path: &str) -> String {
    format!("{}/{}", base.trim_end_matches('/'), path.trim_start_matches('/'))
}

/// Checks that `base` is an http(s) URL, so a typo fails when the client is
/// built, not on the first request of a run.
fn check_base_url(base: &str, variable: &str) -> Result<(), ModelError> {
    match reqwest::Url::parse(base) {
        Ok(url) if matches!(url.scheme(), "http" | "https") && url.host().is_some() => Ok(()),
        _ => Err(ModelError::Config(format!(
            "the model base URL {base:?} is not an http(s) URL (set {variable}, e.g. \
             http://127.0.0.1:8080/v1)"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn join_url_tolerates_trailing_slashes() {
        assert_eq!(join_url("http://h:1/v1", "chat/completions"), "http://h:1/v1/chat/completions");
        assert_eq!(
            join_url("http://h:1/v1/", "chat/completions"),
            "http://h:1/v1/chat/completions"
        );
        assert_eq!(
            join_url("https://api.anthropic.com", "/v1/messages"),
            "https://api.anthropic.com/v1/messages"
        );
    }

    #[test]
    fn excerpt_cuts_long_bodies_on_a_character_boundary() {
        assert_eq!(excerpt("  short\n"), "short");
        let long = "é".repeat(BODY_EXCERPT_CHARS + 10);
        let cut = excerpt(&long);
        assert_eq!(cut.chars().count(), BODY_EXCERPT_CHARS + 1);
        assert!(cut.ends_with('…'));
    }

    #[test]
    fn base_url_must_be_http() {
        assert!(check_base_url("http://127.0.0.1:8080/v1", "X").is_ok());
        assert!(check_base_url("https://api.openai.com/v1/", "X").is_ok());
        for bad in ["", "127.0.0.1:8080", "ftp://h/v1", "http//h"] {
            let err = check_base_url(bad, "OPENAI_BASE_URL").unwrap_err().to_string();
            assert!(err.contains("OPENAI_BASE_URL"), "{bad:?}: {err}");
        }
    }
}
