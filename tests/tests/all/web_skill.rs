//! The `web` skill against fixture pages served on 127.0.0.1: what lands in
//! the Markdown file (and what must not), charsets, size caps, error pages,
//! JavaScript shells, redirects off the allowlist and writes off the grants.

use agent_reach::ErrorCode;
use agent_reach_tests::guests;
use agent_reach_tests::pages::{Pages, Route, fixture};
use agent_reach_tests::{Workspace, call};
use serde_json::{Value, json};
use std::path::PathBuf;
use std::time::{SystemTime, UNIX_EPOCH};

const ARTICLE: &str = "/news/2024/03/currents.html";

/// A password written into URLs (`admin:PASSWORD@`): it must never come back.
const PASSWORD: &str = "hunter2-Xq7";

fn site() -> Pages {
    Pages::start(vec![
        Route::file(ARTICLE, "article.html", "text/html; charset=utf-8"),
        // No charset in the header: the page's <meta charset> says UTF-8.
        Route::file("/docs/guide/limits.html", "table-code.html", "text/html"),
        Route::file("/app/", "js-shell.html", "text/html; charset=utf-8"),
        Route::file("/gone.html", "not-found.html", "text/html; charset=utf-8").status(404),
        Route::file("/busy.html", "article.html", "text/html; charset=utf-8").status(503),
        Route::redirect("/moved", "http://127.0.0.2:{port}/stolen"),
        Route::redirect("/old-docs", "/docs/guide/limits.html"),
        Route::redirect(
            "/sign-in",
            &format!("http://admin:{PASSWORD}@127.0.0.1:{{port}}/docs/guide/limits.html"),
        ),
        Route::file("/fr/cafe.html", "windows-1252.html", "text/html; charset=windows-1252"),
        // Shift_JIS declared only by <meta http-equiv>.
        Route::file("/ja/kyoto.html", "shift-jis.html", "text/html"),
        Route::file("/long.html", "long-article.html", "text/html; charset=utf-8"),
        Route::bytes("/huge.html", Some("text/html; charset=utf-8"), huge_page()),
        Route::bytes("/logo.png", Some("image/png"), b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR".to_vec()),
        Route::bytes("/api/status", Some("application/json"), r#"{"ok":true,"version":"2.4"}"#),
        Route::bytes(
            "/notes.txt",
            Some("text/plain"),
            "Plain notes about tides: the water rises and falls twice a day, \
            pulled by the Moon and, to a lesser degree, by the Sun.\n",
        ),
    ])
}

/// The article followed by 5 MiB of inline script, as on pages that ship
/// their data in the HTML: larger than both tools' caps.
fn huge_page() -> Vec<u8> {
    let article = String::from_utf8(fixture("article.html")).unwrap();
    let (head, tail) = article.split_at(article.find("</body>").unwrap());
    let filler = "window.__DATA__.push({\"id\":12345,\
                  \"payload\":\"abcdefghijklmnopqrstuvwxyz0123456789\"});\n";
    let script = filler.repeat((5 << 20) / filler.len());
    format!("{head}<script>{script}</script>{tail}").into_bytes()
}

struct Setup {
    ws: Workspace,
    pages: Pages,
}

impl Setup {
    fn new() -> Self {
        let ws = Workspace::new();
        ws.install(guests::SKILL_WEB);
        ws.mkdir("saved");
        ws.write("docs/readme.md", "read-only grant\n");
        Setup { ws, pages: site() }
    }

    fn policy(&self) -> String {
        format!(
            "[skills.web]\n\
             level = \"auto\"\n\
             net = [\"{}\"]\n\
             read = [\"./docs\"]\n\
             write = [\"./saved\"]\n",
            self.pages.grant()
        )
    }

    async fn host(&self) -> agent_reach::Host {
        self.ws.host(&self.policy()).await
    }

    fn saved(&self) -> Vec<PathBuf> {
        let mut files: Vec<PathBuf> = agent_reach_tests::files_under(&self.ws.path("saved"));
        files.sort();
        files
    }
}

fn parse(out: &str) -> Value {
    serde_json::from_str(out).unwrap_or_else(|e| panic!("not JSON ({e}): {out}"))
}

/// Call `web.to_markdown` and return the result and the file's text.
async fn save(host: &agent_reach::Host, args: Value) -> (Value, String) {
    let out = call(host, "web.to_markdown", args.clone())
        .await
        .unwrap_or_else(|e| panic!("to_markdown {args}: {e}"));
    let result = parse(&out);
    let text = std::fs::read_to_string(result["path"].as_str().expect("path")).expect("saved file");
    (result, text)
}

/// The value of a front-matter key (`key: "value"`).
fn front(doc: &str, key: &str) -> String {
    let block =
        doc.strip_prefix("---\n").and_then(|d| d.split_once("\n---\n")).expect("front matter").0;
    let line = block
        .lines()
        .find_map(|l| l.strip_prefix(&format!("{key}: ")))
        .unwrap_or_else(|| panic!("no {key} in\n{block}"));
    line.trim_matches('"').to_owned()
}

/// Every Markdown link and image target in `doc`.
fn link_targets(doc: &str) -> Vec<&str> {
    doc.match_indices("](")
        .map(|(i, _)| &doc[i + 2..])
        .map(|rest| &rest[..rest.find(')').unwrap_or(rest.len())])
        .collect()
}

/// Seconds since the epoch of `YYYY-MM-DDTHH:MM:SSZ` (days_from_civil).
fn epoch_of(stamp: &str) -> u64 {
    let n = |r: std::ops::Range<usize>| {
        stamp[r].parse::<i64>().unwrap_or_else(|_| panic!("bad time {stamp:?}"))
    };
    assert_eq!((stamp.len(), &stamp[10..11], &stamp[19..]), (20, "T", "Z"), "{stamp}");
    let (y, m, d) = (n(0..4), n(5..7), n(8..10));
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + d - 1;
    let days = era * 146_097 + yoe * 365 + yoe / 4 - yoe / 100 + doy - 719_468;
    u64::try_from(days * 86_400 + n(11..13) * 3600 + n(14..16) * 60 + n(17..19)).unwrap()
}

#[tokio::test]
async fn to_markdown_saves_the_article_without_navigation_or_ads() {
    let s = Setup::new();
    let host = s.host().await;
    let url = s.pages.url(ARTICLE);
    let (result, doc) = save(&host, json!({"url": url})).await;

    // The result is the four fields, never the page.
    let keys: Vec<&str> = result.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(keys, ["chars", "path", "status", "title"], "{result}");
    assert_eq!(result["status"], 200);
    assert_eq!(result["title"], "Deep-Sea Currents Are Slowing, Study Finds");
    assert_eq!(result["chars"].as_u64().unwrap() as usize, doc.chars().count());

    // Saved in the writable grant as <host>_<YYYYMMDD-HHMMSS>.md.
    let path = PathBuf::from(result["path"].as_str().unwrap());
    assert_eq!(path.parent().unwrap(), s.ws.path("saved"));
    let name = path.file_name().unwrap().to_str().unwrap();
    assert!(
        name.starts_with("127.0.0.1_")
            && name.ends_with(".md")
            && name.len() == "127.0.0.1_20240314-083000.md".len(),
        "{name}"
    );

    // Header: source URL and fetch time (now, and the same instant as the file name).
    assert!(doc.starts_with("---\n"), "{doc}");
    assert_eq!(front(&doc, "source"), url);
    assert_eq!(front(&doc, "title"), "Deep-Sea Currents Are Slowing, Study Finds");
    let fetched = front(&doc, "fetched");
    let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_secs();
    assert!(now.abs_diff(epoch_of(&fetched)) < 120, "fetched {fetched} is not now");
    let stamp: String = fetched.chars().filter(char::is_ascii_digit).collect();
    assert_eq!(&name[10..18], &stamp[..8], "{name} vs {fetched}");
    assert_eq!(&name[19..25], &stamp[8..14], "{name} vs {fetched}");

    // The content, structured.
    for want in [
        "# Deep-Sea Currents Are Slowing, Study Finds\n",
        "\n## How the measurements were made\n",
        "\n## What it means for coastal cities\n",
        "\n- grain size of sediments deposited by deep currents,\n",
        "\n1. Extend the mooring array into the South Atlantic.\n",
        "\n\
         > We are watching a system that took centuries to build change within a human lifetime.\n",
        "“The effect is already measurable in tide gauges,”",
    ] {
        assert!(doc.contains(want), "missing {want:?} in\n{doc}");
    }
    // Links and images absolute, resolved against the page URL.
    let base = s.pages.url("");
    for want in [
        format!("[Institute of Oceanography]({base}/science/institutes/oceanography)"),
        format!("[a note on the methods]({base}/news/2024/03/methods.html)"),
        format!("[plain-language explainer]({base}/science/2024/03/explainer-ocean-circulation)"),
        "[the raw tide-gauge data](https://data.example.org/tide-gauges)".to_owned(),
        format!(
            "![Map of the Atlantic overturning \
             circulation]({base}/news/2024/images/currents-map.jpg)"
        ),
    ] {
        assert!(doc.contains(&want), "missing {want} in\n{doc}");
    }
    for target in link_targets(&doc) {
        assert!(
            target.starts_with("http://") || target.starts_with("https://"),
            "relative link {target:?} in\n{doc}"
        );
    }
    // Navigation, header, footer, sidebar, ads, banners and scripts are gone.
    for boilerplate in [
        "World news",
        "Subscribe today",
        "Search the Gazette",
        "SPONSORED",
        "CheapWidgets",
        "Luxury cruises",
        "Premium Fish Oil",
        "Most read",
        "Ferry timetable",
        "Related stories",
        "Arctic sea ice",
        "cookies",
        "Terms of use",
        "All rights reserved",
        "Share on Social",
        "Skip to main",
        "dataLayer",
        "font-family",
    ] {
        assert!(!doc.contains(boilerplate), "{boilerplate:?} should have been removed:\n{doc}");
    }

    // It asked like a browser.
    let request =
        s.pages.received().into_iter().find(|r| r.path == ARTICLE).expect("request received");
    let agent = request.headers.get("user-agent").cloned().unwrap_or_default();
    assert!(agent.starts_with("Mozilla/5.0") && agent.contains("Chrome"), "{agent}");
    assert!(
        request.headers.get("accept").is_some_and(|a| a.starts_with("text/html")),
        "{:?}",
        request.headers
    );
}

#[tokio::test]
async fn tables_become_markdown_tables_and_code_stays_fenced() {
    let s = Setup::new();
    let host = s.host().await;
    let (result, doc) = save(
        &host,
        json!({
            "url": s.pages.url("/docs/guide/limits.html"), "path": s.ws.path("saved/docs/limits.md")
        }),
    )
    .await;
    assert_eq!(
        PathBuf::from(result["path"].as_str().unwrap()),
        s.ws.path("saved/docs/limits.md"),
        "the path given, folders created"
    );
    assert_eq!(result["title"], "Configuring the rate limiter");

    let table = "| Key | Type | Default | Meaning |\n\
                 | --- | ---- | ------- | ------- |\n\
                 | rate | float | 10.0 | Tokens added per second |\n\
                 | burst | integer | 20 | Bucket size |\n\
                 | key | string | \"ip\" | What identifies a client |\n";
    assert!(doc.contains(table), "table not rendered as a Markdown table:\n{doc}");
    let rust = concat!(
        "```rust\n",
        "pub struct Bucket {\n",
        "    tokens: f64,\n",
        "    burst: f64,\n",
        "}\n",
        "\n",
        "impl Bucket {\n",
        "    pub fn take(&mut self) -> bool {\n",
        "        if self.tokens < 1.0 {\n",
        "            return false;\n",
        "        }\n",
        "        self.tokens -= 1.0;\n",
        "        true\n",
        "    }\n",
        "}\n",
        "```\n",
    );
    assert!(doc.contains(rust), "code block not fenced verbatim:\n{doc}");
    assert!(doc.contains("```sh\n$ for i in $(seq 25); do curl"), "{doc}");
    assert!(
        doc.contains("\n     20 200\n      5 429\n```"),
        "indentation inside code kept:\n{doc}"
    );
    assert!(doc.contains("full bucket of `burst` tokens"), "inline code: {doc}");
    assert!(doc.contains("## Settings\n") && doc.contains("## Example\n"), "{doc}");
    assert!(
        doc.contains(&format!(
            "[configuration reference]({})",
            s.pages.url("/docs/reference/config.html")
        )),
        "{doc}"
    );
    for boilerplate in ["Docs home", "Changelog archive", "Edit this page"] {
        assert!(!doc.contains(boilerplate), "{boilerplate:?} in\n{doc}");
    }
}

#[tokio::test]
async fn a_javascript_shell_fails_and_saves_nothing() {
    let s = Setup::new();
    let host = s.host().await;
    let err =
        call(&host, "web.to_markdown", json!({"url": s.pages.url("/app/")})).await.unwrap_err();
    assert_eq!(err.code, ErrorCode::Failed, "{err}");
    assert!(
        err.message.contains("JavaScript") && err.message.contains("nothing was saved"),
        "{err}"
    );
    assert!(s.saved().is_empty(), "{:?}", s.saved());
}

#[tokio::test]
async fn error_pages_fail_and_save_nothing() {
    let s = Setup::new();
    let host = s.host().await;
    let err = call(&host, "web.to_markdown", json!({"url": s.pages.url("/gone.html")}))
        .await
        .unwrap_err();
    assert_eq!(err.code, ErrorCode::NotFound, "{err}");
    assert!(
        err.message.contains("404 Not Found") && err.message.contains("nothing was saved"),
        "{err}"
    );
    // A 5xx is an error even when its body is a perfectly good article.
    let err = call(&host, "web.to_markdown", json!({"url": s.pages.url("/busy.html")}))
        .await
        .unwrap_err();
    assert_eq!(err.code, ErrorCode::Failed, "{err}");
    assert!(err.message.contains("503"), "{err}");
    assert!(s.saved().is_empty(), "{:?}", s.saved());

    // `fetch` reports the status and returns the body: the model decides.
    let out = parse(
        &call(&host, "web.fetch", json!({"url": s.pages.url("/gone.html")}))
            .await
            .expect("fetch 404"),
    );
    assert_eq!(out["status"], 404);
    assert!(out["text"].as_str().unwrap().contains("We could not find that page"), "{out}");
}

#[tokio::test]
async fn a_redirect_to_a_host_that_is_not_granted_is_denied() {
    let s = Setup::new();
    let host = s.host().await;
    for tool in ["web.to_markdown", "web.fetch"] {
        let err = call(&host, tool, json!({"url": s.pages.url("/moved")})).await.unwrap_err();
        assert_eq!(err.code, ErrorCode::Denied, "{tool}: {err}");
        assert!(err.message.contains("127.0.0.2"), "names the refused hop: {err}");
    }
    assert!(s.saved().is_empty());
    assert!(s.pages.received().iter().all(|r| r.path != "/stolen"));

    // A redirect on the granted host is followed; the file names the page that answered.
    let (_, doc) = save(&host, json!({"url": s.pages.url("/old-docs")})).await;
    assert_eq!(front(&doc, "source"), s.pages.url("/docs/guide/limits.html"));
}

#[tokio::test]
async fn a_url_with_a_user_name_or_password_is_refused_and_never_repeated() {
    // Regression: the SDK dropped `admin:…@`, fetched the page as if it had
    // not been there and returned `"url": "http://admin:<password>@…"`.
    let s = Setup::new();
    let host = s.host().await;
    let addr = s.pages.addr;
    let urls = [
        format!("http://admin:{PASSWORD}@{addr}{ARTICLE}"),
        format!("http://{PASSWORD}@{addr}{ARTICLE}"),
        // No scheme: https:// is assumed, the user info stays.
        format!("admin:{PASSWORD}@{addr}{ARTICLE}"),
    ];
    for url in &urls {
        for tool in ["web.to_markdown", "web.fetch"] {
            let err = call(&host, tool, json!({"url": url})).await.unwrap_err();
            assert_eq!(err.code, ErrorCode::Denied, "{tool} {url}: {err}");
            assert!(
                err.message.contains("user name or password (user:pass@host), which is refused"),
                "the host's words: {err}"
            );
            assert!(!err.message.contains(PASSWORD), "{tool} repeated the password: {err}");
        }
    }
    // Not even a URL: refused as invalid, still without the password.
    for tool in ["web.to_markdown", "web.fetch"] {
        let err =
            call(&host, tool, json!({"url": format!("http://admin:{PASSWORD}@{addr}:notaport/")}))
                .await
                .unwrap_err();
        assert_eq!(err.code, ErrorCode::InvalidArgs, "{tool}: {err}");
        assert!(!err.message.contains(PASSWORD), "{tool} repeated the password: {err}");
    }
    assert!(
        s.pages.received().is_empty(),
        "no request reached the server: {:?}",
        s.pages.received()
    );
    assert!(s.saved().is_empty());
}

#[tokio::test]
async fn a_redirect_to_a_url_with_a_user_name_or_password_is_refused() {
    let s = Setup::new();
    let host = s.host().await;
    for tool in ["web.to_markdown", "web.fetch"] {
        let err = call(&host, tool, json!({"url": s.pages.url("/sign-in")})).await.unwrap_err();
        assert_eq!(err.code, ErrorCode::Denied, "{tool}: {err}");
        assert!(err.message.contains("user name or password"), "says why: {err}");
        assert!(
            err.message.contains(&format!("a redirect from {}", s.pages.url("/sign-in"))),
            "names the hop: {err}"
        );
        assert!(!err.message.contains(PASSWORD), "{tool} repeated the password: {err}");
    }
    let paths: Vec<String> = s.pages.received().into_iter().map(|r| r.path).collect();
    assert_eq!(paths, ["/sign-in", "/sign-in"], "the redirect was not followed");
    assert!(s.saved().is_empty());
}

#[tokio::test]
async fn hosts_not_granted_are_denied() {
    let s = Setup::new();
    let host = s.ws.host("[skills.web]\nlevel = \"auto\"\nwrite = [\"./saved\"]\n").await;
    for tool in ["web.to_markdown", "web.fetch"] {
        let err = call(&host, tool, json!({"url": s.pages.url(ARTICLE)})).await.unwrap_err();
        assert_eq!(err.code, ErrorCode::Denied, "{tool}: {err}");
    }
    assert!(s.pages.received().is_empty(), "no request reached the server");
}

#[tokio::test]
async fn non_utf8_pages_are_decoded_from_their_declared_charset() {
    let s = Setup::new();
    let host = s.host().await;
    let (result, doc) = save(&host, json!({"url": s.pages.url("/fr/cafe.html")})).await;
    assert_eq!(result["title"], "Café crème et pâtisseries");
    for want in [
        "# Café crème et pâtisseries",
        "## Les incontournables",
        "coûte environ 1,20 € ;",
        "Naïve question",
        "d’une pâtisserie",
    ] {
        assert!(doc.contains(want), "missing {want:?} in\n{doc}");
    }
    assert!(!doc.contains('\u{fffd}'), "replacement characters in\n{doc}");

    let (_, doc) = save(&host, json!({"url": s.pages.url("/ja/kyoto.html")})).await;
    assert!(doc.contains("# 京都の紅葉ガイド") && doc.contains("## 混雑を避けるには"), "{doc}");
    assert!(doc.contains("見頃は例年十一月中旬から十二月上旬です。"), "{doc}");
    assert!(!doc.contains("ホーム"), "navigation removed: {doc}");

    let out = parse(
        &call(&host, "web.fetch", json!({"url": s.pages.url("/fr/cafe.html")})).await.unwrap(),
    );
    assert_eq!(out["encoding"], "windows-1252");
    assert!(
        out["text"]
            .as_str()
            .unwrap()
            .contains("<title>Café crème et pâtisseries : le guide de l’été</title>"),
        "{out}"
    );
    let out = parse(
        &call(&host, "web.fetch", json!({"url": s.pages.url("/ja/kyoto.html")})).await.unwrap(),
    );
    assert_eq!(out["encoding"], "Shift_JIS");
    assert!(out["text"].as_str().unwrap().contains("<title>京都の紅葉ガイド</title>"), "{out}");
}

#[tokio::test]
async fn fetch_returns_status_content_type_and_text() {
    let s = Setup::new();
    let host = s.host().await;
    let out =
        parse(&call(&host, "web.fetch", json!({"url": s.pages.url("/api/status")})).await.unwrap());
    assert_eq!(
        out,
        json!({
            "status": 200, "url": s.pages.url("/api/status"), "content_type": "application/json",
            "encoding": "UTF-8", "chars": 27, "truncated": false,
            "text": "{\"ok\":true,\"version\":\"2.4\"}"
        })
    );
    let err = call(&host, "web.fetch", json!({"url": s.pages.url("/logo.png")})).await.unwrap_err();
    assert_eq!(err.code, ErrorCode::Failed, "{err}");
    assert!(err.message.contains("image/png") && err.message.contains("not text"), "{err}");
    let err = call(&host, "web.fetch", json!({"url": "ftp://127.0.0.1/file"})).await.unwrap_err();
    assert_eq!(err.code, ErrorCode::InvalidArgs, "{err}");
}

#[tokio::test]
async fn fetch_cuts_long_text_with_a_note() {
    let s = Setup::new();
    let host = s.host().await;
    let total = String::from_utf8(fixture("long-article.html")).unwrap().chars().count();
    let out = parse(
        &call(&host, "web.fetch", json!({"url": s.pages.url("/long.html"), "max_chars": 5000}))
            .await
            .unwrap(),
    );
    assert_eq!(
        (out["chars"].as_u64(), &out["truncated"]),
        (Some(5000), &json!(true)),
        "{}",
        out["note"]
    );
    assert_eq!(out["text"].as_str().unwrap().chars().count(), 5000);
    assert!(out["text"].as_str().unwrap().starts_with("<!DOCTYPE html>"));
    let note = out["note"].as_str().unwrap();
    assert!(
        note.contains(&format!("first 5000 of {total} characters"))
            && note.contains("web.to_markdown"),
        "{note}"
    );

    let out =
        parse(&call(&host, "web.fetch", json!({"url": s.pages.url("/long.html")})).await.unwrap());
    assert_eq!(out["chars"], 40_000, "default cap");
    let err = call(
        &host,
        "web.fetch",
        json!({"url": s.pages.url("/long.html"), "max_chars": 10_000_000}),
    )
    .await
    .unwrap_err();
    assert_eq!(err.code, ErrorCode::InvalidArgs, "{err}");
}

#[tokio::test]
async fn a_page_larger_than_the_cap_is_converted_from_its_beginning() {
    let s = Setup::new();
    let host = s.host().await;
    let url = s.pages.url("/huge.html");
    let (result, doc) = save(&host, json!({"url": url})).await;
    assert_eq!(result["truncated"], true, "{result}");
    assert!(
        front(&doc, "truncated").starts_with("true  # the page was larger than the size cap"),
        "{doc}"
    );
    assert!(doc.contains("## How the measurements were made"), "{doc}");
    assert!(!doc.contains("__DATA__"), "scripts dropped");

    let out =
        parse(&call(&host, "web.fetch", json!({"url": url, "max_chars": 100_000})).await.unwrap());
    assert_eq!(out["truncated"], true);
    assert!(out["note"].as_str().unwrap().contains("more than"), "{}", out["note"]);
}

#[tokio::test]
async fn plain_text_is_saved_as_it_is() {
    let s = Setup::new();
    let host = s.host().await;
    let (result, doc) = save(
        &host,
        json!({"url": s.pages.url("/notes.txt"), "output_dir": s.ws.path("saved/text")}),
    )
    .await;
    assert_eq!(result["title"], "notes.txt");
    assert!(PathBuf::from(result["path"].as_str().unwrap()).starts_with(s.ws.path("saved/text")));
    assert!(
        doc.ends_with(
            "\n\n# notes.txt\n\nPlain notes about tides: the water rises and falls twice a day, \
             pulled by the Moon and, to a lesser degree, by the Sun.\n"
        ),
        "{doc}"
    );
    let err = call(&host, "web.to_markdown", json!({"url": s.pages.url("/api/status")}))
        .await
        .unwrap_err();
    assert!(err.message.contains("application/json") && err.message.contains("web.fetch"), "{err}");
}

#[tokio::test]
async fn writing_outside_the_writable_grants_is_denied() {
    let s = Setup::new();
    let host = s.host().await;
    let url = s.pages.url(ARTICLE);
    let outside = s.ws.path("elsewhere/page.md");
    let cases = [
        json!({"url": url, "path": outside}),
        json!({"url": url, "path": "/etc/page.md"}),
        json!({"url": url, "output_dir": s.ws.path("elsewhere")}),
        json!({
            "url": url, "path": format!("{}/../elsewhere/page.md", s.ws.path("saved").display())
        }),
    ];
    for args in cases {
        let err = call(&host, "web.to_markdown", args.clone()).await.unwrap_err();
        assert_eq!(err.code, ErrorCode::Denied, "{args}: {err}");
        assert!(
            err.message.contains(&format!("writable: {}", s.ws.path("saved").display())),
            "lists the grants: {err}"
        );
    }
    let err =
        call(&host, "web.to_markdown", json!({"url": url, "path": s.ws.path("docs/page.md")}))
            .await
            .unwrap_err();
    assert_eq!(err.code, ErrorCode::Denied, "{err}");
    assert!(err.message.contains("read-only"), "{err}");
    assert!(!s.ws.path("elsewhere").exists() && !s.ws.path("docs/page.md").exists());
    assert!(s.saved().is_empty());

    // No writable grant at all: refused before any request.
    let host =
        s.ws.host(&format!("[skills.web]\nlevel = \"auto\"\nnet = [\"{}\"]\n", s.pages.grant()))
            .await;
    let before = s.pages.received().len();
    let err = call(&host, "web.to_markdown", json!({"url": url})).await.unwrap_err();
    assert_eq!(err.code, ErrorCode::Denied, "{err}");
    assert!(
        err.message.contains("writable folder") && err.message.contains("grants none"),
        "{err}"
    );
    assert_eq!(s.pages.received().len(), before);
}

#[tokio::test]
async fn a_path_inside_output_dir_is_the_file_written_and_one_outside_it_is_invalid() {
    let s = Setup::new();
    let host = s.host().await;
    // Both given, the file in the folder (as models write it): that file.
    call(
        &host,
        "web.to_markdown",
        json!({
            "url": s.pages.url(ARTICLE), "path": s.ws.path("saved/a.md"),
            "output_dir": s.ws.path("saved")
        }),
    )
    .await
    .expect("saved");
    assert_eq!(agent_reach_tests::files_under(&s.ws.path("saved")), [s.ws.path("saved/a.md")]);
    let err = call(
        &host,
        "web.to_markdown",
        json!({
            "url": s.pages.url(ARTICLE), "path": s.ws.path("saved/b.md"),
            "output_dir": s.ws.path("saved/text")
        }),
    )
    .await
    .unwrap_err();
    assert_eq!(err.code, ErrorCode::InvalidArgs, "{err}");
    assert!(err.message.contains("call again without `output_dir`"), "{err}");
    assert_eq!(
        agent_reach_tests::files_under(&s.ws.path("saved")),
        [s.ws.path("saved/a.md")],
        "nothing else written"
    );
}

#[tokio::test]
async fn saving_one_page_twice_keeps_both_files() {
    let s = Setup::new();
    let host = s.host().await;
    let url = s.pages.url(ARTICLE);
    let (first, _) = save(&host, json!({"url": url})).await;
    let (second, _) = save(&host, json!({"url": url})).await;
    assert_ne!(first["path"], second["path"]);
    assert_eq!(s.saved().len(), 2);
}

#[tokio::test]
async fn the_manifest_tells_a_model_when_to_use_each_tool() {
    let s = Setup::new();
    let host = s.host().await;
    let manifest =
        serde_json::to_value(host.registry().active("web").expect("web is active").manifest)
            .unwrap();
    let tools: Vec<&str> =
        manifest["tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(tools, ["to_markdown", "fetch"]);
    let to_markdown = &manifest["tools"][0];
    let props = to_markdown["parameters"]["properties"].as_object().unwrap();
    assert_eq!(
        props.keys().map(String::as_str).collect::<Vec<_>>(),
        ["output_dir", "overwrite", "path", "url"]
    );
    assert_eq!(to_markdown["parameters"]["required"], json!(["url"]));
    assert!(
        to_markdown["description"].as_str().unwrap().contains("Not for"),
        "says when not to use it"
    );
    assert!(!to_markdown["examples"].as_array().unwrap().is_empty());
    assert!(manifest["instructions"].as_str().unwrap().contains("JavaScript"));
}

#[tokio::test]
async fn an_existing_file_is_replaced_only_when_asked() {
    // Regression: `path` replaced whatever was there, so a page could
    // overwrite any file in a writable grant without anyone asking for it.
    let s = Setup::new();
    let host = s.host().await;
    let target = s.ws.write("saved/mine.md", "my own notes\n");
    let url = s.pages.url(ARTICLE);
    let before = s.pages.received().len();
    let err =
        call(&host, "web.to_markdown", json!({"url": url, "path": target})).await.unwrap_err();
    assert_eq!(err.code, ErrorCode::InvalidArgs, "{err}");
    assert!(err.message.contains("already exists") && err.message.contains("overwrite"), "{err}");
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "my own notes\n", "left as it was");
    assert_eq!(s.pages.received().len(), before, "refused before fetching");

    let (result, doc) = save(&host, json!({"url": url, "path": target, "overwrite": true})).await;
    assert_eq!(PathBuf::from(result["path"].as_str().unwrap()), target);
    assert!(!doc.contains("my own notes"), "replaced on request");
}
