//! The wall clock a skill reads during a recorded or replayed call: each
//! reading recorded (the first [`MAX_CLOCK_READS`]), and in a replay the
//! run's readings given back in order, then time going on from the last.
//! A skill that stamps what it writes with the time (a saved page's file
//! name, a `fetched_at`) writes the same in a replay.

use crate::tape::{MAX_CLOCK_READS, Mode, Recorder, TapeScope};
use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};
use wasmtime_wasi::HostWallClock;

/// A call's wall clock on tape.
pub(super) struct TapedClock {
    state: Mutex<State>,
}

/// The run's readings not yet given, and the last one given with when.
type Replayed = (VecDeque<u64>, Option<(u64, Instant)>);

struct State {
    /// A replay's readings.
    replay: Option<Replayed>,
    /// Where this call's readings are recorded, and those so far.
    record: Option<(Arc<Recorder>, String, Vec<u64>)>,
}

impl TapedClock {
    /// The clock of a call in `scope`.
    pub(super) fn of(scope: &TapeScope) -> TapedClock {
        let replay = scope.clock.as_ref().map(|tape| (tape.clock(&scope.call).into(), None));
        let record = match &scope.mode {
            Some(Mode::Record(recorder)) => {
                Some((Arc::clone(recorder), scope.call.clone(), Vec::new()))
            }
            _ => None,
        };
        TapedClock { state: Mutex::new(State { replay, record }) }
    }
}

fn real_now() -> u64 {
    let since = SystemTime::now().duration_since(SystemTime::UNIX_EPOCH).unwrap_or_default();
    u64::try_from(since.as_nanos()).unwrap_or(u64::MAX)
}

impl HostWallClock for TapedClock {
    fn resolution(&self) -> Duration {
        Duration::from_nanos(1)
    }

    fn now(&self) -> Duration {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let nanos = match &mut state.replay {
            None => real_now(),
            Some((reads, last)) => match reads.pop_front() {
                Some(recorded) => {
                    *last = Some((recorded, Instant::now()));
                    recorded
                }
                // Past the run's readings: time goes on from the last.
                None => match last {
                    Some((at, since)) => {
                        at.saturating_add(u64::try_from(since.elapsed().as_nanos()).unwrap_or(0))
                    }
                    None => real_now(),
                },
            },
        };
        if let Some((_, _, reads)) = &mut state.record
            && reads.len() < MAX_CLOCK_READS
        {
            reads.push(nanos);
        }
        Duration::from_nanos(nanos)
    }
}

impl Drop for TapedClock {
    fn drop(&mut self) {
        let state = self.state.get_mut().unwrap_or_else(|e| e.into_inner());
        if let Some((recorder, call, reads)) = &mut state.record
            && !reads.is_empty()
        {
            recorder.clock(call, std::mem::take(reads));
        }
    }
}
