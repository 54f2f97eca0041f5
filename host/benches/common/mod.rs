//! What the benchmarks share: the workspace root and a median timer.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The workspace root (where `target/` and `tests/fixtures/` are).
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The median of `n` timed runs of `f`.
pub fn median(mut f: impl FnMut(), n: usize) -> Duration {
    let mut times: Vec<Duration> = (0..n)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed()
        })
        .collect();
    times.sort();
    times[n / 2]
}
