#!/usr/bin/env node
/**
 * Build a JavaScript skill into a component, in one command:
 *
 *     node build.mjs ENTRY.js OUT.wasm [--http] [--env] [--fs] [--disable FEATURE,…] [--wit CONTRACT.wit]
 *
 * run from the skill's folder, whose `node_modules` holds the pinned tools
 * (`npm ci`). It
 *
 * 1. bundles ENTRY and every module and npm package it imports into one ES
 *    module with esbuild (componentize-js takes a single file);
 * 2. writes the WIT world to build against: the contract's world `skill`,
 *    plus `wasi:http` (`--http`, needed by `agent-reach-http.js`) and
 *    `wasi:cli/environment` (`--env`, to read granted variables) and
 *    `wasi:filesystem` (`--fs`, to open files in the granted folders) when asked;
 * 3. runs componentize-js, with the WASI features the skill does not use
 *    disabled, and writes OUT.
 *
 * Features (componentize-js's names): `http` is on only with `--http`;
 * `fetch-event` (serving HTTP) is always off; `stdio`, `clocks` and
 * `random` stay on unless listed in `--disable`. Disabling `clocks` freezes
 * `Date.now()` at the build's time and disabling `random` makes
 * `Math.random()` repeat the same numbers: do it only when the skill uses
 * neither.
 *
 * The contract is `--wit`, else `wit/skill.wit` in the current folder, else
 * the Agent Reach repository's `wit/skill.wit` beside this SDK.
 */

import { builtinModules } from "node:module";
import { existsSync } from "node:fs";
import { mkdtemp, readFile, rm, stat, symlink, writeFile, mkdir, copyFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const FEATURES = ["stdio", "random", "clocks", "http", "fetch-event"];
const HTTP_IMPORTS = ["wasi:http/outgoing-handler@0.2.12", "wasi:http/types@0.2.12"];
const ENV_IMPORTS = ["wasi:cli/environment@0.2.12"];
const FS_IMPORTS = ["wasi:filesystem/preopens@0.2.12", "wasi:filesystem/types@0.2.12"];
// The WASI 0.2.12 packages `wasi:http` and `wasi:cli` need, as jco ships them.
const WASI_PACKAGES = ["http", "io", "clocks", "random", "cli", "filesystem", "sockets"];

function usage(message) {
  console.error(`build.mjs: ${message}`);
  console.error("usage: node build.mjs ENTRY.js OUT.wasm [--http] [--env] [--fs] [--disable FEATURE,…] [--wit CONTRACT.wit]");
  process.exit(2);
}

function parseArgs(argv) {
  const options = { http: false, env: false, fs: false, disable: [], wit: undefined, positional: [] };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === "--http") options.http = true;
    else if (arg === "--env") options.env = true;
    else if (arg === "--fs") options.fs = true;
    else if (arg === "--disable") options.disable.push(...(argv[++i] ?? "").split(",").filter(Boolean));
    else if (arg === "--wit") options.wit = argv[++i];
    else if (arg.startsWith("--")) usage(`unknown option ${arg}`);
    else options.positional.push(arg);
  }
  if (options.positional.length !== 2) usage("give the entry module and the output file");
  for (const feature of options.disable) {
    if (!FEATURES.includes(feature)) usage(`--disable ${feature}: the features are ${FEATURES.join(", ")}`);
  }
  if (options.http && options.disable.includes("http")) usage("--http and --disable http contradict each other");
  return options;
}

/** A package's folder in the skill's own node_modules, naming the fix when it is missing. */
function packageDir(name) {
  const dir = resolve("node_modules", name);
  if (!existsSync(join(dir, "package.json"))) {
    console.error(`build.mjs: ${name} is not installed in ${process.cwd()}/node_modules; run \`npm ci\` there first`);
    process.exit(1);
  }
  return dir;
}

/**
 * Import a package from the skill's node_modules. By path, not by name:
 * this script lives outside the skill, and componentize-js exports only an
 * `import` entry, which `require.resolve` cannot see.
 */
async function load(name) {
  const dir = packageDir(name);
  const pkg = JSON.parse(await readFile(join(dir, "package.json"), "utf8"));
  const root = typeof pkg.exports === "object" && pkg.exports !== null && "." in pkg.exports ? pkg.exports["."] : pkg.exports;
  const entry = typeof root === "string" ? root : root?.import ?? root?.default ?? pkg.module ?? pkg.main ?? "index.js";
  return import(pathToFileURL(join(dir, typeof entry === "string" ? entry : entry.default)).href);
}

function contractPath(given) {
  const candidates = given
    ? [resolve(given)]
    : [resolve("wit/skill.wit"), fileURLToPath(new URL("../../wit/skill.wit", import.meta.url))];
  const found = candidates.find((p) => existsSync(p));
  if (!found) usage(`no WIT contract found (looked at ${candidates.join(", ")}); pass --wit path/to/skill.wit`);
  return found;
}

/**
 * Node's own modules do not exist in the sandbox. A `require()` of one is
 * left to fail when it runs (packages guard such calls with try/catch); an
 * `import` of one fails the build here, saying why.
 */
const nodeBuiltins = {
  name: "node-builtins",
  setup(build) {
    const names = new Set(builtinModules.flatMap((m) => [m, `node:${m}`]));
    build.onResolve({ filter: /.*/ }, (args) => {
      if (!names.has(args.path)) return undefined;
      if (args.kind === "require-call") return { path: args.path, external: true };
      return {
        errors: [
          {
            text: `${args.path} is a Node.js module, which a skill does not have: it runs in a WebAssembly sandbox with web APIs (fetch, URL, TextDecoder) and WASI`,
          },
        ],
      };
    });
  },
};

async function main() {
  const options = parseArgs(process.argv.slice(2));
  const [entry, out] = options.positional.map((p) => resolve(p));
  const esbuild = await load("esbuild");
  const { componentize } = await load("@bytecodealliance/componentize-js");

  const work = await mkdtemp(join(tmpdir(), "agent-reach-build-"));
  try {
    const started = Date.now();
    const bundle = join(work, "skill.js");
    await esbuild.build({
      entryPoints: [entry],
      outfile: bundle,
      bundle: true,
      format: "esm",
      // The sandbox offers web APIs, not Node's: prefer packages' browser builds.
      platform: "browser",
      external: ["wasi:*"],
      plugins: [nodeBuiltins],
      logLevel: "warning",
    });

    const imports = [
      ...(options.http ? HTTP_IMPORTS : []),
      ...(options.env ? ENV_IMPORTS : []),
      ...(options.fs ? FS_IMPORTS : []),
    ];
    const witDir = join(work, "wit");
    await mkdir(witDir);
    const contract = contractPath(options.wit);
    await copyFile(contract, join(witDir, "skill.wit"));
    let world = "skill";
    if (imports.length > 0) {
      const text = await readFile(contract, "utf8");
      const pkg = /^\s*package\s+([^;]+);/m.exec(text)?.[1];
      if (!pkg) usage(`${contract} has no package line`);
      world = "skill-build";
      await writeFile(
        join(witDir, "build.wit"),
        `package ${pkg};\n\n/// The contract's world plus the WASI interfaces this skill imports itself.\nworld ${world} {\n  include skill;\n${imports.map((i) => `  import ${i};\n`).join("")}}\n`,
      );
      const jco = packageDir("@bytecodealliance/jco");
      const builtin = join(jco, "lib", "wit", "builtin", "0.2.12");
      await mkdir(join(witDir, "deps"));
      for (const name of WASI_PACKAGES) {
        await symlink(join(builtin, `wasi-${name}`), join(witDir, "deps", name));
      }
    }

    const disableFeatures = [...new Set(["fetch-event", ...(options.http ? [] : ["http"]), ...options.disable])];
    const { component } = await componentize({ sourcePath: bundle, witPath: witDir, worldName: world, disableFeatures });
    await mkdir(dirname(out), { recursive: true });
    await writeFile(out, component);
    const size = (await stat(out)).size;
    console.error(
      `build.mjs: wrote ${out} (${(size / 1048576).toFixed(1)} MiB) in ${((Date.now() - started) / 1000).toFixed(1)} s; ` +
        `world ${world}, disabled: ${disableFeatures.join(", ")}`,
    );
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(`build.mjs: ${err?.stack ?? err}`);
  process.exit(1);
});
