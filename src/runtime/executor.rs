//! The executor of one device: where a stream's ready op goes to run (compute units through the
//! scheduler, copy engines, the host-function thread), plus the device's shared state: its
//! memory, its sticky error, its reset epoch and its count of unfinished work.

use super::error::{ErrorCode, Result};
use super::memory::{Allocation, MemoryTable};
use super::scheduler::{Policy, Scheduler};
use super::stream::{Started, StreamCore, StreamPoint, Work};
use crate::device::{ComputeUnits, EngineThread};
use parking_lot::Mutex;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Instant;

/// Which copy engine runs a copy.
pub(crate) const ENGINE_TO_DEVICE: usize = 0;
pub(crate) const ENGINE_FROM_DEVICE: usize = 1;

struct DeferredFree {
    alloc: Allocation,
    until: Vec<StreamPoint>,
}

pub struct Executor {
    pub device: usize,
    pub memory: MemoryTable,
    pub scheduler: Arc<Scheduler>,
    copy: [Arc<EngineThread>; 2],
    host: Arc<EngineThread>,
    units: ComputeUnits,
    epoch: AtomicU64,
    sticky: AtomicI32,
    outstanding: AtomicU64,
    deferred: Mutex<Vec<DeferredFree>>,
    has_deferred: AtomicBool,
    /// Futures (waits on never-recorded events) not yet resolved.
    pub pending_futures: AtomicUsize,
    clock: Instant,
}

impl Executor {
    pub fn start(device: usize, compute_units: usize, capacity: u64, policy: Policy, clock: Instant) -> Arc<Executor> {
        let scheduler = Arc::new(Scheduler::new(
            policy,
            Box::new(|k, failure| {
                let result = match failure {
                    None => Ok(()),
                    Some((e, msg)) => {
                        super::diagnostics::async_error(&msg);
                        Err(e)
                    }
                };
                k.stream().finish_op(k.seq(), k.epoch(), result);
            }),
        ));
        let units = ComputeUnits::start(device, compute_units, scheduler.clone());
        Arc::new(Executor {
            device,
            memory: MemoryTable::new(capacity),
            scheduler,
            copy: [
                EngineThread::start(format!("biren-d{device}-copy-in")),
                EngineThread::start(format!("biren-d{device}-copy-out")),
            ],
            host: EngineThread::start(format!("biren-d{device}-host")),
            units,
            epoch: AtomicU64::new(1),
            sticky: AtomicI32::new(0),
            outstanding: AtomicU64::new(0),
            deferred: Mutex::new(Vec::new()),
            has_deferred: AtomicBool::new(false),
            pending_futures: AtomicUsize::new(0),
            clock,
        })
    }

    pub fn compute_units(&self) -> usize {
        self.units.count()
    }

    pub fn now_ns(&self) -> u64 {
        self.clock.elapsed().as_nanos() as u64
    }

    pub fn epoch(&self) -> u64 {
        self.epoch.load(Ordering::SeqCst)
    }

    /// The device's sticky error, if a launch failed since the last reset.
    pub fn sticky(&self) -> Result<()> {
        match self.sticky.load(Ordering::Acquire) {
            0 => Ok(()),
            c => Err(ErrorCode::from_code(c).unwrap_or(ErrorCode::Unknown)),
        }
    }

    pub fn set_sticky(&self, e: ErrorCode) {
        let _ = self.sticky.compare_exchange(0, e.code(), Ordering::AcqRel, Ordering::Acquire);
    }

    pub fn op_enqueued(&self) {
        self.outstanding.fetch_add(1, Ordering::SeqCst);
    }

    pub fn op_completed(&self) {
        self.outstanding.fetch_sub(1, Ordering::SeqCst);
        if self.has_deferred.load(Ordering::Acquire) {
            self.reclaim();
        }
    }

    /// True when no enqueued work is unfinished on the device.
    pub fn is_idle(&self) -> bool {
        self.outstanding.load(Ordering::SeqCst) == 0
    }

    /// Hands a ready op to whatever runs it.
    pub fn run(&self, stream: &Arc<StreamCore>, seq: u64, epoch: u64, work: Work) -> Started {
        match work {
            Work::Record(r) => {
                r.mark(self.now_ns());
                Started::Done(Ok(()))
            }
            Work::Wait { .. } | Work::Taken => Started::Done(Ok(())),
            // A device with a sticky error runs nothing more until it is reset.
            _ if self.sticky.load(Ordering::Acquire) != 0 => Started::Done(Ok(())),
            Work::Kernel(launch) => {
                self.scheduler.submit(launch, stream.priority, stream.clone(), seq, epoch);
                Started::Running
            }
            Work::Copy { dst, src, len, engine } => {
                let s = stream.clone();
                self.copy[engine].submit(Box::new(move || {
                    // SAFETY: both ranges were validated at enqueue and their memory is kept
                    // alive until this op completes (deferred free).
                    unsafe { std::ptr::copy(src as *const u8, dst as *mut u8, len) };
                    s.finish_op(seq, epoch, Ok(()));
                }));
                Started::Running
            }
            Work::Fill { dst, value, len } => {
                let s = stream.clone();
                self.copy[ENGINE_FROM_DEVICE].submit(Box::new(move || {
                    unsafe { std::ptr::write_bytes(dst as *mut u8, value, len) };
                    s.finish_op(seq, epoch, Ok(()));
                }));
                Started::Running
            }
            Work::Host(h) => {
                let s = stream.clone();
                self.host.submit(Box::new(move || {
                    unsafe { (h.func)(h.data as *mut std::ffi::c_void) };
                    s.finish_op(seq, epoch, Ok(()));
                }));
                Started::Running
            }
        }
    }

    /// Releases `a` once every point in `until` is reached (now, if they all are).
    pub fn free_after(&self, a: Allocation, until: Vec<StreamPoint>) {
        if until.iter().all(|p| p.reached()) {
            self.memory.release(a);
            return;
        }
        self.deferred.lock().push(DeferredFree { alloc: a, until });
        self.has_deferred.store(true, Ordering::Release);
        self.reclaim();
    }

    /// Releases the deferred frees whose work has completed; true if any was released.
    pub fn reclaim(&self) -> bool {
        let done: Vec<Allocation> = {
            let mut d = self.deferred.lock();
            let mut out = Vec::new();
            let mut i = 0;
            while i < d.len() {
                if d[i].until.iter().all(|p| p.reached()) {
                    out.push(d.swap_remove(i).alloc);
                } else {
                    i += 1;
                }
            }
            if d.is_empty() {
                self.has_deferred.store(false, Ordering::Release);
            }
            out
        };
        let any = !done.is_empty();
        for a in done {
            self.memory.release(a);
        }
        any
    }

    /// The points deferred frees wait for (an allocation that fails for lack of memory waits
    /// for them and tries again).
    pub fn deferred_points(&self) -> Vec<StreamPoint> {
        self.deferred.lock().iter().flat_map(|d| d.until.iter().cloned()).collect()
    }

    /// Makes every op started before now stale: its completion will be ignored.
    pub fn bump_epoch(&self) {
        self.epoch.fetch_add(1, Ordering::SeqCst);
    }

    /// After `bump_epoch` and draining the streams, stops all device activity: drops queued kernels, copies and host functions, waits for the
    /// blocks and jobs already running, releases every allocation, clears the sticky error.
    /// Returns the allocations that were live (for the leak report) as (base, size, caller).
    pub fn reset(&self) -> Vec<(usize, usize, usize)> {
        self.scheduler.cancel_all();
        for e in &self.copy {
            e.cancel_and_wait();
        }
        self.host.cancel_and_wait();
        self.outstanding.store(0, Ordering::SeqCst);
        for d in std::mem::take(&mut *self.deferred.lock()) {
            self.memory.release(d.alloc);
        }
        self.has_deferred.store(false, Ordering::Release);
        let live = self.memory.unregister_all();
        let report = live.iter().map(|a| (a.base, a.size, a.caller)).collect();
        for a in live {
            self.memory.release(a);
        }
        self.pending_futures.store(0, Ordering::SeqCst);
        self.sticky.store(0, Ordering::Release);
        report
    }
}
