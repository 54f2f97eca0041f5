//! Long-term memory with 100,000 entries, in a SQLite file and in a
//! PostgreSQL database, measured in the same run: full-text search (target
//! ≤ 5 ms), choosing a run's notes within the prompt budget, and adding one
//! entry (one transaction, on disk).
//!
//! The SQLite store is built once (through `import`, one transaction) and
//! kept in `target/bench-memory/`; each run searches a copy of it. The
//! PostgreSQL store is a throwaway cluster on 127.0.0.1 started by the
//! bench, durable as a production server is (every commit flushed), filled
//! with the same entries by the same `import`; a call crosses the loopback
//! to it as it would cross the network to a shared server.

#[path = "../src/memory/postgres/cluster.rs"]
#[expect(dead_code, reason = "the tests' cluster; the bench needs only a database on it")]
mod cluster;
mod common;

use agent_reach::memory::{
    Entry, Kind, MemoryStore, NewEntry, PostgresStore, Provenance, SqliteStore, relevant,
};
use common::{median, root};
use criterion::{Criterion, criterion_group};
use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::time::Duration;

const ENTRIES: usize = 100_000;

#[rustfmt::skip]
const PROJECTS: &[&str] = &[
    "atlas", "beacon", "cobalt", "delta", "ember", "fjord", "granite", "harbor", "iris", "juniper",
    "kestrel", "lumen", "meridian", "nimbus", "onyx", "pioneer", "quartz", "raven", "sierra",
    "tundra", "umbra", "vector", "willow", "xenon", "yarrow", "zephyr", "aurora", "basalt", "cedar",
    "dune", "echo", "falcon", "glacier", "helix", "indigo", "jasper", "koala", "lotus", "magnet",
    "nova", "orbit", "prism", "quill", "ridge", "saffron", "timber", "ultra", "velvet", "wharf",
    "yukon",
];
#[rustfmt::skip]
const SERVICES: &[&str] = &[
    "billing", "search", "auth", "gateway", "scheduler", "mailer", "indexer", "uploader", "reports",
    "metrics", "ledger", "inventory", "checkout", "catalog", "profile", "notifier", "exporter",
    "importer", "crawler", "resizer", "thumbnailer", "webhook", "queue", "cache", "frontend",
    "backend", "admin", "dashboard", "analytics", "payments", "shipping", "pricing",
    "recommendations", "translations", "docs", "wiki", "chat", "calendar", "storage", "backup",
];
#[rustfmt::skip]
const ASPECTS: &[&str] = &[
    "deploy", "staging url", "production url", "api token location", "log format",
    "on-call contact", "database", "release notes", "changelog style", "test command",
    "build command", "port", "health check", "rate limit", "timeout", "retry policy", "owner",
    "dashboard link", "alert channel", "config file", "secrets store", "branch naming",
    "review rules", "code style", "license",
];
#[rustfmt::skip]
const TASK_TYPES: &[&str] = &[
    "save-page", "deploy", "summarize-logs", "write-notes", "api-call", "review", "release",
    "debug", "search", "report",
];
#[rustfmt::skip]
const WORDS: &[&str] = &[
    "always", "never", "prefer", "use", "avoid", "check", "run", "before", "after", "merging",
    "pushing", "tagging", "weekly", "nightly", "markdown", "json", "yaml", "toml", "csv",
    "headings", "bullets", "tables", "wrapped", "columns", "lowercase", "kebab", "snake", "camel",
    "english", "british", "spelling", "terse", "detailed", "summary", "timestamps", "utc", "local",
    "time", "zone", "friday", "monday", "morning", "evening", "slack", "email", "pager", "ticket",
    "jira", "github", "gitlab", "pull", "request", "squash", "rebase", "commit", "signed",
    "message", "imperative", "mood", "present", "tense", "tests", "coverage", "lint", "clippy",
    "format", "rustfmt", "prettier", "black", "docker", "compose", "kubernetes", "helm", "chart",
    "terraform", "ansible", "nginx", "caddy", "postgres", "sqlite", "redis", "kafka", "rabbitmq",
    "s3", "bucket", "region", "eu", "west", "east", "replica", "primary", "failover", "snapshot",
    "restore", "vacuum", "index", "migration", "schema", "version", "semver", "major", "minor",
    "patch", "hotfix", "rollback", "canary", "blue", "green", "feature", "flag", "toggle",
    "experiment", "metric", "latency", "p99", "throughput", "errors", "budget", "slo", "alert",
    "threshold", "grafana", "prometheus", "loki", "sentry", "trace", "span", "header", "bearer",
    "oauth", "scope", "read", "write", "admin", "user", "quota", "limit", "page", "cursor",
    "offset", "batch", "size", "gzip", "brotli", "utf8", "encoding", "locale", "currency", "euro",
    "dollar", "invoice", "receipt", "refund", "customer", "account", "session", "cookie", "cors",
    "csrf", "tls", "certificate", "renew", "letsencrypt", "dns", "record", "cname", "ttl", "proxy",
    "cdn", "edge", "worker", "cron", "job", "queue", "backoff", "jitter",
];

/// A deterministic, varied entry: subjects are unique per kind, texts mix
/// templates with names, numbers and ordinary words.
fn entry(i: usize, rng: &mut fastrand::Rng) -> Entry {
    let kind = [Kind::Fact, Kind::Preference, Kind::Procedure][i % 3];
    let rest = i / 3;
    let project = PROJECTS[rest % PROJECTS.len()];
    let service = SERVICES[rest / PROJECTS.len() % SERVICES.len()];
    let aspect = ASPECTS[rest / (PROJECTS.len() * SERVICES.len()) % ASPECTS.len()];
    let words = |rng: &mut fastrand::Rng, n: usize| {
        (0..n).map(|_| WORDS[rng.usize(..WORDS.len())]).collect::<Vec<_>>().join(" ")
    };
    let text = match rng.usize(..6) {
        0 => format!(
            "The {service} {aspect} for {project} is \
             https://{service}.{project}.example.com:{}/v{}",
            rng.u16(1024..65000),
            rng.u8(1..5)
        ),
        1 => format!(
            "For {project}, {} when working on {service}: {}.",
            words(rng, 3),
            words(rng, 8)
        ),
        2 => format!(
            "To handle the {aspect} of {service} in {project}: run `just {service}-{}`, then {}, \
             then {}.",
            words(rng, 1),
            words(rng, 4),
            words(rng, 5)
        ),
        3 => format!(
            "{project}/{service} {aspect}: {} ({} since v{}.{}).",
            words(rng, 10),
            words(rng, 2),
            rng.u8(0..9),
            rng.u8(0..30)
        ),
        4 => format!(
            "Ask {} in #{project}-{service} about the {aspect}; {}.",
            ["ana", "bo", "chen", "dara", "eli", "farah"][rng.usize(..6)],
            words(rng, 12)
        ),
        _ => format!("{service} on {project}: {} {} {}", words(rng, 6), aspect, words(rng, 6)),
    };
    let provenance = if rng.bool() {
        Provenance::User {
            run_id: Some(format!(
                "20261{:03}T{:06}Z-{:06x}",
                rng.u16(100..999),
                rng.u32(0..235959),
                rng.u32(..0xffffff)
            )),
            step: Some(rng.u32(1..9)),
        }
    } else {
        Provenance::Tool {
            run_id: format!(
                "20261{:03}T{:06}Z-{:06x}",
                rng.u16(100..999),
                rng.u32(0..235959),
                rng.u32(..0xffffff)
            ),
            step: rng.u32(1..20),
            tool: Some("http_api__get".into()),
        }
    };
    Entry {
        id: i as i64 + 1,
        kind,
        subject: format!("{project} {service} {aspect}"),
        text,
        task_type: (rng.u8(..10) < 3).then(|| TASK_TYPES[rng.usize(..TASK_TYPES.len())].to_owned()),
        provenance,
        created: format!(
            "2026-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z",
            1 + i * 11 / ENTRIES,
            1 + i % 28,
            i % 24,
            i % 60,
            (i / 60) % 60,
            i % 1000
        ),
        last_used: None,
        use_count: 0,
        supersedes: None,
        superseded_by: None,
    }
}

/// The 100,000-entry database, built once and reused by later runs.
fn built() -> PathBuf {
    let dir = root().join("target/bench-memory");
    let path = dir.join(format!("memory-{ENTRIES}-v1.db"));
    if path.exists()
        && SqliteStore::open(&path).and_then(|s| s.list(false)).is_ok_and(|l| l.len() == ENTRIES)
    {
        return path;
    }
    let _ = std::fs::remove_file(&path);
    let mut rng = fastrand::Rng::with_seed(7);
    let entries: Vec<Entry> = (0..ENTRIES).map(|i| entry(i, &mut rng)).collect();
    let store = SqliteStore::open(&path).expect("open");
    let started = std::time::Instant::now();
    let report = store.import(&entries, "bench.jsonl").expect("import");
    assert_eq!(report.added, ENTRIES);
    println!("built {} ({ENTRIES} entries, one import) in {:?}", path.display(), started.elapsed());
    path
}

/// Tasks as a user would write them.
const TASKS: &[(&str, Option<&str>)] = &[
    (
        "Save https://blog.example.com/post about the atlas billing outage as Markdown in notes/",
        Some("save-page"),
    ),
    (
        "Deploy the search service of project nimbus to staging and check its health endpoint",
        Some("deploy"),
    ),
    (
        "Summarize the errors in logs/gateway.log from last night for the cobalt on-call",
        Some("summarize-logs"),
    ),
    ("What is the rate limit of the pricing API for sierra?", None),
    (
        "Write release notes for kestrel checkout v2.3 in the changelog style we use",
        Some("release"),
    ),
    ("Find who owns the mailer in harbor and how to reach them", None),
    ("Call the inventory API of granite with the token and list the first page", Some("api-call")),
    ("Fix the flaky test command for orbit reports before Friday", Some("debug")),
];

fn copy_of(built: &Path) -> (tempfile::TempDir, SqliteStore) {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("memory.db");
    std::fs::copy(built, &path).expect("copy");
    let store = SqliteStore::open(&path).expect("open");
    (dir, store)
}

/// The same 100,000 entries in a database on a new durable cluster (kept
/// for the life of the process).
fn postgres() -> PostgresStore {
    static CLUSTER: std::sync::OnceLock<cluster::Cluster> = std::sync::OnceLock::new();
    let cluster =
        CLUSTER.get_or_init(|| cluster::Cluster::start(true).unwrap_or_else(|e| panic!("{e}")));
    let url = cluster.database();
    let store = PostgresStore::connect(&url, Some(cluster::PASSWORD)).expect("connect");
    let mut rng = fastrand::Rng::with_seed(7);
    let entries: Vec<Entry> = (0..ENTRIES).map(|i| entry(i, &mut rng)).collect();
    let started = std::time::Instant::now();
    assert_eq!(store.import(&entries, "bench.jsonl").expect("import").added, ENTRIES);
    println!("built {url} ({ENTRIES} entries, one import) in {:?}", started.elapsed());
    store
}

/// Both stores: (name, store, what keeps it alive).
fn stores() -> Vec<(&'static str, Box<dyn MemoryStore>, Option<tempfile::TempDir>)> {
    let (dir, sqlite) = copy_of(&built());
    vec![("SQLite", Box::new(sqlite), Some(dir)), ("PostgreSQL", Box::new(postgres()), None)]
}

fn add_one(store: &dyn MemoryStore, n: usize) {
    let provenance = Provenance::User { run_id: None, step: None };
    let note = NewEntry {
        kind: Kind::Fact,
        subject: format!("bench note {n}"),
        text: format!("bench text {n} about staging"),
        task_type: None,
        provenance,
    };
    black_box(store.add(note).expect("add"));
}

fn benches(c: &mut Criterion) {
    for (name, store, _keep) in stores() {
        let store = &*store;
        let mut n = 0;
        c.bench_function(&format!("memory search, 100k entries, top 10, {name}"), |b| {
            b.iter(|| {
                n += 1;
                let (task, task_type) = TASKS[n % TASKS.len()];
                black_box(store.search(task, task_type, 10).expect("search"))
            })
        });
        c.bench_function(
            &format!("memory relevant (search + 300-token budget), 100k entries, {name}"),
            |b| {
                b.iter(|| {
                    n += 1;
                    let (task, task_type) = TASKS[n % TASKS.len()];
                    black_box(relevant(store, task, task_type, 300).expect("relevant"))
                })
            },
        );
        c.bench_function(&format!("memory add, 100k entries, on disk, {name}"), |b| {
            b.iter(|| {
                n += 1;
                add_one(store, n);
            })
        });
    }
}

/// Medians for one store: search (every task in turn), each task, add.
struct Figures {
    search: Duration,
    each: Vec<(usize, Duration)>,
    add: Duration,
}

fn figures(store: &dyn MemoryStore) -> Figures {
    let mut n = 0;
    let mut hits = 0;
    let search = median(
        || {
            n += 1;
            let (task, task_type) = TASKS[n % TASKS.len()];
            hits += store.search(task, task_type, 10).expect("search").len();
        },
        401,
    );
    assert!(hits > 0, "the tasks match entries");
    let each = TASKS
        .iter()
        .map(|(task, task_type)| {
            (
                store.search(task, *task_type, 10).expect("search").len(),
                median(|| drop(store.search(task, *task_type, 10)), 51),
            )
        })
        .collect();
    let add = median(
        || {
            n += 1;
            add_one(store, 1_000_000 + n);
        },
        101,
    );
    Figures { search, each, add }
}

/// Medians, both stores side by side, printed together at the end.
fn summary() {
    let measured: Vec<(&str, Figures)> =
        stores().into_iter().map(|(name, store, _keep)| (name, figures(&*store))).collect();
    let [(_, sqlite), (_, pg)] = &measured[..] else { unreachable!("two stores") };
    let ratio = |a: Duration, b: Duration| b.as_secs_f64() / a.as_secs_f64();
    println!();
    println!(
        "summary (medians, this run, {ENTRIES} entries; SQLite file | PostgreSQL on 127.0.0.1):"
    );
    println!(
        "  search, top 10, {} task descriptions in turn: {:?} | {:?} ({:.1}x) (target ≤ 5 ms)",
        TASKS.len(),
        sqlite.search,
        pg.search,
        ratio(sqlite.search, pg.search)
    );
    for (i, (task, _)) in TASKS.iter().enumerate() {
        let ((found, a), (found_pg, b)) = (sqlite.each[i], pg.each[i]);
        println!(
            "    {a:>10.3?} {found:>2} found | {b:>10.3?} {found_pg:>2} found  {}",
            agent_reach::text::shorten_chars(task, 60)
        );
    }
    println!(
        "  add one entry (one transaction, flushed to disk): {:?} | {:?} ({:.1}x)",
        sqlite.add,
        pg.add,
        ratio(sqlite.add, pg.add)
    );
}

criterion_group!(group, benches);

fn main() {
    group();
    Criterion::default().configure_from_args().final_summary();
    summary();
}
