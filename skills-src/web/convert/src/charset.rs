//! Bytes to text: which character encoding a response is in.
//!
//! The order follows what browsers do (WHATWG "encoding sniffing"), minus
//! statistical guessing: a byte-order mark, then the `charset` of the
//! `Content-Type` header, then a `<meta charset>` (or `http-equiv`) near the
//! start of an HTML document, then UTF-8 with invalid bytes replaced.

use encoding_rs::{Encoding, UTF_8};

/// How far into an HTML document to look for a `<meta charset>`. The
/// standard says 1024 bytes; real pages often put a long `<head>` first, and
/// looking further costs nothing but a scan.
const META_SCAN_BYTES: usize = 8 * 1024;

/// Text decoded from a response body.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Decoded {
    /// The text.
    pub text: String,
    /// The encoding used, by its WHATWG name (`UTF-8`, `windows-1252`, `Shift_JIS`, …).
    pub encoding: &'static str,
    /// Where the encoding came from.
    pub source: EncodingSource,
    /// Whether some bytes were invalid in that encoding and replaced by `�`.
    pub had_errors: bool,
}

/// Where the encoding of a body was learnt.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum EncodingSource {
    /// A byte-order mark at the start of the body.
    ByteOrderMark,
    /// The `charset` parameter of the `Content-Type` header.
    Header,
    /// A `<meta charset>` or `<meta http-equiv="Content-Type">` in the document.
    Meta,
    /// Nothing declared one: UTF-8 was assumed.
    Default,
}

/// Decode a response body, using the `Content-Type` header value if there is one.
///
/// ```
/// let body = b"<meta charset=\"windows-1252\"><p>caf\xe9</p>";
/// let decoded = web_convert::decode(body, Some("text/html"));
/// assert_eq!(decoded.encoding, "windows-1252");
/// assert!(decoded.text.contains("café"));
/// ```
pub fn decode(bytes: &[u8], content_type: Option<&str>) -> Decoded {
    let (encoding, source) = sniff(bytes, content_type);
    // `decode` removes a BOM of the encoding it uses (and switches to the
    // BOM's encoding if there is one, which `sniff` already chose).
    let (text, used, had_errors) = encoding.decode(bytes);
    Decoded { text: text.into_owned(), encoding: used.name(), source, had_errors }
}

/// Decide the encoding without decoding.
fn sniff(bytes: &[u8], content_type: Option<&str>) -> (&'static Encoding, EncodingSource) {
    if let Some((encoding, _)) = Encoding::for_bom(bytes) {
        return (encoding, EncodingSource::ByteOrderMark);
    }
    if let Some(encoding) = content_type.and_then(charset_param).and_then(label) {
        return (encoding, EncodingSource::Header);
    }
    let html = content_type.is_none_or(is_html);
    if html
        && let Some(encoding) =
            meta_charset(&bytes[..bytes.len().min(META_SCAN_BYTES)]).and_then(label)
    {
        return (encoding, EncodingSource::Meta);
    }
    (UTF_8, EncodingSource::Default)
}

/// Look an encoding label up. A document cannot declare itself UTF-16 in
/// ASCII-compatible bytes, so browsers read such a declaration as UTF-8.
fn label(name: &str) -> Option<&'static Encoding> {
    let encoding = Encoding::for_label(name.trim().as_bytes())?;
    Some(if encoding == encoding_rs::UTF_16LE || encoding == encoding_rs::UTF_16BE {
        UTF_8
    } else {
        encoding
    })
}

/// Whether a `Content-Type` value is an HTML (or XHTML) document.
pub fn is_html(content_type: &str) -> bool {
    let mime = mime_type(content_type);
    mime == "text/html" || mime == "application/xhtml+xml"
}

/// Whether a media type (as from [`mime_type`]) is text a model can read —
/// HTML, XML, JSON, CSS, scripts, plain text — rather than images, PDF or archives.
pub fn is_text(mime: &str) -> bool {
    mime.starts_with("text/")
        || mime.ends_with("+xml")
        || mime.ends_with("+json")
        || matches!(
            mime,
            "application/xml"
                | "application/json"
                | "application/javascript"
                | "application/ecmascript"
                | "application/x-javascript"
                | "application/x-sh"
                | "application/toml"
                | "application/yaml"
                | "application/x-yaml"
        )
}

/// The media type of a `Content-Type` value, lower case, without parameters.
pub fn mime_type(content_type: &str) -> String {
    content_type.split(';').next().unwrap_or("").trim().to_ascii_lowercase()
}

/// The `charset` parameter of a `Content-Type` value.
fn charset_param(content_type: &str) -> Option<&str> {
    content_type.split(';').skip(1).find_map(|param| {
        let (name, value) = param.split_once('=')?;
        name.trim().eq_ignore_ascii_case("charset").then(|| value.trim().trim_matches(['"', '\'']))
    })
}

/// The charset a `<meta>` tag declares: `<meta charset="x">` or
/// `<meta http-equiv="Content-Type" content="text/html; charset=x">`.
fn meta_charset(head: &[u8]) -> Option<&str> {
    let mut rest = head;
    while let Some(at) = find_ascii_ci(rest, b"<meta") {
        let tag_start = at + 5;
        let tag_len =
            rest[tag_start..].iter().position(|&b| b == b'>').unwrap_or(rest.len() - tag_start);
        let tag = &rest[tag_start..tag_start + tag_len];
        if let Some(value) = charset_in_tag(tag) {
            return Some(value);
        }
        rest = &rest[tag_start + tag_len..];
    }
    None
}

/// `charset` followed by `=` and a value, anywhere in a tag's attributes.
fn charset_in_tag(tag: &[u8]) -> Option<&str> {
    let at = find_ascii_ci(tag, b"charset")?;
    let mut i = at + 7;
    while tag.get(i).is_some_and(u8::is_ascii_whitespace) {
        i += 1;
    }
    if tag.get(i) != Some(&b'=') {
        return charset_in_tag(&tag[at + 7..]);
    }
    i += 1;
    while tag.get(i).is_some_and(|b| b.is_ascii_whitespace() || *b == b'"' || *b == b'\'') {
        i += 1;
    }
    let len =
        tag[i..].iter().take_while(|b| b.is_ascii_alphanumeric() || b"-_:.".contains(b)).count();
    std::str::from_utf8(&tag[i..i + len]).ok().filter(|v| !v.is_empty())
}

fn find_ascii_ci(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w.eq_ignore_ascii_case(needle))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_charset_wins_over_meta() {
        let body = b"<meta charset=utf-8><p>caf\xe9</p>";
        let d = decode(body, Some("text/html; charset=ISO-8859-1"));
        // ISO-8859-1 is windows-1252 for the web.
        assert_eq!((d.encoding, d.source), ("windows-1252", EncodingSource::Header));
        assert!(d.text.contains("café"), "{}", d.text);
        assert!(!d.had_errors);
    }

    #[test]
    fn meta_charset_forms() {
        let cases: &[(&[u8], &str)] = &[
            (b"<META CHARSET='Shift_JIS'>", "Shift_JIS"),
            (b"<meta charset = \"euc-jp\" />", "EUC-JP"),
            (
                b"<meta http-equiv=\"Content-Type\" content=\"text/html; charset=windows-1251\">",
                "windows-1251",
            ),
            (
                b"<meta name=\"viewport\" content=\"width=device-width\"><meta charset=\"gbk\">",
                "GBK",
            ),
            (b"<meta property=\"og:charset-ish\" content=\"x\"><meta charset=koi8-r>", "KOI8-R"),
        ];
        for (head, want) in cases {
            let d = decode(head, Some("text/html"));
            assert_eq!(d.encoding, *want, "{}", String::from_utf8_lossy(head));
            assert_eq!(d.source, EncodingSource::Meta);
        }
    }

    #[test]
    fn shift_jis_from_meta_decodes() {
        let (bytes, _, _) = encoding_rs::SHIFT_JIS.encode(
            "<meta charset=\"shift_jis\">\
             <p>日本語のテキスト</p>",
        );
        let d = decode(&bytes, None);
        assert_eq!(d.encoding, "Shift_JIS");
        assert!(d.text.contains("日本語のテキスト"));
    }

    #[test]
    fn a_bom_wins_over_everything() {
        let d = decode(
            b"\xef\xbb\xbf<meta charset=windows-1252>caf\xc3\xa9",
            Some("text/html; charset=koi8-r"),
        );
        assert_eq!((d.encoding, d.source), ("UTF-8", EncodingSource::ByteOrderMark));
        assert!(d.text.starts_with("<meta") && d.text.ends_with("café"), "{}", d.text);
    }

    #[test]
    fn undeclared_invalid_utf8_is_replaced_not_rejected() {
        let d = decode(b"<p>caf\xe9 ok</p>", Some("text/html"));
        assert_eq!((d.encoding, d.source), ("UTF-8", EncodingSource::Default));
        assert!(d.had_errors);
        assert_eq!(d.text, "<p>caf\u{fffd} ok</p>");
    }

    #[test]
    fn unknown_labels_and_utf16_declarations_fall_back_to_utf8() {
        assert_eq!(decode(b"x", Some("text/html; charset=klingon")).encoding, "UTF-8");
        assert_eq!(decode(b"<meta charset=utf-16>x", None).encoding, "UTF-8");
    }

    #[test]
    fn meta_is_not_read_in_plain_text() {
        let d = decode(b"<meta charset=windows-1252> caf\xc3\xa9", Some("text/plain"));
        assert_eq!(d.encoding, "UTF-8");
    }

    #[test]
    fn content_type_helpers() {
        assert!(is_html("Text/HTML; charset=utf-8"));
        assert!(is_html("application/xhtml+xml"));
        assert!(!is_html("application/json"));
        assert_eq!(charset_param("text/html; charset=\"UTF-8\"; q=1"), Some("UTF-8"));
        assert_eq!(charset_param("text/html"), None);
        assert_eq!(mime_type(" Text/Plain ; charset=x"), "text/plain");
    }

    #[test]
    fn text_types() {
        for t in [
            "text/html",
            "text/plain",
            "application/json",
            "application/rss+xml",
            "image/svg+xml",
            "application/ld+json",
        ] {
            assert!(is_text(t), "{t}");
        }
        for t in [
            "image/png",
            "application/pdf",
            "application/octet-stream",
            "application/zip",
            "video/mp4",
        ] {
            assert!(!is_text(t), "{t}");
        }
    }
}
