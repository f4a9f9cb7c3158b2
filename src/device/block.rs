//! Running the blocks of a kernel on the calling compute unit: threads, barriers, warps, grids.
//!
//! The threads of a block run one after another on a *carrier* fiber: a kernel without sync
//! points pays one fiber switch per block and nothing per thread (a `BIREN_KERNEL` kernel runs
//! them as one plain loop the compiler can vectorise). When a thread reaches a sync point
//! (`birenSyncThreads`, a warp operation, `birenGridSync`) that others must reach too, its carrier
//! stops after that thread and parks; the next fiber runs at once, with a direct switch:
//! a new carrier for the threads not yet started, else a thread released by a completed sync.
//! A barrier, warp or grid rendezvous completes when its last member arrives: that thread goes
//! on and the others become ready in order. So a thread-barrier costs one switch (see
//! `fiber::switch`). The usual barrier decides in a short step, `barrier_step`, and the C
//! entries (`barrier_entry!`) switch in assembly; once a block's first round is over, its
//! barrier runs in *ring mode* (`Run::ring`), entirely in that assembly.
//! A carrier whose threads have finished parks as idle and is resumed as the next new carrier,
//! in this run or a later one: starting a thread sets up no fiber (HIP-CPU keeps its fibers
//! looping for the same reason).
//!
//! When nothing can run and threads still wait, the wait can never complete (some threads
//! returned without reaching it): the block fails instead of hanging. `birenTrap` and misuse
//! abandon the block's fibers without unwinding through C frames.
//!
//! A cooperative launch runs its whole grid here, all blocks resident at once as fibers, so that
//! `birenGridSync` can wait for every thread of the grid.

// The run state is reached through a raw pointer (from the unit's thread-local) by whichever
// fiber runs; the references taken through it live within one call between switches, and one
// fiber runs at a time.
#![allow(dangerous_implicit_autorefs)]

use super::fault::Fault;
use super::fiber::{self, Stack};
use super::kernel_ctx::{self, Dim3, KernelCtx, KernelLoop};
use std::ffi::{c_uint, c_void};
use std::sync::atomic::{AtomicBool, Ordering};

mod shared_tls;
mod sync;
mod turns;
pub(crate) mod warp;

pub use sync::*;

pub use shared_tls::{
    register as register_shared_section, unregister as unregister_shared_section, SectionBounds,
};
use turns::{now_ns, ring_order, Turn, TurnOrder, TURN_ORDERS};
pub(crate) use warp::warp_entry;
use warp::Warp;
pub use warp::{active_mask, lane_id, warp_exchange, WarpOp};

/// A kernel: a plain C function taking the argument-pointer array, called once per thread.
pub type KernelFn = unsafe extern "C" fn(*mut *mut c_void);

/// A kernel's block entry (`BIREN_KERNEL`): runs threads `first..end` (linear, x fastest) of
/// the block described by the context, with the argument-pointer array.
pub type BlockFn = unsafe extern "C" fn(*mut KernelCtx, *mut *mut c_void, c_uint, c_uint);

/// A kernel's range entry (`BIREN_KERNEL`): runs every thread of `count` consecutive blocks, the
/// first the one the context describes, moving the context's `block_idx` on from block to block
/// (x fastest); returns how many blocks it completed: `count`, or fewer when a thread waited at
/// a sync point (the block it was in then goes on as a block of fibers).
pub type BlocksFn = unsafe extern "C" fn(*mut KernelCtx, *mut *mut c_void, c_uint) -> c_uint;

/// Threads per warp.
pub(crate) const WARP_SIZE: u32 = 32;

/// What a kernel launch asks the device to run.
#[derive(Clone, Copy, Debug)]
pub struct Grid {
    pub kernel: KernelFn,
    /// The kernel's block entry, when it has one: used instead of `kernel`.
    pub block_fn: Option<BlockFn>,
    /// Its range entry, when it has one (only used with `block_fn`).
    pub blocks_fn: Option<BlocksFn>,
    /// Its region-form entry (biren-cc), when it has one: whole blocks, no thread ever waits.
    /// Used instead of the others where `block_entry` is (not in cooperative launches).
    pub region_fn: Option<BlocksFn>,
    pub args: *mut *mut c_void,
    pub grid: Dim3,
    pub block: Dim3,
    pub shared_bytes: usize,
    /// A cooperative launch: the whole grid runs at once on one compute unit (`birenGridSync`).
    pub cooperative: bool,
    /// The fiber stack size of each simulated thread (birenLimitStackSize).
    pub stack_size: usize,
    /// A 2-D or 3-D block's threads take turns between barriers in thread order, never in the
    /// order a unit chose by timing (`TurnOrder`): while recording or replaying, where what
    /// runs must not depend on the clock.
    pub fixed_order: bool,
}

impl Grid {
    /// The block entry to run, if any: `block_fn`, except for grids whose x-indices overflow an
    /// int (`gridDim.x * blockDim.x > INT_MAX`). The header's block loop counts
    /// `blockIdx.x * blockDim.x + threadIdx.x` and tells the compiler it stays within an int
    /// (what lets it vectorise the usual index); such grids run the per-thread entry instead.
    pub fn block_entry(&self) -> Option<BlockFn> {
        let x_threads = u64::from(self.grid.x) * u64::from(self.block.x);
        self.block_fn.filter(|_| x_threads <= i32::MAX as u64)
    }

    /// How many pieces the scheduler hands out: blocks, or the whole grid at once.
    pub fn dispatch_count(&self) -> u64 {
        if self.cooperative {
            1
        } else {
            self.grid.volume()
        }
    }
}

// The argument array is owned by the launch (or promised valid by the user) for the whole run.
unsafe impl Send for Grid {}
unsafe impl Sync for Grid {}

/// How one block (or cooperative grid) ended.
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
    /// Lanes of warp `warp` wait at a warp operation whose mask names lanes that never arrive.
    DivergentWarp {
        warp: u32,
        waiting: u32,
        mask: u32,
    },
    /// `waiting` threads of a cooperative grid of `threads` wait at birenGridSync while the others
    /// have returned.
    DivergentGrid {
        waiting: u32,
        threads: u32,
    },
    /// A sync call the launch does not allow (e.g. birenGridSync outside a cooperative launch).
    Misuse {
        what: &'static str,
        thread: Dim3,
    },
    /// A thread raised a signal (a NULL or wild pointer, a division by zero): see `fault.rs`.
    Faulted {
        thread: Dim3,
        fault: Fault,
    },
    /// The kernel watchdog stopped the run (BIREN_KERNEL_TIMEOUT_MS).
    TimedOut {
        thread: Dim3,
    },
    /// A thread made an access the runtime refused without a signal (a texture or surface
    /// object that is not live, a surface access out of range in trap mode): `what` says which.
    IllegalAccess {
        thread: Dim3,
        what: &'static str,
    },
}

/// A fiber of the compute unit. Slots (and their stacks, `Run::stacks`) last as long as the
/// unit's runner: a carrier that has finished its threads parks as *idle* and is resumed as the
/// next new carrier, in this run or a later one, instead of a fresh fiber being set up. One
/// cache line each (the stack, cold, is kept apart): a barrier's bookkeeping touches a line per
/// fiber, not one and a half.
#[repr(C, align(64))]
struct Slot {
    // The fields a ring barrier reads first, in 32 bytes: in one cache line whatever the index.
    sp: *mut c_void,
    /// The top of the stack (`Stack::top`), kept here beside `sp`: the frame prefetches read
    /// both from the slot's line, not from the cold `Run::stacks`.
    top: usize,
    /// The index of the thread parked on it (what the context shows when it resumes).
    idx: Dim3,
    /// The carrier runs threads first..end (end lowered when one parks).
    first: u32,
    end: u32,
    /// The block (within the run) whose threads it carries.
    block: u32,
    /// Parked in `Run::finish`, resumable as a carrier.
    idle: bool,
}
const _: () = assert!(std::mem::size_of::<Slot>() == 64);

/// Per block of the run: its barrier and warps.
struct BlockSync {
    idx: Dim3,
    shared: *mut c_void,
    barrier: Vec<u32>,
    warps: Vec<Option<Box<Warp>>>,
    /// A thread of the block has waited: a `BIREN_KERNEL` block entry then runs the block's
    /// remaining threads one per carrier (a sync point in a helper function, which cannot stop
    /// the entry's loop, then works).
    one_by_one: bool,
}

/// The state of one run (a block, or a cooperative grid); the fibers reach it through the unit's
/// thread-local.
pub struct Run {
    grid: Grid,
    ctx: *mut KernelCtx,
    threads: u32,
    blocks: Vec<BlockSync>,
    /// The first thread not yet started: block, thread.
    next_block: u32,
    next_thread: u32,
    cur: u32,
    slots: Vec<Slot>,
    /// The slots' stacks (same index).
    stacks: Vec<Stack>,
    /// Idle carriers (resumed by `new_carrier`), and slots whose fibers were abandoned when a run
    /// ended (their stacks are set up afresh).
    idle: Vec<u32>,
    dead: Vec<u32>,
    /// Fibers ready to run: `ready[ready_head..]`, in order.
    ready: Vec<u32>,
    ready_head: usize,
    /// The kernel has a block entry (`grid.block_fn`).
    block_form: bool,
    /// A block entry's thread 0 has run through without waiting in this run: later blocks start
    /// as one loop of all their threads (a thread 0 that waits there still truncates it).
    loops: bool,
    /// A range entry (`grid.blocks_fn`) is running the run's blocks from `at` on: the block
    /// running is the context's `block_idx`, not `at` (`sync_range` brings them together).
    in_range: bool,
    /// The range running is the kernel's region-form entry (`grid.region_fn`): its threads
    /// never wait, so a sync point reached meanwhile is one biren-cc did not see.
    region: bool,
    grid_waiting: Vec<u32>,
    outcome: Option<BlockOutcome>,
    driver_sp: *mut c_void,
    stack_size: usize,
    made: usize,
    /// A run of consecutive blocks (not cooperative): the linear index of the block running and
    /// the end of the run. A block that completes with nothing left waiting hands its fiber
    /// straight to the next block: no return to the driver, no new carrier.
    at: u64,
    run_end: u64,
    /// Set when the launch is cancelled: the run stops after the block running.
    stop: *const AtomicBool,
    /// Ring mode: a one-block run whose threads, each on its own fiber, wait at barriers in the
    /// same cyclic order round after round (the usual barrier kernel once its first round is
    /// over). The order is `turns`' (see `ring_order`), `ring_at` the running fiber's place in
    /// it; `arrived` threads of this round, from place `ring_start` on, have reached the
    /// barrier; the running one follows them; the rest, up to `ring_start`, are ready. The
    /// barrier and ready lists are then empty, and the waiting fibers' stack pointers are in
    /// `turns`: everything other than a barrier leaves the mode first (`leave_ring`), writing
    /// those out.
    ring: bool,
    arrived: u32,
    ring_start: u32,
    ring_at: u32,
    turns: Vec<Turn>,
    /// The turn orders of the kernels this unit ran (`TurnOrder`), and which one this run's
    /// kernel uses (an index into it; `usize::MAX` for a 1-D block).
    orders: Vec<TurnOrder>,
    order: usize,
    /// The order the ring of the running block took (true: column), and when it formed if
    /// the block is being timed (else 0).
    column: bool,
    ring_t0: u64,
    /// `turns.as_mut_ptr()` while `ring`: what the barrier entries' ring path
    /// (`barrier_entry!`) reads.
    #[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
    turns_ptr: *mut Turn,
    /// `slots.as_mut_ptr()` while the warp ring runs (no slot is made then): what the warp
    /// entry's ring path (`warp_entry!`) reads.
    #[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
    ring_slots: *mut Slot,
    /// In ring mode, the barrier fetches the frames of the fiber after next (see
    /// `RING_PREFETCH_DEPTH`).
    ring_prefetch: bool,
    /// Warp ring (null when off): the warp of a one-block run whose 32 lanes, each on its own
    /// fiber, go from one full-mask rendezvous to the next among themselves, in lane order, as
    /// ring mode does for barriers: a lane that arrives switches to the next lane (its fiber is
    /// `Warp::parked`), which waits at the rendezvous before, completed; the 32nd to arrive
    /// completes it and goes on. The `wring_arrived` lanes before the running one (`wring_lane`)
    /// have arrived; the others, but the running one, are ready, though not on the ready list.
    /// Anything else the warp's lanes do (a barrier, a thread's end, a partial mask, any slow
    /// path) leaves the mode first (`leave_warp_ring`), and so does a carrier that starts a new
    /// thread (`carry`): only the ring's lanes run in the mode. So do `WARP_RING_ROUNDS`
    /// rendezvous in a row (the other warps get their turn). A rendezvous is then a count, two
    /// stores and a switch per lane, as a ring barrier is per thread.
    warp_ring: *mut Warp,
    wring_arrived: u32,
    wring_rounds: u32,
    /// The lane running while the warp ring is on (only the ring's lanes run in the mode).
    wring_lane: u32,
    /// Where the lane that called `warp::warp_entry_step` last finds its result.
    #[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
    wout: *const u64,
    /// The blocks' copies of the `BIREN_SHARED` thread-locals, when the run has several blocks.
    copies: shared_tls::BlockCopies,
}

/// The depth of a waiting fiber's frames (from its saved stack pointer to its stack's top) above
/// which ring mode's barrier prefetches: deep frames hold values the kernel spilled around the
/// barrier call and reloads when it resumes (a tiled matrix multiply's 32 tile pointers, 688
/// bytes), which are out of the first-level cache by the time the fiber's turn comes round among
/// 256; shallow ones (a reduction's, 320-440 bytes) reload little, and the prefetch only costs
/// (matrix multiply 2.29 -> 2.72 GFLOP/s with it; reduction 65 -> 71x the C loop). Whatever the
/// depth, the line at the saved stack pointer (the registers the switch restores first) is
/// fetched: the reduction's ring barrier 8.30-8.71 -> 7.97-8.50 ns per thread.
const RING_PREFETCH_DEPTH: usize = 512;

impl Run {
    /// A carrier fiber for the threads not yet started: an idle one (it resumes in
    /// `Run::finish` and goes on carrying), else a fresh one.
    #[inline]
    fn new_carrier(&mut self) -> u32 {
        if self.idle.is_empty() {
            self.fresh_carrier()
        } else {
            // SAFETY: not empty.
            unsafe { self.idle_carrier() }
        }
    }

    /// The last idle carrier; also fetches the frames of the one before it (threads start one
    /// after another).
    /// # Safety
    /// `idle` is not empty.
    #[inline(always)]
    unsafe fn idle_carrier(&mut self) -> u32 {
        unsafe {
            let k = self.idle.len();
            let i = *self.idle.get_unchecked(k - 1);
            self.idle.set_len(k - 1);
            if k > 1 {
                let a = self
                    .slots
                    .get_unchecked(*self.idle.get_unchecked(k - 2) as usize);
                fiber::prefetch(a.sp, a.top);
            }
            let sl = self.slots.get_unchecked_mut(i as usize);
            sl.idle = false;
            // It carries the next block's threads (`carry`); until it runs, `switch_to` enters
            // its block from here, not from its last run's (a larger cooperative grid's index).
            // (`fresh_carrier` does the same.)
            sl.block = self.next_block;
            i
        }
    }

    /// Runs fiber `to` in place of the current one (`fiber::switch_keeping`), one-block runs
    /// only (the context's block stays): returns when the current one is resumed.
    #[inline(always)]
    unsafe fn resume(run: *mut Run, u: *mut kernel_ctx::UnitTls, to: u32) {
        unsafe {
            let from = (*run).cur;
            (*run).cur = to;
            let slots = (*run).slots.as_mut_ptr();
            let t = slots.add(to as usize);
            (*u).ctx.thread_idx = (*t).idx;
            fiber::switch_keeping(
                std::ptr::addr_of_mut!((*slots.add(from as usize)).sp),
                (*t).sp,
            );
        }
    }

    /// `resume`'s bookkeeping without the switch, for a `barrier_entry!` to carry out.
    #[inline(always)]
    unsafe fn hand_to(run: *mut Run, u: *mut kernel_ctx::UnitTls, to: u32) -> fiber::Handoff {
        unsafe {
            let from = (*run).cur;
            (*run).cur = to;
            let slots = (*run).slots.as_mut_ptr();
            let t = slots.add(to as usize);
            (*u).ctx.thread_idx = (*t).idx;
            fiber::Handoff::switch(
                std::ptr::addr_of_mut!((*slots.add(from as usize)).sp),
                (*t).sp,
            )
        }
    }

    #[cold]
    #[inline(never)]
    fn fresh_carrier(&mut self) -> u32 {
        let me = self as *mut Run as *mut c_void;
        if let Some(i) = self.dead.pop() {
            let sl = &mut self.slots[i as usize];
            sl.sp = self.stacks[i as usize].prepare(carrier_main, me);
            // As in `idle_carrier`: not the block of the run that abandoned it.
            sl.block = self.next_block;
            return i;
        }
        self.made += 1;
        debug_assert!(
            self.slots.len() < self.slots.capacity(),
            "biren: a run made more fibers than run_blocks reserved slots for"
        );
        // 67 cache lines per stack (a prime), wrapping within 16 KiB: spreads the tops over all
        // cache sets.
        let mut stack = Stack::new(self.stack_size, (self.made * 67 * 64) % (16 * 1024));
        let sp = stack.prepare(carrier_main, me);
        self.slots.push(Slot {
            sp,
            top: stack.top(),
            idle: false,
            first: 0,
            end: 0,
            block: self.next_block,
            idx: Dim3::default(),
        });
        self.stacks.push(stack);
        (self.slots.len() - 1) as u32
    }

    fn has_unstarted(&self) -> bool {
        (self.next_block as usize) < self.blocks.len()
    }

    /// The next fiber to run: a new carrier for unstarted threads, else a ready one.
    fn next_runnable(&mut self) -> Option<u32> {
        if self.has_unstarted() {
            return Some(self.new_carrier());
        }
        self.pop_ready()
    }

    /// The next ready fiber; also fetches the frames of the one after it (they are cold by the
    /// time its turn comes: see `fiber::prefetch`).
    #[inline]
    fn pop_ready(&mut self) -> Option<u32> {
        let h = self.ready_head;
        if h < self.ready.len() {
            // SAFETY: h < len.
            Some(unsafe { self.take_ready(h) })
        } else {
            if h != 0 {
                self.ready.clear();
                self.ready_head = 0;
            }
            None
        }
    }

    /// `pop_ready` when the caller knows `ready[h]` is there (`h` is `ready_head`).
    /// # Safety
    /// `h == ready_head < ready.len()`.
    #[inline(always)]
    unsafe fn take_ready(&mut self, h: usize) -> u32 {
        unsafe {
            self.ready_head = h + 1;
            if h + 1 < self.ready.len() {
                let a = self
                    .slots
                    .get_unchecked(*self.ready.get_unchecked(h + 1) as usize);
                fiber::prefetch(a.sp, a.top);
            }
            *self.ready.get_unchecked(h)
        }
    }

    /// Makes the fibers in `waiting` ready (in order) and empties it.
    #[inline]
    fn release(&mut self, waiting: &mut Vec<u32>) {
        if self.ready_head == self.ready.len() {
            // Nothing else is ready (the usual case at a barrier): the waiting list becomes the
            // ready list, without copying.
            self.ready.clear();
            self.ready_head = 0;
            std::mem::swap(&mut self.ready, waiting);
        } else {
            self.ready.append(waiting);
        }
    }

    /// Leaves ring mode: the barrier's waiting list and the ready list, in the ring's order.
    #[cold]
    #[inline(never)]
    fn leave_ring(&mut self) {
        self.ring = false;
        let n = self.threads as usize;
        let arrived = self.arrived as usize;
        // The round's order from its first arrival on: `arrived` threads at the barrier, the
        // running one, the ready ones.
        let turns = &self.turns[..n];
        for t in turns {
            self.slots[t.slot as usize].sp = t.sp;
        }
        let p = self.ring_start as usize;
        let mut round = turns[p..].iter().chain(&turns[..p]).map(|t| t.slot);
        let w = &mut self.blocks[0].barrier;
        w.clear();
        w.extend(round.by_ref().take(arrived));
        let running = round.next();
        debug_assert_eq!(running, Some(self.cur), "biren: the ring's order is broken");
        self.ready.clear();
        self.ready_head = 0;
        self.ready.extend(round);
        self.arrived = 0;
    }

    /// Points the context at block `b` of the run, and makes its `BIREN_SHARED` data the live one.
    fn enter_block(&mut self, b: u32) {
        self.copies.enter(b);
        let bs = &self.blocks[b as usize];
        unsafe {
            (*self.ctx).block_idx = bs.idx;
            (*self.ctx).shared = bs.shared;
        }
    }

    fn waiting_anywhere(&self) -> bool {
        !self.grid_waiting.is_empty()
            || self
                .blocks
                .iter()
                .any(|b| !b.barrier.is_empty() || b.warps.iter().flatten().any(|w| w.arrived != 0))
    }

    /// Why nothing can run while threads still wait.
    fn stuck(&self) -> BlockOutcome {
        for b in &self.blocks {
            if !b.barrier.is_empty() {
                return BlockOutcome::DivergentBarrier {
                    waiting: b.barrier.len() as u32,
                    threads: self.threads,
                };
            }
        }
        for b in &self.blocks {
            for (i, w) in b.warps.iter().enumerate() {
                if let Some(w) = w {
                    if w.arrived != 0 {
                        let l = w.arrived.trailing_zeros() as usize;
                        let mask = w.req[l].mask;
                        return BlockOutcome::DivergentWarp {
                            warp: i as u32,
                            waiting: w.arrived.count_ones(),
                            mask,
                        };
                    }
                }
            }
        }
        BlockOutcome::DivergentGrid {
            waiting: self.grid_waiting.len() as u32,
            threads: self.threads * self.blocks.len() as u32,
        }
    }

    /// Switches from the current fiber to `to` (the current one is saved to be resumed later,
    /// or abandoned).
    /// The context shows `to`'s thread (and block) when it resumes: the switch returns straight
    /// into the resumed kernel code.
    #[inline(always)]
    unsafe fn switch_to(run: *mut Run, to: u32) {
        let (save, sp) = Run::leave_for(run, to);
        fiber::switch(save, sp)
    }

    /// `switch_to` at a thread's end (`finish`): through the threads' call site
    /// (`fiber::switch_from_site`), so that the resumed thread's return is predicted.
    #[inline(always)]
    unsafe fn switch_to_from_end(run: *mut Run, to: u32) {
        let (save, sp) = Run::leave_for(run, to);
        fiber::switch_from_site(save, sp)
    }

    /// `switch_to`'s bookkeeping: `to` is the running fiber, the context shows its thread (and
    /// block). Returns where to save the current stack pointer and the one to resume.
    #[inline(always)]
    unsafe fn leave_for(run: *mut Run, to: u32) -> (*mut *mut c_void, *mut c_void) {
        let from = (*run).cur as usize;
        (*run).cur = to;
        let t = (*run).slots.as_mut_ptr().add(to as usize);
        (*(*run).ctx).thread_idx = (*t).idx;
        if (*run).blocks.len() > 1 {
            (*run).enter_block((*t).block);
        }
        let save = std::ptr::addr_of_mut!((*run).slots.get_unchecked_mut(from).sp);
        (save, (*t).sp)
    }

    /// Ends the run with `outcome`: back to the driver; the current fiber is never resumed.
    unsafe fn end(run: *mut Run, outcome: BlockOutcome) -> ! {
        if (*run).in_range {
            (*run).sync_range();
        }
        (*run).outcome = Some(outcome);
        // From here on a signal is not the kernel's: the driver's context is about to resume.
        std::ptr::write_volatile(&mut (*kernel_ctx::unit()).on_fiber, false);
        let from = (*run).cur as usize;
        let save = std::ptr::addr_of_mut!((&mut (*run).slots)[from].sp);
        fiber::switch(save, (*run).driver_sp);
        unreachable!("biren: an ended kernel fiber was resumed");
    }

    /// Parks the current fiber (already recorded as waiting) and runs another; returns when the
    /// current fiber is resumed.
    #[inline(always)]
    unsafe fn park(run: *mut Run, idx: Dim3) {
        (*run).slots.get_unchecked_mut((*run).cur as usize).idx = idx;
        match (*run).next_runnable() {
            Some(to) => Run::switch_to(run, to),
            None => Run::park_stuck(run),
        }
    }

    /// `park` when nothing can run: lanes that returned are not waited for
    /// (`release_returned_lanes`; the current lane may be among those released: then it goes
    /// on), else the run fails.
    #[cold]
    #[inline(never)]
    unsafe fn park_stuck(run: *mut Run) {
        if (*run).release_returned_lanes() {
            match (*run).next_runnable() {
                Some(to) if to != (*run).cur => Run::switch_to(run, to),
                _ => {}
            }
            return;
        }
        let o = (*run).stuck();
        Run::end(run, o)
    }

    /// While a range entry runs, the block it is in is the context's: makes it the run's block
    /// (`at` and the block's index), for what the runtime does in that block meanwhile.
    fn sync_range(&mut self) {
        // SAFETY: the run's context is the unit's, valid while the run is.
        let idx = unsafe { (*self.ctx).block_idx };
        self.at = self.grid.grid.unlinear_index(idx);
        self.blocks[0].idx = idx;
    }

    /// The range entry no longer runs the run's blocks (it returned, or a thread waits in the
    /// block it is in, which then goes on as blocks without one do): that block is the run's.
    fn leave_range(&mut self) {
        if self.in_range {
            self.in_range = false;
            self.sync_range();
        }
    }

    /// The block completed: if the run has a next block, sets it up to run on the current
    /// fiber (the block's other fibers have all finished and are idle) and returns true.
    unsafe fn next_block_of_run(run: *mut Run) -> bool {
        let r = &mut *run;
        if r.at + 1 >= r.run_end || (!r.stop.is_null() && (*r.stop).load(Ordering::Relaxed)) {
            return false;
        }
        r.at += 1;
        let g = r.grid.grid;
        let bs = r.blocks.get_unchecked_mut(0);
        // The next linear block index, x fastest.
        let idx = g.block_after(bs.idx);
        bs.idx = idx;
        bs.one_by_one = false;
        (*r.ctx).block_idx = idx;
        r.next_block = 0;
        r.next_thread = 0;
        true
    }

    /// The current carrier finished its threads: parks as idle and runs another fiber (returns
    /// when resumed as a new carrier), or runs the run's next block on this fiber (returns), or
    /// ends the run.
    unsafe fn finish(run: *mut Run) {
        if (*run).ring {
            (*run).leave_ring();
        }
        if !(*run).warp_ring.is_null() {
            (*run).leave_warp_ring();
        }
        let mut next = (*run).pop_ready();
        let mut waiting = false;
        if next.is_none() {
            // Lanes that returned are not waited for: their warps' rendezvous may complete.
            waiting = (*run).waiting_anywhere();
            if waiting && (*run).release_returned_lanes() {
                next = (*run).pop_ready();
            }
        }
        match next {
            Some(to) => {
                let cur = (*run).cur;
                (*run).slots.get_unchecked_mut(cur as usize).idle = true;
                (*run).idle.push(cur);
                Run::switch_to_from_end(run, to);
                // Resumed by new_carrier, maybe in a later run (which the driver entered with
                // on_fiber cleared).
                std::ptr::write_volatile(&mut (*kernel_ctx::unit()).on_fiber, true);
            }
            None => {
                if (*run).ring_t0 != 0 {
                    let ns = now_ns().saturating_sub((*run).ring_t0);
                    (*run).ring_t0 = 0;
                    let (o, column) = ((*run).order, (*run).column);
                    if let Some(o) = (*run).orders.get_mut(o) {
                        o.record(column, ns);
                    }
                }
                if waiting {
                    let o = (*run).stuck();
                    Run::end(run, o)
                } else if !Run::next_block_of_run(run) {
                    Run::end(run, BlockOutcome::Completed)
                }
            }
        }
    }
}

/// A carrier fiber: runs unstarted threads until none are left, then finishes.
unsafe extern "C" fn carrier_main(arg: *mut c_void) {
    let run = arg as *mut Run;
    // On a fiber, with the driver's context saved: a fault here is the kernel's.
    std::ptr::write_volatile(&mut (*kernel_ctx::unit()).on_fiber, true);
    loop {
        carry(run);
        // Returns when the run's next block starts on this fiber.
        Run::finish(run);
    }
}

/// Calls a block entry from the threads' call site (`fiber::call_at_site`).
#[inline(always)]
unsafe fn call_block_fn(
    f: BlockFn,
    ctx: *mut KernelCtx,
    args: *mut *mut c_void,
    first: u32,
    end: u32,
) {
    #[cfg(target_arch = "x86_64")]
    fiber::call_at_site(
        ctx as *mut c_void,
        args as *mut c_void,
        first,
        end,
        f as *const c_void,
    );
    #[cfg(not(target_arch = "x86_64"))]
    f(ctx, args, first, end);
}

/// Calls a per-thread kernel: from the threads' call site when its block has waited
/// (`at_site`: each carrier then runs one thread, which may end resumed by another fiber), else
/// directly (the call site's extra jumps cost a barrier-free kernel's loop ~2x).
#[inline(always)]
unsafe fn call_kernel(at_site: bool, k: KernelFn, args: *mut *mut c_void) {
    #[cfg(target_arch = "x86_64")]
    if at_site {
        fiber::call_at_site(
            args as *mut c_void,
            std::ptr::null_mut(),
            0,
            0,
            k as *const c_void,
        );
        return;
    }
    let _ = at_site;
    k(args);
}

/// Runs unstarted threads on the current carrier until none are left.
#[inline(always)]
unsafe fn carry(run: *mut Run) {
    while (*run).has_unstarted() {
        if !(*run).warp_ring.is_null() {
            // A lane's thread ended and this carrier goes on with new threads.
            (*run).leave_warp_ring();
        }
        let b = (*run).next_block;
        let first = (*run).next_thread;
        let n = (*run).threads;
        (*run).next_block += 1;
        (*run).next_thread = 0;
        let cur = (*run).cur as usize;
        (&mut (*run).slots)[cur].first = first;
        (&mut (*run).slots)[cur].end = n;
        (&mut (*run).slots)[cur].block = b;
        if (*run).blocks.len() > 1 {
            (*run).enter_block(b);
        }
        let ctx = (*run).ctx;
        let g = (*run).grid;
        if let (Some(rf), 0, 1) = (g.region_fn, first, (*run).blocks.len()) {
            // Region form: the rest of the run (the unit took at most 64 blocks), every thread
            // of every block, in one call that never waits.
            (*run).next_block = 1;
            (&mut (*run).slots)[cur].end = n;
            (&mut (*run).slots)[cur].idx = Dim3::default();
            (*ctx).thread_idx = Dim3::default();
            let left = (*run).run_end - (*run).at;
            (*run).in_range = true;
            (*run).region = true;
            rf(ctx, g.args, left.min(u32::MAX as u64) as u32);
            (*run).region = false;
            (*run).leave_range();
        } else if let Some(f) = g.block_fn {
            // Thread 0 alone first: if it waits, the kernel has sync points and the block's
            // threads run one per carrier; if not, the others run in one loop, and so do whole
            // blocks from then on (`loops`).
            let one_by_one = (&(*run).blocks)[b as usize].one_by_one;
            let end = if (first == 0 && !(*run).loops) || one_by_one {
                first + 1
            } else {
                n
            };
            if end < n {
                (*run).next_block = b;
                (*run).next_thread = end;
            }
            let idx = if g.block.y == 1 && g.block.z == 1 {
                Dim3::new(first, 0, 0)
            } else {
                g.block.unlinear(first as u64)
            };
            (&mut (*run).slots)[cur].end = end;
            // A carrier of one thread keeps its index (what the barrier's fast path assumes).
            (&mut (*run).slots)[cur].idx = idx;
            (*ctx).thread_idx = idx;
            let left = (*run).run_end - (*run).at;
            match g.blocks_fn {
                // Whole blocks, more than one left, a single-block run: the rest of the run (the
                // unit took at most 64 blocks) in one call, no runtime code between blocks.
                Some(fs) if end == n && first == 0 && left > 1 && (*run).blocks.len() == 1 => {
                    (*run).in_range = true;
                    fs(ctx, g.args, left.min(u32::MAX as u64) as u32);
                    // It ran every block (else a wait stopped it and left already): the last
                    // one is the run's block now.
                    (*run).leave_range();
                }
                // One thread (each of a block whose threads wait, or thread 0 alone): the
                // kernel's per-thread entry, which reads the indices from the context instead
                // of setting up the block entry's loop for one turn (a barrier kernel's
                // thread ~2-3 ns less).
                _ if end == first + 1 => call_kernel(true, g.kernel, g.args),
                _ => call_block_fn(f, ctx, g.args, first, end),
            }
            if first == 0 && end == 1 && !(&(*run).blocks)[b as usize].one_by_one {
                (*run).loops = true;
            }
        } else if g.block.y == 1 && g.block.z == 1 {
            (&mut (*run).slots)[cur].idx = Dim3::new(first, 0, 0);
            let at_site = (&(*run).blocks)[b as usize].one_by_one;
            let mut t = first;
            // The end is read again after each thread (a thread that waits lowers it, so the
            // block's `one_by_one` changes only during the carrier's last thread), through a
            // pointer that stays valid: `run_blocks` reserves a slot for every fiber the run
            // can make. Only x changes from thread to thread (and only this carrier runs until
            // a thread waits, which ends the loop).
            (*ctx).thread_idx = Dim3::new(t, 0, 0);
            let end = std::ptr::addr_of!((*run).slots.get_unchecked(cur).end);
            while t < *end {
                (*ctx).thread_idx.x = t;
                call_kernel(at_site, g.kernel, g.args);
                t += 1;
            }
        } else {
            let mut t = first;
            let mut idx = g.block.unlinear(first as u64);
            let at_site = (&(*run).blocks)[b as usize].one_by_one;
            (&mut (*run).slots)[cur].idx = idx;
            let end = std::ptr::addr_of!((*run).slots.get_unchecked(cur).end);
            while t < *end {
                (*ctx).thread_idx = idx;
                call_kernel(at_site, g.kernel, g.args);
                t += 1;
                idx.x += 1;
                if idx.x == g.block.x {
                    idx.x = 0;
                    idx.y += 1;
                    if idx.y == g.block.y {
                        idx.y = 0;
                        idx.z += 1;
                    }
                }
            }
        }
        // Every thread of the block ran on this carrier without a wait (none parked, none
        // ready, every sync point's wait marks the block `one_by_one`): the block is complete,
        // and the run's next block starts here, without `finish`'s look at the lists.
        if !(*run).has_unstarted()
            && (*run).blocks.len() == 1
            && !(*run).blocks.get_unchecked(0).one_by_one
            && !Run::next_block_of_run(run)
        {
            Run::end(run, BlockOutcome::Completed)
        }
    }
}

/// Called by the fault handler on a kernel fiber (`UnitTls::on_fiber`): ends the run with the
/// signal the handler noted; the driver abandons the run's fibers, as for `birenTrap`.
///
/// # Safety
/// Only on a compute unit, while `on_fiber` is set.
pub(crate) unsafe fn end_for_fault() -> ! {
    let u = kernel_ctx::unit();
    let run = (*u).run as *mut Run;
    let thread = (*(*run).ctx).thread_idx;
    let f = (*u).fault;
    let outcome = if f.signal == super::fault::watchdog_signal() {
        BlockOutcome::TimedOut { thread }
    } else {
        BlockOutcome::Faulted { thread, fault: f }
    };
    Run::end(run, outcome)
}

/// A helper function called from a BIREN_KERNEL body's loop without the loop: the context does
/// not know which thread calls. Fails the launch.
#[cold]
#[inline(never)]
unsafe fn helper_without_loop(run: *mut Run, first: u32) -> ! {
    (*(*run).ctx).thread_idx = (*run).grid.block.unlinear(first as u64);
    Run::end(
        run,
        BlockOutcome::Misuse {
            what: "a sync point or warp operation in a function called from a BIREN_KERNEL body whose thread 0 never waits: call it in the body, or give the function a `birenKernelLoop *biren_loop_` parameter and pass it",
            thread: (*(*run).ctx).thread_idx,
        },
    )
}

/// A sync point or warp operation reached from a region-form kernel: in a function biren-cc
/// could not see into (another file's). The threads of a region never wait, so it cannot be
/// honoured: the launch fails and says how to build the kernel instead.
#[cold]
#[inline(never)]
unsafe fn sync_point_in_region(run: *mut Run, lp: *mut KernelLoop) -> ! {
    let thread = if lp.is_null() {
        (*(*run).ctx).thread_idx
    } else {
        (*lp).tid
    };
    (*(*run).ctx).thread_idx = thread;
    (*run).region = false;
    Run::end(
        run,
        BlockOutcome::Misuse {
            what: "a sync point or warp operation in a function called from a kernel that biren-cc compiled in region form (it saw no barrier there): define the function in the kernel's file, or build that file with a plain compiler (fiber form)",
            thread,
        },
    )
}

/// Ends the calling region-form kernel's block: biren-cc's run-time check found a barrier that
/// not every thread of the block reaches. Outside a kernel: does nothing.
/// # Safety
/// Only from a kernel's code on a compute unit.
pub unsafe fn region_divergence(thread: Dim3, what: &'static str) {
    unsafe {
        let u = kernel_ctx::unit();
        let run = (*u).run as *mut Run;
        if run.is_null() {
            return;
        }
        if (*run).in_range {
            (*run).sync_range();
        }
        (*run).region = false;
        (*(*run).ctx).thread_idx = thread;
        Run::end(run, BlockOutcome::Misuse { what, thread });
    }
}

/// Runs blocks on one compute unit, keeping its fiber stacks and shared memory for reuse.
pub struct BlockRunner {
    run: Box<Run>,
    shared: Vec<u128>,
}

impl BlockRunner {
    pub fn new(stack_size: usize) -> BlockRunner {
        BlockRunner {
            run: Box::new(Run {
                grid: Grid {
                    kernel: noop_kernel,
                    block_fn: None,
                    blocks_fn: None,
                    region_fn: None,
                    args: std::ptr::null_mut(),
                    grid: Dim3::new(1, 1, 1),
                    block: Dim3::new(1, 1, 1),
                    shared_bytes: 0,
                    cooperative: false,
                    stack_size,
                    fixed_order: false,
                },
                ctx: std::ptr::null_mut(),
                threads: 0,
                blocks: Vec::new(),
                next_block: 0,
                next_thread: 0,
                cur: 0,
                slots: Vec::new(),
                stacks: Vec::new(),
                idle: Vec::new(),
                dead: Vec::new(),
                ready: Vec::new(),
                ready_head: 0,
                block_form: false,
                loops: false,
                in_range: false,
                region: false,
                grid_waiting: Vec::new(),
                outcome: None,
                driver_sp: std::ptr::null_mut(),
                stack_size,
                made: 0,
                at: 0,
                run_end: 1,
                stop: std::ptr::null(),
                ring: false,
                arrived: 0,
                ring_start: 0,
                ring_slots: std::ptr::null_mut(),
                ring_at: 0,
                turns: Vec::new(),
                orders: Vec::new(),
                order: usize::MAX,
                column: false,
                ring_t0: 0,
                turns_ptr: std::ptr::null_mut(),
                ring_prefetch: false,
                warp_ring: std::ptr::null_mut(),
                wring_arrived: 0,
                wring_rounds: 0,
                wring_lane: 0,
                wout: std::ptr::null(),
                copies: shared_tls::BlockCopies::default(),
            }),
            shared: Vec::new(),
        }
    }

    /// Runs block `linear` of `grid` to its end on the calling thread; for a cooperative grid,
    /// `linear` is 0 and the whole grid runs.
    pub fn run_block(&mut self, grid: &Grid, linear: u64) -> BlockOutcome {
        self.run_blocks(grid, linear, 1, None).0
    }

    /// Runs the `count` blocks from `linear` of `grid` one after another on the calling thread,
    /// until one fails or `stop` is set; returns the last block's outcome and linear index. The
    /// blocks follow each other on the fiber that completes one: a block costs no fiber set-up
    /// and no switch to and from the driver. For a cooperative grid `linear` is 0 and `count` 1.
    pub fn run_blocks(
        &mut self,
        grid: &Grid,
        linear: u64,
        count: u64,
        stop: Option<&AtomicBool>,
    ) -> (BlockOutcome, u64) {
        let unit = kernel_ctx::unit();
        let ctx = unit as *mut KernelCtx;
        let nblocks = if grid.cooperative {
            grid.grid.volume()
        } else {
            1
        };
        let words = grid.shared_bytes.div_ceil(16);
        if self.shared.len() < words * nblocks as usize {
            self.shared.resize(words * nblocks as usize, 0);
        }
        let run = &mut *self.run;
        if grid.stack_size != 0 && grid.stack_size != run.stack_size {
            // birenLimitStackSize changed: fibers of the new size from now on.
            run.stack_size = grid.stack_size;
            run.slots.clear();
            run.stacks.clear();
            run.idle.clear();
            run.dead.clear();
        }
        run.grid = *grid;
        run.grid.block_fn = grid.block_entry();
        run.grid.blocks_fn = grid.blocks_fn.filter(|_| run.grid.block_fn.is_some());
        run.grid.region_fn = grid
            .region_fn
            .filter(|_| run.grid.block_fn.is_some() && !grid.cooperative);
        run.block_form = run.grid.block_fn.is_some();
        run.loops = false;
        run.in_range = false;
        run.region = false;
        run.ctx = ctx;
        run.threads = grid.block.volume() as u32;
        // Blocks keep their lists' capacity from run to run: no allocation per block.
        run.blocks.truncate(nblocks as usize);
        while run.blocks.len() < nblocks as usize {
            run.blocks.push(BlockSync {
                idx: Dim3::default(),
                shared: std::ptr::null_mut(),
                barrier: Vec::new(),
                warps: Vec::new(),
                one_by_one: false,
            });
        }
        let threads = run.threads as usize;
        for (b, bs) in run.blocks.iter_mut().enumerate() {
            bs.idx = grid
                .grid
                .unlinear(if grid.cooperative { b as u64 } else { linear });
            bs.shared = if words == 0 {
                std::ptr::null_mut()
            } else {
                unsafe { self.shared.as_mut_ptr().add(words * b) as *mut c_void }
            };
            bs.barrier.clear();
            bs.barrier.reserve(threads);
            bs.one_by_one = false;
            for w in bs.warps.iter_mut().flatten() {
                w.arrived = 0;
            }
        }
        run.copies.start(nblocks as u32);
        run.ready.reserve(threads);
        run.turns.reserve(threads);
        run.ring_t0 = 0;
        run.order = if grid.fixed_order || (grid.block.y == 1 && grid.block.z == 1) {
            usize::MAX
        } else {
            let key = grid.kernel as usize;
            match run
                .orders
                .iter()
                .position(|o| o.kernel == key && o.block == grid.block)
            {
                Some(i) => i,
                None if run.orders.len() < TURN_ORDERS => {
                    run.orders.push(TurnOrder::new(key, grid.block));
                    run.orders.len() - 1
                }
                None => {
                    run.orders.rotate_left(1);
                    run.orders[TURN_ORDERS - 1] = TurnOrder::new(key, grid.block);
                    TURN_ORDERS - 1
                }
            }
        };
        // A slot for every fiber the run can make (one per thread that waits, and the carrier
        // that goes on): `slots` does not move while the run lasts, so a carrier can hold a
        // pointer into its own slot (`carry`).
        run.slots.reserve(threads * nblocks as usize + 2);
        run.next_block = 0;
        run.next_thread = 0;
        run.outcome = None;
        run.at = linear;
        run.run_end = if grid.cooperative {
            linear + 1
        } else {
            linear + count.max(1)
        };
        run.stop = stop.map_or(std::ptr::null(), |s| s as *const AtomicBool);
        run.ring = false;
        run.arrived = 0;
        run.warp_ring = std::ptr::null_mut();
        unsafe {
            *ctx = KernelCtx {
                thread_idx: Dim3::default(),
                block_idx: run.blocks[0].idx,
                block_dim: grid.block,
                grid_dim: grid.grid,
                shared: run.blocks[0].shared,
            };
            (*unit).run = run as *mut Run as *mut c_void;
            let first = run.new_carrier();
            run.cur = first;
            let target = run.slots[first as usize].sp;
            let save = std::ptr::addr_of_mut!(run.driver_sp);
            fiber::switch(save, target);
            (*unit).run = std::ptr::null_mut();
        }
        let outcome = run
            .outcome
            .take()
            .expect("biren: a run ended without an outcome");
        // Idle carriers stay for the next run; fibers still parked (a failed block) and the one
        // that ended the run are abandoned: their stacks are set up afresh when needed.
        if outcome == BlockOutcome::Completed {
            // Every other fiber finished: only the one that ended the run is abandoned.
            run.dead.push(run.cur);
        } else {
            run.dead.clear();
            for (i, s) in run.slots.iter().enumerate() {
                if !s.idle {
                    run.dead.push(i as u32);
                }
            }
        }
        run.ready.clear();
        run.ready_head = 0;
        run.grid_waiting.clear();
        run.stop = std::ptr::null();
        (outcome, run.at)
    }
}

unsafe extern "C" fn noop_kernel(_: *mut *mut c_void) {}

#[cfg(test)]
mod tests;
