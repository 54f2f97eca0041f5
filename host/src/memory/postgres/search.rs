//! Full-text search with PostgreSQL's text search, ranked as the SQLite
//! store ranks.
//!
//! The same steps as the SQLite store's search (see its module): each word
//! is counted up to [`COMMON`] entries; the words held by fewer rank, a
//! word's weight its inverse document frequency as in bm25 (the rarer, the
//! more it counts) times `ts_rank` of the entry for it (the subject, weight
//! A, counting double the text, weight B; normalised by the entry's
//! length); newer first among equals. When every word is that common, the
//! newest entries holding all of them come first, then the newest holding
//! any. Among the best [`CANDIDATES`] (or `limit`), entries of the task's
//! type come first.
//!
//! Each word is its own `plainto_tsquery('english', $n)`, a bound
//! parameter: nothing typed is read as query syntax.

use tokio_postgres::Client;

use super::{COLUMNS, entry_from_row};
use crate::memory::query::{CANDIDATES, COMMON, search_terms, task_type_first};
use crate::memory::{Entry, EntryId};

/// See the module docs.
pub(super) async fn search(
    client: &Client,
    query: &str,
    task_type: Option<&str>,
    limit: usize,
) -> Result<Vec<Entry>, tokio_postgres::Error> {
    let terms = search_terms(query);
    if terms.is_empty() || limit == 0 {
        return Ok(Vec::new());
    }
    // One round trip: how many entries hold each word (counted up to COMMON + 1), and how many
    // entries there are (bm25's N; the planner's estimate once the table is large, where a
    // count would cost more than the search and an estimate ranks the same).
    let held = (1..=terms.len())
        .map(|i| {
            format!(
                "(SELECT count(*) FROM (SELECT 1 FROM reach_memory WHERE search @@ \
                 plainto_tsquery('english', ${i}) LIMIT ${limit}) held)",
                limit = terms.len() + 1
            )
        })
        .collect::<Vec<_>>()
        .join(", ");
    let sql = format!(
        "SELECT {held}, (SELECT CASE WHEN c.reltuples >= 10000 THEN c.reltuples::bigint ELSE \
         (SELECT count(*) FROM reach_memory WHERE superseded_by IS NULL) END FROM pg_class c \
         WHERE c.oid = 'reach_memory'::regclass)"
    );
    let most = COMMON + 1;
    let mut params: Vec<&(dyn tokio_postgres::types::ToSql + Sync)> =
        terms.iter().map(|t| t as &(dyn tokio_postgres::types::ToSql + Sync)).collect();
    params.push(&most);
    let row = client.query_one(&sql, &params).await?;
    let total: i64 = row.get(terms.len());
    let (mut rare, mut common) = (Vec::new(), Vec::new());
    for (i, term) in terms.into_iter().enumerate() {
        match row.get::<_, i64>(i) {
            0 => {}
            n if n <= COMMON => rare.push((term, n)),
            _ => common.push(term),
        }
    }
    let want = CANDIDATES.max(limit);
    let ids = if !rare.is_empty() {
        ranked(client, &rare, total, want).await?
    } else if !common.is_empty() {
        let mut ids = newest(client, &common, "&&", want).await?;
        if ids.len() < want {
            for id in newest(client, &common, "||", want).await? {
                if ids.len() < want && !ids.contains(&id) {
                    ids.push(id);
                }
            }
        }
        ids
    } else {
        return Ok(Vec::new());
    };
    let rows = client
        .query(
            &format!(
                "SELECT {COLUMNS} FROM reach_memory WHERE id = ANY($1) AND superseded_by IS NULL"
            ),
            &[&ids],
        )
        .await?;
    let mut found: Vec<Entry> = rows.iter().map(entry_from_row).collect::<Result<_, _>>()?;
    // Back into rank order.
    found.sort_by_key(|e| ids.iter().position(|&id| id == e.id));
    Ok(task_type_first(found, task_type, limit))
}

/// `plainto_tsquery('english', $first) <op> … ` over `n` parameters.
fn queries(first: usize, n: usize, op: &str) -> String {
    (first..first + n)
        .map(|i| format!("plainto_tsquery('english', ${i})"))
        .collect::<Vec<_>>()
        .join(&format!(" {op} "))
}

/// The best `n` matches of any of `rare` (each with the number of entries
/// holding it) among `total` entries, newer first among equals.
async fn ranked(
    client: &Client,
    rare: &[(String, i64)],
    total: i64,
    n: usize,
) -> Result<Vec<EntryId>, tokio_postgres::Error> {
    let total = total.max(1) as f64;
    let weights: Vec<f64> = rare
        .iter()
        .map(|&(_, held)| {
            let held = held as f64;
            (1.0 + (total - held + 0.5).max(0.0) / (held + 0.5)).ln().max(1e-6)
        })
        .collect();
    let k = rare.len();
    // {D, C, B, A}: the subject (A) counts double the text (B); normalisation 1 divides by
    // 1 + the log of the entry's length, as bm25 favours the shorter of two matches.
    let score = (1..=k)
        .map(|i| {
            format!(
                "${w}::float8 * ts_rank('{{0, 0, 0.5, 1}}', search, plainto_tsquery('english', \
                 ${i}), 1)",
                w = k + i
            )
        })
        .collect::<Vec<_>>()
        .join(" + ");
    let sql = format!(
        "SELECT id FROM reach_memory WHERE search @@ ({}) ORDER BY {score} DESC, id DESC LIMIT ${}",
        queries(1, k, "||"),
        2 * k + 1
    );
    let limit = n as i64;
    let mut params: Vec<&(dyn tokio_postgres::types::ToSql + Sync)> = Vec::with_capacity(2 * k + 1);
    params.extend(rare.iter().map(|(term, _)| term as &(dyn tokio_postgres::types::ToSql + Sync)));
    params.extend(weights.iter().map(|w| w as &(dyn tokio_postgres::types::ToSql + Sync)));
    params.push(&limit);
    Ok(client.query(&sql, &params).await?.iter().map(|r| r.get(0)).collect())
}

/// The newest `n` entries holding all (`&&`) or any (`||`) of `terms`.
async fn newest(
    client: &Client,
    terms: &[String],
    op: &str,
    n: usize,
) -> Result<Vec<EntryId>, tokio_postgres::Error> {
    let sql = format!(
        "SELECT id FROM reach_memory WHERE search @@ ({}) ORDER BY id DESC LIMIT ${}",
        queries(1, terms.len(), op),
        terms.len() + 1
    );
    let limit = n as i64;
    let mut params: Vec<&(dyn tokio_postgres::types::ToSql + Sync)> =
        terms.iter().map(|t| t as &(dyn tokio_postgres::types::ToSql + Sync)).collect();
    params.push(&limit);
    Ok(client.query(&sql, &params).await?.iter().map(|r| r.get(0)).collect())
}
