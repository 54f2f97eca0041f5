//! An entry's row: its columns, reading and writing it.

use tokio_postgres::{GenericClient, Row, Transaction};

use super::Failure;
use crate::memory::{Entry, EntryId, Kind, MemoryError, NewEntry, Provenance};

/// Every column of an entry, in the order [`entry_from_row`] reads them.
pub(super) const COLUMNS: &str = "id, kind, subject, text, task_type, source, run_id, step, tool, created, \
                       last_used, use_count, supersedes, superseded_by, imported_from";

/// Now, on the database's clock (one clock for every host), as every time
/// in the store is written: `2026-12-02T11:36:25.123Z`.
pub(super) const NOW: &str =
    "to_char(clock_timestamp() AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"')";

/// Stands in `superseded_by` while a row is being relinked, so the
/// one-active-entry index holds at every statement. Never an id.
pub(super) const RELINKING: EntryId = 0;

/// What an entry keeps from elsewhere when imported.
pub(super) struct Stored {
    pub(super) created: Option<String>,
    pub(super) last_used: Option<String>,
    pub(super) use_count: i64,
    pub(super) id: Option<EntryId>,
}

pub(super) async fn insert(
    tx: &Transaction<'_>,
    entry: &NewEntry,
    key: &str,
    stored: &Stored,
    supersedes: Option<EntryId>,
    superseded_by: Option<EntryId>,
) -> Result<EntryId, tokio_postgres::Error> {
    let columns = entry.provenance.columns();
    let step = columns.step.map(i64::from);
    let (id_column, id_value) = if stored.id.is_some() { ("id, ", "$16, ") } else { ("", "") };
    let sql = format!(
        "INSERT INTO reach_memory ({id_column}kind, subject, subject_key, text, task_type, source, \
         run_id, step, tool, created, last_used, use_count, supersedes, superseded_by, \
         imported_from) VALUES ({id_value}$1, $2, $3, $4, $5, $6, $7, $8, $9, COALESCE($10, {NOW}), \
         $11, $12, $13, $14, $15) RETURNING id"
    );
    let kind = entry.kind.name();
    let mut params: Vec<&(dyn tokio_postgres::types::ToSql + Sync)> = vec![
        &kind,
        &entry.subject,
        &key,
        &entry.text,
        &entry.task_type,
        &columns.source,
        &columns.run_id,
        &step,
        &columns.tool,
        &stored.created,
        &stored.last_used,
        &stored.use_count,
        &supersedes,
        &superseded_by,
        &columns.imported_from,
    ];
    if let Some(id) = &stored.id {
        params.push(id);
    }
    Ok(tx.query_one(&sql, &params).await?.get(0))
}

/// The active entry of a kind and subject key.
pub(super) async fn active(
    client: &impl GenericClient,
    kind: Kind,
    key: &str,
) -> Result<Option<Entry>, tokio_postgres::Error> {
    let sql = format!(
        "SELECT {COLUMNS} FROM reach_memory WHERE kind = $1 AND subject_key = $2 AND \
         superseded_by IS NULL"
    );
    client.query_opt(&sql, &[&kind.name(), &key]).await?.as_ref().map(entry_from_row).transpose()
}

pub(super) async fn by_id(
    client: &impl GenericClient,
    id: EntryId,
) -> Result<Option<Entry>, tokio_postgres::Error> {
    let sql = format!("SELECT {COLUMNS} FROM reach_memory WHERE id = $1");
    client.query_opt(&sql, &[&id]).await?.as_ref().map(entry_from_row).transpose()
}

/// An entry read back right after it was written is there; if not, the
/// database is not behaving, and the transaction rolls back.
pub(super) fn missing(id: EntryId) -> Failure {
    Failure::Memory(MemoryError::Invalid {
        field: "database",
        reason: format!("lost entry {id} inside its own transaction; nothing was written"),
    })
}

pub(super) fn entry_from_row(row: &Row) -> Result<Entry, tokio_postgres::Error> {
    let kind: String = row.try_get(1)?;
    // The table's CHECK allows the three kinds only.
    let kind = Kind::from_name(&kind).unwrap_or(Kind::Fact);
    let step: Option<i64> = row.try_get(7)?;
    let provenance = Provenance::from_columns(
        row.try_get(5)?,
        row.try_get(6)?,
        step.map(|s| u32::try_from(s).unwrap_or(0)),
        row.try_get(8)?,
        row.try_get(14)?,
    );
    Ok(Entry {
        id: row.try_get(0)?,
        kind,
        subject: row.try_get(2)?,
        text: row.try_get(3)?,
        task_type: row.try_get(4)?,
        provenance,
        created: row.try_get(9)?,
        last_used: row.try_get(10)?,
        use_count: row.try_get::<_, i64>(11)?.max(0) as u64,
        supersedes: row.try_get(12)?,
        superseded_by: row.try_get(13)?,
    })
}
