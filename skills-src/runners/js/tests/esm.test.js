// The import rewriting, under plain Node.js: `node --test skills-src/runners/js/tests/`.
import assert from "node:assert/strict";
import { test } from "node:test";
import { commonjs } from "../src/esm.js";

test("every static import form becomes a require", () => {
  const source = [
    'import fs from "node:fs";',
    "import * as path from 'path';",
    'import { readFileSync, writeFileSync as write } from "fs";',
    'import util, { describe } from "./lib/stats.js";',
    'import "./side-effect.js";',
    "export function main() {}",
    "export default class Report {}",
    "const x = 1; // import nothing from here",
  ].join("\n");
  assert.equal(
    commonjs(source),
    [
      'const fs = __default(require("node:fs"));',
      "const path = require('path');",
      'const { readFileSync, writeFileSync: write } = require("fs");',
      'const util = __default(require("./lib/stats.js")), { describe } = require("./lib/stats.js");',
      'require("./side-effect.js");',
      "function main() {}",
      "class Report {}",
      "const x = 1; // import nothing from here",
    ].join("\n"),
  );
});

test("a dynamic import and text mentioning import are left alone", () => {
  const source = 'const m = await import("./x.js");\nconsole.log("import x from y");';
  assert.equal(commonjs(source), source);
});
