//! Why a policy file was refused, with the place to fix it.

use std::ops::Range;
use std::path::{Path, PathBuf};

/// A policy file that could not be read, parsed or accepted.
///
/// Every variant but [`Io`](PolicyError::Io) points at a line and column
/// (both 1-based, columns counted in characters), so the message reads like a
/// compiler's: `reach.toml:7:9: skills.files.net[0]: ...`.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PolicyError {
    /// The file (or the folder it sits in) could not be read.
    #[error("cannot read policy file {}", path.display())]
    Io {
        /// The path that failed.
        path: PathBuf,
        /// What the operating system said.
        #[source]
        source: std::io::Error,
    },
    /// The text is not TOML, or its shape does not match the format (unknown
    /// key, wrong type, missing `level` in a tool override).
    #[error("{}:{line}:{column}: {message}", file.display())]
    Syntax {
        /// The policy file, as it was named to [`Policy::load`](super::Policy::load).
        file: PathBuf,
        /// 1-based line.
        line: usize,
        /// 1-based column, in characters.
        column: usize,
        /// The parser's message, on one line.
        message: String,
    },
    /// A well-formed value that is not acceptable: a bad level, host pattern,
    /// folder, name or limit.
    #[error("{}:{line}:{column}: {key}: {message}", file.display())]
    Invalid {
        /// The policy file, as it was named to [`Policy::load`](super::Policy::load).
        file: PathBuf,
        /// 1-based line.
        line: usize,
        /// 1-based column, in characters.
        column: usize,
        /// The dotted key of the value, e.g. `skills.files.net[1]`.
        key: String,
        /// What is wrong and what would be accepted.
        message: String,
    },
}

/// The text being resolved and its name, for turning spans into errors.
pub(super) struct Source<'a> {
    pub(super) text: &'a str,
    pub(super) origin: &'a Path,
}

impl Source<'_> {
    /// 1-based line and character column of a byte offset.
    pub(super) fn position(&self, offset: usize) -> (usize, usize) {
        let offset = offset.min(self.text.len());
        let before = self.text.get(..offset).unwrap_or(self.text);
        let line_start = before.rfind('\n').map_or(0, |i| i + 1);
        let line = before.matches('\n').count() + 1;
        let column = before[line_start..].chars().count() + 1;
        (line, column)
    }

    /// The 1-based line a span starts on.
    pub(super) fn line(&self, span: &Range<usize>) -> usize {
        self.position(span.start).0
    }

    /// An [`PolicyError::Invalid`] for the value at `span`.
    pub(super) fn invalid(
        &self,
        span: &Range<usize>,
        key: impl Into<String>,
        message: impl Into<String>,
    ) -> PolicyError {
        let (line, column) = self.position(span.start);
        PolicyError::Invalid {
            file: self.origin.to_owned(),
            line,
            column,
            key: key.into(),
            message: message.into(),
        }
    }

    /// A [`PolicyError::Syntax`] from the TOML parser's error.
    pub(super) fn syntax(&self, error: &toml::de::Error) -> PolicyError {
        let (line, column) = error.span().map_or((1, 1), |span| self.position(span.start));
        // toml's own Display draws the source line with a caret over several
        // lines; a policy error is one line, so keep only the message.
        let message = error.message().lines().map(str::trim).collect::<Vec<_>>().join("; ");
        PolicyError::Syntax { file: self.origin.to_owned(), line, column, message }
    }
}

/// A key as TOML would write it: bare when it can be, quoted otherwise, so
/// the dotted path in a message can be pasted back into the file.
pub(super) fn toml_key(key: &str) -> String {
    let bare =
        !key.is_empty() && key.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
    if bare { key.to_owned() } else { format!("{key:?}") }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// (text, byte offset, line, column)
    const POSITIONS: &[(&str, usize, usize, usize)] = &[
        ("", 0, 1, 1),
        ("abc", 0, 1, 1),
        ("abc", 2, 1, 3),
        ("abc", 3, 1, 4),
        ("a\nb", 2, 2, 1),
        ("a\nbc", 3, 2, 2),
        ("a\n\n\nx", 4, 4, 1),
        ("é = 1", 3, 1, 3),
        ("x\r\ny", 3, 2, 1),
        ("abc", 99, 1, 4),
    ];

    #[test]
    fn positions_are_one_based_lines_and_character_columns() {
        for &(text, offset, line, column) in POSITIONS {
            let source = Source { text, origin: Path::new("t.toml") };
            assert_eq!(source.position(offset), (line, column), "{text:?} at {offset}");
        }
    }

    #[test]
    fn keys_are_quoted_only_when_needed() {
        assert_eq!(toml_key("files"), "files");
        assert_eq!(toml_key("web-fetch_2"), "web-fetch_2");
        assert_eq!(toml_key("Bad Name"), r#""Bad Name""#);
        assert_eq!(toml_key(""), r#""""#);
        assert_eq!(toml_key("a.b"), r#""a.b""#);
    }

    #[test]
    fn io_error_names_the_file_and_keeps_the_cause() {
        let err = PolicyError::Io {
            path: PathBuf::from("/etc/reach.toml"),
            source: std::io::Error::new(std::io::ErrorKind::NotFound, "gone"),
        };
        insta::assert_snapshot!(err, @"cannot read policy file /etc/reach.toml");
        let source = std::error::Error::source(&err).map(ToString::to_string);
        assert_eq!(source.as_deref(), Some("gone"));
    }
}
