//! The kernel scheduler: which block a free compute unit runs next.
//!
//! - Preemptive: the next block of the highest-priority kernel that has blocks left (ties:
//!   earliest launched), so an urgent kernel starts within about one block's run time.
//! - Cooperative: a started kernel keeps the compute units until its last block is dispatched;
//!   priority only orders the kernels not yet started.
//!
//! A compute unit keeps the kernel it took last and claims its blocks with one atomic add, going
//! back to the scheduler's lock only when that kernel runs out or a new kernel arrives. It claims
//! a run of consecutive blocks at once, as many as fit in about `CLAIM_SPAN` of its time (one
//! at first, doubling while blocks are short), and reports them finished with one atomic add:
//! short blocks do not pay two contended atomics each, and long blocks are still handed out one
//! at a time (so preemption and load balance stay per block).

use crate::device::{BlockOutcome, BlockSource, Grid};
use crate::runtime::diagnostics::trace::{self, Track};
use crate::runtime::error::{ErrorCode, Result};
use crate::runtime::exec::launch::Launch;
use crate::runtime::exec::work::Ticket;
use crate::runtime::lock_order::{self, Rank, RankedMutex};
use parking_lot::Condvar;
use std::cell::Cell;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Policy {
    Preemptive = 0,
    Cooperative = 1,
}

impl Policy {
    pub fn from_int(v: i64) -> Result<Policy> {
        match v {
            0 => Ok(Policy::Preemptive),
            1 => Ok(Policy::Cooperative),
            _ => Err(ErrorCode::InvalidValue),
        }
    }
}

/// A launched kernel whose blocks are being dispatched.
pub struct KernelRun {
    pub grid: Grid,
    pub priority: i32,
    pub order: u64,
    total: u64,
    next: AtomicU64,
    finished: AtomicU64,
    /// Set once `failure` holds something (the common end reads no lock).
    failed: AtomicBool,
    /// Set when the kernel is cancelled (a failed block, a device reset): units stop running
    /// the blocks they claimed.
    stopped: AtomicBool,
    failure: RankedMutex<Option<(ErrorCode, String)>>,
    pub launch: Launch,
    ticket: Ticket,
}

impl KernelRun {
    fn has_blocks(&self) -> bool {
        self.next.load(Ordering::Acquire) < self.total
    }
    /// Who is told when the kernel has ended.
    pub fn ticket(&self) -> &Ticket {
        &self.ticket
    }
}

/// Kernels in order of (priority, launch order), best first. A new kernel usually has the
/// latest launch order and goes to the back in O(1); picking is at the front, O(1). No
/// allocation per kernel once the deque has grown.
#[derive(Default)]
struct ReadyList(VecDeque<Arc<KernelRun>>);

impl ReadyList {
    fn insert(&mut self, k: Arc<KernelRun>) {
        let key = (k.priority, k.order);
        if self.0.back().is_none_or(|b| (b.priority, b.order) <= key) {
            self.0.push_back(k);
            return;
        }
        let at = self.0.partition_point(|x| (x.priority, x.order) <= key);
        self.0.insert(at, k);
    }
    fn best(&self) -> Option<&Arc<KernelRun>> {
        self.0.front()
    }
    fn pop_best(&mut self) -> Option<Arc<KernelRun>> {
        self.0.pop_front()
    }
    fn take_all(&mut self) -> Vec<Arc<KernelRun>> {
        self.0.drain(..).collect()
    }
}

#[derive(Default)]
struct Queues {
    /// Kernels with blocks left, the most urgent (lowest priority value, then earliest
    /// launched) first.
    ready: ReadyList,
    /// Cooperative policy: kernels that have started, in start order.
    running: VecDeque<Arc<KernelRun>>,
    idle: usize,
    shutdown: bool,
}

pub struct Scheduler {
    device: usize,
    queues: RankedMutex<Queues>,
    work: Condvar,
    version: AtomicU64,
    policy: AtomicU8,
    order: AtomicU64,
    /// One flag per compute unit: set while it claims or runs a block (reset waits for them).
    busy: RankedMutex<Vec<Arc<AtomicBool>>>,
    /// True while an idle unit spins waiting for work.
    spinner: AtomicBool,
    /// Kernels submitted so far (what a spinning unit watches).
    submitted: AtomicU64,
    on_done: KernelDone,
}

/// Called when a kernel's last block has ended, with its first failure (code, message).
pub type KernelDone = Box<dyn Fn(&KernelRun, Option<(ErrorCode, String)>) + Send + Sync>;

/// How long an idle compute unit spins for new work before it parks.
const UNIT_SPIN: Duration = Duration::from_micros(50);

/// What the thread that runs a compute unit remembers between a block's end and its next look
/// for work (one thread-local, read once per use).
struct UnitLocal {
    /// Set between the end of a block and the unit's next look for work, to the address of the
    /// unit's own scheduler: the first kernel it submits meanwhile to that scheduler (a stream
    /// moving on) needs no other unit woken for it, and may be handed to it. A kernel for another
    /// device's scheduler (a stream released through an event) gets neither.
    will_look: Cell<usize>,
    /// That kernel, when it went to the front of the ready list (the one the unit would pick),
    /// with the scheduler version of that moment: the unit takes it without the lock while the
    /// version holds. So a stream's kernels follow each other on the unit that completes them.
    handoff: Cell<Option<(Arc<KernelRun>, u64)>>,
    /// A finished kernel's allocation that nobody else holds any more: the unit's next submit
    /// reuses it (a stream's kernels chained on one unit allocate nothing per launch).
    spare: Cell<Option<Arc<KernelRun>>>,
}

thread_local! {
    static UNIT: UnitLocal = const {
        UnitLocal {
            will_look: Cell::new(0),
            handoff: Cell::new(None),
            spare: Cell::new(None),
        }
    };
}

/// A compute unit's view: the kernel it is working on.
pub struct UnitState {
    device: usize,
    cu: usize,
    current: Option<Arc<KernelRun>>,
    version: u64,
    busy: Arc<AtomicBool>,
    /// Tracing: the kernel whose blocks this unit has been running since when.
    span: Option<(Arc<KernelRun>, u64)>,
    /// How many blocks of `current` the unit claims at once (see `CLAIM_SPAN`).
    chunk: u64,
    /// When the unit claimed its current run of blocks.
    claimed_at: Instant,
}

/// How much of a unit's time one claim of blocks should cover, at most: the delay a more urgent
/// kernel may wait for the unit, and the imbalance at a kernel's end.
const CLAIM_SPAN: Duration = Duration::from_micros(20);
/// The most blocks claimed at once.
const MAX_CHUNK: u64 = 64;

impl UnitState {
    /// Adapts the claim size after `count` blocks took `elapsed`: the blocks that fit in
    /// `CLAIM_SPAN`, at most twice the last size.
    fn adapt_chunk(&mut self, count: u64, elapsed: Duration) {
        let per = (elapsed.as_nanos() as u64 / count.max(1)).max(1);
        let fit = (CLAIM_SPAN.as_nanos() as u64 / per).clamp(1, MAX_CHUNK);
        self.chunk = fit.min(self.chunk * 2);
    }
}

impl UnitState {
    /// Tracing: the unit now runs a block of `k` (or nothing): close the span of another kernel.
    fn trace_switch(&mut self, k: Option<&Arc<KernelRun>>) {
        if !trace::on() {
            return;
        }
        let same = matches!((&self.span, k), (Some((a, _)), Some(b)) if Arc::ptr_eq(a, b));
        if same {
            return;
        }
        if let Some((old, start)) = self.span.take() {
            let g = old.grid;
            trace::span(
                Track::Unit {
                    device: self.device,
                    cu: self.cu,
                },
                trace::KERNEL,
                old.launch.name(),
                start,
                format!(
                    "\"grid\":\"({},{},{})\",\"block\":\"({},{},{})\"",
                    g.grid.x, g.grid.y, g.grid.z, g.block.x, g.block.y, g.block.z
                ),
            );
        }
        self.span = k.map(|k| (k.clone(), trace::now()));
    }
}

impl Scheduler {
    pub fn new(device: usize, policy: Policy, on_done: KernelDone) -> Scheduler {
        Scheduler {
            device,
            queues: RankedMutex::new(Rank::SchedulerQueues, Queues::default()),
            work: Condvar::new(),
            version: AtomicU64::new(0),
            policy: AtomicU8::new(policy as u8),
            order: AtomicU64::new(0),
            busy: RankedMutex::new(Rank::SchedulerUnits, Vec::new()),
            spinner: AtomicBool::new(false),
            submitted: AtomicU64::new(0),
            on_done,
        }
    }

    pub fn policy(&self) -> Policy {
        if self.policy.load(Ordering::Relaxed) == 0 {
            Policy::Preemptive
        } else {
            Policy::Cooperative
        }
    }

    pub fn set_policy(&self, p: Policy) {
        let mut q = self.queues.lock();
        self.policy.store(p as u8, Ordering::Relaxed);
        if p == Policy::Preemptive {
            while let Some(k) = q.running.pop_front() {
                q.ready.insert(k);
            }
        }
        self.version.fetch_add(1, Ordering::AcqRel);
    }

    /// Queues a kernel for its blocks to be dispatched.
    pub fn submit(&self, launch: Launch, priority: i32, ticket: Ticket) {
        UNIT.with(|u| self.submit_from(u, launch, priority, ticket))
    }

    fn submit_from(&self, unit: &UnitLocal, launch: Launch, priority: i32, ticket: Ticket) {
        let grid = launch.grid();
        let run = KernelRun {
            total: grid.dispatch_count(),
            grid,
            priority,
            order: self.order.fetch_add(1, Ordering::Relaxed),
            next: AtomicU64::new(0),
            finished: AtomicU64::new(0),
            failed: AtomicBool::new(false),
            stopped: AtomicBool::new(false),
            failure: RankedMutex::new(Rank::KernelFailure, None),
            launch,
            ticket,
        };
        let k = match unit.spare.take() {
            Some(mut spare) => match Arc::get_mut(&mut spare) {
                Some(slot) => {
                    *slot = run;
                    spare
                }
                None => Arc::new(run),
            },
            None => Arc::new(run),
        };
        let mut q = self.queues.lock();
        // Kernels whose blocks are all handed out leave the list lazily: drop them from the
        // front first, so that they do not count as work waiting.
        while q.ready.best().is_some_and(|b| !b.has_blocks()) {
            q.ready.pop_best();
        }
        // Units that will find the work at once by themselves: the spinning one, and the caller
        // if it is a unit submitting from its completion path (it looks for work right after).
        // Units busy running a block do not count: the work must not wait for their block.
        let own = unit.will_look.replace(0) == self as *const Self as usize;
        let finders = self.spinner.load(Ordering::Acquire) as usize + own as usize;
        let demand = (k.total.min(usize::MAX as u64) as usize).saturating_add(q.ready.0.len());
        let wake = q.idle.min(demand.saturating_sub(finders));
        // Units cache the kernel they work on; make them look again only if this one should
        // preempt it (strictly more urgent than the best waiting kernel).
        let preemptive = self.policy() == Policy::Preemptive;
        let preempts = preemptive && q.ready.best().is_some_and(|b| k.priority < b.priority);
        let single = k.total == 1;
        let handoff = own && preemptive && q.ready.best().is_none_or(|b| k.priority < b.priority);
        let mine = handoff.then(|| k.clone());
        q.ready.insert(k);
        if preempts {
            self.version.fetch_add(1, Ordering::AcqRel);
        }
        if let Some(k) = mine {
            unit.handoff
                .set(Some((k, self.version.load(Ordering::Acquire))));
        }
        // The spinning unit watches this count; a one-block kernel that the submitting unit
        // takes itself is not news for it (it would only race that unit for the block).
        if !(own && single) {
            self.submitted.fetch_add(1, Ordering::Release);
        }
        drop(q);
        for _ in 0..wake {
            self.work.notify_one();
        }
    }

    fn pick(&self, q: &mut Queues) -> Option<Arc<KernelRun>> {
        if self.policy() == Policy::Cooperative {
            while let Some(k) = q.running.front() {
                if k.has_blocks() {
                    return Some(k.clone());
                }
                q.running.pop_front();
            }
            while let Some(k) = q.ready.pop_best() {
                if k.has_blocks() {
                    q.running.push_back(k.clone());
                    return Some(k);
                }
            }
            None
        } else {
            while let Some(k) = q.ready.best() {
                if k.has_blocks() {
                    return Some(k.clone());
                }
                q.ready.pop_best();
            }
            None
        }
    }

    fn finish_blocks(&self, k: &KernelRun, n: u64) {
        if n == 0 {
            return;
        }
        if k.finished.fetch_add(n, Ordering::AcqRel) + n == k.total {
            // AcqRel above: the last finisher sees every failure recorded before its block ended.
            let failure = if k.failed.load(Ordering::Acquire) {
                k.failure.lock().take()
            } else {
                None
            };
            (self.on_done)(k, failure);
        }
    }

    /// Stops dispatching `k`'s blocks; those never handed out count as finished.
    fn cancel(&self, k: &KernelRun) {
        k.stopped.store(true, Ordering::Release);
        let claimed = k.next.swap(k.total, Ordering::AcqRel);
        if claimed < k.total {
            self.finish_blocks(k, k.total - claimed);
        }
    }

    /// Drops every queued kernel and waits for the blocks already running (device reset).
    pub fn cancel_all(&self) {
        let all: Vec<Arc<KernelRun>> = {
            let mut q = self.queues.lock();
            let mut v = q.ready.take_all();
            v.extend(q.running.drain(..));
            self.version.fetch_add(1, Ordering::AcqRel);
            v
        };
        for k in &all {
            self.cancel(k);
        }
        let busy = self.busy.lock().clone();
        lock_order::before_wait("the scheduler waits for running blocks");
        while busy.iter().any(|b| b.load(Ordering::SeqCst)) {
            std::thread::sleep(std::time::Duration::from_micros(100));
        }
    }

    /// What a stalled scheduler looks like: `Some((launch order, next block))` of a kernel with
    /// blocks left while every unit is parked and none spins. (A unit just woken still counts as
    /// parked until it runs: as for streams, only the same mark a second later is a stall.)
    pub fn stall_mark(&self) -> Option<(u64, u64)> {
        let units = self.busy.lock().len();
        let q = self.queues.lock();
        if q.idle < units || units == 0 || self.spinner.load(Ordering::Acquire) {
            return None;
        }
        let k = q
            .ready
            .0
            .iter()
            .chain(q.running.iter())
            .find(|k| k.has_blocks())?;
        Some((k.order, k.next.load(Ordering::Acquire)))
    }

    /// Wakes the parked compute units if a kernel has blocks left while every unit is parked
    /// and none spins (a lost wake-up: nobody would ever run them). Returns what it found, for
    /// the report.
    pub fn kick_if_stalled(&self) -> Option<String> {
        let units = self.busy.lock().len();
        let q = self.queues.lock();
        if q.idle < units || units == 0 || self.spinner.load(Ordering::Acquire) {
            return None;
        }
        let waiting = q
            .ready
            .0
            .iter()
            .chain(q.running.iter())
            .find(|k| k.has_blocks())?;
        let what = format!(
            "kernel '{}' (device {}) has {} of {} blocks not started while all {units} compute units are parked",
            waiting.launch.name(),
            self.device,
            waiting.total - waiting.next.load(Ordering::Acquire).min(waiting.total),
            waiting.total
        );
        drop(q);
        self.work.notify_all();
        Some(what)
    }

    pub fn shutdown(&self) {
        self.queues.lock().shutdown = true;
        self.work.notify_all();
    }
}

impl BlockSource for Scheduler {
    type Kernel = Arc<KernelRun>;
    type UnitState = UnitState;

    fn unit_state(&self, cu: usize) -> UnitState {
        let busy = Arc::new(AtomicBool::new(false));
        self.busy.lock().push(busy.clone());
        UnitState {
            device: self.device,
            cu,
            current: None,
            version: 0,
            busy,
            span: None,
            chunk: 1,
            claimed_at: Instant::now(),
        }
    }

    fn next_blocks(&self, st: &mut UnitState) -> Option<(Arc<KernelRun>, u64, u64)> {
        UNIT.with(|u| self.next_block_on(u, st))
    }

    fn grid(k: &Arc<KernelRun>) -> &Grid {
        &k.grid
    }

    fn launch_id(k: &Arc<KernelRun>) -> u64 {
        k.order + 1
    }

    fn stop_flag(k: &Arc<KernelRun>) -> &AtomicBool {
        &k.stopped
    }

    fn blocks_done(
        &self,
        st: &mut UnitState,
        k: Arc<KernelRun>,
        _first: u64,
        count: u64,
        block: u64,
        outcome: BlockOutcome,
    ) {
        UNIT.with(|u| u.will_look.set(self as *const Self as usize));
        if outcome == BlockOutcome::Completed {
            // (A one-block kernel has nothing to adapt: no clock read on the launch path.)
            if k.total > 1 {
                st.adapt_chunk(count, st.claimed_at.elapsed());
            }
        } else {
            st.chunk = 1;
        }
        // Tracing: no block of `k` is left for this unit: end its span before the kernel's
        // completion can let the host go on (and exit, writing the trace without it).
        if trace::on() && k.next.load(Ordering::Acquire) >= k.total {
            st.trace_switch(None);
        }
        if outcome != BlockOutcome::Completed {
            let code = match outcome {
                BlockOutcome::Faulted { fault, .. }
                    if fault.signal == libc::SIGSEGV || fault.signal == libc::SIGBUS =>
                {
                    ErrorCode::IllegalAddress
                }
                BlockOutcome::TimedOut { .. } => ErrorCode::LaunchTimeout,
                BlockOutcome::IllegalAccess { .. } => ErrorCode::IllegalAddress,
                BlockOutcome::AssertFailed { .. } => ErrorCode::Assert,
                _ => ErrorCode::LaunchFailure,
            };
            let msg = match outcome {
                BlockOutcome::Trapped { thread } => format!(
                    "kernel '{}' trapped (birenTrap) in thread ({},{},{})",
                    k.launch.name(),
                    thread.x,
                    thread.y,
                    thread.z
                ),
                BlockOutcome::AssertFailed { thread } => format!(
                    "kernel '{}': a device-side assert failed in thread ({},{},{}); the launch fails with BIREN_ERROR_ASSERT",
                    k.launch.name(),
                    thread.x,
                    thread.y,
                    thread.z
                ),
                BlockOutcome::IllegalAccess { thread, what } => format!(
                    "kernel '{}': {what} in thread ({},{},{}); the launch fails with BIREN_ERROR_ILLEGAL_ADDRESS",
                    k.launch.name(),
                    thread.x,
                    thread.y,
                    thread.z
                ),
                BlockOutcome::DivergentBarrier { waiting, threads } => format!(
                    "kernel '{}': {waiting} of {threads} threads of a block wait at birenSyncThreads while the others have returned",
                    k.launch.name()
                ),
                BlockOutcome::Faulted { thread, fault } => {
                    let (what, sig) = match fault.signal {
                        libc::SIGSEGV => ("accessed the illegal address", "SIGSEGV"),
                        libc::SIGBUS => ("accessed the illegal address", "SIGBUS"),
                        libc::SIGFPE => (
                            "raised an arithmetic fault (such as an integer division by zero) at instruction",
                            "SIGFPE",
                        ),
                        _ => (
                            "executed an illegal instruction (such as __builtin_trap()) at",
                            "SIGILL",
                        ),
                    };
                    let b = k.grid.grid.unlinear(block);
                    format!(
                        "kernel '{}' {what} {:#x} ({sig}) in thread ({},{},{}) of block ({},{},{}); the launch failed, the process lives",
                        k.launch.name(),
                        fault.addr,
                        thread.x,
                        thread.y,
                        thread.z,
                        b.x,
                        b.y,
                        b.z
                    )
                }
                BlockOutcome::TimedOut { thread } => format!(
                    "kernel '{}' ran longer than BIREN_KERNEL_TIMEOUT_MS and was stopped by the watchdog in thread ({},{},{})",
                    k.launch.name(),
                    thread.x,
                    thread.y,
                    thread.z
                ),
                BlockOutcome::DivergentWarp { warp, waiting, mask } => format!(
                    "kernel '{}': {waiting} lanes of warp {warp} wait at a warp operation with mask {mask:#010x} whose other lanes have returned or wait elsewhere",
                    k.launch.name()
                ),
                BlockOutcome::DivergentGrid { waiting, threads } => format!(
                    "kernel '{}': {waiting} of {threads} threads of the cooperative grid wait at birenGridSync while the others have returned",
                    k.launch.name()
                ),
                BlockOutcome::Misuse { what, thread } => format!(
                    "kernel '{}', thread ({},{},{}): {what}",
                    k.launch.name(),
                    thread.x,
                    thread.y,
                    thread.z
                ),
                BlockOutcome::Completed => unreachable!(),
            };
            k.failure.lock().get_or_insert((code, msg));
            k.failed.store(true, Ordering::Release);
            self.cancel(&k);
        }
        // The blocks of the run after a failed one were not run; they count as finished.
        self.finish_blocks(&k, count);
    }
}

impl Scheduler {
    /// Keeps a kernel the unit lets go of as its spare if nobody else holds it.
    fn recycle(unit: &UnitLocal, k: Option<Arc<KernelRun>>) {
        if let Some(k) = k {
            if Arc::strong_count(&k) == 1 {
                unit.spare.set(Some(k));
            }
        }
    }

    fn next_block_on(
        &self,
        u: &UnitLocal,
        st: &mut UnitState,
    ) -> Option<(Arc<KernelRun>, u64, u64)> {
        u.will_look.set(0);
        if let Some((k, v)) = u.handoff.take() {
            // Still what a pick would choose while no more urgent kernel came (version).
            if self.version.load(Ordering::Acquire) == v {
                // A kernel just submitted: the unit starts on it one block at a time.
                st.chunk = 1;
                Self::recycle(u, st.current.replace(k));
                st.version = v;
            }
        }
        loop {
            if let Some(k) = &st.current {
                if self.version.load(Ordering::Acquire) == st.version {
                    // Busy before the claim: a reset that cancels after our claim sees us busy.
                    st.busy.store(true, Ordering::SeqCst);
                    let b = k.next.fetch_add(st.chunk, Ordering::SeqCst);
                    if b < k.total {
                        let n = st.chunk.min(k.total - b);
                        let k = k.clone();
                        st.trace_switch(Some(&k));
                        if k.total > 1 {
                            st.claimed_at = Instant::now();
                        }
                        return Some((k, b, n));
                    }
                }
                st.busy.store(false, Ordering::Release);
                Self::recycle(u, st.current.take());
            }
            let mut q = self.queues.lock();
            let mut spun = false;
            loop {
                if q.shutdown {
                    return None;
                }
                if let Some(k) = self.pick(&mut q) {
                    st.version = self.version.load(Ordering::Acquire);
                    st.current = Some(k);
                    st.chunk = 1;
                    break;
                }
                st.trace_switch(None);
                // One idle unit at a time spins briefly before parking: a launch that follows
                // closely (the common case) then costs no futex wake-up on either side.
                if !spun && !self.spinner.swap(true, Ordering::AcqRel) {
                    spun = true;
                    let seen = self.submitted.load(Ordering::Acquire);
                    drop(q);
                    let end = Instant::now() + UNIT_SPIN;
                    while self.submitted.load(Ordering::Acquire) == seen && Instant::now() < end {
                        for _ in 0..32 {
                            std::hint::spin_loop();
                        }
                    }
                    self.spinner.store(false, Ordering::Release);
                    q = self.queues.lock();
                    continue;
                }
                q.idle += 1;
                q.wait(&self.work);
                q.idle -= 1;
                spun = false;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::Dim3;
    use crate::runtime::exec::launch::KernelArgs;
    use crate::runtime::exec::work::Completion;
    use std::ffi::c_void;

    struct Nobody;
    impl Completion for Nobody {
        fn op_finished(&self, _: u64, _: u64, _: Result<()>) {}
        fn track(&self) -> Track {
            Track::Stream {
                device: 0,
                id: 0,
                default: false,
            }
        }
    }

    unsafe extern "C" fn nothing(_: *mut *mut c_void) {}

    /// The safety net's half in the scheduler: a kernel with blocks left while every unit is
    /// parked (here the one unit is only marked parked, so the wake-up of the submit reaches
    /// nobody: a lost wake-up) is found, described, and the units are woken.
    #[test]
    fn kick_if_stalled_finds_a_kernel_that_no_unit_will_run() {
        let s = Scheduler::new(0, Policy::Preemptive, Box::new(|_, _| {}));
        assert!(s.kick_if_stalled().is_none(), "no unit: nothing to say");
        let _unit = s.unit_state(0);
        s.queues.lock().idle = 1;
        assert!(
            s.kick_if_stalled().is_none(),
            "nothing queued: nothing stalled"
        );
        let launch = Launch {
            kernel: nothing,
            grid: Dim3::new(4, 1, 1),
            block: Dim3::new(1, 1, 1),
            shared: 0,
            stack_size: 64 * 1024,
            args: KernelArgs::ByReference(std::ptr::null_mut()),
            info: None,
            cooperative: false,
        };
        let ticket = Ticket {
            to: Arc::new(Nobody),
            seq: 1,
            epoch: 0,
        };
        s.submit(launch, 0, ticket);
        let what = s.kick_if_stalled().expect("the queued kernel is reported");
        assert!(
            what.contains("4 of 4 blocks not started")
                && what.contains("all 1 compute units are parked"),
            "{what}"
        );
        s.spinner.store(true, Ordering::Release);
        assert!(
            s.kick_if_stalled().is_none(),
            "a spinning unit will find the kernel: not a stall"
        );
    }
}
