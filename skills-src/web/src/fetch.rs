//! The `fetch` tool: a URL's status, content type and text, capped.

use crate::download;
use agent_reach_sdk::prelude::*;

/// Bytes of body read at most; past this the text is cut as well.
pub(crate) const MAX_BODY_BYTES: usize = 2 << 20;
/// Characters of text returned unless `max_chars` says otherwise.
const DEFAULT_MAX_CHARS: u32 = 40_000;

/// Arguments of `fetch`.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct FetchArgs {
    /// The address to get: an http(s) URL such as "https://example.com/docs/page.html"
    /// ("https://" is assumed when the scheme is left out). Only hosts the operator
    /// granted are reachable.
    pub url: String,
    /// The most characters of text to return (default 40000, at most 100000). Longer
    /// text is cut, `truncated` is true and `note` says how much there was.
    #[schemars(range(min = 1000, max = 100_000))]
    pub max_chars: Option<u32>,
}

/// What `fetch` returns.
#[derive(Serialize)]
struct Fetched {
    /// HTTP status of the final response (after redirects).
    status: u16,
    /// The URL that answered, after redirects.
    url: String,
    /// The `Content-Type` header, if the server sent one.
    content_type: Option<String>,
    /// The character encoding the text was decoded from.
    encoding: &'static str,
    /// Characters in `text`.
    chars: usize,
    /// Whether `text` is only the beginning of the response.
    truncated: bool,
    /// Why and where the text was cut, and what to do instead.
    #[serde(skip_serializing_if = "Option::is_none")]
    note: Option<String>,
    /// The response body as text.
    text: String,
}

/// GET a URL and return its text.
pub(crate) fn fetch(args: FetchArgs) -> Result<serde_json::Value, ToolError> {
    let max_chars =
        usize::try_from(args.max_chars.unwrap_or(DEFAULT_MAX_CHARS).clamp(1000, 100_000))
            .unwrap_or(usize::MAX);
    let page = download::get(&args.url, MAX_BODY_BYTES)?;
    let mime = page.content_type.as_deref().map(web_convert::mime_type);
    if let Some(mime) = mime.as_deref().filter(|m| !m.is_empty() && !web_convert::is_text(m)) {
        return Err(ToolError::failed(format!(
            "{} is {mime} ({} bytes{}), not text; web.fetch returns only text (HTML, JSON, XML, \
             plain text)",
            page.url,
            page.body.len(),
            if page.truncated { " or more" } else { "" }
        )));
    }
    let decoded = web_convert::decode(&page.body, page.content_type.as_deref());
    let total = decoded.text.chars().count();
    let (text, note) = if total > max_chars {
        let cut: String = decoded.text.chars().take(max_chars).collect();
        let of = if page.truncated { format!("more than {total}") } else { total.to_string() };
        (
            cut,
            Some(format!(
                "Showing the first {max_chars} of {of} characters. For a web page, web.to_markdown \
                 saves the main content as Markdown to a file, usually much shorter than the HTML; \
                 read that file in parts."
            )),
        )
    } else if page.truncated {
        (
            decoded.text,
            Some(format!(
                "The response is larger than {} MiB; only its beginning was read.",
                MAX_BODY_BYTES >> 20
            )),
        )
    } else {
        (decoded.text, None)
    };
    let result = Fetched {
        status: page.status,
        url: page.url,
        content_type: page.content_type,
        encoding: decoded.encoding,
        chars: text.chars().count(),
        truncated: note.is_some(),
        note,
        text,
    };
    Ok(serde_json::to_value(result)?)
}
