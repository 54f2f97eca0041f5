//! Redaction of credential values: from response bodies and headers on their
//! way into a skill, and from results and errors on their way to the model.
//!
//! A server may echo a credential back (an "echo headers" endpoint, an error
//! page quoting the request); the skill must still never hold the value.

use bytes::Bytes;
use http_body::{Body, Frame};
use std::borrow::Cow;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, ready};

/// What replaces a secret.
pub(crate) const MASK: &str = "[REDACTED]";

/// Values shorter than this are not searched for: masking every `a` in a
/// page would garble it and protect nothing.
const MIN_SECRET_LEN: usize = 4;

/// The set of values to mask.
#[derive(Clone, Debug, Default)]
pub(crate) struct Redactor {
    needles: Vec<Vec<u8>>,
}

impl Redactor {
    /// Mask each of `values` (and nothing shorter than four bytes).
    pub(crate) fn new<I, S>(values: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        let mut needles: Vec<Vec<u8>> = values
            .into_iter()
            .map(|v| v.as_ref().as_bytes().to_vec())
            .filter(|v| v.len() >= MIN_SECRET_LEN)
            .collect();
        // Longest first, so a secret that contains another is masked whole.
        needles.sort_by_key(|n| std::cmp::Reverse(n.len()));
        needles.dedup();
        Redactor { needles }
    }

    fn longest(&self) -> usize {
        self.needles.first().map_or(0, Vec::len)
    }

    /// `bytes` with every secret replaced by [`MASK`].
    pub(crate) fn bytes<'a>(&self, bytes: &'a [u8]) -> Cow<'a, [u8]> {
        let mut out = Cow::Borrowed(bytes);
        for needle in &self.needles {
            if memchr::memmem::find(&out, needle).is_none() {
                continue;
            }
            let mut replaced = Vec::with_capacity(out.len());
            let mut last = 0;
            for at in memchr::memmem::find_iter(&out, needle) {
                if at < last {
                    continue; // overlapping match: already masked
                }
                replaced.extend_from_slice(&out[last..at]);
                replaced.extend_from_slice(MASK.as_bytes());
                last = at + needle.len();
            }
            replaced.extend_from_slice(&out[last..]);
            out = Cow::Owned(replaced);
        }
        out
    }

    /// `text` with every secret replaced by [`MASK`].
    pub(crate) fn text<'a>(&self, text: &'a str) -> Cow<'a, str> {
        match self.bytes(text.as_bytes()) {
            Cow::Borrowed(_) => Cow::Borrowed(text),
            // Secrets are whole strings and MASK is ASCII, so every cut
            // falls on a character boundary; lossy is only a safety net.
            Cow::Owned(bytes) => Cow::Owned(String::from_utf8_lossy(&bytes).into_owned()),
        }
    }
}

/// A response body with secrets masked as it streams. Holds back the last
/// `longest secret - 1` bytes of each chunk, so a secret split across two
/// chunks is still found.
pub(crate) struct RedactingBody<B> {
    inner: B,
    redactor: Arc<Redactor>,
    held: Vec<u8>,
    trailers: Option<Frame<Bytes>>,
    ended: bool,
}

impl<B> RedactingBody<B> {
    pub(crate) fn new(inner: B, redactor: Arc<Redactor>) -> Self {
        RedactingBody { inner, redactor, held: Vec::new(), trailers: None, ended: false }
    }
}

impl<B> Body for RedactingBody<B>
where
    B: Body<Data = Bytes> + Unpin,
{
    type Data = Bytes;
    type Error = B::Error;

    fn poll_frame(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, B::Error>>> {
        let this = &mut *self;
        loop {
            if this.ended {
                if !this.held.is_empty() {
                    let rest = this.redactor.bytes(&this.held).into_owned();
                    this.held.clear();
                    return Poll::Ready(Some(Ok(Frame::data(Bytes::from(rest)))));
                }
                return Poll::Ready(this.trailers.take().map(Ok));
            }
            match ready!(Pin::new(&mut this.inner).poll_frame(cx)) {
                None => this.ended = true,
                Some(Err(err)) => return Poll::Ready(Some(Err(err))),
                Some(Ok(frame)) => match frame.into_data() {
                    Ok(data) => {
                        this.held.extend_from_slice(&data);
                        let masked = this.redactor.bytes(&this.held).into_owned();
                        let keep = this.redactor.longest().saturating_sub(1);
                        if masked.len() > keep {
                            let cut = masked.len() - keep;
                            this.held = masked[cut..].to_vec();
                            return Poll::Ready(Some(Ok(Frame::data(Bytes::from(masked[..cut].to_vec())))));
                        }
                        this.held = masked;
                    }
                    // Trailers end the body: send what is held first.
                    Err(trailers) => {
                        this.trailers = Some(trailers);
                        this.ended = true;
                    }
                },
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        self.ended && self.held.is_empty() && self.trailers.is_none()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use http_body_util::BodyExt;
    use std::collections::VecDeque;

    /// A body that yields the given chunks, one frame each.
    struct Chunks(VecDeque<Bytes>);

    impl Body for Chunks {
        type Data = Bytes;
        type Error = std::convert::Infallible;

        fn poll_frame(mut self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
            Poll::Ready(self.0.pop_front().map(|c| Ok(Frame::data(c))))
        }
    }

    #[test]
    fn masks_every_occurrence_longest_first() {
        let r = Redactor::new(["s3cret-token", "s3cret", "ab"]);
        assert_eq!(r.text("x s3cret-token y s3cret z ab"), "x [REDACTED] y [REDACTED] z ab");
        assert!(matches!(r.text("nothing here"), Cow::Borrowed(_)));
        assert_eq!(Redactor::new(["abc"]).text("abc"), "abc", "too short to mask");
    }

    #[tokio::test]
    async fn a_secret_split_across_chunks_is_masked() {
        let secret = "Bearer tok-1234567890";
        let page = format!("{{\"headers\":{{\"authorization\":\"{secret}\"}},\"again\":\"{secret}\"}}");
        // Every way of cutting the page into chunks of n bytes.
        for n in 1..page.len() {
            let chunks = page.as_bytes().chunks(n).map(Bytes::copy_from_slice).collect();
            let redacted = RedactingBody::new(Chunks(chunks), Arc::new(Redactor::new([secret])));
            let out = redacted.collect().await.unwrap().to_bytes();
            let out = String::from_utf8(out.to_vec()).unwrap();
            assert!(!out.contains("tok-1234567890"), "chunks of {n}: {out}");
            assert_eq!(out.matches(MASK).count(), 2, "chunks of {n}: {out}");
            assert!(out.starts_with("{\"headers\"") && out.ends_with("\"}"), "chunks of {n}: {out}");
        }
    }
}
