//! The `web` skill: fetch web pages over `wasi:http`, and save a page's main
//! content as a Markdown file.
//!
//! Which hosts are reachable is decided by the host for every request and
//! every redirect hop (the permission table's `net`); where files may be
//! written, by the folders it preopens (`write`). This crate holds neither
//! list. The conversion itself — charset decoding, boilerplate removal,
//! readability extraction, Markdown, absolute links — is the `web-convert`
//! crate, so that it can also run (and be measured) natively.
//!
//! Modules: `download` (the GET both tools share), `fetch`, `to_markdown`.

use agent_reach_sdk::prelude::*;
use serde_json::json;

mod download;
mod fetch;
mod to_markdown;

/// For the model choosing among skills.
const DESCRIPTION: &str = "Read the web: fetch a URL's text, or save a web page's main content as \
a clean Markdown file (navigation, ads and scripts removed, links absolute). Only the hosts the \
operator granted are reachable; pages are not rendered with JavaScript.";

/// Shown when a model asks for this skill.
const INSTRUCTIONS: &str = r#"# Reading the web

## Which tool
- **`to_markdown`** for anything you want to *read*: an article, a blog post, documentation, a
  README. It keeps the main content (headings, paragraphs, lists, tables, code blocks, links,
  images) and drops navigation, headers, footers, sidebars, ads, cookie banners and scripts.
  The result is a file in a writable folder, typically 5–20 times smaller than the HTML; the
  call returns only `{status, path, chars, title}`. Read the file afterwards with a files tool
  (e.g. `files.read {path, offset, limit}`), in parts if `chars` is large.
- **`fetch`** when you need the response itself: a JSON or XML API, `robots.txt`, an RSS feed,
  raw HTML to inspect markup, or the status code of a URL. It returns at most `max_chars`
  characters (default 40 000); `truncated` and `note` tell you when there was more.

## Things to know
- Only hosts in the operator's permission table are reachable, and a redirect to another host
  is checked again. A `DENIED` error names the refused URL: do not retry it with variations
  (`www.`, `http://`, an IP address); ask the user to grant the host.
- Pages are not run in a browser. A page that builds its text with JavaScript (many web apps,
  some shops and dashboards) has almost nothing to save; `to_markdown` then fails with a
  message that says so, and saves nothing. Look for an API, a feed, or a server-rendered URL.
- A 4xx or 5xx answer is an error for `to_markdown` (404 → `NOT_FOUND`); nothing is saved.
  `fetch` returns such responses with their status, since the body can still be useful.
- Files are named `<host>_<YYYYMMDD-HHMMSS>.md` in `output_dir` (default: the first writable
  folder granted), or exactly `path` if you give one. Each file starts with YAML front matter
  holding `title`, `source` (the URL after redirects) and `fetched` (UTC time).
- Character sets are handled (the `Content-Type` header, `<meta charset>`, else UTF-8).
- Pages larger than 4 MiB are converted from their first 4 MiB (`truncated: true`); `fetch`
  reads at most 2 MiB.
"#;

/// The skill type exported to the host.
struct Web;

impl Skill for Web {
    fn define() -> Definition {
        Definition::new("web", env!("CARGO_PKG_VERSION"), DESCRIPTION)
            .instructions(INSTRUCTIONS)
            .tool(
                "to_markdown",
                "Save a web page's main content as a Markdown file: fetches the URL, drops \
                 navigation, headers, footers, sidebars, ads and scripts, keeps headings, lists, \
                 tables, code blocks and links (made absolute), and writes `<host>_<time>.md` into \
                 a writable folder (or `path`), with the source URL and fetch time at the top. \
                 Returns only {status, path, chars, title}; read the file with a files tool. Use \
                 it to read articles and documentation. Not for APIs, feeds or files (use \
                 `fetch`); fails, saving nothing, on 4xx/5xx pages and on pages that show almost \
                 no text without JavaScript.",
                to_markdown::to_markdown,
            )
            .example(
                "Save a documentation page to read it.",
                json!({"url": "https://docs.example.com/guide/install"}),
                Some(concat!(
                    r#"{"status":200,"#,
                    r#""path":"/home/ana/notes/docs.example.com_20240501-093000.md","#,
                    r#""chars":8412,"title":"Installation guide"}"#
                )),
            )
            .example(
                "Save an article under a chosen name.",
                json!({"url": "https://blog.example.org/2024/05/tides", "path": "notes/tides.md"}),
                None,
            )
            .tool(
                "fetch",
                "GET a URL and return {status, url, content_type, encoding, chars, truncated, \
                 note?, text}: the response text as sent (HTML, JSON, XML, plain text), decoded \
                 from its character set, at most `max_chars` characters (default 40000). Use it \
                 for APIs, feeds, robots.txt, raw HTML or checking a status. To read a web page, \
                 prefer `to_markdown`, which keeps only the content and saves it to a file. \
                 Refuses binary content (images, PDF, archives).",
                fetch::fetch,
            )
            .example(
                "Read a JSON API response.",
                json!({"url": "https://api.example.com/v1/status"}),
                Some(concat!(
                    r#"{"status":200,"url":"https://api.example.com/v1/status","#,
                    r#""content_type":"application/json","encoding":"UTF-8","chars":27,"#,
                    r#""truncated":false,"text":"{\"ok\":true,\"version\":\"2.4\"}"}"#
                )),
            )
    }
}

export_skill!(Web);
