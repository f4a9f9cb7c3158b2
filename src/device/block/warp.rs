//! Warps: a rendezvous of the lanes a mask names (`warp_exchange`), what it computes for each
//! lane (`Warp::complete`), and the warp ring (`Run::warp_ring`): a warp whose 32 lanes go from
//! one full-mask rendezvous to the next among themselves, in Rust (`warp_ring_step`) and in
//! `birenWarpExchange`'s assembly entry (`warp_entry!`). Part of `block`: the run's state and
//! its fibers are the block's (`super`).

#![allow(dangerous_implicit_autorefs)]

use super::*;

/// What a rendezvous of a warp computes for each lane.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum WarpOp {
    Sync = 0,
    Shfl = 1,
    ShflUp = 2,
    ShflDown = 3,
    ShflXor = 4,
    Ballot = 5,
    Any = 6,
    All = 7,
}

/// What a lane asked of a rendezvous. 16 bytes without implicit padding (`pad` is zero), so
/// that two requests compare as one `u128` (`key`).
#[derive(Clone, Copy)]
#[repr(C)]
pub(super) struct LaneReq {
    pub(super) op: WarpOp,
    pad: [u8; 3],
    pub(super) param: i32,
    pub(super) width: i32,
    /// The mask the lane named (for the failure report).
    pub(super) mask: u32,
}

impl LaneReq {
    #[inline(always)]
    pub(super) fn new(op: WarpOp, param: i32, width: i32, mask: u32) -> LaneReq {
        LaneReq {
            op,
            pad: [0; 3],
            param,
            width,
            mask,
        }
    }

    /// The request's 16 bytes (every one initialized: `pad` is written by `new`).
    #[inline(always)]
    fn key(&self) -> u128 {
        // SAFETY: repr(C), 16 bytes, no implicit padding, every field plain data.
        unsafe { std::mem::transmute_copy(self) }
    }
}
const _: () = assert!(std::mem::size_of::<LaneReq>() == 16);

pub(super) struct Warp {
    pub(super) arrived: u32,
    pub(super) vals: [u64; 32],
    pub(super) req: [LaneReq; 32],
    pub(super) out: [u64; 32],
    pub(super) parked: [u32; 32],
}

impl WarpOp {
    /// The operation a C integer names, if any.
    pub fn from_int(v: i32) -> Option<WarpOp> {
        Some(match v {
            0 => WarpOp::Sync,
            1 => WarpOp::Shfl,
            2 => WarpOp::ShflUp,
            3 => WarpOp::ShflDown,
            4 => WarpOp::ShflXor,
            5 => WarpOp::Ballot,
            6 => WarpOp::Any,
            7 => WarpOp::All,
            _ => return None,
        })
    }
}

impl Warp {
    pub(super) fn new() -> Box<Warp> {
        Box::new(Warp {
            arrived: 0,
            vals: [0; 32],
            req: [LaneReq::new(WarpOp::Sync, 0, 32, 0); 32],
            out: [0; 32],
            parked: [0; 32],
        })
    }

    /// Computes every lane's result of the rendezvous of the lanes in `mask`.
    fn complete(&mut self, mask: u32) {
        if mask == u32::MAX && self.complete_uniform() {
            return;
        }
        self.complete_general(mask);
    }

    /// `complete` lane by lane: any mask, any mix of requests.
    pub(super) fn complete_general(&mut self, mask: u32) {
        let mut ballot = 0u32;
        for l in 0..32 {
            if mask & (1 << l) != 0 && self.vals[l] != 0 {
                ballot |= 1 << l;
            }
        }
        for l in 0..32usize {
            if mask & (1 << l) == 0 {
                continue;
            }
            let r = self.req[l];
            let own = self.vals[l];
            let width = r.width as u32;
            let seg = l as u32 & !(width - 1);
            let src = |s: u32| -> u64 {
                if s < 32 && mask & (1 << s) != 0 {
                    self.vals[s as usize]
                } else {
                    own
                }
            };
            self.out[l] = match r.op {
                WarpOp::Sync => 0,
                WarpOp::Shfl => src(seg + (r.param as u32 & (width - 1))),
                WarpOp::ShflUp => {
                    let d = r.param as u32;
                    let lw = l as u32 - seg;
                    if d > lw {
                        own
                    } else {
                        src(l as u32 - d)
                    }
                }
                WarpOp::ShflDown => {
                    let d = r.param as u32;
                    let lw = l as u32 - seg;
                    if d >= width || lw + d >= width {
                        own
                    } else {
                        src(l as u32 + d)
                    }
                }
                WarpOp::ShflXor => {
                    let s = l as u32 ^ r.param as u32;
                    // Lanes of later groups are out of reach (CUDA): own value.
                    if s >= 32 || (s & !(width - 1)) > seg {
                        own
                    } else {
                        src(s)
                    }
                }
                WarpOp::Ballot => ballot as u64,
                WarpOp::Any => (ballot != 0) as u64,
                WarpOp::All => (ballot == mask) as u64,
            };
        }
    }
}

impl Warp {
    /// `complete` for a full mask whose 32 lanes all asked the same (the usual case: one call
    /// site, one shuffle distance), in straight loops: false, having written nothing, otherwise.
    #[inline]
    pub(super) fn complete_uniform(&mut self) -> bool {
        let r = self.req[0];
        let k = r.key();
        // Every request compared, without a branch per lane (the compiler folds it in vectors).
        if self.req.iter().fold(0u128, |d, q| d | (q.key() ^ k)) != 0 {
            return false;
        }
        let width = r.width as u32; // a power of two from 1 to 32 (checked on arrival)
        let p = r.param as u32;
        let v = &self.vals;
        let out = &mut self.out;
        match r.op {
            WarpOp::Sync => {}
            WarpOp::ShflXor if width == 32 && p < 32 => {
                for (l, o) in out.iter_mut().enumerate() {
                    *o = v[l ^ p as usize];
                }
            }
            WarpOp::ShflDown if width == 32 && p < 32 => {
                for (l, o) in out.iter_mut().enumerate() {
                    *o = v[if l + (p as usize) < 32 {
                        l + p as usize
                    } else {
                        l
                    }];
                }
            }
            WarpOp::ShflXor => {
                // Within the lane's group of `width`; a partner in a later group is out of
                // reach (own value), as in `complete`.
                for (l, o) in out.iter_mut().enumerate() {
                    let s = l as u32 ^ p;
                    let seg = l as u32 & !(width - 1);
                    *o = if s >= 32 || (s & !(width - 1)) > seg {
                        v[l]
                    } else {
                        v[s as usize]
                    };
                }
            }
            WarpOp::ShflDown => {
                for (l, o) in out.iter_mut().enumerate() {
                    let lw = l as u32 & (width - 1);
                    *o = if p >= width || lw + p >= width {
                        v[l]
                    } else {
                        v[l + p as usize]
                    };
                }
            }
            WarpOp::ShflUp => {
                for (l, o) in out.iter_mut().enumerate() {
                    let lw = l as u32 & (width - 1);
                    *o = if p > lw { v[l] } else { v[l - p as usize] };
                }
            }
            WarpOp::Shfl => {
                for (l, o) in out.iter_mut().enumerate() {
                    let seg = l as u32 & !(width - 1);
                    *o = v[(seg + (p & (width - 1))) as usize];
                }
            }
            WarpOp::Ballot | WarpOp::Any | WarpOp::All => {
                let mut ballot = 0u32;
                for (l, &x) in v.iter().enumerate() {
                    ballot |= ((x != 0) as u32) << l;
                }
                let r = match r.op {
                    WarpOp::Ballot => ballot as u64,
                    WarpOp::Any => (ballot != 0) as u64,
                    _ => (ballot == u32::MAX) as u64,
                };
                out.fill(r);
            }
        }
        true
    }
}

/// A warp in ring mode gives way to the run's other fibers after this many rendezvous.
const WARP_RING_ROUNDS: u32 = 64;

impl Run {
    /// Leaves the warp ring: its lanes that are ready (not at the current rendezvous, and not
    /// the running one) go to the ready list in the ring's order, from the lane after the
    /// running one; the arrived ones stay parked in the warp, as outside the mode.
    #[cold]
    #[inline(never)]
    pub(super) fn leave_warp_ring(&mut self) {
        // SAFETY: the ring's warp lives in `blocks[0].warps` for the run (boxed: it does not
        // move when the list grows).
        let w = unsafe { &mut *self.warp_ring };
        self.warp_ring = std::ptr::null_mut();
        // The arrived lanes are the `wring_arrived` before the running one, in lane order.
        let lane = self.wring_lane as usize % 32;
        let mut arrived = 0u32;
        for k in 1..=self.wring_arrived as usize {
            arrived |= 1 << ((lane + 32 - k) % 32);
        }
        w.arrived = arrived;
        for k in 1..32 {
            let l = (lane + k) % 32;
            if arrived & (1 << l) == 0 {
                self.ready.push(w.parked[l]);
            }
        }
    }
}

impl Run {
    /// CUDA's partial-warp rule for lanes that returned, when nothing can run: a rendezvous
    /// whose missing lanes (named by the mask, existing, not arrived) wait nowhere, so have
    /// returned, completes among the lanes that arrived (a shuffle from a returned lane gives the
    /// caller's own value), and they become ready. A rendezvous a missing lane of which waits
    /// elsewhere (a barrier, a grid sync, the same warp under another mask) stays: it never
    /// completes, and the run fails (`stuck`). Returns whether a fiber became ready.
    #[cold]
    #[inline(never)]
    pub(super) fn release_returned_lanes(&mut self) -> bool {
        let mut released = false;
        let block = self.grid.block;
        let nw = self.threads.div_ceil(WARP_SIZE) as usize;
        for b in 0..self.blocks.len() {
            if self.blocks[b]
                .warps
                .iter()
                .flatten()
                .all(|w| w.arrived == 0)
            {
                continue;
            }
            // The lanes of each warp that wait at a barrier or a grid sync.
            let mut elsewhere = vec![0u32; nw];
            let grid_waiters = self
                .grid_waiting
                .iter()
                .filter(|&&s| self.slots[s as usize].block as usize == b);
            for &s in self.blocks[b].barrier.iter().chain(grid_waiters) {
                let t = linear(self.slots[s as usize].idx, block);
                if let Some(e) = elsewhere.get_mut((t / WARP_SIZE) as usize) {
                    *e |= 1 << (t % WARP_SIZE);
                }
            }
            let threads = self.threads;
            for (wi, w) in self.blocks[b].warps.iter_mut().enumerate() {
                let Some(w) = w else { continue };
                let present = lanes_present(threads, wi as u32);
                let busy = elsewhere.get(wi).copied().unwrap_or(0) | w.arrived;
                let mut pending = w.arrived;
                while pending != 0 {
                    // The lanes that arrived with the same mask as the first pending one.
                    let m = w.req[pending.trailing_zeros() as usize].mask;
                    let mut group = 0u32;
                    let mut a = pending;
                    while a != 0 {
                        let l = a.trailing_zeros();
                        a &= a - 1;
                        if w.req[l as usize].mask == m {
                            group |= 1 << l;
                        }
                    }
                    pending &= !group;
                    let missing = m & present & !group;
                    if missing & busy != 0 {
                        continue;
                    }
                    w.complete(group);
                    w.arrived &= !group;
                    let mut g = group;
                    while g != 0 {
                        let l = g.trailing_zeros() as usize;
                        g &= g - 1;
                        self.ready.push(w.parked[l]);
                    }
                    released = true;
                }
            }
        }
        released
    }
}

/// A warp rendezvous of the lanes in `mask` (which must name the caller): each lane gives
/// `val`; returns the lane's result of `op` (see `Warp::complete`). `param` is the source lane,
/// delta or lane mask; `width` a power of two up to 32. Outside a kernel: the caller alone.
/// # Safety
/// `lp` is null or the calling thread's loop (what the header passes).
pub unsafe fn warp_exchange(
    lp: *mut KernelLoop,
    mask: u32,
    op: WarpOp,
    val: u64,
    param: i32,
    width: i32,
) -> u64 {
    unsafe {
        if let Some(v) = warp_exchange_fast(lp, mask, op, val, param, width) {
            return v;
        }
        warp_exchange_slow(lp, mask, op, val, param, width)
    }
}

/// The usual warp operation: a full warp and mask, a valid width, one thread alone on its
/// fiber in a one-block run that is not in ring mode, and a fiber to go to (a ready one, or an
/// idle carrier for threads not yet started). `None`, having changed nothing, otherwise.
#[inline(always)]
unsafe fn warp_exchange_fast(
    lp: *mut KernelLoop,
    mask: u32,
    op: WarpOp,
    val: u64,
    param: i32,
    width: i32,
) -> Option<u64> {
    unsafe {
        let u = kernel_ctx::unit_fast()?;
        let run = (*u).run as *mut Run;
        if run.is_null() {
            return None;
        }
        let w = (*run).warp_ring;
        if !w.is_null() {
            // Only the ring's lanes run in the mode: the running lane's is the caller's fiber.
            if mask == u32::MAX
                && valid_width(width)
                && (*w).parked[(*run).wring_lane as usize] == (*run).cur
            {
                return Some(warp_ring_step(u, run, lp, op, val, param, width));
            }
            (*run).leave_warp_ring();
        }
        let (h, out) = warp_step(u, run, lp, mask, op, val, param, width)?;
        h.perform();
        Some(*out)
    }
}

/// `warp_exchange_fast` out of ring mode, without the switch: what to do (go on, or switch) and
/// where the lane's result will be. The rendezvous' 32nd lane completes it and starts the warp
/// ring. `None`, having changed nothing, when the slow path must run.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
unsafe fn warp_step(
    u: *mut kernel_ctx::UnitTls,
    run: *mut Run,
    lp: *mut KernelLoop,
    mask: u32,
    op: WarpOp,
    val: u64,
    param: i32,
    width: i32,
) -> Option<(fiber::Handoff, *const u64)> {
    unsafe {
        let full = mask == u32::MAX && valid_width(width);
        if !(*run).warp_ring.is_null() || (*run).ring || (*run).blocks.len() != 1 || !full {
            return None;
        }
        let cur = (*run).cur;
        let slot = (*run).slots.as_mut_ptr().add(cur as usize);
        if (*slot).end - (*slot).first > 1 {
            return None;
        }
        let t = linear(caller_idx(u, lp), (*run).grid.block);
        let wi = (t / WARP_SIZE) as usize;
        if lanes_present((*run).threads, wi as u32) != u32::MAX {
            return None;
        }
        let bs = (*run).blocks.as_mut_ptr();
        let w: *mut Warp = match (*bs).warps.get_mut(wi) {
            Some(Some(w)) => &mut **w,
            _ => return None,
        };
        let l = (t % WARP_SIZE) as usize;
        let out = std::ptr::addr_of!((*w).out[l]);
        let last = (*w).arrived | (1 << l) == u32::MAX;
        let starting = (*run).next_block == 0;
        if !last {
            // Somewhere to go, decided before anything is written.
            if starting {
                if (*run).idle.is_empty() {
                    return None;
                }
            } else if (*run).ready_head >= (*run).ready.len() {
                return None;
            }
        }
        (*w).vals[l] = val;
        (*w).req[l] = LaneReq::new(op, param, width, mask);
        if last {
            (*w).arrived = u32::MAX;
            (*w).complete(mask);
            (*w).arrived = 0;
            // Every lane is alone on its fiber (the others waited; this one's carrier has one
            // thread): the warp goes on in ring mode, its lanes ready without the list.
            (*w).parked[l] = cur;
            (*run).warp_ring = w;
            (*run).wring_arrived = 0;
            (*run).wring_rounds = 0;
            (*run).wring_lane = l as u32;
            // No slot is made while the warp is in ring mode (a thread that could start one
            // leaves the mode first): `warp_entry` reads the slots through this pointer.
            (*run).ring_slots = (*run).slots.as_mut_ptr();
            return Some((fiber::Handoff::DONE, out));
        }
        (*w).arrived |= 1 << l;
        (*w).parked[l] = cur;
        (*bs).one_by_one = true;
        let to = if starting {
            (*run).idle_carrier()
        } else {
            (*run).take_ready((*run).ready_head)
        };
        Some((Run::hand_to(run, u, to), out))
    }
}

/// `warp_entry!`'s way out of ring mode (anything its assembly does not do itself):
/// `warp_step` for the C entry, which carries the switch out itself, so that a lane parked
/// there resumes straight into its kernel (as a barrier's does; a lane parked in Rust returned
/// through frames the resuming fiber's return stack did not predict). Declines (`SLOW`, nothing
/// changed but a warp ring left) when anything else must run: the ring's own lane with a width
/// or mask the assembly does not take, an unknown op, the slow path's cases. Otherwise the
/// lane's result is read through `Run::wout` when it goes on.
/// # Safety
/// Called by `warp_entry!` with its arguments; must not unwind.
#[cfg(target_arch = "x86_64")]
pub(crate) unsafe extern "C" fn warp_entry_step(
    lp: *mut KernelLoop,
    mask: u32,
    op: i32,
    val: u64,
    param: i32,
    width: i32,
) -> fiber::Handoff {
    unsafe {
        let Some(op) = WarpOp::from_int(op) else {
            return fiber::Handoff::SLOW;
        };
        let Some(u) = kernel_ctx::unit_fast() else {
            return fiber::Handoff::SLOW;
        };
        let run = (*u).run as *mut Run;
        if run.is_null() {
            return fiber::Handoff::SLOW;
        }
        let w = (*run).warp_ring;
        if !w.is_null() {
            if (*w).parked[(*run).wring_lane as usize] == (*run).cur {
                return fiber::Handoff::SLOW;
            }
            (*run).leave_warp_ring();
        }
        match warp_step(u, run, lp, mask, op, val, param, width) {
            Some((h, out)) => {
                (*run).wout = out;
                h
            }
            None => fiber::Handoff::SLOW,
        }
    }
}

/// A full-mask rendezvous of the warp in ring mode (`Run::warp_ring`) by its running lane.
#[inline(always)]
unsafe fn warp_ring_step(
    u: *mut kernel_ctx::UnitTls,
    run: *mut Run,
    lp: *mut KernelLoop,
    op: WarpOp,
    val: u64,
    param: i32,
    width: i32,
) -> u64 {
    unsafe {
        let w = (*run).warp_ring;
        let l = (*run).wring_lane as usize;
        debug_assert_eq!(
            linear(caller_idx(u, lp), (*run).grid.block) % WARP_SIZE,
            l as u32,
            "biren: not the warp ring's lane"
        );
        (*w).vals[l] = val;
        (*w).req[l] = LaneReq::new(op, param, width, u32::MAX);
        let a = (*run).wring_arrived + 1;
        if a == WARP_SIZE {
            return warp_ring_complete(run, l);
        }
        (*run).wring_arrived = a;
        let next = (l + 1) % WARP_SIZE as usize;
        (*run).wring_lane = next as u32;
        let to = (*w).parked[next];
        Run::resume(run, u, to);
        (*w).out[l]
    }
}

/// The 32nd lane of a rendezvous in ring mode (its value and request written): completes it,
/// and leaves the mode after `WARP_RING_ROUNDS` in a row. Returns the lane's result.
#[inline]
unsafe fn warp_ring_complete(run: *mut Run, l: usize) -> u64 {
    unsafe {
        let w = (*run).warp_ring;
        (*w).complete(u32::MAX);
        (*w).arrived = 0;
        (*run).wring_arrived = 0;
        let r = (*run).wring_rounds + 1;
        (*run).wring_rounds = r;
        if r >= WARP_RING_ROUNDS {
            (*run).leave_warp_ring();
        }
        (*w).out[l]
    }
}

/// `warp_entry`'s 32nd lane.
#[cfg(target_arch = "x86_64")]
pub(crate) unsafe extern "C" fn warp_ring_last(lane: u32) -> u64 {
    unsafe {
        let run = (*kernel_ctx::unit()).run as *mut Run;
        warp_ring_complete(run, (lane % WARP_SIZE) as usize)
    }
}

/// Defines `birenWarpExchange`'s entry, `extern "C" fn $name(lp, mask, op, value, param, width)
/// -> u64`: a full-mask, width-32 operation of the warp in ring mode (`Run::warp_ring`) is done
/// here, in assembly, as `warp_ring_step` does it in Rust (change both together; the C tests
/// run this one, the Rust tests that one): the lane's value and request written, then the 32nd
/// lane completes the rendezvous in Rust (`warp_ring_last`), any other switches to the next
/// lane with `fiber::switch_keeping`'s protocol and, resumed, returns its result. Everything
/// else calls `warp_entry_step` (a full-mask rendezvous out of ring mode: the lane goes on, or
/// parks and switches here, so that it resumes straight into its kernel), and when that
/// declines jumps to `$slow` with the arguments untouched (the panic boundary is there). Naked
/// for the barrier entries' reasons (`barrier_entry!`): no frame, and a resumed lane returns
/// with `ret` when its return address is the switching lane's, else with a jump.
/// Elsewhere than x86_64 it is `$slow`.
macro_rules! warp_entry {
    ($(#[$m:meta])* fn $name:ident, slow = $slow:path) => {
        $(#[$m])*
        #[cfg(target_arch = "x86_64")]
        #[unsafe(naked)]
        extern "C" fn $name(
            lp: *mut $crate::device::KernelLoop,
            mask: u32,
            op: i32,
            value: u64,
            param: i32,
            width: i32,
        ) -> u64 {
            core::arch::naked_asm!(
                // rax: the unit's TLS offset, r10: the run, r11: the ring's warp.
                "mov rax, qword ptr [rip + {fast_off}]",
                "test rax, rax",
                "jz 7f",
                "mov r10, qword ptr fs:[rax + {u_run}]",
                "test r10, r10",
                "jz 7f",
                "mov r11, qword ptr [r10 + {r_wring}]",
                "test r11, r11",
                "jz 7f",
                "cmp esi, -1",
                "jne 7f",
                "cmp r9d, 32",
                "jne 7f",
                "cmp edx, 7",
                "ja 7f",
                // esi: the lane (only the ring's lanes run in the mode; its fiber is checked).
                "mov esi, dword ptr [r10 + {r_wlane}]",
                "mov r9d, dword ptr [r11 + rsi * 4 + {w_parked}]",
                "cmp r9d, dword ptr [r10 + {r_cur}]",
                "jne 9f",
                // Its value and request (op, zero padding, param, width 32, full mask).
                "mov qword ptr [r11 + rsi * 8 + {w_vals}], rcx",
                "mov r9, rsi",
                "shl r9, 4",
                "add r9, r11",
                "mov dword ptr [r9 + {w_req}], edx",
                "mov dword ptr [r9 + {w_req} + 4], r8d",
                "mov dword ptr [r9 + {w_req} + 8], 32",
                "mov dword ptr [r9 + {w_req} + 12], -1",
                "mov r9d, dword ptr [r10 + {r_warrived}]",
                "inc r9d",
                "cmp r9d, 32",
                "je 6f",
                "mov dword ptr [r10 + {r_warrived}], r9d",
                // rdx: the next lane's slot (its index becomes `cur`), rcx: the running one.
                "lea edx, [esi + 1]",
                "and edx, 31",
                "mov dword ptr [r10 + {r_wlane}], edx",
                "mov edx, dword ptr [r11 + rdx * 4 + {w_parked}]",
                "mov ecx, dword ptr [r10 + {r_cur}]",
                "mov dword ptr [r10 + {r_cur}], edx",
                "mov r8, qword ptr [r10 + {r_slots}]",
                "imul rdx, rdx, {s_size}",
                "add rdx, r8",
                "imul rcx, rcx, {s_size}",
                "add rcx, r8",
                // The context shows the next lane's index.
                "mov r8, qword ptr [rdx + {s_idx}]",
                "mov qword ptr fs:[rax + {u_tidx}], r8",
                "mov r8d, dword ptr [rdx + {s_idx} + 8]",
                "mov dword ptr fs:[rax + {u_tidx} + 8], r8d",
                // r11: where the result will be.
                "lea r11, [r11 + rsi * 8 + {w_out}]",
                "lea rax, [rcx + {s_sp}]",
                "mov rdx, [rdx + {s_sp}]",
                // Switch: save in [rax], resume rdx (r8: this lane's return address); resumed,
                // return the result in [r11].
                "13:",
                "mov r8, [rsp]",
                "push r11",
                $crate::device::block::switch_asm!(),
                "pop r11",
                "mov rax, qword ptr [r11]",
                $crate::device::block::return_asm!(),
                // The 32nd lane completes the rendezvous.
                "6:",
                "mov edi, esi",
                "jmp {last}",
                // Not the ring's lane: the arguments back as they came.
                "9:",
                "mov esi, -1",
                "mov r9d, 32",
                // Anything else: the step decides (`warp_entry_step`), the arguments kept for
                // the slow path (seven words: the call's stack aligned).
                "7:",
                "push rdi",
                "push rsi",
                "push rdx",
                "push rcx",
                "push r8",
                "push r9",
                "push r9",
                "call {step}",
                "cmp rax, 1",
                "je 12f",
                "add rsp, 56",
                // r11: where the lane's result will be.
                "mov r11, qword ptr [rip + {fast_off}]",
                "mov r11, qword ptr fs:[r11 + {u_run}]",
                "mov r11, qword ptr [r11 + {r_wout}]",
                "test rax, rax",
                "jnz 13b",
                "mov rax, qword ptr [r11]",
                "ret",
                "12:",
                "pop r9",
                "pop r9",
                "pop r8",
                "pop rcx",
                "pop rdx",
                "pop rsi",
                "pop rdi",
                "jmp {slow}",
                fast_off = sym $crate::device::kernel_ctx::FAST_OFFSET_PUBLISHED,
                u_run = const $crate::device::block::layout::U_RUN,
                u_tidx = const $crate::device::block::layout::U_TIDX,
                r_wring = const $crate::device::block::layout::R_WRING,
                r_warrived = const $crate::device::block::layout::R_WARRIVED,
                r_wlane = const $crate::device::block::layout::R_WLANE,
                r_cur = const $crate::device::block::layout::R_CUR,
                r_slots = const $crate::device::block::layout::R_SLOTS,
                w_vals = const $crate::device::block::layout::W_VALS,
                w_req = const $crate::device::block::layout::W_REQ,
                w_out = const $crate::device::block::layout::W_OUT,
                w_parked = const $crate::device::block::layout::W_PARKED,
                s_sp = const $crate::device::block::layout::S_SP,
                s_idx = const $crate::device::block::layout::S_IDX,
                s_size = const $crate::device::block::layout::S_SIZE,
                r_wout = const $crate::device::block::layout::R_WOUT,
                last = sym $crate::device::block::warp::warp_ring_last,
                step = sym $crate::device::block::warp::warp_entry_step,
                slow = sym $slow,
            )
        }

        $(#[$m])*
        #[cfg(not(target_arch = "x86_64"))]
        extern "C" fn $name(
            lp: *mut $crate::device::KernelLoop,
            mask: u32,
            op: i32,
            value: u64,
            param: i32,
            width: i32,
        ) -> u64 {
            $slow(lp, mask, op, value, param, width)
        }
    };
}
pub(crate) use warp_entry;

/// `warp_exchange` when its fast path declined: every check, misuse and wait.
#[inline(never)]
unsafe fn warp_exchange_slow(
    lp: *mut KernelLoop,
    mask: u32,
    op: WarpOp,
    val: u64,
    param: i32,
    width: i32,
) -> u64 {
    unsafe {
        let Some((run, idx)) = me(lp) else {
            return alone(mask & 1, op, val);
        };
        let t = linear(idx, (*run).grid.block);
        let lane = t % WARP_SIZE;
        let wi = (t / WARP_SIZE) as usize;
        let present = lanes_present((*run).threads, wi as u32);
        let misuse = |what| {
            (*(*run).ctx).thread_idx = idx;
            Run::end(run, BlockOutcome::Misuse { what, thread: idx })
        };
        if mask & (1 << lane) == 0 {
            misuse("a warp operation's mask does not name the calling lane");
        }
        // CUDA's partial-warp rule: the lanes beyond the block's last thread are not waited for
        // (nor those that returned: `Run::release_returned_lanes`).
        let need = mask & present;
        if !valid_width(width) {
            misuse("a warp shuffle's width is not a power of two from 1 to 32");
        }
        let b = (&mut (*run).slots)[(*run).cur as usize].block as usize;
        let warps = &mut (&mut (*run).blocks)[b].warps;
        // The list lives as long as the runner: a block of an earlier launch may have had fewer
        // warps.
        let nw = (*run).threads.div_ceil(WARP_SIZE) as usize;
        if warps.len() < nw {
            warps.resize_with(nw, || None);
        }
        let w: *mut Warp = &mut **warps[wi].get_or_insert_with(Warp::new);
        let l = lane as usize;
        (*w).vals[l] = val;
        (*w).req[l] = LaneReq::new(op, param, width, mask);
        (*w).arrived |= 1 << lane;
        if (*w).arrived & need == need {
            (*w).complete(need);
            (*w).arrived &= !need;
            let mut others = need & !(1 << lane);
            while others != 0 {
                let o = others.trailing_zeros() as usize;
                others &= others - 1;
                (*run).ready.push((*w).parked[o]);
            }
            return (*w).out[l];
        }
        truncate(run, lp, t);
        (*w).parked[l] = (*run).cur;
        Run::park(run, idx);
        (*w).out[l]
    }
}

/// A rendezvous of the caller alone (outside a kernel).
fn alone(mask: u32, op: WarpOp, val: u64) -> u64 {
    match op {
        WarpOp::Sync => 0,
        WarpOp::Ballot => (mask != 0 && val != 0) as u64,
        WarpOp::Any | WarpOp::All => (val != 0) as u64,
        _ => val,
    }
}

/// A shuffle width CUDA allows: a power of two from 1 to 32.
#[inline(always)]
fn valid_width(width: i32) -> bool {
    (width as u32).wrapping_sub(1) < 32 && (width & (width - 1)) == 0
}

/// The lanes of warp `w` that exist in a block of `threads` threads.
fn lanes_present(threads: u32, w: u32) -> u32 {
    let n = threads.saturating_sub(w * WARP_SIZE).min(WARP_SIZE);
    if n == 32 {
        u32::MAX
    } else {
        (1u32 << n) - 1
    }
}

/// `birenActiveMask`: the lanes of the caller's warp that exist in its block (all threads of a
/// warp run converged between sync points here). Outside a kernel: 1.
/// # Safety
/// `lp` is null or the calling thread's loop (what the header passes).
pub unsafe fn active_mask(lp: *mut KernelLoop) -> u32 {
    unsafe {
        let Some((run, idx)) = me(lp) else { return 1 };
        let t = linear(idx, (*run).grid.block);
        lanes_present((*run).threads, t / WARP_SIZE)
    }
}

/// `birenLaneId`: the caller's lane in its warp (linear thread index mod 32).
/// # Safety
/// `lp` is null or the calling thread's loop (what the header passes).
pub unsafe fn lane_id(lp: *mut KernelLoop) -> u32 {
    unsafe {
        let u = kernel_ctx::unit();
        linear(caller_idx(u, lp), (*u).ctx.block_dim) % WARP_SIZE
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uniform_warp_results_match_the_lane_by_lane_ones() {
        let mut rnd = super::super::tests::xorshift();
        let ops = [
            WarpOp::Sync,
            WarpOp::Shfl,
            WarpOp::ShflUp,
            WarpOp::ShflDown,
            WarpOp::ShflXor,
            WarpOp::Ballot,
            WarpOp::Any,
            WarpOp::All,
        ];
        for case in 0..4000 {
            let op = ops[rnd(ops.len() as u64) as usize];
            let width = 1i32 << rnd(6);
            let param = match rnd(4) {
                0 => -(rnd(40) as i32),
                1 => rnd(64) as i32,
                _ => rnd(33) as i32,
            };
            let mut w = Warp::new();
            for l in 0..32 {
                w.vals[l] = match rnd(3) {
                    0 => 0,
                    1 => u64::MAX,
                    _ => rnd(1 << 40),
                };
                w.req[l] = LaneReq::new(op, param, width, u32::MAX);
            }
            let mut general = Warp::new();
            general.vals = w.vals;
            general.req = w.req;
            general.complete_general(u32::MAX);
            assert!(w.complete_uniform(), "case {case}: uniform requests");
            assert_eq!(
                w.out, general.out,
                "case {case}: {op:?} width {width} param {param}"
            );
        }
        // Mixed requests are left to the general loop.
        let mut w = Warp::new();
        w.req[5] = LaneReq::new(WarpOp::Sync, 3, 32, 0);
        assert!(!w.complete_uniform());
    }
}
