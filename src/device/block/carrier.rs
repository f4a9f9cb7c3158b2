//! A carrier's loop: the fiber that calls the kernel for one thread after another (or for a
//! whole range, region form), and the calls into the kernel's entries.

use super::*;

/// Calls a block entry from the threads' call site (`fiber::call_at_site`).
#[inline(always)]
pub(super) unsafe fn call_block_fn(
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
pub(super) unsafe fn call_kernel(at_site: bool, k: KernelFn, args: *mut *mut c_void) {
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
pub(super) unsafe fn carry(run: *mut Run) {
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
    let outcome = if f.signal == crate::device::fault::watchdog_signal() {
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
pub(super) unsafe fn helper_without_loop(run: *mut Run, first: u32) -> ! {
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
pub(super) unsafe fn sync_point_in_region(run: *mut Run, lp: *mut KernelLoop) -> ! {
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
