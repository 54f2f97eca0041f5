//! HTML pages to Markdown files, for the Agent Reach `web` skill — and for
//! anything else that wants the same conversion natively (the benchmark
//! compares the sandboxed skill with this crate).
//!
//! No I/O and no SDK: bytes and a URL in, text out.
//!
//! ```
//! use web_convert::{decode, html_to_markdown, Provenance};
//!
//! let body = b"<html><head><title>Caf\xe9 notes</title>\
//!     <meta charset=\"windows-1252\"></head><body>
//!   <nav><a href=\"/\">Home</a></nav>
//!   <article><h2>Grinding</h2><p>Grind the beans just before brewing: ground coffee \
//!     loses its aroma within minutes.
//!   Read <a href=\"brewing.html\">the brewing guide</a> next.</p></article></body></html>";
//! let page = decode(body, Some("text/html"));
//! let article = html_to_markdown(&page.text, "https://coffee.example/notes/").unwrap();
//! // Or both steps, and plain text too, exactly as the skill does:
//! assert_eq!(
//!     web_convert::convert_response(body, Some("text/html"), "https://coffee.example/notes/")
//!         .unwrap(),
//!     article
//! );
//! let file = article.to_document(Provenance {
//!     url: "https://coffee.example/notes/",
//!     fetched_at: 1_714_555_800,
//!     truncated: false,
//! });
//! assert!(file.contains("# Café notes"));
//! assert!(file.contains("## Grinding"));
//! assert!(file.contains("(https://coffee.example/notes/brewing.html)"));
//! assert!(!file.contains("Home"));
//! ```

mod charset;
mod document;
mod extract;

pub use charset::{Decoded, EncodingSource, decode, is_html, is_text, mime_type};
pub use document::{Provenance, file_name, rfc3339};
pub use extract::{Article, ConvertError, MIN_TEXT_CHARS, html_to_markdown, visible_chars};

/// `example.com/a` → `https://example.com/a`: models often leave the scheme
/// out, and a browser's address bar would add it too. Anything with a
/// scheme is returned as it is (trimmed).
///
/// ```
/// assert_eq!(web_convert::with_scheme(" example.com/a "), "https://example.com/a");
/// assert_eq!(web_convert::with_scheme("http://example.com"), "http://example.com");
/// assert_eq!(web_convert::with_scheme("ftp://example.com"), "ftp://example.com");
/// ```
pub fn with_scheme(url: &str) -> String {
    let url = url.trim();
    if url.contains("://") || url.is_empty() { url.to_owned() } else { format!("https://{url}") }
}

/// Convert a response body the way `web.to_markdown` does: decode it, then
/// HTML (or XML, or no `Content-Type`) through [`html_to_markdown`], plain
/// text and Markdown as they are, titled by the last segment of the URL.
///
/// ```
/// let article = web_convert::convert_response(
///     b"Tides rise and fall twice a day, pulled by the Moon and, less, by the Sun.",
///     Some("text/plain"),
///     "https://sea.example/notes/tides.txt",
/// ).unwrap();
/// assert_eq!(article.title, "tides.txt");
/// ```
///
/// # Errors
/// [`ConvertError::NotAPage`] for other media types (JSON, images, PDF, …);
/// otherwise as [`html_to_markdown`].
pub fn convert_response(
    body: &[u8],
    content_type: Option<&str>,
    url: &str,
) -> Result<Article, ConvertError> {
    let mime = content_type.map(mime_type).unwrap_or_default();
    let decoded = decode(body, content_type);
    if matches!(mime.as_str(), "text/plain" | "text/markdown" | "text/x-markdown") {
        let text = decoded.text.trim();
        let text_chars = visible_chars(text);
        if text_chars < MIN_TEXT_CHARS {
            return Err(ConvertError::NearlyEmpty { text_chars, uses_javascript: false });
        }
        let title = url
            .split(['?', '#'])
            .next()
            .unwrap_or(url)
            .rsplit('/')
            .find(|s| !s.is_empty())
            .unwrap_or(url);
        return Ok(Article {
            title: title.to_owned(),
            byline: None,
            published: None,
            markdown: format!("{text}\n"),
            text_chars,
        });
    }
    if !(mime.is_empty() || is_html(&mime) || mime.ends_with("xml")) {
        return Err(ConvertError::NotAPage { content_type: mime });
    }
    html_to_markdown(&decoded.text, url)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn responses_are_dispatched_by_media_type() {
        let url = "https://x.example/a/notes.txt?v=2";
        let err = convert_response(b"{\"a\":1}", Some("application/json"), url).unwrap_err();
        assert_eq!(err, ConvertError::NotAPage { content_type: "application/json".into() });
        assert!(matches!(
            convert_response(b"short", Some("text/plain"), url),
            Err(ConvertError::NearlyEmpty { .. })
        ));
        let long =
            "Words enough to count as a page of notes about the harbour and its tides. ".repeat(2);
        let article =
            convert_response(long.as_bytes(), Some("text/plain; charset=utf-8"), url).unwrap();
        assert_eq!(
            (article.title.as_str(), article.markdown.as_str()),
            ("notes.txt", format!("{}\n", long.trim()).as_str())
        );
        // No Content-Type at all: treated as HTML, as browsers sniff it.
        let html = format!("<article><h1>Notes</h1><p>{long}</p></article>");
        assert!(
            convert_response(html.as_bytes(), None, url).unwrap().markdown.contains("Words enough")
        );
    }
}
