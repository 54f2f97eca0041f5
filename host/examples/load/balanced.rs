//! `balanced`: two instances behind HAProxy under load; a confirmation asked at one and
//! answered at the other; at half-time the first is killed with SIGKILL. Every call is kept
//! with when it was sent and answered, so the errors can be told apart by phase: answered
//! before the kill, in flight at it, sent while the balancer notices, or after.

use crate::Error;
use crate::args::BalancedArgs;
use crate::client::{CallError, Client, ECHO, FILES_READ, Protocol};
use crate::haproxy::Balancer;
use crate::report::{self, BalancedReport, Failure, Group, Machine};
use crate::server::{self, Workspace};
use crate::tally::{self, Counters, Tally};
use crate::{closed_loop, confirm};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// `echo` and `files.read` run; `files.write` asks a person first.
const POLICY: &str = "\
[skills.echo]
level = \"auto\"

[skills.files]
level = \"auto\"
read = [\"./docs\"]
write = [\"./notes\"]

[skills.files.tools.write]
level = \"confirm\"
";

/// How long after the kill the balancer is given to notice (its checks: every second, out
/// after two failures), before calls are expected to succeed again.
const NOTICING: Duration = Duration::from_secs(5);

/// One call through the balancer.
struct Call {
    protocol: Protocol,
    /// Since the load began.
    sent: Duration,
    answered: Duration,
    outcome: Result<Option<String>, CallError>,
}

/// Run `balanced`.
pub async fn run(args: BalancedArgs) -> Result<(), Error> {
    let ws = Workspace::new(POLICY, args.common.keep)?;
    let (token, key) = (server::secret(), server::secret());
    let approvals = ws.path("approvals.db");
    let approvals = approvals.to_str().ok_or("the temporary folder's path is not UTF-8")?;
    let shared = [
        ("REACH_MCP_TOKEN", token.as_str()),
        ("REACH_MCP_STATE_KEY", key.as_str()),
        ("REACH_MCP_APPROVALS", approvals),
    ];
    let reach = &args.common.reach;
    let mut a = ws.start(reach, "a", &shared).await?;
    let b = ws.start(reach, "b", &shared).await?;
    let instances = [a.authority(), b.authority()];
    let balancer = Balancer::start(&args.haproxy, &ws.path(""), instances, &token).await?;
    eprintln!(
        "balanced: a at {}, b at {}, HAProxy at {} ({})",
        a.url,
        b.url,
        balancer.url,
        balancer.config.display()
    );
    both_serve(&balancer.url, &token).await?;

    // Half on sessions (what clients speak today), half stateless (what balancing is for).
    // The sessions are opened one after the other before the load, so that round robin puts
    // half of them at each instance (the killed one's are lost with it).
    let mut clients = Vec::with_capacity(args.clients);
    for i in 0..args.clients {
        let protocol = if i % 2 == 0 { Protocol::Session } else { Protocol::Stateless };
        let mut client = Client::new(&balancer.url, &token, protocol, &format!("balanced-{i}"));
        client.open().await.map_err(|e| format!("client {i}: {} {}", e.kind, e.detail))?;
        clients.push(client);
    }
    let counters = Arc::new(Counters::default());
    let ticker = tally::progress("balanced".into(), Arc::clone(&counters), Duration::from_secs(5));
    let started = Instant::now();
    let deadline = started + args.duration;
    let mut tasks = tokio::task::JoinSet::new();
    for client in clients {
        tasks.spawn(calls(client, started, deadline, Arc::clone(&counters)));
    }

    tokio::time::sleep_until((started + args.duration / 4).into()).await;
    let confirm_at = started.elapsed();
    let mut confirmation =
        confirm::across(&a.url, &b.url, &balancer.url, &token, &ws.path("")).await;
    confirmation.at_seconds = confirm_at.as_secs_f64();
    eprintln!("balanced: confirmation asked at a, answered at b: {confirmation:?}");

    tokio::time::sleep_until((started + args.duration / 2).into()).await;
    // Read before the signal, so that no call the kill fails counts as answered before it.
    let kill = started.elapsed();
    a.kill();
    eprintln!("balanced: killed a (SIGKILL) at {:.1} s", kill.as_secs_f64());

    let mut all = Vec::new();
    while let Some(joined) = tasks.join_next().await {
        all.extend(joined?);
    }
    ticker.abort();
    let groups = group(&all, kill);
    let failures = failures(&all, kill);
    let report = BalancedReport {
        command: "balanced",
        machine: Machine::of(reach),
        haproxy: Balancer::version(&args.haproxy),
        clients: args.clients,
        kill_at_seconds: kill.as_secs_f64(),
        confirmation,
        groups,
        failures,
        balancer_log: balancer.log(),
    };
    report::emit(&report, &report.machine, args.common.json, || table(&report));
    Ok(())
}

/// Waits until calls through the balancer have been answered by both instances.
async fn both_serve(url: &str, token: &str) -> Result<(), Error> {
    closed_loop::warm_up(url, token, &[ECHO, FILES_READ]).await?;
    let mut client = Client::new(url, token, Protocol::Stateless, "balanced-warm-up");
    let mut seen = std::collections::BTreeSet::new();
    let started = Instant::now();
    while seen.len() < 2 {
        if started.elapsed() > Duration::from_secs(30) {
            return Err(format!("only {seen:?} answered through the balancer within 30 s").into());
        }
        for tool in [ECHO, FILES_READ] {
            if let Ok(answer) = client.call(tool).await {
                seen.extend(answer.served_by);
            }
        }
    }
    Ok(())
}

/// `client` calling until `deadline`, `echo` and `files.read` in turn; every call kept.
async fn calls(
    mut client: Client,
    started: Instant,
    deadline: Instant,
    counters: Arc<Counters>,
) -> Vec<Call> {
    let mut calls = Vec::new();
    let tools = [ECHO, FILES_READ];
    let mut n = 0;
    while Instant::now() < deadline {
        let sent = started.elapsed();
        let outcome = client.call(tools[n % 2]).await.map(|answer| answer.served_by);
        n += 1;
        counters.count(outcome.is_err());
        if let Err(err) = &outcome
            && !err.retriable()
        {
            eprintln!("  {}: not retriable: {} {}", client.name(), err.kind, err.detail);
        }
        calls.push(Call {
            protocol: client.protocol(),
            sent,
            answered: started.elapsed(),
            outcome,
        });
    }
    client.close().await;
    calls
}

/// The calls by phase (relative to the kill at `kill`) and protocol, in that order.
fn group(calls: &[Call], kill: Duration) -> Vec<Group> {
    let phase = |call: &Call| {
        if call.answered < kill {
            "before"
        } else if call.sent < kill {
            "in_flight"
        } else if call.sent < kill + NOTICING {
            "noticing"
        } else {
            "after"
        }
    };
    let mut groups = Vec::new();
    for name in ["before", "in_flight", "noticing", "after"] {
        for protocol in [Protocol::Session, Protocol::Stateless] {
            let these: Vec<&Call> =
                calls.iter().filter(|c| phase(c) == name && c.protocol == protocol).collect();
            let (Some(first), Some(last)) = (these.first(), these.iter().map(|c| c.answered).max())
            else {
                continue;
            };
            let mut tally = Tally::default();
            let mut served_by = BTreeMap::new();
            for call in &these {
                match &call.outcome {
                    Ok(by) => {
                        tally.ok(call.answered - call.sent);
                        let by = by.clone().unwrap_or_else(|| "?".into());
                        *served_by.entry(by).or_insert(0) += 1;
                    }
                    Err(err) => tally.error(err),
                }
            }
            let start = these.iter().map(|c| c.sent).min().unwrap_or(first.sent);
            let summary = tally.summary(last.saturating_sub(start));
            summary.explain(&format!("{name} ({})", protocol.version()));
            groups.push(Group { phase: name, protocol: protocol.version(), summary, served_by });
        }
    }
    groups
}

/// The calls that failed, with their times relative to the kill.
fn failures(calls: &[Call], kill: Duration) -> Vec<Failure> {
    let after_kill = |at: Duration| (at.as_secs_f64() - kill.as_secs_f64()) * 1000.0;
    let mut failed: Vec<Failure> = calls
        .iter()
        .filter_map(|call| {
            let err = call.outcome.as_ref().err()?;
            Some(Failure {
                protocol: call.protocol.version(),
                sent_ms_after_kill: after_kill(call.sent),
                failed_ms_after_kill: after_kill(call.answered),
                kind: err.kind.clone(),
                retriable: err.retriable(),
            })
        })
        .collect();
    failed.sort_by(|x, y| x.sent_ms_after_kill.total_cmp(&y.sent_ms_after_kill));
    failed
}

/// The groups, the failures, the confirmation and what HAProxy logged.
fn table(report: &BalancedReport) -> String {
    let groups = report.groups.iter().map(|g| {
        let s = &g.summary;
        let served: Vec<String> = g.served_by.iter().map(|(by, n)| format!("{by} {n}")).collect();
        vec![
            g.phase.to_owned(),
            g.protocol.to_owned(),
            report::thousands(s.calls),
            report::ms(s.latency_ms.p50),
            report::ms(s.latency_ms.p99),
            report::ms(s.latency_ms.max),
            s.errors_text(),
            served.join(", "),
        ]
    });
    let header = ["phase", "protocol", "good calls", "p50 ms", "p99 ms", "max ms", "errors"];
    let groups = report::markdown(&[&header[..], &["served by"]].concat(), groups);
    let failures = report::markdown(
        &["protocol", "sent (ms after the kill)", "failed", "kind", "retriable"],
        report.failures.iter().map(|f| {
            vec![
                f.protocol.to_owned(),
                format!("{:+.1}", f.sent_ms_after_kill),
                format!("{:+.1}", f.failed_ms_after_kill),
                f.kind.clone(),
                f.retriable.to_string(),
            ]
        }),
    );
    let c = &report.confirmation;
    let log = &report.balancer_log;
    let requests: Vec<String> = log.requests.iter().map(|(k, n)| format!("{k} ×{n}")).collect();
    format!(
        "{groups}\n\n{failures}\n\n{} clients through {}; instance a killed at {:.1} s.\n\
         confirmation at {:.1} s: asked at a {}, ran at b {}, replay refused {}{}\n\
         HAProxy logged requests: {}\n{}",
        report.clients,
        report.haproxy,
        report.kill_at_seconds,
        c.at_seconds,
        c.asked,
        c.ran_at_other_instance,
        c.replay_refused,
        c.problem.as_deref().map(|p| format!(" — {p}")).unwrap_or_default(),
        requests.join(", "),
        log.events.join("\n")
    )
}
