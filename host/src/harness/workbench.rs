//! Large tool results: what the model sees of them, and where the rest is
//! kept. Up to `view_chars` a result goes to the model whole; up to
//! `keep_chars` it is cut with a note; beyond that it is kept here under a
//! handle and the model gets the handle, the size and the head, and pages
//! through it with `workbench__read`.

use std::collections::HashMap;

/// Default: results up to this many characters are shown whole.
pub const VIEW_CHARS: usize = 3000;
/// Default: results above this many characters are kept, not shown.
pub const KEEP_CHARS: usize = 8000;
/// Most characters one `workbench__read` returns.
pub const MAX_READ: usize = 8000;

/// The run's store of large results.
#[derive(Debug, Default)]
pub struct Workbench {
    items: HashMap<String, String>,
    next: usize,
}

impl Workbench {
    /// What the model gets for `result`, keeping it when it is too large.
    pub fn shape(&mut self, result: String, view_chars: usize, keep_chars: usize) -> String {
        let chars = result.chars().count();
        if chars <= view_chars {
            return result;
        }
        let head: String = result.chars().take(view_chars).collect();
        if chars <= keep_chars {
            return format!(
                "{head}\n\
                 [… truncated: showing the first {view_chars} of {chars} characters. Ask the \
                 tool for less (a smaller range, a narrower pattern) to see the rest.]"
            );
        }
        self.next += 1;
        let handle = format!("wb{}", self.next);
        self.items.insert(handle.clone(), result);
        format!(
            "[result kept in the workbench as {handle}: {chars} characters; the first {view_chars} \
             follow. Read more with workbench__read {{\"handle\": \"{handle}\", \"offset\": \
             {view_chars}}}.]\n\
             {head}"
        )
    }

    /// True while nothing was kept.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// Characters `offset..offset+limit` of a kept result.
    pub fn read(&self, handle: &str, offset: usize, limit: usize) -> Result<String, String> {
        let text = self.items.get(handle).ok_or_else(|| {
            let mut known: Vec<&str> = self.items.keys().map(String::as_str).collect();
            known.sort();
            format!(
                "no workbench item {handle:?}; this run has: {}",
                if known.is_empty() { "none".to_owned() } else { known.join(", ") }
            )
        })?;
        let total = text.chars().count();
        let limit = limit.clamp(1, MAX_READ);
        let part: String = text.chars().skip(offset).take(limit).collect();
        let end = (offset + part.chars().count()).min(total);
        let more = if end < total {
            format!(" More: offset {end}.")
        } else {
            " That is the end.".to_owned()
        };
        Ok(format!("[{handle}: characters {offset}..{end} of {total}.{more}]\n{part}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_medium_and_large_results() {
        let mut wb = Workbench::default();
        assert_eq!(wb.shape("short".into(), 10, 20), "short");
        let medium = wb.shape("x".repeat(15), 10, 20);
        assert!(
            medium.starts_with(&"x".repeat(10)) && medium.contains("first 10 of 15"),
            "{medium}"
        );
        let large = wb.shape(format!("{}{}", "a".repeat(10), "b".repeat(30)), 10, 20);
        assert!(
            large.starts_with("[result kept in the workbench as wb1: 40 characters"),
            "{large}"
        );
        assert!(large.ends_with(&"a".repeat(10)));
        let page = wb.read("wb1", 10, 25).unwrap();
        assert_eq!(
            page,
            format!("[wb1: characters 10..35 of 40. More: offset 35.]\n{}", "b".repeat(25))
        );
        assert!(wb.read("wb1", 35, 100).unwrap().contains("That is the end."));
        assert!(wb.read("wb9", 0, 1).unwrap_err().contains("this run has: wb1"));
    }
}
