//! The `reach` binary and the library's clients, one test binary: the CLI
//! run as a process, `reach mcp` driven by independent MCP clients, and the
//! model clients against scripted servers on 127.0.0.1. One module per area;
//! run one area with `cargo test -p agent-reach --test all AREA::`. The
//! components in the sandbox are tested in `tests/` (`agent-reach-tests`).

// `reach agents list`: the workers a table defines and what each can reach.
mod agents_cli;
// Agent Skills bundles: our SKILL.md loader against the format's reference validator.
mod bundles;
// The `reach` binary: exit codes, JSON output, configuration errors, pins, credentials.
mod cli;
// `kill -9` mid-call and mid-transaction: the next start finds everything whole.
mod crash;
// A full disk under the runs folder and the memory database (a small tmpfs).
mod disk_full;
// `reach eval`: the summary, `--json`, gates and exit codes, baselines, the HTML report.
mod eval_cli;
// Faults at volume: a skill misbehaving a thousand times against one `reach mcp`.
mod faults;
// `reach mcp` as the official Python SDK and the Inspector see it (stdio and HTTP).
mod mcp_clients;
// The official MCP conformance suite against `reach mcp --http`.
mod mcp_conformance;
// `reach mcp --http` against hand-written requests: origins, tokens, sessions.
mod mcp_http;
// The shipped many-instances configuration: two `reach mcp --http` behind HAProxy, memory on PostgreSQL.
mod many_instances;
// `reach mcp`'s messages fuzzed against the running server.
mod mcp_fuzz;
// `reach mcp` on stdio: cancellation, the audit log, a table that changes.
mod mcp_stdio;
// `reach memory …` on real database files.
mod memory_cli;
// Two hosts sharing memory on a real PostgreSQL server (a throwaway cluster on 127.0.0.1).
mod memory_postgres;
// `reach skill publish/add/sign/update` against a real OCI registry on 127.0.0.1.
mod oci_cli;
// Our cosign signatures against the Sigstore project's cosign client, both ways.
mod oci_cosign;
// `reach run` when the model server dies, cuts off, answers garbage, stalls or refuses.
mod model_faults;
// The OpenAI and Anthropic clients over the wire: requests, replies, retries, failures.
mod model_clients;
// What skills request against what the table grants: inspect, check, suggest, upgrades.
mod requests_cli;
// `reach runs show` and `reach runs list` on the log of a run that delegated.
mod runs_tree;
// `reach runs verify` and `reach runs pubkey` on the logs `reach call` and `reach run` write.
mod runs_verify;
// `reach runs diff`, `undo` and `replay` on a run that wrote a file.
mod runs_undo_replay;
// `reach skill new`: the folder builds outside the repository and its test calls it.
mod skill_new;
// What the modules share: a scripted model server, the MCP workspace and clients.
mod support;
