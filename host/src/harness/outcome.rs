//! How a call was decided and how it (or a worker) ended, and a reviewer's
//! verdict: the typed values the report ([`super::report`]) and the audit
//! records share, written as the strings the log and `--json` have always
//! held (`auto`, `-`, `ok`, `DENIED`, `pass`). At the bottom of the
//! harness: it uses none of its parts.

use crate::error::ErrorCode;
use serde::{Deserialize, Serialize};
use std::fmt;

/// How a call's permission level was decided.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum Decision {
    /// Level `auto`: it ran without asking.
    Auto,
    /// Level `confirm`, and the [`Confirmer`](crate::Confirmer) allowed it.
    Confirmed,
    /// Level `confirm`, and the confirmer refused it: nothing ran.
    Declined,
    /// Forbidden (level `deny`, or a refusal the model already got once):
    /// nothing ran.
    Denied,
    /// The call never reached the level check (no such tool, invalid
    /// arguments).
    #[serde(rename = "-")]
    NotReached,
}

impl Decision {
    /// The decision as the audit log writes it (`confirmed`, `-`).
    pub fn as_str(self) -> &'static str {
        match self {
            Decision::Auto => "auto",
            Decision::Confirmed => "confirmed",
            Decision::Declined => "declined",
            Decision::Denied => "denied",
            Decision::NotReached => "-",
        }
    }

    /// The decision written `name`; anything else did not reach the check.
    pub fn named(name: &str) -> Decision {
        [Decision::Auto, Decision::Confirmed, Decision::Declined, Decision::Denied]
            .into_iter()
            .find(|d| d.as_str() == name)
            .unwrap_or(Decision::NotReached)
    }
}

impl fmt::Display for Decision {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// How a call or a delegation ended: `ok`, or the error code the model
/// (or the parent) got.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Outcome {
    /// The call returned a result; the worker's answer came back in its
    /// format.
    #[default]
    Ok,
    /// It failed (or no worker started) with this code.
    Failed(ErrorCode),
}

impl Outcome {
    /// As the log writes it: `ok`, `INVALID_OUTPUT`, ….
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Ok => "ok",
            Outcome::Failed(code) => code.as_str(),
        }
    }
}

impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for Outcome {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for Outcome {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Outcome, D::Error> {
        let text = String::deserialize(d)?;
        if text == "ok" {
            return Ok(Outcome::Ok);
        }
        ErrorCode::deserialize(serde::de::value::StrDeserializer::<D::Error>::new(&text))
            .map(Outcome::Failed)
    }
}

/// A reviewer's verdict.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    /// Every criterion is met.
    Pass,
    /// Not yet: the issues say what is missing.
    Revise,
}

impl Verdict {
    /// `pass` or `revise`.
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Pass => "pass",
            Verdict::Revise => "revise",
        }
    }

    /// The verdict written `name`, if it is one.
    pub fn named(name: &str) -> Option<Verdict> {
        [Verdict::Pass, Verdict::Revise].into_iter().find(|v| v.as_str() == name)
    }
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Compared with the string the log writes, as tests and embedders that
/// read `--json` do.
macro_rules! eq_str {
    ($($ty:ty),*) => {$(
        impl PartialEq<str> for $ty {
            fn eq(&self, other: &str) -> bool {
                self.as_str() == other
            }
        }

        impl PartialEq<&str> for $ty {
            fn eq(&self, other: &&str) -> bool {
                self.as_str() == *other
            }
        }
    )*};
}

eq_str!(Decision, Outcome, Verdict);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_value_is_written_as_the_log_has_always_written_it() {
        let written = serde_json::to_value((
            [Decision::Auto, Decision::Confirmed, Decision::Declined, Decision::Denied],
            Decision::NotReached,
            [Outcome::Ok, Outcome::Failed(ErrorCode::Denied)],
            [Verdict::Pass, Verdict::Revise],
        ))
        .unwrap();
        assert_eq!(
            written,
            serde_json::json!([
                ["auto", "confirmed", "declined", "denied"],
                "-",
                ["ok", "DENIED"],
                ["pass", "revise"]
            ])
        );
        for d in ["auto", "confirmed", "declined", "denied", "-"] {
            assert_eq!(Decision::named(d), d);
        }
        let back: Outcome = serde_json::from_str("\"NOT_FOUND\"").unwrap();
        assert_eq!(back, Outcome::Failed(ErrorCode::NotFound));
        assert_eq!(Verdict::named("maybe"), None);
    }
}
