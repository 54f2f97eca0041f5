#!/usr/bin/env bash
# The main job: a real agent run on this machine. Serves a sample article
# on 127.0.0.1:8766, makes sure a model is reachable (the local one unless
# OPENAI_BASE_URL, --provider anthropic or [model] says otherwise), and asks
# the agent to save the article as Markdown with the `web` skill under the
# sample reach.toml. Run it through `just demo`, which builds the skills first.
set -euo pipefail
cd "$(dirname "$0")/.."

PORT="${REACH_DEMO_PORT:-8766}"
TASK="Save the web page http://127.0.0.1:${PORT}/article.html as Markdown."

if [[ -z "${OPENAI_BASE_URL:-}" && -z "${OPENAI_API_KEY:-}" && -z "${ANTHROPIC_API_KEY:-}" ]]; then
    echo "no model configured: starting the local one (the first time builds it, ~6 min)" >&2
    eval "$(scripts/local-model.sh start)"
    STARTED_MODEL=1
fi

# The sample article, served the way a real site would be.
python3 -m http.server "$PORT" --bind 127.0.0.1 --directory tests/fixtures/web >/dev/null 2>&1 &
SERVER=$!
finish() {
    kill "$SERVER" 2>/dev/null || true
    # The model is left running for more tasks: say how to use it and end it.
    if [[ -n "${STARTED_MODEL:-}" ]]; then
        echo "the local model keeps serving: export OPENAI_BASE_URL=$OPENAI_BASE_URL to use it with reach run; just local-model-stop ends it" >&2
    fi
}
trap finish EXIT
for _ in $(seq 50); do
    curl -sf -o /dev/null "http://127.0.0.1:${PORT}/article.html" && break
    sleep 0.1
done

echo "task: $TASK" >&2
cargo run -q -p agent-reach --bin reach -- run "$TASK" --yes
