//! What a skill costs by the language it is written in, measured in one run:
//!
//! - a trivial tool's call in a fresh instance: Rust (`echo.echo`), Python
//!   and JavaScript (`misbehave_py.flood` / `misbehave_js.flood` with
//!   `kib = 0`, which returns an empty string);
//! - each component's compile time (once, no cache) and its load time from a
//!   warm compile cache;
//! - start-up to skills listed with every bundled skill (Rust, Python and
//!   JavaScript) on a warm cache, and the host's RSS with them loaded.
//!
//! Needs the skills built: `just bench` does that first. At the end it
//! prints the figures the book's Performance chapter
//! (docs/src/performance.md) quotes.

mod common;
#[path = "common/host_over.rs"]
mod host_over;
#[path = "common/status.rs"]
mod status;

use agent_reach::AlwaysConfirm;
use agent_reach::policy::Policy;
use agent_reach::registry::Registry;
use agent_reach::runtime::{LoadSource, Runtime, RuntimeConfig};
use agent_reach_tests::guests::{self, Guest};
use common::{median, root};
use criterion::{Criterion, criterion_group};
use host_over::{Setup, host_over};
use status::status_kib;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The three trivial tools: (label, skill, tool, arguments).
const TRIVIAL: [(&str, &str, &str, &str); 3] = [
    ("rust", "echo", "echo", r#"{"kib":0}"#),
    ("python", "misbehave_py", "flood", r#"{"kib":0}"#),
    ("javascript", "misbehave_js", "flood", r#"{"kib":0}"#),
];

/// The compile cache every part of this bench shares once warm.
fn cache_dir() -> PathBuf {
    root().join("target/bench-compile-cache")
}

/// The bundled skills folder `just skills` fills, copied into a temporary
/// folder so nothing the host writes lands in the checkout.
fn bundled() -> tempfile::TempDir {
    let from = root().join("skills");
    let dir = tempfile::tempdir().unwrap();
    let mut n = 0;
    for entry in std::fs::read_dir(&from).expect("skills/: run `just skills` first") {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|x| x == "wasm") {
            std::fs::copy(&path, dir.path().join(path.file_name().unwrap())).unwrap();
            n += 1;
        }
    }
    for skill in ["data", "feeds", "files", "web"] {
        assert!(dir.path().join(format!("{skill}.wasm")).exists(), "skills/{skill}.wasm");
    }
    assert!(n >= 6, "{n} bundled skills");
    dir
}

/// A folder with the three trivial skills, and a host over it.
fn setup() -> Setup {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("echo.wasm"), agent_reach_tests::echo_variant("echo", "1.0.0"))
        .unwrap();
    for guest in [guests::TEST_SKILL_MISBEHAVE_PY, guests::TEST_SKILL_MISBEHAVE_JS] {
        std::fs::copy(guest.path(), dir.path().join(guest.file_name())).unwrap();
    }
    let table = TRIVIAL
        .iter()
        .map(|(_, skill, _, _)| format!("[skills.{skill}]\nlevel = \"auto\"\n"))
        .collect::<String>();
    let skills = dir.path().to_owned();
    host_over(dir, &skills, &table)
}

fn trivial_call(s: &Setup, skill: &str, tool: &str, args: &str) {
    let out = s.rt.block_on(s.host.invoke(skill, tool, args, &AlwaysConfirm)).unwrap();
    assert!(out.len() < 16, "{skill}.{tool}: {out}");
}

/// Scan `dir` as `reach` does at start: load each component (from the cache
/// when warm) and ask it to describe itself.
fn startup(dir: &Path, rt: &tokio::runtime::Runtime) -> usize {
    let config = RuntimeConfig { cache_dir: Some(cache_dir()), pooling: true };
    let runtime = Runtime::new(config).unwrap();
    let registry = rt.block_on(Registry::scan(&runtime, dir, &Policy::builtin())).unwrap();
    registry.active_skills().len()
}

fn benches(c: &mut Criterion) {
    let s = setup();
    let mut group = c.benchmark_group("trivial_call_fresh_instance");
    for (label, skill, tool, args) in TRIVIAL {
        group.bench_function(label, |b| b.iter(|| trivial_call(&s, skill, tool, args)));
    }
    group.finish();

    let skills = bundled();
    let n = startup(skills.path(), &s.rt);
    let mut group = c.benchmark_group("startup");
    group.sample_size(20);
    group.bench_function(format!("{n}_bundled_skills_warm_cache"), |b| {
        b.iter(|| startup(skills.path(), &s.rt))
    });
    group.finish();
}

/// This process's resident memory in KiB.
fn rss_kib() -> u64 {
    status_kib("VmRSS")
}

fn mib(kib: u64) -> f64 {
    kib as f64 / 1024.0
}

/// Host RSS with every bundled skill loaded and idle, measured in this
/// process before criterion allocates anything; then after 1,000 fresh
/// Python calls, to show instances leave nothing behind. The compile cache is
/// warmed by a child `reach` process first, so compiling does not inflate
/// the figure.
fn rss_report() {
    let skills = bundled();
    let status = Command::new(env!("CARGO_BIN_EXE_reach"))
        .arg("--skills")
        .arg(skills.path())
        .arg("--cache-dir")
        .arg(cache_dir())
        .args(["skills", "list"])
        .current_dir(skills.path())
        .stdout(Stdio::null())
        .status()
        .unwrap();
    assert!(status.success());
    let before = rss_kib();
    let address_space = status_kib("VmSize");
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let config = RuntimeConfig { cache_dir: Some(cache_dir()), pooling: true };
    let runtime = Runtime::new(config).unwrap();
    let registry =
        rt.block_on(Registry::scan(&runtime, skills.path(), &Policy::builtin())).unwrap();
    let n = registry.active_skills().len();
    let loaded = rss_kib();
    // The pool's slots are address space reserved once, not memory: the
    // figure an operator sizing `ulimit -v` needs.
    println!(
        "address space reserved by one engine with its instance pool: {:.0} GiB",
        (status_kib("VmSize").saturating_sub(address_space)) as f64 / (1024.0 * 1024.0)
    );
    println!(
        "host RSS: {:.1} MiB before loading, {:.1} MiB with the {n} bundled skills loaded (idle)",
        mib(before),
        mib(loaded)
    );
    let s = setup();
    let second = rss_kib();
    let (_, skill, tool, args) = TRIVIAL[1];
    trivial_call(&s, skill, tool, args);
    let first = rss_kib();
    for _ in 0..1000 {
        trivial_call(&s, skill, tool, args);
    }
    println!(
        "host RSS with a second host (echo, misbehave_py, misbehave_js) loaded: {:.1} MiB; after \
         its first Python call: {:.1} MiB; after 1,000 more: {:.1} MiB",
        mib(second),
        mib(first),
        mib(rss_kib())
    );
}

/// Every component the figures cover: the bundled skills and the trivial ones.
fn components() -> Vec<(String, PathBuf)> {
    let mut all: Vec<(String, PathBuf)> =
        [guests::TEST_SKILL_ECHO, guests::TEST_SKILL_MISBEHAVE_PY, guests::TEST_SKILL_MISBEHAVE_JS]
            .iter()
            .map(|g: &Guest| (g.skill.to_owned(), g.path()))
            .collect();
    let mut bundled: Vec<PathBuf> = std::fs::read_dir(root().join("skills"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "wasm"))
        .collect();
    bundled.sort();
    for path in bundled {
        all.push((path.file_stem().unwrap().to_string_lossy().into_owned(), path));
    }
    all
}

/// Compile time without a cache (one compile: it is what the first start
/// pays once) and load time from a warm cache (median of 10).
fn compile_and_cache_load(name: &str, path: &Path) -> (Duration, Duration) {
    let cold = Runtime::new(RuntimeConfig { cache_dir: None, pooling: true }).unwrap();
    let started = Instant::now();
    let skill = cold.load(path, || {}).unwrap();
    let compile = started.elapsed();
    assert_eq!(skill.source(), LoadSource::Compiled, "{name}");
    let warm = Runtime::new(RuntimeConfig { cache_dir: Some(cache_dir()), pooling: true }).unwrap();
    warm.load(path, || {}).unwrap();
    let load = median(
        || {
            let skill = warm.load(path, || {}).unwrap();
            assert_eq!(skill.source(), LoadSource::Cache, "{name}");
        },
        10,
    );
    (compile, load)
}

/// One-run summary: the figures and ratios the Performance chapter quotes.
fn summary() {
    let s = setup();
    let mut calls = Vec::new();
    for (label, skill, tool, args) in TRIVIAL {
        for _ in 0..100 {
            trivial_call(&s, skill, tool, args);
        }
        calls.push((label, median(|| trivial_call(&s, skill, tool, args), 1000)));
    }
    let skills = bundled();
    let n = startup(skills.path(), &s.rt);
    let start = median(
        || {
            startup(skills.path(), &s.rt);
        },
        20,
    );
    println!();
    println!("summary (medians, this run):");
    let rust = calls[0].1;
    for (label, call) in &calls {
        println!(
            "  trivial call, fresh instance, {label:<10}: {call:>10.1?}  ({:.1}× Rust)",
            call.as_secs_f64() / rust.as_secs_f64()
        );
    }
    println!("  start-up to skills listed, {n} bundled skills, warm cache: {start:.1?}");
    println!("  per component: size, compile once (no cache), load from a warm cache:");
    for (name, path) in components() {
        let size = std::fs::metadata(&path).unwrap().len();
        let (compile, load) = compile_and_cache_load(&name, &path);
        println!(
            "    {name:<13} {:>6.1} MiB  compile {compile:>8.2?}  cache load {load:>8.2?}  ({:.0}× \
             faster)",
            size as f64 / (1024.0 * 1024.0),
            compile.as_secs_f64() / load.as_secs_f64()
        );
    }
}

criterion_group!(group, benches);

fn main() {
    rss_report();
    group();
    Criterion::default().configure_from_args().final_summary();
    summary();
}
