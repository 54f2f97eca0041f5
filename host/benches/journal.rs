//! What journaling costs a call (`files.write` of 1 KB and 10 MB over an
//! existing file, and a call that writes nothing), each measured with and
//! without a journal in the same run. Every journaled iteration is the
//! first change to its path in a fresh run, so it keeps the prior content
//! (the worst case: later changes to the same path in a run cost nothing).
//!
//! Needs the skills built: `just bench` does that first.

mod common;

use agent_reach::journal::{self, Budget, CallScope, RunJournal};
use agent_reach::policy::Policy;
use agent_reach::runtime::RuntimeConfig;
use agent_reach::{AlwaysConfirm, Host};
use agent_reach_tests::guests;
use common::{median, root};
use criterion::{Criterion, criterion_group};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

struct Setup {
    dir: tempfile::TempDir,
    out: PathBuf,
    host: Host,
    rt: tokio::runtime::Runtime,
    runs: AtomicU64,
}

fn setup() -> Setup {
    let dir = tempfile::tempdir().expect("tempdir");
    let skills = dir.path().join("skills");
    std::fs::create_dir_all(&skills).expect("skills dir");
    let out = dir.path().join("out");
    std::fs::create_dir_all(&out).expect("out dir");
    std::fs::copy(guests::SKILL_FILES.path(), skills.join(guests::SKILL_FILES.file_name()))
        .expect("copy skill");
    let policy = format!(
        "[skills.files]\nlevel = \"auto\"\nwrite = [\"{out}\"]\nmax_output_kb = 65536\n\
         memory_mb = 512\n",
        out = out.display()
    );
    let policy = Policy::parse(&policy, Path::new("bench.toml"), dir.path()).expect("policy");
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("tokio");
    let config =
        RuntimeConfig { cache_dir: Some(root().join("target/bench-compile-cache")), pooling: true };
    let host = rt.block_on(Host::load(config, policy, &skills)).expect("host");
    Setup { dir, out, host, rt, runs: AtomicU64::new(0) }
}

impl Setup {
    /// `files.TOOL ARGS`, in a fresh run's journal when `journaled`.
    fn call(&self, tool: &str, args: &str, journaled: bool) {
        let call = self.host.invoke("files", tool, args, &AlwaysConfirm);
        let out = if journaled {
            let id = format!("r{}", self.runs.fetch_add(1, Ordering::Relaxed));
            let run = RunJournal::new(&self.dir.path().join("journal"), &id, Budget::default());
            let scope = CallScope { run, call: 1, step: 1, worker: None };
            self.rt.block_on(journal::scoped(scope, call))
        } else {
            self.rt.block_on(call)
        };
        out.expect("call");
    }

    fn write_args(&self, name: &str, bytes: usize) -> String {
        let path = self.out.join(name);
        std::fs::write(&path, "p".repeat(bytes)).expect("seed");
        serde_json::json!({"path": path, "content": "n".repeat(bytes)}).to_string()
    }

    fn read_args(&self) -> String {
        let path = self.out.join("read.txt");
        std::fs::write(&path, "r".repeat(1024)).expect("seed");
        serde_json::json!({"path": path}).to_string()
    }
}

fn benches(c: &mut Criterion) {
    let s = setup();
    let small = s.write_args("small.txt", 1024);
    let read = s.read_args();
    let mut group = c.benchmark_group("journal");
    group.sample_size(30).measurement_time(Duration::from_secs(4));
    group.bench_function("write_1kb_plain", |b| b.iter(|| s.call("write", &small, false)));
    group.bench_function("write_1kb_journaled", |b| b.iter(|| s.call("write", &small, true)));
    group.bench_function("read_plain", |b| b.iter(|| s.call("read", &read, false)));
    group.bench_function("read_journaled", |b| b.iter(|| s.call("read", &read, true)));
    group.finish();
}

/// One-run summary: the figures the book's Performance chapter quotes.
fn summary() {
    let s = setup();
    let small = s.write_args("small.txt", 1024);
    let large = s.write_args("large.bin", 10 << 20);
    let read = s.read_args();
    let time = |tool: &str, args: &str, journaled: bool, n: usize| {
        s.call(tool, args, journaled);
        median(|| s.call(tool, args, journaled), n)
    };
    let rows = [
        ("files.write 1 KB", time("write", &small, false, 41), time("write", &small, true, 41)),
        ("files.write 10 MB", time("write", &large, false, 9), time("write", &large, true, 9)),
        (
            "files.read 1 KB (writes nothing)",
            time("read", &read, false, 41),
            time("read", &read, true, 41),
        ),
    ];
    println!();
    println!("summary (medians, this run; journaled = first change to the path in a run):");
    for (what, plain, journaled) in rows {
        println!(
            "  {what}: {plain:?} plain, {journaled:?} journaled = {:.2}x",
            journaled.as_secs_f64() / plain.as_secs_f64()
        );
    }
}

criterion_group!(group, benches);

fn main() {
    group();
    Criterion::default().configure_from_args().final_summary();
    summary();
}
