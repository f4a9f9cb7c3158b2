//! Events: markers recorded into streams. A record captures the work enqueued in its stream so
//! far; `birenStreamWaitEvent` captures the event's latest record at call time. A wait on an
//! event never recorded waits for its next record (BIREN extension): a `FutureRecord` that the
//! next `birenEventRecord` resolves. Records and futures are points in streams, so they live in
//! stream.rs; an event is the handle's object that holds its latest record and pending future.

use crate::runtime::exec::stream::{FutureRecord, RecordState};
use crate::runtime::lock_order::{Rank, RankedMutex};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

pub(crate) const EVENT_BLOCKING_SYNC: u32 = 1;
pub(crate) const EVENT_DISABLE_TIMING: u32 = 2;

/// The futures of the whole runtime: how many events have streams waiting for their first
/// record, and the lock that serializes adding and resolving them (the only source of cycles).
/// One for all devices, since a wait and the record that resolves it may be on different ones.
/// The count is exact: it moves only with `EventState::future`, under that event's lock.
pub struct Futures {
    pub(crate) lock: RankedMutex<()>,
    pending: AtomicUsize,
}

impl Default for Futures {
    fn default() -> Futures {
        Futures {
            lock: RankedMutex::new(Rank::Futures, ()),
            pending: AtomicUsize::new(0),
        }
    }
}

impl Futures {
    /// Futures not yet resolved (or abandoned), on any device.
    pub fn pending(&self) -> usize {
        self.pending.load(Ordering::SeqCst)
    }
    pub(crate) fn created(&self) {
        self.pending.fetch_add(1, Ordering::SeqCst);
    }
    pub(crate) fn cleared(&self) {
        self.pending.fetch_sub(1, Ordering::SeqCst);
    }
}

pub struct EventCore {
    pub id: u64,
    pub device: usize,
    pub flags: u32,
    pub caller: usize,
    pub(crate) state: RankedMutex<EventState>,
}

#[derive(Default)]
pub struct EventState {
    pub latest: Option<Arc<RecordState>>,
    pub future: Option<Arc<FutureRecord>>,
}

impl EventCore {
    pub fn new(id: u64, device: usize, flags: u32, caller: usize) -> EventCore {
        EventCore {
            id,
            device,
            flags,
            caller,
            state: RankedMutex::new(Rank::EventState, EventState::default()),
        }
    }

    pub fn timing_disabled(&self) -> bool {
        self.flags & EVENT_DISABLE_TIMING != 0
    }

    pub fn latest(&self) -> Option<Arc<RecordState>> {
        self.state.lock().latest.clone()
    }
}
