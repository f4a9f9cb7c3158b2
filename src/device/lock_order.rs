//! The lock order of the library's locks (the runtime's and the device engines'; it sits in
//! the lowest layer so every layer uses the one checker). Every lock has a `Rank`; a thread takes locks
//! in increasing rank only, and waits (a condition variable, another thread, the device) only
//! while it holds nothing above `MAY_WAIT_UNDER`. ARCHITECTURE.md ("The lock order") has the
//! table: what each lock protects, what may be taken under it, whether one may wait holding it.
//!
//! In debug builds, the crate's tests (release too) and builds with the `lock-order` feature (what `make fuzz` and
//! `make stress` use with `LOCK_ORDER=1`), each thread keeps the ranks it holds and a lock taken
//! out of order, or a wait under a lock the awaited thread may need, panics at the moment it is
//! attempted: the order is broken by one run of the path, not only by the unlucky interleaving
//! that deadlocks. In release builds the wrappers are the plain `parking_lot` calls.

use parking_lot::{
    Condvar, Mutex, MutexGuard, RwLock, RwLockReadGuard, RwLockWriteGuard, WaitTimeoutResult,
};
use std::ops::{Deref, DerefMut};
use std::time::{Duration, Instant};

/// The ranks, lowest (taken first) to highest. Gaps leave room.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
pub(crate) enum Rank {
    /// `DeviceContext`'s reset gate (written by a reset, read by hosts creating things).
    ResetGate = 10,
    /// The recorded or replayed order of API calls (replay's host state): taken at a call's
    /// entry, holding nothing else.
    ReplayTurn = 12,
    /// An executable graph's latest launch: held while a launch of it is enqueued.
    GraphExecLaunch = 14,
    /// An executable graph's event-node lanes (taken after its latest launch).
    GraphExecLanes = 16,
    /// An executable graph's current executable form.
    GraphExecForm = 18,
    /// The runtime's futures lock: serializes adding and resolving futures.
    Futures = 20,
    /// An event's latest record and pending future.
    EventState = 30,
    /// The stream captures in progress.
    CaptureTable = 34,
    /// A graph's nodes and edges.
    GraphBody = 36,
    /// A device's set of streams.
    StreamSet = 40,
    /// A stream's consumer end (`StreamQueue`).
    StreamQueue = 50,
    /// A stream's enqueuers' end (`StreamTail`), after its own consumer end.
    StreamTail = 60,
    /// A device's list of busy streams (taken under a tail by a push).
    BusyStreams = 65,
    /// The streams parked on a stream's points (taken under another stream's queue).
    PointWaiters = 70,
    /// A debugging schedule's state (serial, recorded or replayed starts): an op about to
    /// start asks it under its stream's queue.
    ScheduleState = 72,
    /// A future's resolution and waiters (read under a stream's queue or tail).
    FutureRecord = 75,
    /// The executor's deferred frees.
    DeferredFrees = 80,
    /// The executor's quarantine of freed memory.
    Quarantine = 82,
    /// The scheduler's queues of kernels (compute units wait on its condition variable).
    SchedulerQueues = 85,
    /// The scheduler's list of units' busy flags.
    SchedulerUnits = 86,
    /// A kernel's first failure.
    KernelFailure = 87,
    /// A notifier's lock (host waiters park on its condition variable).
    Notifier = 90,
    /// A memory pool's reserve (it holds device memory in the memory table's holds).
    PoolReserve = 92,
    /// The race detector's state.
    RaceState = 94,
    /// The race detector's descriptions of executable graphs.
    RaceGraphs = 95,
    /// Where validator lines go (a sink called under it takes no lock of the runtime).
    DiagnosticsSink = 96,
    /// The trace's events, then its track names.
    TraceEvents = 97,
    TraceTracks = 98,
    /// Locks under which no other lock is ever taken: handle registries' slots and free lists,
    /// memory tables and pools' maps, kernel and symbol tables, engine queues, graph event
    /// nodes' states, the debug hooks' small tables. Any of them may be taken under any lock
    /// above, and since they share this rank, the checker refuses one taken under another.
    Leaf = 100,
}

#[cfg_attr(
    not(any(test, debug_assertions, feature = "lock-order")),
    allow(dead_code)
)]
impl Rank {
    /// Ranks whose locks may be held several at once, taken in increasing key (e.g. stream id).
    /// None today: no path holds two locks of one rank.
    fn ordered_within(self) -> bool {
        false
    }
}

/// A thread may wait while it holds locks of this rank or below, and none above: the threads
/// it may wait for (device threads, other hosts finishing a call) never take them.
#[cfg_attr(
    not(any(test, debug_assertions, feature = "lock-order")),
    allow(dead_code)
)]
pub(crate) const MAY_WAIT_UNDER: Rank = Rank::ResetGate;

#[cfg(any(test, debug_assertions, feature = "lock-order"))]
mod held {
    use super::{Rank, MAY_WAIT_UNDER};
    use std::cell::RefCell;

    thread_local! {
        /// The locks this thread holds: (rank, key, address, what it guards), in the order
        /// taken.
        static HELD: RefCell<Vec<(Rank, u64, usize, &'static str)>> = const { RefCell::new(Vec::new()) };
    }

    /// Before blocking on a lock: panics if the thread holds one it must not take it under.
    /// A thread whose locals are torn down (an exit handler on the main thread) holds nothing
    /// that the checker can see: it checks nothing there (`try_with`).
    pub fn before_lock(rank: Rank, key: u64, addr: usize, what: &'static str) {
        let bad = HELD
            .try_with(|h| {
                h.borrow()
                    .iter()
                    .find(|&&(r, k, a, _)| {
                        a == addr || r > rank || (r == rank && !(rank.ordered_within() && k < key))
                    })
                    .copied()
            })
            .ok()
            .flatten();
        if let Some((r, k, _, held)) = bad {
            broken(format!(
                "lock order: taking {rank:?} (key {key}, {what}) while holding {r:?} (key {k}, \
                 {held}); locks are taken in increasing rank (ARCHITECTURE.md, the lock order)"
            ));
        }
    }

    pub fn acquired(rank: Rank, key: u64, addr: usize, what: &'static str) {
        let _ = HELD.try_with(|h| h.borrow_mut().push((rank, key, addr, what)));
    }

    pub fn released(addr: usize) {
        let _ = HELD.try_with(|h| {
            let mut h = h.borrow_mut();
            if let Some(i) = h.iter().rposition(|&(_, _, a, _)| a == addr) {
                h.remove(i);
            }
        });
    }

    /// Before a wait: panics if the thread holds a lock above the threshold, other than
    /// `releasing` (the lock a condition variable's wait gives up).
    pub fn before_wait(what: &str, releasing: usize) {
        let bad = HELD
            .try_with(|h| {
                h.borrow()
                    .iter()
                    .find(|&&(r, _, a, _)| r > MAY_WAIT_UNDER && a != releasing)
                    .copied()
            })
            .ok()
            .flatten();
        if let Some((r, _, _, held)) = bad {
            broken(format!(
                "lock order: waiting ({what}) while holding {r:?} ({held}), which the awaited \
                 thread may need; only locks up to {MAY_WAIT_UNDER:?} may be held while waiting"
            ));
        }
    }

    /// The order is broken: said on stderr as the runtime's internal errors are (the fuzzer and
    /// the stress test fail on the line even where the panic is caught at the C boundary), then
    /// a panic at the spot.
    fn broken(msg: String) -> ! {
        eprintln!("biren: internal: {msg}");
        panic!("{msg}");
    }

    #[cfg(test)]
    pub fn depth() -> usize {
        HELD.with(|h| h.borrow().len())
    }
}

/// Call before every blocking wait (a condition variable, a join, the device draining, another
/// thread's progress). Nothing in release builds.
#[inline(always)]
pub(crate) fn before_wait(what: &str) {
    #[cfg(any(test, debug_assertions, feature = "lock-order"))]
    held::before_wait(what, 0);
    #[cfg(not(any(test, debug_assertions, feature = "lock-order")))]
    let _ = what;
}

/// A `parking_lot::Mutex` with a rank.
pub(crate) struct RankedMutex<T> {
    #[cfg(any(test, debug_assertions, feature = "lock-order"))]
    rank: Rank,
    #[cfg(any(test, debug_assertions, feature = "lock-order"))]
    key: u64,
    inner: Mutex<T>,
}

impl<T> RankedMutex<T> {
    #[inline]
    pub const fn new(rank: Rank, value: T) -> RankedMutex<T> {
        Self::with_key(rank, 0, value)
    }

    /// A lock of a rank whose locks are taken several at once in increasing `key`.
    #[inline]
    #[allow(unused_variables)]
    pub const fn with_key(rank: Rank, key: u64, value: T) -> RankedMutex<T> {
        RankedMutex {
            #[cfg(any(test, debug_assertions, feature = "lock-order"))]
            rank,
            #[cfg(any(test, debug_assertions, feature = "lock-order"))]
            key,
            inner: Mutex::new(value),
        }
    }

    #[inline(always)]
    fn addr(&self) -> usize {
        self as *const Self as usize
    }

    #[inline(always)]
    pub fn lock(&self) -> RankedGuard<'_, T> {
        #[cfg(any(test, debug_assertions, feature = "lock-order"))]
        held::before_lock(self.rank, self.key, self.addr(), std::any::type_name::<T>());
        let inner = self.inner.lock();
        #[cfg(any(test, debug_assertions, feature = "lock-order"))]
        held::acquired(self.rank, self.key, self.addr(), std::any::type_name::<T>());
        RankedGuard {
            inner,
            addr: self.addr(),
        }
    }

    /// Never blocks, so it may be tried out of order; the lock counts as held once taken.
    #[inline(always)]
    pub fn try_lock(&self) -> Option<RankedGuard<'_, T>> {
        let inner = self.inner.try_lock()?;
        #[cfg(any(test, debug_assertions, feature = "lock-order"))]
        held::acquired(self.rank, self.key, self.addr(), std::any::type_name::<T>());
        Some(RankedGuard {
            inner,
            addr: self.addr(),
        })
    }
}

pub(crate) struct RankedGuard<'a, T> {
    inner: MutexGuard<'a, T>,
    #[cfg_attr(
        not(any(test, debug_assertions, feature = "lock-order")),
        allow(dead_code)
    )]
    addr: usize,
}

impl<T> RankedGuard<'_, T> {
    /// Waits on `cv`, which gives this lock up meanwhile; the thread may hold nothing else above
    /// `MAY_WAIT_UNDER`.
    #[inline(always)]
    pub fn wait(&mut self, cv: &Condvar) {
        #[cfg(any(test, debug_assertions, feature = "lock-order"))]
        held::before_wait("condition variable", self.addr);
        cv.wait(&mut self.inner)
    }

    #[inline(always)]
    pub fn wait_until(&mut self, cv: &Condvar, until: Instant) -> WaitTimeoutResult {
        #[cfg(any(test, debug_assertions, feature = "lock-order"))]
        held::before_wait("condition variable", self.addr);
        cv.wait_until(&mut self.inner, until)
    }

    #[inline(always)]
    pub fn wait_for(&mut self, cv: &Condvar, timeout: Duration) -> WaitTimeoutResult {
        #[cfg(any(test, debug_assertions, feature = "lock-order"))]
        held::before_wait("condition variable", self.addr);
        cv.wait_for(&mut self.inner, timeout)
    }
}

impl<T> Deref for RankedGuard<'_, T> {
    type Target = T;
    #[inline(always)]
    fn deref(&self) -> &T {
        &self.inner
    }
}

impl<T> DerefMut for RankedGuard<'_, T> {
    #[inline(always)]
    fn deref_mut(&mut self) -> &mut T {
        &mut self.inner
    }
}

#[cfg(any(test, debug_assertions, feature = "lock-order"))]
impl<T> Drop for RankedGuard<'_, T> {
    fn drop(&mut self) {
        held::released(self.addr);
    }
}

/// A `parking_lot::RwLock` with a rank (readers and writers alike take it in order).
pub(crate) struct RankedRwLock<T> {
    #[cfg(any(test, debug_assertions, feature = "lock-order"))]
    rank: Rank,
    inner: RwLock<T>,
}

impl<T> RankedRwLock<T> {
    #[inline]
    #[allow(unused_variables)]
    pub const fn new(rank: Rank, value: T) -> RankedRwLock<T> {
        RankedRwLock {
            #[cfg(any(test, debug_assertions, feature = "lock-order"))]
            rank,
            inner: RwLock::new(value),
        }
    }

    #[inline(always)]
    fn addr(&self) -> usize {
        self as *const Self as usize
    }

    #[inline(always)]
    pub fn read(&self) -> RankedReadGuard<'_, T> {
        #[cfg(any(test, debug_assertions, feature = "lock-order"))]
        held::before_lock(self.rank, 0, self.addr(), std::any::type_name::<T>());
        let inner = self.inner.read();
        #[cfg(any(test, debug_assertions, feature = "lock-order"))]
        held::acquired(self.rank, 0, self.addr(), std::any::type_name::<T>());
        RankedReadGuard {
            inner,
            addr: self.addr(),
        }
    }

    #[inline(always)]
    pub fn write(&self) -> RankedWriteGuard<'_, T> {
        #[cfg(any(test, debug_assertions, feature = "lock-order"))]
        held::before_lock(self.rank, 0, self.addr(), std::any::type_name::<T>());
        let inner = self.inner.write();
        #[cfg(any(test, debug_assertions, feature = "lock-order"))]
        held::acquired(self.rank, 0, self.addr(), std::any::type_name::<T>());
        RankedWriteGuard {
            inner,
            addr: self.addr(),
        }
    }
}

pub(crate) struct RankedReadGuard<'a, T> {
    inner: RwLockReadGuard<'a, T>,
    #[cfg_attr(
        not(any(test, debug_assertions, feature = "lock-order")),
        allow(dead_code)
    )]
    addr: usize,
}

pub(crate) struct RankedWriteGuard<'a, T> {
    inner: RwLockWriteGuard<'a, T>,
    #[cfg_attr(
        not(any(test, debug_assertions, feature = "lock-order")),
        allow(dead_code)
    )]
    addr: usize,
}

impl<T> Deref for RankedReadGuard<'_, T> {
    type Target = T;
    #[inline(always)]
    fn deref(&self) -> &T {
        &self.inner
    }
}

impl<T> Deref for RankedWriteGuard<'_, T> {
    type Target = T;
    #[inline(always)]
    fn deref(&self) -> &T {
        &self.inner
    }
}

impl<T> DerefMut for RankedWriteGuard<'_, T> {
    #[inline(always)]
    fn deref_mut(&mut self) -> &mut T {
        &mut self.inner
    }
}

#[cfg(any(test, debug_assertions, feature = "lock-order"))]
impl<T> Drop for RankedReadGuard<'_, T> {
    fn drop(&mut self) {
        held::released(self.addr);
    }
}

#[cfg(any(test, debug_assertions, feature = "lock-order"))]
impl<T> Drop for RankedWriteGuard<'_, T> {
    fn drop(&mut self) {
        held::released(self.addr);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::panic::{catch_unwind, AssertUnwindSafe};

    fn panics(f: impl FnOnce()) -> String {
        let e = catch_unwind(AssertUnwindSafe(f)).expect_err("expected a lock-order panic");
        e.downcast_ref::<String>().cloned().unwrap_or_default()
    }

    #[test]
    fn locks_taken_in_increasing_rank_pass() {
        let gate = RankedRwLock::new(Rank::ResetGate, ());
        let q = RankedMutex::new(Rank::StreamQueue, 1);
        let t = RankedMutex::new(Rank::StreamTail, 2);
        let n = RankedMutex::new(Rank::Notifier, ());
        let _g = gate.read();
        let a = q.lock();
        let b = t.lock();
        let c = n.lock();
        assert_eq!(*a + *b, 3);
        drop((c, b, a));
        // Dropped out of order, then taken again.
        let b = t.lock();
        let a2 = n.lock();
        drop(b);
        drop(a2);
        assert_eq!(held::depth(), 1);
    }

    #[test]
    fn a_lower_rank_under_a_higher_one_panics() {
        let q = RankedMutex::new(Rank::StreamQueue, ());
        let t = RankedMutex::new(Rank::StreamTail, ());
        let msg = panics(|| {
            let _t = t.lock();
            let _q = q.lock();
        });
        assert!(
            msg.contains("taking StreamQueue") && msg.contains("holding StreamTail"),
            "{msg}"
        );
        // The unwinding dropped the guard: the thread holds nothing now.
        assert_eq!(held::depth(), 0);
        let _q = q.lock();
    }

    #[test]
    fn two_locks_of_one_rank_panic() {
        let a = RankedMutex::new(Rank::StreamQueue, ());
        let b = RankedMutex::new(Rank::StreamQueue, ());
        let msg = panics(|| {
            let _a = a.lock();
            let _b = b.lock();
        });
        assert!(msg.contains("holding StreamQueue"), "{msg}");
    }

    #[test]
    fn a_leaf_under_another_leaf_panics_naming_what_each_guards() {
        let registry = RankedMutex::new(Rank::Leaf, 0u32);
        let table = RankedRwLock::new(Rank::Leaf, String::new());
        let msg = panics(|| {
            let _r = registry.lock();
            let _t = table.read();
        });
        assert!(
            msg.contains("taking Leaf (key 0, alloc::string::String)")
                && msg.contains("holding Leaf (key 0, u32)"),
            "{msg}"
        );
        // Under any lock of a lower rank, a leaf is fine.
        let n = RankedMutex::new(Rank::Notifier, ());
        let _n = n.lock();
        let _r = registry.lock();
    }

    #[test]
    fn waiting_under_a_lock_above_the_threshold_panics() {
        let q = RankedMutex::new(Rank::StreamQueue, ());
        let msg = panics(|| {
            let _q = q.lock();
            before_wait("test");
        });
        assert!(
            msg.contains("waiting (test) while holding StreamQueue"),
            "{msg}"
        );
        // Under the reset gate alone a thread may wait.
        let gate = RankedRwLock::new(Rank::ResetGate, ());
        let _g = gate.write();
        before_wait("test");
    }

    #[test]
    fn a_condvar_wait_gives_up_its_own_lock_but_not_others() {
        let n = RankedMutex::new(Rank::Notifier, ());
        let cv = Condvar::new();
        let soon = || Instant::now() + std::time::Duration::from_millis(1);
        let mut g = n.lock();
        assert!(g.wait_until(&cv, soon()).timed_out());
        drop(g);
        let f = RankedMutex::new(Rank::FutureRecord, ());
        let msg = panics(|| {
            let _f = f.lock();
            let mut g = n.lock();
            let _ = g.wait_until(&cv, soon());
        });
        assert!(msg.contains("holding FutureRecord"), "{msg}");
    }

    #[test]
    fn a_try_lock_out_of_order_counts_as_held() {
        let q = RankedMutex::new(Rank::StreamQueue, ());
        let d = RankedMutex::new(Rank::DeferredFrees, ());
        let _d = d.lock();
        let g = q.try_lock().expect("free");
        assert_eq!(held::depth(), 2);
        drop(g);
        assert_eq!(held::depth(), 1);
    }
}
