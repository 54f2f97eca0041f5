//! Opening the store a table names: its SQLite file, or its PostgreSQL
//! database.

use std::sync::Arc;

use super::{MemoryError, MemoryStore};
use crate::policy::MemorySettings;

/// The store `[memory]` names: the PostgreSQL database of `url`, with the
/// password from [`MEMORY_PASSWORD_ENV`](crate::policy::MEMORY_PASSWORD_ENV)
/// when it is set, or else the SQLite file at `path` (created when
/// missing). A build without the feature the table needs says so.
pub fn open(settings: &MemorySettings) -> Result<Arc<dyn MemoryStore>, MemoryError> {
    match &settings.url {
        Some(url) => postgres(url),
        None => sqlite(&settings.path),
    }
}

#[cfg(feature = "memory-postgres")]
fn postgres(url: &str) -> Result<Arc<dyn MemoryStore>, MemoryError> {
    let password = std::env::var(crate::policy::MEMORY_PASSWORD_ENV).ok();
    Ok(Arc::new(super::PostgresStore::connect(url, password.as_deref())?))
}

#[cfg(not(feature = "memory-postgres"))]
fn postgres(url: &str) -> Result<Arc<dyn MemoryStore>, MemoryError> {
    Err(MemoryError::Database {
        path: url.split('@').next_back().unwrap_or_default().to_owned(),
        message: "this build has no PostgreSQL support (the `memory-postgres` feature); build \
                  with it, or keep memory in a file with [memory] path"
            .into(),
    })
}

#[cfg(feature = "memory-sqlite")]
fn sqlite(path: &std::path::Path) -> Result<Arc<dyn MemoryStore>, MemoryError> {
    Ok(Arc::new(super::SqliteStore::open(path)?))
}

#[cfg(not(feature = "memory-sqlite"))]
fn sqlite(path: &std::path::Path) -> Result<Arc<dyn MemoryStore>, MemoryError> {
    Err(MemoryError::Database {
        path: path.display().to_string(),
        message: "this build has no SQLite support (the `memory-sqlite` feature); build with it, \
                  or give your own store to Agent::memory"
            .into(),
    })
}
