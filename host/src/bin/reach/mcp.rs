//! `reach mcp`: serve the skills over MCP (stdio, or streamable HTTP).

use crate::args::{Cli, McpArgs};
use crate::context;
use agent_reach::harness::audit::record::{FrontEnd, RunStarted};
use agent_reach::harness::{self, audit::AuditLog};
use agent_reach::mcp::approvals::Approvals;
use agent_reach::mcp::http::{self, HttpOptions, token};
use agent_reach::mcp::{McpServer, serve_stdio};
use agent_reach::policy::ProtectedPath;
use agent_reach::reload::{self, LiveHost, ReloadSource};
use std::path::Path;
use std::process::ExitCode;

/// A part of the server's audit log is closed past this size. A call's two
/// records take a few KB with their arguments, so a part holds tens of
/// thousands of calls.
const AUDIT_PART_BYTES: u64 = 64 * 1024 * 1024;

/// Parts of the server's audit log kept (the newest): a server that runs for
/// months keeps at most ~256 MiB of log.
const AUDIT_PARTS: u32 = 4;

pub async fn run(cli: &Cli, args: &McpArgs) -> anyhow::Result<ExitCode> {
    // Settings that can be wrong are checked before the skills load.
    let approvals = Approvals::from_env(args.approvals.as_deref())?;
    let options = args.http.map(|addr| http_options(addr, args)).transpose()?;
    let mut protected = context::protected(&args.runs_dir);
    if let Some(store) = &args.approvals {
        // A skill that could write it could clear it and replay an answer.
        protected.push(ProtectedPath::new("the MCP approvals record", store));
    }
    let host = context::load_protecting(cli, protected.clone()).await?;
    let id = format!("mcp-{}", agent_reach::harness::audit::new_run_id());
    let secrets = harness::secrets(&host, []);
    let mut audit = AuditLog::create(&args.runs_dir, &id, secrets)
        .map_err(|e| {
            anyhow::anyhow!("could not create the audit log in {}: {e}", args.runs_dir.display())
        })?
        .rotate_at(AUDIT_PART_BYTES, AUDIT_PARTS);
    let transport =
        args.http.map_or_else(|| "stdio".to_owned(), |addr| format!("http://{addr}{}", http::PATH));
    audit.record(RunStarted::of_front(FrontEnd::Mcp, format!("reach mcp ({transport})")));
    tracing::info!(audit = %audit.path().display(), "MCP calls are recorded in the audit log");
    // The table and skills folder are watched unless --no-watch: a changed
    // file is loaded beside the serving host and swapped in when it checks.
    let from_file = host.policy().origin().is_file().then(|| cli.policy.clone());
    let live = LiveHost::new(host);
    let _watching = if args.no_watch {
        None
    } else {
        let mut source = ReloadSource::new(from_file, cli.skills.clone());
        source.protected = protected;
        Some(reload::watch(live.clone(), source)?)
    };
    let server = McpServer::live(live).with_approvals(approvals).with_audit(audit);
    let record = server.clone();
    match options {
        None => {
            tracing::info!("serving MCP on stdio");
            serve_stdio(server).await?;
        }
        Some(options) => {
            let shutdown = tokio_util::sync::CancellationToken::new();
            let stop = shutdown.clone();
            tokio::spawn(async move {
                if tokio::signal::ctrl_c().await.is_ok() {
                    stop.cancel();
                }
            });
            http::serve(server, options, shutdown, |bound| {
                eprintln!("reach mcp: serving http://{bound}{}", http::PATH)
            })
            .await?;
        }
    }
    record.finished();
    Ok(ExitCode::SUCCESS)
}

/// The HTTP server's options. On loopback with no token set and no
/// `--no-auth`, the token is the one kept in [`token::TOKEN_FILE`] (made on
/// first use); clients are told where to read it, never the token itself
/// (stderr is often a log).
fn http_options(addr: std::net::SocketAddr, args: &McpArgs) -> anyhow::Result<HttpOptions> {
    let mut options = HttpOptions::new(addr);
    options.allowed_origins = args.allow_origin.clone();
    options.allowed_hosts = args.allow_host.clone();
    if args.no_auth {
        anyhow::ensure!(
            options.token.is_none(),
            "--no-auth and {} are both given: choose one",
            http::TOKEN_ENV
        );
        options.no_auth = true;
    } else if options.token.is_none() && addr.ip().is_loopback() {
        let path = Path::new(token::TOKEN_FILE);
        options.token = Some(token::load_or_create(path)?);
        let shown = std::path::absolute(path).unwrap_or_else(|_| path.to_owned());
        eprintln!(
            "reach mcp: clients must send the header `Authorization: Bearer TOKEN`, TOKEN being \
             the contents of {}",
            shown.display()
        );
    }
    Ok(options)
}
