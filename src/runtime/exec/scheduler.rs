//! The kernel scheduler: which block a free compute unit runs next.
//!
//! - Preemptive: the next block of the highest-priority kernel that has blocks left (ties:
//!   earliest launched), so an urgent kernel starts within about one block's run time.
//! - Cooperative: a started kernel keeps the compute units until its last block is dispatched;
//!   priority only orders the kernels not yet started.
//!
//! A compute unit keeps the kernel it took last and claims its blocks with one atomic add, going
//! back to the scheduler's lock only when that kernel runs out or a new kernel arrives.

use crate::device::{BlockOutcome, BlockSource, Grid};
use crate::runtime::diagnostics::trace::{self, Track};
use crate::runtime::error::{ErrorCode, Result};
use crate::runtime::exec::launch::Launch;
use crate::runtime::exec::stream::StreamCore;
use parking_lot::{Condvar, Mutex};
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
    failure: Mutex<Option<(ErrorCode, String)>>,
    pub launch: Launch,
    stream: Arc<StreamCore>,
    seq: u64,
    epoch: u64,
}

impl KernelRun {
    fn has_blocks(&self) -> bool {
        self.next.load(Ordering::Acquire) < self.total
    }
    pub fn stream(&self) -> &Arc<StreamCore> {
        &self.stream
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
    queues: Mutex<Queues>,
    work: Condvar,
    version: AtomicU64,
    policy: AtomicU8,
    order: AtomicU64,
    /// One flag per compute unit: set while it claims or runs a block (reset waits for them).
    busy: Mutex<Vec<Arc<AtomicBool>>>,
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

thread_local! {
    /// Set on a compute unit between the end of a block and its next look for work: the first
    /// kernel it submits meanwhile (a stream moving on) needs no other unit woken for it.
    static UNIT_WILL_LOOK: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
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
            queues: Mutex::new(Queues::default()),
            work: Condvar::new(),
            version: AtomicU64::new(0),
            policy: AtomicU8::new(policy as u8),
            order: AtomicU64::new(0),
            busy: Mutex::new(Vec::new()),
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
    pub fn submit(
        &self,
        launch: Launch,
        priority: i32,
        stream: Arc<StreamCore>,
        seq: u64,
        epoch: u64,
    ) {
        let grid = launch.grid();
        let k = Arc::new(KernelRun {
            total: grid.grid.volume(),
            grid,
            priority,
            order: self.order.fetch_add(1, Ordering::Relaxed),
            next: AtomicU64::new(0),
            finished: AtomicU64::new(0),
            failure: Mutex::new(None),
            launch,
            stream,
            seq,
            epoch,
        });
        let mut q = self.queues.lock();
        // Kernels whose blocks are all handed out leave the list lazily: drop them from the
        // front first, so that they do not count as work waiting.
        while q.ready.best().is_some_and(|b| !b.has_blocks()) {
            q.ready.pop_best();
        }
        // Units that will find the work at once by themselves: the spinning one, and the caller
        // if it is a unit submitting from its completion path (it looks for work right after).
        // Units busy running a block do not count: the work must not wait for their block.
        let finders = self.spinner.load(Ordering::Acquire) as usize
            + UNIT_WILL_LOOK.with(|c| c.replace(false)) as usize;
        let demand = (k.total.min(usize::MAX as u64) as usize).saturating_add(q.ready.0.len());
        let wake = q.idle.min(demand.saturating_sub(finders));
        // Units cache the kernel they work on; make them look again only if this one should
        // preempt it (strictly more urgent than the best waiting kernel).
        let preempts = self.policy() == Policy::Preemptive
            && q.ready.best().is_some_and(|b| k.priority < b.priority);
        q.ready.insert(k);
        if preempts {
            self.version.fetch_add(1, Ordering::AcqRel);
        }
        self.submitted.fetch_add(1, Ordering::Release);
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
            let failure = k.failure.lock().take();
            (self.on_done)(k, failure);
        }
    }

    /// Stops dispatching `k`'s blocks; those never handed out count as finished.
    fn cancel(&self, k: &KernelRun) {
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
        while busy.iter().any(|b| b.load(Ordering::SeqCst)) {
            std::thread::sleep(std::time::Duration::from_micros(100));
        }
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
        }
    }

    fn next_block(&self, st: &mut UnitState) -> Option<(Arc<KernelRun>, u64)> {
        UNIT_WILL_LOOK.with(|c| c.set(false));
        loop {
            if let Some(k) = &st.current {
                if self.version.load(Ordering::Acquire) == st.version {
                    // Busy before the claim: a reset that cancels after our claim sees us busy.
                    st.busy.store(true, Ordering::SeqCst);
                    let b = k.next.fetch_add(1, Ordering::SeqCst);
                    if b < k.total {
                        let k = k.clone();
                        st.trace_switch(Some(&k));
                        return Some((k, b));
                    }
                }
                st.busy.store(false, Ordering::Release);
                st.current = None;
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
                self.work.wait(&mut q);
                q.idle -= 1;
                spun = false;
            }
        }
    }

    fn grid(k: &Arc<KernelRun>) -> &Grid {
        &k.grid
    }

    fn launch_id(k: &Arc<KernelRun>) -> u64 {
        k.order + 1
    }

    fn block_done(&self, st: &mut UnitState, k: Arc<KernelRun>, block: u64, outcome: BlockOutcome) {
        UNIT_WILL_LOOK.with(|c| c.set(true));
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
                BlockOutcome::Completed => unreachable!(),
            };
            k.failure.lock().get_or_insert((code, msg));
            self.cancel(&k);
        }
        self.finish_blocks(&k, 1);
    }
}

impl KernelRun {
    pub fn seq(&self) -> u64 {
        self.seq
    }
    pub fn epoch(&self) -> u64 {
        self.epoch
    }
}
