//! Adding exported entries to the database: all or none, each joining the
//! history of its kind and subject, the newest version active — the SQLite
//! store's import, with the table locked against other hosts' adds while
//! it runs.

use std::collections::BTreeSet;

use std::time::Duration;

use tokio_postgres::Transaction;

use super::{CALL_TIMEOUT, Failure, Limits, PostgresStore, RELINKING, Stored, insert};
use crate::memory::export::validate;
use crate::memory::{Entry, Imported, MemoryError, checked, subject_key};

/// [`MemoryStore::import`](crate::memory::MemoryStore::import) for [`PostgresStore`].
pub(super) fn import(
    store: &PostgresStore,
    entries: Vec<Entry>,
    file: String,
) -> Result<Imported, MemoryError> {
    for (i, entry) in entries.iter().enumerate() {
        validate(entry).map_err(|message| MemoryError::Import { line: i + 1, message })?;
    }
    // Two round trips an entry: a large import takes longer than one call may.
    let limit = CALL_TIMEOUT + PER_ENTRY * u32::try_from(entries.len()).unwrap_or(u32::MAX);
    store.write_within(limit, async move |tx, limits| {
        // Adds and forgets from other hosts wait (they take ROW EXCLUSIVE); reads go on. So
        // what this transaction counts and numbers stays true until it commits.
        tx.batch_execute("LOCK TABLE reach_memory IN SHARE ROW EXCLUSIVE MODE").await?;
        let mut room = Room::read(tx).await?;
        let mut given: i64 = tx
            .query_one(
                "SELECT CASE WHEN is_called THEN last_value ELSE 0 END FROM reach_memory_id_seq",
                &[],
            )
            .await?
            .get(0);
        // The sequence is moved past the ids kept from the file before it hands out another.
        let mut sequence_behind = false;
        let check = tx
            .prepare(
                "SELECT EXISTS (SELECT 1 FROM reach_memory WHERE kind = $1 AND subject_key = $2 \
                 AND text = $3 AND created = $4), (SELECT text FROM reach_memory WHERE kind = $1 \
                 AND subject_key = $2 AND superseded_by IS NULL)",
            )
            .await?;
        let mut report = Imported::default();
        let mut touched = BTreeSet::new();
        for entry in &entries {
            // Whatever the file says, the note comes from the file.
            let fresh = checked(entry.to_new(entry.provenance.imported_from(&file)))?;
            let key = subject_key(&fresh.subject);
            let row = tx
                .query_one(&check, &[&fresh.kind.name(), &key, &fresh.text, &entry.created])
                .await?;
            let (same, active_text): (bool, Option<String>) = (row.get(0), row.get(1));
            let same_as_active = entry.is_active() && active_text.as_ref() == Some(&fresh.text);
            if same || same_as_active {
                report.existing += 1;
                continue;
            }
            room.take(limits)?;
            // The file's id when this store never gave it out, so an export imported into a
            // new store keeps its numbers.
            let keep = entry.id > given;
            if !keep && sequence_behind {
                tx.execute("SELECT setval('reach_memory_id_seq', $1)", &[&given]).await?;
                sequence_behind = false;
            }
            let stored = Stored {
                created: Some(entry.created.clone()),
                last_used: entry.last_used.clone(),
                use_count: entry.use_count as i64,
                id: keep.then_some(entry.id),
            };
            let id = insert(tx, &fresh, &key, &stored, None, Some(RELINKING)).await?;
            sequence_behind |= keep;
            given = given.max(id);
            touched.insert((fresh.kind.name(), key));
            report.added += 1;
        }
        if sequence_behind {
            tx.execute("SELECT setval('reach_memory_id_seq', $1)", &[&given]).await?;
        }
        relink(tx, &touched).await?;
        Ok::<_, Failure>(report)
    })
}

/// How long an import may take per entry, beyond one call's limit.
const PER_ENTRY: Duration = Duration::from_millis(5);

/// Room left in the store, counted once (the table is locked).
struct Room {
    entries: u64,
}

impl Room {
    async fn read(tx: &Transaction<'_>) -> Result<Room, Failure> {
        let count: i64 = tx.query_one("SELECT count(*) FROM reach_memory", &[]).await?.get(0);
        Ok(Room { entries: count.max(0) as u64 })
    }

    /// One more entry, or the store is full.
    fn take(&mut self, limits: Limits) -> Result<(), MemoryError> {
        if self.entries >= limits.max_entries {
            return Err(MemoryError::Full { limit: limits.max_entries });
        }
        self.entries += 1;
        Ok(())
    }
}

/// Link the versions of each touched subject in order of creation, the
/// last one active (and so the only one the text search sees): two
/// statements for all of them.
async fn relink(
    tx: &Transaction<'_>,
    touched: &BTreeSet<(&'static str, String)>,
) -> Result<(), tokio_postgres::Error> {
    let kinds: Vec<&str> = touched.iter().map(|(kind, _)| *kind).collect();
    let keys: Vec<&str> = touched.iter().map(|(_, key)| key.as_str()).collect();
    // Every version out of the one-active-entry index first, so that no statement sees two.
    tx.execute(
        "UPDATE reach_memory e SET superseded_by = $3 FROM unnest($1::text[], $2::text[]) \
         AS t(kind, key) WHERE e.kind = t.kind AND e.subject_key = t.key",
        &[&kinds, &keys, &RELINKING],
    )
    .await?;
    tx.execute(
        "WITH ordered AS (SELECT e.id, lag(e.id) OVER w AS before, lead(e.id) OVER w AS after \
         FROM reach_memory e JOIN unnest($1::text[], $2::text[]) AS t(kind, key) \
         ON e.kind = t.kind AND e.subject_key = t.key \
         WINDOW w AS (PARTITION BY e.kind, e.subject_key ORDER BY e.created, e.id)) \
         UPDATE reach_memory e SET supersedes = o.before, superseded_by = o.after \
         FROM ordered o WHERE e.id = o.id",
        &[&kinds, &keys],
    )
    .await?;
    Ok(())
}
