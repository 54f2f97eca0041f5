#!/bin/sh
# Builds the misbehave_py test skill: `./build.sh OUT.wasm`. Needs componentize-py
# 0.25.1 on PATH (`pip install componentize-py==0.25.1`, or scripts/guest-toolchains.sh
# install in this repository). The SDK is used from sdk/python, the contract from its wit/.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
sdk="$here/../../../sdk/python"
out=${1:-"$here/misbehave_py.wasm"}
case "$out" in /*) ;; *) out="$PWD/$out" ;; esac
cd "$here"
componentize-py -d "$sdk/wit/skill.wit" -w agent-reach:python-sdk/skill componentize -p "$here" -p "$sdk" app -o "$out" >/dev/null
echo "built $out"
