//! Run ids and timestamps: a run's id sorts by the time it started.

/// A fresh run id that sorts by time: `20261201T031500Z-1a2b3c`, as
/// [`Agent`](crate::Agent) names its runs (and `reach` its runs, `reach
/// call` and `reach mcp` sessions). Two ids drawn in the same second share
/// their stamp and differ, almost always, in the random suffix; a writer
/// that creates `<id>.jsonl` with `create_new` draws again when it is taken.
pub fn new_run_id() -> String {
    let stamp: String =
        now_rfc3339().chars().filter(|c| c.is_ascii_digit() || *c == 'T').take(15).collect();
    format!("{stamp}Z-{:06x}", fastrand::u32(..0x100_0000))
}

/// Now as `2026-12-01T03:04:05.678Z`.
pub fn now_rfc3339() -> String {
    let now =
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
    let secs = now.as_secs();
    let (days, rem) = (secs / 86_400, secs % 86_400);
    let (y, m, d) = civil_from_days(days as i64);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{:03}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60,
        now.subsec_millis()
    )
}

/// Howard Hinnant's days-to-civil algorithm (proleptic Gregorian, UTC).
pub(super) fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}
