//! Severity levels, and how each log format spells them.
//!
//! Every format maps onto one small scale so that counts and filters mean
//! the same thing whether a line said `ERROR`, `"level":50`, `[error]` or
//! answered with HTTP status 503.

use agent_reach_sdk::prelude::*;

/// A severity, least severe first (the derived order is used by filters).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Level {
    /// Finest detail: TRACE, FINEST, VERBOSE.
    Trace,
    /// DEBUG, FINE.
    Debug,
    /// INFO, NOTICE; access-log lines with status 1xx–3xx.
    Info,
    /// WARN, WARNING; access-log lines with status 4xx.
    Warn,
    /// ERROR, ERR, SEVERE; access-log lines with status 5xx.
    Error,
    /// FATAL, CRITICAL, ALERT, EMERGENCY, PANIC.
    Fatal,
}

impl Level {
    /// The name used in results and arguments.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Level::Trace => "trace",
            Level::Debug => "debug",
            Level::Info => "info",
            Level::Warn => "warn",
            Level::Error => "error",
            Level::Fatal => "fatal",
        }
    }

    /// A level word in any case (`ERROR`, `Warning`, `crit`), or `None` for
    /// any other word. Single letters are not levels here: in free text they
    /// are far more often something else.
    pub(crate) fn from_word(word: &[u8]) -> Option<Level> {
        // Longest level word is "EMERGENCY"; anything longer cannot match,
        // and the fixed buffer keeps the per-line check allocation-free.
        let mut upper = [0u8; 11];
        if word.len() < 3 || word.len() > upper.len() {
            return None;
        }
        for (dst, src) in upper.iter_mut().zip(word) {
            *dst = src.to_ascii_uppercase();
        }
        Some(match &upper[..word.len()] {
            b"TRACE" | b"FINER" | b"FINEST" | b"VERBOSE" => Level::Trace,
            b"DEBUG" | b"DBG" | b"FINE" => Level::Debug,
            b"INFO" | b"INF" | b"NOTICE" | b"INFORMATION" => Level::Info,
            b"WARN" | b"WARNING" | b"WRN" => Level::Warn,
            b"ERROR" | b"ERR" | b"SEVERE" => Level::Error,
            b"FATAL" | b"CRITICAL" | b"CRIT" | b"ALERT" | b"EMERG" | b"EMERGENCY" | b"PANIC" => {
                Level::Fatal
            }
            _ => return None,
        })
    }

    /// The value of a field that is known to hold a level, where one-letter
    /// forms (`E`, `W`, `I`, `D`) are unambiguous.
    pub(crate) fn from_field(value: &[u8]) -> Option<Level> {
        match value {
            [letter] => match letter.to_ascii_uppercase() {
                b'T' => Some(Level::Trace),
                b'D' => Some(Level::Debug),
                b'I' => Some(Level::Info),
                b'W' => Some(Level::Warn),
                b'E' => Some(Level::Error),
                b'F' | b'C' => Some(Level::Fatal),
                _ => None,
            },
            _ => Level::from_word(value),
        }
    }

    /// A numeric level: bunyan/pino use 10–60 in steps of ten, syslog uses
    /// severities 0 (emergency) to 7 (debug).
    pub(crate) fn from_number(n: i64) -> Option<Level> {
        Some(match n {
            0..=2 => Level::Fatal,
            3 => Level::Error,
            4 => Level::Warn,
            5 | 6 => Level::Info,
            7 => Level::Debug,
            10..=19 => Level::Trace,
            20..=29 => Level::Debug,
            30..=39 => Level::Info,
            40..=49 => Level::Warn,
            50..=59 => Level::Error,
            60..=69 => Level::Fatal,
            _ => return None,
        })
    }

    /// The level an HTTP status implies: a server error is an error, a
    /// client error a warning, everything else information.
    pub(crate) fn from_status(status: u16) -> Level {
        match status {
            500.. => Level::Error,
            400..=499 => Level::Warn,
            _ => Level::Info,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Level;

    #[test]
    fn words_in_any_case() {
        let rows: &[(&[u8], Option<Level>)] = &[
            (b"ERROR", Some(Level::Error)),
            (b"error", Some(Level::Error)),
            (b"Err", Some(Level::Error)),
            (b"SEVERE", Some(Level::Error)),
            (b"Warning", Some(Level::Warn)),
            (b"WARN", Some(Level::Warn)),
            (b"info", Some(Level::Info)),
            (b"NOTICE", Some(Level::Info)),
            (b"debug", Some(Level::Debug)),
            (b"TRACE", Some(Level::Trace)),
            (b"crit", Some(Level::Fatal)),
            (b"EMERGENCY", Some(Level::Fatal)),
            (b"E", None),
            (b"errors", None),
            (b"informational", None),
            (b"", None),
            (b"GET", None),
        ];
        for (word, want) in rows {
            assert_eq!(Level::from_word(word), *want, "{}", String::from_utf8_lossy(word));
        }
    }

    #[test]
    fn one_letter_levels_only_in_level_fields() {
        assert_eq!(Level::from_field(b"E"), Some(Level::Error));
        assert_eq!(Level::from_field(b"w"), Some(Level::Warn));
        assert_eq!(Level::from_field(b"warning"), Some(Level::Warn));
        assert_eq!(Level::from_field(b"X"), None);
    }

    #[test]
    fn numbers_follow_pino_and_syslog() {
        assert_eq!(Level::from_number(30), Some(Level::Info));
        assert_eq!(Level::from_number(50), Some(Level::Error));
        assert_eq!(Level::from_number(60), Some(Level::Fatal));
        assert_eq!(Level::from_number(3), Some(Level::Error));
        assert_eq!(Level::from_number(7), Some(Level::Debug));
        assert_eq!(Level::from_number(100), None);
    }

    #[test]
    fn status_classes() {
        assert_eq!(Level::from_status(200), Level::Info);
        assert_eq!(Level::from_status(304), Level::Info);
        assert_eq!(Level::from_status(404), Level::Warn);
        assert_eq!(Level::from_status(503), Level::Error);
    }

    #[test]
    fn order_is_by_severity() {
        assert!(
            Level::Fatal > Level::Error && Level::Error > Level::Warn && Level::Warn > Level::Info
        );
        assert!(Level::Info > Level::Debug && Level::Debug > Level::Trace);
    }
}
