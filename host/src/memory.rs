//! Long-term memory: short notes the agent keeps between runs — facts,
//! preferences and procedures — with where each came from.
//!
//! Storage sits behind the small [`MemoryStore`] trait; [`SqliteStore`] keeps
//! entries in one SQLite file (`.reach/memory.db` by default, see
//! [`MemorySettings`](crate::policy::MemorySettings)) with an FTS5 index over
//! subject and text; `PostgresStore` (feature `memory-postgres`) keeps them
//! in a PostgreSQL database that many hosts share (`[memory] url`), searched
//! with PostgreSQL's text search. [`open`] opens the one the table names.
//!
//! The rules every store follows:
//!
//! - **Add-only with supersession.** An entry is never edited. A new entry
//!   with the same [`Kind`] and the same subject (compared without regard to
//!   case and runs of whitespace) *supersedes* the active one: the old entry
//!   stays, marked `superseded_by`, in [`History`] and in
//!   `list(include_superseded = true)`; search returns active entries only.
//!   Adding an entry identical to the active one (same kind, subject and
//!   text) adds nothing and returns the existing entry ([`Added::Existing`]).
//! - **Forget is for real.** [`MemoryStore::forget`] deletes the entry and
//!   the older entries it superseded, from the table and from the search
//!   index, so no copy of their text stays in the database's files.
//! - **Bounded.** A subject holds at most [`MAX_SUBJECT_CHARS`] characters,
//!   a text at most [`MAX_TEXT_CHARS`], a task type [`MAX_TASK_TYPE_CHARS`],
//!   and a store at most [`MAX_ENTRIES`] entries; past a limit, adding fails
//!   with an error that names it.
//! - **The query is text, not syntax.** Search words are matched as words
//!   (see [`search_terms`]); nothing the user or the model types is read as
//!   FTS5 syntax.
//!
//! At the start of a run, [`relevant`] picks the best matches for the task
//! that fit a token budget and [`render`] writes them as a block for the
//! prompt.
//!
//! ```
//! use agent_reach::memory::{
//!     Kind, MemoryStore, NewEntry, Provenance, SqliteStore, relevant, render,
//! };
//!
//! let store = SqliteStore::in_memory()?;
//! store.add(NewEntry {
//!     kind: Kind::Preference,
//!     subject: "Markdown notes".into(),
//!     text: "Save pages as Markdown with the source URL on the first line.".into(),
//!     task_type: Some("save-page".into()),
//!     provenance: Provenance::User {
//!         run_id: Some("20261202T030909Z-a5b5ae".into()),
//!         step: Some(1),
//!     },
//! })?;
//!
//! let task = "Save https://example.com/post as Markdown in notes/";
//! let found = relevant(&store, task, Some("save-page"), 300)?;
//! assert_eq!(found.len(), 1);
//! let block = render(&found);
//! assert!(block.contains("Save pages as Markdown") && block.contains("stated by the user"));
//! store.mark_used(&found.iter().map(|e| e.id).collect::<Vec<_>>())?;
//! # Ok::<(), agent_reach::memory::MemoryError>(())
//! ```

mod columns;
mod error;
mod export;
mod open;
#[cfg(feature = "memory-postgres")]
mod postgres;
mod prompt;
mod query;
#[cfg(feature = "memory-sqlite")]
mod sqlite;
#[cfg(all(test, feature = "memory-sqlite", feature = "memory-postgres"))]
mod suite;

use serde::{Deserialize, Serialize};

#[cfg(feature = "memory-postgres")]
pub use self::postgres::PostgresStore;
pub use error::MemoryError;
pub use export::{parse_export, to_export};
pub use open::open;
pub use prompt::{DEFAULT_BUDGET_TOKENS, estimate_tokens, relevant, render};
pub use query::search_terms;
#[cfg(feature = "memory-sqlite")]
pub use sqlite::SqliteStore;

/// Most characters in a subject.
pub const MAX_SUBJECT_CHARS: usize = 200;
/// Most characters in an entry's text.
pub const MAX_TEXT_CHARS: usize = 2_000;
/// Most characters in a task type.
pub const MAX_TASK_TYPE_CHARS: usize = 64;
/// Most entries a store keeps, superseded ones included.
pub const MAX_ENTRIES: u64 = 1_000_000;
/// Most characters in a provenance's run id.
pub const MAX_RUN_ID_CHARS: usize = 128;
/// Most characters in a provenance's tool name.
pub const MAX_TOOL_CHARS: usize = 128;
/// Most characters in the file an imported entry came from.
pub const MAX_FILE_CHARS: usize = 500;

/// An entry's number: assigned by the store, never reused, not even after
/// the entry is forgotten.
pub type EntryId = i64;

/// What kind of note an entry is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    /// Something true about the world or the project ("the staging API is at …").
    Fact,
    /// How the user wants things done ("notes in Markdown, wrapped at 100").
    Preference,
    /// Steps that worked ("to deploy, run … then …").
    Procedure,
}

impl Kind {
    /// The name used in the database, in JSON and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Fact => "fact",
            Kind::Preference => "preference",
            Kind::Procedure => "procedure",
        }
    }

    /// The kind named `name` (as [`Kind::name`] writes it).
    pub fn from_name(name: &str) -> Option<Kind> {
        [Kind::Fact, Kind::Preference, Kind::Procedure].into_iter().find(|k| k.name() == name)
    }
}

impl std::fmt::Display for Kind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Where an entry came from.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "source", rename_all = "lowercase", deny_unknown_fields)]
pub enum Provenance {
    /// The user said it: in a task (with the run and step), or at the
    /// command line (without).
    User {
        /// The run it was said in.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        run_id: Option<String>,
        /// The step of that run.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        step: Option<u32>,
    },
    /// A tool's result showed it.
    Tool {
        /// The run the result came in.
        run_id: String,
        /// The step of that run.
        step: u32,
        /// The tool, e.g. `http_api__get`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        tool: Option<String>,
    },
    /// Read from an export file by `reach memory import`. What the file
    /// says about where the note came from is only the file's claim: an
    /// imported note is never *stated by the user*, whatever the file says.
    Imported {
        /// The file it was imported from, as given to the import.
        file: String,
        /// Where the file says it came from (a user or tool provenance),
        /// kept for a person to read (`reach memory show`), never put into
        /// a prompt.
        claimed: Box<Provenance>,
    },
}

impl Provenance {
    /// "stated by the user in run R, step S" / "verified by T in run R,
    /// step S" / "imported from "F"". Always one line: every run of
    /// whitespace (line breaks included) is one space, so a value cannot
    /// start a prompt line of its own.
    pub fn describe(&self) -> String {
        let text = match self {
            Provenance::User { run_id: Some(run), step: Some(step) } => {
                format!("stated by the user in run {run}, step {step}")
            }
            Provenance::User { run_id: Some(run), step: None } => {
                format!("stated by the user in run {run}")
            }
            Provenance::User { .. } => "stated by the user".to_owned(),
            Provenance::Tool { run_id, step, tool } => {
                let by = tool
                    .as_deref()
                    .map_or_else(|| "a tool result".to_owned(), |t| format!("{t}'s result"));
                format!("verified by {by} in run {run_id}, step {step}")
            }
            // Quoted: a file's name is the importer's words, not ours.
            Provenance::Imported { file, .. } => format!("imported from {file:?}"),
        };
        flat(&text)
    }

    /// What the file of an imported entry said about it
    /// ([`describe`](Provenance::describe) of the claim), for a person.
    pub fn claim(&self) -> Option<String> {
        match self {
            Provenance::Imported { claimed, .. } => Some(claimed.describe()),
            _ => None,
        }
    }

    /// This provenance as an import from `file` records it: the claim it
    /// makes, kept as a claim. An entry imported before keeps its first
    /// claim, so imports never nest.
    pub fn imported_from(&self, file: &str) -> Provenance {
        let claimed = match self {
            Provenance::Imported { claimed, .. } => claimed.clone(),
            other => Box::new(other.clone()),
        };
        Provenance::Imported { file: file.to_owned(), claimed }
    }
}

/// `text` on one line: runs of whitespace made one space.
pub(crate) fn flat(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// An entry to add.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NewEntry {
    /// Fact, preference or procedure.
    pub kind: Kind,
    /// What it is about, in a few words; with `kind`, what a later entry
    /// supersedes by.
    pub subject: String,
    /// The note itself.
    pub text: String,
    /// The kind of task it helps with (`save-page`), if any: such entries
    /// rank first for tasks of that type. Stored in lower case.
    pub task_type: Option<String>,
    /// Where it came from.
    pub provenance: Provenance,
}

/// A stored entry.
///
/// Its JSON form is what `reach memory … --json` prints and what `export`
/// writes, one per line; `import` reads it back.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Entry {
    /// Assigned by the store.
    pub id: EntryId,
    /// Fact, preference or procedure.
    pub kind: Kind,
    /// What it is about.
    pub subject: String,
    /// The note.
    pub text: String,
    /// The kind of task it helps with, in lower case.
    pub task_type: Option<String>,
    /// Where it came from.
    pub provenance: Provenance,
    /// When it was added: `2026-12-02T11:36:25.123Z` (UTC).
    pub created: String,
    /// When it last went into a prompt or a recall, if ever.
    pub last_used: Option<String>,
    /// How many times it did.
    pub use_count: u64,
    /// The entry this one replaced.
    pub supersedes: Option<EntryId>,
    /// The entry that replaced this one; `None` while it is active.
    pub superseded_by: Option<EntryId>,
}

impl Entry {
    /// True while no later entry has superseded it.
    pub fn is_active(&self) -> bool {
        self.superseded_by.is_none()
    }

    /// This entry's note as one to add again, with `provenance` — an import
    /// decides where the note came from, not the file it was read from.
    pub(crate) fn to_new(&self, provenance: Provenance) -> NewEntry {
        NewEntry {
            kind: self.kind,
            subject: self.subject.clone(),
            text: self.text.clone(),
            task_type: self.task_type.clone(),
            provenance,
        }
    }
}

/// What [`MemoryStore::add`] did.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Added {
    /// A new entry, about a subject no active entry had.
    New(Entry),
    /// A new entry that superseded `previous` (which stays in the history).
    Superseded {
        /// The new, active entry.
        entry: Entry,
        /// The entry it replaced, now marked superseded.
        previous: Box<Entry>,
    },
    /// The same note was already there: nothing was added.
    Existing(Entry),
}

impl Added {
    /// The active entry after the call.
    pub fn entry(&self) -> &Entry {
        match self {
            Added::New(entry) | Added::Superseded { entry, .. } | Added::Existing(entry) => entry,
        }
    }
}

/// One entry and every version of its subject, oldest first (the entry
/// itself included), for `reach memory show`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct History {
    /// The entry asked for.
    pub entry: Entry,
    /// All entries with its kind and subject, oldest first.
    pub versions: Vec<Entry>,
}

/// What [`MemoryStore::import`] did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Imported {
    /// Entries written.
    pub added: usize,
    /// Entries that were already there (same kind, subject, text and
    /// creation time, or the same as the active entry).
    pub existing: usize,
}

/// Where long-term memory is kept. Small on purpose, so that a shared
/// database serving many hosts can implement it too.
///
/// Every method is one transaction: it happens whole or not at all.
pub trait MemoryStore: Send + Sync {
    /// Add an entry by the supersession rule of the [module docs](self).
    fn add(&self, entry: NewEntry) -> Result<Added, MemoryError>;

    /// Active entries matching any word of `query`, best first, at most
    /// `limit`: by full-text rank (bm25, the subject counting double), and
    /// among the best 50 matches (or `limit`, if more) entries whose task
    /// type is `task_type` come first. A query without a word to search for
    /// finds nothing. [`SqliteStore`] leaves words held by more than 500
    /// entries out of the ranking, so a search stays fast on a large store.
    fn search(
        &self,
        query: &str,
        task_type: Option<&str>,
        limit: usize,
    ) -> Result<Vec<Entry>, MemoryError>;

    /// The entry `id` and all versions of its subject, or `None`.
    fn get(&self, id: EntryId) -> Result<Option<History>, MemoryError>;

    /// Active entries (and superseded ones with `include_superseded`), oldest first.
    fn list(&self, include_superseded: bool) -> Result<Vec<Entry>, MemoryError>;

    /// Note that these entries went into a prompt or a recall: `last_used`
    /// becomes now and `use_count` goes up by one. Unknown ids are skipped.
    fn mark_used(&self, ids: &[EntryId]) -> Result<(), MemoryError>;

    /// Delete `id` and every older entry it superseded, leaving no copy of
    /// their text in the store; returns the ids deleted, oldest first. A
    /// newer entry that superseded `id` stays (it no longer points back).
    fn forget(&self, id: EntryId) -> Result<Vec<EntryId>, MemoryError>;

    /// Every entry, superseded ones included, oldest first.
    fn export(&self) -> Result<Vec<Entry>, MemoryError>;

    /// Add exported entries read from `file`, all or none: each goes
    /// through the rule of [`add`](MemoryStore::add) in order, keeping its
    /// times and use count (supersession links are rebuilt, not read), and
    /// with the provenance [`Provenance::Imported`] from `file` — what the
    /// file says about where it came from kept only as its claim. An entry
    /// already in the store (same kind, subject, text and creation time) is
    /// skipped, so importing the same file twice adds nothing. An error
    /// names the entry by its 1-based position.
    fn import(&self, entries: &[Entry], file: &str) -> Result<Imported, MemoryError>;
}

/// The subject as supersession compares it: lower case, whitespace runs
/// made one space, trimmed.
pub fn subject_key(subject: &str) -> String {
    subject.split_whitespace().collect::<Vec<_>>().join(" ").to_lowercase()
}

/// The checked, trimmed form of `entry`: empty or overlong fields and
/// control characters (other than newlines and tabs in the text) refused.
pub(crate) fn checked(mut entry: NewEntry) -> Result<NewEntry, MemoryError> {
    entry.subject = entry.subject.trim().to_owned();
    entry.text = entry.text.trim().to_owned();
    check_field("subject", &entry.subject, MAX_SUBJECT_CHARS, false, "")?;
    check_field("text", &entry.text, MAX_TEXT_CHARS, true, " or split it into several entries")?;
    entry.task_type = match entry.task_type.as_deref().map(str::trim) {
        None | Some("") => None,
        Some(t) => {
            check_field("task type", t, MAX_TASK_TYPE_CHARS, false, "")?;
            Some(t.to_lowercase())
        }
    };
    check_provenance(&entry.provenance)?;
    Ok(entry)
}

/// A provenance's fields are rendered into prompts and onto terminals:
/// run ids and tool names are one word each (no spaces, no control
/// characters) within their limits, a file name has no control
/// characters, and an import's claim is a user's or a tool's.
fn check_provenance(provenance: &Provenance) -> Result<(), MemoryError> {
    let word = |field: &'static str, value: &str, limit: usize, example: &str| {
        check_field(field, value, limit, false, "")?;
        match value.chars().find(|c| c.is_whitespace()) {
            Some(c) => Err(MemoryError::Invalid {
                field,
                reason: format!("contains the space {c:?}; it is one word, like {example}"),
            }),
            None => Ok(()),
        }
    };
    match provenance {
        Provenance::User { run_id, .. } => {
            if let Some(run) = run_id {
                word("provenance run_id", run, MAX_RUN_ID_CHARS, "20261202T030909Z-a5b5ae")?;
            }
        }
        Provenance::Tool { run_id, tool, .. } => {
            word("provenance run_id", run_id, MAX_RUN_ID_CHARS, "20261202T030909Z-a5b5ae")?;
            if let Some(tool) = tool {
                word("provenance tool", tool, MAX_TOOL_CHARS, "http_api__get")?;
            }
        }
        Provenance::Imported { file, claimed } => {
            if matches!(**claimed, Provenance::Imported { .. }) {
                return Err(MemoryError::Invalid {
                    field: "provenance",
                    reason:
                        "claims to be imported from an import; write the claim as {\"source\": \
                         \"user\"} or {\"source\": \"tool\", …}"
                            .into(),
                });
            }
            check_field("provenance file", file, MAX_FILE_CHARS, false, "")?;
            check_provenance(claimed)?;
        }
    }
    Ok(())
}

fn check_field(
    field: &'static str,
    value: &str,
    limit: usize,
    lines: bool,
    hint: &'static str,
) -> Result<(), MemoryError> {
    if value.is_empty() {
        return Err(MemoryError::Invalid { field, reason: "is empty; write a few words".into() });
    }
    let len = value.chars().count();
    if len > limit {
        return Err(MemoryError::TooLong { field, len, limit, hint });
    }
    // A note goes into prompts and onto terminals: no escape sequences,
    // no text that hides itself.
    if let Some(c) = value.chars().find(|&c| c.is_control() && !(lines && (c == '\n' || c == '\t')))
    {
        return Err(MemoryError::Invalid {
            field,
            reason: format!("contains the control character {c:?}; remove it"),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests;
