#!/bin/sh
# Builds the Python script runner into a component: ./build.sh OUT.wasm (default: python.wasm).
# `just skills` installs it as skills/runners/python.wasm.
#
# Needs componentize-py 0.25.1 (pip install componentize-py==0.25.1); set
# COMPONENTIZE_PY to use one that is not on PATH. The SDK is used from this
# repository (`sdk/python`), with the WIT it carries; nothing is downloaded.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
sdk="$here/../../../sdk/python"
out=${1:-python.wasm}
exec "${COMPONENTIZE_PY:-componentize-py}" -d "$sdk/wit/skill.wit" -w skill componentize app \
    -p "$here" -p "$sdk" -o "$out"
