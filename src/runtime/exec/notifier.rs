//! Waiting without burning a core: a short spin for the common fast case, then a park on a
//! condition variable. Notifying is one atomic load when nobody is parked.

use parking_lot::{Condvar, Mutex};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

#[derive(Default)]
pub struct Notifier {
    parked: AtomicUsize,
    lock: Mutex<()>,
    cv: Condvar,
}

/// How long a waiter spins before it parks.
const SPIN: Duration = Duration::from_micros(20);

impl Notifier {
    pub fn new() -> Notifier {
        Notifier::default()
    }

    /// Wakes every parked waiter. Call after making the awaited condition true (SeqCst store).
    pub fn notify(&self) {
        if self.parked.load(Ordering::SeqCst) > 0 {
            let _g = self.lock.lock();
            self.cv.notify_all();
        }
    }

    /// Waits until `done()` is true or `until` passes; returns `done()`.
    pub fn wait_until(&self, done: impl Fn() -> bool, until: Option<Instant>) -> bool {
        if done() {
            return true;
        }
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
        self.parked.fetch_add(1, Ordering::SeqCst);
        let mut g = self.lock.lock();
        let r = loop {
            if done() {
                break true;
            }
            match until {
                Some(t) => {
                    if self.cv.wait_until(&mut g, t).timed_out() {
                        break done();
                    }
                }
                None => self.cv.wait(&mut g),
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
        assert!(n.wait_until(|| flag.load(Ordering::SeqCst), None));
        t.join().unwrap();
    }

    #[test]
    fn times_out() {
        let n = Notifier::new();
        let t0 = Instant::now();
        assert!(!n.wait_until(|| false, Some(Instant::now() + Duration::from_millis(20))));
        assert!(t0.elapsed() >= Duration::from_millis(20));
    }
}
