//! Events: markers recorded into streams. A record captures the work enqueued in its stream so
//! far; `birenStreamWaitEvent` captures the event's latest record at call time. A wait on an
//! event never recorded waits for its next record (BIREN extension): a `FutureRecord` that the
//! next `birenEventRecord` resolves.

use crate::runtime::exec::stream::{StreamCore, StreamPoint};
use parking_lot::Mutex;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;

pub(crate) const EVENT_BLOCKING_SYNC: u32 = 1;
pub(crate) const EVENT_DISABLE_TIMING: u32 = 2;

/// One record of an event: the point in its stream, and when it was reached.
pub struct RecordState {
    pub point: StreamPoint,
    /// The recorded event's id (messages, traces).
    pub event: u64,
    /// Unique per record (trace arrows from the record to its waiters).
    pub id: u64,
    /// False for events created with DisableTiming: no clock is read when reached.
    pub timed: bool,
    time_ns: AtomicU64,
}

static RECORD_IDS: AtomicU64 = AtomicU64::new(1);

const NOT_YET: u64 = u64::MAX;

impl RecordState {
    pub fn new(point: StreamPoint, event: u64, timed: bool) -> RecordState {
        RecordState {
            timed,
            point,
            event,
            id: RECORD_IDS.fetch_add(1, Ordering::Relaxed),
            time_ns: AtomicU64::new(NOT_YET),
        }
    }
    /// Marks the record reached; `now_ns` is called only for timed events.
    pub fn mark(&self, now_ns: impl FnOnce() -> u64) {
        self.time_ns
            .store(if self.timed { now_ns() } else { 0 }, Ordering::SeqCst);
    }
    /// When the record was reached (ns on the runtime clock), once it has been.
    pub fn time_ns(&self) -> Option<u64> {
        let t = self.time_ns.load(Ordering::SeqCst);
        (t != NOT_YET).then_some(t)
    }
    pub fn reached(&self) -> bool {
        self.point.reached()
    }
}

/// The futures of the whole runtime: how many events have streams waiting for their first
/// record, and the lock that serializes adding and resolving them (the only source of cycles).
/// One for all devices, since a wait and the record that resolves it may be on different ones.
/// The count is exact: it moves only with `EventState::future`, under that event's lock.
#[derive(Default)]
pub struct Futures {
    pub lock: Mutex<()>,
    pending: AtomicUsize,
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

/// The next record of an event that streams already wait for.
pub struct FutureRecord {
    pub event_id: u64,
    inner: Mutex<FutureInner>,
}

struct FutureInner {
    resolved: Option<Arc<RecordState>>,
    /// Streams parked on this future (woken when it resolves).
    waiters: Vec<Arc<StreamCore>>,
    /// The wait ops that hold it: (stream, op seq), for cycle checks.
    pub waits: Vec<(Arc<StreamCore>, u64)>,
}

impl FutureRecord {
    pub fn new(event_id: u64) -> FutureRecord {
        FutureRecord {
            event_id,
            inner: Mutex::new(FutureInner {
                resolved: None,
                waiters: Vec::new(),
                waits: Vec::new(),
            }),
        }
    }

    pub fn resolved(&self) -> Option<StreamPoint> {
        self.inner.lock().resolved.as_ref().map(|r| r.point.clone())
    }

    /// The record that resolved the future, once one has.
    pub fn record(&self) -> Option<Arc<RecordState>> {
        self.inner.lock().resolved.clone()
    }

    /// Parks `s` on the future; false if it is already resolved.
    pub fn add_waiter(&self, s: &Arc<StreamCore>) -> bool {
        let mut g = self.inner.lock();
        if g.resolved.is_some() {
            return false;
        }
        g.waiters.push(s.clone());
        true
    }

    pub fn add_wait(&self, s: &Arc<StreamCore>, seq: u64) {
        self.inner.lock().waits.push((s.clone(), seq));
    }

    pub fn waits(&self) -> Vec<(Arc<StreamCore>, u64)> {
        self.inner.lock().waits.clone()
    }

    /// The streams whose wait ops hold this future.
    pub fn waiting_streams(&self) -> Vec<u64> {
        self.inner.lock().waits.iter().map(|(s, _)| s.id).collect()
    }

    /// Resolves the future without a record (its event was destroyed): the waits are satisfied
    /// at once, as a wait on a never-recorded event is in CUDA. Returns the streams to wake.
    pub fn abandon(&self) -> Vec<Arc<StreamCore>> {
        let mut g = self.inner.lock();
        let Some((s, _)) = g.waits.first().cloned().or_else(|| g.waiters.first().map(|s| (s.clone(), 0)))
        else {
            return Vec::new();
        };
        // Point 0 of a stream is reached from the start.
        let r = Arc::new(RecordState::new(StreamPoint { stream: s, seq: 0 }, self.event_id, false));
        r.mark(|| 0);
        g.resolved = Some(r);
        g.waits.clear();
        std::mem::take(&mut g.waiters)
    }

    /// Resolves to record `r`; returns the streams to wake.
    pub fn resolve(&self, r: Arc<RecordState>) -> Vec<Arc<StreamCore>> {
        let mut g = self.inner.lock();
        g.resolved = Some(r);
        g.waits.clear();
        std::mem::take(&mut g.waiters)
    }
}

pub struct EventCore {
    pub id: u64,
    pub device: usize,
    pub flags: u32,
    pub caller: usize,
    pub state: Mutex<EventState>,
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
            state: Mutex::new(EventState::default()),
        }
    }

    pub fn timing_disabled(&self) -> bool {
        self.flags & EVENT_DISABLE_TIMING != 0
    }

    pub fn latest(&self) -> Option<Arc<RecordState>> {
        self.state.lock().latest.clone()
    }
}
