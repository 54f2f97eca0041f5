//! When and how long to wait before asking a model server again. Pure
//! arithmetic and header parsing, no HTTP client, so every rule is tested
//! here without a server.

use std::time::{Duration, SystemTime};

/// How a client retries a request that failed for a reason that may pass:
/// HTTP 429, any 5xx, or no answer at all (connection refused or reset,
/// timeout). Other statuses (400, 401, 404…) fail at once: asking again
/// would get the same answer.
///
/// The wait before retry `n` (0-based) is "full jitter": a random duration
/// between zero and `min(max_delay, base_delay × 2ⁿ)`, so many clients that
/// failed together do not come back together. When the server says how
/// long to wait (`Retry-After` in seconds or as an HTTP date, or
/// `retry-after-ms`), that wait is used instead, capped at
/// `max_retry_after` so a confused server cannot park the agent for hours.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Retries after the first attempt (default 3, so at most 4 requests).
    pub max_retries: u32,
    /// The backoff ceiling of the first retry (default 500 ms); it doubles
    /// with each retry. Tests set it to a millisecond.
    pub base_delay: Duration,
    /// The largest backoff ceiling (default 20 s).
    pub max_delay: Duration,
    /// The longest wait a server's `Retry-After` can ask for (default 60 s).
    pub max_retry_after: Duration,
}

impl Default for RetryPolicy {
    fn default() -> RetryPolicy {
        RetryPolicy {
            max_retries: 3,
            base_delay: Duration::from_millis(500),
            max_delay: Duration::from_secs(20),
            max_retry_after: Duration::from_secs(60),
        }
    }
}

impl RetryPolicy {
    /// The upper bound of the jittered wait before retry `retry` (0-based).
    pub fn ceiling(&self, retry: u32) -> Duration {
        // 2^31 × any sensible base already exceeds every cap; clamping the
        // exponent keeps the multiplication from overflowing.
        let factor = 1u32 << retry.min(31);
        self.base_delay.checked_mul(factor).unwrap_or(Duration::MAX).min(self.max_delay)
    }

    /// How long to wait before retry `retry` (0-based), given the server's
    /// requested wait if it sent one.
    pub fn delay(&self, retry: u32, retry_after: Option<Duration>) -> Duration {
        match retry_after {
            Some(wait) => wait.min(self.max_retry_after),
            None => self.ceiling(retry).mul_f64(fastrand::f64()),
        }
    }
}

/// Whether an HTTP status is worth retrying: rate limited (429) or a server
/// error (5xx, including Anthropic's 529 "overloaded").
pub fn retryable_status(status: u16) -> bool {
    status == 429 || (500..=599).contains(&status)
}

/// The wait a `Retry-After` header value asks for: delay-seconds (`"7"`) or
/// an HTTP date, measured from `now` (a date in the past means "now").
/// `None` when the value is neither.
pub fn parse_retry_after(value: &str, now: SystemTime) -> Option<Duration> {
    let value = value.trim();
    if let Ok(seconds) = value.parse::<u64>() {
        return Some(Duration::from_secs(seconds));
    }
    // Some servers send fractional seconds; RFC 9110 does not, but honouring
    // them is cheaper than retrying too early.
    if let Ok(seconds) = value.parse::<f64>() {
        return Duration::try_from_secs_f64(seconds).ok();
    }
    let when = httpdate::parse_http_date(value).ok()?;
    Some(when.duration_since(now).unwrap_or(Duration::ZERO))
}

/// The wait a `retry-after-ms` header value asks for (sent by OpenAI and
/// Azure OpenAI, more precise than `Retry-After`).
pub fn parse_retry_after_ms(value: &str) -> Option<Duration> {
    let millis = value.trim().parse::<f64>().ok()?;
    Duration::try_from_secs_f64(millis / 1000.0).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    #[test]
    fn ceiling_doubles_from_the_base_and_stops_at_the_cap() {
        let policy = RetryPolicy::default();
        let ceilings: Vec<Duration> = (0..8).map(|n| policy.ceiling(n)).collect();
        assert_eq!(
            ceilings,
            [ms(500), ms(1000), ms(2000), ms(4000), ms(8000), ms(16000), ms(20000), ms(20000)]
        );
    }

    #[test]
    fn ceiling_of_a_huge_retry_count_does_not_overflow() {
        let policy = RetryPolicy::default();
        assert_eq!(policy.ceiling(u32::MAX), Duration::from_secs(20));
        let unbounded = RetryPolicy { max_delay: Duration::MAX, ..RetryPolicy::default() };
        assert_eq!(unbounded.ceiling(200), Duration::from_millis(500) * (1 << 31));
        let huge = RetryPolicy {
            base_delay: Duration::MAX / 2,
            max_delay: Duration::MAX,
            ..RetryPolicy::default()
        };
        assert_eq!(huge.ceiling(3), Duration::MAX);
    }

    #[test]
    fn jittered_delay_stays_under_the_ceiling_and_varies() {
        let policy = RetryPolicy::default();
        let delays: Vec<Duration> = (0..200).map(|_| policy.delay(2, None)).collect();
        assert!(delays.iter().all(|d| *d <= ms(2000)), "{delays:?}");
        // Full jitter spreads over the whole range, not just near the top.
        assert!(delays.iter().any(|d| *d < ms(1000)), "{delays:?}");
        assert!(delays.iter().any(|d| *d > ms(1000)), "{delays:?}");
    }

    #[test]
    fn server_wait_replaces_backoff_but_is_capped() {
        let policy =
            RetryPolicy { max_retry_after: Duration::from_secs(60), ..RetryPolicy::default() };
        assert_eq!(policy.delay(0, Some(Duration::from_secs(7))), Duration::from_secs(7));
        assert_eq!(policy.delay(5, Some(Duration::ZERO)), Duration::ZERO);
        assert_eq!(policy.delay(0, Some(Duration::from_secs(3600))), Duration::from_secs(60));
    }

    #[test]
    fn retryable_statuses() {
        for status in [429, 500, 502, 503, 504, 529] {
            assert!(retryable_status(status), "{status}");
        }
        for status in [200, 400, 401, 403, 404, 408, 413, 422, 600] {
            assert!(!retryable_status(status), "{status}");
        }
    }

    #[test]
    fn retry_after_in_seconds() {
        let now = SystemTime::now();
        assert_eq!(parse_retry_after("7", now), Some(Duration::from_secs(7)));
        assert_eq!(parse_retry_after(" 0 ", now), Some(Duration::ZERO));
        assert_eq!(parse_retry_after("1.5", now), Some(ms(1500)));
    }

    #[test]
    fn retry_after_as_http_date() {
        let now = httpdate::parse_http_date("Sun, 06 Nov 1994 08:49:37 GMT").unwrap();
        assert_eq!(
            parse_retry_after("Sun, 06 Nov 1994 08:50:07 GMT", now),
            Some(Duration::from_secs(30))
        );
        // A date already past means "retry now", not "never".
        assert_eq!(parse_retry_after("Sun, 06 Nov 1994 08:00:00 GMT", now), Some(Duration::ZERO));
    }

    #[test]
    fn retry_after_garbage_is_ignored() {
        let now = SystemTime::now();
        for value in ["", "soon", "-3", "NaN", "inf", "1e400", "Sun, 06 Nov 1994"] {
            assert_eq!(parse_retry_after(value, now), None, "{value:?}");
        }
    }

    #[test]
    fn retry_after_ms() {
        assert_eq!(parse_retry_after_ms("250"), Some(ms(250)));
        assert_eq!(parse_retry_after_ms("0.5"), Some(Duration::from_micros(500)));
        assert_eq!(parse_retry_after_ms("-1"), None);
        assert_eq!(parse_retry_after_ms("x"), None);
    }
}
