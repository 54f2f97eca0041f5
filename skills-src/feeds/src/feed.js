// One feed document read: its title and its entries, newest first, each
// with plain-text fields. No network here (see load.js), so it runs under
// plain Node.js for the tests.

import { isoDate, parseFeedDate } from "./dates.js";
import { otherXml, sniff } from "./document.js";
import { parseFeed } from "./parse.js";
import { cap, collapse, decodeDocument, htmlToText } from "./text.js";

/** Longest summary returned, in characters. */
export const SUMMARY_CHARS = 300;
const TITLE_CHARS = 300;

/**
 * @typedef {object} Entry
 * @property {string} title
 * @property {string|null} link
 * @property {string|null} date ISO 8601, UTC
 * @property {string} [date_text] the date as the feed wrote it, when it could not be read
 * @property {string} summary plain text, at most SUMMARY_CHARS
 * @property {string} text the whole summary, for searching (not returned)
 * @property {number} ms the date as a number, for sorting (not returned)
 */

/**
 * @typedef {object} Feed
 * @property {string} url the URL that answered, after redirects
 * @property {string} title
 * @property {string|null} link the site the feed belongs to
 * @property {string} format
 * @property {Entry[]} entries newest first; undated entries last, in feed order
 */

/** A text construct's value as plain text. */
function plain(value, kind) {
  if (value === undefined) return "";
  return kind === "html" ? htmlToText(value) : collapse(value);
}

/** @param {import("./parse.js").RawEntry} raw */
function toEntry(raw) {
  const title = cap(plain(raw.title, raw.titleKind), TITLE_CHARS);
  let link = raw.link ?? null;
  if (!link && raw.linkText?.trim()) link = resolve(raw.linkText.trim(), raw.base);
  if (!link && raw.guid && raw.guidIsLink && /^https?:\/\//i.test(raw.guid.trim())) link = raw.guid.trim();
  const dateText = [raw.published, raw.pubDate, raw.dcDate, raw.updated].find((d) => d?.trim());
  const ms = dateText ? parseFeedDate(dateText) : NaN;
  // The summary, else the full content, else what podcast and video feeds use.
  const text =
    plain(raw.summary, raw.summaryKind) || plain(raw.content, raw.contentKind) || plain(raw.media, raw.mediaKind) || plain(raw.itunes, "text");
  const entry = { title: title || "(untitled)", link, date: Number.isNaN(ms) ? null : isoDate(ms), summary: cap(text, SUMMARY_CHARS) };
  if (dateText && Number.isNaN(ms)) entry.date_text = collapse(dateText).slice(0, 60);
  Object.defineProperties(entry, {
    text: { value: text, enumerable: false },
    ms: { value: ms, enumerable: false },
  });
  return entry;
}

function resolve(href, base) {
  try {
    return new URL(href, base).href;
  } catch {
    return href;
  }
}

/** Newest first; entries without a date keep their order, after the dated ones. */
export function newestFirst(entries) {
  return entries
    .map((entry, index) => ({ entry, index }))
    .sort((a, b) => {
      const da = Number.isNaN(a.entry.ms) ? -Infinity : a.entry.ms;
      const db = Number.isNaN(b.entry.ms) ? -Infinity : b.entry.ms;
      return db - da || a.index - b.index;
    })
    .map(({ entry }) => entry);
}

/**
 * Read a feed document that is already fetched.
 * @param {Uint8Array} bytes
 * @param {string|null} contentType
 * @param {string} url
 * @returns {Feed}
 */
export function readDocument(bytes, contentType, url) {
  const { text } = decodeDocument(bytes, contentType);
  const notFeed = sniff(text, contentType, url);
  if (notFeed) throw notFeed;
  const parsed = parseFeed(text, url);
  if (parsed.kind !== "feed") throw otherXml(parsed, text, url);
  const channel = parsed.channel;
  let link = channel.link ?? null;
  if (!link && channel.linkText?.trim()) link = resolve(channel.linkText.trim(), channel.base);
  return {
    url,
    title: cap(plain(channel.title, channel.titleKind), TITLE_CHARS) || "(untitled feed)",
    link,
    format: parsed.format,
    entries: newestFirst(parsed.entries.map(toEntry)),
  };
}
