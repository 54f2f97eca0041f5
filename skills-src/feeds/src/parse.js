// RSS 2.0, RSS 1.0 (RDF) and Atom (1.0 and 0.3) parsed in one pass with a
// streaming XML parser (sax): only the fields the tools return are kept, so
// memory stays near the size of the document — a DOM of a feed in the
// sandbox's JavaScript engine takes some 45 bytes per byte of XML, and a
// 1.5 MB podcast feed would not fit in the default 64 MiB.

import sax from "sax";
import { failed } from "../../../sdk/js/agent-reach.js";

const NS = {
  atom: "http://www.w3.org/2005/Atom",
  atom03: "http://purl.org/atom/ns#",
  rss10: "http://purl.org/rss/1.0/",
  rdf: "http://www.w3.org/1999/02/22-rdf-syntax-ns#",
  content: "http://purl.org/rss/1.0/modules/content/",
  dc: "http://purl.org/dc/elements/1.1/",
  media: "http://search.yahoo.com/mrss/",
  itunes: "http://www.itunes.com/dtds/podcast-1.0.dtd",
  xml: "http://www.w3.org/XML/1998/namespace",
};

// Mistakes feed generators often make that readers forgive: an entity XML
// does not define, a namespace prefix never declared.
const FORGIVEN = /^(Invalid character entity|Unbound namespace prefix)/;

// Block elements of Atom's `type="xhtml"` content: a break between words.
const XHTML_BLOCK = new Set(["p", "div", "br", "li", "ul", "ol", "h1", "h2", "h3", "h4", "h5", "h6", "blockquote", "pre", "tr", "td", "th", "table", "hr", "dd", "dt"]);

/**
 * @typedef {object} RawEntry
 * @property {string} [title] @property {string} [titleKind]
 * @property {string} [link] @property {string} [linkText] @property {string} [guid] @property {boolean} [guidIsLink]
 * @property {string} [published] @property {string} [updated] @property {string} [pubDate] @property {string} [dcDate]
 * @property {string} [summary] @property {string} [summaryKind] @property {string} [content] @property {string} [contentKind]
 * @property {string} [media] @property {string} [itunes] @property {string} base
 */

/**
 * @typedef {object} Parsed
 * @property {"feed"|"other"} kind
 * @property {string} [format] `RSS 2.0`, `RSS 1.0`, `Atom`
 * @property {{title?: string, titleKind?: string, link?: string, linkText?: string, base: string}} channel
 * @property {RawEntry[]} entries
 * @property {string} [root] the root element's name when it is not a feed
 * @property {string[]} outlines OPML: the feeds an outline lists
 */

/** `type` of an Atom text construct (and of media:description) as a kind. */
function kindOf(type) {
  const t = (type ?? "text").toLowerCase();
  if (t === "html" || t === "text/html" || t === "escaped") return "html";
  if (t === "xhtml" || t === "application/xhtml+xml") return "xhtml";
  return "text";
}

/** @param {string} href @param {string} base */
function resolveUrl(href, base) {
  try {
    return new URL(href.trim(), base).href;
  } catch {
    return href.trim();
  }
}

/**
 * Parse a document that should be a feed.
 * @param {string} text
 * @param {string} url where it came from: the base of relative links
 * @returns {Parsed}
 * @throws {import("../../../sdk/js/agent-reach.js").ToolError} failed, for XML that is not well-formed
 */
export function parseFeed(text, url) {
  try {
    return run(text, url, false);
  } catch (err) {
    if (!(err instanceof XmlError)) throw err;
    // Positions cost a fifth of the parse: tracked only to say where the
    // document breaks, by parsing it again.
    let where = "";
    try {
      run(text, url, true);
    } catch (located) {
      if (located instanceof XmlError && located.line !== undefined) {
        const line = text.split("\n", located.line + 1)[located.line] ?? "";
        const start = Math.max(0, located.column - 40);
        const near = line.slice(start, start + 80).trim();
        where = ` at line ${located.line + 1}, column ${located.column}${near ? ` (near ${JSON.stringify(near)})` : ""}`;
      }
    }
    throw failed(`the document is not well-formed XML${where}: ${err.message}; the feed is broken at its source, and no entry could be read`);
  }
}

/** Why a parse stopped, with where when positions were tracked. */
class XmlError extends SyntaxError {}

function run(text, url, trackPosition) {
  const parser = sax.parser(true, { xmlns: true, position: trackPosition });
  /** @type {Parsed} */
  const out = { kind: "feed", channel: { base: url }, entries: [], outlines: [] };
  /** @type {{local: string, uri: string, base: string}[]} */
  const stack = [];
  let core = ""; // the namespace of the format's own elements
  let channelDepth = -1; // the element holding the feed's title and link
  /** @type {(RawEntry & {depth: number}) | null} */
  let entry = null;
  /** @type {{target: object, key: string, depth: number, xhtml: boolean, parts: string[]} | null} */
  let capture = null;

  const start = (target, key, depth, xhtml) => {
    // The first of a repeated element counts (a second `<title>` is noise).
    if (target[key] === undefined) capture = { target, key, depth, xhtml, parts: [] };
  };

  parser.onerror = (err) => {
    if (FORGIVEN.test(err.message)) {
      parser.error = null;
      return;
    }
    const e = new XmlError(err.message.split("\n")[0]);
    if (trackPosition) {
      e.line = parser.line;
      e.column = parser.column;
    }
    throw e;
  };

  parser.onopentag = (node) => {
    const depth = stack.length;
    const parentBase = depth === 0 ? url : stack[depth - 1].base;
    const xmlBase = node.attributes["xml:base"]?.value;
    const base = xmlBase ? resolveUrl(xmlBase, parentBase) : parentBase;
    stack.push({ local: node.local, uri: node.uri, base });
    const attr = (name) => node.attributes[name]?.value;

    if (capture) {
      if (capture.xhtml && XHTML_BLOCK.has(node.local)) capture.parts.push(" ");
      return;
    }
    if (depth === 0) {
      if (node.local === "rss") [out.format, core, channelDepth] = ["RSS 2.0", node.uri, 1];
      else if (node.local === "feed") [out.format, core, channelDepth] = ["Atom", node.uri, 0];
      else if (node.local === "RDF" && node.uri === NS.rdf) [out.format, core, channelDepth] = ["RSS 1.0", NS.rss10, 1];
      else {
        out.kind = "other";
        out.root = node.name;
        // An OPML file lists feeds: read on to name them; for anything else
        // the root says enough.
        if (node.local !== "opml") throw new StopParsing();
      }
      if (out.format === "Atom" && node.uri !== NS.atom && node.uri !== NS.atom03 && node.uri !== "") {
        out.kind = "other";
        out.root = node.name;
        throw new StopParsing();
      }
      out.channel.base = base;
      return;
    }
    if (out.kind === "other") {
      const feedUrl = attr("xmlUrl");
      if (node.local === "outline" && feedUrl && out.outlines.length < 10) out.outlines.push(resolveUrl(feedUrl, base));
      return;
    }

    const isCore = node.uri === core;
    if (!entry) {
      if (isCore && ((node.local === "item" && out.format !== "Atom") || (node.local === "entry" && out.format === "Atom"))) {
        entry = { depth, base };
        return;
      }
      if (depth === channelDepth + 1 && isCore) {
        if (node.local === "title") {
          out.channel.titleKind = out.format === "Atom" ? kindOf(attr("type")) : "html";
          start(out.channel, "title", depth, out.channel.titleKind === "xhtml");
        } else if (node.local === "link") {
          if (out.format === "Atom") {
            const rel = attr("rel") ?? "alternate";
            if (rel === "alternate" && attr("href") && !out.channel.link) out.channel.link = resolveUrl(attr("href"), base);
          } else start(out.channel, "linkText", depth, false);
        }
      }
      return;
    }

    if (depth === entry.depth + 1) {
      const local = node.local;
      if (isCore) {
        if (local === "title") {
          entry.titleKind = out.format === "Atom" ? kindOf(attr("type")) : "html";
          start(entry, "title", depth, entry.titleKind === "xhtml");
        } else if (local === "link") {
          if (out.format === "Atom") {
            const rel = attr("rel") ?? "alternate";
            if (rel === "alternate" && attr("href") && !entry.link) entry.link = resolveUrl(attr("href"), base);
          } else start(entry, "linkText", depth, false);
        } else if (local === "guid") {
          entry.guidIsLink = attr("isPermaLink") !== "false";
          start(entry, "guid", depth, false);
        } else if (local === "pubDate") start(entry, "pubDate", depth, false);
        else if (local === "published" || local === "issued") start(entry, "published", depth, false);
        else if (local === "updated" || local === "modified") start(entry, "updated", depth, false);
        else if (local === "description") {
          entry.summaryKind = "html";
          start(entry, "summary", depth, false);
        } else if (local === "summary") {
          entry.summaryKind = kindOf(attr("type") ?? attr("mode"));
          start(entry, "summary", depth, entry.summaryKind === "xhtml");
        } else if (local === "content") {
          entry.contentKind = kindOf(attr("type") ?? attr("mode"));
          start(entry, "content", depth, entry.contentKind === "xhtml");
        }
      } else if (node.uri === NS.content && local === "encoded") {
        entry.contentKind = "html";
        start(entry, "content", depth, false);
      } else if (node.uri === NS.dc && local === "date") start(entry, "dcDate", depth, false);
      else if (node.uri === NS.itunes && local === "summary") start(entry, "itunes", depth, false);
    }
    // YouTube and podcast feeds keep the description in media:group.
    if (node.uri === NS.media && node.local === "description" && !capture) {
      entry.mediaKind = kindOf(attr("type") === "html" ? "html" : "text");
      start(entry, "media", depth, false);
    }
  };

  const onText = (t) => {
    if (capture) capture.parts.push(t);
  };
  parser.ontext = onText;
  parser.oncdata = onText;

  parser.onclosetag = () => {
    stack.pop();
    const depth = stack.length;
    if (capture && depth === capture.depth) {
      capture.target[capture.key] = capture.parts.join("");
      capture = null;
    }
    if (entry && depth === entry.depth) {
      out.entries.push(entry);
      entry = null;
    }
  };

  try {
    parser.write(text).close();
  } catch (err) {
    if (!(err instanceof StopParsing)) throw err;
  }
  return out;
}

/** Thrown to stop reading once the root says this is no feed. */
class StopParsing extends Error {}
