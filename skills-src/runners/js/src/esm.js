// ES module syntax a script may use, turned into the CommonJS the runner evaluates.
// No imports: the tests run it under plain Node.js.

/**
 * Static ES module imports as `require` calls (line by line, at the start of
 * a line): `import x from "m"`, `import * as x from "m"`, `import {a, b as c}
 * from "m"`, `import x, {a} from "m"`, `import "m"`. `export` in front of a
 * declaration is dropped (a script exports to nobody).
 */
export function commonjs(source) {
  const names = (list) => list.replace(/\s+as\s+/g, ": ");
  return source
    .replace(/^\s*import\s+([\w$]+)\s*,\s*\{([^}]*)\}\s*from\s*(["'][^"']+["'])\s*;?/gm, (_, d, list, m) =>
      `const ${d} = __default(require(${m})), {${names(list)}} = require(${m});`)
    .replace(/^\s*import\s+\*\s+as\s+([\w$]+)\s+from\s*(["'][^"']+["'])\s*;?/gm, (_, n, m) => `const ${n} = require(${m});`)
    .replace(/^\s*import\s+\{([^}]*)\}\s*from\s*(["'][^"']+["'])\s*;?/gm, (_, list, m) => `const {${names(list)}} = require(${m});`)
    .replace(/^\s*import\s+([\w$]+)\s+from\s*(["'][^"']+["'])\s*;?/gm, (_, n, m) => `const ${n} = __default(require(${m}));`)
    .replace(/^\s*import\s*(["'][^"']+["'])\s*;?/gm, (_, m) => `require(${m});`)
    .replace(/^(\s*)export\s+(default\s+)?(?=(async\s+)?(function|class|const|let|var)\b)/gm, "$1");
}

