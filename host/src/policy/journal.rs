//! The optional `[journal]` table: how much of what skills change a run may
//! keep for undo, what a change past it gets, and how much of what skills
//! receive a run records for replay.
//!
//! ```toml
//! [journal]
//! max_mb = 256            # prior contents a run may keep (the default)
//! undo = "strict"         # strict: refuse a change past it | best-effort: allow it, not undoable
//! record_mb = 64          # responses and results a run records for replay (the default; 0: none)
//! ```

use serde::Deserialize;
use toml::Spanned;

use super::error::{PolicyError, Source};
use crate::journal::{Budget, UndoMode};

/// Allowed `max_mb`: 1 MiB to 1 TiB.
const MAX_MB: std::ops::RangeInclusive<i64> = 1..=1_048_576;

#[derive(Deserialize)]
#[serde(deny_unknown_fields, expecting = "a table with max_mb, undo, record_mb")]
pub(super) struct RawJournal {
    max_mb: Option<Spanned<i64>>,
    undo: Option<Spanned<String>>,
    record_mb: Option<Spanned<i64>>,
}

/// The `[journal]` table, checked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct JournalSettings {
    /// What a run may keep for undo.
    pub budget: Budget,
    /// Bytes of responses and results a run may record for replay.
    pub record_bytes: u64,
}

impl Default for JournalSettings {
    fn default() -> Self {
        JournalSettings {
            budget: Budget::default(),
            record_bytes: crate::tape::DEFAULT_RECORD_BYTES,
        }
    }
}

impl RawJournal {
    /// Check the table.
    pub(super) fn resolve(self, src: &Source<'_>) -> Result<JournalSettings, PolicyError> {
        let mut record_bytes = crate::tape::DEFAULT_RECORD_BYTES;
        if let Some(mb) = &self.record_mb {
            let value = *mb.get_ref();
            if !(0..=*MAX_MB.end()).contains(&value) {
                return Err(src.invalid(
                    &mb.span(),
                    "journal.record_mb",
                    format!("{value} is out of range; use 0 (record nothing) to {}", MAX_MB.end()),
                ));
            }
            record_bytes = (value as u64) << 20;
        }
        let mut budget = Budget::default();
        if let Some(mb) = &self.max_mb {
            let value = *mb.get_ref();
            if !MAX_MB.contains(&value) {
                return Err(src.invalid(
                    &mb.span(),
                    "journal.max_mb",
                    format!("{value} is out of range; use 1 to {}", MAX_MB.end()),
                ));
            }
            budget.max_bytes = (value as u64) << 20;
        }
        if let Some(undo) = &self.undo {
            budget.mode = match undo.get_ref().as_str() {
                "strict" => UndoMode::Strict,
                "best-effort" => UndoMode::BestEffort,
                other => {
                    return Err(src.invalid(
                        &undo.span(),
                        "journal.undo",
                        format!(
                            "{other:?} is not a mode; use \"strict\" (refuse a change the journal \
                             cannot keep) or \"best-effort\" (allow it, not undoable)"
                        ),
                    ));
                }
            };
        }
        Ok(JournalSettings { budget, record_bytes })
    }
}
