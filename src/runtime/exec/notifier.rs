//! Waiting without burning a core: a short spin for the common fast case, then a park on a
//! condition variable. Notifying is one atomic load when nobody is parked, and two when the
//! parked waiters wait for a later point than the one just reached (a host that synchronizes
//! behind 100 000 queued kernels is woken once, not once per kernel).

use crate::runtime::lock_order::{Rank, RankedMutex};
use parking_lot::Condvar;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

pub struct Notifier {
    parked: AtomicUsize,
    /// The smallest target of the parked waiters (`u64::MAX`: none registered).
    min_target: AtomicU64,
    lock: RankedMutex<()>,
    cv: Condvar,
}

impl Default for Notifier {
    fn default() -> Notifier {
        Notifier {
            parked: AtomicUsize::new(0),
            min_target: AtomicU64::new(u64::MAX),
            lock: RankedMutex::new(Rank::Notifier, ()),
            cv: Condvar::new(),
        }
    }
}

/// How long a waiter spins before it parks.
const SPIN: Duration = Duration::from_micros(20);

impl Notifier {
    pub fn new() -> Notifier {
        Notifier::default()
    }

    /// How many waiters are parked now (tests wait for a waiter to park).
    #[cfg(test)]
    pub fn parked_count(&self) -> usize {
        self.parked.load(Ordering::SeqCst)
    }

    /// Wakes every parked waiter. Call after making the awaited condition true (SeqCst store).
    pub fn notify(&self) {
        if self.parked.load(Ordering::SeqCst) > 0 {
            self.wake_all();
        }
    }

    /// Point `reached` has been reached (SeqCst store before): wakes the parked waiters if one
    /// of them waits for it or an earlier point.
    pub fn notify_reached(&self, reached: u64) {
        if self.parked.load(Ordering::SeqCst) > 0
            && reached >= self.min_target.load(Ordering::SeqCst)
        {
            self.wake_all();
        }
    }

    fn wake_all(&self) {
        let _g = self.lock.lock();
        // The woken waiters that must wait on register their targets again.
        self.min_target.store(u64::MAX, Ordering::SeqCst);
        self.cv.notify_all();
    }

    /// Waits until `done()` is true or `until` passes; returns `done()`. `target` is the point
    /// `done` waits for (`notify_reached` of an earlier point does not wake this waiter; use 0
    /// to be woken by every notification).
    pub fn wait_until(&self, target: u64, done: impl Fn() -> bool, until: Option<Instant>) -> bool {
        if done() {
            return true;
        }
        // The spin is a wait as much as the park is.
        crate::runtime::lock_order::before_wait("a host waits for a point");
        let spin_end = Instant::now() + SPIN;
        let mut i = 0u32;
        loop {
            for _ in 0..64 {
                std::hint::spin_loop();
            }
            if done() {
                return true;
            }
            i += 1;
            if i.is_multiple_of(16) && Instant::now() >= spin_end {
                break;
            }
        }
        self.park_until(target, done, until)
    }

    /// `wait_until` without the spin: for a waiter that expects a long wait (an enqueue held
    /// back until the device has drained thousands of ops) and would only take a core from the
    /// threads it waits for.
    pub fn park_until(&self, target: u64, done: impl Fn() -> bool, until: Option<Instant>) -> bool {
        self.parked.fetch_add(1, Ordering::SeqCst);
        let mut g = self.lock.lock();
        let r = loop {
            // Registered before the check: a notifier that reads the old minimum made its
            // point reachable before our check sees it (both SeqCst).
            self.min_target.fetch_min(target, Ordering::SeqCst);
            if done() {
                break true;
            }
            match until {
                Some(t) => {
                    if g.wait_until(&self.cv, t).timed_out() {
                        break done();
                    }
                }
                None => g.wait(&self.cv),
            }
        };
        drop(g);
        self.parked.fetch_sub(1, Ordering::SeqCst);
        r
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicBool;
    use std::sync::Arc;

    #[test]
    fn wakes_a_parked_waiter() {
        let n = Arc::new(Notifier::new());
        let flag = Arc::new(AtomicBool::new(false));
        let (n2, f2) = (n.clone(), flag.clone());
        let t = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(30));
            f2.store(true, Ordering::SeqCst);
            n2.notify();
        });
        assert!(n.wait_until(0, || flag.load(Ordering::SeqCst), None));
        t.join().unwrap();
    }

    #[test]
    fn an_earlier_point_does_not_wake_a_later_waiter() {
        let n = Arc::new(Notifier::new());
        let reached = Arc::new(AtomicU64::new(0));
        let wakeups = Arc::new(AtomicUsize::new(0));
        let (n2, r2, w2) = (n.clone(), reached.clone(), wakeups.clone());
        let t = std::thread::spawn(move || {
            n2.wait_until(
                100,
                || {
                    w2.fetch_add(1, Ordering::SeqCst);
                    r2.load(Ordering::SeqCst) >= 100
                },
                None,
            )
        });
        while n.parked.load(Ordering::SeqCst) == 0 {
            std::thread::sleep(Duration::from_millis(1));
        }
        std::thread::sleep(Duration::from_millis(5));
        let before = wakeups.load(Ordering::SeqCst);
        for i in 1..100 {
            reached.store(i, Ordering::SeqCst);
            n.notify_reached(i);
        }
        std::thread::sleep(Duration::from_millis(20));
        assert_eq!(
            wakeups.load(Ordering::SeqCst),
            before,
            "woken before its point"
        );
        reached.store(100, Ordering::SeqCst);
        n.notify_reached(100);
        assert!(t.join().unwrap());
    }

    #[test]
    fn times_out() {
        let n = Notifier::new();
        let t0 = Instant::now();
        assert!(!n.wait_until(
            0,
            || false,
            Some(Instant::now() + Duration::from_millis(20))
        ));
        assert!(t0.elapsed() >= Duration::from_millis(20));
    }
}
