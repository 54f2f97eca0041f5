//! `reach mcp`: the active skills served to MCP clients (editors, desktop
//! assistants, other agents) with the permission table still in charge.
//!
//! Every call goes through [`Host::check`] and [`Host::run_checked`], the
//! same path as `reach call` and the harness: a client sees only tools whose
//! level is not `deny`, of the skills the table names
//! ([`served`]), a `confirm` tool asks the client's user through MCP
//! elicitation, and each call runs in its own sandbox with exactly its
//! skill's grants. Nothing a client sends can widen a grant. Results and
//! errors are masked with the serving host's secrets before they leave.
//! A [`LiveHost`] whose table stopped loading serves nothing: no tools, and
//! every call answered `UNAVAILABLE` with the table's error.
//!
//! Built on the official Rust SDK ([`rmcp`]), it speaks every protocol
//! revision the SDK knows, over stdio ([`serve_stdio`]) or streamable HTTP
//! ([`http::serve`]).
//!
//! ```no_run
//! # async fn demo() -> anyhow::Result<()> {
//! use agent_reach::{Host, mcp::McpServer, policy::Policy, runtime::RuntimeConfig};
//! use std::path::Path;
//!
//! let policy = Policy::load(Path::new("reach.toml"))?;
//! let host = Host::load(RuntimeConfig::default(), policy, Path::new("skills")).await?;
//! agent_reach::mcp::serve_stdio(McpServer::fixed(host)).await?;
//! # Ok(()) }
//! ```

pub mod approvals;
mod confirm;
pub mod http;
mod masking;
pub mod skills;
mod tools;

use crate::Host;
use crate::error::{ErrorCode, ToolFailure};
use crate::harness::audit::record::{
    Body, CallEnded, CallHead, CallOutcome, FrontStop, RunFinished,
};
use crate::harness::{self, audit::AuditLog};
use crate::policy::Level;
use crate::reload::{Closed, LiveHost};
use crate::runtime::redact::Redactor;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, GetPromptRequestParams, GetPromptResponse,
    GetPromptResult, GetSkillRequestParams, GetSkillResult, Implementation, ListPromptsResult,
    ListResourcesResult, ListSkillsResult, ListToolsResult, PaginatedRequestParams, PromptMessage,
    ReadResourceRequestParams, ReadResourceResponse, ReadResourceResult, ResourceContents, Role,
    ServerCapabilities, ServerConfig, SubscriptionFilter,
};
use rmcp::service::{NotificationContext, RequestContext, SubscriptionContext};
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler, ServiceExt as _};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;
use tokio::sync::watch;

pub use tools::{instructions_uri, served, tool_name};

/// The skills as an MCP server. Cheap to clone: each MCP session gets a
/// clone sharing the same host.
#[derive(Clone)]
pub struct McpServer {
    current: Arc<dyn Fn() -> Result<Arc<Host>, Closed> + Send + Sync>,
    changes: watch::Receiver<u64>,
    approvals: Arc<approvals::Approvals>,
    audit: Option<Arc<Mutex<AuditLog>>>,
    /// Where each call's changes are journaled: beside the audit log.
    journal: Option<crate::journal::RunJournal>,
    calls: Arc<AtomicU64>,
    maskers: Arc<masking::Maskers>,
}

impl McpServer {
    /// Serve one host for the server's lifetime (no reload).
    pub fn fixed(host: Host) -> McpServer {
        let host = Arc::new(host);
        // The sender lives in the source closure: nothing ever changes, and
        // the list-changed watchers wait quietly instead of ending.
        let (never, changes) = watch::channel(0);
        McpServer::with_source(
            move || {
                let _ = &never;
                Ok(host.clone())
            },
            changes,
        )
    }

    /// Serve whatever host `current` returns at each request (a call keeps
    /// the one it started with until it finishes), or nothing while it
    /// returns [`Closed`]; every change of `changes` tells clients the
    /// lists changed. This is how hot reload plugs in (see
    /// [`McpServer::live`]).
    pub fn with_source(
        current: impl Fn() -> Result<Arc<Host>, Closed> + Send + Sync + 'static,
        changes: watch::Receiver<u64>,
    ) -> McpServer {
        let server = McpServer {
            current: Arc::new(current),
            changes,
            approvals: Arc::new(approvals::Approvals::per_process()),
            audit: None,
            journal: None,
            calls: Arc::new(AtomicU64::new(0)),
            maskers: Arc::default(),
        };
        // At start: the host's secrets read, and the skills it leaves out logged.
        if let Ok(host) = server.host() {
            server.masker(&host);
        }
        server
    }

    /// Serve a [`LiveHost`]: each call uses the host current when it
    /// starts, and clients are told when a reload changed what is offered,
    /// closed the server (the table stopped loading) or opened it again.
    pub fn live(live: Arc<LiveHost>) -> McpServer {
        let changes = live.subscribe();
        McpServer::with_source(move || live.current(), changes)
    }

    fn host(&self) -> Result<Arc<Host>, Closed> {
        (self.current)()
    }

    /// The masker of `host`'s secrets; the first time a host is seen, the
    /// skills it does not serve are logged and the audit log learns its
    /// secrets (a variable a reload granted is masked there too).
    fn masker(&self, host: &Arc<Host>) -> Arc<Redactor> {
        self.maskers.of(host, |secrets| {
            let unserved = tools::unserved(host);
            if !unserved.is_empty() {
                tracing::warn!(
                    skills = %unserved.join(", "), table = %host.policy().origin().display(),
                    "installed skills the permission table does not name are not served over MCP; \
                     add [skills.NAME] to serve one"
                );
            }
            if let Some(audit) = &self.audit {
                audit.lock().unwrap_or_else(|e| e.into_inner()).mask_also(secrets);
            }
        })
    }

    /// Check the answers of protocol 2026-07-28 clients with `approvals`
    /// (by default [`Approvals::per_process`](approvals::Approvals::per_process):
    /// good at this process only); [`Approvals::shared`](approvals::Approvals::shared)
    /// lets instances behind a load balancer accept each other's.
    pub fn with_approvals(mut self, approvals: approvals::Approvals) -> McpServer {
        self.approvals = Arc::new(approvals);
        self
    }

    /// Write every call to `log`: each call is on record before it runs
    /// (a call that cannot be recorded does not run) and again with its
    /// outcome; refusals are recorded too. Secrets the log was given are
    /// masked in everything written, and so are those of every host served
    /// (after a reload, the new host's too).
    pub fn with_audit(mut self, mut log: AuditLog) -> McpServer {
        if let Ok(host) = self.host() {
            log.mask_also(&harness::secrets(&host, []));
        }
        // The table of the host served when the log is given (a reload keeps it).
        let budget = self.host().map(|h| h.policy().journal()).unwrap_or_default();
        self.journal = crate::journal::beside_log(log.path())
            .map(|root| crate::journal::RunJournal::after_recovery(&root, log.run_id(), budget));
        self.audit = Some(Arc::new(Mutex::new(log)));
        self
    }

    /// One `tools/call` on `serving`: resolve, check, confirm, record, run
    /// — or the refusal, recorded. The result is masked with `mask`.
    async fn call(
        &self,
        serving: Result<Arc<Host>, Closed>,
        mask: &Redactor,
        params: &CallToolRequestParams,
        context: &RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ToolFailure> {
        let client = context.client_info().map(|info| info.name);
        let arguments = match &params.arguments {
            Some(map) => serde_json::Value::Object(map.clone()),
            None => serde_json::json!({}),
        };
        let refused = |tool: &str, failure: ToolFailure| {
            self.record(CallEnded {
                head: CallHead {
                    tool: tool.to_owned(),
                    arguments: arguments.clone(),
                    client: Some(client.clone()),
                    ..CallHead::default()
                },
                outcome: CallOutcome::Refused,
                error_code: Some(failure.code),
                error: Some(failure.message.clone()),
                ..CallEnded::default()
            });
            failure
        };
        // Closed: the table on disk does not load, and the one before may
        // grant what the operator just removed.
        let host = serving.map_err(|closed| {
            refused(&params.name, ToolFailure::new(ErrorCode::Unavailable, closed.to_string()))
        })?;
        let (skill, tool) =
            tools::resolve(&host, &params.name).map_err(|f| refused(&params.name, f))?;
        let label = format!("{skill}.{tool}");
        let mut call =
            host.check(&skill, &tool, &arguments.to_string()).map_err(|f| refused(&label, f))?;
        if call.level() == Level::Confirm {
            match confirm::ask(&call, params, context, &self.approvals).await {
                confirm::Answer::Confirmed => call.confirmed(),
                confirm::Answer::Refused(why) => return Err(refused(&label, call.refused(&why))),
                confirm::Answer::Ask(input) => return Ok(CallToolResponse::InputRequired(input)),
            }
        }
        let number = self.calls.fetch_add(1, Ordering::Relaxed) + 1;
        let (version, hash) = host
            .registry()
            .active(&skill)
            .map(|a| (a.manifest.version.to_string(), a.loaded().wasm_hash().to_owned()))
            .unzip();
        let head = CallHead {
            step: None,
            call: Some(number as usize),
            tool: label,
            skill: Some(Some(skill.clone())),
            version: Some(version),
            wasm_hash: Some(hash),
            arguments: call.value().clone(),
            level: Some(call.level()),
            client: Some(client),
        };
        if let Some(audit) = &self.audit {
            audit.lock().unwrap_or_else(|e| e.into_inner()).call_started(&head)?;
        }
        let started = Instant::now();
        // Journaled, and rolled back if it fails (per call: the step is 0).
        let checked = host.run_checked(call);
        let journaled = async {
            match &self.journal {
                Some(run) => {
                    let scope = crate::journal::CallScope {
                        run: run.clone(),
                        call: number,
                        step: 0,
                        worker: None,
                    };
                    crate::journal::scoped(scope, checked).await
                }
                None => checked.await,
            }
        };
        let result = tokio::select! {
            output = journaled => output,
            // Dropping the call's future stops the component at its next
            // epoch check: a cancelled call does not run on in the sandbox.
            () = context.ct.cancelled() => Err(ToolFailure::new(
                ErrorCode::Failed,
                format!("{skill}.{tool} was cancelled by the client"),
            )),
        };
        let bytes = result.as_ref().map_or(0, String::len);
        self.record(CallEnded::of(head, &result, bytes, started.elapsed().as_millis() as u64));
        Ok(CallToolResponse::Complete(tools::success(mask.text(&result?).into_owned())))
    }

    /// Record that the server stopped serving (clients gone, or shut
    /// down), with how many calls ran; `reach runs list` then shows it
    /// finished rather than cut off.
    pub fn finished(&self) {
        let calls = self.calls.load(Ordering::Relaxed) as usize;
        self.record(RunFinished::of_front(FrontStop::Ok, calls));
        if let Some(audit) = &self.audit {
            audit.lock().unwrap_or_else(|e| e.into_inner()).sync();
        }
    }

    fn record(&self, body: impl Into<Body>) {
        if let Some(audit) = &self.audit {
            audit.lock().unwrap_or_else(|e| e.into_inner()).record(body);
        }
    }
}

impl ServerHandler for McpServer {
    fn get_info(&self) -> ServerConfig {
        let capabilities = ServerCapabilities::builder()
            .enable_tools()
            .enable_tool_list_changed()
            .enable_prompts()
            .enable_prompts_list_changed()
            .enable_resources()
            .enable_resources_list_changed()
            // No directory reads: every entry lists its files in full.
            .enable_skills()
            .build();
        ServerConfig::new(capabilities)
            .with_server_info(Implementation::new("agent-reach", env!("CARGO_PKG_VERSION")))
            .with_instructions(
                "Agent Reach runs each tool as a sandboxed WebAssembly skill with only the \
                 folders, hosts and environment its operator's permission table grants. A DENIED \
                 result means the table does not allow it: do not retry the same call. Tool errors \
                 are JSON with error_code, error and suggestion.",
            )
    }

    async fn list_tools(
        &self,
        _: Option<PaginatedRequestParams>,
        _: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        // Closed: nothing is listed, since nothing can be called.
        Ok(ListToolsResult::with_all_items(
            self.host().map(|host| tools::list(&host)).unwrap_or_default(),
        ))
    }

    async fn call_tool(
        &self,
        params: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let started = Instant::now();
        let serving = self.host();
        // What goes back is masked as a run masks what reaches its model.
        let mask = match &serving {
            Ok(host) => self.masker(host),
            Err(_) => self.maskers.latest(),
        };
        let outcome = self.call(serving, &mask, &params, &context).await;
        let ms = started.elapsed().as_secs_f64() * 1000.0;
        Ok(match outcome {
            Ok(response) => {
                tracing::info!(tool = %params.name, ms, "mcp call finished");
                response
            }
            Err(failure) => {
                tracing::info!(tool = %params.name, ms, code = %failure.code, "mcp call failed");
                let masked = ToolFailure::new(failure.code, mask.text(&failure.message));
                CallToolResponse::Complete(tools::failure(&masked))
            }
        })
    }

    async fn list_prompts(
        &self,
        _: Option<PaginatedRequestParams>,
        _: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, McpError> {
        Ok(ListPromptsResult::with_all_items(
            self.host().map(|host| tools::prompts(&host)).unwrap_or_default(),
        ))
    }

    async fn get_prompt(
        &self,
        params: GetPromptRequestParams,
        _: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, McpError> {
        let host =
            self.host().map_err(|closed| McpError::invalid_params(closed.to_string(), None))?;
        let text = tools::instructions(&host, &params.name).ok_or_else(|| {
            McpError::invalid_params(
                format!(
                    "no prompt `{}`: prompts are named after skills with instructions",
                    params.name
                ),
                None,
            )
        })?;
        let message = PromptMessage::new_text(Role::User, text);
        Ok(GetPromptResult::new(vec![message])
            .with_description(format!("Instructions of the {} skill", params.name))
            .into())
    }

    async fn list_resources(
        &self,
        _: Option<PaginatedRequestParams>,
        _: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, McpError> {
        Ok(ListResourcesResult::with_all_items(
            self.host()
                .map(|host| {
                    let mut all = tools::resources(&host);
                    all.extend(skills::resources(&host));
                    all
                })
                .unwrap_or_default(),
        ))
    }

    async fn read_resource(
        &self,
        params: ReadResourceRequestParams,
        _: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, McpError> {
        let host =
            self.host().map_err(|closed| McpError::resource_not_found(closed.to_string(), None))?;
        if let Some(read) = skills::read(&host, &params.uri) {
            let contents = read.map_err(|why| McpError::resource_not_found(why, None))?;
            return Ok(ReadResourceResult::new(vec![contents]).into());
        }
        let text = tools::skill_of_uri(&params.uri)
            .and_then(|skill| tools::instructions(&host, skill))
            .ok_or_else(|| {
                McpError::resource_not_found(format!("no resource `{}`", params.uri), None)
            })?;
        Ok(ReadResourceResult::new(vec![ResourceContents::text(text, params.uri.clone())]).into())
    }

    async fn list_skills(
        &self,
        _: Option<PaginatedRequestParams>,
        _: RequestContext<RoleServer>,
    ) -> Result<ListSkillsResult, McpError> {
        // One page: a served catalogue is a folder of bundles, not a feed.
        Ok(self.host().map(|host| skills::list(&host)).unwrap_or_default())
    }

    async fn get_skill(
        &self,
        params: GetSkillRequestParams,
        _: RequestContext<RoleServer>,
    ) -> Result<GetSkillResult, McpError> {
        let host =
            self.host().map_err(|closed| McpError::invalid_params(closed.to_string(), None))?;
        skills::get(&host, &params.uri).map_err(|why| McpError::invalid_params(why, None))
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        // A session (stdio, or HTTP before 2026-07-28) is told of reloads by
        // notifications on it, until it goes away.
        let mut changes = self.changes.clone();
        let peer = context.peer;
        tokio::spawn(async move {
            changes.mark_unchanged();
            // Also look every 30 s whether the session is gone, so a closed
            // session's watcher does not wait for the next reload to end.
            let mut check = tokio::time::interval(std::time::Duration::from_secs(30));
            loop {
                tokio::select! {
                    changed = changes.changed() => if changed.is_err() { break },
                    _ = check.tick() => {
                        if peer.is_transport_closed() { break }
                        continue;
                    }
                }
                let sent = async {
                    peer.notify_tool_list_changed().await?;
                    peer.notify_prompt_list_changed().await?;
                    peer.notify_resource_list_changed().await
                };
                if sent.await.is_err() {
                    break;
                }
            }
        });
    }

    fn accepted_subscription_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        let mut accepted = SubscriptionFilter::new();
        accepted.tools_list_changed = requested.tools_list_changed;
        accepted.prompts_list_changed = requested.prompts_list_changed;
        accepted.resources_list_changed = requested.resources_list_changed;
        Some(accepted)
    }

    async fn listen(&self, context: SubscriptionContext) -> Result<(), McpError> {
        // Protocol 2026-07-28: a client listens on `subscriptions/listen`;
        // the SDK filters what it did not ask for.
        let mut changes = self.changes.clone();
        changes.mark_unchanged();
        loop {
            tokio::select! {
                () = context.cancelled() => return Ok(()),
                changed = changes.changed() => {
                    if changed.is_err() {
                        return Ok(());
                    }
                    let sink = context.sink();
                    let sent = async {
                        sink.notify_tool_list_changed().await?;
                        sink.notify_prompt_list_changed().await?;
                        sink.notify_resource_list_changed().await
                    };
                    if sent.await.is_err() {
                        return Ok(());
                    }
                }
            }
        }
    }
}

/// Serve `server` on this process's stdin and stdout until the client
/// closes them. Logs must go to stderr: stdout carries the protocol.
pub async fn serve_stdio(server: McpServer) -> anyhow::Result<()> {
    // Pipes (how MCP clients start servers) are read and written on the IO
    // reactor, not through the blocking pool: no thread hand-off per message.
    let running = server.serve(rmcp::transport::stdio_pipes()).await?;
    running.waiting().await?;
    Ok(())
}
