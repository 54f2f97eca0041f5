//! What calls came to: the latency of each good one, the errors by kind, and a progress line
//! on stderr while they run.

use crate::client::CallError;
use serde::Serialize;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// Calls counted by one client (or merged from several).
#[derive(Debug, Default)]
pub struct Tally {
    /// Microseconds each good call took, from sending it to reading its whole answer.
    latencies_us: Vec<u32>,
    errors: BTreeMap<String, u64>,
    /// The first detail of each kind of error.
    examples: BTreeMap<String, String>,
}

impl Tally {
    /// A call answered well after `took`.
    pub fn ok(&mut self, took: Duration) {
        self.latencies_us.push(u32::try_from(took.as_micros()).unwrap_or(u32::MAX));
    }

    /// A call that failed with `err`.
    pub fn error(&mut self, err: &CallError) {
        *self.errors.entry(err.kind.clone()).or_default() += 1;
        self.examples
            .entry(err.kind.clone())
            .or_insert_with(|| err.detail.chars().take(300).collect());
    }

    /// `other`'s calls added to these.
    pub fn add(&mut self, other: Tally) {
        self.latencies_us.extend(other.latencies_us);
        for (kind, n) in other.errors {
            *self.errors.entry(kind).or_default() += n;
        }
        for (kind, detail) in other.examples {
            self.examples.entry(kind).or_insert(detail);
        }
    }

    /// The figures of these calls, made over `elapsed`.
    pub fn summary(mut self, elapsed: Duration) -> Summary {
        self.latencies_us.sort_unstable();
        let calls = self.latencies_us.len() as u64;
        let ms = |us: u32| f64::from(us) / 1000.0;
        // Nearest rank: the smallest latency at least `q` of the calls did not exceed.
        let quantile = |q: f64| {
            let rank = (q * self.latencies_us.len() as f64).ceil() as usize;
            self.latencies_us.get(rank.saturating_sub(1)).copied().map_or(0.0, ms)
        };
        Summary {
            calls,
            errors: self.errors.values().sum(),
            seconds: elapsed.as_secs_f64(),
            calls_per_second: calls as f64 / elapsed.as_secs_f64().max(f64::EPSILON),
            latency_ms: Latency {
                p50: quantile(0.50),
                p99: quantile(0.99),
                max: self.latencies_us.last().copied().map_or(0.0, ms),
            },
            errors_by_kind: self.errors,
            error_examples: self.examples,
        }
    }
}

/// The figures of a set of calls.
#[derive(Clone, Debug, Serialize)]
pub struct Summary {
    /// Calls answered well.
    pub calls: u64,
    /// Calls that failed, all kinds.
    pub errors: u64,
    /// How long they ran, seconds.
    pub seconds: f64,
    /// Good calls a second over that time.
    pub calls_per_second: f64,
    /// Latency of the good calls.
    pub latency_ms: Latency,
    /// Failed calls by kind (see `client::CallError::kind`).
    pub errors_by_kind: BTreeMap<String, u64>,
    /// What the first error of each kind said (at most 300 characters).
    pub error_examples: BTreeMap<String, String>,
}

impl Summary {
    /// `kind ×N, …`, or `0`.
    pub fn errors_text(&self) -> String {
        if self.errors_by_kind.is_empty() {
            return "0".to_owned();
        }
        let kinds: Vec<String> =
            self.errors_by_kind.iter().map(|(kind, n)| format!("{kind} ×{n}")).collect();
        kinds.join(", ")
    }

    /// On stderr, what the first error of each kind said, under `label`.
    pub fn explain(&self, label: &str) {
        for (kind, detail) in &self.error_examples {
            eprintln!("  {label}: first {kind}: {detail}");
        }
    }
}

/// Latency percentiles, milliseconds.
#[derive(Clone, Copy, Debug, Default, Serialize)]
pub struct Latency {
    /// Median.
    pub p50: f64,
    /// 99th percentile.
    pub p99: f64,
    /// Slowest.
    pub max: f64,
}

/// Counters every client of a run bumps, for the progress line.
#[derive(Debug, Default)]
pub struct Counters {
    calls: AtomicU64,
    errors: AtomicU64,
}

impl Counters {
    /// One call more, failed or not.
    pub fn count(&self, failed: bool) {
        self.calls.fetch_add(1, Ordering::Relaxed);
        if failed {
            self.errors.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Calls so far, failed or not.
    pub fn calls(&self) -> u64 {
        self.calls.load(Ordering::Relaxed)
    }
}

/// Print `label: Ns, calls, errors` on stderr every `every` until the task is aborted.
pub fn progress(
    label: String,
    counters: Arc<Counters>,
    every: Duration,
) -> tokio::task::JoinHandle<()> {
    let started = Instant::now();
    tokio::spawn(async move {
        let mut tick = tokio::time::interval_at(tokio::time::Instant::now() + every, every);
        loop {
            tick.tick().await;
            eprintln!(
                "  {label}: {:>4.0} s, {} calls, {} errors",
                started.elapsed().as_secs_f64(),
                counters.calls.load(Ordering::Relaxed),
                counters.errors.load(Ordering::Relaxed)
            );
        }
    })
}
