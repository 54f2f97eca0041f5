// The HTTP module under plain Node.js, with `fetch` and `wasi:http` faked:
// each way a request can fail without an answer becomes the error a model
// can act on, and redirects are followed with the sandbox's rules.

import assert from "node:assert/strict";
import { register } from "node:module";
import { describe, it } from "node:test";

// `wasi:http/*` exists only inside a component: stand in for it with a module
// whose `handle` answers what `globalThis.probeAnswer` says (an error-code
// tag, or null for an answer).
const fake = `
export class Fields {}
export class RequestOptions { setConnectTimeout() {} setFirstByteTimeout() {} }
export class OutgoingRequest {
  setMethod(m) { globalThis.probeSent = { method: m.tag }; }
  setScheme(s) { globalThis.probeSent.scheme = s.tag; }
  setAuthority(a) { globalThis.probeSent.authority = a; }
  setPathWithQuery(p) { globalThis.probeSent.path = p; }
}
export function handle() {
  const tag = globalThis.probeAnswer;
  return { subscribe: () => ({ block() {} }), get: () => ({ tag: "ok", val: tag === null ? { tag: "ok", val: {} } : { tag: "err", val: { tag } } }) };
}`;
const hooks = `
export async function resolve(specifier, context, next) {
  if (specifier.startsWith("wasi:http/")) return { url: "data:text/javascript," + encodeURIComponent(${JSON.stringify(fake)}), shortCircuit: true };
  return next(specifier, context);
}`;
register(`data:text/javascript,${encodeURIComponent(hooks)}`);
const { fetchChecked, parseUrl, statusError } = await import("../agent-reach-http.js");
const { ToolError } = await import("../agent-reach.js");

/** fetch that fails as StarlingMonkey's does, for every request. */
const networkError = async () => {
  throw new TypeError("NetworkError when attempting to fetch resource");
};

async function failure(promise) {
  try {
    await promise;
  } catch (err) {
    assert.ok(err instanceof ToolError, `not a ToolError: ${err}`);
    return err;
  }
  assert.fail("no error");
}

describe("a request without an answer", () => {
  it("that the host refused is denied, naming the host:port to add to net", async () => {
    globalThis.fetch = networkError;
    globalThis.probeAnswer = "HTTP-request-denied";
    const err = await failure(fetchChecked("https://news.example.com:8443/feed?x=1"));
    assert.equal(err.code, "denied");
    assert.match(err.message, /GET https:\/\/news.example.com:8443\/feed is not granted/);
    assert.match(err.message, /must add "news.example.com:8443" to `net`/);
    // The probe is a HEAD to the same place: it cannot repeat what a GET or POST did.
    assert.deepEqual(globalThis.probeSent, { method: "head", scheme: "HTTPS", authority: "news.example.com:8443", path: "/feed?x=1" });
  });

  it("is named after what the host's wasi:http says", async () => {
    globalThis.fetch = networkError;
    for (const [tag, code, pattern] of [
      ["destination-IP-prohibited", "denied", /resolves to an internal address/],
      ["DNS-error", "not-found", /does not resolve/],
      ["connection-refused", "failed", /connection was refused/],
      ["connection-timeout", "failed", /did not answer in time/],
      ["TLS-certificate-error", "failed", /TLS .* failed .*use an http:\/\/ URL/],
      [null, "failed", /server answers now; try again/],
    ]) {
      globalThis.probeAnswer = tag;
      const err = await failure(fetchChecked("https://example.com/"));
      assert.equal(err.code, code, String(tag));
      assert.match(err.message, pattern, String(tag));
    }
  });
});

describe("redirects", () => {
  const answers = (routes) => async (url, init) => {
    const [status, location] = routes[url] ?? [200];
    globalThis.lastInit = init;
    return new Response(status === 200 ? `body of ${url}` : null, { status, headers: location ? { location } : {} });
  };

  it("are followed, each hop a new request", async () => {
    globalThis.fetch = answers({ "http://a.example/old": [301, "/new"], "http://a.example/new": [302, "https://b.example/feed"] });
    const response = await fetchChecked("http://a.example/old");
    assert.equal(await response.text(), "body of https://b.example/feed");
    assert.equal(globalThis.lastInit.redirect, "manual");
  });

  it("from https to plain http are refused", async () => {
    globalThis.fetch = answers({ "https://a.example/": [301, "http://a.example/"] });
    const err = await failure(fetchChecked("https://a.example/"));
    assert.equal(err.code, "denied");
    assert.match(err.message, /from https to plain http/);
  });

  it("stop after the limit", async () => {
    globalThis.fetch = answers({ "https://a.example/loop": [302, "/loop"] });
    const err = await failure(fetchChecked("https://a.example/loop", { maxRedirects: 2 }));
    assert.match(err.message, /redirected more than 2 times/);
  });
});

describe("URLs and statuses", () => {
  it("assumes https, and refuses other schemes and credentials in URLs", () => {
    assert.equal(parseUrl("example.com/feed").href, "https://example.com/feed");
    assert.throws(() => parseUrl("ftp://example.com/"), (e) => e.code === "invalid-arguments" && /only http and https/.test(e.message));
    assert.throws(() => parseUrl("https://user:secret@example.com/"), (e) => e.code === "invalid-arguments" && !e.message.includes("secret"));
    assert.throws(() => parseUrl("http://"), (e) => e.code === "invalid-arguments");
  });

  it("maps 404 and 410 to not-found, the rest to failed", () => {
    const status = (n) => statusError(new Response(null, { status: n }), "https://example.com/feed");
    assert.equal(status(404).code, "not-found");
    assert.equal(status(410).code, "not-found");
    assert.equal(status(403).code, "failed");
    assert.match(status(503).message, /HTTP 503.*try again later/);
  });
});
