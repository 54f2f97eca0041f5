//! `load`: for each tool and client count, that many clients each calling in a loop, the next
//! call sent as soon as the last is answered, for the duration.

use crate::Error;
use crate::args::LoadArgs;
use crate::client::{Client, Protocol, Tool};
use crate::report::{self, LoadReport, LoadRun, Machine};
use crate::server::{self, Workspace};
use crate::tally::{self, Counters, Summary, Tally};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// Run `load`.
pub async fn run(args: LoadArgs) -> Result<(), Error> {
    let tools = args
        .tools
        .iter()
        .map(|label| {
            Tool::named(label).ok_or_else(|| format!("no tool `{label}`: echo, files.read"))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let ws = Workspace::new(server::POLICY, args.common.keep)?;
    let token = server::secret();
    let server = ws.start(&args.common.reach, "a", &[("REACH_MCP_TOKEN", &token)]).await?;
    eprintln!("load: {} serving at {}", args.common.reach.display(), server.url);
    // The first call of each tool instantiates its component: not part of the figures.
    warm_up(&server.url, &token, &tools).await?;
    let mut runs = Vec::new();
    for tool in &tools {
        for &clients in &args.clients {
            eprintln!("load: {} with {clients} client(s) for {:?}", tool.label, args.duration);
            let rss = PeakRss::watch(server.pid());
            let summary = closed_loop(&server.url, &token, *tool, clients, args.duration).await?;
            summary.explain(tool.label);
            let server_rss_kib_max = rss.peak();
            runs.push(LoadRun {
                tool: tool.label.to_owned(),
                clients,
                summary,
                server_rss_kib_max,
            });
        }
    }
    let after = server.sample().map_err(|e| format!("the server is gone after the load: {e}"))?;
    let report = LoadReport {
        command: "load",
        machine: Machine::of(&args.common.reach),
        protocol: Protocol::Session.version(),
        runs,
        server_after: after,
        audit_files: server.log_files(),
    };
    report::emit(&report, &report.machine, args.common.json, || {
        let table = report::markdown(
            &[
                "tool",
                "clients",
                "calls/s",
                "p50 ms",
                "p99 ms",
                "max ms",
                "calls",
                "errors",
                "RSS max MiB",
            ],
            report.runs.iter().map(|run| {
                let s = &run.summary;
                vec![
                    format!("`{}`", run.tool),
                    run.clients.to_string(),
                    report::thousands(s.calls_per_second.round() as u64),
                    report::ms(s.latency_ms.p50),
                    report::ms(s.latency_ms.p99),
                    report::ms(s.latency_ms.max),
                    report::thousands(s.calls),
                    s.errors_text(),
                    format!("{:.0}", run.server_rss_kib_max as f64 / 1024.0),
                ]
            }),
        );
        let u = &report.server_after;
        format!(
            "{table}\n\nthe server after the runs: {} KiB resident, {} fds, {} threads; audit \
             folder {} bytes in {}",
            report::thousands(u.rss_kib),
            u.fds,
            u.threads,
            report::thousands(u.audit_bytes),
            report.audit_files.join(", ")
        )
    });
    Ok(())
}

/// One good call of each tool, or the error that says why the server does not answer.
pub async fn warm_up(url: &str, token: &str, tools: &[Tool]) -> Result<(), Error> {
    let mut client = Client::new(url, token, Protocol::Session, "load-warm-up");
    for tool in tools {
        client
            .call(*tool)
            .await
            .map_err(|e| format!("{}: {} ({})", tool.label, e.kind, e.detail))?;
    }
    client.close().await;
    Ok(())
}

/// `clients` clients, sessions opened first, each calling `tool` until `duration` has passed.
async fn closed_loop(
    url: &str,
    token: &str,
    tool: Tool,
    clients: usize,
    duration: Duration,
) -> Result<Summary, Error> {
    let mut opened = Vec::with_capacity(clients);
    for i in 0..clients {
        let mut client = Client::new(url, token, Protocol::Session, &format!("load-{i}"));
        client.open().await.map_err(|e| format!("client {i} could not open a session: {e:?}"))?;
        opened.push(client);
    }
    let counters = Arc::new(Counters::default());
    let label = format!("{} × {clients}", tool.label);
    let ticker = tally::progress(label, Arc::clone(&counters), Duration::from_secs(5));
    let started = Instant::now();
    let deadline = started + duration;
    let mut tasks = tokio::task::JoinSet::new();
    for mut client in opened {
        let counters = Arc::clone(&counters);
        tasks.spawn(async move {
            let mut tally = Tally::default();
            let mut ended = Instant::now();
            while ended < deadline {
                let sent = Instant::now();
                let outcome = client.call(tool).await;
                ended = Instant::now();
                counters.count(outcome.is_err());
                match outcome {
                    Ok(_) => tally.ok(ended - sent),
                    Err(err) => tally.error(&err),
                }
            }
            client.close().await;
            (tally, ended)
        });
    }
    let mut total = Tally::default();
    let mut last = started;
    while let Some(joined) = tasks.join_next().await {
        let (tally, ended) = joined?;
        total.add(tally);
        last = last.max(ended);
    }
    ticker.abort();
    // Until the last call was answered: the calls still out at the deadline are counted.
    Ok(total.summary(last - started))
}

/// The largest resident memory of a process, sampled every 250 ms until dropped.
struct PeakRss {
    peak: Arc<AtomicU64>,
    sampler: tokio::task::JoinHandle<()>,
}

impl PeakRss {
    fn watch(pid: u32) -> PeakRss {
        let peak = Arc::new(AtomicU64::new(0));
        let seen = Arc::clone(&peak);
        let sampler = tokio::spawn(async move {
            let mut tick = tokio::time::interval(Duration::from_millis(250));
            loop {
                tick.tick().await;
                if let Ok(kib) = server::status_field(pid, "VmRSS:") {
                    seen.fetch_max(kib, Ordering::Relaxed);
                }
            }
        });
        PeakRss { peak, sampler }
    }

    /// The largest seen so far, KiB.
    fn peak(&self) -> u64 {
        self.peak.load(Ordering::Relaxed)
    }
}

impl Drop for PeakRss {
    fn drop(&mut self) {
        self.sampler.abort();
    }
}
