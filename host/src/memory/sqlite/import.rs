//! Adding exported entries to a store: all or none, each joining the
//! history of its kind and subject, the newest version active.

use std::collections::BTreeSet;

use rusqlite::{OptionalExtension, Transaction, params};

use super::{RELINKING, SqliteStore, Stored, active, insert};
use crate::memory::export::validate;
use crate::memory::{Entry, EntryId, Imported, MemoryError, checked, subject_key};

/// [`MemoryStore::import`](crate::memory::MemoryStore::import) for [`SqliteStore`].
pub(super) fn import(
    store: &SqliteStore,
    entries: &[Entry],
    file: &str,
) -> Result<Imported, MemoryError> {
    for (i, entry) in entries.iter().enumerate() {
        validate(entry).map_err(|message| MemoryError::Import { line: i + 1, message })?;
    }
    store.write(|tx| {
        let mut report = Imported::default();
        let mut touched = BTreeSet::new();
        for entry in entries {
            // Whatever the file says, the note comes from the file.
            let fresh = match checked(entry.to_new(entry.provenance.imported_from(file))) {
                Ok(fresh) => fresh,
                Err(invalid) => return Ok(Err(invalid)),
            };
            let key = subject_key(&fresh.subject);
            let same: Option<i64> = tx
                .query_row(
                    "SELECT id FROM entries WHERE kind = ?1 AND subject_key = ?2 AND text = ?3 AND \
                     created = ?4",
                    params![fresh.kind.name(), key, fresh.text, entry.created],
                    |r| r.get(0),
                )
                .optional()?;
            let current = active(tx, fresh.kind, &key)?;
            let same_as_active =
                entry.is_active() && current.as_ref().is_some_and(|c| c.text == fresh.text);
            if same.is_some() || same_as_active {
                report.existing += 1;
                continue;
            }
            if let Err(full) = store.check_room(tx)? {
                return Ok(Err(full));
            }
            // The file's id when this store never gave it out, so an
            // export imported into a new store keeps its numbers.
            let seq: i64 = tx
                .query_row("SELECT seq FROM sqlite_sequence WHERE name = 'entries'", [], |r| {
                    r.get(0)
                })
                .optional()?
                .unwrap_or(0);
            let stored = Stored {
                created: Some(entry.created.clone()),
                last_used: entry.last_used.clone(),
                use_count: entry.use_count as i64,
                id: (entry.id > seq).then_some(entry.id),
            };
            insert(tx, &fresh, &key, &stored, None, Some(RELINKING))?;
            touched.insert((fresh.kind.name(), key));
            report.added += 1;
        }
        for (kind, key) in touched {
            relink(tx, kind, &key)?;
        }
        Ok(Ok(report))
    })
}

/// Link the versions of one subject in order of creation, the last one
/// active and the only one in the search index.
fn relink(tx: &Transaction<'_>, kind: &str, key: &str) -> rusqlite::Result<()> {
    let was_active: Option<EntryId> = tx
        .query_row(
            "SELECT id FROM entries WHERE kind = ?1 AND subject_key = ?2 AND superseded_by IS NULL",
            params![kind, key],
            |r| r.get(0),
        )
        .optional()?;
    let mut stmt = tx.prepare(
        "SELECT id FROM entries WHERE kind = ?1 AND subject_key = ?2 ORDER BY created, id",
    )?;
    let ids: Vec<EntryId> =
        stmt.query_map(params![kind, key], |r| r.get(0))?.collect::<Result<_, _>>()?;
    tx.execute(
        "UPDATE entries SET superseded_by = ?1 WHERE kind = ?2 AND subject_key = ?3",
        params![RELINKING, kind, key],
    )?;
    for (i, id) in ids.iter().enumerate() {
        let before = i.checked_sub(1).map(|j| ids[j]);
        tx.execute(
            "UPDATE entries SET supersedes = ?1, superseded_by = ?2 WHERE id = ?3",
            params![before, ids.get(i + 1).copied(), id],
        )?;
    }
    let now_active = ids.last().copied();
    if was_active != now_active {
        if let Some(old) = was_active {
            tx.execute("DELETE FROM memory_fts WHERE rowid = ?1", [old])?;
        }
        if let Some(new) = now_active {
            tx.execute(
                "INSERT INTO memory_fts (rowid, subject, text) SELECT id, subject, text FROM \
                 entries WHERE id = ?1",
                [new],
            )?;
        }
    }
    Ok(())
}
