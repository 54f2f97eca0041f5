//! Memory figures from `/proc/self/status`, for the benches that report them (a module of
//! its own so the others do not carry unused code).

/// A `/proc/self/status` figure in KiB, e.g. `VmRSS` (resident) or `VmSize`
/// (address space); 0 where there is no `/proc`.
pub fn status_kib(field: &str) -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix(field)?.strip_prefix(':'))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}
