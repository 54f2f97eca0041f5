//! The saved file: a front-matter header (title, source URL, fetch time)
//! above the Markdown, and the file's default name.

use crate::Article;
use url::Url;

/// Where and when a page was fetched, for the header of the saved file.
#[derive(Clone, Copy, Debug)]
pub struct Provenance<'a> {
    /// The URL that answered (after redirects).
    pub url: &'a str,
    /// Seconds since the Unix epoch, UTC.
    pub fetched_at: u64,
    /// Whether the page was cut at the size cap before conversion.
    pub truncated: bool,
}

impl Article {
    /// The Markdown file: YAML front matter with `title`, `source`, `fetched`
    /// (and `author`, `published`, `truncated` when known), then the title as
    /// a heading unless the content already opens with one, then the content.
    ///
    /// ```
    /// # let html = "<article><h1>On bees</h1><p>Bees visit flowers to gather nectar, which they \
    /// #     turn into honey inside the hive.</p></article>";
    /// let article = web_convert::html_to_markdown(html, "https://bees.example/a").unwrap();
    /// let file = article.to_document(web_convert::Provenance {
    ///     url: "https://bees.example/a",
    ///     fetched_at: 0,
    ///     truncated: false,
    /// });
    /// assert!(file.starts_with(
    ///     "---\ntitle: \"On bees\"\nsource: \"https://bees.example/a\"\n\
    ///      fetched: \"1970-01-01T00:00:00Z\"\n---\n"
    /// ));
    /// ```
    pub fn to_document(&self, from: Provenance<'_>) -> String {
        let mut out = String::with_capacity(self.markdown.len() + 256);
        out.push_str("---\n");
        out.push_str(&format!("title: {}\n", yaml_string(&self.title)));
        out.push_str(&format!("source: {}\n", yaml_string(from.url)));
        out.push_str(&format!("fetched: {}\n", yaml_string(&rfc3339(from.fetched_at))));
        if let Some(byline) = &self.byline {
            out.push_str(&format!("author: {}\n", yaml_string(byline)));
        }
        if let Some(published) = &self.published {
            out.push_str(&format!("published: {}\n", yaml_string(published)));
        }
        if from.truncated {
            out.push_str(
                "truncated: true  # the page was larger than the size cap; only its beginning was \
                 converted\n",
            );
        }
        out.push_str("---\n\n");
        let title = self.title.split_whitespace().collect::<Vec<_>>().join(" ");
        if !title.is_empty() && !self.markdown.trim_start().starts_with("# ") {
            out.push_str(&format!("# {title}\n\n"));
        }
        out.push_str(&self.markdown);
        out
    }
}

/// A double-quoted YAML scalar (JSON string syntax, which YAML accepts).
fn yaml_string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' | '\r' | '\t' => out.push(' '),
            c if c.is_control() => {}
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// `2024-05-01T09:30:00Z` for seconds since the Unix epoch.
pub fn rfc3339(secs: u64) -> String {
    let (y, mo, d, h, mi, s) = civil(secs);
    format!("{y:04}-{mo:02}-{d:02}T{h:02}:{mi:02}:{s:02}Z")
}

/// The default file name for a page: `<host>_<YYYYMMDD-HHMMSS>.md`, the host
/// reduced to characters that are safe in a file name on every system.
///
/// ```
/// assert_eq!(
///     web_convert::file_name("https://www.example.com:8443/a/b?c", 1_714_555_800),
///     "www.example.com_20240501-093000.md"
/// );
/// ```
pub fn file_name(url: &str, secs: u64) -> String {
    let host = Url::parse(url)
        .ok()
        .and_then(|u| u.host_str().map(str::to_owned))
        .unwrap_or_else(|| "page".to_owned());
    let host: String = host
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '.' || c == '-' {
                c.to_ascii_lowercase()
            } else {
                '_'
            }
        })
        .collect();
    let host = host.trim_matches(['.', '_']);
    let (y, mo, d, h, mi, s) = civil(secs);
    format!(
        "{}_{y:04}{mo:02}{d:02}-{h:02}{mi:02}{s:02}.md",
        if host.is_empty() { "page" } else { host }
    )
}

/// Calendar date and time (UTC) of a Unix time, by Howard Hinnant's
/// `civil_from_days` — no time-zone database needed for UTC.
fn civil(secs: u64) -> (i64, u32, u32, u32, u32, u32) {
    let days = i64::try_from(secs / 86_400).unwrap_or(i64::MAX / 2);
    let rem = secs % 86_400;
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    let small = |v: u64| u32::try_from(v).unwrap_or(0);
    (
        year,
        u32::try_from(month).unwrap_or(1),
        u32::try_from(day).unwrap_or(1),
        small(rem / 3600),
        small(rem % 3600 / 60),
        small(rem % 60),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates() {
        let cases = [
            (0, "1970-01-01T00:00:00Z"),
            (951_782_400, "2000-02-29T00:00:00Z"),
            (1_709_251_199, "2024-02-29T23:59:59Z"),
            (1_735_689_600, "2025-01-01T00:00:00Z"),
            (4_102_444_800, "2100-01-01T00:00:00Z"),
        ];
        for (secs, want) in cases {
            assert_eq!(rfc3339(secs), want, "{secs}");
        }
    }

    #[test]
    fn file_names_are_safe() {
        assert_eq!(file_name("http://127.0.0.1:8080/x", 0), "127.0.0.1_19700101-000000.md");
        assert_eq!(file_name("http://[::1]:80/", 0), "1_19700101-000000.md");
        assert_eq!(
            file_name("https://Docs.Example.ORG./", 0),
            "docs.example.org_19700101-000000.md"
        );
        assert_eq!(file_name("not a url", 0), "page_19700101-000000.md");
    }

    #[test]
    fn header_escapes_and_adds_the_title_once() {
        let article = Article {
            title: "Say \"hi\"\nnow".into(),
            byline: Some("Ana".into()),
            published: None,
            markdown: "Body text.\n".into(),
            text_chars: 8,
        };
        let doc = article.to_document(Provenance {
            url: "https://x.example/p",
            fetched_at: 60,
            truncated: true,
        });
        assert_eq!(
            doc,
            "---\ntitle: \"Say \\\"hi\\\" now\"\nsource: \"https://x.example/p\"\n\
             fetched: \"1970-01-01T00:01:00Z\"\nauthor: \"Ana\"\n\
             truncated: true  # the page was larger than the size cap; only its beginning was \
             converted\n---\n\n# Say \"hi\" now\n\nBody text.\n"
        );
    }
}
