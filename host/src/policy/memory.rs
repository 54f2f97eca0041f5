//! The optional `[memory]` table: where long-term memory is kept, how much
//! of it goes into a prompt, and the levels of the two memory tools.
//!
//! ```toml
//! [memory]
//! path = ".reach/memory.db"   # the default; relative to this file's folder
//! # url = "postgres://reach@db.internal/reach"   # instead of path: a database many hosts share
//! remember = "confirm"        # memory__remember: auto | confirm | deny (default confirm)
//! recall = "auto"             # memory__recall (default auto)
//! budget_tokens = 300         # notes put into the prompt at the start of a run; 0 = none
//! ```
//!
//! `remember` asks a person by default: text the model read on a web page
//! must not become a note that later runs trust without the operator's say.
//!
//! The database is the host's own file. Under `.reach/` (the default) it is
//! covered by the rule that no skill may write `.reach/`; anywhere else it
//! must lie outside every folder any skill may read or write — a skill that
//! could read it would read every note, one that could write it could plant
//! notes.
//!
//! `url` keeps memory in PostgreSQL instead (`postgres://` or
//! `postgresql://`, with the URL's own parameters such as `sslmode`). The
//! password never goes in the table — tables are copied and committed — but
//! in the environment variable [`MEMORY_PASSWORD_ENV`].

use std::ops::Range;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use toml::Spanned;

use super::error::{PolicyError, Source};
use super::folders::lexical_normalize;
use super::raw::{ListedSkill, resolve_level};
use super::{Level, ProtectedPath};
use crate::memory::DEFAULT_BUDGET_TOKENS;

/// Where the database is when the table does not say.
pub const DEFAULT_MEMORY_PATH: &str = ".reach/memory.db";

/// The environment variable with the password of `[memory] url`.
pub const MEMORY_PASSWORD_ENV: &str = "REACH_MEMORY_PASSWORD";

/// Most `budget_tokens`: notes are a small part of a prompt.
const MAX_BUDGET_TOKENS: i64 = 8_000;

/// The checked `[memory]` table, with the defaults filled in.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct MemorySettings {
    /// The database file: absolute when it came from a file, otherwise
    /// `.reach/memory.db` under the working directory.
    pub path: PathBuf,
    /// A PostgreSQL database to keep memory in instead of `path`
    /// (`postgres://user@host:port/db?…`, never with a password).
    pub url: Option<String>,
    /// The level of `memory__remember`.
    pub remember: Level,
    /// The level of `memory__recall`.
    pub recall: Level,
    /// Most tokens of notes put into the prompt at the start of a run; 0
    /// puts none.
    pub budget_tokens: usize,
}

impl MemorySettings {
    /// The defaults, with the database in `.reach/` under `base_dir`.
    pub fn default_in(base_dir: &Path) -> MemorySettings {
        MemorySettings {
            path: base_dir.join(DEFAULT_MEMORY_PATH),
            url: None,
            remember: Level::Confirm,
            recall: Level::Auto,
            budget_tokens: DEFAULT_BUDGET_TOKENS,
        }
    }
}

#[derive(Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a table with path or url, remember, recall, budget_tokens"
)]
pub(super) struct RawMemory {
    path: Option<Spanned<String>>,
    url: Option<Spanned<String>>,
    remember: Option<Spanned<String>>,
    recall: Option<Spanned<String>>,
    budget_tokens: Option<Spanned<i64>>,
}

impl RawMemory {
    /// Check the table; `base_dir` is absolute, `skills` are the resolved
    /// skills whose folders the database must stay out of.
    pub(super) fn resolve(
        self,
        src: &Source<'_>,
        base_dir: &Path,
        skills: &[ListedSkill],
    ) -> Result<MemorySettings, PolicyError> {
        let mut settings = MemorySettings::default_in(base_dir);
        settings.remember =
            resolve_level(src, "memory.remember", self.remember.as_ref(), settings.remember)?;
        settings.recall =
            resolve_level(src, "memory.recall", self.recall.as_ref(), settings.recall)?;
        if let Some(n) = &self.budget_tokens {
            let value = *n.get_ref();
            if !(0..=MAX_BUDGET_TOKENS).contains(&value) {
                return Err(src.invalid(
                    &n.span(),
                    "memory.budget_tokens",
                    format!(
                        "{value} is out of range; use 0 (no notes in the prompt) to \
                         {MAX_BUDGET_TOKENS}"
                    ),
                ));
            }
            settings.budget_tokens = value as usize;
        }
        if let (Some(_), Some(url)) = (&self.path, &self.url) {
            return Err(src.invalid(
                &url.span(),
                "memory.url",
                "memory is kept either in a file (path) or in PostgreSQL (url), not both; drop one",
            ));
        }
        if let Some(path) = &self.path {
            settings.path = resolve_path(src, path, base_dir)?;
            check_outside_grants(src, &path.span(), &settings.path, base_dir, skills)?;
        }
        if let Some(url) = &self.url {
            check_url(url.get_ref())
                .map_err(|message| src.invalid(&url.span(), "memory.url", message))?;
            settings.url = Some(url.get_ref().clone());
        }
        Ok(settings)
    }
}

/// What is wrong with a PostgreSQL URL for memory, if anything: the
/// scheme, a host, and no password in it. The rest (parameters, the
/// server's answer) is checked when the store connects.
pub fn check_url(text: &str) -> Result<(), String> {
    let example = "postgres://reach@db.internal:5432/reach";
    // `user@/db?host=/run/postgresql` (a socket folder) is PostgreSQL's, not a URL parser's:
    // read it with a stand-in host.
    let url = url::Url::parse(&text.replacen("@/", "@socket/", 1))
        .map_err(|e| format!("{text:?} is not a URL ({e}); write one like {example:?}"))?;
    if !matches!(url.scheme(), "postgres" | "postgresql") {
        return Err(format!(
            "{:?} is not a PostgreSQL URL; write one like {example:?} (for a file, use path)",
            url.scheme()
        ));
    }
    if url.password().is_some() {
        return Err(format!(
            "the URL holds a password; tables are copied and committed, so remove it and put the \
             password in the environment variable {MEMORY_PASSWORD_ENV}"
        ));
    }
    if url.query_pairs().any(|(k, _)| k == "password") {
        return Err(format!(
            "the URL holds a password parameter; remove it and put the password in the \
             environment variable {MEMORY_PASSWORD_ENV}"
        ));
    }
    let socket = url.host_str() == Some("socket") && text.contains("@/");
    let named = url.host_str().is_some_and(|h| !h.is_empty()) && !socket;
    if !named && !url.query_pairs().any(|(k, _)| k == "host") {
        return Err(format!("{text:?} names no server; write one like {example:?}"));
    }
    Ok(())
}

fn resolve_path(
    src: &Source<'_>,
    path: &Spanned<String>,
    base_dir: &Path,
) -> Result<PathBuf, PolicyError> {
    let text = path.get_ref();
    let invalid = |message: String| src.invalid(&path.span(), "memory.path", message);
    if text.is_empty() {
        return Err(invalid(format!(
            "\"\" is not a file; write a path such as {DEFAULT_MEMORY_PATH:?}"
        )));
    }
    if text.starts_with('~') {
        return Err(invalid(format!("{text:?}: \"~\" is not expanded; write the full path")));
    }
    if text.ends_with('/') || text.ends_with(std::path::MAIN_SEPARATOR) {
        return Err(invalid(format!(
            "{text:?} names a folder; name the database file in it, e.g. \"{text}memory.db\""
        )));
    }
    let resolved = lexical_normalize(&base_dir.join(text));
    if resolved.is_dir() {
        return Err(invalid(format!(
            "{text:?} is a folder; name the database file in it, e.g. \"{text}/memory.db\""
        )));
    }
    if resolved.to_str().is_none() {
        return Err(invalid(format!("{text:?} resolves to a path that is not valid UTF-8")));
    }
    Ok(resolved)
}

/// Refuse a database outside `.reach/` that lies in a folder some skill may
/// read or write. Its folder is what counts: SQLite writes its journal
/// beside the file, and a skill that can write the folder can swap the file.
fn check_outside_grants(
    src: &Source<'_>,
    span: &Range<usize>,
    db: &Path,
    base_dir: &Path,
    skills: &[ListedSkill],
) -> Result<(), PolicyError> {
    let reach = base_dir.join(".reach");
    let folder = db.parent().unwrap_or(db);
    // As written and with symlinks resolved, so a link cannot hide that it
    // lies in a grant.
    let spellings =
        [folder.to_owned(), ProtectedPath::new("the memory database", folder).resolved()];
    if spellings.iter().any(|f| f.starts_with(&reach)) {
        return Ok(());
    }
    for skill in skills {
        for at in &skill.folders_at {
            let grants = [&at.grant.path, &at.grant.lexical];
            if spellings.iter().any(|f| grants.iter().any(|g| f.starts_with(g))) {
                let verb = if at.writable { "write" } else { "read" };
                return Err(src.invalid(
                    span,
                    "memory.path",
                    format!(
                        "{:?} lies inside {:?}, which skill {} may {verb} ({}, line {}); a skill \
                         that can read the memory database reads every note, one that can write it \
                         plants notes — keep it outside every granted folder (the default \
                         {DEFAULT_MEMORY_PATH:?} is safe), or drop that grant",
                        src_text(db, base_dir),
                        at.grant.declared,
                        skill.grants.skill,
                        at.at.key,
                        at.at.line
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// The database path as short as the message can make it: relative to the
/// table's folder when it lies inside it.
fn src_text(db: &Path, base_dir: &Path) -> String {
    match db.strip_prefix(base_dir) {
        Ok(rel) => format!("./{}", rel.display()),
        Err(_) => db.display().to_string(),
    }
}
