/**
 * HTTP for skills: `fetch` with errors a model can act on.
 *
 * componentize-js provides the standard `fetch` over `wasi:http`, and the
 * host checks every request against the permission table's `net` allowlist.
 * Two things about that `fetch` matter to a skill:
 *
 * - Every failure before an answer — a host the table does not grant, an
 *   internal address, a refused connection, a name that does not resolve —
 *   is the same `TypeError: NetworkError when attempting to fetch
 *   resource`. {@link fetchChecked} then asks `wasi:http` once more, with a
 *   `HEAD` to the same URL, to learn which it was, and throws a
 *   {@link ToolError}: `denied` naming the host and saying the operator must
 *   add it to `net`, `not-found` for a name that does not resolve, `failed`
 *   for the rest.
 * - It does not follow redirects. {@link fetchChecked} does, each hop being
 *   a new request the host checks again, and never from https to plain http.
 *
 * This module imports `wasi:http`: build a skill that uses it with
 * `build.mjs --http` (which adds the imports to the component's world). A
 * skill without HTTP imports only `agent-reach.js` and gets no network
 * interface at all.
 *
 * ```js
 * import { fetchChecked, readText, statusError } from "./agent-reach-http.js";
 *
 * const response = await fetchChecked(url);
 * if (!response.ok) throw statusError(response);
 * const { text } = await readText(response, { maxBytes: 1 << 20 });
 * ```
 *
 * @module agent-reach-http
 */

import { handle } from "wasi:http/outgoing-handler@0.2.12";
import { Fields, OutgoingRequest, RequestOptions } from "wasi:http/types@0.2.12";
import { ToolError, denied, failed, invalidArguments, notFound } from "./agent-reach.js";

const REDIRECTS = new Set([301, 302, 303, 307, 308]);

/**
 * A URL for messages: scheme, host and path, never a user name or password.
 * @param {URL} url
 */
export function shownUrl(url) {
  return `${url.protocol}//${url.host}${url.pathname}`;
}

/**
 * Parse a URL a model gave: `https://` is assumed when the scheme is left
 * out; other schemes than http and https, and URLs carrying a user name or
 * password, are `invalid-arguments`.
 * @param {string} text
 * @returns {URL}
 */
export function parseUrl(text) {
  const trimmed = String(text).trim();
  const withScheme = /^[a-z][a-z0-9+.-]*:/i.test(trimmed) ? trimmed : `https://${trimmed}`;
  let url;
  try {
    url = new URL(withScheme);
  } catch {
    throw invalidArguments(`${JSON.stringify(trimmed)} is not a URL; give a full address such as https://example.com/feed.xml`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw invalidArguments(`${shownUrl(url)}: only http and https URLs can be fetched`);
  }
  if (url.username !== "" || url.password !== "") {
    // The host refuses such a request too; credentials are the operator's to
    // configure, and a password must not travel into logs through a URL.
    throw invalidArguments(`${shownUrl(url)}: the URL carries a user name or password, which is refused; credentials are added by the host from the permission table`);
  }
  return url;
}

/**
 * `fetch`, with redirects followed and every failure before an answer turned
 * into a {@link ToolError} that says what to do. The answer can still be any
 * status: check `response.ok` (or use {@link statusError}).
 *
 * @param {string|URL} target the URL (`https://` assumed without a scheme)
 * @param {RequestInit & {maxRedirects?: number, timeoutMs?: number}} [init]
 *   standard `fetch` options, plus `maxRedirects` (default 5) and `timeoutMs`
 *   (default 30000: until the answer's headers; the host's `timeout_ms`
 *   bounds the whole call anyway)
 * @returns {Promise<Response>} the final response (`response.url` is the URL
 *   that answered, after redirects)
 */
export async function fetchChecked(target, init = {}) {
  const { maxRedirects = 5, timeoutMs = 30000, ...request } = init;
  let url = target instanceof URL ? target : parseUrl(target);
  let method = (request.method ?? "GET").toUpperCase();
  let body = request.body;
  for (let hop = 0; ; hop++) {
    const response = await sendOnce(url, { ...request, method, body, redirect: "manual" }, timeoutMs);
    const location = response.headers.get("location");
    if (!REDIRECTS.has(response.status) || location === null || maxRedirects === 0) return response;
    // The 3xx body is not read; cancelling it frees the host's slot for it.
    await response.body?.cancel().catch(() => {});
    if (hop >= maxRedirects) {
      throw failed(`${shownUrl(url)} redirected more than ${maxRedirects} times; not followed further`);
    }
    let next;
    try {
      next = new URL(location, url);
    } catch {
      throw failed(`${shownUrl(url)} redirected to an invalid location ${JSON.stringify(location.slice(0, 200))}`);
    }
    if (next.protocol !== "http:" && next.protocol !== "https:") {
      throw failed(`${shownUrl(url)} redirected to ${next.protocol} URL, which cannot be fetched`);
    }
    if (url.protocol === "https:" && next.protocol === "http:") {
      // The next request, and its answer, would travel unencrypted; the host
      // refuses that hop too, this says why before it is sent.
      throw denied(`net: ${shownUrl(url)} redirected from https to plain http (${shownUrl(next)}); such a redirect is not followed`);
    }
    if (next.username !== "" || next.password !== "") {
      throw denied(`net: ${shownUrl(url)} redirected to a URL with a user name or password; not followed`);
    }
    // 303, and 301/302 after POST, switch to GET as browsers do.
    if (response.status === 303 || ((response.status === 301 || response.status === 302) && method === "POST")) {
      method = "GET";
      body = undefined;
    }
    url = next;
  }
}

/** One request, no redirects followed; a failure without an answer is diagnosed. */
async function sendOnce(url, request, timeoutMs) {
  const signal = request.signal ?? AbortSignal.timeout(timeoutMs);
  try {
    return await fetch(url.href, { ...request, signal });
  } catch (err) {
    if (err instanceof ToolError) throw err;
    if (err?.name === "TimeoutError" || err?.name === "AbortError") {
      throw failed(`${request.method} ${shownUrl(url)}: no answer within ${Math.round(timeoutMs / 1000)} s; the server is slow or unreachable, try again later`);
    }
    throw diagnose(url, request.method, err);
  }
}

/**
 * Why a request got no answer. StarlingMonkey's `fetch` reports every such
 * failure alike, so ask `wasi:http` directly, once, with a HEAD to the same
 * URL: the host answers that probe with the precise `error-code` (its
 * allowlist refusal is `HTTP-request-denied`). HEAD, because a GET or POST
 * sent again could do again what the first one did.
 *
 * @param {URL} url
 * @param {string} method
 * @param {unknown} original what `fetch` threw
 * @returns {ToolError}
 */
export function diagnose(url, method, original) {
  const target = `${method} ${shownUrl(url)}`;
  const code = probe(url);
  const hostPort = url.port ? url.host : url.hostname;
  switch (code) {
    case "HTTP-request-denied":
      return denied(
        `net: ${target} is not granted to this skill: the host refused it. The operator must add ` +
          `"${hostPort}" to \`net\` of this skill in the permission table (reach.toml); ` +
          `trying another form of the URL will be refused too.`,
      );
    case "destination-IP-prohibited":
      return denied(
        `net: ${url.hostname} resolves to an internal address, which the permission table does not ` +
          `name; the operator must add that address and port to \`net\` to allow it.`,
      );
    case "connection-limit-reached":
      return failed(`${target}: too many requests at once in this call; read or cancel a response before sending another`);
    case "DNS-error":
      return notFound(`${target}: the name ${url.hostname} does not resolve (DNS); check the host name`);
    case "connection-refused":
      return failed(`${target}: the connection was refused; nothing is listening at ${url.host}`);
    case "destination-unavailable":
    case "destination-not-found":
      return failed(`${target}: ${url.host} cannot be reached`);
    case "connection-timeout":
    case "connection-read-timeout":
    case "connection-write-timeout":
    case "HTTP-response-timeout":
      return failed(`${target}: ${url.host} did not answer in time; try again later`);
    case "TLS-protocol-error":
    case "TLS-certificate-error":
    case "TLS-alert-received":
      // A server that speaks plain http fails the TLS handshake.
      return failed(`${target}: the TLS (https) connection to ${url.host} failed (${code}); if the server speaks plain http, use an http:// URL`);
    case null:
      // The probe got an answer: the failure did not last, or was specific
      // to the first request.
      return failed(`${target}: the request failed before an answer came (${messageOf(original)}), though the server answers now; try again`);
    default:
      return failed(`${target}: the request failed (${code})`);
  }
}

/** @param {unknown} err */
function messageOf(err) {
  return err instanceof Error ? err.message : String(err);
}

/**
 * Send `HEAD url` through `wasi:http` and return its `error-code` tag, or
 * null when an answer came.
 * @param {URL} url
 * @returns {string|null}
 */
function probe(url) {
  try {
    const request = new OutgoingRequest(new Fields());
    request.setMethod({ tag: "head" });
    request.setScheme({ tag: url.protocol === "https:" ? "HTTPS" : "HTTP" });
    request.setAuthority(url.host);
    request.setPathWithQuery(`${url.pathname}${url.search}`);
    const options = new RequestOptions();
    // Bounded: the probe is only there to name the failure.
    const fiveSeconds = 5_000_000_000n;
    options.setConnectTimeout(fiveSeconds);
    options.setFirstByteTimeout(fiveSeconds);
    let future;
    try {
      future = handle(request, options);
    } catch (err) {
      return err?.payload?.tag ?? "internal-error";
    }
    future.subscribe().block();
    const outcome = future.get();
    if (outcome === undefined || outcome.tag === "err") return "internal-error";
    return outcome.val.tag === "ok" ? null : outcome.val.val.tag;
  } catch {
    return "internal-error";
  }
}

/**
 * The {@link ToolError} for a response that is not a success: 404 and 410
 * are `not-found`, everything else `failed`, with the status and what it
 * usually means.
 * @param {Response} response
 * @param {string} [what] what was fetched, for the message (default: the URL)
 * @returns {ToolError}
 */
export function statusError(response, what) {
  const shown = what ?? safeShown(response.url);
  const status = `HTTP ${response.status}${response.statusText ? ` ${response.statusText}` : ""}`;
  const s = response.status;
  if (s === 404 || s === 410) return notFound(`${shown}: ${status}; the address does not exist (any more); check the URL`);
  if (s === 401 || s === 403) return failed(`${shown}: ${status}; the server refuses access without credentials, which only the operator can configure`);
  if (s === 429) return failed(`${shown}: ${status}; the server limits how often it may be asked; try again later`);
  if (s >= 500) return failed(`${shown}: ${status}; the server has a problem; try again later`);
  return failed(`${shown}: ${status}`);
}

/** @param {string} href */
function safeShown(href) {
  try {
    return shownUrl(new URL(href));
  } catch {
    return "the server";
  }
}

/**
 * Read a response body, at most `maxBytes` of it (the rest is not read).
 * @param {Response} response
 * @param {{maxBytes?: number}} [options] default 10 MiB
 * @returns {Promise<{bytes: Uint8Array, truncated: boolean}>}
 */
export async function readBytes(response, { maxBytes = 10 << 20 } = {}) {
  if (response.body === null) return { bytes: new Uint8Array(0), truncated: false };
  const reader = response.body.getReader();
  const chunks = [];
  let length = 0;
  let truncated = false;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      if (length + value.length > maxBytes) {
        chunks.push(value.subarray(0, maxBytes - length));
        length = maxBytes;
        truncated = true;
        await reader.cancel().catch(() => {});
        break;
      }
      chunks.push(value);
      length += value.length;
    }
  } catch (err) {
    throw failed(`${safeShown(response.url)}: the connection broke while reading the answer (${messageOf(err)}); try again`);
  }
  const bytes = new Uint8Array(length);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.length;
  }
  return { bytes, truncated };
}

/**
 * Read a response body as text, decoded with the `Content-Type` charset
 * (UTF-8 when none is given or it is unknown), at most `maxBytes` of it.
 * @param {Response} response
 * @param {{maxBytes?: number}} [options]
 * @returns {Promise<{text: string, truncated: boolean}>}
 */
export async function readText(response, options) {
  const { bytes, truncated } = await readBytes(response, options);
  const charset = /charset\s*=\s*"?([^";\s]+)/i.exec(response.headers.get("content-type") ?? "")?.[1];
  let decoder;
  try {
    decoder = new TextDecoder(charset ?? "utf-8");
  } catch {
    decoder = new TextDecoder("utf-8");
  }
  return { text: decoder.decode(bytes), truncated };
}
