//! A run's bookkeeping: its carriers (the fibers that run a block's threads), the ring's ready
//! list, the switches between carriers, and a block's end.

use super::*;

/// The depth of a waiting fiber's frames (from its saved stack pointer to its stack's top) above
/// which ring mode's barrier prefetches: deep frames hold values the kernel spilled around the
/// barrier call and reloads when it resumes (a tiled matrix multiply's 32 tile pointers, 688
/// bytes), which are out of the first-level cache by the time the fiber's turn comes round among
/// 256; shallow ones (a reduction's, 320-440 bytes) reload little, and the prefetch only costs
/// (matrix multiply 2.29 -> 2.72 GFLOP/s with it; reduction 65 -> 71x the C loop). Whatever the
/// depth, the line at the saved stack pointer (the registers the switch restores first) is
/// fetched: the reduction's ring barrier 8.30-8.71 -> 7.97-8.50 ns per thread.
pub(super) const RING_PREFETCH_DEPTH: usize = 512;

impl Run {
    /// A carrier fiber for the threads not yet started: an idle one (it resumes in
    /// `Run::finish` and goes on carrying), else a fresh one.
    #[inline]
    pub(super) fn new_carrier(&mut self) -> u32 {
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
    pub(super) unsafe fn idle_carrier(&mut self) -> u32 {
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
    pub(super) unsafe fn resume(run: *mut Run, u: *mut kernel_ctx::UnitTls, to: u32) {
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
    pub(super) unsafe fn hand_to(
        run: *mut Run,
        u: *mut kernel_ctx::UnitTls,
        to: u32,
    ) -> fiber::Handoff {
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
    pub(super) fn fresh_carrier(&mut self) -> u32 {
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

    pub(super) fn has_unstarted(&self) -> bool {
        (self.next_block as usize) < self.blocks.len()
    }

    /// The next fiber to run: a new carrier for unstarted threads, else a ready one.
    pub(super) fn next_runnable(&mut self) -> Option<u32> {
        if self.has_unstarted() {
            return Some(self.new_carrier());
        }
        self.pop_ready()
    }

    /// The next ready fiber; also fetches the frames of the one after it (they are cold by the
    /// time its turn comes: see `fiber::prefetch`).
    #[inline]
    pub(super) fn pop_ready(&mut self) -> Option<u32> {
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
    pub(super) unsafe fn take_ready(&mut self, h: usize) -> u32 {
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
    pub(super) fn release(&mut self, waiting: &mut Vec<u32>) {
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
    pub(super) fn leave_ring(&mut self) {
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
    pub(super) fn enter_block(&mut self, b: u32) {
        self.copies.enter(b);
        let bs = &self.blocks[b as usize];
        unsafe {
            (*self.ctx).block_idx = bs.idx;
            (*self.ctx).shared = bs.shared;
        }
    }

    pub(super) fn waiting_anywhere(&self) -> bool {
        !self.grid_waiting.is_empty()
            || self
                .blocks
                .iter()
                .any(|b| !b.barrier.is_empty() || b.warps.iter().flatten().any(|w| w.arrived != 0))
    }

    /// Why nothing can run while threads still wait.
    pub(super) fn stuck(&self) -> BlockOutcome {
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
    pub(super) unsafe fn switch_to(run: *mut Run, to: u32) {
        let (save, sp) = Run::leave_for(run, to);
        fiber::switch(save, sp)
    }

    /// `switch_to` at a thread's end (`finish`): through the threads' call site
    /// (`fiber::switch_from_site`), so that the resumed thread's return is predicted.
    #[inline(always)]
    pub(super) unsafe fn switch_to_from_end(run: *mut Run, to: u32) {
        let (save, sp) = Run::leave_for(run, to);
        fiber::switch_from_site(save, sp)
    }

    /// `switch_to`'s bookkeeping: `to` is the running fiber, the context shows its thread (and
    /// block). Returns where to save the current stack pointer and the one to resume.
    #[inline(always)]
    pub(super) unsafe fn leave_for(run: *mut Run, to: u32) -> (*mut *mut c_void, *mut c_void) {
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
    pub(super) unsafe fn end(run: *mut Run, outcome: BlockOutcome) -> ! {
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
    pub(super) unsafe fn park(run: *mut Run, idx: Dim3) {
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
    pub(super) unsafe fn park_stuck(run: *mut Run) {
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
    pub(super) fn sync_range(&mut self) {
        // SAFETY: the run's context is the unit's, valid while the run is.
        let idx = unsafe { (*self.ctx).block_idx };
        self.at = self.grid.grid.unlinear_index(idx);
        self.blocks[0].idx = idx;
    }

    /// The range entry no longer runs the run's blocks (it returned, or a thread waits in the
    /// block it is in, which then goes on as blocks without one do): that block is the run's.
    pub(super) fn leave_range(&mut self) {
        if self.in_range {
            self.in_range = false;
            self.sync_range();
        }
    }

    /// The block completed: if the run has a next block, sets it up to run on the current
    /// fiber (the block's other fibers have all finished and are idle) and returns true.
    pub(super) unsafe fn next_block_of_run(run: *mut Run) -> bool {
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
    pub(super) unsafe fn finish(run: *mut Run) {
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
