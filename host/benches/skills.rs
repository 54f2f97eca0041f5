//! The bundled skills at work, in their sandboxes:
//!
//! - `web.to_markdown` on a fixed ~200 KB article served from 127.0.0.1,
//!   against the same job done natively with the same conversion code
//!   (`web-convert`): GET over a plain socket, convert, write the file. The
//!   ratio is the price of the sandbox for a real, CPU-heavy tool.
//! - `logs.top` throughput on a generated 200 MB nginx access log.
//!
//! Needs the skills built: `just bench` does that first.

mod common;

use agent_reach::policy::Policy;
use agent_reach::runtime::RuntimeConfig;
use agent_reach::{AlwaysConfirm, Host};
use agent_reach_tests::guests;
use agent_reach_tests::server::{Response, Server};
use common::{median, root};
use criterion::{Criterion, criterion_group};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Size of the generated log.
const LOG_BYTES: u64 = 200 * 1024 * 1024;

fn article() -> Vec<u8> {
    std::fs::read(root().join("tests/fixtures/web/long-article.html"))
        .expect("tests/fixtures/web/long-article.html")
}

/// Serve `page` as text/html on 127.0.0.1 to any GET.
fn serve(page: Vec<u8>) -> SocketAddr {
    let server = Server::start(move |_| {
        Response::new(200)
            .header("Content-Type", "text/html; charset=utf-8")
            .close()
            .body(page.clone())
    });
    server.addr
}

/// The native job: GET over a socket, convert with the skill's own code, write.
fn native_to_markdown(addr: SocketAddr, out_dir: &Path) -> usize {
    let mut stream = TcpStream::connect(addr).expect("connect");
    write!(stream, "GET /article HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n")
        .expect("send");
    let mut response = Vec::new();
    stream.read_to_end(&mut response).expect("read");
    let split = response.windows(4).position(|w| w == b"\r\n\r\n").expect("head") + 4;
    let url = format!("http://{addr}/article");
    let article =
        web_convert::convert_response(&response[split..], Some("text/html; charset=utf-8"), &url)
            .expect("convert");
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let document = article.to_document(web_convert::Provenance {
        url: &url,
        fetched_at: secs,
        truncated: false,
    });
    std::fs::write(out_dir.join("native.md"), &document).expect("write");
    document.len()
}

struct Setup {
    _dir: tempfile::TempDir,
    out: PathBuf,
    addr: SocketAddr,
    host: Host,
    rt: tokio::runtime::Runtime,
}

fn setup() -> Setup {
    let dir = tempfile::tempdir().expect("tempdir");
    let skills = dir.path().join("skills");
    std::fs::create_dir_all(&skills).expect("skills dir");
    let out = dir.path().join("out");
    std::fs::create_dir_all(&out).expect("out dir");
    for guest in [guests::SKILL_WEB, guests::SKILL_LOGS] {
        std::fs::copy(guest.path(), skills.join(guest.file_name())).expect("copy skill");
    }
    let addr = serve(article());
    let log_dir = log_file().parent().expect("log folder").to_owned();
    let policy = format!(
        "[skills.web]\nlevel = \"auto\"\nnet = [\"{addr}\"]\nwrite = [\"{out}\"]\n\n\
         [skills.logs]\nlevel = \"auto\"\nread = [\"{logs}\"]\ntimeout_ms = 600000\n",
        out = out.display(),
        logs = log_dir.display()
    );
    let policy = Policy::parse(&policy, Path::new("bench.toml"), dir.path()).expect("policy");
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("tokio");
    let config =
        RuntimeConfig { cache_dir: Some(root().join("target/bench-compile-cache")), pooling: true };
    let host = rt.block_on(Host::load(config, policy, &skills)).expect("host");
    Setup { _dir: dir, out, addr, host, rt }
}

fn sandboxed_to_markdown(s: &Setup) -> usize {
    let args = serde_json::json!({
        "url": format!("http://{}/article", s.addr),
        "path": s.out.join("sandboxed.md"),
    })
    .to_string();
    let out =
        s.rt.block_on(s.host.invoke("web", "to_markdown", &args, &AlwaysConfirm))
            .expect("to_markdown");
    let reply: serde_json::Value = serde_json::from_str(&out).expect("reply");
    reply["chars"].as_u64().expect("chars") as usize
}

/// A deterministic nginx combined log of [`LOG_BYTES`], written once and
/// kept under `target/bench-data`.
fn log_file() -> PathBuf {
    let path = root().join("target/bench-data/access-200mb.log");
    if std::fs::metadata(&path).is_ok_and(|m| m.len() >= LOG_BYTES) {
        return path;
    }
    std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
    let tmp = path.with_extension("tmp");
    let mut out = std::io::BufWriter::new(std::fs::File::create(&tmp).expect("create log"));
    let endpoints = [
        "/",
        "/api/v1/users",
        "/api/v1/orders",
        "/static/app.js",
        "/login",
        "/api/v1/search",
        "/health",
    ];
    let statuses = [200, 200, 200, 200, 304, 404, 500, 502, 201, 301];
    let mut written = 0u64;
    let mut i = 0u64;
    while written < LOG_BYTES {
        let line = format!(
            "10.{}.{}.{} - - [01/Dec/2026:{:02}:{:02}:{:02} +0000] \"GET {}?id={} HTTP/1.1\" {} {} \
             \"-\" \"Mozilla/5.0 (X11; Linux x86_64)\"\n",
            i % 7,
            i % 251,
            i % 13,
            (i / 3600) % 24,
            (i / 60) % 60,
            i % 60,
            endpoints[(i % 7) as usize],
            i % 1000,
            statuses[(i % 10) as usize],
            100 + i % 5000
        );
        out.write_all(line.as_bytes()).expect("write log");
        written += line.len() as u64;
        i += 1;
    }
    out.flush().expect("flush");
    drop(out);
    std::fs::rename(&tmp, &path).expect("rename log");
    path
}

fn logs_top(s: &Setup) -> serde_json::Value {
    let args = serde_json::json!({"path": log_file(), "field": "endpoint"}).to_string();
    let out = s.rt.block_on(s.host.invoke("logs", "top", &args, &AlwaysConfirm)).expect("logs.top");
    serde_json::from_str(&out).expect("reply")
}

fn benches(c: &mut Criterion) {
    let s = setup();
    let mut group = c.benchmark_group("to_markdown_200kb");
    group.sample_size(20).measurement_time(Duration::from_secs(8));
    group.bench_function("sandboxed_skill", |b| b.iter(|| sandboxed_to_markdown(&s)));
    group.bench_function("native_same_code", |b| b.iter(|| native_to_markdown(s.addr, &s.out)));
    group.finish();
}

/// One-run summary: the figures the book's Performance chapter
/// (docs/src/performance.md) quotes.
fn summary() {
    let s = setup();
    let chars = sandboxed_to_markdown(&s);
    let native_chars = native_to_markdown(s.addr, &s.out);
    let sandboxed = median(
        || {
            sandboxed_to_markdown(&s);
        },
        31,
    );
    let native = median(
        || {
            native_to_markdown(s.addr, &s.out);
        },
        31,
    );
    let log = log_file();
    let top = logs_top(&s);
    let log_mb = std::fs::metadata(&log).expect("log").len() as f64 / 1e6;
    let top_time = median(|| drop(logs_top(&s)), 3);
    println!();
    println!("summary (medians, this run):");
    println!(
        "  web.to_markdown, 200 KB article, sandboxed skill: {sandboxed:?} ({chars} chars of \
         Markdown)"
    );
    println!(
        "  same job natively with the same code (web-convert): {native:?} ({native_chars} bytes \
         written)"
    );
    println!(
        "  sandbox overhead: {:.2}x the native time",
        sandboxed.as_secs_f64() / native.as_secs_f64()
    );
    println!(
        "  logs.top by endpoint, {log_mb:.0} MB nginx log: {top_time:?} = {:.0} MB/s (top: {})",
        log_mb / top_time.as_secs_f64(),
        top.get("top")
            .or(top.get("entries"))
            .map_or_else(|| top.to_string(), |t| t.to_string())
            .chars()
            .take(120)
            .collect::<String>()
    );
}

criterion_group!(group, benches);

fn main() {
    group();
    Criterion::default().configure_from_args().final_summary();
    summary();
}
