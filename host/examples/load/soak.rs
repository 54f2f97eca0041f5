//! `soak`: a steady rate for minutes, spread over a few clients that alternate `echo` and
//! `files.read`, while the server's memory, descriptors, threads and audit folder are sampled.

use crate::Error;
use crate::args::SoakArgs;
use crate::client::{Client, ECHO, FILES_READ, Protocol};
use crate::closed_loop::warm_up;
use crate::report::{self, Machine, Sample, SoakReport, Trend};
use crate::server::{self, Server, Workspace};
use crate::tally::{Counters, Tally};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::time::MissedTickBehavior;

/// Clients the rate is spread over: a few, as a handful of editors and agents would be.
const CLIENTS: usize = 4;

/// How often the server is sampled.
const EVERY: Duration = Duration::from_secs(5);

/// Run `soak`.
pub async fn run(args: SoakArgs) -> Result<(), Error> {
    let ws = Workspace::new(server::POLICY, args.common.keep)?;
    let token = server::secret();
    let server = ws.start(&args.common.reach, "a", &[("REACH_MCP_TOKEN", &token)]).await?;
    warm_up(&server.url, &token, &[ECHO, FILES_READ]).await?;
    // A minute for caches, pools and the allocator to settle (a fifth of a short soak).
    let warm_up_time = Duration::from_secs(60).min(args.duration / 5);
    eprintln!(
        "soak: {} calls/s for {:?} at {}; sampling every {EVERY:?}, warm-up {warm_up_time:?}",
        args.rate, args.duration, server.url
    );
    let counters = Arc::new(Counters::default());
    let started = Instant::now();
    let deadline = started + args.duration;
    let mut tasks = tokio::task::JoinSet::new();
    // Each client calls at rate/CLIENTS, the clients offset so the calls are spread evenly.
    let period = Duration::from_secs_f64(CLIENTS as f64 / args.rate);
    for i in 0..CLIENTS {
        let mut client = Client::new(&server.url, &token, Protocol::Session, &format!("soak-{i}"));
        let counters = Arc::clone(&counters);
        let first =
            tokio::time::Instant::from_std(started) + period.mul_f64(i as f64 / CLIENTS as f64);
        tasks.spawn(async move {
            let mut tick = tokio::time::interval_at(first, period);
            // Behind (a slow call), the next call waits for its slot rather than bursting.
            tick.set_missed_tick_behavior(MissedTickBehavior::Skip);
            let mut tally = Tally::default();
            let tools = [ECHO, FILES_READ];
            let mut n = i;
            loop {
                tick.tick().await;
                if Instant::now() >= deadline {
                    break;
                }
                let sent = Instant::now();
                let outcome = client.call(tools[n % 2]).await;
                n += 1;
                counters.count(outcome.is_err());
                match outcome {
                    Ok(_) => tally.ok(sent.elapsed()),
                    Err(err) => tally.error(&err),
                }
            }
            client.close().await;
            tally
        });
    }
    let samples = sample_until(&server, &counters, started, deadline).await?;
    let mut total = Tally::default();
    while let Some(joined) = tasks.join_next().await {
        total.add(joined?);
    }
    let summary = total.summary(started.elapsed());
    summary.explain("soak");
    let warm = samples.iter().take_while(|s| s.seconds < warm_up_time.as_secs_f64()).count();
    let report = SoakReport {
        command: "soak",
        machine: Machine::of(&args.common.reach),
        protocol: Protocol::Session.version(),
        rate: args.rate,
        clients: CLIENTS,
        warm_up_seconds: warm_up_time.as_secs_f64(),
        summary,
        rss_kib: Trend::of(&samples, warm, |u| u.rss_kib),
        fds: Trend::of(&samples, warm, |u| u.fds),
        threads: Trend::of(&samples, warm, |u| u.threads),
        audit_bytes: Trend::of(&samples, warm, |u| u.audit_bytes),
        audit_files: server.log_files(),
        samples,
    };
    if let Some(path) = &args.samples {
        std::fs::write(path, samples_tsv(&report.samples))?;
        eprintln!("soak: samples in {}", path.display());
    }
    report::emit(&report, &report.machine, args.common.json, || {
        table(&report, args.samples.is_none())
    });
    Ok(())
}

/// A sample every [`EVERY`] from the start until `deadline`, then one last; each also printed
/// on stderr. An error when the server can no longer be sampled (it died).
async fn sample_until(
    server: &Server,
    counters: &Counters,
    started: Instant,
    deadline: Instant,
) -> Result<Vec<Sample>, Error> {
    let mut samples = Vec::new();
    let mut tick = tokio::time::interval(EVERY);
    loop {
        tick.tick().await;
        let usage = server.sample().map_err(|e| format!("the server could not be sampled: {e}"))?;
        let sample =
            Sample { seconds: started.elapsed().as_secs_f64(), calls: counters.calls(), usage };
        eprintln!(
            "  {:>5.0} s  {:>7} calls  {:>8} KiB  {:>4} fds  {:>3} threads  {:>11} audit bytes",
            sample.seconds,
            sample.calls,
            usage.rss_kib,
            usage.fds,
            usage.threads,
            usage.audit_bytes
        );
        samples.push(sample);
        if Instant::now() >= deadline {
            return Ok(samples);
        }
    }
}

/// The samples as tab-separated lines with a header.
fn samples_tsv(samples: &[Sample]) -> String {
    let mut out = String::from("seconds\tcalls\trss_kib\tfds\tthreads\taudit_bytes\n");
    for s in samples {
        out.push_str(&format!(
            "{:.0}\t{}\t{}\t{}\t{}\t{}\n",
            s.seconds, s.calls, s.usage.rss_kib, s.usage.fds, s.usage.threads, s.usage.audit_bytes
        ));
    }
    out
}

/// The calls, the trends, and (when they are not written to a file) the samples.
fn table(report: &SoakReport, with_samples: bool) -> String {
    let s = &report.summary;
    let calls = report::markdown(
        &["calls/s", "p50 ms", "p99 ms", "max ms", "calls", "errors"],
        [vec![
            format!("{:.1}", s.calls_per_second),
            report::ms(s.latency_ms.p50),
            report::ms(s.latency_ms.p99),
            report::ms(s.latency_ms.max),
            report::thousands(s.calls),
            s.errors_text(),
        ]],
    );
    let trend = |name: &str, t: &Trend| {
        vec![
            name.to_owned(),
            report::thousands(t.after_warm_up),
            report::thousands(t.last),
            report::thousands(t.max),
            format!("{:+}", t.growth),
        ]
    };
    let trends = report::markdown(
        &["figure", "after warm-up", "last", "max", "growth"],
        [
            trend("resident memory, KiB", &report.rss_kib),
            trend("open file descriptors", &report.fds),
            trend("threads", &report.threads),
            trend("audit folder, bytes", &report.audit_bytes),
        ],
    );
    let mut out = format!(
        "{calls}\n\n{trends}\n\naudit log files at the end: {}",
        report.audit_files.join(", ")
    );
    if with_samples {
        out.push_str(&format!("\n\n{}", samples_tsv(&report.samples)));
    }
    out
}
