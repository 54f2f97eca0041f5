//! What a store holds for one call: the WASI context built from the grants,
//! the HTTP hooks, the memory guard and the captured stdio.

use super::net::NetGuard;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use tokio::io::AsyncWrite;
use wasmtime::ResourceLimiter;
use wasmtime::component::ResourceTable;
use wasmtime_wasi::cli::{IsTerminal, StdoutStream};
use wasmtime_wasi::{WasiCtx, WasiCtxView, WasiView};
use wasmtime_wasi_http::{WasiHttpCtx, WasiHttpCtxView, WasiHttpView};

/// The `T` of `Store<T>` for a skill call.
pub(crate) struct StoreState {
    pub(crate) wasi: WasiCtx,
    pub(crate) http: WasiHttpCtx,
    pub(crate) table: ResourceTable,
    /// Granted folders and the path the guest sees each at.
    pub(crate) folders: Vec<(wasmtime_wasi::filesystem::Dir, String)>,
    pub(crate) net: NetGuard,
    pub(crate) memory: MemoryGuard,
}

impl WasiView for StoreState {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView { ctx: &mut self.wasi, table: &mut self.table }
    }
}

impl WasiHttpView for StoreState {
    fn http(&mut self) -> WasiHttpCtxView<'_> {
        WasiHttpCtxView { ctx: &mut self.http, table: &mut self.table, hooks: &mut self.net }
    }
}

/// Refuses memory growth past the skill's limit and remembers that it did,
/// so the resulting trap is reported as `OUT_OF_MEMORY`, not a crash.
pub(crate) struct MemoryGuard {
    limit: usize,
    pub(crate) hit: bool,
}

impl MemoryGuard {
    pub(crate) fn new(limit: u64) -> Self {
        MemoryGuard { limit: usize::try_from(limit).unwrap_or(usize::MAX), hit: false }
    }
}

impl ResourceLimiter for MemoryGuard {
    fn memory_growing(&mut self, _current: usize, desired: usize, _maximum: Option<usize>) -> wasmtime::Result<bool> {
        if desired > self.limit {
            self.hit = true;
            return Ok(false);
        }
        Ok(true)
    }

    fn table_growing(&mut self, _current: usize, desired: usize, _maximum: Option<usize>) -> wasmtime::Result<bool> {
        // Tables hold function references; a million is far beyond any real skill.
        Ok(desired <= 1_000_000)
    }
}

/// A skill's stdout or stderr: kept up to a cap (the rest is counted and
/// dropped), so a chatty skill can neither fill the host's memory nor fail.
#[derive(Clone)]
pub(crate) struct Capture {
    inner: Arc<Mutex<CaptureBuf>>,
}

#[derive(Default)]
struct CaptureBuf {
    bytes: Vec<u8>,
    dropped: usize,
    cap: usize,
}

impl Capture {
    pub(crate) fn new(cap: usize) -> Self {
        Capture { inner: Arc::new(Mutex::new(CaptureBuf { cap, ..CaptureBuf::default() })) }
    }

    fn push(&self, data: &[u8]) {
        let mut buf = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        let room = buf.cap.saturating_sub(buf.bytes.len());
        let take = room.min(data.len());
        buf.bytes.extend_from_slice(&data[..take]);
        buf.dropped += data.len() - take;
    }

    /// What was captured, as text, with a note of how much was dropped.
    pub(crate) fn text(&self) -> String {
        let buf = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        let mut text = String::from_utf8_lossy(&buf.bytes).into_owned();
        if buf.dropped > 0 {
            text.push_str(&format!("\n[… {} more bytes dropped]", buf.dropped));
        }
        text
    }
}

impl IsTerminal for Capture {
    fn is_terminal(&self) -> bool {
        false
    }
}

impl StdoutStream for Capture {
    fn async_stream(&self) -> Box<dyn AsyncWrite + Send + Sync> {
        Box::new(CaptureWriter(self.clone()))
    }
}

struct CaptureWriter(Capture);

impl AsyncWrite for CaptureWriter {
    fn poll_write(self: Pin<&mut Self>, _cx: &mut Context<'_>, buf: &[u8]) -> Poll<std::io::Result<usize>> {
        self.0.push(buf);
        Poll::Ready(Ok(buf.len()))
    }

    fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}
