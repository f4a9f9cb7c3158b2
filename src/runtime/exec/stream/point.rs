//! Points in streams and what is made of them: a stream point (reached once its op has
//! completed), an op's dependencies, an event's records and the futures of never-recorded
//! events.

use super::StreamCore;
use crate::runtime::exec::work::Point;
use crate::runtime::lock_order::{Rank, RankedMutex};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// A point in a stream: reached once the stream has completed op `seq`.
#[derive(Clone)]
pub struct StreamPoint {
    pub stream: Arc<StreamCore>,
    pub seq: u64,
}

impl StreamPoint {
    pub fn reached(&self) -> bool {
        self.stream.reached(self.seq)
    }
}

/// Something an op waits for before it may start.
#[derive(Clone)]
pub enum Dep {
    Point(StreamPoint),
    /// The next record of an event that had never been recorded (BIREN extension).
    Future(Arc<FutureRecord>),
}

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

/// The next record of an event that streams already wait for.
pub struct FutureRecord {
    pub event_id: u64,
    inner: RankedMutex<FutureInner>,
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
            inner: RankedMutex::new(
                Rank::FutureRecord,
                FutureInner {
                    resolved: None,
                    waiters: Vec::new(),
                    waits: Vec::new(),
                },
            ),
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

    /// Resolves to record `r`; returns the streams to wake.
    /// The streams whose wait ops hold this future.
    pub fn waiting_streams(&self) -> Vec<u64> {
        self.inner.lock().waits.iter().map(|(s, _)| s.id).collect()
    }

    /// Resolves the future without a record (its event was destroyed): the waits are satisfied
    /// at once, as a wait on a never-recorded event is in CUDA. Returns the streams to wake.
    pub fn abandon(&self) -> Vec<Arc<StreamCore>> {
        let mut g = self.inner.lock();
        let first = g.waits.first().map(|(s, _)| s.clone());
        let Some(s) = first.or_else(|| g.waiters.first().cloned()) else {
            return Vec::new();
        };
        // Point 0 of a stream is reached from the start.
        let r = Arc::new(RecordState::new(
            StreamPoint { stream: s, seq: 0 },
            self.event_id,
            false,
        ));
        r.mark(|| 0);
        g.resolved = Some(r);
        g.waits.clear();
        std::mem::take(&mut g.waiters)
    }

    pub fn resolve(&self, r: Arc<RecordState>) -> Vec<Arc<StreamCore>> {
        let mut g = self.inner.lock();
        g.resolved = Some(r);
        g.waits.clear();
        std::mem::take(&mut g.waiters)
    }
}

impl StreamPoint {
    /// The same point, for the executor's deferred frees.
    pub fn point(&self) -> Point {
        Point {
            of: self.stream.clone(),
            seq: self.seq,
        }
    }
}
