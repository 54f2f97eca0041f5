//! How much a tool may do without a person saying yes.

use std::fmt;
use std::str::FromStr;

/// The approval level of a skill or of one of its tools.
///
/// Ordered from most to least restrictive, so `min` of two levels is the
/// stricter one. In the file it is written `auto`, `confirm` or `deny`, or
/// with the older codes `L2`, `L1`, `L0`, in any case.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    /// The tool is never run (`L0`).
    Deny,
    /// The tool runs only after a person approves the call (`L1`).
    Confirm,
    /// The tool runs without asking (`L2`).
    Auto,
}

impl Level {
    /// The short code for the level: `"L0"`, `"L1"` or `"L2"`.
    pub fn code(&self) -> &'static str {
        match self {
            Level::Deny => "L0",
            Level::Confirm => "L1",
            Level::Auto => "L2",
        }
    }

    /// The name written in the file and shown to people.
    pub fn name(&self) -> &'static str {
        match self {
            Level::Deny => "deny",
            Level::Confirm => "confirm",
            Level::Auto => "auto",
        }
    }
}

impl fmt::Display for Level {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A word that is not a level; its message names the accepted words.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{input:?} is not a level; use auto, confirm or deny (or L2, L1, L0)")]
pub struct LevelParseError {
    /// The text that was given.
    pub input: String,
}

impl FromStr for Level {
    type Err = LevelParseError;

    fn from_str(s: &str) -> Result<Level, LevelParseError> {
        // No trimming: a stray space in the file is a typo worth reporting,
        // not something to guess around.
        match s.to_ascii_lowercase().as_str() {
            "auto" | "l2" => Ok(Level::Auto),
            "confirm" | "l1" => Ok(Level::Confirm),
            "deny" | "l0" => Ok(Level::Deny),
            _ => Err(LevelParseError { input: s.to_owned() }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// (text, expected level or `None` for an error)
    const CASES: &[(&str, Option<Level>)] = &[
        ("auto", Some(Level::Auto)),
        ("confirm", Some(Level::Confirm)),
        ("deny", Some(Level::Deny)),
        ("AUTO", Some(Level::Auto)),
        ("Confirm", Some(Level::Confirm)),
        ("DeNy", Some(Level::Deny)),
        ("L2", Some(Level::Auto)),
        ("L1", Some(Level::Confirm)),
        ("L0", Some(Level::Deny)),
        ("l2", Some(Level::Auto)),
        ("l1", Some(Level::Confirm)),
        ("l0", Some(Level::Deny)),
        ("", None),
        ("yes", None),
        ("no", None),
        ("allow", None),
        ("L3", None),
        ("L-1", None),
        ("2", None),
        (" auto", None),
        ("auto ", None),
        ("au to", None),
        ("automatic", None),
        ("confirmed", None),
        ("denied", None),
    ];

    #[test]
    fn parses_names_codes_and_rejects_the_rest() {
        for &(text, expected) in CASES {
            assert_eq!(text.parse::<Level>().ok(), expected, "parsing {text:?}");
        }
    }

    #[test]
    fn display_and_code_round_trip() {
        for level in [Level::Deny, Level::Confirm, Level::Auto] {
            assert_eq!(level.to_string().parse::<Level>(), Ok(level));
            assert_eq!(level.code().parse::<Level>(), Ok(level));
        }
        assert_eq!(Level::Auto.code(), "L2");
        assert_eq!(Level::Confirm.to_string(), "confirm");
    }

    #[test]
    fn deny_is_the_strictest() {
        assert!(Level::Deny < Level::Confirm && Level::Confirm < Level::Auto);
        assert_eq!(Level::Auto.min(Level::Deny), Level::Deny);
    }

    #[test]
    fn serializes_lowercase() {
        let json = toml::Value::try_from(Level::Confirm).expect("serialize");
        assert_eq!(json.as_str(), Some("confirm"));
    }

    #[test]
    fn error_names_the_accepted_words() {
        let err = "yes".parse::<Level>().unwrap_err();
        insta::assert_snapshot!(
            err,
            @r#""yes" is not a level; use auto, confirm or deny (or L2, L1, L0)"#
        );
    }
}
