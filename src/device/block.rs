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

mod carrier;
mod run;
mod shared_tls;
mod sync;
mod turns;
pub(crate) mod warp;

pub use carrier::*;
use run::RING_PREFETCH_DEPTH;
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
    /// A thread's device-side `assert` failed (CUDA programs through biren-cc).
    AssertFailed {
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
