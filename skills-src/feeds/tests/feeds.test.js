// The feed reading of the `feeds` skill under plain Node.js (the fetching is
// the SDK's, tested there and through the host): formats, dates, text,
// what a non-feed is called, and search matching.

import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { isoDate, parseFeedDate } from "../src/dates.js";
import { readDocument } from "../src/feed.js";
import { matches, queryWords } from "../src/search.js";
import { cap, decodeDocument, htmlToText } from "../src/text.js";

const bytes = (text) => new TextEncoder().encode(text);
const read = (xml, type = "application/rss+xml") => readDocument(bytes(xml), type, "https://blog.example.com/feed.xml");
const error = (xml, type) => {
  try {
    read(xml, type);
  } catch (err) {
    return err;
  }
  assert.fail("no error");
};

describe("RSS 2.0", () => {
  const feed = read(`<?xml version="1.0"?>
<rss version="2.0" xmlns:content="http://purl.org/rss/1.0/modules/content/" xmlns:atom="http://www.w3.org/2005/Atom">
 <channel><title>Ops &amp; Notes</title><link>https://blog.example.com/</link>
  <atom:link rel="self" href="https://blog.example.com/feed.xml"/>
  <item><title>Old</title><link>/2024/old</link><pubDate>Mon, 06 May 2024 08:00:00 +0200</pubDate>
   <description>&lt;p&gt;An &lt;b&gt;old&lt;/b&gt;&amp;nbsp;post.&lt;/p&gt;&lt;script&gt;x()&lt;/script&gt;</description></item>
  <item><title>New</title><guid>https://blog.example.com/new</guid><pubDate>Tue, 14 May 2024 09:30:00 GMT</pubDate>
   <content:encoded><![CDATA[<div>Full <em>content</em> &hellip;</div>]]></content:encoded></item>
  <item><title>Undated</title><link>https://blog.example.com/u</link><description>Plain &nbsp; text</description></item>
 </channel></rss>`);

  it("has the channel's title and link", () => {
    assert.deepEqual([feed.title, feed.link, feed.format], ["Ops & Notes", "https://blog.example.com/", "RSS 2.0"]);
  });

  it("lists entries newest first, undated last, with ISO dates in UTC", () => {
    assert.deepEqual(
      feed.entries.map((e) => [e.title, e.date]),
      [["New", "2024-05-14T09:30:00Z"], ["Old", "2024-05-06T06:00:00Z"], ["Undated", null]],
    );
  });

  it("makes links absolute and falls back to a permalink guid", () => {
    assert.deepEqual(feed.entries.map((e) => e.link), ["https://blog.example.com/new", "https://blog.example.com/2024/old", "https://blog.example.com/u"]);
  });

  it("gives summaries as plain text, from the description or else the content", () => {
    assert.deepEqual(feed.entries.map((e) => e.summary), ["Full content …", "An old post.", "Plain text"]);
  });
});

describe("Atom", () => {
  const feed = read(`<feed xmlns="http://www.w3.org/2005/Atom" xml:base="https://atom.example.org/blog/">
  <title type="html">Release &lt;i&gt;notes&lt;/i&gt;</title>
  <link rel="self" href="https://atom.example.org/atom.xml"/><link href="https://atom.example.org/"/>
  <entry><title>One</title><link rel="edit" href="edit/1"/><link href="posts/1"/><updated>2024-05-10T12:00:00+02:00</updated>
   <summary>Kubernetes upgrade guide</summary></entry>
  <entry><title type="xhtml"><div xmlns="http://www.w3.org/1999/xhtml">Two <b>bold</b></div></title>
   <link rel="alternate" href="https://atom.example.org/posts/2"/><published>2024-05-12T08:00:00Z</published><updated>2024-06-01T00:00:00Z</updated>
   <content type="xhtml"><div xmlns="http://www.w3.org/1999/xhtml"><p>Para one.</p><p>Para two.</p></div></content></entry>
 </feed>`, "application/atom+xml");

  it("reads text constructs of every type", () => {
    assert.equal(feed.title, "Release notes");
    assert.deepEqual(feed.entries.map((e) => [e.title, e.summary]), [["Two bold", "Para one. Para two."], ["One", "Kubernetes upgrade guide"]]);
  });

  it("takes the alternate link, resolved against xml:base, and the published date first", () => {
    assert.equal(feed.link, "https://atom.example.org/");
    assert.deepEqual(feed.entries.map((e) => [e.link, e.date]), [
      ["https://atom.example.org/posts/2", "2024-05-12T08:00:00Z"],
      ["https://atom.example.org/blog/posts/1", "2024-05-10T10:00:00Z"],
    ]);
  });
});

it("reads RSS 1.0 (RDF) with Dublin Core dates", () => {
  const feed = read(`<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" xmlns="http://purl.org/rss/1.0/" xmlns:dc="http://purl.org/dc/elements/1.1/">
   <channel rdf:about="x"><title>RDF site</title><link>https://rdf.example.org/</link></channel>
   <item rdf:about="a"><title>A</title><link>https://rdf.example.org/a</link><dc:date>2024-03-01T10:00:00Z</dc:date><description>Desc</description></item>
  </rdf:RDF>`);
  assert.deepEqual([feed.format, feed.title, feed.entries[0].date, feed.entries[0].summary], ["RSS 1.0", "RDF site", "2024-03-01T10:00:00Z", "Desc"]);
});

it("forgives an undeclared namespace prefix and an HTML entity", () => {
  const feed = read(`<rss><channel><title>Caf&eacute;</title><item><title>x</title><dc:creator>me</dc:creator><description>a&copy;b</description></item></channel></rss>`);
  assert.equal(feed.title, "Café");
  assert.equal(feed.entries[0].summary, "a©b");
});

describe("what is not a feed", () => {
  it("says where the XML breaks, with line and column", () => {
    const err = error("<rss><channel><title>x</title>\n<item><title>a</item></channel></rss>");
    assert.equal(err.code, "failed");
    assert.match(err.message, /not well-formed XML at line 2, column 21 \(near "<item><title>a<\/item>/);
    assert.match(err.message, /Unexpected close tag/);
  });

  it("names the feeds a web page declares", () => {
    const err = error(
      `<!DOCTYPE html><html><head><title>Ops blog</title><link rel="alternate" type="application/rss+xml" title="Posts" href="/feed.xml"></head></html>`,
      "text/html",
    );
    assert.match(err.message, /is a web page \("Ops blog"\)\. It names this feed: https:\/\/blog.example.com\/feed.xml \(RSS "Posts"\) — read that URL instead/);
  });

  it("says what other documents are", () => {
    assert.match(error(`<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"/>`).message, /is a sitemap/);
    assert.match(error(`<opml><body><outline xmlUrl="https://a.example/rss"/></body></opml>`).message, /OPML subscription list; it lists these feeds: https:\/\/a.example\/rss/);
    assert.match(error(`{"version": "https://jsonfeed.org/version/1.1", "items": []}`).message, /is a JSON Feed/);
    assert.match(error(`User-agent: *`, "text/plain").message, /is text\/plain starting "User-agent: \*", not XML/);
    assert.match(error("", "text/xml").message, /empty document/);
    assert.match(error("GIF89a", "image/gif").message, /serves image\/gif/);
  });
});

describe("dates", () => {
  const iso = (text) => {
    const ms = parseFeedDate(text);
    return Number.isNaN(ms) ? null : isoDate(ms);
  };
  it("reads RFC 822 and RFC 3339 in their usual variants", () => {
    for (const [text, want] of [
      ["Tue, 14 May 2024 09:30:00 GMT", "2024-05-14T09:30:00Z"],
      ["14 May 2024 09:30 +0200", "2024-05-14T07:30:00Z"],
      ["Tue, 14 May 24 09:30:00 EST", "2024-05-14T14:30:00Z"],
      ["Wed, 4 June 2025 23:00:00 -07:00", "2025-06-05T06:00:00Z"],
      ["2024-05-14T09:30:00.123+02:00", "2024-05-14T07:30:00Z"],
      ["2024-05-14 09:30:00", "2024-05-14T09:30:00Z"],
      ["2024-05-14", "2024-05-14T00:00:00Z"],
      ["31 Feb 2024 10:00:00 GMT", null],
      ["yesterday", null],
    ]) {
      assert.equal(iso(text), want, text);
    }
  });
});

describe("text", () => {
  it("strips HTML to one line", () => {
    assert.equal(htmlToText("<p>One</p><p>two <b>bold</b>&amp;<i>x</i></p><!-- c --><style>p{}</style>&#x1F600;"), "One two bold&x 😀");
  });
  it("cuts at a word with an ellipsis", () => {
    assert.equal(cap("alpha beta gamma delta", 13), "alpha beta…");
    assert.equal(cap("alphabetagammadelta", 10), "alphabeta…");
    assert.equal(cap("short", 15), "short");
  });
  it("decodes the encoding the XML declaration names", () => {
    const latin1 = new Uint8Array([...bytes('<?xml version="1.0" encoding="ISO-8859-1"?><a>'), 0xe9, ...bytes("</a>")]);
    assert.equal(decodeDocument(latin1, "text/xml; charset=utf-8").text, '<?xml version="1.0" encoding="ISO-8859-1"?><a>é</a>');
  });
});

describe("search matching", () => {
  const entry = { title: "Upgrading Postgres", text: "How we moved our deployments to version 16." };
  it("needs every word, in the title or the summary, in any case, inside longer words too", () => {
    assert.deepEqual(queryWords(' "Postgres", DEPLOY  postgres '), ["postgres", "deploy"]);
    assert.ok(matches(entry, queryWords("postgres deploy")));
    assert.ok(!matches(entry, queryWords("postgres mysql")));
  });
});
