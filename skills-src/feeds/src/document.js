// What a document is when it is not a feed, said so that the model can find
// the feed: a web page names its feeds in <link rel="alternate">, an OPML
// file lists them, a sitemap or an API answer is a different thing.

import { failed } from "../../../sdk/js/agent-reach.js";
import { cap, collapse, htmlToText } from "./text.js";

/** Types that cannot hold a feed, whatever the bytes look like. */
const BINARY = /^(image|audio|video|font)\/|^application\/(pdf|zip|gzip|x-gzip|x-tar|msword|vnd\.)/i;

/**
 * The error for a response that is not a feed, or null when the text may be
 * one (it starts like XML other than an HTML page).
 * @param {string} text the decoded body
 * @param {string|null} contentType
 * @param {string} url
 * @returns {import("../../../sdk/js/agent-reach.js").ToolError | null}
 */
export function sniff(text, contentType, url) {
  const type = (contentType ?? "").split(";")[0].trim();
  if (BINARY.test(type)) return failed(`not a feed: ${url} serves ${type}, not an RSS or Atom feed`);
  const start = text.replace(/^\uFEFF/, "").trimStart();
  if (start === "") return failed(`not a feed: ${url} answered with an empty document`);
  // The XML declaration and comments come before the root element.
  const head = start.replace(/^(<\?xml[^>]*\?>|<!--[\s\S]*?-->|\s)+/, "");
  if (/^<!doctype\s+html|^<html[\s>]/i.test(head)) return htmlPage(start, url);
  if (start[0] === "{" || start[0] === "[") {
    const jsonFeed = /"version"\s*:\s*"https?:\/\/jsonfeed\.org/.test(start.slice(0, 2000));
    return failed(
      jsonFeed
        ? `not an RSS or Atom feed: ${url} is a JSON Feed, which this skill does not read; look for the site's RSS or Atom feed`
        : `not a feed: ${url} is a JSON document (starting ${JSON.stringify(cap(collapse(start.slice(0, 200)), 60))}), not an RSS or Atom feed`,
    );
  }
  if (start[0] !== "<") {
    return failed(`not a feed: ${url} is ${type || "text"} starting ${JSON.stringify(cap(collapse(start.slice(0, 200)), 60))}, not XML`);
  }
  return null;
}

/**
 * The error for a well-formed XML document whose root is not a feed.
 * @param {{root?: string, outlines: string[]}} parsed
 * @param {string} text
 * @param {string} url
 */
export function otherXml(parsed, text, url) {
  const root = parsed.root ?? "?";
  const local = root.split(":").pop();
  if (local === "html") return htmlPage(text, url);
  if (local === "opml") {
    const list = parsed.outlines.length
      ? `; it lists these feeds: ${parsed.outlines.join(", ")} — read one of them`
      : " with no feed in it";
    return failed(`not a feed: ${url} is an OPML subscription list${list}`);
  }
  const known = {
    urlset: "a sitemap (the pages of a site), not a feed",
    sitemapindex: "a sitemap index, not a feed",
    svg: "an SVG image",
    Envelope: "a SOAP message",
    error: "an error document",
    Error: "an error document",
  };
  const what = known[local] ?? "an XML document, but not an RSS or Atom feed";
  return failed(`not a feed: ${url} is ${what} (its root element is <${root}>)`);
}

/** A web page: its title and the feeds it declares. */
function htmlPage(html, url) {
  const title = /<title[^>]*>([\s\S]*?)<\/title>/i.exec(html)?.[1];
  const named = title ? ` (${JSON.stringify(cap(htmlToText(title), 80))})` : "";
  const feeds = [];
  for (const tag of html.match(/<link\b[^>]*>/gi) ?? []) {
    const attr = (name) => new RegExp(`\\b${name}\\s*=\\s*(?:"([^"]*)"|'([^']*)'|([^\\s>]+))`, "i").exec(tag)?.slice(1).find((v) => v !== undefined);
    const rel = (attr("rel") ?? "").toLowerCase().split(/\s+/);
    const type = (attr("type") ?? "").toLowerCase();
    const href = attr("href");
    if (!rel.includes("alternate") || !href || !/^application\/(rss|atom)\+xml$/.test(type)) continue;
    let absolute;
    try {
      absolute = new URL(htmlToText(href), url).href;
    } catch {
      continue;
    }
    const label = attr("title") ? ` "${cap(htmlToText(attr("title")), 60)}"` : "";
    if (!feeds.some((f) => f.startsWith(absolute))) feeds.push(`${absolute} (${type.includes("atom") ? "Atom" : "RSS"}${label})`);
    if (feeds.length === 5) break;
  }
  if (feeds.length > 0) {
    return failed(`not a feed: ${url} is a web page${named}. It names ${feeds.length === 1 ? "this feed" : "these feeds"}: ${feeds.join(", ")} — read ${feeds.length === 1 ? "that URL" : "one of them"} instead`);
  }
  return failed(`not a feed: ${url} is a web page${named} that names no feed (no <link rel="alternate" type="application/rss+xml">); sites often publish theirs at /feed, /rss.xml or /atom.xml`);
}
