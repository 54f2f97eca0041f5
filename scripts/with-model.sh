#!/usr/bin/env bash
# Run a command with a model to talk to: REACH_E2E_BASE_URL (with
# REACH_E2E_MODEL and OPENAI_API_KEY if that endpoint needs them) when set,
# else the local model (scripts/local-model.sh), started if it is not running
# and stopped again afterwards; one already running is left running. The
# command sees OPENAI_BASE_URL and REACH_MODEL (and REACH_E2E_BASE_URL,
# REACH_E2E_MODEL for the real-model test).
#
#   scripts/with-model.sh COMMAND [ARGS…]
set -euo pipefail
cd "$(dirname "$0")/.."
if [[ -n "${REACH_E2E_BASE_URL:-}" ]]; then
    export OPENAI_BASE_URL="$REACH_E2E_BASE_URL"
    if [[ -n "${REACH_E2E_MODEL:-}" ]]; then export REACH_MODEL="$REACH_E2E_MODEL"; fi
else
    if ! scripts/local-model.sh status >/dev/null 2>&1; then trap 'scripts/local-model.sh stop' EXIT; fi
    eval "$(scripts/local-model.sh start)"
    export REACH_E2E_BASE_URL="$OPENAI_BASE_URL" REACH_E2E_MODEL="$REACH_MODEL"
fi
"$@"
