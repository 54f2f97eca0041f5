//! HTML to the main content as Markdown.
//!
//! Three passes over one parsed document: strip what is never content
//! (scripts, navigation, page header and footer, sidebars, ads, cookie
//! banners), make every link and image URL absolute, then let `dom_smoothie`
//! (a port of Mozilla's Readability) pick the main content and serialise it
//! as Markdown.

use dom_query::{Document, NodeRef};
use dom_smoothie::{Config, Readability, ReadabilityError, TextMode};
use url::Url;

/// Fewer letters and digits than this in the extracted text is "nothing to
/// save": a JavaScript shell, a consent wall, an empty template.
pub const MIN_TEXT_CHARS: usize = 50;

/// Elements that never hold the main content of a page, wherever they are.
const NEVER_CONTENT: &str = "script, style, link, noscript, template, iframe, frame, frameset, \
                             object, embed, canvas, svg, button, input, select, textarea, dialog, \
                             nav, aside, menu, [role=navigation], [role=banner], \
                             [role=contentinfo], [role=complementary], [role=search], \
                             [role=dialog], [role=alertdialog], [aria-hidden=true], [hidden]";

/// Words in a class or id (split at `-`, `_` and spaces) that mark
/// boilerplate: ads, sharing widgets, cookie and newsletter prompts.
const BOILERPLATE_WORDS: &[&str] = &[
    "ad",
    "ads",
    "adv",
    "advert",
    "adverts",
    "advertisement",
    "advertising",
    "adsense",
    "adslot",
    "banner-ad",
    "sponsor",
    "sponsored",
    "promo",
    "promoted",
    "cookie",
    "cookies",
    "consent",
    "gdpr",
    "newsletter",
    "subscribe",
    "paywall",
    "popup",
    "modal",
    "share",
    "sharing",
    "social",
    "related",
    "recommended",
    "outbrain",
    "taboola",
    "breadcrumb",
    "breadcrumbs",
    "skiplink",
    "skip",
    "comments",
];

/// The main content of a page, as Markdown.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Article {
    /// The page's title (from metadata, `<title>` or the first heading), without the site name.
    pub title: String,
    /// The author, when the page says.
    pub byline: Option<String>,
    /// When the page says it was published.
    pub published: Option<String>,
    /// The main content as Markdown, links and images absolute.
    pub markdown: String,
    /// Letters and digits in the content (link targets not counted).
    pub text_chars: usize,
}

/// Why a page could not be converted.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ConvertError {
    /// The page URL is needed to make links absolute and must be http(s).
    #[error("{url:?} is not an absolute http(s) URL")]
    InvalidUrl {
        /// The URL given.
        url: String,
    },
    /// The response is not HTML or text (JSON, an image, a PDF, …).
    #[error("the response is {content_type}, not a web page")]
    NotAPage {
        /// Its media type.
        content_type: String,
    },
    /// The page has (almost) no text once boilerplate is removed.
    #[error("{}", nearly_empty_message(*.text_chars, *.uses_javascript))]
    NearlyEmpty {
        /// Letters and digits found.
        text_chars: usize,
        /// Whether the page has scripts, so its text is probably built in a browser.
        uses_javascript: bool,
    },
}

fn nearly_empty_message(text_chars: usize, uses_javascript: bool) -> String {
    let why = if uses_javascript {
        "it probably builds its content with JavaScript, which is not run here; look for an API, \
         an RSS feed or a server-rendered version of the page"
    } else {
        "it may be an empty template, a login or consent wall, or not an article"
    };
    format!(
        "the page has almost no text once navigation and boilerplate are removed ({text_chars} \
         letters and digits); {why}"
    )
}

/// Extract the main content of `html`, fetched from `page_url`, as Markdown.
///
/// ```
/// let html = "<html><head><title>Tides | Sea News</title></head><body>
///   <nav><a href=\"/\">Home</a> <a href=\"/world\">World</a></nav>
///   <article><h1>Tides</h1>
///     <p>The tide rises twice a day because the Moon pulls the oceans toward it, and the Earth \
///       turns beneath that bulge of water.
///        See <a href=\"../tables/tides.html\">the tide tables</a> for the times at each harbour \
///       along the coast.</p>
///     <p>Spring tides come with the new and the full Moon, when the Sun and the Moon pull in the \
///       same direction.</p>
///   </article></body></html>";
/// let article =
///     web_convert::html_to_markdown(html, "https://sea.example/news/today/tides").unwrap();
/// assert_eq!(article.title, "Tides");
/// assert!(
///     article.markdown.contains("[the tide tables](https://sea.example/news/tables/tides.html)")
/// );
/// assert!(!article.markdown.contains("World"));
/// ```
///
/// # Errors
/// [`ConvertError::InvalidUrl`] for a URL that is not absolute http(s);
/// [`ConvertError::NearlyEmpty`] when fewer than [`MIN_TEXT_CHARS`] letters
/// and digits are left.
pub fn html_to_markdown(html: &str, page_url: &str) -> Result<Article, ConvertError> {
    let page = Url::parse(page_url)
        .ok()
        .filter(|u| matches!(u.scheme(), "http" | "https"))
        .ok_or_else(|| ConvertError::InvalidUrl { url: page_url.to_owned() })?;
    let doc = prepare(html, &page);
    let uses_javascript = doc.uses_javascript;
    let heading = only_h1(&doc.document);
    let config = Config { text_mode: TextMode::Markdown, ..Config::default() };
    let extracted = Readability::with_document(doc.document, Some(page.as_str()), Some(config))
        .and_then(|mut readability| readability.parse());
    let article = match extracted {
        Ok(found) => Article {
            title: found.title.trim().to_owned(),
            byline: found.byline.map(|b| b.trim().to_owned()).filter(|b| !b.is_empty()),
            published: found.published_time.filter(|p| !p.trim().is_empty()),
            markdown: tidy(&found.text_content),
            text_chars: 0,
        },
        // Nothing scored as an article (a page of tables or a bare list, say):
        // take the whole cleaned page rather than lose it.
        Err(ReadabilityError::GrabFailed | ReadabilityError::TooManyElements(..)) => {
            whole_page(html, &page)
        }
        Err(ReadabilityError::BadDocumentURL) => {
            return Err(ConvertError::InvalidUrl { url: page_url.to_owned() });
        }
    };
    let text_chars = visible_chars(&article.markdown);
    if text_chars < MIN_TEXT_CHARS {
        return Err(ConvertError::NearlyEmpty { text_chars, uses_javascript });
    }
    let title = if article.title.is_empty() {
        first_heading(&article.markdown).unwrap_or_default()
    } else {
        article.title
    };
    let title = title.split_whitespace().collect::<Vec<_>>().join(" ");
    let title = prefer_heading(title, &heading);
    Ok(Article { title, text_chars, ..article })
}

/// A parsed page with boilerplate removed and URLs absolute.
struct Prepared {
    document: Document,
    uses_javascript: bool,
}

fn prepare(html: &str, page: &Url) -> Prepared {
    let document = Document::from(html);
    let uses_javascript = document.select("script").exists();
    // `<base href>` changes what relative links mean; it is itself relative to the page.
    let base = document
        .select_single("base[href]")
        .attr("href")
        .and_then(|href| page.join(href.trim()).ok())
        .unwrap_or_else(|| page.clone());
    strip_boilerplate(&document);
    absolutise(&document, &base);
    keep_code_languages(&document);
    Prepared { document, uses_javascript }
}

/// Readability strips `class` attributes, and with them the `language-x`
/// that marks a code block's language; copy it to `data-lang`, which the
/// Markdown serialiser reads for the fence (```` ```rust ````).
fn keep_code_languages(doc: &Document) {
    for node in doc.select("pre[class], code[class]").nodes() {
        let class = node.attr_or("class", "");
        let lang = class
            .split_whitespace()
            .find_map(|c| c.strip_prefix("language-").or_else(|| c.strip_prefix("lang-")));
        if let Some(lang) =
            lang.filter(|l| l.chars().all(|c| c.is_ascii_alphanumeric() || "+-_#.".contains(c)))
        {
            let pre = if node.has_name("pre") {
                Some(*node)
            } else {
                node.parent().filter(|p| p.has_name("pre"))
            };
            if let Some(pre) = pre.filter(|p| !p.has_attr("data-lang")) {
                pre.set_attr("data-lang", lang);
            }
        }
    }
}

fn strip_boilerplate(doc: &Document) {
    doc.select(NEVER_CONTENT).remove();
    // A page's own header and footer (logo, menus, copyright) are boilerplate;
    // a `<header>` inside the article usually holds its title and byline.
    let page_level: Vec<NodeRef> = doc
        .select("header, footer")
        .nodes()
        .iter()
        .filter(|n| !n.ancestors_it(None).any(|a| a.has_name("article") || a.has_name("main")))
        .cloned()
        .collect();
    for node in page_level {
        node.remove_from_parent();
    }
    let marked: Vec<NodeRef> =
        doc.select("[class], [id]").nodes().iter().filter(|n| is_boilerplate(n)).cloned().collect();
    for node in marked {
        node.remove_from_parent();
    }
}

/// Whether an element's class or id names it as an ad, a share bar and the
/// like — unless it is (or holds) the page's structure, as in
/// `<body class="has-ads">`.
fn is_boilerplate(node: &NodeRef) -> bool {
    let names =
        format!("{} {}", node.attr_or("class", ""), node.attr_or("id", "")).to_ascii_lowercase();
    let marked = names
        .split(|c: char| c.is_whitespace() || c == '-' || c == '_')
        .any(|w| BOILERPLATE_WORDS.contains(&w));
    marked
        && !["html", "body", "main", "article"].iter().any(|t| node.has_name(t))
        && !node
            .descendants_it()
            .any(|d| d.has_name("article") || d.has_name("main") || d.has_name("h1"))
}

/// Resolve link and media URLs against `base` (RFC 3986, as a browser does).
fn absolutise(doc: &Document, base: &Url) {
    for a in doc.select("a[href]").nodes() {
        let href = a.attr_or("href", "");
        if href.trim_start().get(..11).is_some_and(|s| s.eq_ignore_ascii_case("javascript:")) {
            a.remove_attr("href");
        } else if let Ok(url) = base.join(href.trim()) {
            a.set_attr("href", url.as_str());
        }
    }
    for media in doc.select("img, source, video, audio, track").nodes() {
        for name in ["src", "data-src", "poster"] {
            if let Some(value) = media.attr(name)
                && !value.trim().starts_with("data:")
                && let Ok(url) = base.join(value.trim())
            {
                media.set_attr(name, url.as_str());
            }
        }
        if let Some(srcset) = media.attr("srcset") {
            let absolute: Vec<String> = srcset
                .split(',')
                .filter_map(|candidate| {
                    let mut parts = candidate.split_whitespace();
                    let url = base.join(parts.next()?).ok()?;
                    Some(parts.fold(url.to_string(), |acc, d| format!("{acc} {d}")))
                })
                .collect();
            media.set_attr("srcset", &absolute.join(", "));
        }
    }
}

/// The fallback when no article is found: the whole page, cleaned.
fn whole_page(html: &str, page: &Url) -> Article {
    let prepared = prepare(html, page);
    let doc = prepared.document;
    let title = doc.select_single("title").text().trim().to_owned();
    let root = doc.select_single("main");
    let root = if root.exists() { root } else { doc.select_single("body") };
    let markdown = root.nodes().first().map(|n| tidy(&n.md(None))).unwrap_or_default();
    Article { title, byline: None, published: None, markdown, text_chars: 0 }
}

/// Trim each line's end and collapse runs of blank lines (outside code
/// fences, where whitespace is content).
fn tidy(markdown: &str) -> String {
    let mut out = String::with_capacity(markdown.len());
    let mut blank_run = 0;
    let mut fence: Option<String> = None;
    for line in markdown.trim().lines() {
        let marker = line.trim_start();
        if let Some(open) = &fence {
            if marker.starts_with(open.as_str())
                && marker.trim_start_matches(open.chars().next().unwrap_or('`')).trim().is_empty()
            {
                fence = None;
            }
            out.push_str(line);
            out.push('\n');
            continue;
        }
        if marker.starts_with("```") || marker.starts_with("~~~") {
            let ch = marker.chars().next().unwrap_or('`');
            fence = Some(marker.chars().take_while(|&c| c == ch).collect());
        }
        let line = line.trim_end();
        if line.is_empty() {
            blank_run += 1;
            if blank_run > 1 {
                continue;
            }
        } else {
            blank_run = 0;
        }
        out.push_str(line);
        out.push('\n');
    }
    out
}

/// Letters and digits a reader sees: link and image targets (`](…)`) do not count.
pub fn visible_chars(markdown: &str) -> usize {
    let mut count = 0;
    let mut rest = markdown;
    while let Some(at) = rest.find("](") {
        count += rest[..at].chars().filter(|c| c.is_alphanumeric()).count();
        rest = &rest[at + 2..];
        rest = match rest.find(')') {
            Some(end) => &rest[end + 1..],
            None => "",
        };
    }
    count + rest.chars().filter(|c| c.is_alphanumeric()).count()
}

/// The text of the page's `<h1>`, when it has exactly one.
fn only_h1(doc: &Document) -> Option<String> {
    let h1 = doc.select("h1");
    (h1.length() == 1)
        .then(|| h1.text().split_whitespace().collect::<Vec<_>>().join(" "))
        .filter(|t| !t.is_empty())
}

/// `<title>` often reads "Headline — Site name" with a separator the title
/// cleaner does not know; when the page's only `<h1>` is the start of the
/// title, the `<h1>` is the headline.
fn prefer_heading(title: String, heading: &Option<String>) -> String {
    match heading {
        Some(h) if title.len() > h.len() && title.to_lowercase().starts_with(&h.to_lowercase()) => {
            h.clone()
        }
        _ => title,
    }
}

fn first_heading(markdown: &str) -> Option<String> {
    markdown
        .lines()
        .find(|l| l.starts_with('#'))
        .map(|l| l.trim_start_matches('#').trim().to_owned())
        .filter(|t| !t.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    const URL: &str = "https://news.example/world/2024/story.html";

    fn para(words: &str) -> String {
        format!("<p>{}</p>", [words; 6].join(" "))
    }

    #[test]
    fn links_resolve_like_a_browser() {
        let body =
            para("Rivers carry sediment to the sea and build deltas over thousands of years.");
        let html = format!(
            r##"<html><body><article><h1>Deltas</h1>{body}
            <p>Links: <a href="../maps/delta.png">up</a>, <a href="/about">root</a>, <a href="?page=2">query</a>,
            <a href="#notes">fragment</a>, <a href="//cdn.example/x.js">scheme-relative</a>,
            <a href="mailto:desk@news.example">mail</a>, <a href="javascript:void(0)">script</a>,
            <img src="img/delta.jpg" alt="A delta"></p>{body}</article></body></html>"##
        );
        let md = html_to_markdown(&html, URL).unwrap().markdown;
        for want in [
            "[up](https://news.example/world/maps/delta.png)",
            "[root](https://news.example/about)",
            "[query](https://news.example/world/2024/story.html?page=2)",
            "[fragment](https://news.example/world/2024/story.html#notes)",
            "[scheme-relative](https://cdn.example/x.js)",
            "[mail](mailto:desk@news.example)",
            "![A delta](https://news.example/world/2024/img/delta.jpg)",
        ] {
            assert!(md.contains(want), "missing {want} in\n{md}");
        }
        assert!(!md.contains("javascript:"), "{md}");
    }

    #[test]
    fn base_href_changes_the_base() {
        let body = para("Glaciers move slowly downhill under their own weight, carving valleys.");
        let html = format!(
            "<html><head><base href=\"/static/v2/\"></head><body><article><h1>Ice</h1>{body}\
             <p><a href=\"guide.html\">guide</a></p>{body}</article></body></html>"
        );
        let md = html_to_markdown(&html, URL).unwrap().markdown;
        assert!(md.contains("[guide](https://news.example/static/v2/guide.html)"), "{md}");
    }

    #[test]
    fn boilerplate_words_match_whole_class_words_only() {
        let doc = Document::from(concat!(
            r#"<body class="has-ads"><div class="ad-slot">A</div><div class="header-lead">B</div>"#,
            r#"<div id="share_bar">C</div><div class="shadow">D</div>"#,
            r#"<section class="related"><h1>T</h1></section></body>"#
        ));
        strip_boilerplate(&doc);
        let text = doc.select("body").text();
        assert!(!text.contains('A') && !text.contains('C'), "{text}");
        assert!(text.contains('B') && text.contains('D') && text.contains('T'), "kept: {text}");
    }

    #[test]
    fn a_script_shell_is_nearly_empty_and_says_javascript() {
        let html = r#"<html><head><title>App</title><script src="/main.js"></script></head>
            <body><div id="root"></div><noscript>You need to enable JavaScript to run this app.</noscript></body></html>"#;
        match html_to_markdown(html, URL) {
            Err(e @ ConvertError::NearlyEmpty { uses_javascript: true, .. }) => {
                assert!(e.to_string().contains("JavaScript"), "{e}");
            }
            other => panic!("expected NearlyEmpty, got {other:?}"),
        }
    }

    #[test]
    fn a_page_without_an_article_falls_back_to_the_whole_page() {
        let rows: String =
            (1..=8).map(|i| format!("<tr><td>Station {i}</td><td>{}</td></tr>", i * 7)).collect();
        let html = format!(
            "<html><head><title>Readings</title></head><body><table><tr><th>Station</th><th>mm</th>\
             </tr>{rows}</table></body></html>"
        );
        let article = html_to_markdown(&html, URL).unwrap();
        assert!(article.markdown.contains("| Station 3 | 21 |"), "{}", article.markdown);
    }

    #[test]
    fn code_fences_keep_their_language() {
        let body =
            para("Buckets refill at a steady rate; a request takes one token or is refused.");
        let html = format!(
            r#"<html><body><article><h1>Limits</h1>{body}<pre><code class="hljs language-rust">if tokens &lt; 1.0 {{ return false; }}</code></pre>
            <pre class="lang-sh"><code>echo "a &amp;&amp; b"</code></pre>{body}</article></body></html>"#
        );
        let md = html_to_markdown(&html, URL).unwrap().markdown;
        assert!(md.contains("```rust\nif tokens < 1.0 { return false; }\n```"), "{md}");
        assert!(md.contains("```sh\necho \"a && b\"\n```"), "{md}");
    }

    #[test]
    fn the_h1_is_the_title_when_the_title_adds_a_site_name() {
        assert_eq!(
            prefer_heading("Rate limits — Tollgate Docs".into(), &Some("Rate Limits".into())),
            "Rate Limits"
        );
        assert_eq!(prefer_heading("Rate limits".into(), &Some("Other".into())), "Rate limits");
        assert_eq!(prefer_heading("Rate limits".into(), &None), "Rate limits");
    }

    #[test]
    fn invalid_urls_are_rejected() {
        assert!(matches!(
            html_to_markdown("<p>x</p>", "/relative"),
            Err(ConvertError::InvalidUrl { .. })
        ));
        assert!(matches!(
            html_to_markdown("<p>x</p>", "ftp://host/x"),
            Err(ConvertError::InvalidUrl { .. })
        ));
    }

    #[test]
    fn visible_chars_skips_link_targets() {
        assert_eq!(visible_chars("[ab](https://very.long.example/path) cd ![e](x.png)"), 5);
        assert_eq!(visible_chars("no links, 12 chars"), 14);
    }

    #[test]
    fn tidy_collapses_blank_lines_but_not_inside_code() {
        let md = "a  \n\n\n\nb\n```\nx\n\n\n\ny  \n```\n\n\n";
        assert_eq!(tidy(md), "a\n\nb\n```\nx\n\n\n\ny  \n```\n");
    }
}
