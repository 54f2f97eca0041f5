//! What each subcommand reports: one type per report, printed as Markdown tables (what the
//! book quotes) or, with `--json`, as one JSON object of the same fields.

use crate::server::Usage;
use crate::tally::Summary;
use serde::Serialize;
use std::collections::BTreeMap;

/// Where and with what the figures were made.
#[derive(Debug, Serialize)]
pub struct Machine {
    /// The `reach` binary.
    pub reach: String,
    /// Cores the driver and the server share.
    pub cores: usize,
    /// `/proc/loadavg` when the report was made: anything else running shows here.
    pub load_average: String,
}

impl Machine {
    /// This machine, serving with `reach`.
    pub fn of(reach: &std::path::Path) -> Machine {
        Machine {
            reach: reach.display().to_string(),
            cores: std::thread::available_parallelism().map_or(1, usize::from),
            load_average: std::fs::read_to_string("/proc/loadavg")
                .map(|text| text.trim().to_owned())
                .unwrap_or_default(),
        }
    }
}

/// `load --json`.
#[derive(Debug, Serialize)]
pub struct LoadReport {
    /// `"load"`.
    pub command: &'static str,
    /// Where it ran.
    pub machine: Machine,
    /// The clients' protocol revision.
    pub protocol: &'static str,
    /// One row per tool and client count, in the order run.
    pub runs: Vec<LoadRun>,
    /// The server's resources after the last run.
    pub server_after: Usage,
    /// Its audit folder's log files after the last run (a `.partN` file is a rotation).
    pub audit_files: Vec<String>,
}

/// One tool at one client count.
#[derive(Debug, Serialize)]
pub struct LoadRun {
    /// The tool's label.
    pub tool: String,
    /// Clients calling at once.
    pub clients: usize,
    /// What the calls came to.
    #[serde(flatten)]
    pub summary: Summary,
    /// The server's largest resident memory during the run (sampled every 250 ms), KiB.
    pub server_rss_kib_max: u64,
}

/// `soak --json`.
#[derive(Debug, Serialize)]
pub struct SoakReport {
    /// `"soak"`.
    pub command: &'static str,
    /// Where it ran.
    pub machine: Machine,
    /// The clients' protocol revision.
    pub protocol: &'static str,
    /// Calls a second asked for, over all clients.
    pub rate: f64,
    /// Clients the rate is spread over.
    pub clients: usize,
    /// Samples before this are the warm-up, left out of `after_warm_up`.
    pub warm_up_seconds: f64,
    /// What the calls came to.
    #[serde(flatten)]
    pub summary: Summary,
    /// Resident memory, KiB.
    pub rss_kib: Trend,
    /// Open file descriptors.
    pub fds: Trend,
    /// Threads.
    pub threads: Trend,
    /// Bytes under the audit folder.
    pub audit_bytes: Trend,
    /// The audit folder's log files at the end (a `.partN` file is a rotation).
    pub audit_files: Vec<String>,
    /// Every sample, in order.
    pub samples: Vec<Sample>,
}

/// A sampled figure over the soak.
#[derive(Debug, Default, Serialize)]
pub struct Trend {
    /// The first sample after the warm-up.
    pub after_warm_up: u64,
    /// The last sample.
    pub last: u64,
    /// The largest sample, warm-up included.
    pub max: u64,
    /// `last - after_warm_up`.
    pub growth: i64,
}

impl Trend {
    /// The trend of `figure` over `samples`, the first `warm_up` of them left out.
    pub fn of(samples: &[Sample], warm_up: usize, figure: impl Fn(&Usage) -> u64) -> Trend {
        let values: Vec<u64> = samples.iter().map(|s| figure(&s.usage)).collect();
        let first = values.get(warm_up).or(values.last()).copied().unwrap_or(0);
        let last = values.last().copied().unwrap_or(0);
        Trend {
            after_warm_up: first,
            last,
            max: values.iter().copied().max().unwrap_or(0),
            growth: last as i64 - first as i64,
        }
    }
}

/// One sample of the soak.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct Sample {
    /// Seconds since the load began.
    pub seconds: f64,
    /// Calls made so far, failed or not.
    pub calls: u64,
    /// The server's resources.
    #[serde(flatten)]
    pub usage: Usage,
}

/// `balanced --json`.
#[derive(Debug, Serialize)]
pub struct BalancedReport {
    /// `"balanced"`.
    pub command: &'static str,
    /// Where it ran.
    pub machine: Machine,
    /// `haproxy -v`'s first line.
    pub haproxy: String,
    /// Clients through the balancer.
    pub clients: usize,
    /// When instance `a` was killed, seconds since the load began.
    pub kill_at_seconds: f64,
    /// The confirmation asked at `a` and answered at `b`.
    pub confirmation: Confirmation,
    /// The calls, by phase and protocol.
    pub groups: Vec<Group>,
    /// Every call that failed, in the order sent.
    pub failures: Vec<Failure>,
    /// What HAProxy logged.
    pub balancer_log: BalancerLog,
}

/// HAProxy's log, summed up: with the shipped configuration it has a line for each request
/// that went wrong or was sent again elsewhere, and one for each change of an instance's state.
#[derive(Debug, Default, Serialize)]
pub struct BalancerLog {
    /// Requests logged, by `SERVER STATUS TERMINATION_STATE` and ` redispatched` when HAProxy
    /// sent them to another instance after a failed connection.
    pub requests: BTreeMap<String, u64>,
    /// The lines that are not requests: instances going down or up, warnings.
    pub events: Vec<String>,
}

/// A confirmation across instances, under load.
#[derive(Debug, Default, Serialize)]
pub struct Confirmation {
    /// Seconds since the load began when it was asked.
    pub at_seconds: f64,
    /// `a` answered with a question (`input_required`).
    pub asked: bool,
    /// `b` ran the call when given the answer, and the file is there.
    pub ran_at_other_instance: bool,
    /// The same answer sent again (through the balancer) was refused as already used.
    pub replay_refused: bool,
    /// What went wrong, when something did.
    pub problem: Option<String>,
}

/// A call through the balancer that failed.
#[derive(Debug, Serialize)]
pub struct Failure {
    /// The client's protocol revision.
    pub protocol: &'static str,
    /// When it was sent, milliseconds after the kill (negative: before it).
    pub sent_ms_after_kill: f64,
    /// When it failed, milliseconds after the kill.
    pub failed_ms_after_kill: f64,
    /// How (see `client::CallError::kind`).
    pub kind: String,
    /// Whether a client may send it again (see `client::CallError::retriable`).
    pub retriable: bool,
}

/// Calls of one protocol in one phase of the balanced run.
#[derive(Debug, Serialize)]
pub struct Group {
    /// `before` the kill (answered before it), `in_flight` (sent before it, answered after),
    /// `noticing` (sent in the 5 s after it, while the balancer's checks notice) or `after`.
    pub phase: &'static str,
    /// The clients' protocol revision.
    pub protocol: &'static str,
    /// What the calls came to.
    #[serde(flatten)]
    pub summary: Summary,
    /// Good calls by the instance that answered them.
    pub served_by: BTreeMap<String, u64>,
}

/// `report` as JSON on stdout, or `table` (Markdown) under a line saying where it ran when
/// not `json`.
pub fn emit(
    report: &impl Serialize,
    machine: &Machine,
    json: bool,
    table: impl FnOnce() -> String,
) {
    if json {
        println!("{}", serde_json::to_string_pretty(report).expect("reports serialize"));
    } else {
        println!(
            "{} on {} cores (load average {})\n\n{}",
            machine.reach,
            machine.cores,
            machine.load_average,
            table()
        );
    }
}

/// `| a | b |` lines: a header, its rule, then `rows`.
pub fn markdown(header: &[&str], rows: impl IntoIterator<Item = Vec<String>>) -> String {
    let line = |cells: &[String]| format!("| {} |", cells.join(" | "));
    let mut out = vec![
        line(&header.iter().map(|h| (*h).to_owned()).collect::<Vec<_>>()),
        line(&vec!["---".to_owned(); header.len()]),
    ];
    out.extend(rows.into_iter().map(|row| line(&row)));
    out.join("\n")
}

/// `1234567` as `1,234,567`, as the book writes figures.
pub fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, digit) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(digit);
    }
    out
}

/// A latency in milliseconds, to two decimals below 10 ms.
pub fn ms(value: f64) -> String {
    if value < 10.0 { format!("{value:.2}") } else { format!("{value:.1}") }
}
