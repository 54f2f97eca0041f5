#!/usr/bin/env bash
# The toolchains that build the skills written in Python and JavaScript
# (skills-src/data, skills-src/feeds, tests/skills-py, tests/skills-js):
# componentize-py (and skills-ref, the Agent Skills reference validator the tests
# compare our SKILL.md loader with) from PyPI in a venv, pinned and cached outside the work tree
# so a fresh clone or `cargo clean` keeps it. The JavaScript tools (jco,
# ComponentizeJS, esbuild) are each skill's own pinned devDependencies
# (package-lock.json), installed by its build.sh with `npm ci`; this script
# only checks that Node.js and npm are there.
#
#   scripts/guest-toolchains.sh install   install what is missing (safe to run again)
#   scripts/guest-toolchains.sh check     exit 1, naming what is missing, unless all is there
#   scripts/guest-toolchains.sh bin       print the folder holding componentize-py (for PATH)
#
# Environment:
#   XDG_CACHE_HOME   cache root [~/.cache]; the venv is agent-reach/guest-py under it
#   PYTHON           Python used to create the venv [python3]
set -euo pipefail

COMPONENTIZE_PY_VERSION=0.25.1
# The Agent Skills reference validator: host/tests/all/bundles.rs checks that our SKILL.md loader
# and it agree on a corpus of bundles.
SKILLS_REF_VERSION=0.1.1

CACHE="${XDG_CACHE_HOME:-$HOME/.cache}/agent-reach"
VENV="$CACHE/guest-py"
BIN="$VENV/bin"

die() { echo "guest-toolchains: $*" >&2; exit 1; }

python_ok() {
    [[ -x "$BIN/componentize-py" ]] \
        && [[ "$("$BIN/python" -c 'import importlib.metadata as m; print(m.version("componentize-py"), m.version("skills-ref"))' 2>/dev/null)" == "$COMPONENTIZE_PY_VERSION $SKILLS_REF_VERSION" ]]
}

node_ok() {
    command -v node >/dev/null 2>&1 && command -v npm >/dev/null 2>&1
}

install() {
    mkdir -p "$CACHE"
    if ! python_ok; then
        [[ -x "$BIN/python" ]] || "${PYTHON:-python3}" -m venv "$VENV" \
            || die "could not create a venv at $VENV (on Debian: apt-get install python3-venv)"
        echo "guest-toolchains: installing componentize-py==$COMPONENTIZE_PY_VERSION and skills-ref==$SKILLS_REF_VERSION into $VENV" >&2
        "$BIN/python" -m pip install --disable-pip-version-check --quiet \
            "componentize-py==$COMPONENTIZE_PY_VERSION" "skills-ref==$SKILLS_REF_VERSION" \
            || die "pip could not install componentize-py==$COMPONENTIZE_PY_VERSION skills-ref==$SKILLS_REF_VERSION (is PyPI reachable?)"
    fi
    node_ok || die "Node.js and npm are missing (Node.js 20 or later: apt-get install nodejs npm)"
}

check() {
    local missing=()
    python_ok || missing+=("componentize-py $COMPONENTIZE_PY_VERSION and skills-ref $SKILLS_REF_VERSION (in $VENV)")
    node_ok || missing+=("Node.js and npm")
    if ((${#missing[@]})); then
        printf 'guest-toolchains: missing %s\n' "${missing[@]}" >&2
        echo "guest-toolchains: install them with: scripts/guest-toolchains.sh install" >&2
        exit 1
    fi
}

case "${1:-}" in
    install) install ;;
    check) check ;;
    bin) echo "$BIN" ;;
    *) echo "usage: $0 install|check|bin" >&2; exit 2 ;;
esac
