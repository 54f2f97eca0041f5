//! The harness's own cost per agent step, without the model's latency: a
//! model that answers at once (in-process, no network) asks for one small
//! tool call per step; each step pays for building the request, reading the
//! answer, repairing and validating the arguments, the level check, the
//! sandboxed call, shaping the result and writing the audit log to disk.
//!
//! Needs the test skills: `just bench` builds them first.

mod common;

use agent_reach::harness::{RunConfig, Stop};
use agent_reach::model::{ChatFuture, ChatRequest, ChatResponse, Message, Model, ToolCall, Usage};
use agent_reach::policy::Policy;
use agent_reach::runtime::RuntimeConfig;
use agent_reach::{Agent, AlwaysConfirm, AuditSink, Host};
use agent_reach_tests::guests;
use common::{median, root};
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Steps per run.
const STEPS: usize = 50;

/// Calls `echo__echo` with a small, different object each step, then answers.
struct InstantModel {
    calls: AtomicUsize,
}

impl Model for InstantModel {
    fn chat<'a>(&'a self, request: ChatRequest<'a>) -> ChatFuture<'a> {
        let n = self.calls.fetch_add(1, Ordering::Relaxed);
        // Read what a real client would serialise, so the conversation is not free.
        let chars: usize = request.messages.iter().map(|m| m.content.len()).sum();
        let message = if n + 1 < STEPS {
            let call = ToolCall {
                id: format!("call_{n}"),
                name: "echo__echo".into(),
                arguments: format!(
                    "{{\"step\": {n}, \"note\": \"small tool call\", \"seen\": {chars}}}"
                ),
            };
            Message::assistant("", vec![call])
        } else {
            Message::assistant("done", Vec::new())
        };
        Box::pin(async move {
            Ok(ChatResponse {
                message,
                usage: Usage { input_tokens: 10, output_tokens: 5, estimated: false },
                model: "instant".into(),
            })
        })
    }

    fn name(&self) -> &str {
        "instant"
    }
}

fn main() {
    let dir = tempfile::tempdir().expect("tempdir");
    let skills = dir.path().join("skills");
    std::fs::create_dir_all(&skills).expect("skills");
    std::fs::copy(guests::TEST_SKILL_ECHO.path(), skills.join("echo.wasm")).expect("copy");
    let policy =
        Policy::parse("[skills.echo]\nlevel = \"auto\"\n", Path::new("bench.toml"), dir.path())
            .expect("policy");
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("tokio");
    let config =
        RuntimeConfig { cache_dir: Some(root().join("target/bench-compile-cache")), pooling: true };
    let host = Host::builder().skills_dir(&skills).policy(policy).runtime_config(config);
    let host = std::sync::Arc::new(rt.block_on(host.build()).expect("host"));
    let runs = dir.path().join("runs");
    let mut n = 0;
    let mut one_run = || {
        n += 1;
        let model = InstantModel { calls: AtomicUsize::new(0) };
        let agent = Agent::builder(std::sync::Arc::clone(&host), model)
            .confirmer(AlwaysConfirm)
            .audit(AuditSink::Dir(runs.clone()))
            .config(RunConfig { max_steps: STEPS + 1, ..RunConfig::default() })
            .secret("not-a-real-secret")
            .build()
            .expect("agent");
        let report =
            rt.block_on(agent.run_with_id(&format!("bench-{n}"), "echo things")).expect("run");
        assert_eq!(report.stop, Stop::Answered);
        assert_eq!(report.actions.len(), STEPS - 1);
    };
    for _ in 0..5 {
        one_run();
    }
    let per_run = median(&mut one_run, 41);
    let per_step = per_run / STEPS as u32;
    println!(
        "harness overhead per step (instant model, one echo call, audit log on disk): {per_step:?}"
    );
    println!(
        "  ({STEPS} steps per run, median of 41 runs: {per_run:?}; target ≤ 200 µs \
         per step)"
    );
}
