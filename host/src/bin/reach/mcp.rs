//! `reach mcp`: serve the skills over MCP (stdio, or streamable HTTP).

use crate::args::{Cli, McpArgs};
use crate::context;
use agent_reach::mcp::http::{self, HttpOptions};
use agent_reach::mcp::{McpServer, serve_stdio};
use agent_reach::reload::{self, LiveHost, ReloadSource};
use agent_reach::harness::{self, audit::AuditLog};
use serde_json::json;
use std::process::ExitCode;

pub async fn run(cli: &Cli, args: &McpArgs) -> anyhow::Result<ExitCode> {
    let host = context::load_with_runs(cli, &args.runs_dir).await?;
    let id = format!("mcp-{}", crate::run::run_id());
    let secrets = harness::secrets(&host, []);
    let mut audit = AuditLog::create(&args.runs_dir, &id, secrets)
        .map_err(|e| anyhow::anyhow!("could not create the audit log in {}: {e}", args.runs_dir.display()))?;
    let transport = args.http.map_or_else(|| "stdio".to_owned(), |addr| format!("http://{addr}{}", http::PATH));
    audit.record("run_started", json!({"kind": "mcp", "task": format!("reach mcp ({transport})"), "model": null}));
    tracing::info!(audit = %audit.path().display(), "MCP calls are recorded in the audit log");
    // The table and skills folder are watched unless --no-watch: a changed
    // file is loaded beside the serving host and swapped in when it checks.
    let from_file = host.policy.origin().is_file().then(|| cli.policy.clone());
    let live = LiveHost::new(host);
    let _watching = if args.no_watch {
        None
    } else {
        let mut source = ReloadSource::new(from_file, cli.skills.clone());
        source.protected = context::protected(&args.runs_dir);
        Some(reload::watch(live.clone(), source)?)
    };
    let server = McpServer::live(live).with_audit(audit);
    let record = server.clone();
    match args.http {
        None => {
            tracing::info!("serving MCP on stdio");
            serve_stdio(server).await?;
        }
        Some(addr) => {
            let mut options = HttpOptions::new(addr);
            options.allowed_origins = args.allow_origin.clone();
            options.allowed_hosts = args.allow_host.clone();
            let shutdown = tokio_util::sync::CancellationToken::new();
            let stop = shutdown.clone();
            tokio::spawn(async move {
                if tokio::signal::ctrl_c().await.is_ok() {
                    stop.cancel();
                }
            });
            http::serve(server, options, shutdown, |bound| eprintln!("reach mcp: serving http://{bound}{}", http::PATH)).await?;
        }
    }
    record.finished();
    Ok(ExitCode::SUCCESS)
}
