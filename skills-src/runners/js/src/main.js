// The JavaScript script runner: runs a bundle's `scripts/*.js` inside the
// sandbox, never natively.
//
// The host calls its one tool, `run`, on behalf of a bundle's
// `NAME__run_script`: it reads the script from the bundle, checks it against
// the bundle's manifest digest, and sends its source here with the bundle's
// folder, which it preopens read-only beside the folders the permission table
// grants the bundle. This instance has exactly the bundle's grants: a script
// that reads outside them or reaches an ungranted host is refused by the
// runtime, and the refusal comes back as `denied`.
//
// A script runs as Node would run it as CommonJS — `require`, `module`,
// `exports`, `__filename`, `__dirname`, `process.argv`, `process.env` (the
// variables the table grants), `process.exit`, `console` — with a subset of
// Node's modules: `fs` (synchronous calls and `fs.promises`, over WASI), `path`
// and `process`. `require("./x.js")` loads a module vendored in the bundle.
// Static `import … from "…"` lines are rewritten into `require` calls, so the
// common ES module scripts run too. `fetch` is the web one over `wasi:http`,
// the host checking every request. There is no `child_process`, `net` or
// `http` module: nothing here can start a process or open a socket.
//
// Every call runs in a fresh instance, so nothing a script leaves behind
// reaches the next one. Built with componentize-js: `./build.sh OUT.wasm`.

import { defineSkill, denied, failed, invalidArguments, s, ToolError } from "../../../../sdk/js/agent-reach.js";
import { fetchChecked } from "../../../../sdk/js/agent-reach-http.js";
import { getEnvironment, initialCwd } from "wasi:cli/environment@0.2.12";
import * as fsModule from "./fs.js";
import * as pathModule from "./path.js";
import { commonjs } from "./esm.js";

/** Most characters of stdout or stderr kept; the host's max_output_kb bounds the result too. */
const MAX_STREAM = 200_000;

const skill = defineSkill({
  name: "js-runner",
  version: "0.1.0",
  description:
    "Runs the JavaScript scripts of Agent Skills bundles inside the sandbox (used by the host for " +
    "NAME__run_script; not offered as a skill of its own).",
});

/** A stream that keeps the first MAX_STREAM characters and counts the rest. */
class Capped {
  constructor() {
    this.parts = [];
    this.kept = 0;
    this.dropped = 0;
  }
  write(text) {
    text = typeof text === "string" ? text : new TextDecoder().decode(text);
    const room = MAX_STREAM - this.kept;
    if (room <= 0) this.dropped += text.length;
    else {
      const part = text.length > room ? text.slice(0, room) : text;
      this.dropped += text.length - part.length;
      this.parts.push(part);
      this.kept += part.length;
    }
    return true;
  }
  text() {
    const value = this.parts.join("");
    return this.dropped ? `${value}\n[${this.dropped} more characters not kept]` : value;
  }
}

/** What `console.log` prints for one value, close to Node's. */
function show(value) {
  if (typeof value === "string") return value;
  if (value instanceof Error) return value.stack || `${value.name}: ${value.message}`;
  if (typeof value === "object" && value !== null) {
    try {
      return JSON.stringify(value, null, 2);
    } catch {
      return String(value);
    }
  }
  return String(value);
}

/**
 * An uncaught error as Node prints one: `Name: message`, then the frames in
 * the script and its modules (`at fn (FILE:LINE:COL)`), the runner's own
 * left out. Each evaluated file is named by its `sourceURL`; SpiderMonkey
 * numbers a `new Function` body from line 3, and the main script's async
 * wrapper adds one more.
 */
function describeError(thrown, mainPath, files) {
  if (!(thrown instanceof Error)) return `Uncaught ${show(thrown)}`;
  const frames = String(thrown.stack || "")
    .split("\n")
    .map((line) => /^(.*)@(.*):(\d+):(\d+)$/.exec(line))
    .filter((m) => m && files.has(m[2]))
    .map(([, fn, file, line, col]) => {
      const name = fn.replace(/\/<$/, "").replace(/^anonymous$/, "<script>") || "<anonymous>";
      const offset = file === mainPath ? 3 : 2;
      return `    at ${name} (${file}:${Math.max(1, Number(line) - offset)}:${col})`;
    });
  return [`${thrown.name}: ${thrown.message}`, ...frames].join("\n");
}

/** `process.exit(code)` unwinds the script with this. */
class Exit {
  constructor(code) {
    this.code = code;
  }
}

/** Run one script; resolves to {exit_code, stdout, stderr}. */
async function runScript({ path, source, bundle, args = [], stdin = "" }) {
  const bundleDir = bundle.replace(/\/+$/, "");
  if (!path.startsWith(`${bundleDir}/`)) throw invalidArguments(`${path} is not inside the bundle folder ${bundle}`);
  const stdout = new Capped();
  const stderr = new Capped();
  fsModule.setCwd(initialCwd() || "/");
  fsModule.setStdin(stdin);

  const env = Object.fromEntries(getEnvironment());
  const process = {
    argv: ["node", path, ...args],
    argv0: "node",
    env,
    platform: "wasi",
    version: "v0.0.0-sandbox",
    versions: {},
    exitCode: undefined,
    cwd: () => fsModule.getCwd(),
    exit: (code) => {
      throw new Exit(code ?? process.exitCode ?? 0);
    },
    stdout: { write: (t) => stdout.write(t), isTTY: false },
    stderr: { write: (t) => stderr.write(t), isTTY: false },
    stdin: { isTTY: false, read: () => stdin },
    on: () => process,
    nextTick: (f, ...a) => queueMicrotask(() => f(...a)),
    hrtime: Object.assign(() => [0, 0], { bigint: () => 0n }),
  };
  const line = (stream) => (...values) => stream.write(`${values.map(show).join(" ")}\n`);
  const console = {
    log: line(stdout),
    info: line(stdout),
    debug: line(stdout),
    warn: line(stderr),
    error: line(stderr),
    table: line(stdout),
    dir: line(stdout),
  };
  const path_ = { ...pathModule, resolve: (...parts) => parts.reduce((acc, p) => pathModule.resolveFrom(acc, p), fsModule.getCwd()), posix: pathModule };
  path_.posix = path_;
  const builtins = { fs: fsModule, path: path_, process };
  const cache = new Map();

  /** `require` for the module at `from`: a builtin, or a file vendored in the bundle. */
  const requireFrom = (fromDir) => (name) => {
    const bare = name.startsWith("node:") ? name.slice(5) : name;
    if (bare === "fs/promises") return fsModule.promises;
    if (Object.hasOwn(builtins, bare)) return builtins[bare];
    if (!bare.startsWith("./") && !bare.startsWith("../") && !bare.startsWith("/")) {
      throw Object.assign(
        new Error(
          `Cannot find module '${name}': in the sandbox only fs, path, process and modules vendored ` +
            "in the bundle (require('./lib.js')) are there; there is no child_process, net or http",
        ),
        { code: "MODULE_NOT_FOUND" },
      );
    }
    let file = pathModule.resolveFrom(fromDir, bare);
    if (!fsModule.existsSync(file)) {
      const found = [".js", ".cjs", ".mjs", ".json", "/index.js"].map((e) => file + e).find((f) => fsModule.existsSync(f));
      if (!found) throw Object.assign(new Error(`Cannot find module '${name}' (looked for ${file})`), { code: "MODULE_NOT_FOUND" });
      file = found;
    }
    if (cache.has(file)) return cache.get(file).exports;
    const text = fsModule.readFileSync(file, "utf8");
    const module = { exports: {}, filename: file };
    cache.set(file, module);
    if (file.endsWith(".json")) module.exports = JSON.parse(text);
    else evaluate(commonjs(text), file, module, false);
    return module.exports;
  };
  const __default = (m) => (m && typeof m === "object" && "default" in m ? m.default : m);

  /** Run `code` as the CommonJS module `module` at `file`; the main script may await at its top level. */
  function evaluate(code, file, module, main) {
    const dir = pathModule.dirname(file);
    // The sourceURL names the file in stack traces, instead of the runner's own.
    const body = `${main ? `return (async () => {\n${code}\n})();` : code}\n//# sourceURL=${file}`;
    // eslint-disable-next-line no-new-func -- running the script is the point of a runner
    const run = new Function("require", "module", "exports", "__filename", "__dirname", "process", "console", "fetch", "__default", body);
    return run(requireFrom(dir), module, module.exports, file, dir, process, console, fetchChecked, __default);
  }

  let status = 0;
  try {
    const main = { exports: {}, filename: path };
    await evaluate(commonjs(source), path, main, true);
    status = process.exitCode ?? 0;
  } catch (thrown) {
    if (thrown instanceof Exit) status = Number(thrown.code) || 0;
    else if (thrown instanceof ToolError && thrown.code === "denied") {
      throw denied(`${pathModule.basename(path)}: ${thrown.message}`);
    } else if (["EACCES", "EPERM", "EROFS"].includes(thrown?.code)) {
      throw denied(`${pathModule.basename(path)}: ${thrown.message}`);
    } else if (thrown instanceof SyntaxError && thrown.stack === undefined) {
      throw failed(`${pathModule.basename(path)} does not compile: ${thrown.message}`);
    } else {
      status = 1;
      stderr.write(`${describeError(thrown, path, new Set([path, ...cache.keys()]))}\n`);
    }
  }
  return { exit_code: status, stdout: stdout.text(), stderr: stderr.text() };
}

skill.tool(
  "run",
  {
    description:
      "Run one script: `process.argv` = [\"node\", path, ...args], stdin from `stdin`; returns its exit status, stdout and stderr.",
    parameters: {
      path: s.string({ description: "The script's absolute path inside the bundle folder." }),
      source: s.string({ description: "The script's source, as checked against the bundle's digest." }),
      bundle: s.string({ description: "The bundle folder (absolute), preopened read-only." }),
      args: s.array(s.string(), { description: "Command-line arguments (process.argv.slice(2)).", default: [] }),
      stdin: s.string({ description: "What the script reads from standard input.", default: "" }),
    },
  },
  runScript,
);

export const guest = skill.guest;
