//! What recording costs a call, and what replaying saves: `web.fetch` of a
//! fixed ~200 KB article served from 127.0.0.1, plain, recorded (the body
//! kept as the skill reads it, written as a blob with its entry), and
//! replayed from that recording (nothing sent), measured in the same run.
//!
//! Needs the skills built: `just bench` does that first.

mod common;

use agent_reach::policy::Policy;
use agent_reach::runtime::RuntimeConfig;
use agent_reach::tape::{self, Mode, Recorder, Tape, TapeScope};
use agent_reach::{AlwaysConfirm, Host};
use agent_reach_tests::guests;
use agent_reach_tests::server::{Response, Server};
use common::{median, root};
use criterion::{Criterion, criterion_group};
use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

struct Setup {
    dir: tempfile::TempDir,
    host: Host,
    args: String,
    rt: tokio::runtime::Runtime,
    runs: AtomicU64,
    _server: Server,
}

fn serve(page: Vec<u8>) -> Server {
    Server::start(move |_| {
        Response::new(200)
            .header("Content-Type", "text/html; charset=utf-8")
            .close()
            .body(page.clone())
    })
}

fn setup() -> Setup {
    let dir = tempfile::tempdir().expect("tempdir");
    let skills = dir.path().join("skills");
    std::fs::create_dir_all(&skills).expect("skills dir");
    std::fs::copy(guests::SKILL_WEB.path(), skills.join(guests::SKILL_WEB.file_name()))
        .expect("copy skill");
    let page = std::fs::read(root().join("tests/fixtures/web/long-article.html")).expect("page");
    let server = serve(page);
    let addr: SocketAddr = server.addr;
    let policy = format!("[skills.web]\nlevel = \"auto\"\nnet = [\"{addr}\"]\n");
    let policy = Policy::parse(&policy, Path::new("bench.toml"), dir.path()).expect("policy");
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("tokio");
    let config =
        RuntimeConfig { cache_dir: Some(root().join("target/bench-compile-cache")), pooling: true };
    let host = rt.block_on(Host::load(config, policy, &skills)).expect("host");
    let args = serde_json::json!({"url": format!("http://{addr}/article"), "max_chars": 100000})
        .to_string();
    Setup { dir, host, args, rt, runs: AtomicU64::new(0), _server: server }
}

impl Setup {
    fn root(&self) -> std::path::PathBuf {
        self.dir.path().join("recordings")
    }

    /// `web.fetch`, in `mode` when given.
    fn fetch(&self, mode: Option<Mode>) -> String {
        let call = self.host.invoke("web", "fetch", &self.args, &AlwaysConfirm);
        let out = match mode {
            Some(mode) => self.rt.block_on(tape::scoped(TapeScope::new(mode, "#1"), call)),
            None => self.rt.block_on(call),
        };
        out.expect("fetch")
    }

    /// A fresh recording's mode, and its run id.
    fn recording(&self) -> (Mode, String) {
        let id = format!("r{}", self.runs.fetch_add(1, Ordering::Relaxed));
        let recorder = Recorder::new(&self.root(), &id, tape::DEFAULT_RECORD_BYTES, Vec::new());
        (Mode::Record(Arc::new(recorder)), id)
    }

    fn recorded(&self) -> String {
        let (mode, id) = self.recording();
        self.fetch(Some(mode));
        id
    }

    /// Replay run `id`'s recording (loaded afresh: each response is given once).
    fn replayed(&self, id: &str) -> String {
        let tape = Tape::load(&self.root(), id, Vec::new()).expect("tape");
        self.fetch(Some(Mode::Replay(Arc::new(tape))))
    }
}

fn benches(c: &mut Criterion) {
    let s = setup();
    let id = s.recorded();
    let mut group = c.benchmark_group("replay");
    group.sample_size(30).measurement_time(Duration::from_secs(4));
    group.bench_function("fetch_plain", |b| b.iter(|| s.fetch(None)));
    group.bench_function("fetch_recorded", |b| b.iter(|| s.recorded()));
    group.bench_function("fetch_replayed", |b| b.iter(|| s.replayed(&id)));
    group.finish();
}

/// One-run summary: the figures the book's Performance chapter quotes.
fn summary() {
    let s = setup();
    let id = s.recorded();
    assert_eq!(s.replayed(&id), s.fetch(None), "the replay gives the same result");
    let plain = median(|| drop(s.fetch(None)), 41);
    let recorded = median(|| drop(s.recorded()), 41);
    let replayed = median(|| drop(s.replayed(&id)), 41);
    println!();
    println!("summary (medians, this run; web.fetch of a 201 KB page from 127.0.0.1):");
    println!("  plain {plain:?}, recorded {recorded:?} = {:.2}x", ratio(recorded, plain));
    println!("  replayed from the recording {replayed:?} = {:.2}x", ratio(replayed, plain));
}

fn ratio(a: Duration, b: Duration) -> f64 {
    a.as_secs_f64() / b.as_secs_f64()
}

criterion_group!(group, benches);

fn main() {
    group();
    Criterion::default().configure_from_args().final_summary();
    summary();
}
