// A skill that misbehaves on purpose, for the host's sandbox tests: each
// tool tries one thing the sandbox must refuse or bound, or fails in one
// way the host must report. Not shipped; built by the tests.

import { getEnvironment } from "wasi:cli/environment@0.2.12";
import { defineSkill, notFound, s } from "../../../../sdk/js/agent-reach.js";
import { fetchChecked, readText } from "../../../../sdk/js/agent-reach-http.js";

const skill = defineSkill({
  name: "misbehave_js",
  version: "0.1.0",
  description: "Test skill: tries what the sandbox must refuse or bound (network, environment, CPU, memory, output) and fails on purpose.",
});

skill.tool(
  "fetch",
  { description: "GET a URL through the SDK's fetchChecked; returns {status, url, body} (the first 200 characters).", parameters: { url: s.string() } },
  async ({ url }) => {
    const response = await fetchChecked(url);
    const { text } = await readText(response, { maxBytes: 200 });
    return { status: response.status, url: response.url, body: text };
  },
);

skill.tool(
  "env",
  { description: "The value of an environment variable; not-found when the sandbox has no such variable.", parameters: { variable: s.string() } },
  ({ variable }) => {
    const found = getEnvironment().find(([name]) => name === variable);
    if (!found) throw notFound(`no variable ${variable} in the sandbox (it has: ${getEnvironment().map(([n]) => n).join(", ") || "none"})`);
    return found[1];
  },
);

skill.tool("spin", { description: "Loop forever without yielding." }, () => {
  for (;;) {
    // The host's epoch deadline must stop this.
  }
});

skill.tool(
  "sleep",
  { description: "Wait this many milliseconds on a timer (blocked in the host, not computing).", parameters: { ms: s.integer({ minimum: 0 }) } },
  async ({ ms }) => {
    await new Promise((resolve) => setTimeout(resolve, ms));
    return `slept ${ms} ms`;
  },
);

skill.tool(
  "alloc",
  { description: "Allocate this many MiB and write to every page of it.", parameters: { mib: s.integer({ minimum: 1 }) } },
  ({ mib }) => {
    const chunks = [];
    // 1 MiB at a time, each page touched, so the memory is really used.
    for (let i = 0; i < mib; i++) {
      const chunk = new Uint8Array(1 << 20);
      for (let p = 0; p < chunk.length; p += 4096) chunk[p] = 1;
      chunks.push(chunk);
    }
    return `allocated ${chunks.length} MiB`;
  },
);

skill.tool(
  "flood",
  { description: "Return this many KiB of text.", parameters: { kib: s.integer({ minimum: 0 }) } },
  ({ kib }) => "x".repeat(kib * 1024),
);

skill.tool(
  "crash",
  {
    description: "Fail: `error` throws a TypeError from the handler (the SDK makes it `failed`); `trap` throws at the component boundary, which traps.",
    parameters: { how: s.enum(["error", "trap"]) },
  },
  ({ how }) => {
    if (how === "error") return null.property;
    return "unreachable";
  },
);

// `crash {"how": "trap"}` goes around the SDK: an Error thrown out of the
// export is what componentize-js turns into a trap.
export const guest = {
  describe: skill.guest.describe,
  call(tool, args) {
    if (tool === "crash" && JSON.parse(args).how === "trap") throw new Error("misbehave: deliberate trap");
    return skill.guest.call(tool, args);
  },
};
