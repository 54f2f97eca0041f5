//! JSON-lines logs: one object per line, with the usual field names of
//! structured loggers (`level`/`severity`, `msg`/`message`, `time`/
//! `timestamp`, and for request logs `status`, `path`, `method`, `ip`…).
//!
//! Only top-level fields are read (see `json_object`). Real logs have both
//! `time` and `timestamp`, or an `error` that is an object; the first
//! usable value of each field wins and nothing else rejects a line.

use crate::json_object::{Scalar, members};
use crate::level::Level;
use crate::plain;
use crate::record::{Record, path_only};
use std::borrow::Cow;

/// Parse a JSON-lines record, or `None` when the line is not a JSON object.
pub(crate) fn parse(line: &[u8]) -> Option<Record<'_>> {
    if line.first() != Some(&b'{') {
        return None;
    }
    let mut fields = Fields::default();
    members(line, |key, value| {
        let slot =
            match key {
                b"level" | b"severity" | b"lvl" | b"loglevel" | b"log_level" | b"log.level"
                | b"levelname" | b"@l" => &mut fields.level,
                b"time" | b"timestamp" | b"ts" | b"@timestamp" | b"datetime" | b"date" | b"@t" => {
                    &mut fields.time
                }
                b"msg" | b"message" | b"event" | b"log" | b"@m" | b"@mt" => &mut fields.message,
                b"error" | b"err" | b"error_message" | b"exception" | b"@x" => &mut fields.error,
                b"status" | b"status_code" | b"statusCode" | b"http_status"
                | b"response_status" => &mut fields.status,
                b"method" | b"http_method" | b"request_method" => &mut fields.method,
                b"path" | b"url" | b"uri" | b"endpoint" | b"route" | b"request_uri"
                | b"request" => &mut fields.path,
                b"ip" | b"remote_addr" | b"client_ip" | b"clientip" | b"remote_ip" | b"client"
                | b"src_ip" => &mut fields.ip,
                b"user_agent" | b"http_user_agent" | b"userAgent" | b"ua" => &mut fields.user_agent,
                _ => return,
            };
        // The first usable value wins: `{"msg": "…", "message": "…"}` keeps
        // `msg`, and an object-valued `error` leaves room for a later
        // string one.
        if slot.is_none() {
            *slot = value;
        }
    })?;
    Some(fields.into_record())
}

/// The fields of one line that any tool uses, by the names common loggers
/// use (logrus, zap, pino, bunyan, structlog, Serilog, ECS, nginx JSON).
#[derive(Default)]
struct Fields<'a> {
    level: Option<Scalar<'a>>,
    time: Option<Scalar<'a>>,
    message: Option<Scalar<'a>>,
    /// `error`/`err`: the message when there is no `msg`.
    error: Option<Scalar<'a>>,
    status: Option<Scalar<'a>>,
    method: Option<Scalar<'a>>,
    path: Option<Scalar<'a>>,
    ip: Option<Scalar<'a>>,
    user_agent: Option<Scalar<'a>>,
}

impl<'a> Fields<'a> {
    fn into_record(self) -> Record<'a> {
        let status = self.status.and_then(Scalar::integer).and_then(|n| u16::try_from(n).ok());
        let level = self.level.and_then(|level| match level {
            Scalar::Number(_) => Level::from_number(level.integer()?),
            Scalar::Text(_) => Level::from_field(level.bytes().trim_ascii()),
        });
        let mut level = level.or_else(|| status.map(Level::from_status));
        let mut message = self.message.or(self.error).map(|m| trim_end(m.bytes()));
        if level.is_none()
            && let Some(text) = message.take()
        {
            // Docker's json-file logs and other wrappers carry a plain line:
            // `{"log":"2024-… ERROR …"}`. Its level and message are inside.
            let (inner_level, inner_message) = plain_inside(text);
            (level, message) = (inner_level, Some(inner_message));
        }
        Record {
            level,
            timestamp: self.time.map(Scalar::bytes),
            message,
            status,
            method: self.method.map(Scalar::bytes),
            endpoint: self.path.map(|p| match p.bytes() {
                Cow::Borrowed(b) => Cow::Borrowed(path_only(request_target(b))),
                Cow::Owned(b) => Cow::Owned(path_only(request_target(&b)).to_vec()),
            }),
            ip: self.ip.map(Scalar::bytes),
            user_agent: self.user_agent.map(Scalar::bytes),
        }
    }
}

/// A message without trailing white space (wrapped lines keep their `\n`).
fn trim_end(text: Cow<'_, [u8]>) -> Cow<'_, [u8]> {
    match text {
        Cow::Borrowed(b) => Cow::Borrowed(b.trim_ascii_end()),
        Cow::Owned(mut v) => {
            v.truncate(v.trim_ascii_end().len());
            Cow::Owned(v)
        }
    }
}

/// The level and message of a plain line carried as a JSON string; the
/// message is the whole text when the line has no level word.
fn plain_inside(text: Cow<'_, [u8]>) -> (Option<Level>, Cow<'_, [u8]>) {
    match text {
        Cow::Borrowed(b) => {
            let inner = plain::parse(b);
            match (inner.level, inner.message) {
                (Some(level), Some(message)) => (Some(level), message),
                _ => (None, Cow::Borrowed(b)),
            }
        }
        Cow::Owned(v) => {
            let inner = plain::parse(&v);
            match (inner.level, inner.message) {
                (Some(level), Some(message)) => (Some(level), Cow::Owned(message.into_owned())),
                _ => (None, Cow::Owned(v)),
            }
        }
    }
}

/// nginx's `$request` (`GET /a HTTP/1.1`) is sometimes logged as the path:
/// keep its middle word.
fn request_target(text: &[u8]) -> &[u8] {
    let mut parts = text.split(|&b| b == b' ');
    match (parts.next(), parts.next()) {
        (Some(_method), Some(target)) => target,
        _ => text,
    }
}

#[cfg(test)]
mod tests {
    use super::parse;
    use crate::level::Level;
    use crate::record::lossy as text;

    #[test]
    fn logger_fields() {
        let line = concat!(
            r#"{"time":"2024-01-01T10:00:00Z","level":"ERROR","msg":"db timeout after 30s","#,
            r#""user":{"id":7}}"#
        );
        let r = parse(line.as_bytes()).expect("parses");
        assert_eq!(r.level, Some(Level::Error));
        assert_eq!(text(&r.timestamp).as_deref(), Some("2024-01-01T10:00:00Z"));
        assert_eq!(text(&r.message).as_deref(), Some("db timeout after 30s"));
    }

    #[test]
    fn numeric_levels_and_epoch_times() {
        let r = parse(br#"{"level":50,"time":1704103200123,"msg":"x"}"#).expect("pino");
        assert_eq!(r.level, Some(Level::Error));
        assert_eq!(text(&r.timestamp).as_deref(), Some("1704103200123"));
    }

    #[test]
    fn request_logs_take_their_level_from_the_status() {
        let line = concat!(
            r#"{"ts":"t","status":502,"method":"GET","path":"/api/v1/items/9?x=1","#,
            r#""remote_addr":"10.1.1.1"}"#
        );
        let r = parse(line.as_bytes()).expect("parses");
        assert_eq!((r.status, r.level), (Some(502), Some(Level::Error)));
        assert_eq!(text(&r.endpoint).as_deref(), Some("/api/v1/items/9"));
        assert_eq!(text(&r.ip).as_deref(), Some("10.1.1.1"));
        let r = parse(br#"{"status":"404","request":"GET /missing HTTP/1.1"}"#).expect("parses");
        assert_eq!((r.status, r.level), (Some(404), Some(Level::Warn)));
        assert_eq!(text(&r.endpoint).as_deref(), Some("/missing"));
    }

    #[test]
    fn duplicate_and_odd_fields_do_not_reject_the_line() {
        let line = concat!(
            r#"{"error":{"code":1},"timestamp":"a","time":"b","severity":"warning","#,
            r#""err":"boom \"quoted\""}"#
        );
        let r = parse(line.as_bytes()).expect("parses");
        assert_eq!(r.level, Some(Level::Warn));
        assert_eq!(text(&r.timestamp).as_deref(), Some("a"));
        assert_eq!(
            text(&r.message).as_deref(),
            Some("boom \"quoted\""),
            "escaped text is unescaped"
        );
    }

    #[test]
    fn wrapped_plain_lines_give_their_level() {
        let r = parse(
            br#"{"log":"2024-01-01T10:00:00Z ERROR disk full
","stream":"stderr","time":"2024-01-01T10:00:00.1Z"}"#,
        )
        .expect("docker json-file");
        assert_eq!(r.level, Some(Level::Error));
        assert_eq!(text(&r.message).as_deref(), Some("disk full"));
        let r = parse(
            br#"{"log":"no level here
"}"#,
        )
        .expect("parses");
        assert_eq!((r.level, text(&r.message).as_deref()), (None, Some("no level here")));
    }

    #[test]
    fn not_json_objects() {
        for line in [&b"[1,2]"[..], b"{\"level\":", b"plain text", b"{} trailing", b""] {
            assert!(parse(line).is_none(), "{}", String::from_utf8_lossy(line));
        }
        let r = parse(b"{\"level\":\"error\",\"msg\":\"bad \xff\"}")
            .expect("invalid UTF-8 does not reject a line");
        assert_eq!(text(&r.message).as_deref(), Some("bad \u{fffd}"));
    }
}
