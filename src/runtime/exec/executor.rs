//! The executor of one device: where a stream's ready op goes to run (compute units through the
//! scheduler, copy engines, the host-function thread), plus the device's shared state: its
//! memory, its sticky error, its reset epoch and its count of unfinished work.

use crate::device::{ComputeUnits, EngineThread};
use crate::runtime::diagnostics::trace::{self, Track};
use crate::runtime::diagnostics::{self, validator};
use crate::runtime::error::{ErrorCode, Result};
use crate::runtime::exec::notifier::Notifier;
use crate::runtime::exec::schedule;
use crate::runtime::exec::scheduler::{Policy, Scheduler};
use crate::runtime::exec::work::{Padded, Point, Started, Ticket, Work};
use crate::runtime::memory::{Allocation, MemoryTable};
use parking_lot::Mutex;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

/// Which copy engine runs a copy.
pub(crate) const ENGINE_TO_DEVICE: usize = 0;
pub(crate) const ENGINE_FROM_DEVICE: usize = 1;

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
const BACKLOG_PATIENCE: Duration = Duration::from_millis(10);

/// How many enqueues a host makes between two looks at the device's finished count
/// (`Executor::throttle`): that count's line is the device's, written at every completion, and
/// reading it at every enqueue cost the host a cache miss each time (~7% of an enqueue's CPU
/// time). The bound is kept to within this many ops.
const BACKLOG_STRIDE: u64 = 64;

/// The count of enqueued ops, and the count from which an enqueue next looks at the finished
/// count (the host's line: enqueuers write both).
struct Enqueued {
    count: AtomicU64,
    next_look: AtomicU64,
}

/// The count of finished ops and the enqueuers waiting for it to grow (on one line pair: the
/// completion that counts also reads whether anybody waits).
struct Finished {
    count: AtomicU64,
    room: Notifier,
}

struct DeferredFree {
    alloc: Allocation,
    until: Vec<Point>,
}

pub struct Executor {
    /// This executor, for work that must outlive the call that starts it (graph launches).
    me: Weak<Executor>,
    pub device: usize,
    pub memory: MemoryTable,
    pub scheduler: Arc<Scheduler>,
    copy: [Arc<EngineThread>; 2],
    host: Arc<EngineThread>,
    units: ComputeUnits,
    epoch: AtomicU64,
    sticky: AtomicI32,
    /// Ops enqueued and ops finished (completed, withdrawn or dropped) on the device, on lines of
    /// their own: enqueuing hosts write the first, the device's threads the second.
    ops_in: Padded<Enqueued>,
    ops_out: Padded<Finished>,
    /// `ops_out` when a waiting enqueue last gave up (nothing finished for `BACKLOG_PATIENCE`):
    /// enqueues do not wait again until an op finishes.
    stalled_at: AtomicU64,
    /// Frees waiting for the work enqueued before them, oldest first. A free waits for the
    /// pending work of every stream (birenFree), so a later one is releasable only once the
    /// earlier ones are (stream-ordered frees, which wait for one stream, may be held up behind
    /// an older one: the full scan of `reclaim` releases them).
    deferred: Mutex<VecDeque<DeferredFree>>,
    has_deferred: AtomicBool,
    /// A completion found the deferred list locked: its holder looks again after unlocking.
    recheck: AtomicBool,
    /// True during a reset: no op starts.
    resetting: AtomicBool,
    /// Threads between taking an op from a stream and handing it over (a reset waits for them).
    starting: AtomicUsize,
    /// Validator: freed allocations kept poisoned to catch writes after free.
    quarantine: Mutex<Quarantine>,
    clock: Instant,
}

#[derive(Default)]
struct Quarantine {
    allocs: std::collections::VecDeque<Allocation>,
    bytes: usize,
}

/// Freed memory kept to catch writes after free (validator on).
const QUARANTINE_BYTES: usize = 8 << 20;

impl Executor {
    pub fn start(
        device: usize,
        compute_units: usize,
        capacity: u64,
        policy: Policy,
        clock: Instant,
    ) -> Arc<Executor> {
        Arc::new_cyclic(|me: &Weak<Executor>| {
            let me_for_graphs = me.clone();
            let me = me.clone();
            let scheduler = Arc::new(Scheduler::new(
                device,
                policy,
                Box::new(move |k, failure| {
                    let mut result = match failure {
                        None => Ok(()),
                        Some((e, msg)) => {
                            diagnostics::async_error(&msg);
                            trace::instant(
                                k.ticket().to.track(),
                                trace::ERROR,
                                format!("error: {msg}"),
                                String::new(),
                            );
                            Err(e)
                        }
                    };
                    if result.is_ok() && diagnostics::validator_on() {
                        if let Some(ex) = me.upgrade() {
                            result = ex.check_memory(&format!("kernel '{}'", k.launch.name()));
                        }
                    }
                    k.ticket().finish(result);
                }),
            ));
            let units = ComputeUnits::start(device, compute_units, scheduler.clone());
            Executor::with_parts(device, capacity, scheduler, units, clock, me_for_graphs)
        })
    }

    fn with_parts(
        device: usize,
        capacity: u64,
        scheduler: Arc<Scheduler>,
        units: ComputeUnits,
        clock: Instant,
        me: Weak<Executor>,
    ) -> Executor {
        Executor {
            me,
            device,
            memory: MemoryTable::device(capacity),
            scheduler,
            copy: [
                EngineThread::start(format!("biren-d{device}-copy-in")),
                EngineThread::start(format!("biren-d{device}-copy-out")),
            ],
            host: EngineThread::start(format!("biren-d{device}-host")),
            units,
            epoch: AtomicU64::new(1),
            sticky: AtomicI32::new(0),
            ops_in: Padded(Enqueued {
                count: AtomicU64::new(0),
                next_look: AtomicU64::new(0),
            }),
            ops_out: Padded(Finished {
                count: AtomicU64::new(0),
                room: Notifier::new(),
            }),
            stalled_at: AtomicU64::new(u64::MAX),
            deferred: Mutex::new(VecDeque::new()),
            has_deferred: AtomicBool::new(false),
            recheck: AtomicBool::new(false),
            resetting: AtomicBool::new(false),
            starting: AtomicUsize::new(0),
            quarantine: Mutex::new(Quarantine::default()),
            clock,
        }
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
        let _ = self
            .sticky
            .compare_exchange(0, e.code(), Ordering::AcqRel, Ordering::Acquire);
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
        let i = self.ops_in.count.load(Ordering::Relaxed);
        if i >= self.ops_in.next_look.load(Ordering::Relaxed) {
            self.look_at_backlog(i, BACKLOG_PATIENCE);
        }
    }

    /// `throttle`'s look at the finished count, `i` ops having been enqueued (`patience`: the
    /// tests' own).
    #[inline(never)]
    fn look_at_backlog(&self, i: u64, patience: Duration) {
        self.ops_in
            .next_look
            .store(i + BACKLOG_STRIDE, Ordering::Relaxed);
        let out = self.ops_out.count.load(Ordering::Relaxed);
        if i.saturating_sub(out) > BACKLOG_HIGH {
            self.wait_for_room(out, patience);
        }
    }

    #[cold]
    fn wait_for_room(&self, mut out: u64, patience: Duration) {
        if crate::device::engine::on_device_thread()
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
    fn backlog(&self) -> u64 {
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

    /// Hands ready work to whatever runs it; `ticket` is finished when it ends (not when it is
    /// skipped: then the result is returned at once). `priority` orders kernels.
    pub fn run(&self, work: Work, priority: i32, ticket: Ticket) -> Started {
        // A device with a sticky error runs nothing more until it is reset; stream callbacks
        // still run (they report the error).
        if self.sticky.load(Ordering::Acquire) != 0
            && !matches!(&work, Work::Host(h) if h.despite_error)
        {
            return Started::Done(Ok(()));
        }
        match work {
            Work::Graph(g, events) => match self.me.upgrade() {
                Some(me) => {
                    crate::runtime::exec::graph::run::start(me, priority, ticket, g, events)
                }
                None => Started::Done(Ok(())),
            },
            Work::Kernel(launch) => {
                self.scheduler.submit(launch, priority, ticket);
                Started::Running
            }
            Work::Copy {
                dst,
                src,
                len,
                engine,
                dir,
            } => {
                let device = self.device;
                self.copy[engine].submit(Box::new(move || {
                    let t0 = trace::now();
                    // SAFETY: both ranges were validated at enqueue and their memory is kept
                    // alive until this op completes (deferred free).
                    unsafe { std::ptr::copy(src as *const u8, dst as *mut u8, len) };
                    trace::span(
                        Track::CopyEngine { device, engine },
                        trace::MEMCPY,
                        format!("memcpy {len} B"),
                        t0,
                        format!("\"bytes\":{len},\"kind\":\"{}\"", dir.short_name()),
                    );
                    ticket.finish(Ok(()));
                }));
                Started::Running
            }
            Work::Fill { dst, value, len } => {
                let device = self.device;
                self.copy[ENGINE_FROM_DEVICE].submit(Box::new(move || {
                    let t0 = trace::now();
                    unsafe { std::ptr::write_bytes(dst as *mut u8, value, len) };
                    let track = Track::CopyEngine {
                        device,
                        engine: ENGINE_FROM_DEVICE,
                    };
                    trace::span(
                        track,
                        trace::MEMSET,
                        format!("memset {len} B"),
                        t0,
                        format!("\"bytes\":{len}"),
                    );
                    ticket.finish(Ok(()));
                }));
                Started::Running
            }
            Work::Strided(t) => {
                let device = self.device;
                self.copy[t.engine].submit(Box::new(move || {
                    let t0 = trace::now();
                    // SAFETY: every row was validated at enqueue; the memory is kept alive until
                    // this op completes (deferred free).
                    unsafe { t.run() };
                    let engine = t.engine;
                    trace::span(
                        Track::CopyEngine { device, engine },
                        trace::MEMCPY,
                        t.describe(),
                        t0,
                        format!("\"bytes\":{}", t.bytes()),
                    );
                    ticket.finish(Ok(()));
                }));
                Started::Running
            }
            Work::Host(h) => {
                let device = self.device;
                self.host.submit(Box::new(move || {
                    if diagnostics::racecheck::on() {
                        if let Track::Stream { id, .. } = ticket.to.track() {
                            diagnostics::racecheck::host_function_enters(id, ticket.seq);
                        }
                    }
                    let t0 = trace::now();
                    unsafe { (h.func)(h.data as *mut std::ffi::c_void) };
                    trace::span(
                        Track::HostFunctions { device },
                        trace::HOST_FUNCTION,
                        "host function".into(),
                        t0,
                        String::new(),
                    );
                    ticket.finish(Ok(()));
                }));
                Started::Running
            }
        }
    }

    /// Runs `job` on copy engine `engine` (graph nodes; the job completes what it belongs to).
    pub(crate) fn submit_engine(&self, engine: usize, job: crate::device::engine::Job) {
        self.copy[engine].submit(job);
    }

    /// Runs `job` on the host-function thread.
    pub(crate) fn submit_host(&self, job: crate::device::engine::Job) {
        self.host.submit(job);
    }

    /// Returns a freed allocation's memory; with the validator on, keeps it poisoned in
    /// quarantine for a while to catch kernels that write to it after the free.
    pub fn release(&self, a: Allocation) {
        if a.guard == 0 || !diagnostics::validator_on() {
            self.memory.release(a);
            return;
        }
        unsafe { std::ptr::write_bytes(a.base as *mut u8, validator::POISON_FREED, a.size) };
        let evicted: Vec<Allocation> = {
            let mut q = self.quarantine.lock();
            q.bytes += a.size;
            q.allocs.push_back(a);
            let mut out = Vec::new();
            while q.bytes > QUARANTINE_BYTES {
                let Some(old) = q.allocs.pop_front() else {
                    break;
                };
                q.bytes -= old.size;
                out.push(old);
            }
            out
        };
        for a in evicted {
            self.memory.release(a);
        }
    }

    /// Empties the quarantine (when memory runs short, and at reset).
    pub fn drain_quarantine(&self) -> bool {
        let all: Vec<Allocation> = {
            let mut q = self.quarantine.lock();
            q.bytes = 0;
            q.allocs.drain(..).collect()
        };
        let any = !all.is_empty();
        for a in all {
            self.memory.release(a);
        }
        any
    }

    /// Validator: checks every allocation's guard zones and the quarantined freed memory. A
    /// damaged byte means `culprit` (or work that ran alongside it) wrote out of bounds or after
    /// a free: reported, and the device gets the sticky ILLEGAL_ADDRESS.
    pub fn check_memory(&self, culprit: &str) -> Result<()> {
        let mut problems = Vec::new();
        self.memory.for_each(|a| {
            let (block, len) = a.block();
            if let Some((first, last)) = validator::damaged_guard(a.base, a.size, block, len, a.guard) {
                let place = if last < 0 {
                    format!("bytes {first}..{last} before its start")
                } else if first >= 0 {
                    format!("bytes {first}..{last} past its end")
                } else {
                    format!("bytes {first}..{last}, before its start and past its end")
                };
                problems.push(format!(
                    "{culprit} wrote out of bounds of the {}-byte allocation at {:#x}: {place}. \
                     The launch fails with BIREN_ERROR_ILLEGAL_ADDRESS (sticky until birenDeviceReset).",
                    a.size, a.base
                ));
                validator::repair_guards(a);
            }
        });
        for a in self.quarantine.lock().allocs.iter() {
            let bytes = unsafe { std::slice::from_raw_parts(a.base as *const u8, a.size) };
            if let Some(off) = bytes.iter().position(|&b| b != validator::POISON_FREED) {
                problems.push(format!(
                    "{culprit} wrote to freed memory (use after free): the {}-byte allocation at {:#x}, offset {off}, was already freed. \
                     The launch fails with BIREN_ERROR_ILLEGAL_ADDRESS (sticky until birenDeviceReset).",
                    a.size, a.base
                ));
                unsafe {
                    std::ptr::write_bytes(a.base as *mut u8, validator::POISON_FREED, a.size)
                };
            }
        }
        if problems.is_empty() {
            return Ok(());
        }
        for p in &problems {
            diagnostics::finding("device memory", p);
        }
        self.set_sticky(ErrorCode::IllegalAddress);
        Err(ErrorCode::IllegalAddress)
    }

    /// Releases `a` once every point in `until` is reached (now, if they all are).
    pub fn free_after(&self, a: Allocation, mut until: Vec<Point>) {
        until.retain(|p| !p.reached());
        if until.is_empty() {
            self.release(a);
            return;
        }
        self.deferred
            .lock()
            .push_back(DeferredFree { alloc: a, until });
        self.has_deferred.store(true, Ordering::Release);
        self.reclaim_front();
    }

    /// The completion path (every op that completes, on the device's threads): releases the
    /// oldest deferred frees whose work has completed. It never waits for the list's lock (its
    /// holder looks again when it unlocks) and, when the oldest free is still pending, reads
    /// one of its points: the cost does not grow with the number of deferred frees.
    fn reclaim_front(&self) {
        self.recheck.store(true, Ordering::SeqCst);
        while self.recheck.load(Ordering::SeqCst) {
            let Some(mut d) = self.deferred.try_lock() else {
                return; // the holder sees `recheck` after it unlocks
            };
            self.recheck.store(false, Ordering::SeqCst);
            while let Some(f) = d.front_mut() {
                // Points once reached stay reached: drop them as they are found.
                while f.until.last().is_some_and(|p| p.reached()) {
                    f.until.pop();
                }
                if !f.until.is_empty() {
                    break;
                }
                if let Some(f) = d.pop_front() {
                    self.release(f.alloc);
                }
            }
            if d.is_empty() {
                self.has_deferred.store(false, Ordering::Release);
            }
        }
    }

    /// After unlocking the deferred list elsewhere: a completion may have skipped its look.
    fn after_deferred_unlock(&self) {
        if self.recheck.load(Ordering::SeqCst) {
            self.reclaim_front();
        }
    }

    /// Releases every deferred free whose work has completed, wherever it is in the list; true
    /// if any was released (the slow paths: an allocation that ran short, birenMemGetInfo, a
    /// device synchronize).
    ///
    /// Releases happen under the list's lock, so whoever takes the lock afterwards (another
    /// reclaim, an allocation that ran short) sees the memory back.
    pub fn reclaim(&self) -> bool {
        let mut d = self.deferred.lock();
        let mut any = false;
        let mut i = 0;
        while i < d.len() {
            d[i].until.retain(|p| !p.reached());
            if d[i].until.is_empty() {
                // (in order: the oldest stays at the front for `reclaim_front`)
                if let Some(f) = d.remove(i) {
                    self.release(f.alloc);
                }
                any = true;
            } else {
                i += 1;
            }
        }
        if d.is_empty() {
            self.has_deferred.store(false, Ordering::Release);
        }
        drop(d);
        self.after_deferred_unlock();
        any
    }

    /// The points deferred frees wait for (an allocation that fails for lack of memory waits
    /// for them and tries again).
    pub fn deferred_points(&self) -> Vec<Point> {
        let points = self
            .deferred
            .lock()
            .iter()
            .flat_map(|d| d.until.iter().cloned())
            .collect();
        self.after_deferred_unlock();
        points
    }

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

    /// Bytes held by deferred frees (released once their work completes).
    pub fn deferred_bytes(&self) -> u64 {
        let bytes = self.deferred.lock().iter().map(|d| d.alloc.reserved).sum();
        self.after_deferred_unlock();
        bytes
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicBool;

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
