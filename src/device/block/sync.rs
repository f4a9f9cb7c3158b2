//! Barriers and the other calls a kernel's thread makes into its block: `__syncthreads` (the
//! ring's fast path with its assembly entry, and the slow path), grid sync, region scratch, and
//! the ends of a block by misuse, trap or illegal access.

use super::*;

thread_local! {
    /// Each compute unit's scratch for region-form kernels (per-thread values that live across
    /// a barrier), kept from block to block and launch to launch.
    static REGION_SCRATCH: std::cell::UnsafeCell<Vec<u128>> = const { std::cell::UnsafeCell::new(Vec::new()) };
}

/// At least `bytes` bytes of the calling unit's region scratch, 64-byte aligned, valid until
/// the unit's next call (one per range of blocks).
pub fn region_scratch(bytes: usize) -> *mut c_void {
    REGION_SCRATCH.with(|s| {
        // SAFETY: the unit's own thread-local, borrowed only here.
        let v = unsafe { &mut *s.get() };
        let words = bytes.div_ceil(16) + 4;
        if v.len() < words {
            v.resize(words, 0);
        }
        let p = v.as_mut_ptr() as usize;
        ((p + 63) & !63) as *mut c_void
    })
}

/// The calling kernel thread: its run and index (`None` outside a kernel).
/// `lp` is the loop of a `BIREN_KERNEL` block entry, or null.
#[inline(always)]
pub(super) unsafe fn me(lp: *mut KernelLoop) -> Option<(*mut Run, Dim3)> {
    let u = kernel_ctx::unit();
    let run = (*u).run as *mut Run;
    if run.is_null() {
        return None;
    }
    if (*run).ring {
        // Every sync point but the barrier's fast path works on the lists.
        (*run).leave_ring();
    }
    if !(*run).warp_ring.is_null() {
        (*run).leave_warp_ring();
    }
    if (*run).in_range {
        (*run).sync_range();
    }
    if (*run).region {
        sync_point_in_region(run, lp);
    }
    let idx = if lp.is_null() {
        let s = (*run).slots.get_unchecked((*run).cur as usize);
        if (*run).block_form && s.end - s.first > 1 {
            helper_without_loop(run, s.first);
        }
        (*u).ctx.thread_idx
    } else {
        (*lp).tid
    };
    Some((run, idx))
}

/// The calling thread's index: its loop's in a `BIREN_KERNEL` body (`lp` not null), else the
/// context's.
/// # Safety
/// `u` is the unit's TLS; `lp` null or the calling thread's loop.
#[inline(always)]
pub(super) unsafe fn caller_idx(u: *const kernel_ctx::UnitTls, lp: *const KernelLoop) -> Dim3 {
    unsafe {
        if lp.is_null() {
            (*u).ctx.thread_idx
        } else {
            (*lp).tid
        }
    }
}

#[inline]
pub(super) fn linear(idx: Dim3, block: Dim3) -> u32 {
    idx.x + block.x * (idx.y + block.y * idx.z)
}

/// The calling thread will wait: its carrier stops after it; the threads after it become
/// unstarted (they go to a new carrier).
#[inline]
pub(super) unsafe fn truncate(run: *mut Run, lp: *mut KernelLoop, t: u32) {
    // The range entry returns after this block.
    (*run).leave_range();
    let cur = (*run).cur as usize;
    let slot = &mut (*(*run).slots.get_unchecked_mut(cur));
    (*run)
        .blocks
        .get_unchecked_mut(slot.block as usize)
        .one_by_one = true;
    if !lp.is_null() {
        if (*lp).end > t + 1 {
            (*run).next_block = slot.block;
            (*run).next_thread = t + 1;
            (*lp).end = t + 1;
            (*lp).xe = (*lp).tid.x + 1;
            slot.first = t;
            slot.end = t + 1;
        }
    } else if slot.end > t + 1 {
        (*run).next_block = slot.block;
        (*run).next_thread = t + 1;
        slot.first = t;
        slot.end = t + 1;
    }
}

/// `birenSyncThreads`: the block barrier. Outside a kernel: does nothing.
/// # Safety
/// `lp` is null or the calling thread's loop (what the header passes).
#[inline(always)]
pub unsafe fn sync_threads(lp: *mut KernelLoop) {
    unsafe {
        if !sync_threads_fast::<true>(lp) {
            sync_threads_slow(lp)
        }
    }
}

/// The usual cases of `birenSyncThreads`, short and inline: the last thread to arrive releases
/// the others and goes on; any other thread, when it is alone on its fiber and the next fiber to
/// run is a ready one or an idle carrier (for threads not yet started), records itself as
/// waiting and switches straight to it. With `PER_THREAD` (a per-thread kernel: `lp` null), also
/// the first wait of a carrier running several threads. `Handoff::SLOW`, having changed
/// nothing, for everything else (a cooperative grid, a fresh fiber to set up, a block that
/// cannot go on, the context without the fast TLS offset): `sync_threads_slow` does those.
///
/// It calls nothing and does not switch: the caller carries a switch out
/// (`barrier_entry!`, or `sync_threads_fast`). The `BIREN_KERNEL` form's copy
/// (`PER_THREAD` false) leaves the carrier's first wait out.
/// # Safety
/// As `sync_threads`.
#[inline(always)]
pub unsafe fn barrier_step<const PER_THREAD: bool>(lp: *mut KernelLoop) -> fiber::Handoff {
    use fiber::Handoff;
    let _ = lp;
    unsafe {
        let Some(u) = kernel_ctx::unit_fast() else {
            return Handoff::SLOW;
        };
        let run = (*u).run as *mut Run;
        if run.is_null() {
            return Handoff::DONE;
        }
        if (*run).ring {
            let a = (*run).arrived + 1;
            if a == (*run).threads {
                // The last of the round goes on, and arrives first next time.
                (*run).arrived = 0;
                (*run).ring_start = (*run).ring_at;
                return Handoff::DONE;
            }
            (*run).arrived = a;
            // The next turn (the one after the last is the first).
            let n = (*run).threads;
            let at = (*run).ring_at;
            let next = if at + 1 == n { 0 } else { at + 1 };
            (*run).ring_at = next;
            let turns = (*run).turns_ptr;
            let t = turns.add(next as usize);
            (*run).cur = (*t).slot;
            let a = turns.add(if next + 1 == n { 0 } else { next + 1 } as usize);
            if (*run).ring_prefetch {
                fiber::prefetch((*a).sp, (*a).top);
            } else {
                fiber::prefetch_lines((*a).sp as usize, (*a).sp as usize + 1);
            }
            (*u).ctx.thread_idx = (*t).idx;
            return Handoff::switch(
                std::ptr::addr_of_mut!((*turns.add(at as usize)).sp),
                (*t).sp,
            );
        }
        barrier_step_off_ring::<PER_THREAD>(u, run, lp)
    }
}

/// `barrier_step` outside ring mode: a function of its own, so that the ring's path saves no
/// registers.
#[inline(never)]
pub(super) unsafe fn barrier_step_off_ring<const PER_THREAD: bool>(
    u: *mut kernel_ctx::UnitTls,
    run: *mut Run,
    lp: *mut KernelLoop,
) -> fiber::Handoff {
    use fiber::Handoff;
    unsafe {
        if !(*run).warp_ring.is_null() {
            (*run).leave_warp_ring();
        }
        let cur = (*run).cur;
        let slots = (*run).slots.as_mut_ptr();
        let slot = slots.add(cur as usize);
        // A carrier of several threads (the per-thread form) stops after the thread that waits
        // first; in the block form that is the loop's business (the slow path).
        if (*run).blocks.len() != 1 {
            return Handoff::SLOW;
        }
        if (*slot).end - (*slot).first > 1 {
            if PER_THREAD && lp.is_null() && !(*run).block_form {
                return first_wait_of_carrier(u, run);
            }
            return Handoff::SLOW;
        }
        let bs = (*run).blocks.as_mut_ptr();
        let n = (*bs).barrier.len();
        let h = (*run).ready_head;
        if n as u32 + 1 == (*run).threads {
            if h != (*run).ready.len() {
                return Handoff::SLOW;
            }
            if (*run).next_block != 0 && n != 0 {
                // Every thread has started and waited alone on its fiber (a carrier of several
                // threads stops at its first wait): the ring forms (`ring_order`).
                let w = std::slice::from_raw_parts((*bs).barrier.as_ptr(), n);
                // In the order the unit uses for this kernel (`TurnOrder`), timed from here to
                // the block's end (`finish`) while the unit is still choosing.
                let (column, time) = match (*run).orders.get((*run).order) {
                    Some(o) => o.next(),
                    None => (false, false),
                };
                (*run).column = column;
                if time && (*run).ring_t0 == 0 {
                    (*run).ring_t0 = now_ns();
                }
                let at = ring_order(&mut (*run).turns, slots, w, cur, (*u).ctx.block_dim, column);
                (*run).turns_ptr = (*run).turns.as_mut_ptr();
                let s0 = &*slots.add(w[0] as usize);
                (*run).ring_prefetch = s0.top - s0.sp as usize > RING_PREFETCH_DEPTH;
                (*bs).barrier.set_len(0);
                (*run).ready.set_len(0);
                (*run).ready_head = 0;
                (*run).ring = true;
                (*run).arrived = 0;
                (*run).ring_at = at;
                (*run).ring_start = at;
                return Handoff::DONE;
            }
            // The last to arrive goes on; the others follow in order (the waiting list becomes
            // the ready list, nothing else being ready).
            (*run).ready.set_len(0);
            (*run).ready_head = 0;
            std::mem::swap(&mut (*run).ready, &mut (*bs).barrier);
            return Handoff::DONE;
        }
        // With one block, next_block is 0 while its threads are still being started.
        let starting = (*run).next_block == 0;
        // Somewhere to go, decided before anything is written.
        if (starting && (*run).idle.is_empty()) || (!starting && h >= (*run).ready.len()) {
            return Handoff::SLOW;
        }
        // The next thread starts on an idle carrier, or a ready fiber goes on.
        let to = if starting {
            (*run).idle_carrier()
        } else {
            (*run).take_ready(h)
        };
        // Capacity for every thread of the block is reserved when the run starts.
        let w = &mut (*bs).barrier;
        debug_assert!(n < w.capacity());
        w.as_mut_ptr().add(n).write(cur);
        w.set_len(n + 1);
        // The slot's index is its one thread's (set when the carrier started it, or when it
        // first waited): nothing to record.
        (*bs).one_by_one = true;
        Run::hand_to(run, u, to)
    }
}

/// Offsets the barrier entries' assembly reads (`barrier_entry!`).
#[cfg(target_arch = "x86_64")]
pub(crate) mod layout {
    use super::turns::Turn;
    use super::{Run, Slot};
    use crate::device::kernel_ctx::{KernelCtx, UnitTls};
    use std::mem::{offset_of, size_of};
    pub(crate) const U_RUN: usize = offset_of!(UnitTls, run);
    pub(crate) const U_TIDX: usize = offset_of!(UnitTls, ctx) + offset_of!(KernelCtx, thread_idx);
    pub(crate) const R_RING: usize = offset_of!(Run, ring);
    pub(crate) const R_ARRIVED: usize = offset_of!(Run, arrived);
    pub(crate) const R_THREADS: usize = offset_of!(Run, threads);
    pub(crate) const R_CUR: usize = offset_of!(Run, cur);
    pub(crate) const R_RING_START: usize = offset_of!(Run, ring_start);
    pub(crate) const R_SLOTS: usize = offset_of!(Run, ring_slots);
    pub(crate) const R_PREFETCH: usize = offset_of!(Run, ring_prefetch);
    pub(crate) const S_SP: usize = offset_of!(Slot, sp);
    pub(crate) const S_IDX: usize = offset_of!(Slot, idx);
    pub(crate) const R_TURNS: usize = offset_of!(Run, turns_ptr);
    pub(crate) const R_AT: usize = offset_of!(Run, ring_at);
    pub(crate) const T_SP: usize = offset_of!(Turn, sp);
    pub(crate) const T_IDX: usize = offset_of!(Turn, idx);
    pub(crate) const T_SLOT: usize = offset_of!(Turn, slot);
    pub(crate) const S_SIZE: usize = size_of::<Slot>();
    const _: () = assert!(size_of::<super::Dim3>() == 12 && size_of::<bool>() == 1);
    // `warp_entry!`'s.
    pub(crate) const R_WRING: usize = offset_of!(Run, warp_ring);
    pub(crate) const R_WLANE: usize = offset_of!(Run, wring_lane);
    pub(crate) const R_WARRIVED: usize = offset_of!(Run, wring_arrived);
    pub(crate) const R_WOUT: usize = offset_of!(Run, wout);
    pub(crate) const W_VALS: usize = offset_of!(Warp, vals);
    pub(crate) const W_REQ: usize = offset_of!(Warp, req);
    pub(crate) const W_OUT: usize = offset_of!(Warp, out);
    pub(crate) const W_PARKED: usize = offset_of!(Warp, parked);
    use super::warp::{LaneReq, Warp, WarpOp};
    const _: () = assert!(
        offset_of!(LaneReq, op) == 0
            && offset_of!(LaneReq, param) == 4
            && offset_of!(LaneReq, width) == 8
            && offset_of!(LaneReq, mask) == 12
            && size_of::<LaneReq>() == 16
            && size_of::<WarpOp>() == 1
            && size_of::<u32>() == 4
    );
}

/// The naked entries' fiber switch (`barrier_entry!`, `warp_entry!`), as `fiber::switch_keeping`
/// lays a context out: saves r12-r15, the resume address (label 3), rbp and rbx on this stack and
/// the stack pointer in `[rax]`, then resumes the context whose stack pointer is in `rdx`. When
/// this context is resumed, it goes on after label 3 with r12-r15 restored (rcx clobbered).
#[cfg(target_arch = "x86_64")]
macro_rules! switch_asm {
    () => {
        concat!(
            "push r12\n",
            "push r13\n",
            "push r14\n",
            "push r15\n",
            "lea rcx, [rip + 3f]\n",
            "push rcx\n",
            "push rbp\n",
            "push rbx\n",
            "mov [rax], rsp\n",
            "mov rsp, rdx\n",
            "pop rbx\n",
            "pop rbp\n",
            "pop rcx\n",
            "jmp rcx\n",
            "3:\n",
            "pop r15\n",
            "pop r14\n",
            "pop r13\n",
            "pop r12\n",
        )
    };
}
#[cfg(target_arch = "x86_64")]
pub(crate) use switch_asm;

/// The naked entries' return after a switch: with `ret` when this context's return address is
/// the one the switching context left in r8 (the return stack predicts it), else with a jump.
#[cfg(target_arch = "x86_64")]
macro_rules! return_asm {
    () => {
        concat!(
            "cmp r8, [rsp]\n",
            "jne 4f\n",
            "ret\n",
            "4:\n",
            "pop rcx\n",
            "jmp rcx\n",
        )
    };
}
#[cfg(target_arch = "x86_64")]
pub(crate) use return_asm;

/// Defines `extern "C" fn $name($arg: *mut KernelLoop)`, a barrier's C entry: it calls
/// `$step($arg) -> Handoff` (an `extern "C" fn` that must not unwind: `barrier_step`) and
/// returns at once (`DONE`), tail-calls `$slow($arg)` (`SLOW`), or switches fibers with
/// `fiber::switch_keeping`'s protocol.
///
/// On x86_64 the function is naked, for two reasons.
/// 1. A fiber it resumes can go back to its kernel with an indirect `jmp`, as libco does,
///    instead of a `ret`. The return stack predicts a `ret` to the call site of the fiber that
///    switched; in a kernel with two barrier sites (a tiled matrix multiply: load, barrier,
///    compute, barrier) a fiber arriving at one site resumes a fiber waiting at the other, so
///    every `ret` mispredicted (17 ns per thread-barrier instead of 7). The indirect jump is
///    predicted from the path that led to it, which tells the sites apart. But it leaves the
///    return stack one entry off, and a later `ret` (a per-thread kernel's return) mispredicts:
///    so the resumed fiber returns with `ret` when its return address is the switching fiber's
///    (r8 carries that across the switch; a context resumed from elsewhere finds some other
///    value there and jumps), and jumps only when it is not.
/// 2. Ring mode's barrier (the usual one once a block's first round is over) is done here
///    without a call: the same steps as `barrier_step`'s ring branch, which it mirrors (change
///    both together; the C tests run this one, the Rust tests that one).
///
/// Elsewhere it is plain Rust with `Handoff::perform`.
macro_rules! barrier_entry {
    ($(#[$m:meta])* fn $name:ident($arg:ident: $ty:ty), step = $step:path, slow = $slow:path) => {
        $(#[$m])*
        #[cfg(target_arch = "x86_64")]
        #[unsafe(naked)]
        extern "C" fn $name($arg: $ty) {
            // The entry's stack when it switches, from the saved pointer up: rbx, rbp, resume
            // address (label 3, as `fiber::switch` lays it out), r15-r12, the return address.
            core::arch::naked_asm!(
                // Ring mode? (rax: the unit's TLS offset, rcx: the run)
                "mov rax, qword ptr [rip + {fast_off}]",
                "test rax, rax",
                "jz 7f",
                "mov rcx, qword ptr fs:[rax + {u_run}]",
                "test rcx, rcx",
                "jz 7f",
                "cmp byte ptr [rcx + {r_ring}], 0",
                "je 7f",
                "mov edx, dword ptr [rcx + {r_arrived}]",
                "inc edx",
                "cmp edx, dword ptr [rcx + {r_threads}]",
                "je 6f",
                "mov dword ptr [rcx + {r_arrived}], edx",
                // rdx: the running turn, r10: the next (the one after the last is the first;
                // its slot becomes `cur`), r9: the turns, r8: their end.
                "mov r9, qword ptr [rcx + {r_turns}]",
                "mov r8d, dword ptr [rcx + {r_threads}]",
                "mov edx, dword ptr [rcx + {r_at}]",
                "lea r10d, [rdx + 1]",
                "xor r11d, r11d",
                "cmp r10d, r8d",
                "cmove r10d, r11d",
                "mov dword ptr [rcx + {r_at}], r10d",
                "shl r8, 5",
                "add r8, r9",
                "shl rdx, 5",
                "add rdx, r9",
                "shl r10, 5",
                "add r10, r9",
                "mov r11d, dword ptr [r10 + {t_slot}]",
                "mov dword ptr [rcx + {r_cur}], r11d",
                // Fetch the saved registers of the fiber after it, and its frames if deep
                // (fiber::prefetch's 256 bytes).
                "lea r11, [r10 + 32]",
                "cmp r11, r8",
                "cmove r11, r9",
                "mov r11, qword ptr [r11 + {t_sp}]",
                "prefetcht0 [r11]",
                "cmp byte ptr [rcx + {r_prefetch}], 0",
                "je 5f",
                "and r11, -64",
                "prefetcht0 [r11 + 64]",
                "prefetcht0 [r11 + 128]",
                "prefetcht0 [r11 + 192]",
                "5:",
                // The context shows the next thread's index.
                "mov r11, qword ptr [r10 + {t_idx}]",
                "mov qword ptr fs:[rax + {u_tidx}], r11",
                "mov r11d, dword ptr [r10 + {t_idx} + 8]",
                "mov dword ptr fs:[rax + {u_tidx} + 8], r11d",
                "lea rax, [rdx + {t_sp}]",
                "mov rdx, qword ptr [r10 + {t_sp}]",
                "jmp 8f",
                // The last of the round goes on, and arrives first next time.
                "6:",
                "mov dword ptr [rcx + {r_arrived}], 0",
                "mov edx, dword ptr [rcx + {r_at}]",
                "mov dword ptr [rcx + {r_ring_start}], edx",
                "ret",
                // Anything else: the step decides.
                "7:",
                "push rdi",
                "call {step}",
                "pop rdi",
                "cmp rax, 1",
                "jb 2f",
                "je {slow}",
                // Switch: save in [rax], resume rdx.
                "8:",
                "mov r8, [rsp]",
                $crate::device::block::switch_asm!(),
                $crate::device::block::return_asm!(),
                "2:",
                "ret",
                fast_off = sym $crate::device::kernel_ctx::FAST_OFFSET_PUBLISHED,
                u_run = const $crate::device::block::layout::U_RUN,
                u_tidx = const $crate::device::block::layout::U_TIDX,
                r_ring = const $crate::device::block::layout::R_RING,
                r_arrived = const $crate::device::block::layout::R_ARRIVED,
                r_threads = const $crate::device::block::layout::R_THREADS,
                r_cur = const $crate::device::block::layout::R_CUR,
                r_ring_start = const $crate::device::block::layout::R_RING_START,
                r_turns = const $crate::device::block::layout::R_TURNS,
                r_at = const $crate::device::block::layout::R_AT,
                r_prefetch = const $crate::device::block::layout::R_PREFETCH,
                t_sp = const $crate::device::block::layout::T_SP,
                t_idx = const $crate::device::block::layout::T_IDX,
                t_slot = const $crate::device::block::layout::T_SLOT,
                step = sym $step,
                slow = sym $slow,
            )
        }

        $(#[$m])*
        #[cfg(not(target_arch = "x86_64"))]
        extern "C" fn $name($arg: $ty) {
            if !unsafe { $step($arg).perform() } {
                $slow($arg)
            }
        }
    };
}
pub(crate) use barrier_entry;

/// `barrier_step` carried out here: false, having changed nothing, when the slow path must run.
/// # Safety
/// As `sync_threads`.
#[inline(always)]
pub unsafe fn sync_threads_fast<const PER_THREAD: bool>(lp: *mut KernelLoop) -> bool {
    unsafe { barrier_step::<PER_THREAD>(lp).perform() }
}

/// The first wait of a per-thread kernel's carrier (it runs threads `first..end` one after
/// another): the carrier stops after this thread, the next thread starts on an idle carrier.
/// Part of the barrier's step, so that the fibers it parks resume through the barrier's own
/// entry (with a switch of its own they resumed at another site, and each first resumption
/// mispredicted: the per-thread reduction took 99x the C loop instead of 83x). `SLOW`, having
/// changed nothing, when the slow path must run.
#[inline(always)]
pub(super) unsafe fn first_wait_of_carrier(
    u: *mut kernel_ctx::UnitTls,
    run: *mut Run,
) -> fiber::Handoff {
    unsafe {
        let cur = (*run).cur;
        let slot = (*run).slots.as_mut_ptr().add(cur as usize);
        let bs = (*run).blocks.as_mut_ptr();
        let n = (*bs).barrier.len();
        if n as u32 + 1 == (*run).threads || (*run).idle.is_empty() {
            return fiber::Handoff::SLOW;
        }
        let idx = (*u).ctx.thread_idx;
        let t = linear(idx, (*run).grid.block);
        if (*slot).end <= t + 1 {
            return fiber::Handoff::SLOW;
        }
        (*run).next_block = (*slot).block;
        (*run).next_thread = t + 1;
        (*slot).first = t;
        (*slot).end = t + 1;
        (*slot).idx = idx;
        let w = &mut (*bs).barrier;
        debug_assert!(n < w.capacity());
        w.as_mut_ptr().add(n).write(cur);
        w.set_len(n + 1);
        (*bs).one_by_one = true;
        let to = (*run).idle_carrier();
        Run::hand_to(run, u, to)
    }
}

/// `sync_threads` when `sync_threads_fast` declined.
/// # Safety
/// As `sync_threads`.
#[inline(never)]
pub unsafe fn sync_threads_slow(lp: *mut KernelLoop) {
    unsafe {
        let Some((run, idx)) = me(lp) else { return };
        let cur = (*run).cur;
        let slot = (*run).slots.as_mut_ptr().add(cur as usize);
        let bs = (*run).blocks.as_mut_ptr().add((*slot).block as usize);
        let waiting = &mut (*bs).barrier;
        if waiting.len() as u32 + 1 == (*run).threads {
            // The last to arrive goes on; the others follow in order.
            (*run).release(waiting);
            return;
        }
        if (*slot).end - (*slot).first > 1 {
            // The first wait of this carrier: it stops after this thread.
            truncate(run, lp, linear(idx, (*run).grid.block));
        }
        (*bs).one_by_one = true;
        // Capacity for every thread of the block is reserved when the run starts.
        let w = &mut (*bs).barrier;
        debug_assert!(w.len() < w.capacity());
        w.as_mut_ptr().add(w.len()).write(cur);
        w.set_len(w.len() + 1);
        Run::park(run, idx)
    }
}

/// `birenGridSync`: every thread of a cooperative grid arrives before any passes. Outside a
/// cooperative launch the launch fails. Outside a kernel: does nothing.
/// # Safety
/// `lp` is null or the calling thread's loop (what the header passes).
pub unsafe fn grid_sync(lp: *mut KernelLoop) {
    unsafe {
        let Some((run, idx)) = me(lp) else { return };
        if !(*run).grid.cooperative {
            (*(*run).ctx).thread_idx = idx;
            Run::end(
                run,
                BlockOutcome::Misuse {
                    what: "birenGridSync called in a launch that is not cooperative (use birenLaunchCooperativeKernel)",
                    thread: idx,
                },
            );
        }
        let total = (*run).threads * (*run).blocks.len() as u32;
        if (*run).grid_waiting.len() as u32 + 1 == total {
            let mut w = std::mem::take(&mut (*run).grid_waiting);
            (*run).release(&mut w);
            (*run).grid_waiting = w;
            return;
        }
        let t = linear(idx, (*run).grid.block);
        truncate(run, lp, t);
        let cur = (*run).cur;
        (*run).grid_waiting.push(cur);
        Run::park(run, idx)
    }
}

/// Fails the calling thread's launch for a misuse of a kernel built-in (e.g. an unknown warp
/// operation). Outside a kernel: does nothing.
/// # Safety
/// `lp` is null or the calling thread's loop (what the header passes).
pub unsafe fn misuse(lp: *mut KernelLoop, what: &'static str) {
    unsafe {
        let Some((run, idx)) = me(lp) else { return };
        (*(*run).ctx).thread_idx = idx;
        Run::end(run, BlockOutcome::Misuse { what, thread: idx });
    }
}

/// Aborts the calling kernel thread's block; the launch fails. Outside a kernel: does nothing.
/// # Safety
/// `lp` is null or the calling thread's loop (what the header passes).
pub unsafe fn trap(lp: *mut KernelLoop) {
    unsafe {
        let run = (*kernel_ctx::unit()).run as *mut Run;
        if !run.is_null() {
            // A trap is no sync point: region-form kernels trap as any other.
            (*run).region = false;
        }
        let Some((run, idx)) = me(lp) else { return };
        (*(*run).ctx).thread_idx = idx;
        Run::end(run, BlockOutcome::Trapped { thread: idx });
    }
}

/// Aborts the calling kernel thread's block for an illegal access (`what`); the launch fails
/// with an illegal address. Outside a kernel: does nothing. Unlike `trap` it may be called from
/// a BIREN_KERNEL body without its loop (`lp` null): the block then names its first thread.
/// # Safety
/// `lp` is null or the calling thread's loop.
pub unsafe fn illegal_access(lp: *mut KernelLoop, what: &'static str) {
    unsafe { end_thread(lp, |thread| BlockOutcome::IllegalAccess { thread, what }) }
}

/// Ends the calling kernel thread's block for a failed device-side `assert` (the launch fails
/// with `BIREN_ERROR_ASSERT`). Outside a kernel: does nothing. Like `illegal_access`, callable
/// without the loop (`lp` null): the thread named is then the context's.
/// # Safety
/// `lp` is null or the calling thread's loop.
pub unsafe fn assert_failed(lp: *mut KernelLoop) {
    unsafe {
        // biren-cc keeps the context's index current in kernels that assert.
        let thread = if lp.is_null() {
            (*kernel_ctx::unit()).ctx.thread_idx
        } else {
            (*lp).tid
        };
        end_thread(lp, |_| BlockOutcome::AssertFailed { thread })
    }
}

/// Ends the calling thread's block with the outcome `end` gives for the thread's index (the
/// loop's thread, else the block's first thread in a loop, else the context's).
unsafe fn end_thread(lp: *mut KernelLoop, end: impl FnOnce(Dim3) -> BlockOutcome) {
    unsafe {
        let u = kernel_ctx::unit();
        let run = (*u).run as *mut Run;
        if run.is_null() {
            return;
        }
        if (*run).ring {
            (*run).leave_ring();
        }
        if !(*run).warp_ring.is_null() {
            (*run).leave_warp_ring();
        }
        if (*run).in_range {
            (*run).sync_range();
        }
        let idx = if !lp.is_null() {
            (*lp).tid
        } else {
            let s = (*run).slots.get_unchecked((*run).cur as usize);
            if (*run).block_form && s.end - s.first > 1 {
                (*run).grid.block.unlinear(s.first as u64)
            } else {
                (*u).ctx.thread_idx
            }
        };
        (*(*run).ctx).thread_idx = idx;
        Run::end(run, end(idx));
    }
}
