// A feed fetched over the network (only from the hosts the operator granted:
// the host enforces it, the SDK's errors say so) and read.

import { fetchChecked, readBytes, statusError, shownUrl } from "../../../sdk/js/agent-reach-http.js";
import { failed } from "../../../sdk/js/agent-reach.js";
import { readDocument } from "./feed.js";

/** The largest feed read: parsing takes about 1.5 s per MiB in the sandbox. */
export const MAX_FEED_BYTES = 4 << 20;

/**
 * Fetch and read a feed. Errors are ToolErrors: the host's refusals as
 * `denied`, 404/410 as `not-found`, the rest as `failed`, each saying what
 * the URL answered.
 * @param {URL} url
 * @returns {Promise<import("./feed.js").Feed>}
 */
export async function loadFeed(url) {
  const response = await fetchChecked(url, {
    headers: {
      accept: "application/rss+xml, application/atom+xml, application/xml;q=0.9, text/xml;q=0.9, */*;q=0.5",
      "user-agent": "agent-reach-feeds/0.1 (+feed reader)",
    },
  });
  const shown = shownUrl(new URL(response.url || url.href));
  if (!response.ok) throw statusError(response, shown);
  const { bytes, truncated } = await readBytes(response, { maxBytes: MAX_FEED_BYTES });
  if (truncated) {
    throw failed(`${shown}: the document is larger than ${MAX_FEED_BYTES >> 20} MiB, more than this skill reads; it is probably not a feed, or a feed that keeps its whole archive`);
  }
  return readDocument(bytes, response.headers.get("content-type"), shown);
}
