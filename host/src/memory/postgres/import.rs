//! Adding exported entries to the database: all or none, each joining the
//! history of its kind and subject, the newest version active — the SQLite
//! store's import, with the table locked against other hosts' adds while
//! it runs.

use std::collections::BTreeSet;

use tokio_postgres::Transaction;

use super::{Failure, PostgresStore, RELINKING, Stored, active, check_room, insert};
use crate::memory::export::validate;
use crate::memory::{Entry, EntryId, Imported, MemoryError, checked, subject_key};

/// [`MemoryStore::import`](crate::memory::MemoryStore::import) for [`PostgresStore`].
pub(super) fn import(
    store: &PostgresStore,
    entries: Vec<Entry>,
    file: String,
) -> Result<Imported, MemoryError> {
    for (i, entry) in entries.iter().enumerate() {
        validate(entry).map_err(|message| MemoryError::Import { line: i + 1, message })?;
    }
    store.write(async move |tx, limits| {
        // Adds from other hosts wait (they take ROW EXCLUSIVE); reads go on.
        tx.batch_execute("LOCK TABLE reach_memory IN SHARE ROW EXCLUSIVE MODE").await?;
        let mut report = Imported::default();
        let mut touched = BTreeSet::new();
        for entry in &entries {
            // Whatever the file says, the note comes from the file.
            let fresh = checked(entry.to_new(entry.provenance.imported_from(&file)))?;
            let key = subject_key(&fresh.subject);
            let same = tx.query_opt(
                "SELECT id FROM reach_memory WHERE kind = $1 AND subject_key = $2 AND text = $3 \
                 AND created = $4",
                &[&fresh.kind.name(), &key, &fresh.text, &entry.created],
            ).await?;
            let current = active(tx, fresh.kind, &key).await?;
            let same_as_active =
                entry.is_active() && current.as_ref().is_some_and(|c| c.text == fresh.text);
            if same.is_some() || same_as_active {
                report.existing += 1;
                continue;
            }
            check_room(tx, limits).await?;
            // The file's id when this store never gave it out, so an export imported into a
            // new store keeps its numbers; the sequence then moves past it.
            let given: i64 = tx
                .query_one(
                    "SELECT CASE WHEN is_called THEN last_value ELSE 0 END FROM reach_memory_id_seq",
                    &[],
                )
                .await?
                .get(0);
            let keep = entry.id > given;
            let stored = Stored {
                created: Some(entry.created.clone()),
                last_used: entry.last_used.clone(),
                use_count: entry.use_count as i64,
                id: keep.then_some(entry.id),
            };
            insert(tx, &fresh, &key, &stored, None, Some(RELINKING)).await?;
            if keep {
                tx.execute("SELECT setval('reach_memory_id_seq', $1)", &[&entry.id]).await?;
            }
            touched.insert((fresh.kind.name(), key));
            report.added += 1;
        }
        for (kind, key) in touched {
            relink(tx, kind, &key).await?;
        }
        Ok::<_, Failure>(report)
    })
}

/// Link the versions of one subject in order of creation, the last one
/// active (and so the only one the text search sees).
async fn relink(tx: &Transaction<'_>, kind: &str, key: &str) -> Result<(), tokio_postgres::Error> {
    let ids: Vec<EntryId> = tx
        .query(
            "SELECT id FROM reach_memory WHERE kind = $1 AND subject_key = $2 ORDER BY created, id",
            &[&kind, &key],
        )
        .await?
        .iter()
        .map(|r| r.get(0))
        .collect();
    tx.execute(
        "UPDATE reach_memory SET superseded_by = $1 WHERE kind = $2 AND subject_key = $3",
        &[&RELINKING, &kind, &key],
    )
    .await?;
    let relink = tx
        .prepare("UPDATE reach_memory SET supersedes = $1, superseded_by = $2 WHERE id = $3")
        .await?;
    for (i, id) in ids.iter().enumerate() {
        let before = i.checked_sub(1).map(|j| ids[j]);
        tx.execute(&relink, &[&before, &ids.get(i + 1).copied(), id]).await?;
    }
    Ok(())
}
