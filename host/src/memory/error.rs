//! Why a memory operation failed, in words an operator can act on.

use super::EntryId;

/// Why a memory operation failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum MemoryError {
    /// A value past its limit.
    #[error("memory: the {field} is {len} characters; the limit is {limit} — shorten it{hint}")]
    TooLong {
        /// `subject`, `text` or `task type`.
        field: &'static str,
        /// Its length in characters.
        len: usize,
        /// The limit.
        limit: usize,
        /// How else to fit it, or empty.
        hint: &'static str,
    },
    /// A value that is empty or has control characters where none belong.
    #[error("memory: the {field} {reason}")]
    Invalid {
        /// `subject`, `text`, `task type`, `created`…
        field: &'static str,
        /// What is wrong with it and what would do.
        reason: String,
    },
    /// No entry with this id.
    #[error("memory: no entry {id}")]
    NotFound {
        /// The id asked for.
        id: EntryId,
    },
    /// The store holds [`MAX_ENTRIES`](super::MAX_ENTRIES) entries.
    #[error(
        "memory: the store holds {limit} entries, the most it keeps; forget some (`reach memory \
         forget ID`)"
    )]
    Full {
        /// [`MAX_ENTRIES`](super::MAX_ENTRIES).
        limit: u64,
    },
    /// One line of an export file is not an entry, or not a valid one.
    #[error("line {line}: {message}")]
    Import {
        /// 1-based line of the file.
        line: usize,
        /// What is wrong with it.
        message: String,
    },
    /// The database was written by a newer version of Agent Reach.
    #[error(
        "memory database {path}: schema version {found} is newer than this reach reads \
         ({supported}); upgrade reach"
    )]
    NewerSchema {
        /// The database file.
        path: String,
        /// Its `user_version`.
        found: i64,
        /// The newest this build reads.
        supported: i64,
    },
    /// The folder for the database could not be created.
    #[error("memory database {path}: cannot create its folder")]
    Io {
        /// The database file.
        path: String,
        /// What the operating system said.
        #[source]
        source: std::io::Error,
    },
    /// The database refused or failed: SQLite (locked for longer than the
    /// busy timeout, not a database, disk full…) or PostgreSQL (unreachable,
    /// login refused, a timeout…).
    #[error("memory database {path}: {message}")]
    Database {
        /// The database file, `:memory:`, or the PostgreSQL URL without its
        /// password.
        path: String,
        /// The database's message. Kept as text, not as a source error, so the
        /// one line says it all and a chain does not say it twice.
        message: String,
    },
}
