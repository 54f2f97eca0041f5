//! Secrets masked in what goes back to MCP clients, as a run masks what
//! goes to its model: the values of the environment variables the serving
//! host grants its skills and the credentials bound to them
//! ([`harness::secrets`]). Worked out once per host — a reload makes a new
//! host — so a call does not read credential files each time.

use crate::Host;
use crate::harness;
use crate::runtime::redact::Redactor;
use std::sync::{Arc, Mutex, Weak};

/// The maskers of the hosts served so far, while they live.
#[derive(Default)]
pub(super) struct Maskers {
    inner: Mutex<Seen>,
}

#[derive(Default)]
struct Seen {
    /// One per host still alive (a reload's old host lives on while a
    /// call that started on it runs).
    hosts: Vec<(Weak<Host>, Arc<Redactor>)>,
    /// The last host's, for a refusal that no host served.
    latest: Arc<Redactor>,
}

impl Maskers {
    /// The masker for `host`. The first time a host is seen its secrets are
    /// read, and `first_seen` is called with them (to log what it does not
    /// serve, and to teach the audit log its secrets) before any call of
    /// that host is answered or recorded.
    pub(super) fn of(&self, host: &Arc<Host>, first_seen: impl FnOnce(&[String])) -> Arc<Redactor> {
        let mut seen = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        // A `Weak` keeps its allocation: a live entry's address is never
        // reused by another host.
        if let Some((_, redactor)) =
            seen.hosts.iter().find(|(h, _)| std::ptr::eq(h.as_ptr(), Arc::as_ptr(host)))
        {
            return Arc::clone(redactor);
        }
        seen.hosts.retain(|(h, _)| h.strong_count() > 0);
        let secrets = harness::secrets(host, []);
        first_seen(&secrets);
        let redactor = Arc::new(Redactor::new(&secrets));
        seen.hosts.push((Arc::downgrade(host), Arc::clone(&redactor)));
        seen.latest = Arc::clone(&redactor);
        redactor
    }

    /// The masker of the host seen last (none yet: masks nothing).
    pub(super) fn latest(&self) -> Arc<Redactor> {
        Arc::clone(&self.inner.lock().unwrap_or_else(|e| e.into_inner()).latest)
    }
}
