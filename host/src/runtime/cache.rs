//! The on-disk compile cache: precompiled components keyed by the `.wasm`
//! file's content hash and the engine's configuration, so a restart loads
//! machine code with one `mmap` instead of recompiling.
//!
//! The cache folder must be writable only by the operator: a precompiled
//! file is machine code that the host maps and runs.

use std::hash::{DefaultHasher, Hash, Hasher};
use std::io::Write;
use std::path::{Path, PathBuf};
use wasmtime::Engine;
use wasmtime::component::Component;

/// Where compiled components are kept.
#[derive(Clone, Debug)]
pub(crate) struct CompileCache {
    dir: Option<PathBuf>,
    engine_key: u64,
}

/// How a component was obtained, for logs and progress output.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LoadSource {
    /// Loaded precompiled code from the cache.
    Cache,
    /// Compiled now (and stored, if the cache is enabled).
    Compiled,
}

impl CompileCache {
    pub(crate) fn new(engine: &Engine, dir: Option<PathBuf>) -> Self {
        let mut hasher = DefaultHasher::new();
        engine.precompile_compatibility_hash().hash(&mut hasher);
        env!("CARGO_PKG_VERSION").hash(&mut hasher);
        CompileCache { dir, engine_key: hasher.finish() }
    }

    fn entry(&self, digest: &str) -> Option<PathBuf> {
        let dir = self.dir.as_ref()?;
        Some(dir.join(format!("{}-{:016x}.cwasm", &digest[..32], self.engine_key)))
    }

    /// Load the compiled form of `wasm` (whose blake3 hex digest is
    /// `digest`), compiling and storing it on a miss. `on_compile` runs
    /// before a (slow) compilation, for progress output.
    pub(crate) fn load(
        &self,
        engine: &Engine,
        wasm: &[u8],
        digest: &str,
        on_compile: impl FnOnce(),
    ) -> Result<(Component, LoadSource), wasmtime::Error> {
        let entry = self.entry(digest);
        if let Some(path) = entry.as_deref().filter(|p| p.exists()) {
            match deserialize(engine, path) {
                Ok(component) => return Ok((component, LoadSource::Cache)),
                // A stale or damaged entry is not an error: compile again and overwrite it.
                Err(err) => tracing::warn!(path = %path.display(), error = %err, "discarding unusable compile-cache entry"),
            }
        }
        on_compile();
        let component = Component::new(engine, wasm)?;
        if let Some(path) = entry
            && let Err(err) = store(&component, &path)
        {
            tracing::warn!(path = %path.display(), error = %err, "could not write the compile cache; next start compiles again");
        }
        Ok((component, LoadSource::Compiled))
    }
}

#[expect(unsafe_code, reason = "loading precompiled machine code is unsafe by nature")]
fn deserialize(engine: &Engine, path: &Path) -> Result<Component, wasmtime::Error> {
    // SAFETY: the file was written by `store` below from a component this
    // engine compiled; wasmtime checks the header and engine compatibility.
    // The cache folder is documented as operator-owned.
    unsafe { Component::deserialize_file(engine, path) }
}

fn store(component: &Component, path: &Path) -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    let dir = path.parent().ok_or("cache entry has no parent folder")?;
    std::fs::create_dir_all(dir)?;
    let bytes = component.serialize()?;
    // Write to a temporary file and rename, so a concurrent reader never maps a half-written file.
    let mut tmp = tempfile::NamedTempFile::new_in(dir)?;
    tmp.write_all(&bytes)?;
    tmp.persist(path)?;
    Ok(())
}
