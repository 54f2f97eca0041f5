//! Full-text search that stays fast on a large store.
//!
//! bm25 weighs each word by how many entries hold it, and counts them to
//! know: a word held by thousands of entries makes every search that uses it
//! slow, while saying little about which entry is meant. So each word is
//! first counted, but only up to [`COMMON`]; the ranked search uses the words
//! held by fewer entries. In a store of a few hundred entries no word is
//! that common and every word counts. When every word of a query is that
//! common, the newest entries holding all of them come first, then the
//! newest holding any.
//!
//! The best [`CANDIDATES`] matches (or `limit`, if larger) are then read,
//! and among them entries of the task's type move to the front, each group
//! keeping its rank order.

use rusqlite::{Connection, params};

use super::by_id;
use crate::memory::query::{CANDIDATES, COMMON, all_of, any_of, search_terms, task_type_first};
use crate::memory::{Entry, EntryId};

/// See the module docs.
pub(super) fn search(
    conn: &Connection,
    query: &str,
    task_type: Option<&str>,
    limit: usize,
) -> rusqlite::Result<Vec<Entry>> {
    let terms = search_terms(query);
    if terms.is_empty() || limit == 0 {
        return Ok(Vec::new());
    }
    let (mut rare, mut common) = (Vec::new(), Vec::new());
    {
        let mut count = conn.prepare_cached(
            "SELECT count(*) FROM (SELECT 1 FROM memory_fts WHERE memory_fts MATCH ?1 LIMIT ?2)",
        )?;
        for term in terms {
            let held: i64 = count
                .query_row(params![any_of(std::slice::from_ref(&term)), COMMON + 1], |r| {
                    r.get(0)
                })?;
            match held {
                0 => {}
                n if n <= COMMON => rare.push(term),
                _ => common.push(term),
            }
        }
    }
    let want = CANDIDATES.max(limit);
    let ids = if !rare.is_empty() {
        ranked(conn, &any_of(&rare), want)?
    } else if !common.is_empty() {
        let mut ids = newest(conn, &all_of(&common), want)?;
        if ids.len() < want {
            for id in newest(conn, &any_of(&common), want)? {
                if ids.len() < want && !ids.contains(&id) {
                    ids.push(id);
                }
            }
        }
        ids
    } else {
        return Ok(Vec::new());
    };
    let mut entries = Vec::with_capacity(ids.len());
    for id in ids {
        // The index holds active entries only; checked anyway.
        if let Some(entry) = by_id(conn, id)?.filter(Entry::is_active) {
            entries.push(entry);
        }
    }
    Ok(task_type_first(entries, task_type, limit))
}

/// The best `n` matches of `expression` by bm25 (the subject counting
/// double), newer first among equals.
fn ranked(conn: &Connection, expression: &str, n: usize) -> rusqlite::Result<Vec<EntryId>> {
    let mut stmt = conn.prepare_cached(
        "SELECT rowid FROM memory_fts WHERE memory_fts MATCH ?1 \
         ORDER BY bm25(memory_fts, 2.0, 1.0), rowid DESC LIMIT ?2",
    )?;
    let ids = stmt.query_map(params![expression, n as i64], |r| r.get(0))?;
    ids.collect()
}

/// The newest `n` matches of `expression`.
fn newest(conn: &Connection, expression: &str, n: usize) -> rusqlite::Result<Vec<EntryId>> {
    let mut stmt = conn.prepare_cached(
        "SELECT rowid FROM memory_fts WHERE memory_fts MATCH ?1 ORDER BY rowid DESC LIMIT ?2",
    )?;
    let ids = stmt.query_map(params![expression, n as i64], |r| r.get(0))?;
    ids.collect()
}
