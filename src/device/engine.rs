//! An engine thread: runs jobs one at a time in FIFO order (a copy engine, the host-function
//! runner). Idle, it parks on a condition variable and uses no CPU.

use crate::device::lock_order::{Rank, RankedMutex};
use parking_lot::Condvar;
use std::collections::VecDeque;
use std::sync::Arc;

pub type Job = Box<dyn FnOnce() + Send>;

struct Queue {
    jobs: VecDeque<Job>,
    busy: bool,
}

pub struct EngineThread {
    queue: RankedMutex<Queue>,
    work: Condvar,
    idle: Condvar,
    name: String,
}

thread_local! {
    static DEVICE_THREAD: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// True on the device's own threads (compute units, engines): there a host synchronize would
/// wait for the very thread that makes it, so it is not permitted.
#[inline]
pub fn on_device_thread() -> bool {
    DEVICE_THREAD.with(|c| c.get())
}

/// Marks the calling thread as one of the device's.
pub fn mark_device_thread() {
    DEVICE_THREAD.with(|c| c.set(true));
}

impl EngineThread {
    pub fn start(name: String) -> Arc<EngineThread> {
        let e = Arc::new(EngineThread {
            queue: RankedMutex::new(
                Rank::Leaf,
                Queue {
                    jobs: VecDeque::new(),
                    busy: false,
                },
            ),
            work: Condvar::new(),
            idle: Condvar::new(),
            name,
        });
        let me = e.clone();
        std::thread::Builder::new()
            .name(e.name.clone())
            .spawn(move || me.run())
            .expect("biren: cannot start an engine thread");
        e
    }

    fn run(&self) {
        mark_device_thread();
        let mut q = self.queue.lock();
        loop {
            match q.jobs.pop_front() {
                Some(job) => {
                    q.busy = true;
                    drop(q);
                    job();
                    q = self.queue.lock();
                    q.busy = false;
                    if q.jobs.is_empty() {
                        self.idle.notify_all();
                    }
                }
                None => q.wait(&self.work),
            }
        }
    }

    pub fn submit(&self, job: Job) {
        let mut q = self.queue.lock();
        q.jobs.push_back(job);
        let wake = !q.busy && q.jobs.len() == 1;
        drop(q);
        if wake {
            self.work.notify_one();
        }
    }

    /// Drops every job not yet started and waits for the running one to end.
    pub fn cancel_and_wait(&self) {
        let mut q = self.queue.lock();
        let dropped: Vec<Job> = q.jobs.drain(..).collect();
        while q.busy {
            q.wait(&self.idle);
        }
        drop(q);
        drop(dropped);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[test]
    fn runs_jobs_in_order() {
        let e = EngineThread::start("test-engine".into());
        let log = Arc::new(parking_lot::Mutex::new(Vec::new()));
        for i in 0..100 {
            let l = log.clone();
            e.submit(Box::new(move || l.lock().push(i)));
        }
        let done = Arc::new(AtomicUsize::new(0));
        let d = done.clone();
        e.submit(Box::new(move || d.store(1, Ordering::SeqCst)));
        while done.load(Ordering::SeqCst) == 0 {
            std::thread::yield_now();
        }
        assert_eq!(*log.lock(), (0..100).collect::<Vec<_>>());
    }
}
