//! The bounded channel a run's events go through: it never holds the run
//! up, and counts what a slow consumer missed ([`Event::Lagged`]).

use super::Event;
use crate::harness::audit::record::Record;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use tokio::sync::mpsc;

/// The sending half of a run's event channel: never waits, counts what it
/// drops.
#[derive(Clone)]
pub(crate) struct EventSender {
    tx: mpsc::Sender<Event>,
    /// Dropped and not yet reported; shared with the receiving side, which
    /// reports what is left once the run is over.
    missed: Arc<AtomicU64>,
}

/// The receiving half.
pub(crate) struct EventReceiver {
    rx: mpsc::Receiver<Event>,
    missed: Arc<AtomicU64>,
}

/// A channel for one run's events holding at most `capacity` (at least 2:
/// an event and the note of what was dropped before it).
pub(crate) fn channel(capacity: usize) -> (EventSender, EventReceiver) {
    let (tx, rx) = mpsc::channel(capacity.max(2));
    let missed = Arc::new(AtomicU64::new(0));
    (EventSender { tx, missed: Arc::clone(&missed) }, EventReceiver { rx, missed })
}

impl EventSender {
    /// Send the event of an audit record, if it is one.
    pub(crate) fn record(&self, record: &Record) {
        if let Some(event) = Event::of(record) {
            self.send(event);
        }
    }

    fn send(&self, event: Event) {
        let missed = self.missed.swap(0, Ordering::AcqRel);
        if missed == 0 {
            if let Err(mpsc::error::TrySendError::Full(_)) = self.tx.try_send(event) {
                self.missed.fetch_add(1, Ordering::AcqRel);
            }
            return;
        }
        // What was dropped is said first, where it was dropped.
        match self.tx.try_reserve_many(2) {
            Ok(mut permits) => {
                if let Some(permit) = permits.next() {
                    permit.send(Event::Lagged { missed });
                }
                if let Some(permit) = permits.next() {
                    permit.send(event);
                }
            }
            Err(mpsc::error::TrySendError::Full(())) => {
                self.missed.fetch_add(missed + 1, Ordering::AcqRel);
            }
            // No one is listening any more: nothing to count for.
            Err(mpsc::error::TrySendError::Closed(())) => {}
        }
    }
}

impl EventReceiver {
    /// The next event; `None` once the run is over and every event was
    /// received.
    pub(crate) async fn recv(&mut self) -> Option<Event> {
        match self.rx.recv().await {
            Some(event) => Some(event),
            None => self.left_over(),
        }
    }

    /// [`EventReceiver::recv`] for a `Stream`.
    pub(crate) fn poll_recv(
        &mut self,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Event>> {
        self.rx.poll_recv(cx).map(|event| event.or_else(|| self.left_over()))
    }

    /// Drops counted after the last event that got through.
    fn left_over(&self) -> Option<Event> {
        match self.missed.swap(0, Ordering::AcqRel) {
            0 => None,
            missed => Some(Event::Lagged { missed }),
        }
    }
}
