//! The component tests, one binary (wasmtime is linked once): real skill
//! components in the real sandbox, with scripted models and web servers on
//! 127.0.0.1 from `agent-reach-tests`. One module per area; run one area
//! with `cargo test --test all AREA::`.
//!
//! The real-model tests (`e2e_real_model`) are ignored unless asked for:
//! `just e2e`, `just e2e-memory`, `just e2e-agents`.

// Agent Skills bundles' JavaScript scripts in the sandboxed runner, with the bundle's grants.
mod bundle_js_scripts;
// Agent Skills bundles' Python scripts in the sandboxed runner, with the bundle's grants.
mod bundle_scripts;
// Compaction of long runs: summaries, the kept turns, the goal anchor.
mod compaction;
// The confirmation gate: levels naming no tool fail to load; prompts cannot be forged.
mod confirmation_gate;
// Credentials added at egress: the server sees them, the skill and the model never do.
mod credentials;
// Skills disclosed on demand or chosen from the task, and what each request offers.
mod disclosure;
// A real model on real tasks (ignored without `--ignored`; the `e2e` recipes).
mod e2e_real_model;
// The embedding API as an embedder uses it: builder, own `Model`, events.
mod embedding;
// Environment isolation, resource limits and crash containment.
mod env_and_limits;
// The evaluation runner: case files, scripted trajectories, every reported figure.
mod eval_runner;
// Filesystem grants enforced by the runtime, and what the `files` skill shows a model.
mod files_sandbox;
// The agent loop end to end: calls, results, refusals, stops, the audit log.
mod harness_loop;
// Journaled writes: failed calls rolled back in the real sandbox, undo, the budget.
mod journal_rollback;
// The `logs` skill on generated logs with known counts.
mod logs_skill;
// Long-term memory across runs on a real SQLite file.
mod memory_runs;
// The network allowlist and the SSRF guard.
mod net_sandbox;
// Skills in Python and JavaScript: the same sandbox, limits and crashes; data and feeds.
mod other_languages;
// Orchestration: a supervisor, its workers and the reviewer.
mod orchestration;
// Loading skills from a folder, versions, broken files, the checks before a call.
mod registry_and_checks;
// Hot reload: skills replaced under a running call, broken files and tables, the watcher.
mod reload;
// Record and replay: offline replays, divergences after upgrades and table changes.
mod replay_runs;
// A skill's name bound to its file and digest, so it cannot take another's grants.
mod skill_identity;
// The `web` skill against fixture pages: Markdown, charsets, caps, redirects.
mod web_skill;
