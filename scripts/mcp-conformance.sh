#!/usr/bin/env bash
# The official MCP conformance suite's server scenarios against `reach mcp
# --http`, serving the files skill from a sample workspace. Scenarios listed
# in tests/mcp/conformance-expected-failures.yml are expected to fail (each
# with its reason there); the suite exits non-zero on any other failure, and
# on a listed scenario that now passes, so the list stays true.
#
#   scripts/mcp-conformance.sh [REACH_BINARY]     (default: $CARGO_TARGET_DIR/debug/reach)
#
# Needs `just test-skills` (the files skill) and scripts/mcp-clients.sh install.
# Each scenario's checks.json is kept in target/mcp-conformance/.
#
# The server asks every request for its bearer token (the one it keeps in
# .reach/mcp-token); the suite has no option for one, so
# tests/mcp/conformance-auth.mjs, preloaded into it, adds the header to its
# requests to the server.
set -euo pipefail
cd "$(dirname "$0")/.."
root="$PWD"
scripts/mcp-clients.sh check
eval "$(scripts/mcp-clients.sh paths)"

target="${CARGO_TARGET_DIR:-$root/target}"
reach="$(realpath "${1:-$target/debug/reach}")"
[[ -x "$reach" ]] || { echo "mcp-conformance: no reach binary at $reach (cargo build -p agent-reach --bin reach)" >&2; exit 1; }
files_wasm="$target/wasm32-wasip2/release/skill_files.wasm"
[[ -f "$files_wasm" ]] || { echo "mcp-conformance: $files_wasm is missing: run just test-skills" >&2; exit 1; }

work="$(mktemp -d)"
server=""
cleanup() {
    if [[ -n "$server" ]]; then
        kill "$server" 2>/dev/null || true
        wait "$server" 2>/dev/null || true
    fi
    rm -rf "$work"
}
trap cleanup EXIT

mkdir -p "$work/skills" "$work/docs" "$work/notes"
cp "$files_wasm" "$work/skills/files.wasm"
printf 'alpha\nbeta\n' >"$work/docs/a.txt"
cat >"$work/reach.toml" <<'EOF'
[skills.files]
level = "auto"
read = ["./docs"]
write = ["./notes"]
[skills.files.tools.write]
level = "confirm"
EOF

(cd "$work" && exec env -u REACH_MCP_TOKEN -u REACH_POLICY -u REACH_SKILLS REACH_CACHE_DIR="$target/test-compile-cache" \
    "$reach" mcp --http 127.0.0.1:0 2>"$work/server.log") &
server=$!
url=""
for _ in $(seq 600); do
    url="$(sed -n 's/^reach mcp: serving \(http:[^ ]*\)$/\1/p' "$work/server.log" | head -n1)"
    [[ -n "$url" ]] && break
    kill -0 "$server" 2>/dev/null || break
    sleep 0.1
done
if [[ -z "$url" ]]; then
    echo "mcp-conformance: reach mcp --http did not start; its stderr:" >&2
    cat "$work/server.log" >&2
    exit 1
fi

token_file="$work/.reach/mcp-token"
[[ -s "$token_file" ]] || { echo "mcp-conformance: the server made no token in $token_file; its stderr:" >&2; cat "$work/server.log" >&2; exit 1; }

out="$target/mcp-conformance"
rm -rf "$out"
mkdir -p "$out"
echo "mcp-conformance: conformance $("$NODE22" "$CONFORMANCE" --version) against $url" >&2
status=0
CONFORMANCE_SERVER_URL="$url" CONFORMANCE_TOKEN="$(cat "$token_file")" \
    "$NODE22" --import "$root/tests/mcp/conformance-auth.mjs" "$CONFORMANCE" server --url "$url" --output-dir "$out" \
    --expected-failures "$root/tests/mcp/conformance-expected-failures.yml" || status=$?
cp "$work/server.log" "$out/server.log"
exit "$status"
