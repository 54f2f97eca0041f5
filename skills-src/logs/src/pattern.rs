//! The `pattern` argument shared by the tools: plain text or a regular
//! expression, matched against the bytes of each line.

use agent_reach_sdk::prelude::*;
use regex::bytes::{Regex, RegexBuilder};

/// Compile `pattern` for `tool`. Plain text goes through `regex` too
/// (escaped): its literal search is as fast as a hand-written one, and
/// case folding then works the same way for both. Invalid UTF-8 in a line
/// never fails a match; it just cannot be matched by `.`.
pub(crate) fn compile(
    tool: &str,
    pattern: &str,
    regex: bool,
    case_sensitive: bool,
) -> Result<Regex, ToolError> {
    if pattern.is_empty() {
        return Err(ToolError::invalid_arguments(format!(
            "{tool}: `pattern` is empty; give the text to look for"
        )));
    }
    let source = if regex { pattern.to_owned() } else { regex::escape(pattern) };
    RegexBuilder::new(&source).case_insensitive(!case_sensitive).build().map_err(|err| {
        ToolError::invalid_arguments(format!(
            "{tool}: `pattern` is not a valid regular expression: {err}\n\
             (set `regex` to false to look for the text as it is)"
        ))
    })
}

/// [`compile`] for an optional `pattern` argument; `case_sensitive`
/// defaults to true. An empty pattern is no pattern: models fill optional
/// arguments with `""` where they mean "none".
pub(crate) fn compile_optional(
    tool: &str,
    pattern: Option<&str>,
    regex: bool,
    case_sensitive: Option<bool>,
) -> Result<Option<Regex>, ToolError> {
    pattern
        .filter(|p| !p.is_empty())
        .map(|p| compile(tool, p, regex, case_sensitive.unwrap_or(true)))
        .transpose()
}

#[cfg(test)]
mod tests {
    use super::compile;

    #[test]
    fn plain_text_is_literal() {
        let re = compile("t", "a.b(", false, true).unwrap();
        assert!(re.is_match(b"x a.b( y") && !re.is_match(b"axb("));
    }

    #[test]
    fn regex_and_case() {
        let re = compile("t", r"time(d )?out \d+", true, false).unwrap();
        assert!(re.is_match(b"TIMED OUT 30"));
        assert!(re.is_match(b"bad \xff then timeout 5"), "invalid UTF-8 elsewhere in the line");
    }

    #[test]
    fn errors_name_the_tool() {
        assert!(
            compile("grep", "", false, true)
                .unwrap_err()
                .message
                .starts_with("grep: `pattern` is empty")
        );
        assert!(
            compile("grep", "(", true, true)
                .unwrap_err()
                .message
                .contains("not a valid regular expression")
        );
    }
}
