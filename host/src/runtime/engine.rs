//! The wasmtime engine: configuration, the pooling allocator and the epoch
//! ticker that enforces wall-time limits.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;
use wasmtime::{
    Config, Enabled, Engine, InstanceAllocationStrategy, OptLevel, PoolingAllocationConfig,
};

/// How often the epoch advances; the granularity of timeouts.
pub(crate) const EPOCH_TICK: Duration = Duration::from_millis(5);

/// Instances alive at once (pooling allocator slots).
const POOL_INSTANCES: u32 = 128;

fn base_config() -> Config {
    let mut config = Config::new();
    config.wasm_component_model(true);
    // Epoch interruption adds a small cost to every call, and it is what
    // stops a guest that never yields (an infinite loop) at its deadline.
    config.epoch_interruption(true);
    config.cranelift_opt_level(OptLevel::Speed);
    config.max_wasm_stack(1 << 20);
    config.async_stack_size(2 << 20);
    config
}

fn pooling() -> PoolingAllocationConfig {
    let mut pool = PoolingAllocationConfig::default();
    pool.total_component_instances(POOL_INSTANCES)
        .total_core_instances(POOL_INSTANCES * 8)
        .total_memories(POOL_INSTANCES * 2)
        .total_tables(POOL_INSTANCES * 4)
        .total_stacks(POOL_INSTANCES)
        .max_memories_per_component(4)
        .max_tables_per_component(8)
        .max_memory_size(4 << 30)
        // Keeping the first pages of each slot resident (and resetting them
        // with pagemap_scan where Linux has it) makes a fresh instance
        // several times cheaper than unmapping and faulting pages back in.
        .linear_memory_keep_resident(1 << 20)
        .table_keep_resident(64 << 10)
        .async_stack_keep_resident(64 << 10)
        .pagemap_scan(Enabled::Auto);
    pool
}

/// Build the engine: pooling allocator when the machine allows it, the
/// on-demand allocator otherwise (e.g. a small virtual-address limit).
pub(crate) fn build(pooled: bool) -> Result<(Engine, bool), wasmtime::Error> {
    if pooled {
        let mut config = base_config();
        config.allocation_strategy(InstanceAllocationStrategy::Pooling(pooling()));
        match Engine::new(&config) {
            Ok(engine) => return Ok((engine, true)),
            Err(err) => {
                tracing::warn!(
                    error = %err,
                    "pooling allocator unavailable; using on-demand allocation"
                )
            }
        }
    }
    Ok((Engine::new(&base_config())?, false))
}

/// A thread that advances the engine's epoch every [`EPOCH_TICK`] until dropped.
pub(crate) struct EpochTicker {
    stop: Arc<AtomicBool>,
}

impl EpochTicker {
    pub(crate) fn start(engine: &Engine) -> Self {
        let stop = Arc::new(AtomicBool::new(false));
        let engine = engine.weak();
        let flag = stop.clone();
        let spawned = std::thread::Builder::new().name("reach-epoch".into()).spawn(move || {
            while !flag.load(Ordering::Relaxed) {
                std::thread::sleep(EPOCH_TICK);
                match engine.upgrade() {
                    Some(engine) => engine.increment_epoch(),
                    None => break,
                }
            }
        });
        if let Err(err) = spawned {
            tracing::error!(
                error = %err,
                "could not start the epoch thread; CPU-bound skills will only stop at the \
                 wall-time limit"
            );
        }
        EpochTicker { stop }
    }
}

impl Drop for EpochTicker {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

/// Ticks for a deadline of `timeout`, rounded up, plus one for the tick in progress.
pub(crate) fn ticks_for(timeout: Duration) -> u64 {
    let tick = EPOCH_TICK.as_nanos();
    u64::try_from(timeout.as_nanos().div_ceil(tick)).unwrap_or(u64::MAX / 2) + 1
}
