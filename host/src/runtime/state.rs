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
    /// The journal's hook in the filesystem (see `journal_fs`).
    pub(crate) fs_journal: super::journal_fs::FsJournal,
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

/// Bytes a table element is counted as: a pointer, which is what wasmtime
/// stores for each `funcref` or `externref` slot.
const TABLE_ELEMENT_BYTES: usize = std::mem::size_of::<usize>();

/// Holds the whole instance — every linear memory and every table of every
/// core instance inside the component — to the skill's one memory limit,
/// and remembers when it refused, so the resulting trap is reported as
/// `OUT_OF_MEMORY`, not a crash.
///
/// wasmtime asks the limiter for each memory and table on its own (also when
/// it is first created, from 0), so the guard keeps the running total: a
/// component with several memories cannot multiply its limit.
pub(crate) struct MemoryGuard {
    limit: usize,
    used: usize,
    pub(crate) hit: bool,
}

impl MemoryGuard {
    pub(crate) fn new(limit: u64) -> Self {
        MemoryGuard { limit: usize::try_from(limit).unwrap_or(usize::MAX), used: 0, hit: false }
    }

    /// Account for growing something from `current` to `desired` bytes.
    fn grow(&mut self, current: usize, desired: usize) -> bool {
        let total = self.used.saturating_sub(current).saturating_add(desired);
        if total > self.limit {
            self.hit = true;
            return false;
        }
        self.used = total;
        true
    }
}

impl ResourceLimiter for MemoryGuard {
    fn memory_growing(
        &mut self,
        current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        Ok(self.grow(current, desired))
    }

    fn table_growing(
        &mut self,
        current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        Ok(self.grow(
            current.saturating_mul(TABLE_ELEMENT_BYTES),
            desired.saturating_mul(TABLE_ELEMENT_BYTES),
        ))
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
    fn poll_write(
        self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
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

#[cfg(test)]
mod tests {
    use super::*;
    use wasmtime::{Engine, Instance, Module, Store};

    /// Two memories of 40 pages (2.5 MiB) each, and a table, each with a
    /// function that grows it and returns the old size (-1 on refusal).
    const TWO_MEMORIES: &str = r#"
        (module
          (memory $a 40)
          (memory $b 0)
          (table $t 0 funcref)
          (func (export "grow_b") (param i32) (result i32) (memory.grow $b (local.get 0)))
          (func (export "grow_t") (param i32) (result i32) (table.grow $t (ref.null func) (local.get 0))))
    "#;

    fn instance(limit_mib: u64) -> (Store<MemoryGuard>, Instance) {
        let engine = Engine::default();
        let module =
            Module::new(&engine, wat::parse_str(TWO_MEMORIES).expect("wat")).expect("module");
        let mut store = Store::new(&engine, MemoryGuard::new(limit_mib << 20));
        store.limiter(|guard| guard);
        let instance = Instance::new(&mut store, &module, &[]).expect("instantiate");
        (store, instance)
    }

    #[test]
    fn the_limit_covers_every_memory_of_the_instance_together() {
        // Regression: each memory was checked alone, so a component with
        // two memories could use twice its limit.
        let (mut store, instance) = instance(4);
        let grow_b = instance.get_typed_func::<i32, i32>(&mut store, "grow_b").expect("grow_b");
        // 2.5 MiB in $a already; 1 MiB more in $b fits in 4 MiB ...
        assert_eq!(grow_b.call(&mut store, 16).expect("call"), 0);
        assert!(!store.data().hit);
        // ... 1 MiB after that would make 4.5 MiB in all, though $b alone is only 2 MiB.
        assert_eq!(
            grow_b.call(&mut store, 16).expect("call"),
            -1,
            "refused: the instance's total is over the limit"
        );
        assert!(store.data().hit, "reported as OUT_OF_MEMORY");
    }

    #[test]
    fn the_limit_holds_on_the_hosts_own_pooling_engine() {
        // The engine calls use: pooling allocator, keep-resident memory. It
        // allows one memory per core module (several per component), so
        // this counts a memory and a table together.
        let (engine, pooled) = super::super::engine::build(true).expect("engine");
        let module = r#"(module (memory 40) (table $t 0 funcref)
            (func (export "grow_t") (param i32) (result i32) (table.grow $t (ref.null func) (local.get 0))))"#;
        let module = Module::new(&engine, wat::parse_str(module).expect("wat")).expect("module");
        // The pool caps a table at 20,000 slots of its own; stay under it.
        let slots: usize = 10_000;
        let limit = (40u64 << 16) + (slots * TABLE_ELEMENT_BYTES) as u64;
        let mut store = Store::new(&engine, MemoryGuard::new(limit));
        store.limiter(|guard| guard);
        store.set_epoch_deadline(1 << 40);
        let instance = Instance::new(&mut store, &module, &[]).expect("instantiate");
        let grow_t = instance.get_typed_func::<i32, i32>(&mut store, "grow_t").expect("grow_t");
        assert_eq!(
            grow_t.call(&mut store, i32::try_from(slots).unwrap()).expect("call"),
            0,
            "memory + table exactly at the limit"
        );
        assert!(!store.data().hit);
        assert_eq!(grow_t.call(&mut store, 1).expect("call"), -1, "pooled: {pooled}");
        assert!(store.data().hit);
    }

    #[test]
    fn tables_count_against_the_same_limit() {
        let (mut store, instance) = instance(3);
        let grow_t = instance.get_typed_func::<i32, i32>(&mut store, "grow_t").expect("grow_t");
        // 2.5 MiB of memory; 0.5 MiB of table is 65,536 pointer-sized slots.
        let slots = i32::try_from((512 << 10) / TABLE_ELEMENT_BYTES).expect("fits");
        assert_eq!(grow_t.call(&mut store, slots).expect("call"), 0);
        assert_eq!(grow_t.call(&mut store, 1).expect("call"), -1, "one slot more is over 3 MiB");
        assert!(store.data().hit);
    }
}
