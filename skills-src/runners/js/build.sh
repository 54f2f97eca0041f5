#!/usr/bin/env bash
# Build the JavaScript script runner: ./build.sh OUT.wasm (OUT relative to where it is run).
# `just skills` installs it as skills/runners/js.wasm. Installs the pinned tools with
# `npm ci` when node_modules is missing; nothing is downloaded at run time.
set -euo pipefail
[[ $# -eq 1 ]] || { echo "usage: $0 OUT.wasm" >&2; exit 2; }
out=$(realpath -m -- "$1")
cd "$(dirname -- "${BASH_SOURCE[0]}")"
[[ -d node_modules ]] || npm ci --no-audit --no-fund --loglevel=error
# wasi:http for fetch, wasi:cli/environment for process.env and the working
# directory, wasi:filesystem for fs: each reaches only what the table grants.
exec node ../../../sdk/js/build.mjs src/main.js "$out" --http --env --fs
