//! Load and soak figures for `reach mcp --http` (not a test: it prints figures, and the book's
//! Reliability chapter quotes them). It starts the real `reach` binary (release build) in a
//! temporary folder with the `echo` test skill and the `files` skill, whose table grants
//! `files.read` on a folder holding one 224-byte file, and calls them over HTTP the way an MCP
//! client does.
//!
//!     just load 60             # load --seconds 60
//!     just soak 10             # soak --minutes 10
//!     just load-balanced 60    # balanced --seconds 60
//!
//! or by hand, after `just test-skills` and `cargo build --release -p agent-reach`:
//!
//!     cargo run --release -p agent-reach --example load -- load --seconds 5 --clients 8
//!
//! Subcommands:
//!
//! - `load [--seconds 60] [--clients 1,8,64] [--tools echo,files.read]`: for each tool and
//!   client count, that many clients each calling in a loop for the duration (closed loop:
//!   a client sends its next call when the last is answered).
//! - `soak [--minutes 10] [--rate 100] [--samples FILE]`: a steady rate spread over four
//!   clients, mixing `echo` and `files.read`, while the server's resident memory (VmRSS), open
//!   file descriptors, threads and audit folder (`--runs-dir`) are sampled every 5 s.
//! - `balanced [--seconds 60] [--clients 8]`: two instances sharing `REACH_MCP_TOKEN`,
//!   `REACH_MCP_STATE_KEY` and `REACH_MCP_APPROVALS` behind HAProxy, configured from
//!   `deploy/many-instances/haproxy.cfg`; a confirmation asked at one instance is answered at
//!   the other under load, and at half-time the first is killed with SIGKILL.
//!
//! Every subcommand takes `--reach PATH` (default: `reach` beside this example's folder, i.e.
//! `target/release/reach`) and `--json`. Progress goes to stderr; the report to stdout, as
//! Markdown tables, or with `--json` as one JSON object whose shape is [`report::LoadReport`],
//! [`report::SoakReport`] or [`report::BalancedReport`] (field names are stable; times in
//! milliseconds, memory in KiB, sizes in bytes).
//!
//! Clients speak protocol 2025-11-25 with a session (`initialize`, `notifications/initialized`,
//! then `tools/call` with the `Mcp-Session-Id` the server gave), which is what MCP clients
//! speak today. Behind the balancer half of them speak the stateless 2026-07-28 revision
//! instead, the one meant for instances without sticky sessions. Each client has its own
//! connection pool (one kept-alive connection), as separate programs would.

#[path = "load/args.rs"]
mod args;
#[path = "load/balanced.rs"]
mod balanced;
#[path = "load/client.rs"]
mod client;
#[path = "load/closed_loop.rs"]
mod closed_loop;
#[path = "load/confirm.rs"]
mod confirm;
#[path = "load/haproxy.rs"]
mod haproxy;
#[path = "load/report.rs"]
mod report;
#[path = "load/server.rs"]
mod server;
#[path = "load/soak.rs"]
mod soak;
#[path = "load/tally.rs"]
mod tally;

use std::process::ExitCode;

/// What went wrong, said to the person running the driver.
type Error = Box<dyn std::error::Error + Send + Sync>;

#[tokio::main]
async fn main() -> ExitCode {
    // reqwest is built without a TLS provider of its own (the host passes its own in); these
    // clients speak plain HTTP on loopback but a client cannot be built without one.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let command = match args::Command::parse(std::env::args().skip(1)) {
        Ok(command) => command,
        Err(message) => {
            eprintln!("{message}\n\n{}", args::USAGE);
            return ExitCode::from(2);
        }
    };
    let outcome = match command {
        args::Command::Load(load) => closed_loop::run(load).await,
        args::Command::Soak(soak) => soak::run(soak).await,
        args::Command::Balanced(balanced) => balanced::run(balanced).await,
        args::Command::Help => {
            println!("{}", args::USAGE);
            Ok(())
        }
    };
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("load: {err}");
            ExitCode::FAILURE
        }
    }
}
