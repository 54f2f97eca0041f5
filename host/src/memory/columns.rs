//! How both stores keep a provenance in columns: `source` (`user` or
//! `tool`), `run_id`, `step`, `tool`, and `imported_from` for an import —
//! whose claim then fills the other four, as a provenance of its own would.

use super::Provenance;

/// A provenance as its columns.
#[cfg_attr(not(any(feature = "memory-sqlite", feature = "memory-postgres")), expect(dead_code))]
pub(crate) struct Columns<'a> {
    /// `user` or `tool`.
    pub source: &'static str,
    pub run_id: Option<&'a str>,
    pub step: Option<u32>,
    pub tool: Option<&'a str>,
    /// The file of an import.
    pub imported_from: Option<&'a str>,
}

#[cfg_attr(not(any(feature = "memory-sqlite", feature = "memory-postgres")), expect(dead_code))]
impl Provenance {
    /// This provenance as its columns.
    pub(crate) fn columns(&self) -> Columns<'_> {
        let (claim, imported_from) = match self {
            Provenance::Imported { file, claimed } => (claimed.as_ref(), Some(file.as_str())),
            own => (own, None),
        };
        let (source, run_id, step, tool) = match claim {
            Provenance::Tool { run_id, step, tool } => {
                ("tool", Some(run_id.as_str()), Some(*step), tool.as_deref())
            }
            Provenance::User { run_id, step } => ("user", run_id.as_deref(), *step, None),
            // `checked` refuses an import of an import.
            Provenance::Imported { .. } => ("user", None, None, None),
        };
        Columns { source, run_id, step, tool, imported_from }
    }

    /// The provenance these columns hold.
    pub(crate) fn from_columns(
        source: &str,
        run_id: Option<String>,
        step: Option<u32>,
        tool: Option<String>,
        imported_from: Option<String>,
    ) -> Provenance {
        let own = match source {
            "tool" => Provenance::Tool {
                run_id: run_id.unwrap_or_default(),
                step: step.unwrap_or(0),
                tool,
            },
            _ => Provenance::User { run_id, step },
        };
        match imported_from {
            Some(file) => Provenance::Imported { file, claimed: Box::new(own) },
            None => own,
        }
    }
}
