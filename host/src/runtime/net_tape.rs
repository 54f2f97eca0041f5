//! The network guard's side of a recording ([`crate::tape`]): a response on
//! its way to the skill is recorded as the skill reads it (after the host
//! masked the credential in it), and in a replay a recorded response is
//! handed back instead of sending anything.

use crate::tape::{Exchange, Recorder, Tape};
use bytes::Bytes;
use http_body::{Body, Frame};
use http_body_util::{BodyExt, Full};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use wasmtime_wasi_http::{Error, WasiBody};

/// What a request is keyed by in a recording: its method and its URL as
/// the skill wrote it (never with the credential the host adds).
pub(super) fn key(request: &http::Request<WasiBody>) -> (String, String) {
    (request.method().as_str().to_owned(), request.uri().to_string())
}

/// The recorded response to `method url` of `call`, built again; `None`
/// when the recording has none (or its body was not kept).
pub(super) fn replay(
    tape: &Tape,
    call: &str,
    method: &str,
    url: &str,
) -> Result<http::Response<WasiBody>, String> {
    let Some(replayed) = tape.take(call, method, url) else {
        return Err(format!(
            "the run's recording has no response to {method} {url} in this call (the run did not \
             send it); `reach runs replay --live` sends it"
        ));
    };
    let Some(body) = replayed.body else {
        return Err(format!(
            "the run's recording kept no body for {method} {url} ({} bytes: over the recording \
             budget, `[journal] record_mb`, or changed since); `reach runs replay --live` sends it",
            replayed.exchange.body_bytes
        ));
    };
    let mut response = http::Response::builder().status(replayed.exchange.status);
    for (name, value) in &replayed.exchange.headers {
        response = response.header(name.as_str(), value.as_str());
    }
    let body = Full::new(Bytes::from(body)).map_err(|never| match never {}).boxed_unsync();
    response.body(body).map_err(|e| format!("the recorded response to {method} {url}: {e}"))
}

/// `response` to `method url` of `call` by `skill`, recorded as it is read.
pub(super) fn record(
    response: http::Response<WasiBody>,
    recorder: Arc<Recorder>,
    call: &str,
    skill: &str,
    (method, url): (String, String),
) -> http::Response<WasiBody> {
    let headers = response
        .headers()
        .iter()
        .map(|(n, v)| (n.as_str().to_owned(), String::from_utf8_lossy(v.as_bytes()).into_owned()))
        .collect();
    let exchange = Exchange {
        call: call.to_owned(),
        skill: skill.to_owned(),
        method,
        url: recorder.mask(&url),
        status: response.status().as_u16(),
        headers,
        ..Exchange::default()
    };
    let limit = recorder.max_bytes();
    response.map(|body| {
        Recording {
            body,
            recorder,
            exchange: Some(exchange),
            kept: Some(Vec::new()),
            limit,
            read: 0,
        }
        .boxed_unsync()
    })
}

/// A response body that keeps what the skill reads of it (up to the
/// recording's budget, so a long download grows nothing) and records it
/// when it ends or is dropped.
struct Recording {
    body: WasiBody,
    recorder: Arc<Recorder>,
    exchange: Option<Exchange>,
    /// What was read; `None` once past the budget.
    kept: Option<Vec<u8>>,
    limit: u64,
    read: u64,
}

impl Recording {
    fn finish(&mut self, complete: bool) {
        if let Some(mut exchange) = self.exchange.take() {
            exchange.complete = complete;
            exchange.body_bytes = self.read;
            self.recorder.exchange(exchange, self.kept.as_deref());
        }
    }
}

impl Body for Recording {
    type Data = Bytes;
    type Error = Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Error>>> {
        let polled = Pin::new(&mut self.body).poll_frame(cx);
        match &polled {
            Poll::Ready(Some(Ok(frame))) => {
                if let Some(data) = frame.data_ref() {
                    self.read += data.len() as u64;
                    let limit = self.limit;
                    let read = self.read;
                    if read > limit {
                        self.kept = None;
                    } else if let Some(kept) = &mut self.kept {
                        kept.extend_from_slice(data);
                    }
                }
            }
            Poll::Ready(None) => self.finish(true),
            Poll::Ready(Some(Err(_))) => self.finish(false),
            Poll::Pending => {}
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.body.size_hint()
    }
}

impl Drop for Recording {
    fn drop(&mut self) {
        // Read to its end when nothing is left to read (an empty body).
        let complete = self.body.is_end_stream();
        self.finish(complete);
    }
}
