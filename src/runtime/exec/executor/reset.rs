//! A device reset, as the executor sees it: no op starts while it runs, queued work is dropped,
//! running work is waited for, and the memory is released.

use super::Executor;
use crate::runtime::lock_order;
use std::sync::atomic::Ordering;

impl Executor {
    /// Starts a reset: no op starts any more, and every op started before now is stale (its
    /// completion will be ignored).
    pub fn begin_reset(&self) {
        self.resetting.store(true, Ordering::SeqCst);
        self.epoch.fetch_add(1, Ordering::SeqCst);
    }

    /// A stream is about to start an op: false if a reset has begun (then start nothing).
    /// Paired with `begin_reset` like Dekker's flags, so either the reset waits for this start
    /// or this start sees the reset.
    #[inline]
    pub fn enter_start(&self) -> bool {
        self.starting.fetch_add(1, Ordering::SeqCst);
        if self.resetting.load(Ordering::SeqCst) {
            self.starting.fetch_sub(1, Ordering::SeqCst);
            return false;
        }
        true
    }

    #[inline]
    pub fn leave_start(&self) {
        self.starting.fetch_sub(1, Ordering::SeqCst);
    }

    /// Waits until no stream is in the middle of starting an op (after `begin_reset`).
    pub fn wait_for_starts(&self) {
        lock_order::before_wait("a reset waits for starts");
        while self.starting.load(Ordering::SeqCst) > 0 {
            std::thread::yield_now();
        }
    }

    /// Ops dropped unfinished (reset): no longer pending.
    pub fn ops_dropped(&self, n: u64) {
        let out = self.ops_out.count.fetch_add(n, Ordering::SeqCst) + n;
        self.ops_out.room.notify_reached(out);
    }

    pub fn end_reset(&self) {
        self.resetting.store(false, Ordering::SeqCst);
    }

    #[inline]
    pub fn is_resetting(&self) -> bool {
        self.resetting.load(Ordering::Relaxed)
    }

    /// After `bump_epoch` and draining the streams, stops all device activity: drops queued kernels, copies and host functions, waits for the
    /// blocks and jobs already running, releases every allocation, clears the sticky error.
    /// Returns the allocations that were live (for the leak report) as (base, size, caller).
    pub fn reset(&self) -> Vec<(usize, usize, usize)> {
        // It waits for the device's threads, which take the core's locks as they finish.
        lock_order::before_wait("a reset waits for the device's threads");
        self.scheduler.cancel_all();
        for e in &self.copy {
            e.cancel_and_wait();
        }
        self.host.cancel_and_wait();
        for d in std::mem::take(&mut *self.deferred.lock()) {
            self.memory.release(d.alloc);
        }
        self.has_deferred.store(false, Ordering::Release);
        self.drain_quarantine();
        let live = self.memory.unregister_all();
        let report = live.iter().map(|a| (a.base, a.size, a.caller)).collect();
        for a in live {
            self.memory.release(a);
        }
        self.memory.reclaim_backing();
        self.sticky.store(0, Ordering::Release);
        report
    }
}
