//! Long-term memory with 100,000 entries in a SQLite file: full-text search
//! (target ≤ 5 ms), choosing a run's notes within the prompt budget, and
//! adding one entry (one transaction on disk).
//!
//! The store is built once (through `import`, one transaction) and kept in
//! `target/bench-memory/`; each run searches a copy of it.

mod common;

use agent_reach::memory::{Entry, Kind, MemoryStore, NewEntry, Provenance, SqliteStore, relevant};
use common::{median, root};
use criterion::{Criterion, criterion_group};
use std::hint::black_box;
use std::path::{Path, PathBuf};

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

fn benches(c: &mut Criterion) {
    let db = built();
    let (_dir, store) = copy_of(&db);
    let mut n = 0;
    c.bench_function("memory search, 100k entries, top 10", |b| {
        b.iter(|| {
            n += 1;
            let (task, task_type) = TASKS[n % TASKS.len()];
            black_box(store.search(task, task_type, 10).expect("search"))
        })
    });
    c.bench_function("memory relevant (search + 300-token budget), 100k entries", |b| {
        b.iter(|| {
            n += 1;
            let (task, task_type) = TASKS[n % TASKS.len()];
            black_box(relevant(&store, task, task_type, 300).expect("relevant"))
        })
    });
    c.bench_function("memory add, 100k entries, on disk", |b| {
        b.iter(|| {
            n += 1;
            let provenance = Provenance::User { run_id: None, step: None };
            black_box(
                store
                    .add(NewEntry {
                        kind: Kind::Fact,
                        subject: format!("bench note {n}"),
                        text: format!("bench text {n} about staging"),
                        task_type: None,
                        provenance,
                    })
                    .expect("add"),
            )
        })
    });
}

/// Medians, printed together at the end.
fn summary() {
    let db = built();
    let (_dir, store) = copy_of(&db);
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
    let each: Vec<(usize, std::time::Duration)> = TASKS
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
            let provenance = Provenance::User { run_id: None, step: None };
            store
                .add(NewEntry {
                    kind: Kind::Fact,
                    subject: format!("summary note {n}"),
                    text: "summary text".into(),
                    task_type: None,
                    provenance,
                })
                .expect("add");
        },
        101,
    );
    println!();
    println!("summary (medians, this run, {ENTRIES} entries in a SQLite file):");
    println!(
        "  search, top 10, {} task descriptions in turn: {search:?} (target ≤ 5 ms)",
        TASKS.len()
    );
    for ((task, _), (found, time)) in TASKS.iter().zip(each) {
        println!(
            "    {time:>10.3?}  {found:>2} found  {}",
            agent_reach::text::shorten_chars(task, 60)
        );
    }
    println!("  add one entry (one transaction, synced to disk): {add:?}");
}

criterion_group!(group, benches);

fn main() {
    group();
    Criterion::default().configure_from_args().final_summary();
    summary();
}
