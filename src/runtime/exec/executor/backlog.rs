//! The backlog bound: how far the host may run ahead of the device (the counts of enqueued and
//! finished ops, and the enqueues that wait for room).

use super::Executor;
use crate::runtime::exec::schedule;
use std::cell::Cell;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

/// How far the host may run ahead of a device: an enqueue that finds more than `BACKLOG_HIGH`
/// unfinished ops on the device waits until no more than `BACKLOG_LOW` are left, as CUDA's
/// launch blocks while its queue is full. Without a bound a host 100 000 launches ahead leaves
/// every stream's next op megabytes of queued ops away, cold when it runs (1000 streams took
/// 1.15-1.18x as long as 2; BENCHMARKS.md). Documented in the header (`birenLaunchKernel`).
pub(crate) const BACKLOG_HIGH: u64 = 4096;

pub(crate) const BACKLOG_LOW: u64 = 2048;

/// A waiting enqueue that sees no op finish for this long goes on, and no enqueue waits again
/// until one does: the queued ops may wait for something the host has not done yet (an event
/// it will record, a host function waiting for a flag it will set). Real hardware hangs there.
pub(super) const BACKLOG_PATIENCE: Duration = Duration::from_millis(10);

/// How many enqueues a host makes between two looks at the device's finished count
/// (`Executor::throttle`): that count's line is the device's, written at every completion, and
/// reading it at every enqueue cost the host a cache miss each time (~7% of an enqueue's CPU
/// time). The bound is kept to within this many ops.
pub(super) const BACKLOG_STRIDE: u64 = 64;

thread_local! {
    /// Set while this thread enqueues under locks that the device's threads may need, having
    /// made room before it took them (`Executor::make_room`).
    static ROOM_MADE: Cell<bool> = const { Cell::new(false) };
}

/// While alive, the thread's enqueues do not wait for room: it waited before it took locks that
/// the device's threads may need (a host function launching the same executable graph), and
/// waiting again under them would hold those threads up until the backlog's patience ran out.
/// The bound is kept to within the ops enqueued meanwhile.
pub struct RoomMade {
    was: bool,
}

impl Drop for RoomMade {
    fn drop(&mut self) {
        ROOM_MADE.with(|r| r.set(self.was));
    }
}

fn room_made() -> bool {
    ROOM_MADE.with(|r| r.get())
}

impl Executor {
    /// Waits for room as an enqueue does (`throttle`), then lets this thread's enqueues go
    /// without waiting until the returned value is dropped: for a caller that enqueues under
    /// locks the device's threads may need (`birenGraphLaunch` under its exec's locks).
    pub fn make_room(&self) -> RoomMade {
        self.throttle();
        RoomMade {
            was: ROOM_MADE.with(|r| r.replace(true)),
        }
    }

    /// Counts an op enqueued on the device; returns how many were before it (a device-wide
    /// order of enqueues).
    pub fn op_enqueued(&self) -> u64 {
        self.ops_in.count.fetch_add(1, Ordering::SeqCst)
    }

    /// Called by a host thread before it enqueues (no lock held): waits while the device has
    /// more than `BACKLOG_HIGH` unfinished ops, until `BACKLOG_LOW` are left or nothing finishes
    /// for `BACKLOG_PATIENCE`. Never on the device's own threads, nor under a debugging
    /// schedule (one op at a time, possibly held for the host's next call).
    /// The finished count is read every `BACKLOG_STRIDE` enqueues only.
    #[inline]
    pub fn throttle(&self) {
        // Every enqueue may wait here: checked at each one, not only when the device is full.
        #[cfg(any(test, debug_assertions, feature = "lock-order"))]
        if !crate::device::engine::on_device_thread() && !room_made() {
            crate::runtime::lock_order::before_wait("an enqueue may wait for room on the device");
        }
        let i = self.ops_in.count.load(Ordering::Relaxed);
        if i >= self.ops_in.next_look.load(Ordering::Relaxed) {
            self.look_at_backlog(i, BACKLOG_PATIENCE);
        }
    }

    /// `throttle`'s look at the finished count, `i` ops having been enqueued (`patience`: the
    /// tests' own).
    #[inline(never)]
    pub(super) fn look_at_backlog(&self, i: u64, patience: Duration) {
        self.ops_in
            .next_look
            .store(i + BACKLOG_STRIDE, Ordering::Relaxed);
        let out = self.ops_out.count.load(Ordering::Relaxed);
        if i.saturating_sub(out) > BACKLOG_HIGH {
            self.wait_for_room(out, patience);
        }
    }

    #[cold]
    pub(super) fn wait_for_room(&self, mut out: u64, patience: Duration) {
        if crate::device::engine::on_device_thread()
            || room_made()
            || schedule::active()
            || self.stalled_at.load(Ordering::Relaxed) == out
        {
            return;
        }
        let target = self
            .ops_in
            .count
            .load(Ordering::SeqCst)
            .saturating_sub(BACKLOG_LOW);
        let room = || self.ops_out.count.load(Ordering::SeqCst) >= target;
        crate::runtime::lock_order::before_wait("an enqueue waits for room on the device");
        loop {
            let until = Instant::now() + patience;
            if self.ops_out.room.park_until(target, room, Some(until)) {
                return;
            }
            let now = self.ops_out.count.load(Ordering::SeqCst);
            if now == out {
                self.stalled_at.store(now, Ordering::Relaxed);
                return;
            }
            out = now;
        }
    }

    /// How many ops have completed on the device so far (a progress counter).
    pub fn ops_completed(&self) -> u64 {
        self.ops_out.count.load(Ordering::SeqCst)
    }

    /// Ops enqueued on the device and not finished.
    #[cfg(test)]
    pub(super) fn backlog(&self) -> u64 {
        let out = self.ops_out.count.load(Ordering::SeqCst);
        self.ops_in.count.load(Ordering::SeqCst).wrapping_sub(out)
    }

    pub fn op_completed(&self) {
        let out = self.ops_out.count.fetch_add(1, Ordering::SeqCst) + 1;
        self.ops_out.room.notify_reached(out);
        if self.has_deferred.load(Ordering::Acquire) {
            self.reclaim_front();
        }
    }

    /// True when no enqueued work is unfinished on the device.
    pub fn is_idle(&self) -> bool {
        // Finished first: if it equals the enqueued count read after it, nothing was pending
        // at the moment of the first read (an op is counted in before it can be counted out).
        let out = self.ops_out.count.load(Ordering::SeqCst);
        self.ops_in.count.load(Ordering::SeqCst) == out
    }
}

#[cfg(test)]
mod tests {
    use super::super::*;
    use super::*;
    use std::sync::atomic::AtomicBool;
    use std::time::Duration;

    fn device_with_backlog(n: u64) -> Arc<Executor> {
        let exec = Executor::start(0, 1, 1 << 20, Policy::Preemptive, Instant::now());
        for _ in 0..n {
            exec.op_enqueued();
        }
        exec
    }

    /// Starts a thread that throttles with `patience` and says when it has returned.
    fn throttled(
        exec: &Arc<Executor>,
        patience: Duration,
    ) -> (std::thread::JoinHandle<()>, Arc<AtomicBool>) {
        let back = Arc::new(AtomicBool::new(false));
        let (e, b) = (exec.clone(), back.clone());
        let t = std::thread::spawn(move || {
            e.look_at_backlog(e.ops_in.count.load(Ordering::Relaxed), patience);
            b.store(true, Ordering::SeqCst);
        });
        while exec.ops_out.room.parked_count() == 0 {
            assert!(!back.load(Ordering::SeqCst), "went on without waiting");
            std::thread::sleep(Duration::from_millis(1));
        }
        (t, back)
    }

    /// An enqueue that finds more than BACKLOG_HIGH ops unfinished waits while the device makes
    /// progress, and goes on once BACKLOG_LOW are left.
    #[test]
    fn a_host_far_ahead_waits_until_the_device_has_drained_to_the_low_mark() {
        let exec = device_with_backlog(BACKLOG_HIGH + 1000);
        let (t, back) = throttled(&exec, Duration::from_secs(30));
        while exec.backlog() > BACKLOG_LOW + 1 {
            for _ in 0..100.min(exec.backlog() - BACKLOG_LOW - 1) {
                exec.op_completed();
            }
            std::thread::sleep(Duration::from_micros(200));
            assert!(
                !back.load(Ordering::SeqCst),
                "went on with {} ops unfinished",
                exec.backlog()
            );
        }
        exec.op_completed();
        t.join().unwrap();
        assert_eq!(exec.backlog(), BACKLOG_LOW);
        // Below the high mark nothing waits.
        let t0 = Instant::now();
        exec.throttle();
        assert!(t0.elapsed() < Duration::from_secs(1));
    }

    /// Queued ops that wait for something the host has not done yet must not hang the host: a
    /// wait that sees nothing finish for its patience goes on, and so does every enqueue after
    /// it until an op finishes; then they wait again.
    #[test]
    fn a_wait_that_sees_no_progress_gives_up_until_an_op_finishes() {
        let exec = device_with_backlog(BACKLOG_HIGH + 10);
        let patience = Duration::from_millis(50);
        let t0 = Instant::now();
        let out = exec.ops_completed();
        exec.wait_for_room(out, patience);
        assert!(t0.elapsed() >= patience);
        let t1 = Instant::now();
        for _ in 0..100 {
            exec.throttle();
        }
        assert!(
            t1.elapsed() < patience,
            "an enqueue waited again with nothing finished"
        );
        exec.op_completed();
        let (t, back) = throttled(&exec, Duration::from_secs(30));
        assert!(!back.load(Ordering::SeqCst));
        for _ in 0..BACKLOG_HIGH + 9 - BACKLOG_LOW {
            exec.op_completed();
        }
        t.join().unwrap();
    }

    /// The device's own threads (a host function that enqueues) never wait for the device.
    #[test]
    fn device_threads_never_wait_for_room() {
        let exec = device_with_backlog(BACKLOG_HIGH * 2);
        let e = exec.clone();
        let t0 = Instant::now();
        std::thread::spawn(move || {
            crate::device::engine::mark_device_thread();
            e.throttle();
        })
        .join()
        .unwrap();
        assert!(t0.elapsed() < BACKLOG_PATIENCE);
    }
}
