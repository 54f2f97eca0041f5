//! Redaction of credential values: from response headers, bodies and
//! trailers on their way into a skill, and from results and errors on their
//! way to the model or a log.
//!
//! A server may echo a credential back (an "echo headers" endpoint, an error
//! page quoting the request); the skill must still never hold the value.
//! What counts as the value is every spelling that decodes to it, because a
//! skill that can pick the endpoint can often pick the spelling too:
//!
//! - escapes, in any mix, decoded at each position rather than listed as
//!   fixed spellings (encoders disagree on *which* characters to escape:
//!   RFC 3986, `encodeURIComponent`, Go's `\u003c`): percent-encoding in
//!   upper or lower case hex, `+` for a space (forms), JSON string escapes
//!   (`\/`, `\"`, `\\`, `\n`…, `\u00e9`, surrogate pairs), HTML character
//!   references (`&amp;`, `&#47;`, `&#x2F;`) and `\xHH`;
//! - base64, standard or URL-safe, padded or not: the value encoded alone,
//!   and inside a larger blob (HTTP Basic `user:secret`) at each of the three
//!   byte alignments, the run of characters that depends on the value alone.
//!   At most 4 bits of the value's first and last byte can remain next to
//!   such a mask, never the value.
//!
//! Not covered, and documented as such: compressed bodies (the network guard
//! refuses those for credentialed requests instead), and a server that
//! transforms the value in other ways (hashes, slices, hex dumps).

use base64::Engine as _;
use base64::engine::general_purpose::{STANDARD, STANDARD_NO_PAD, URL_SAFE, URL_SAFE_NO_PAD};
use bytes::Bytes;
use http::{HeaderMap, HeaderValue};
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

/// The most bytes one byte of a value can take when escaped: `&#x0000002F;`
/// (a character reference with up to eight digits) is twelve; `\xHH` of a
/// four-byte character is sixteen for four bytes. Longer references are
/// not decoded, so this bounds what the streaming masker must hold back.
const MAX_ESCAPED_PER_BYTE: usize = 12;

/// Most digits decoded in `&#…;`; see [`MAX_ESCAPED_PER_BYTE`].
const MAX_REFERENCE_DIGITS: usize = 8;

/// Steps one match attempt may take. Only a value full of `%`, `\` or `&`
/// against text built to match it both literally and escaped comes near;
/// past the budget the span is masked anyway (fail closed).
const STEP_BUDGET: u32 = 4096;

/// The set of values to mask. Its `Debug` never shows them.
#[derive(Clone, Default)]
pub(crate) struct Redactor {
    /// Values matched through escapes, longest first.
    values: Vec<Vec<u8>>,
    /// Base64 spellings, matched exactly.
    exact: Vec<Vec<u8>>,
    /// Bytes a match can start with, as a 256-bit set.
    starts: [u64; 4],
    /// The longest span one match can cover.
    longest: usize,
}

impl std::fmt::Debug for Redactor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Redactor").field("values", &self.values.len()).finish_non_exhaustive()
    }
}

impl Redactor {
    /// Mask each of `values`, in every spelling listed in the module docs
    /// (and nothing shorter than four bytes).
    pub(crate) fn new<I, S>(values: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        let mut values: Vec<Vec<u8>> = values
            .into_iter()
            .map(|v| v.as_ref().as_bytes().to_vec())
            .filter(|v| v.len() >= MIN_SECRET_LEN)
            .collect();
        // Longest first, then by bytes, so equal values sit together and
        // `dedup` removes every repeat.
        values.sort_by(|a, b| b.len().cmp(&a.len()).then_with(|| a.cmp(b)));
        values.dedup();
        let mut exact: Vec<Vec<u8>> = values
            .iter()
            .flat_map(|v| base64_forms(v))
            .filter(|f| f.len() >= MIN_SECRET_LEN)
            .collect();
        exact.sort_by_key(|v| std::cmp::Reverse(v.len()));
        exact.dedup();

        let mut starts = [0u64; 4];
        let mut start = |b: u8| starts[usize::from(b >> 6)] |= 1 << (b & 63);
        for value in &values {
            // Header names are compared without case, so both cases start.
            start(value[0].to_ascii_lowercase());
            start(value[0].to_ascii_uppercase());
            for b in *b"%\\&+" {
                start(b);
            }
        }
        for form in &exact {
            start(form[0]);
        }
        let longest = values
            .iter()
            .map(|v| v.len() * MAX_ESCAPED_PER_BYTE)
            .chain(exact.iter().map(Vec::len))
            .max()
            .unwrap_or(0);
        Redactor { values, exact, starts, longest }
    }

    /// These values and `more`: a masker that keeps what it masked and
    /// learns new secrets (an audit log that outlives a reload).
    #[cfg(feature = "mcp")]
    pub(crate) fn with<I, S>(&self, more: I) -> Redactor
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        let known = self.values.iter().map(|v| String::from_utf8_lossy(v).into_owned());
        Redactor::new(known.chain(more.into_iter().map(|s| s.as_ref().to_owned())))
    }

    /// The longest span a single match can cover: a streaming masker holds
    /// back one byte less, so a secret split across chunks is still found.
    pub(crate) fn longest(&self) -> usize {
        self.longest
    }

    /// `bytes` with every secret replaced by [`MASK`].
    pub(crate) fn bytes<'a>(&self, bytes: &'a [u8]) -> Cow<'a, [u8]> {
        self.scan(bytes, false)
    }

    /// `text` with every secret replaced by [`MASK`].
    pub(crate) fn text<'a>(&self, text: &'a str) -> Cow<'a, str> {
        match self.bytes(text.as_bytes()) {
            Cow::Borrowed(_) => Cow::Borrowed(text),
            // A match of a whole UTF-8 value in UTF-8 text starts and ends on
            // character boundaries; lossy is only a safety net.
            Cow::Owned(bytes) => Cow::Owned(String::from_utf8_lossy(&bytes).into_owned()),
        }
    }

    /// Mask secrets in every header value, as bytes: a value that is not
    /// visible ASCII (`é`, obs-text) is masked like any other, never passed
    /// through unchecked. A header whose *name* spells a secret (compared
    /// without case: names arrive in lower case) is removed. Returns true
    /// when something was masked or removed.
    pub(crate) fn headers(&self, headers: &mut HeaderMap) -> bool {
        if self.values.is_empty() {
            return false;
        }
        let named: Vec<http::HeaderName> = headers
            .keys()
            .filter(|name| matches!(self.scan(name.as_str().as_bytes(), true), Cow::Owned(_)))
            .cloned()
            .collect();
        for name in &named {
            headers.remove(name);
        }
        let mut changed = !named.is_empty();
        for value in headers.values_mut() {
            if let Cow::Owned(masked) = self.bytes(value.as_bytes()) {
                // The original was a valid value and MASK is visible ASCII,
                // so this cannot fail; if it did, the whole value goes.
                let mut masked = HeaderValue::from_bytes(&masked)
                    .unwrap_or_else(|_| HeaderValue::from_static(MASK));
                masked.set_sensitive(value.is_sensitive());
                *value = masked;
                changed = true;
            }
        }
        changed
    }

    fn may_start(&self, b: u8) -> bool {
        self.starts[usize::from(b >> 6)] & (1 << (b & 63)) != 0
    }

    /// Leftmost matches, each replaced by [`MASK`]; `fold` compares ASCII
    /// letters without case.
    fn scan<'a>(&self, input: &'a [u8], fold: bool) -> Cow<'a, [u8]> {
        if self.values.is_empty() {
            return Cow::Borrowed(input);
        }
        let mut out: Option<Vec<u8>> = None;
        let (mut at, mut copied) = (0, 0);
        while at < input.len() {
            let end = if self.may_start(input[at]) { self.match_at(input, at, fold) } else { None };
            match end {
                Some(end) => {
                    let out = out.get_or_insert_with(|| Vec::with_capacity(input.len()));
                    out.extend_from_slice(&input[copied..at]);
                    out.extend_from_slice(MASK.as_bytes());
                    at = end;
                    copied = end;
                }
                None => at += 1,
            }
        }
        match out {
            None => Cow::Borrowed(input),
            Some(mut out) => {
                out.extend_from_slice(&input[copied..]);
                Cow::Owned(out)
            }
        }
    }

    /// The end of the longest match starting at `at`, if any.
    fn match_at(&self, input: &[u8], at: usize, fold: bool) -> Option<usize> {
        let rest = &input[at..];
        let exact =
            self.exact.iter().filter(|form| rest.starts_with(form)).map(|form| at + form.len());
        let decoded = self.values.iter().filter_map(|value| decoded_match(value, input, at, fold));
        exact.chain(decoded).max()
    }
}

/// Where the longest spelling of `value` that starts at `input[start]` ends,
/// decoding escapes as it goes. Depth-first over the only ambiguity there
/// is: a literal `%`, `\` or `&` in the value that the text may also spell
/// escaped (`%25` is `%25` or `%`).
fn decoded_match(value: &[u8], input: &[u8], start: usize, fold: bool) -> Option<usize> {
    let same = |a: &[u8], b: &[u8]| if fold { a.eq_ignore_ascii_case(b) } else { a == b };
    let mut pending: Vec<(usize, usize)> = Vec::new();
    let (mut matched, mut at) = (0, start);
    let mut steps = 0;
    let mut longest: Option<usize> = None;
    loop {
        if matched == value.len() {
            longest = longest.max(Some(at));
            match pending.pop() {
                Some((m, a)) => (matched, at) = (m, a),
                None => return longest,
            }
            continue;
        }
        steps += 1;
        if steps > STEP_BUDGET {
            return longest.max(Some(at.max(start + 1)));
        }
        let want = &value[matched..];
        let mut next = None;
        if at < input.len() && same(&input[at..=at], &want[..1]) {
            next = Some((matched + 1, at + 1));
        }
        if let Some((len, unit)) = escape_at(input, at) {
            let unit = unit.as_slice();
            if want.len() >= unit.len() && same(&want[..unit.len()], unit) {
                let step = (matched + unit.len(), at + len);
                match next {
                    None => next = Some(step),
                    Some(_) => pending.push(step),
                }
            }
        }
        match next.or_else(|| pending.pop()) {
            Some((m, a)) => (matched, at) = (m, a),
            None => return longest,
        }
    }
}

/// Up to four decoded bytes.
struct Unit {
    bytes: [u8; 4],
    len: usize,
}

impl Unit {
    fn byte(b: u8) -> Unit {
        Unit { bytes: [b, 0, 0, 0], len: 1 }
    }

    fn char(c: char) -> Unit {
        let mut bytes = [0; 4];
        let len = c.encode_utf8(&mut bytes).len();
        Unit { bytes, len }
    }

    fn as_slice(&self) -> &[u8] {
        &self.bytes[..self.len]
    }
}

/// The escape that starts at `input[at]`, if any: (its length, what it decodes to).
fn escape_at(input: &[u8], at: usize) -> Option<(usize, Unit)> {
    let rest = input.get(at..)?;
    match *rest.first()? {
        b'+' => Some((1, Unit::byte(b' '))),
        b'%' => Some((3, Unit::byte(hex_byte(rest.get(1..3)?)?))),
        b'\\' => backslash_escape(rest),
        b'&' => character_reference(rest),
        _ => None,
    }
}

fn hex_byte(two: &[u8]) -> Option<u8> {
    let text = std::str::from_utf8(two).ok()?;
    u8::from_str_radix(text, 16).ok().filter(|_| two.iter().all(u8::is_ascii_hexdigit))
}

fn hex_u16(four: &[u8]) -> Option<u16> {
    if four.len() != 4 || !four.iter().all(u8::is_ascii_hexdigit) {
        return None;
    }
    u16::from_str_radix(std::str::from_utf8(four).ok()?, 16).ok()
}

/// JSON (and JavaScript/Python) string escapes: `\/ \" \\ \' \b \f \n \r \t`,
/// `\xHH`, `\uXXXX` and UTF-16 surrogate pairs `\uD83D\uDE00`.
fn backslash_escape(rest: &[u8]) -> Option<(usize, Unit)> {
    let simple = match *rest.get(1)? {
        b'/' => Some(b'/'),
        b'"' => Some(b'"'),
        b'\\' => Some(b'\\'),
        b'\'' => Some(b'\''),
        b'b' => Some(0x08),
        b'f' => Some(0x0c),
        b'n' => Some(b'\n'),
        b'r' => Some(b'\r'),
        b't' => Some(b'\t'),
        _ => None,
    };
    if let Some(b) = simple {
        return Some((2, Unit::byte(b)));
    }
    match rest[1] {
        b'x' => Some((4, Unit::byte(hex_byte(rest.get(2..4)?)?))),
        b'u' => {
            let high = hex_u16(rest.get(2..6)?)?;
            if (0xD800..0xDC00).contains(&high) {
                if rest.get(6..8)? != b"\\u" {
                    return None;
                }
                let low = hex_u16(rest.get(8..12)?)?;
                let c = char::decode_utf16([high, low]).next()?.ok()?;
                return Some((12, Unit::char(c)));
            }
            Some((6, Unit::char(char::from_u32(u32::from(high))?)))
        }
        _ => None,
    }
}

/// HTML character references: the five named ones XML knows, and numeric
/// ones in decimal or hex with at most [`MAX_REFERENCE_DIGITS`] digits.
fn character_reference(rest: &[u8]) -> Option<(usize, Unit)> {
    for (name, b) in [
        (&b"&amp;"[..], b'&'),
        (b"&lt;", b'<'),
        (b"&gt;", b'>'),
        (b"&quot;", b'"'),
        (b"&apos;", b'\''),
    ] {
        if rest.starts_with(name) {
            return Some((name.len(), Unit::byte(b)));
        }
    }
    let after = rest.strip_prefix(b"&#")?;
    let (radix, digits_at) = match after.first()? {
        b'x' | b'X' => (16, 3),
        _ => (10, 2),
    };
    let digits = rest[digits_at..]
        .iter()
        .take(MAX_REFERENCE_DIGITS + 1)
        .take_while(|b| b.is_ascii_hexdigit())
        .count();
    if digits == 0 || digits > MAX_REFERENCE_DIGITS || rest.get(digits_at + digits) != Some(&b';') {
        return None;
    }
    let text = std::str::from_utf8(&rest[digits_at..digits_at + digits]).ok()?;
    let code = u32::from_str_radix(text, radix).ok()?;
    Some((digits_at + digits + 1, Unit::char(char::from_u32(code)?)))
}

/// The base64 spellings of `value`: whole (both alphabets, padded or not),
/// and for each of the three positions it can start at inside a larger
/// blob, the characters that depend on its bytes alone.
fn base64_forms(value: &[u8]) -> Vec<Vec<u8>> {
    let mut forms: Vec<Vec<u8>> = [STANDARD, STANDARD_NO_PAD, URL_SAFE, URL_SAFE_NO_PAD]
        .iter()
        .map(|e| e.encode(value).into_bytes())
        .collect();
    for offset in 0..3 {
        let mut shifted = vec![0u8; offset];
        shifted.extend_from_slice(value);
        // Characters 6 bits each: those covering only the offset's bits (or
        // mixing them with the value's) come first, a character mixing the
        // value's last bits with what follows comes last; both vary.
        let first = (8 * offset).div_ceil(6);
        let end = 8 * (offset + value.len()) / 6;
        for engine in [STANDARD_NO_PAD, URL_SAFE_NO_PAD] {
            let encoded = engine.encode(&shifted).into_bytes();
            if first < end {
                forms.push(encoded[first..end].to_vec());
            }
        }
    }
    forms
}

/// A response body with secrets masked as it streams, trailers included.
/// Holds back the last `longest match - 1` bytes of what it has seen, so a
/// secret split across chunks is still found.
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

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, B::Error>>> {
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
                            return Poll::Ready(Some(Ok(Frame::data(Bytes::from(
                                masked[..cut].to_vec(),
                            )))));
                        }
                        this.held = masked;
                    }
                    // Trailers end the body: send what is held first. A
                    // server can echo a secret in a trailer as in a header.
                    Err(frame) => {
                        this.trailers = match frame.into_trailers() {
                            Ok(mut trailers) => {
                                this.redactor.headers(&mut trailers);
                                Some(Frame::trailers(trailers))
                            }
                            // Neither data nor trailers: a frame kind this
                            // code does not know cannot be checked; drop it.
                            Err(_) => None,
                        };
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
    use proptest::prelude::*;
    use std::collections::VecDeque;

    /// A body that yields the given frames, one at a time, never pending.
    struct Frames(VecDeque<Frame<Bytes>>);

    impl Body for Frames {
        type Data = Bytes;
        type Error = std::convert::Infallible;

        fn poll_frame(
            mut self: Pin<&mut Self>,
            _: &mut Context<'_>,
        ) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
            Poll::Ready(self.0.pop_front().map(Ok))
        }
    }

    /// `text` cut into pieces of the given sizes (cycled), masked as it
    /// streams; returns the body and the trailers that came out.
    fn stream(
        redactor: &Redactor,
        text: &[u8],
        sizes: &[usize],
        trailers: Option<HeaderMap>,
    ) -> (Vec<u8>, Option<HeaderMap>) {
        let mut frames = VecDeque::new();
        let (mut at, mut i) = (0, 0);
        while at < text.len() {
            let n = sizes[i % sizes.len()].max(1).min(text.len() - at);
            frames.push_back(Frame::data(Bytes::copy_from_slice(&text[at..at + n])));
            at += n;
            i += 1;
        }
        frames.extend(trailers.map(Frame::trailers));
        let mut body = RedactingBody::new(Frames(frames), Arc::new(redactor.clone()));
        let mut cx = Context::from_waker(std::task::Waker::noop());
        let (mut out, mut trailers) = (Vec::new(), None);
        while let Poll::Ready(Some(frame)) = Pin::new(&mut body).poll_frame(&mut cx) {
            let frame = frame.unwrap_or_else(|e| match e {});
            match frame.into_data() {
                Ok(data) => out.extend_from_slice(&data),
                Err(frame) => trailers = frame.into_trailers().ok(),
            }
        }
        assert!(body.is_end_stream());
        (out, trailers)
    }

    #[test]
    fn masks_every_occurrence_longest_first() {
        let r = Redactor::new(["s3cret-token", "s3cret", "ab"]);
        assert_eq!(r.text("x s3cret-token y s3cret z ab"), "x [REDACTED] y [REDACTED] z ab");
        assert!(matches!(r.text("nothing here"), Cow::Borrowed(_)));
        assert_eq!(Redactor::new(["abc"]).text("abc"), "abc", "too short to mask");
        assert_eq!(Redactor::default().text("s3cret"), "s3cret");
    }

    #[test]
    fn a_secret_split_across_chunks_is_masked() {
        let secret = "Bearer tok-1234567890";
        let page =
            format!("{{\"headers\":{{\"authorization\":\"{secret}\"}},\"again\":\"{secret}\"}}");
        let redactor = Redactor::new([secret]);
        // Every way of cutting the page into chunks of n bytes.
        for n in 1..page.len() {
            let (out, _) = stream(&redactor, page.as_bytes(), &[n], None);
            let out = String::from_utf8(out).unwrap();
            assert!(!out.contains("tok-1234567890"), "chunks of {n}: {out}");
            assert_eq!(out.matches(MASK).count(), 2, "chunks of {n}: {out}");
            assert!(
                out.starts_with("{\"headers\"") && out.ends_with("\"}"),
                "chunks of {n}: {out}"
            );
        }
    }

    /// (secret, how a server spelled it). Each was passed to the skill as
    /// it is before masking understood encodings (only the first was masked).
    const SPELLINGS: &[(&str, &str)] = &[
        ("tok/9f+8e 7d\"q", "tok/9f+8e 7d\"q"),
        ("tok/9f+8e 7d\"q", r#"tok\/9f+8e 7d\"q"#),
        ("tok/9f+8e 7d\"q", r"tok\u002f9f\u002B8e\u00207d\u0022q"),
        ("tok/9f+8e 7d\"q", "tok%2F9f%2B8e%207d%22q"),
        ("tok/9f+8e 7d\"q", "tok%2f9f%2b8e%207d%22q"),
        ("tok/9f+8e 7d\"q", "tok%2F9f%2B8e+7d%22q"),
        ("tok/9f+8e 7d\"q", "tok/9f%2b8e+7d&quot;q"),
        ("tok/9f+8e 7d\"q", "tok&#47;9f&#x2B;8e&#X20;7d&#34;q"),
        ("tok/9f+8e 7d\"q", r"tok\x2f9f\x2b8e\x207d\x22q"),
        ("tok/9f+8e 7d\"q", "%74%6F%6B%2F%39%66%2B%38%65%20%37%64%22%71"),
        ("clé-ü-😀-key", r"cl\u00e9-\u00FC-\ud83d\ude00-key"),
        ("clé-ü-😀-key", "cl%C3%A9-%c3%bc-%F0%9F%98%80-key"),
        ("clé-ü-😀-key", "cl&#233;-&#xfc;-&#128512;-key"),
        ("a&b<c>d'e", "a&amp;b&lt;c&gt;d&apos;e"),
        ("a&b<c>d'e", r"a\u0026b\u003cc\u003ed\u0027e"),
        ("back\\slash%25", r"back\\slash%2525"),
        ("back\\slash%25", "back%5Cslash%25"),
        // base64, whole: standard, URL-safe, padded or not
        ("tok/9f+8e 7d\"q", "dG9rLzlmKzhlIDdkInE="),
        ("tok/9f+8e 7d\"q", "dG9rLzlmKzhlIDdkInE"),
        ("s3cr3t?>>tok", "czNjcjN0Pz4-dG9r"),
        ("s3cr3t?>>tok", "czNjcjN0Pz4+dG9r"),
    ];

    #[test]
    fn every_spelling_of_a_secret_is_masked() {
        for &(secret, spelled) in SPELLINGS {
            let r = Redactor::new([secret]);
            let out = r.text(&format!("before {spelled} after")).into_owned();
            assert_eq!(out, "before [REDACTED] after", "{secret:?} spelled {spelled:?}");
        }
    }

    #[test]
    fn a_secret_inside_a_larger_base64_blob_is_masked_at_every_alignment() {
        let secret = "s3cr3t-tok-9f8e7d6c";
        let r = Redactor::new([secret]);
        for user in ["", "u", "us", "usr", "user:", "alice:"] {
            for tail in ["", "!", "!!", "!!!"] {
                for url in [false, true] {
                    let (encoded, core) = blob(secret, url, user.as_bytes(), tail.as_bytes());
                    let out = r.text(&format!("Authorization: Basic {encoded}")).into_owned();
                    assert!(
                        out.contains(MASK) && !out.contains(&core),
                        "{user}{secret}{tail} as {encoded}: {out}"
                    );
                }
            }
        }
    }

    #[test]
    fn header_values_that_are_not_ascii_are_masked_as_bytes() {
        let secret = "s3cr3t-tok-9f8e7d6c";
        let r = Redactor::new([secret]);
        let mut headers = HeaderMap::new();
        let raw = format!("caf\u{e9} Bearer {secret} \u{fc}");
        headers.insert("x-echo", HeaderValue::from_bytes(raw.as_bytes()).unwrap());
        headers.append("x-echo", HeaderValue::from_static("plain"));
        headers.insert(
            "x-json",
            HeaderValue::from_str(&format!("{{\"k\":\"{}\"}}", secret.replace('-', "\\u002d")))
                .unwrap(),
        );
        headers.insert(
            http::HeaderName::from_bytes(secret.as_bytes()).unwrap(),
            HeaderValue::from_static("1"),
        );
        headers.insert("x-other", HeaderValue::from_static("fine"));
        assert!(r.headers(&mut headers));
        let values: Vec<&[u8]> =
            headers.get_all("x-echo").iter().map(HeaderValue::as_bytes).collect();
        assert_eq!(values, [format!("caf\u{e9} Bearer {MASK} \u{fc}").as_bytes(), b"plain"]);
        assert_eq!(headers["x-json"], "{\"k\":\"[REDACTED]\"}");
        assert!(headers.get(secret).is_none(), "a header named after the secret is removed");
        assert_eq!(headers["x-other"], "fine");
        assert!(!Redactor::new([secret]).headers(&mut HeaderMap::new()));
    }

    #[test]
    fn trailers_are_masked() {
        let secret = "s3cr3t-tok-9f8e7d6c";
        let mut trailers = HeaderMap::new();
        trailers
            .insert("x-echo-trailer", HeaderValue::from_str(&format!("Bearer {secret}")).unwrap());
        let (body, trailers) = stream(&Redactor::new([secret]), b"body", &[2], Some(trailers));
        assert_eq!(body, b"body");
        assert_eq!(trailers.expect("trailers come through")["x-echo-trailer"], "Bearer [REDACTED]");
    }

    #[test]
    fn debug_never_shows_a_value() {
        let text = format!("{:?}", Redactor::new(["s3cr3t-tok-9f8e7d6c"]));
        assert!(!text.contains("s3cr3t") && !text.contains("115"), "{text}");
    }

    #[test]
    fn ambiguous_escapes_are_bounded_and_fail_closed() {
        // A value of escape introducers against text that matches it both
        // literally and escaped at every step: the search stays bounded.
        let secret = "%25".repeat(40);
        let text = "%2525".repeat(40);
        let started = std::time::Instant::now();
        let out = Redactor::new([secret.as_str()]).text(&text).into_owned();
        assert!(started.elapsed() < std::time::Duration::from_secs(2));
        assert!(out.starts_with(MASK), "{out}");
    }

    // --- the masker's property: for any chunking and any spelling, the
    // secret never comes out.

    /// Letters of MASK are left out of secrets so that a MASK next to
    /// leftover text can never spell one by accident.
    const SECRET_CHARS: &[char] = &[
        'a', 'b', 'f', 'g', 'k', 'q', 'x', 'z', '0', '3', '7', '9', 'B', 'F', 'G', 'K', 'X', 'Z',
        '-', '_', '.', '~', '/', '+', '=', ':', '%', '&', '"', '\\', ' ', '\'', '<', '>', '?', '#',
        '@', '!', '$', '*', 'é', 'ü', '中', '😀',
    ];

    fn json(text: &str, slash: bool, unicode_upper: Option<bool>) -> String {
        let mut out = serde_json::to_string(text).unwrap();
        out = out[1..out.len() - 1].to_owned();
        if slash {
            out = out.replace('/', "\\/");
        }
        if let Some(upper) = unicode_upper {
            out =
                out.chars()
                    .flat_map(|c| {
                        if c.is_ascii() {
                            vec![c.to_string()]
                        } else {
                            let mut units = [0u16; 2];
                            c.encode_utf16(&mut units)
                                .iter()
                                .map(|u| {
                                    if upper {
                                        format!("\\u{u:04X}")
                                    } else {
                                        format!("\\u{u:04x}")
                                    }
                                })
                                .collect()
                        }
                    })
                    .collect();
        }
        out
    }

    fn percent(text: &str, keep: impl Fn(u8) -> bool, upper: bool, plus: bool) -> String {
        text.bytes()
            .map(|b| match b {
                b' ' if plus => "+".to_owned(),
                b if keep(b) => char::from(b).to_string(),
                b if upper => format!("%{b:02X}"),
                b => format!("%{b:02x}"),
            })
            .collect()
    }

    fn html(text: &str) -> String {
        text.chars()
            .map(|c| match c {
                '&' => "&amp;".to_owned(),
                '<' => "&lt;".to_owned(),
                '>' => "&gt;".to_owned(),
                '"' => "&quot;".to_owned(),
                '\'' => "&#39;".to_owned(),
                c if !c.is_ascii() => format!("&#{};", u32::from(c)),
                c => c.to_string(),
            })
            .collect()
    }

    /// `before + secret + after` in base64 (standard, or URL-safe without
    /// padding), and the characters of it that depend on the secret alone.
    fn blob(secret: &str, url: bool, before: &[u8], after: &[u8]) -> (String, String) {
        let mut blob = before.to_vec();
        blob.extend_from_slice(secret.as_bytes());
        blob.extend_from_slice(after);
        let encoded = if url { URL_SAFE_NO_PAD.encode(&blob) } else { STANDARD.encode(&blob) };
        let first = (8 * before.len()).div_ceil(6);
        let end = 8 * (before.len() + secret.len()) / 6;
        let core = encoded[first..end].to_owned();
        (encoded, core)
    }

    /// Spellings 0..=10: `secret` escaped as JSON, percent, form, HTML or `\xHH` text.
    fn spell(secret: &str, n: usize) -> String {
        let unreserved = |b: u8| b.is_ascii_alphanumeric() || b"-._~".contains(&b);
        match n {
            0 => secret.to_owned(),
            1 => json(secret, false, None),
            2 => json(secret, true, None),
            3 => json(secret, true, Some(false)),
            4 => json(secret, false, Some(true)),
            5 => percent(secret, unreserved, true, false),
            6 => percent(secret, unreserved, false, false),
            7 => percent(secret, |b| unreserved(b) || b == b'*', true, true),
            8 => percent(secret, |_| false, false, false),
            9 => html(secret),
            _ => secret.bytes().map(|b| format!("\\x{b:02x}")).collect(),
        }
    }

    proptest! {
        #[test]
        fn no_spelling_of_a_secret_survives_any_chunking(
            secret in proptest::collection::vec(proptest::sample::select(SECRET_CHARS), 4..24)
                .prop_map(|c| c.into_iter().collect::<String>()),
            with_prefix in any::<bool>(),
            spelling in 0usize..15,
            filler_before in "[ -~]{0,24}",
            filler_after in "[ -~]{0,24}",
            blob_before in proptest::collection::vec(any::<u8>(), 0..6),
            blob_after in proptest::collection::vec(any::<u8>(), 0..4),
            sizes in proptest::collection::vec(1usize..48, 1..8),
        ) {
            // The host masks the bare value and the value as sent, with its prefix.
            let sent = format!("Bearer {secret}");
            let redactor = Redactor::new([secret.as_str(), sent.as_str()]);
            let (spelled, forbidden) = if spelling <= 10 {
                let shown = if with_prefix { sent.as_str() } else { secret.as_str() };
                (spell(shown, spelling), spell(&secret, spelling))
            } else {
                // 11, 12: the (prefixed) secret alone in base64; 13, 14: inside a larger blob.
                let (mut before, after) = if spelling >= 13 {
                    (blob_before, blob_after)
                } else {
                    (Vec::new(), Vec::new())
                };
                if with_prefix {
                    before.extend_from_slice(b"Bearer ");
                }
                blob(&secret, spelling % 2 == 0, &before, &after)
            };
            let page = format!("{filler_before}{spelled}{filler_after}");
            let (out, _) = stream(&redactor, page.as_bytes(), &sizes, None);
            let whole = redactor.bytes(page.as_bytes()).into_owned();
            for masked in [&out, &whole] {
                let text = String::from_utf8_lossy(masked);
                prop_assert!(!text.contains(&forbidden), "{forbidden:?} in {text:?}");
                prop_assert!(!text.contains(&secret), "{secret:?} in {text:?}");
                prop_assert!(text.contains(MASK), "{text:?}");
            }
        }
    }
}
