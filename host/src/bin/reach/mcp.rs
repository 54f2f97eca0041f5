//! `reach mcp`: serve the skills over MCP (stdio, or streamable HTTP).

use crate::args::{Cli, McpArgs};
use crate::context;
use agent_reach::mcp::http::{self, HttpOptions};
use agent_reach::mcp::{McpServer, serve_stdio};
use std::process::ExitCode;

pub async fn run(cli: &Cli, args: &McpArgs) -> anyhow::Result<ExitCode> {
    let host = context::load(cli).await?;
    let server = McpServer::fixed(host);
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
    Ok(ExitCode::SUCCESS)
}
