// Text: HTML fragments (what feeds put in descriptions) to plain text,
// bytes to text, and cutting text to a length a model can take in.

import sax from "sax";

// The HTML 4 entity names (sax's table, already part of the bundle). Feeds
// use these in escaped HTML; HTML5's long tail is rare there.
const NAMED = sax.ENTITIES;

/**
 * Decode `&amp;`, `&eacute;`, `&#233;`, `&#xE9;`. Unknown names and entities
 * without their `;` are left as written, as a browser shows them.
 * @param {string} text
 */
export function decodeEntities(text) {
  if (!text.includes("&")) return text;
  return text.replace(/&(#[0-9]{1,7}|#[xX][0-9a-fA-F]{1,6}|[A-Za-z][A-Za-z0-9]{1,31});/g, (whole, ref) => {
    if (ref[0] === "#") {
      const code = ref[1] === "x" || ref[1] === "X" ? parseInt(ref.slice(2), 16) : parseInt(ref.slice(1), 10);
      // Surrogates and out-of-range code points are not characters.
      if (code === 0 || code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff)) return "\uFFFD";
      return String.fromCodePoint(code);
    }
    return NAMED[ref] ?? whole;
  });
}

// Elements whose end is a break between words; others (b, a, span…) are not.
const BLOCK = "address|article|aside|blockquote|br|dd|div|dl|dt|figcaption|figure|footer|h[1-6]|header|hr|li|main|nav|ol|p|pre|section|table|td|th|tr|ul";
const COMMENTS = /<!--[\s\S]*?-->/g;
// Their content is code or styling, never text a reader sees.
const HIDDEN = /<(script|style|template|noscript|iframe|svg|math)\b[^>]*>[\s\S]*?<\/\1\s*>/gi;
const BLOCK_TAGS = new RegExp(`</?(?:${BLOCK})\\b[^>]*>`, "gi");
const OTHER_TAGS = /<\/?[A-Za-z][^>]*>/g;

/**
 * An HTML fragment as one line of plain text: comments, scripts and styles
 * dropped, tags removed (block elements leave a space), entities decoded,
 * whitespace collapsed.
 * @param {string} html
 */
export function htmlToText(html) {
  let text = html;
  if (text.includes("<")) {
    text = text.replace(COMMENTS, " ").replace(HIDDEN, " ").replace(/<!\[CDATA\[|\]\]>/g, "");
    text = text.replace(BLOCK_TAGS, " ").replace(OTHER_TAGS, "");
  }
  return collapse(decodeEntities(text));
}

/** Runs of whitespace (non-breaking spaces included) as one space, trimmed. */
export function collapse(text) {
  return text.replace(/[\s\u00a0\u200b]+/g, " ").trim();
}

/**
 * At most `max` characters, cut at a word when one ends near the limit,
 * with "…" where it was cut.
 * @param {string} text
 * @param {number} max
 */
export function cap(text, max) {
  const chars = [...text];
  if (chars.length <= max) return text;
  let cut = chars.slice(0, max - 1).join("");
  const space = cut.lastIndexOf(" ");
  if (space > cut.length * 0.8) cut = cut.slice(0, space);
  return `${cut.replace(/[\s,;:.\-–—]+$/, "")}…`;
}

/**
 * Bytes to text, in the document's own encoding: a byte-order mark first,
 * then the XML declaration's `encoding` (written by the program that made the
 * feed), then the `Content-Type` charset, else UTF-8. Unknown encodings fall
 * back to UTF-8; invalid bytes become U+FFFD.
 *
 * @param {Uint8Array} bytes
 * @param {string|null} contentType
 * @returns {{text: string, encoding: string}}
 */
export function decodeDocument(bytes, contentType) {
  let encoding = "utf-8";
  if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) encoding = "utf-8";
  else if (bytes[0] === 0xff && bytes[1] === 0xfe) encoding = "utf-16le";
  else if (bytes[0] === 0xfe && bytes[1] === 0xff) encoding = "utf-16be";
  else {
    // The declaration is ASCII in every encoding a feed uses.
    const head = String.fromCharCode(...bytes.subarray(0, 256));
    const declared = /^\s*<\?xml[^>]*\bencoding\s*=\s*["']([A-Za-z0-9._:-]+)["']/.exec(head)?.[1];
    const charset = /charset\s*=\s*"?([^";\s]+)/i.exec(contentType ?? "")?.[1];
    encoding = declared ?? charset ?? "utf-8";
  }
  let decoder;
  try {
    decoder = new TextDecoder(encoding);
  } catch {
    encoding = "utf-8";
    decoder = new TextDecoder(encoding);
  }
  // TextDecoder drops the byte-order mark itself.
  return { text: decoder.decode(bytes), encoding: decoder.encoding ?? encoding };
}
