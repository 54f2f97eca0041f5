//! Per-call cost of a sandboxed tool call against spawning a native process,
//! start-up with 20 skills on a warm compile cache, and host RSS.
//!
//! Needs the test skills: `just bench` builds them first.
//! At the end it prints the ratios quoted in the book's Performance chapter
//! (docs/src/performance.md), measured in this run.

mod common;
#[path = "common/host_over.rs"]
mod host_over;
#[path = "common/status.rs"]
mod status;

use agent_reach::AlwaysConfirm;
use agent_reach::policy::Policy;
use agent_reach::registry::Registry;
use agent_reach::runtime::{Runtime, RuntimeConfig};
use common::{median, root};
use criterion::{Criterion, criterion_group};
use host_over::{Setup, host_over};
use status::status_kib;
use std::io::{Read, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Instant;

/// The echo skill renamed in place (see tests/skills/echo).
fn echo_named(name: &str) -> Vec<u8> {
    agent_reach_tests::echo_variant(name, "1.0.0")
}

/// A JSON object of about 1 KB.
fn payload() -> String {
    let items: Vec<String> =
        (0..20).map(|i| format!("\"key{i:02}\": \"{}\"", "v".repeat(38))).collect();
    let json = format!("{{{}}}", items.join(", "));
    assert!((1000..1100).contains(&json.len()), "{}", json.len());
    json
}

fn setup() -> Setup {
    let dir = tempfile::tempdir().unwrap();
    let skills = dir.path().join("skills");
    std::fs::create_dir_all(&skills).unwrap();
    std::fs::create_dir_all(dir.path().join("data")).unwrap();
    std::fs::write(skills.join("echo.wasm"), echo_named("echo")).unwrap();
    // Policy applied: a granted folder, so each call preopens it.
    host_over(dir, &skills, "[skills.echo]\nlevel = \"auto\"\nread = [\"./data\"]\n")
}

fn sandboxed_call(s: &Setup, args: &str) {
    let out = s.rt.block_on(s.host.invoke("echo", "echo", args, &AlwaysConfirm)).unwrap();
    assert!(out.len() > 900);
}

fn native_spawn(args: &str) {
    let mut child =
        Command::new("cat").stdin(Stdio::piped()).stdout(Stdio::piped()).spawn().unwrap();
    child.stdin.take().unwrap().write_all(args.as_bytes()).unwrap();
    let mut out = String::new();
    child.stdout.take().unwrap().read_to_string(&mut out).unwrap();
    child.wait().unwrap();
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert!(v.is_object());
}

fn twenty_skills() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for i in 0..20 {
        std::fs::write(
            dir.path().join(format!("bench{i:02}.wasm")),
            echo_named(&format!("bench{i:02}")),
        )
        .unwrap();
    }
    dir
}

fn startup(dir: &Path, rt: &tokio::runtime::Runtime) -> usize {
    let config =
        RuntimeConfig { cache_dir: Some(root().join("target/bench-compile-cache")), pooling: true };
    let runtime = Runtime::new(config).unwrap();
    let registry = rt.block_on(Registry::scan(&runtime, dir, &Policy::builtin())).unwrap();
    registry.active_skills().len()
}

fn benches(c: &mut Criterion) {
    let s = setup();
    let args = payload();
    let mut group = c.benchmark_group("tool_call_1kb_json");
    group.bench_function("sandboxed_fresh_instance", |b| b.iter(|| sandboxed_call(&s, &args)));
    group.bench_function("native_process_spawn", |b| b.iter(|| native_spawn(&args)));
    group.finish();

    let skills = twenty_skills();
    assert_eq!(startup(skills.path(), &s.rt), 20, "warm the cache");
    let mut group = c.benchmark_group("startup");
    group.sample_size(20);
    group.bench_function("20_skills_warm_cache", |b| b.iter(|| startup(skills.path(), &s.rt)));
    group.finish();
}

/// One-run summary: the ratios the book's Performance chapter
/// (docs/src/performance.md) quotes.
fn summary() {
    let s = setup();
    let args = payload();
    for _ in 0..200 {
        sandboxed_call(&s, &args);
    }
    let call = median(|| sandboxed_call(&s, &args), 2000);
    let spawn = median(|| native_spawn(&args), 300);
    let skills = twenty_skills();
    startup(skills.path(), &s.rt);
    let start = median(
        || {
            startup(skills.path(), &s.rt);
        },
        30,
    );
    // The part of start-up that proves each cache entry is the host's own:
    // reading it whole and computing its keyed tag (a fixed key here).
    let entries: Vec<std::path::PathBuf> =
        std::fs::read_dir(root().join("target/bench-compile-cache"))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|x| x == "cwasm"))
            .take(20)
            .collect();
    let check = median(
        || {
            for path in &entries {
                let bytes = std::fs::read(path).unwrap();
                std::hint::black_box(blake3::keyed_hash(&[7; 32], &bytes));
            }
        },
        30,
    );
    println!();
    println!("summary (medians, this run):");
    println!("  sandboxed call, fresh instance, 1 KB JSON: {call:?}");
    println!("  native process spawn (cat), 1 KB JSON:     {spawn:?}");
    println!(
        "  ratio: the sandboxed call costs 1/{:.0} of a process spawn",
        spawn.as_secs_f64() / call.as_secs_f64()
    );
    println!("  start-up to skills listed, 20 skills, warm cache: {start:?}");
    println!("    of which reading and tag-checking the 20 cache entries: {check:?}");
    println!("  calls per second, one thread: {:.0}", 1.0 / call.as_secs_f64());
    println!("  calls per second, two threads sharing one host: {:.0}", two_threads(&s, &args));
}

/// Fresh-instance calls per second from two threads sharing one `Host`,
/// each driving its own single-threaded tokio runtime (the 2-core target).
fn two_threads(s: &Setup, args: &str) -> f64 {
    const PER_THREAD: usize = 20_000;
    let started = Instant::now();
    std::thread::scope(|scope| {
        for _ in 0..2 {
            scope.spawn(|| {
                let rt =
                    tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
                for _ in 0..PER_THREAD {
                    let out =
                        rt.block_on(s.host.invoke("echo", "echo", args, &AlwaysConfirm)).unwrap();
                    assert!(out.len() > 900);
                }
            });
        }
    });
    (2 * PER_THREAD) as f64 / started.elapsed().as_secs_f64()
}

/// Host RSS with 20 skills loaded and idle, measured in this process before
/// criterion allocates anything. The compile cache is warmed by a child
/// `reach` process first, so compiling does not inflate the figure.
fn rss_report() {
    let skills = twenty_skills();
    let cache = root().join("target/bench-compile-cache");
    let status = Command::new(env!("CARGO_BIN_EXE_reach"))
        .arg("--skills")
        .arg(skills.path())
        .arg("--cache-dir")
        .arg(&cache)
        .args(["skills", "list"])
        // `skills list` records what it showed in .reach/ beside the
        // (absent) table: keep that in the temporary folder.
        .current_dir(skills.path())
        .stdout(Stdio::null())
        .status()
        .unwrap();
    assert!(status.success());
    let before = status_kib("VmRSS");
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let config = RuntimeConfig { cache_dir: Some(cache), pooling: true };
    let runtime = Runtime::new(config).unwrap();
    let registry =
        rt.block_on(Registry::scan(&runtime, skills.path(), &Policy::builtin())).unwrap();
    assert_eq!(registry.active_skills().len(), 20);
    let after = status_kib("VmRSS");
    println!(
        "host RSS: {:.1} MiB before loading, {:.1} MiB with 20 skills loaded (idle)",
        before as f64 / 1024.0,
        after as f64 / 1024.0
    );
}

criterion_group!(group, benches);

fn main() {
    rss_report();
    group();
    Criterion::default().configure_from_args().final_summary();
    summary();
}
