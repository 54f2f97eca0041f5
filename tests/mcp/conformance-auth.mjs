// Preloaded (`node --import`) into the MCP conformance suite by
// scripts/mcp-conformance.sh: the suite has no option for a bearer token, and
// `reach mcp --http` asks every request for one. Every request the suite
// makes to $CONFORMANCE_SERVER_URL's origin — through fetch (the SDK's client)
// or undici's request (its raw HTTP checks) — gets
// `Authorization: Bearer $CONFORMANCE_TOKEN` added; nothing else changes.
import { createRequire } from "node:module";

const origin = new URL(process.env.CONFORMANCE_SERVER_URL).origin;
const authorization = `Bearer ${process.env.CONFORMANCE_TOKEN}`;
// undici from the suite's own node_modules (the main script is the suite's).
const { Agent, setGlobalDispatcher } = createRequire(process.argv[1])("undici");

/** `headers` in any form undici takes, with the token added unless present. */
function withToken(headers) {
  const pairs = [];
  if (Array.isArray(headers)) {
    if (headers.every((h) => Array.isArray(h))) pairs.push(...headers);
    else for (let i = 0; i + 1 < headers.length; i += 2) pairs.push([headers[i], headers[i + 1]]);
  } else if (headers && typeof headers[Symbol.iterator] === "function") {
    pairs.push(...headers);
  } else if (headers) {
    pairs.push(...Object.entries(headers));
  }
  if (!pairs.some(([name]) => String(name).toLowerCase() === "authorization")) pairs.push(["authorization", authorization]);
  return Object.fromEntries(pairs.map(([name, value]) => [String(name), value]));
}

class WithToken extends Agent {
  dispatch(options, handler) {
    const to = options.origin ? new URL(String(options.origin)).origin : undefined;
    if (to === origin) options = { ...options, headers: withToken(options.headers) };
    return super.dispatch(options, handler);
  }
}

setGlobalDispatcher(new WithToken());
