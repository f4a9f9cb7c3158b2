//! Running one block of a kernel on the calling compute unit.
//!
//! All threads of a block start on one coroutine (fiber) that runs them one after another, so a
//! kernel without barriers pays one fiber switch per block and nothing per thread. When a thread
//! calls `birenSyncThreads`, its fiber suspends and a new fiber takes over the block's remaining
//! threads; once every thread has started, the ones waiting at the barrier are resumed in turn.
//! A barrier that some threads of the block never reach (they returned) fails the block instead
//! of hanging; `birenTrap` abandons the block's fibers without unwinding through C frames.

use super::fault::{self, Fault};
use super::kernel_ctx::{self, Dim3, KernelCtx};
use corosensei::stack::{DefaultStack, Stack, StackPointer};
use corosensei::{Coroutine, CoroutineResult, Yielder};
use std::cell::Cell;
use std::ffi::c_void;

/// A kernel: a plain C function taking the argument-pointer array.
pub type KernelFn = unsafe extern "C" fn(*mut *mut c_void);

/// What a kernel launch asks the device to run.
#[derive(Clone, Copy, Debug)]
pub struct Grid {
    pub kernel: KernelFn,
    pub args: *mut *mut c_void,
    pub grid: Dim3,
    pub block: Dim3,
    pub shared_bytes: usize,
}

// The argument array is owned by the launch (or promised valid by the user) for the whole run.
unsafe impl Send for Grid {}
unsafe impl Sync for Grid {}

/// How one block ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BlockOutcome {
    Completed,
    /// A thread called `birenTrap`.
    Trapped {
        thread: Dim3,
    },
    /// `waiting` threads sat at a barrier that the other threads of the block had left by returning.
    DivergentBarrier {
        waiting: u32,
        threads: u32,
    },
    /// A thread raised a signal (a NULL or wild pointer, a division by zero): see `fault.rs`.
    Faulted {
        thread: Dim3,
        fault: Fault,
    },
    /// The kernel watchdog stopped the block (BIREN_KERNEL_TIMEOUT_MS).
    TimedOut {
        thread: Dim3,
    },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum FiberEvent {
    Barrier,
    Trap,
    /// The fault handler suspended the fiber (the signal is in the unit state).
    Fault,
}

type Fiber = Coroutine<(), FiberEvent, (), FiberStack>;

/// A fiber stack whose top is staggered by a few cache lines per stack. Stacks are mapped at
/// page-aligned addresses of equal size, so without the stagger the tops of a block's 256
/// fibers would all fall into the same cache sets and evict each other at every switch.
pub struct FiberStack {
    inner: DefaultStack,
    stagger: usize,
}

unsafe impl Stack for FiberStack {
    fn base(&self) -> StackPointer {
        StackPointer::new(self.inner.base().get() - self.stagger).expect("stack base")
    }
    fn limit(&self) -> StackPointer {
        self.inner.limit()
    }
}

type FiberYielder = Yielder<(), FiberEvent>;

/// Suspends the calling kernel thread at its block's barrier. Outside a kernel: does nothing.
pub fn sync_threads() {
    let u = kernel_ctx::unit();
    // SAFETY: u is this OS thread's unit state; a non-null yielder is that of the fiber we are
    // running on (set by the fiber body, restored after every suspension).
    unsafe {
        let y = (*u).yielder as *const FiberYielder;
        if y.is_null() {
            return;
        }
        let mine = (*u).ctx.thread_idx;
        (*y).suspend(FiberEvent::Barrier);
        (*u).yielder = y as *const c_void;
        (*u).ctx.thread_idx = mine;
    }
}

/// Aborts the calling kernel thread's block; the launch fails. Outside a kernel: does nothing.
pub fn trap() {
    let y = unsafe { (*kernel_ctx::unit()).yielder } as *const FiberYielder;
    if y.is_null() {
        return;
    }
    unsafe { (*y).suspend(FiberEvent::Trap) };
    // A trapped fiber is never resumed.
    unreachable!("a trapped kernel thread was resumed");
}

/// Called by the fault handler on a kernel fiber: suspends it for good (the block is abandoned).
///
/// # Safety
/// Only on a compute unit, while it executes on a kernel fiber (`UnitTls::on_fiber`).
pub(crate) unsafe fn suspend_for_fault() {
    let y = (*kernel_ctx::unit()).yielder as *const FiberYielder;
    (*y).suspend(FiberEvent::Fault);
    unreachable!("a faulted kernel thread was resumed");
}

/// Resumes a kernel fiber, marking the unit as on a fiber meanwhile (for the fault handler).
#[inline]
fn resume(f: &mut Fiber, unit: *mut kernel_ctx::UnitTls) -> CoroutineResult<FiberEvent, ()> {
    // SAFETY: the unit state of this thread; volatile so the handler sees the flag in order.
    unsafe { std::ptr::write_volatile(&mut (*unit).on_fiber, true) };
    let r = f.resume(());
    unsafe { std::ptr::write_volatile(&mut (*unit).on_fiber, false) };
    r
}

/// The state the fibers of one block share; lives on the compute unit's stack while it runs.
struct BlockState {
    grid: Grid,
    unit: *mut kernel_ctx::UnitTls,
    ctx: *mut KernelCtx,
    threads: u32,
    next: Cell<u32>,
    idx: Cell<Dim3>,
}

/// Runs blocks on one compute unit, keeping its fiber stacks and shared memory for reuse.
pub struct BlockRunner {
    stack_size: usize,
    stacks: Vec<FiberStack>,
    made: usize,
    waiting: Vec<Fiber>,
    shared: Vec<u128>,
}

impl BlockRunner {
    pub fn new(stack_size: usize) -> BlockRunner {
        BlockRunner {
            stack_size,
            stacks: Vec::new(),
            made: 0,
            waiting: Vec::new(),
            shared: Vec::new(),
        }
    }

    fn stack(&mut self) -> FiberStack {
        self.stacks.pop().unwrap_or_else(|| {
            self.made += 1;
            // 67 cache lines per stack (a prime), wrapping within 16 KiB: spreads the tops over
            // all cache sets.
            let stagger = (self.made * 67 * 64) % (16 * 1024);
            let inner =
                DefaultStack::new(self.stack_size).expect("biren: cannot map a fiber stack");
            FiberStack { inner, stagger }
        })
    }

    fn new_fiber(&mut self, st: *const BlockState) -> Fiber {
        let stack = self.stack();
        let body = move |y: &Yielder<(), FiberEvent>, ()| {
            // SAFETY: the block state outlives every fiber of the block (run_block drops or
            // finishes all fibers before returning).
            let st = unsafe { &*st };
            unsafe { (*st.unit).yielder = y as *const FiberYielder as *const c_void };
            let (kernel, args, ctx) = (st.grid.kernel, st.grid.args, st.ctx);
            if st.grid.block.y == 1 && st.grid.block.z == 1 {
                // 1-D blocks (the common case): the index is the thread number.
                loop {
                    let t = st.next.get();
                    if t >= st.threads {
                        break;
                    }
                    st.next.set(t + 1);
                    unsafe {
                        (*ctx).thread_idx.x = t;
                        kernel(args);
                    }
                }
                return;
            }
            loop {
                let t = st.next.get();
                if t >= st.threads {
                    break;
                }
                st.next.set(t + 1);
                let idx = st.idx.get();
                let mut nxt = Dim3 {
                    x: idx.x + 1,
                    ..idx
                };
                if nxt.x == st.grid.block.x {
                    nxt.x = 0;
                    nxt.y += 1;
                    if nxt.y == st.grid.block.y {
                        nxt.y = 0;
                        nxt.z += 1;
                    }
                }
                st.idx.set(nxt);
                unsafe {
                    (*st.ctx).thread_idx = idx;
                    (st.grid.kernel)(st.grid.args);
                }
            }
        };
        // SAFETY: `body` borrows nothing; it holds a raw pointer whose lifetime run_block bounds.
        unsafe { Coroutine::with_stack_unchecked(stack, body) }
    }

    fn recycle(&mut self, mut f: Fiber) {
        if !f.done() {
            // SAFETY: a suspended kernel fiber holds only C frames and our plain-data closure
            // frames; nothing on it needs dropping. Equivalent to longjmp out of the kernel.
            unsafe { f.force_reset() };
        }
        self.stacks.push(f.into_stack());
    }

    /// Runs block `linear` of `grid` to its end on the calling thread.
    pub fn run_block(&mut self, grid: &Grid, linear: u64) -> BlockOutcome {
        let unit = kernel_ctx::unit();
        let ctx = unit as *mut KernelCtx;
        let words = grid.shared_bytes.div_ceil(16);
        if self.shared.len() < words {
            self.shared.resize(words, 0);
        }
        unsafe {
            *ctx = KernelCtx {
                thread_idx: Dim3::default(),
                block_idx: grid.grid.unlinear(linear),
                block_dim: grid.block,
                grid_dim: grid.grid,
                shared: if words == 0 {
                    std::ptr::null_mut()
                } else {
                    self.shared.as_mut_ptr() as *mut c_void
                },
            };
        }
        let st = BlockState {
            grid: *grid,
            unit,
            ctx,
            threads: grid.block.volume() as u32,
            next: Cell::new(0),
            idx: Cell::new(Dim3::default()),
        };
        let outcome = self.drive(&st);
        unsafe { (*unit).yielder = std::ptr::null() };
        outcome
    }

    fn drive(&mut self, st: &BlockState) -> BlockOutcome {
        let mut waiting = std::mem::take(&mut self.waiting);
        let outcome = self.drive_with(st, &mut waiting);
        for f in waiting.drain(..) {
            self.recycle(f);
        }
        self.waiting = waiting;
        outcome
    }

    /// Runs the block; fibers left in `waiting` are abandoned by the caller.
    fn drive_with(&mut self, st: &BlockState, waiting: &mut Vec<Fiber>) -> BlockOutcome {
        // Phase 1: start every thread; a fiber carries threads until one of them suspends.
        while st.next.get() < st.threads {
            let mut f = self.new_fiber(st);
            match resume(&mut f, st.unit) {
                CoroutineResult::Return(()) => self.recycle(f),
                CoroutineResult::Yield(FiberEvent::Barrier) => waiting.push(f),
                CoroutineResult::Yield(FiberEvent::Trap) => {
                    waiting.push(f);
                    return trapped(st);
                }
                CoroutineResult::Yield(FiberEvent::Fault) => {
                    waiting.push(f);
                    return faulted(st);
                }
            }
        }
        // Phase 2: every thread has started; release barrier rounds until all have returned.
        // Fibers are resumed in place (no moves, no allocation per round).
        while !waiting.is_empty() {
            if waiting.len() as u32 != st.threads {
                return BlockOutcome::DivergentBarrier {
                    waiting: waiting.len() as u32,
                    threads: st.threads,
                };
            }
            let mut returned = 0;
            for f in waiting.iter_mut() {
                match resume(f, st.unit) {
                    CoroutineResult::Yield(FiberEvent::Barrier) => {}
                    CoroutineResult::Return(()) => returned += 1,
                    CoroutineResult::Yield(FiberEvent::Trap) => return trapped(st),
                    CoroutineResult::Yield(FiberEvent::Fault) => return faulted(st),
                }
            }
            if returned > 0 {
                let mut i = 0;
                while i < waiting.len() {
                    if waiting[i].done() {
                        let f = waiting.swap_remove(i);
                        self.recycle(f);
                    } else {
                        i += 1;
                    }
                }
            }
        }
        BlockOutcome::Completed
    }
}

/// The outcome of a block one of whose threads called `birenTrap` (its index is in the context).
fn trapped(st: &BlockState) -> BlockOutcome {
    BlockOutcome::Trapped {
        thread: unsafe { (*st.ctx).thread_idx },
    }
}

/// The outcome of a block one of whose threads a signal struck (the handler noted it).
fn faulted(st: &BlockState) -> BlockOutcome {
    let (thread, f) = unsafe { ((*st.ctx).thread_idx, (*st.unit).fault) };
    if f.signal == fault::watchdog_signal() {
        BlockOutcome::TimedOut { thread }
    } else {
        BlockOutcome::Faulted { thread, fault: f }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicU32, Ordering};

    fn grid(kernel: KernelFn, args: *mut *mut c_void, g: Dim3, b: Dim3, shared: usize) -> Grid {
        Grid {
            kernel,
            args,
            grid: g,
            block: b,
            shared_bytes: shared,
        }
    }

    unsafe extern "C" fn count_threads(args: *mut *mut c_void) {
        let hits = *args as *const AtomicU32;
        let c = &*kernel_ctx::current();
        let t = c.thread_idx;
        let lin = t.x + c.block_dim.x * (t.y + c.block_dim.y * t.z);
        (*hits.add(lin as usize)).fetch_add(1, Ordering::Relaxed);
    }

    #[test]
    fn every_thread_of_a_3d_block_runs_once() {
        let hits: Vec<AtomicU32> = (0..60).map(|_| AtomicU32::new(0)).collect();
        let mut a = [hits.as_ptr() as *mut c_void];
        let g = grid(
            count_threads,
            a.as_mut_ptr(),
            Dim3::new(1, 1, 1),
            Dim3::new(5, 4, 3),
            0,
        );
        let mut r = BlockRunner::new(64 * 1024);
        assert_eq!(r.run_block(&g, 0), BlockOutcome::Completed);
        assert!(hits.iter().all(|h| h.load(Ordering::Relaxed) == 1));
    }

    // Tree reduction in shared memory: wrong without a real barrier.
    unsafe extern "C" fn reduce(args: *mut *mut c_void) {
        let out = *args as *mut u32;
        let c = &*kernel_ctx::current();
        let sh = c.shared as *mut u32;
        let t = c.thread_idx.x;
        *sh.add(t as usize) = t + 1;
        sync_threads();
        let mut s = c.block_dim.x / 2;
        while s > 0 {
            if t < s {
                *sh.add(t as usize) += *sh.add((t + s) as usize);
            }
            sync_threads();
            s /= 2;
        }
        if t == 0 {
            *out = *sh;
        }
    }

    #[test]
    fn barrier_reduction_is_exact() {
        let mut out = 0u32;
        let mut a = [&mut out as *mut u32 as *mut c_void];
        let g = grid(
            reduce,
            a.as_mut_ptr(),
            Dim3::new(1, 1, 1),
            Dim3::new(256, 1, 1),
            1024,
        );
        let mut r = BlockRunner::new(64 * 1024);
        for _ in 0..3 {
            out = 0;
            assert_eq!(r.run_block(&g, 0), BlockOutcome::Completed);
            assert_eq!(out, 256 * 257 / 2);
        }
    }

    unsafe extern "C" fn divergent(_args: *mut *mut c_void) {
        if (*kernel_ctx::current()).thread_idx.x < 3 {
            sync_threads();
        }
    }

    #[test]
    fn divergent_barrier_fails_instead_of_hanging() {
        let g = grid(
            divergent,
            std::ptr::null_mut(),
            Dim3::new(1, 1, 1),
            Dim3::new(8, 1, 1),
            0,
        );
        let mut r = BlockRunner::new(64 * 1024);
        assert_eq!(
            r.run_block(&g, 0),
            BlockOutcome::DivergentBarrier {
                waiting: 3,
                threads: 8
            }
        );
        // The runner stays usable.
        let g2 = grid(
            divergent,
            std::ptr::null_mut(),
            Dim3::new(1, 1, 1),
            Dim3::new(2, 1, 1),
            0,
        );
        assert_eq!(r.run_block(&g2, 0), BlockOutcome::Completed);
    }

    unsafe extern "C" fn traps_at_5(args: *mut *mut c_void) {
        let ran = *args as *const AtomicU32;
        if (*kernel_ctx::current()).thread_idx.x == 5 {
            trap();
        }
        (*ran).fetch_add(1, Ordering::Relaxed);
    }

    #[test]
    fn trap_abandons_the_block() {
        let ran = AtomicU32::new(0);
        let mut a = [&ran as *const AtomicU32 as *mut c_void];
        let g = grid(
            traps_at_5,
            a.as_mut_ptr(),
            Dim3::new(1, 1, 1),
            Dim3::new(16, 1, 1),
            0,
        );
        let mut r = BlockRunner::new(64 * 1024);
        assert_eq!(
            r.run_block(&g, 0),
            BlockOutcome::Trapped {
                thread: Dim3::new(5, 0, 0)
            }
        );
        assert_eq!(ran.load(Ordering::Relaxed), 5);
    }

    #[test]
    fn sync_and_trap_outside_kernels_do_nothing() {
        sync_threads();
        trap();
    }
}
