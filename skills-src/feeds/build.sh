#!/usr/bin/env bash
# Build the feeds skill: ./build.sh OUT.wasm (OUT relative to where it is run).
# Installs the pinned tools with `npm ci` when node_modules is missing, then
# bundles src/ and sax with esbuild and runs componentize-js (sdk/js/build.mjs).
set -euo pipefail
[[ $# -eq 1 ]] || { echo "usage: $0 OUT.wasm" >&2; exit 2; }
out=$(realpath -m -- "$1")
cd "$(dirname -- "${BASH_SOURCE[0]}")"
[[ -d node_modules ]] || npm ci --no-audit --no-fund --loglevel=error
# wasi:http for fetch; no stdio or randomness needed.
exec node ../../sdk/js/build.mjs src/main.js "$out" --http --disable stdio,random
