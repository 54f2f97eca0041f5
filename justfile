# Agent Reach — the front door. `just --list` shows every recipe.

wasm_target := "wasm32-wasip2"
release := env_var_or_default("CARGO_TARGET_DIR", "target") + "/" + wasm_target + "/release"

# The guests, by crate: the one list `skills`, `test-skills` and `lint` build, and the one the
# tests' guest constants are generated from (tests/build.rs reads these two lines). A new skill
# is added here: `skill-NAME` is installed as NAME.wasm, `test-skill-NAME` is built for the tests.
bundled_skills := "skill-files skill-web skill-logs skill-http-api"
test_only_skills := "test-skill-echo test-skill-misbehave test-skill-probe"
# Guests in Python and JavaScript, named the same way: each is built by the `build.sh OUT` in
# its folder (`skills-src/NAME`, `tests/skills/NAME`) with scripts/guest-toolchains.sh's tools.
bundled_interpreted_skills := "skill-data skill-feeds"
test_only_interpreted_skills := "test-skill-misbehave-py test-skill-misbehave-js"
# Interpreters that run Agent Skills bundles' scripts in the sandbox: `runner-NAME` is built from
# skills-src/runners/NAME and installed as skills/runners/NAME.wasm (never offered as a skill).
runners := "runner-python runner-js"
# Agent Skills bundles (`skills-src/bundles/NAME/SKILL.md`), copied into skills/NAME by `just skills`.
bundles := "incident-triage release-notes"

# The main job: build the skills, bring up a model (the local one unless one is configured),
# serve a sample article on 127.0.0.1 and have the agent save it as Markdown with the web skill.
demo: skills
    cargo run -q -p agent-reach --bin reach -- skills list
    scripts/agent-demo.sh

# Without a model: list the skills and call some directly under the sample reach.toml.
demo-calls: skills
    cargo run -q -p agent-reach --bin reach -- skills list
    cargo run -q -p agent-reach --bin reach -- call files.search '{"path": "wit", "pattern": "record"}'
    cargo run -q -p agent-reach --bin reach -- call files.write '{"path": "notes/hello.md", "content": "# Hello from a sandboxed skill\n"}' --yes
    cargo run -q -p agent-reach --bin reach -- call files.write '{"path": "README.md", "content": "overwritten?"}' --yes || true

# Build the bundled skills into ./skills.
skills: (interpreted-skills bundled_interpreted_skills + " " + runners)
    cargo build --release --target {{wasm_target}} {{prepend("-p ", bundled_skills)}}
    mkdir -p skills/runners
    for krate in {{bundled_skills}} {{bundled_interpreted_skills}}; do \
        cp "{{release}}/$(echo "$krate" | tr - _).wasm" "skills/$(echo "${krate#skill-}" | tr - _).wasm"; \
    done
    for krate in {{runners}}; do \
        cp "{{release}}/$(echo "$krate" | tr - _).wasm" "skills/runners/${krate#runner-}.wasm"; \
    done
    for bundle in {{bundles}}; do \
        rm -rf "skills/$bundle" && cp -R "skills-src/bundles/$bundle" "skills/$bundle"; \
    done

# Build every skill component the tests run (bundled and test-only).
test-skills: (interpreted-skills bundled_interpreted_skills + " " + test_only_interpreted_skills + " " + runners)
    cargo build --release --target {{wasm_target}} {{prepend("-p ", bundled_skills + " " + test_only_skills)}}

# Build the listed Python and JavaScript guests into the folder the Rust ones go to; one whose
# output is newer than its folder and its SDK is left as it is.
interpreted-skills guests:
    #!/usr/bin/env bash
    set -euo pipefail
    scripts/guest-toolchains.sh check
    export PATH="$(scripts/guest-toolchains.sh bin):$PATH"
    mkdir -p "{{release}}"
    for krate in {{guests}}; do
        case "$krate" in
            test-skill-*) dir="tests/skills/${krate#test-skill-}" ;;
            runner-*) dir="skills-src/runners/${krate#runner-}" ;;
            *) dir="skills-src/${krate#skill-}" ;;
        esac
        if [[ -f "$dir/package.json" ]]; then sdk=sdk/js; else sdk=sdk/python; fi
        out="{{release}}/$(echo "$krate" | tr - _).wasm"
        if [[ -f "$out" && -z "$(find "$dir" "$sdk" -newer "$out" -not -path '*/node_modules*' -not -path '*/__pycache__*' -print -quit)" ]]; then
            continue
        fi
        echo "building $krate from $dir" >&2
        "$dir/build.sh" "$out"
    done

# Run all tests: real components in the real sandbox, then one task with a real model
# (the first run on a machine builds and fetches the local model: ~6 min, then cached).
test: test-skills suite eval-replay e2e

# The suite without the real model: unit and integration tests (~10 min from scratch).
# The book is built first, so that `cargo test` checks it as built (tests/tests/docs_book.rs).
suite: fmt test-skills mcp-clients doc book guest-sdks
    cargo test

# The Python and JavaScript SDKs' own unit tests (plain CPython and Node.js, no component).
guest-sdks:
    python3 -m unittest discover -q -s sdk/python/tests
    cd skills-src/data && PYTHONPATH=../../sdk/python:. python3 -m unittest discover -q -s tests
    node --test sdk/js/tests/ skills-src/feeds/tests/ skills-src/runners/js/tests/

# Pinned, in ~/.cache/agent-reach: fetched once, then a no-op.
# Install the MCP clients the `reach mcp` tests drive (Python SDK, Inspector, conformance suite).
mcp-clients:
    scripts/mcp-clients.sh install

# Scenarios that cannot apply are listed, with reasons, in tests/mcp/conformance-expected-failures.yml.
# The official MCP conformance suite against `reach mcp --http` (~3 s; also in `just suite`).
mcp-conformance: test-skills mcp-clients
    cargo build -q -p agent-reach --bin reach
    scripts/mcp-conformance.sh

# Cargo.lock against the known-bad version ranges in tests/advisories.toml (offline; also in `just suite`).
advisories:
    cargo test -p agent-reach-tests --test advisories

# Formatting as rustfmt.toml sets it (in `just lint` and `just suite`); `cargo fmt --all` fixes it.
fmt:
    cargo fmt --all --check

# Lints for host and guests.
lint: fmt
    cargo clippy --all-targets -- -D warnings
    cargo clippy --release --target {{wasm_target}} -p agent-reach-sdk {{prepend("-p ", bundled_skills + " " + test_only_skills)}} -- -D warnings

# The library's docs as CI checks them (in `just suite`): every public item documented, no rustdoc warning.
doc:
    RUSTDOCFLAGS="-D warnings" cargo doc -p agent-reach --lib --no-deps

# The book (docs/) built with mdBook into docs/book; `.ci/setup` installs the pinned mdBook.
book:
    @command -v mdbook >/dev/null || { echo "mdbook is missing: .ci/setup installs it" >&2; exit 1; }
    mdbook build docs

# The book built and checked: links and anchors resolve, every `reach` command it shows exists
# with its flags (tests/tests/docs_book.rs, against the `reach` binary; also in `just suite`).
docs: book
    cargo build -q --bin reach
    cargo test -q --test docs_book

# The library's public items counted from rustdoc JSON (nightly); flags go to cargo rustdoc.
public-items *flags:
    scripts/public-items.py {{flags}}

# Fuzz every parser that takes outside input for SECONDS each (default 120): the table, eval
# case lines, the model's text calls, memory imports, a component's describe output, SKILL.md,
# OCI references, and `reach mcp`'s messages against the running server; prints the cases run
# per target (host/src/fuzz.rs, host/tests/all/mcp_fuzz.rs; `cargo test` runs one batch each).
fuzz seconds="120": test-skills
    REACH_FUZZ_SECONDS={{seconds}} cargo test -q -p agent-reach --lib fuzz:: -- --test-threads 1 --nocapture
    REACH_FUZZ_SECONDS={{seconds}} cargo test -q -p agent-reach --test all mcp_fuzz -- --nocapture

# Figures, not tests (none is in `just test`): the release `reach mcp --http` driven by
# host/examples/load.rs over HTTP; the book's Reliability chapter quotes them ("Load and soak").
# 1, 8 and 64 clients calling `echo`, then `files.read`, for SECONDS each: calls/s, p50/p99/max, errors.
load SECONDS="60": test-skills
    cargo build --release -p agent-reach --bin reach
    cargo run -q --release -p agent-reach --example load -- load --seconds {{SECONDS}}

# 100 calls/s for MINUTES: the server's memory, descriptors, threads and audit folder every 5 s.
soak MINUTES="10": test-skills
    cargo build --release -p agent-reach --bin reach
    cargo run -q --release -p agent-reach --example load -- soak --minutes {{MINUTES}}

# HAProxy (`apt-get install haproxy`) runs deploy/many-instances/haproxy.cfg as shipped, ports aside.
# Two instances behind HAProxy under load for SECONDS: a confirmation across them, one killed midway.
load-balanced SECONDS="60": test-skills
    cargo build --release -p agent-reach --bin reach
    cargo run -q --release -p agent-reach --example load -- balanced --seconds {{SECONDS}}

# Benchmarks (figures in the book's Performance chapter).
bench: test-skills
    cargo bench -p agent-reach

# What CI runs.
ci: test

# Serve a real model offline at http://127.0.0.1:8691/v1 (first run builds it: ~6 min; see scripts/LOCAL-MODEL-RECIPE.md).
local-model:
    scripts/local-model.sh start

# Stop the local model server.
local-model-stop:
    scripts/local-model.sh stop

# The eval cases CI runs with the local model: one each from files, web, logs, http_api, boundary.
# A gate detects regressions only on cases the model passes: per domain, the first case that
# passed 3 runs of 3 in the pass^3 of the whole set (docs/src/evaluation); logs has none yet, so its case
# cannot gate and is there to show when a change fixes it.
ci_cases := "files-search-config-key,web-save-article,logs-top-5xx-endpoint,api-order-tracking,boundary-write-readonly-folder"
# CI fails below this completion on those cases (percent): 2 of 5. The four gating cases pass
# most runs, not all (files-search-config-key: 3 of 3 in the pass^3, then failed once), so
# two unlucky runs at once must not fail CI; a broken harness fails them all.
ci_min_completion := "40"

# With the local model (or REACH_E2E_BASE_URL if set); a local server this recipe starts, it
# stops; one already running is left running.
# Real-model checks (part of `just test`): one task end to end, then the eval's CI subset, gated.
e2e: skills test-skills
    # The whole workspace's feature set, as `just suite` builds it (with -p the
    # dependencies would be built again), and built before the model is up.
    cargo test --test all --no-run
    cargo build -q -p agent-reach --bin reach
    scripts/with-model.sh just _e2e-with-model

_e2e-with-model:
    cargo test --test all -- --ignored --nocapture --exact e2e_real_model::a_real_model_saves_a_page_as_markdown
    cargo run -q -p agent-reach --bin reach -- eval evals --only {{ci_cases}} --min-completion {{ci_min_completion}}

# Long-term memory with the real model (not in CI): a preference stated in one
# run is kept, and applied by the next run.
e2e-memory: skills test-skills
    cargo test --test all --no-run
    scripts/with-model.sh cargo test --test all -- --ignored --nocapture --exact e2e_real_model::a_real_model_applies_a_preference_remembered_in_an_earlier_run

# Orchestration with the real model (not in CI): a supervisor has a web worker
# save a page and a files worker report its headings.
e2e-agents: skills test-skills
    cargo test --test all --no-run
    scripts/with-model.sh cargo test --test all -- --ignored --nocapture --exact e2e_real_model::a_real_supervisor_has_a_web_worker_save_a_page_and_a_files_worker_report_its_headings

# A table on the terminal, the HTML report in .reach/eval.html. Extra arguments go to
# `reach eval`, e.g. `just eval --repeat 3` or `just eval --only web`.
# The whole shipped eval set with the local model (or REACH_E2E_BASE_URL).
eval *ARGS: skills
    cargo build -q -p agent-reach --bin reach
    scripts/with-model.sh cargo run -q -p agent-reach --bin reach -- eval evals --html .reach/eval.html {{ARGS}}

# The CI subset played back from runs the local model recorded (evals/recorded): no model, the
# same replies, scored under the current harness and skills; a case that passed there and fails
# now is a regression (the baseline), so a harness change that breaks a real trajectory fails.
eval-replay: skills
    cargo build -q -p agent-reach --bin reach
    cargo run -q -p agent-reach --bin reach -- eval evals --only {{ci_cases}} --replay evals/recorded --baseline evals/recorded/baseline.json

# Record evals/recorded again with the local model (after a change to those cases, their
# fixtures or skills makes the recorded replies stale), and its baseline from a replay of it.
eval-record: skills
    cargo build -q -p agent-reach --bin reach
    rm -rf evals/recorded .reach/eval-record
    scripts/with-model.sh cargo run -q -p agent-reach --bin reach -- eval evals --only {{ci_cases}} --record .reach/eval-record
    mkdir -p evals/recorded
    cp .reach/eval-record/*.jsonl .reach/eval-record/*.case.json evals/recorded/
    cp -R .reach/eval-record/recordings evals/recorded/
    cargo run -q -p agent-reach --bin reach -- eval evals --only {{ci_cases}} --replay evals/recorded --save-baseline evals/recorded/baseline.json

# Just the CI subset of the eval set, gated as in CI.
eval-ci: skills
    cargo build -q -p agent-reach --bin reach
    scripts/with-model.sh cargo run -q -p agent-reach --bin reach -- eval evals --only {{ci_cases}} --min-completion {{ci_min_completion}}
