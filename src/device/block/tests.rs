//! Tests of block execution: plain and ring mode, barriers, warps, grid sync, faults.

use super::turns::ORDER_TRIALS;
use super::*;
use std::sync::atomic::{AtomicU32, Ordering};

fn grid(kernel: KernelFn, args: *mut *mut c_void, g: Dim3, b: Dim3, shared: usize) -> Grid {
    // As a compute unit does at start: with the context's offset from the thread pointer
    // known, barriers take their fast path (and ring mode) here too.
    kernel_ctx::report_offset();
    assert_ne!(kernel_ctx::publish_fast_offset(), 0);
    Grid {
        kernel,
        block_fn: None,
        blocks_fn: None,
        region_fn: None,
        args,
        grid: g,
        block: b,
        shared_bytes: shared,
        cooperative: false,
        stack_size: 64 * 1024,
        fixed_order: false,
    }
}

/// A hand-written block entry's loop over threads `first..end`, as the header's generated
/// one: `each(lp, t)` runs thread `t`; a sync point that lowers `lp.end` stops it there.
unsafe fn block_loop(first: c_uint, end: c_uint, mut each: impl FnMut(*mut KernelLoop, u32)) {
    let mut lp = KernelLoop {
        tid: Dim3::new(first, 0, 0),
        end,
        xe: end,
    };
    let mut t = first;
    while t < lp.end {
        lp.tid = Dim3::new(t, 0, 0);
        each(&mut lp, t);
        t += 1;
    }
}

/// What `record_block` and `record_range` saw: (entry, block index, first, end or count).
static SEEN: parking_lot::Mutex<Vec<(char, Dim3, u32, u32)>> = parking_lot::Mutex::new(Vec::new());

unsafe extern "C" fn record_block(
    c: *mut KernelCtx,
    _: *mut *mut c_void,
    first: c_uint,
    end: c_uint,
) {
    SEEN.lock().push(('b', (*c).block_idx, first, end));
}

/// The per-thread entry beside `record_block` (a block's threads that run one by one: its
/// thread 0 alone, first): ('t', block, thread, 0).
unsafe extern "C" fn record_thread(_: *mut *mut c_void) {
    let c = &*kernel_ctx::current();
    SEEN.lock().push(('t', c.block_idx, c.thread_idx.x, 0));
}

/// A range entry as the header's: every block from the context's on, moving it on itself
/// (x fastest); once, it stops after `*args[0]` blocks if that is fewer (as a wait
/// in the next block would, the runtime taking that block over: here it does nothing more).
unsafe extern "C" fn record_range(
    c: *mut KernelCtx,
    args: *mut *mut c_void,
    count: c_uint,
) -> c_uint {
    let stop_after = *(*args as *const u32);
    let mut done = 0;
    loop {
        SEEN.lock().push(('r', (*c).block_idx, done, count));
        done += 1;
        if done == count {
            return done;
        }
        (*c).block_idx = (*c).grid_dim.block_after((*c).block_idx);
        if done == stop_after {
            *(*args as *mut u32) = u32::MAX;
            // What a wait in the next block does: the runtime takes that block over.
            let run = (*kernel_ctx::unit()).run as *mut Run;
            (*run).leave_range();
            return done;
        }
    }
}

#[test]
fn whole_blocks_run_in_ranges_once_a_block_ran_through() {
    // Blocks 5..24 of a 4x3x2 grid of 8 threads: block 5's thread 0 alone (the per-thread
    // entry), then its other threads, then one range call for blocks 6..24 across rows and
    // slices; the run ends at block 23. With no range entry (older registrations) every
    // block is a call of its own.
    let mut stop_after = u32::MAX;
    let mut a = [std::ptr::addr_of_mut!(stop_after) as *mut c_void];
    let mut r = BlockRunner::new(64 * 1024);
    let mut g = grid(
        record_thread,
        a.as_mut_ptr(),
        Dim3::new(4, 3, 2),
        Dim3::new(8, 1, 1),
        0,
    );
    g.block_fn = Some(record_block);
    let lin = |i: u64| g.grid.unlinear(i);
    for ranges in [true, false] {
        g.blocks_fn = ranges.then_some(record_range as BlocksFn);
        SEEN.lock().clear();
        assert_eq!(r.run_blocks(&g, 5, 19, None), (BlockOutcome::Completed, 23));
        let mut want = vec![('t', lin(5), 0, 0), ('b', lin(5), 1, 8)];
        for i in 6..24 {
            want.push(if ranges {
                ('r', lin(i), i as u32 - 6, 18)
            } else {
                ('b', lin(i), 0, 8)
            });
        }
        assert_eq!(*SEEN.lock(), want, "ranges {ranges}");
    }
    // A range stopped after 3 blocks (a wait in the 4th, block 9): the runtime goes on
    // with block 9 as the run's block, then a new range for blocks 10..24.
    g.blocks_fn = Some(record_range);
    unsafe { *(a[0] as *mut u32) = 3 };
    SEEN.lock().clear();
    assert_eq!(r.run_blocks(&g, 5, 19, None), (BlockOutcome::Completed, 23));
    let seen = SEEN.lock().clone();
    let blocks: Vec<Dim3> = seen.iter().map(|s| s.1).collect();
    let mut want: Vec<Dim3> = vec![lin(5), lin(5), lin(6), lin(7), lin(8)];
    want.extend((10..24).map(lin));
    assert_eq!(blocks, want, "{seen:?}");
    assert_eq!(seen[5], ('r', lin(10), 0, 14), "{seen:?}");
}

/// Which entry ran each thread of `alone_*`'s blocks: ('t', thread) or ('b', first, end).
static ALONE: parking_lot::Mutex<Vec<(char, u32, u32)>> = parking_lot::Mutex::new(Vec::new());

/// A kernel with one barrier per thread: its per-thread entry...
unsafe extern "C" fn alone_thread(_: *mut *mut c_void) {
    let t = (*kernel_ctx::current()).thread_idx.x;
    ALONE.lock().push(('t', t, 0));
    unsafe { sync_threads(std::ptr::null_mut()) };
}

/// ...and its block entry.
unsafe extern "C" fn alone_block(
    _: *mut KernelCtx,
    _: *mut *mut c_void,
    first: c_uint,
    end: c_uint,
) {
    ALONE.lock().push(('b', first, end));
    block_loop(first, end, |lp, _| unsafe { sync_threads(lp) });
}

#[test]
fn threads_that_run_alone_use_the_per_thread_entry() {
    // Every thread of a block that waits runs alone on its fiber: through the per-thread
    // entry, thread 0 first, in two blocks of a run; the block entry never runs.
    let mut r = BlockRunner::new(64 * 1024);
    let mut g = grid(
        alone_thread,
        std::ptr::null_mut(),
        Dim3::new(2, 1, 1),
        Dim3::new(8, 1, 1),
        0,
    );
    g.block_fn = Some(alone_block);
    ALONE.lock().clear();
    assert_eq!(r.run_blocks(&g, 0, 2, None), (BlockOutcome::Completed, 1));
    let want: Vec<(char, u32, u32)> = (0..2).flat_map(|_| (0..8).map(|t| ('t', t, 0))).collect();
    assert_eq!(*ALONE.lock(), want);
}

/// A thread passing a barrier of `turn_order`: (block, barrier, x, y, z).
type Pass = (u32, u32, u32, u32, u32);

/// The order the threads of `turn_order`'s blocks pass its barriers.
static TURNS: parking_lot::Mutex<Vec<Pass>> = parking_lot::Mutex::new(Vec::new());

unsafe extern "C" fn turn_order(_: *mut *mut c_void) {
    let c = &*kernel_ctx::current();
    let (t, b) = (c.thread_idx, c.block_idx.x);
    for k in 0..3 {
        unsafe { sync_threads(std::ptr::null_mut()) };
        TURNS.lock().push((b, k, t.x, t.y, t.z));
    }
}

/// `block`'s threads in row order (x fastest) or column order (x slowest).
fn turn_list(block: Dim3, column: bool) -> Vec<(u32, u32, u32)> {
    let mut v = Vec::new();
    for a in 0..block.volume() as u32 {
        v.push(if column {
            let (x, r) = (a / (block.y * block.z), a % (block.y * block.z));
            (x, r / block.z, r % block.z)
        } else {
            let (z, r) = (a / (block.x * block.y), a % (block.x * block.y));
            (r % block.x, r / block.x, z)
        });
    }
    v
}

#[test]
fn ring_turns_go_by_rows_or_columns_as_the_unit_chose() {
    // After the first barrier the ring forms. A 1-D block's threads take turns in thread
    // order; a 2-D or 3-D block's in row order (x fastest) or column order (x slowest,
    // z fastest), the same at every barrier of a block, each rotated to start from the
    // last to arrive: the first blocks of a kernel alternate the two (the unit times
    // them), later ones keep the one chosen.
    let mut r = BlockRunner::new(64 * 1024);
    let blocks = 2 * ORDER_TRIALS as u32 + 3;
    for block in [Dim3::new(4, 3, 1), Dim3::new(2, 3, 2), Dim3::new(6, 1, 1)] {
        let g = grid(
            turn_order,
            std::ptr::null_mut(),
            Dim3::new(blocks, 1, 1),
            block,
            0,
        );
        TURNS.lock().clear();
        let got = r.run_blocks(&g, 0, blocks as u64, None);
        assert_eq!(got, (BlockOutcome::Completed, blocks as u64 - 1));
        let turns = TURNS.lock().clone();
        let n = block.volume() as usize;
        assert_eq!(turns.len(), 3 * n * blocks as usize);
        let mut orders = Vec::new();
        for (i, round) in turns.chunks(n).enumerate() {
            let (b, k) = ((i / 3) as u32, (i % 3) as u32);
            let seq: Vec<(u32, u32, u32)> = round
                .iter()
                .map(|&(rb, rk, x, y, z)| {
                    assert_eq!((rb, rk), (b, k), "{turns:?}");
                    (x, y, z)
                })
                .collect();
            let rotated = |list: Vec<(u32, u32, u32)>| {
                let at = list.iter().position(|&c| c == seq[0]).unwrap();
                list[at..]
                    .iter()
                    .chain(&list[..at])
                    .copied()
                    .collect::<Vec<_>>()
                    == seq
            };
            let column = if rotated(turn_list(block, false)) {
                false
            } else {
                assert!(
                    rotated(turn_list(block, true)),
                    "{block:?}, {b}/{k}: {seq:?}"
                );
                true
            };
            if k == 0 {
                orders.push(column);
            } else {
                assert_eq!(orders[b as usize], column, "{block:?}: one order per block");
            }
        }
        if block.y == 1 {
            assert!(orders.iter().all(|&c| !c), "{orders:?}");
        } else {
            // Row, column, row, ... while timing; then the choice.
            for (b, &c) in orders[..2 * ORDER_TRIALS].iter().enumerate() {
                assert_eq!(c, b % 2 == 1, "{block:?}: {orders:?}");
            }
            let chosen = orders[2 * ORDER_TRIALS];
            assert!(
                orders[2 * ORDER_TRIALS..].iter().all(|&c| c == chosen),
                "{orders:?}"
            );
        }
    }
}

#[test]
fn a_unit_remembers_the_orders_of_its_last_16_kernels_and_shapes() {
    // One entry per kernel and 2-D block shape, the oldest replaced; 1-D blocks have none.
    let mut r = BlockRunner::new(64 * 1024);
    let one_d = grid(
        turn_order,
        std::ptr::null_mut(),
        Dim3::new(1, 1, 1),
        Dim3::new(8, 1, 1),
        0,
    );
    assert_eq!(r.run_blocks(&one_d, 0, 1, None).0, BlockOutcome::Completed);
    assert!(r.run.orders.is_empty());
    let shapes: Vec<Dim3> = (0..TURN_ORDERS as u32 + 1)
        .map(|i| Dim3::new(2, 2 + i, 1))
        .collect();
    for (i, &b) in shapes.iter().enumerate() {
        let g = grid(turn_order, std::ptr::null_mut(), Dim3::new(1, 1, 1), b, 0);
        assert_eq!(r.run_blocks(&g, 0, 1, None).0, BlockOutcome::Completed);
        assert_eq!(r.run.orders.len(), (i + 1).min(TURN_ORDERS));
        // Its first block was timed in row order.
        let o = r
            .run
            .orders
            .iter()
            .find(|o| o.block == b)
            .expect("an entry for the shape");
        assert_eq!(o.next(), (true, true));
    }
    let kept: Vec<Dim3> = r.run.orders.iter().map(|o| o.block).collect();
    assert_eq!(kept, shapes[1..].to_vec(), "the oldest went");
}

#[test]
fn a_fixed_order_keeps_thread_order() {
    // Recording or replaying: no block is timed, every one takes turns in thread order.
    let mut r = BlockRunner::new(64 * 1024);
    let block = Dim3::new(4, 3, 1);
    let mut g = grid(
        turn_order,
        std::ptr::null_mut(),
        Dim3::new(8, 1, 1),
        block,
        0,
    );
    g.fixed_order = true;
    TURNS.lock().clear();
    assert_eq!(r.run_blocks(&g, 0, 8, None), (BlockOutcome::Completed, 7));
    let rows = turn_list(block, false);
    for round in TURNS.lock().chunks(12) {
        let seq: Vec<(u32, u32, u32)> = round.iter().map(|&(_, _, x, y, z)| (x, y, z)).collect();
        let at = rows.iter().position(|&c| c == seq[0]).unwrap();
        let want: Vec<_> = rows[at..].iter().chain(&rows[..at]).copied().collect();
        assert_eq!(seq, want);
    }
}

#[test]
fn block_entries_only_for_grids_whose_x_index_fits_an_int() {
    let mut g = grid(
        noop_kernel,
        std::ptr::null_mut(),
        Dim3::new(1, 1, 1),
        Dim3::new(1, 1, 1),
        0,
    );
    assert!(g.block_entry().is_none(), "no block entry, none to run");
    g.block_fn = Some(noop_block);
    for (gx, bx, fits) in [
        (1u32, 1u32, true),
        (8_388_607, 256, true),  // 2^31 - 256 threads in x
        (8_388_608, 256, false), // 2^31
        (2_097_151, 1024, true),
        (2_097_152, 1024, false),
        (u32::MAX, 1024, false),
    ] {
        g.grid = Dim3::new(gx, 65535, 65535);
        g.block = Dim3::new(bx, 1, 1);
        assert_eq!(g.block_entry().is_some(), fits, "{gx} x {bx}");
    }
}

unsafe extern "C" fn noop_block(_: *mut KernelCtx, _: *mut *mut c_void, _: c_uint, _: c_uint) {}

/// The tests' random numbers: `rnd(m)` is in 0..m, the same sequence every run.
pub(super) fn xorshift() -> impl FnMut(u64) -> u64 {
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    move |m| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed % m
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
    let ctx = kernel_ctx::current();
    reduce_body(ctx, args, std::ptr::null_mut(), (*ctx).thread_idx.x);
}

/// Thread `t` of `reduce` (`lp`: its block entry's loop, or null).
unsafe fn reduce_body(ctx: *mut KernelCtx, args: *mut *mut c_void, lp: *mut KernelLoop, t: u32) {
    let out = *args as *mut u32;
    let sh = (*ctx).shared as *mut u32;
    *sh.add(t as usize) = t + 1;
    unsafe { sync_threads(lp) };
    let mut s = (*ctx).block_dim.x / 2;
    while s > 0 {
        if t < s {
            *sh.add(t as usize) += *sh.add((t + s) as usize);
        }
        unsafe { sync_threads(lp) };
        s /= 2;
    }
    if t == 0 {
        *out.add((*ctx).block_idx.x as usize) = *sh;
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

// The same reduction as a block entry (what BIREN_KERNEL generates for a 1-D block, beside
// its per-thread entry `reduce`): the loop stops when a sync point lowers its end.
unsafe extern "C" fn reduce_block(
    ctx: *mut KernelCtx,
    args: *mut *mut c_void,
    first: c_uint,
    end: c_uint,
) {
    block_loop(first, end, |lp, t| reduce_body(ctx, args, lp, t));
}

#[test]
fn fibers_are_reused_across_blocks_runs_and_failures() {
    // Growing blocks (the slots grow while a barrier picks the next carrier), runs of
    // several blocks, a failed run in between (its parked fibers are abandoned), both forms,
    // and a change of stack size: every sum stays exact.
    let mut out = [0u32; 4];
    let mut a = [out.as_mut_ptr() as *mut c_void];
    let mut r = BlockRunner::new(64 * 1024);
    let ran = AtomicU32::new(0);
    let mut ta = [&ran as *const AtomicU32 as *mut c_void];
    for (i, &threads) in [32u32, 64, 1024, 256, 512, 2, 1024].iter().enumerate() {
        for block_form in [true, false] {
            let mut g = grid(
                reduce,
                a.as_mut_ptr(),
                Dim3::new(4, 1, 1),
                Dim3::new(threads, 1, 1),
                4 * threads as usize,
            );
            if block_form {
                g.block_fn = Some(reduce_block);
            }
            if i == 5 {
                g.stack_size = 32 * 1024;
            }
            out = [0; 4];
            a[0] = out.as_mut_ptr() as *mut c_void;
            assert_eq!(r.run_blocks(&g, 0, 4, None), (BlockOutcome::Completed, 3));
            let want = [threads * (threads + 1) / 2; 4];
            assert_eq!(out, want, "{threads} threads, block form {block_form}");
        }
        let t = grid(
            traps_at_5,
            ta.as_mut_ptr(),
            Dim3::new(1, 1, 1),
            Dim3::new(16, 1, 1),
            0,
        );
        assert!(matches!(r.run_block(&t, 0), BlockOutcome::Trapped { .. }));
    }
}

// Ring mode (a one-block run past its first barrier round) and what must leave it: rounds
// of barriers, then a warp shuffle, then barriers again, then (with args[1] = k + 1) thread
// k returning while the others wait, or (args[2] = k + 1) thread k trapping.
unsafe fn ring_thread_body(
    ctx: *mut KernelCtx,
    args: *mut *mut c_void,
    lp: *mut KernelLoop,
    t: u32,
) {
    let out = *args as *mut u32;
    let leaves = *args.add(1) as usize as u32;
    let traps = *args.add(2) as usize as u32;
    let n = (*ctx).block_dim.x;
    let sh = (*ctx).shared as *mut u32;
    let mut acc = 0u32;
    for round in 0..4u32 {
        *sh.add(t as usize) = t + round;
        unsafe { sync_threads(lp) };
        acc += *sh.add(((t + 1) % n) as usize);
        unsafe { sync_threads(lp) };
    }
    // Lane 0 of each warp gets the warp's sum of t.
    let mut v = t as u64;
    let mut d = 16;
    while d > 0 {
        v += unsafe { warp_exchange(lp, u32::MAX, WarpOp::ShflDown, v, d, 32) };
        d /= 2;
    }
    for _ in 0..3 {
        unsafe { sync_threads(lp) };
    }
    if leaves == t + 1 {
        return;
    }
    if traps == t + 1 {
        unsafe { trap(lp) };
    }
    unsafe { sync_threads(lp) };
    *out.add(t as usize) = acc;
    if t.is_multiple_of(32) {
        *out.add((n + t / 32) as usize) = v as u32;
    }
}

unsafe extern "C" fn ring_thread(args: *mut *mut c_void) {
    let ctx = kernel_ctx::current();
    ring_thread_body(ctx, args, std::ptr::null_mut(), (*ctx).thread_idx.x);
}

unsafe extern "C" fn ring_block(
    ctx: *mut KernelCtx,
    args: *mut *mut c_void,
    first: c_uint,
    end: c_uint,
) {
    block_loop(first, end, |lp, t| ring_thread_body(ctx, args, lp, t));
}

#[test]
fn ring_mode_gives_way_to_warps_returns_and_traps() {
    let n = 128u32;
    let mut out = vec![0u32; (n + n / 32) as usize];
    let mut r = BlockRunner::new(64 * 1024);
    // (Whoever leaves, the ring has some threads of the round already waiting.)
    for (leaves, traps) in [
        (0u32, 0u32),
        (1, 0),
        (6, 0),
        (65, 0),
        (128, 0),
        (0, 71),
        (0, 0),
    ] {
        out.iter_mut().for_each(|v| *v = 0);
        let mut a = [
            out.as_mut_ptr() as *mut c_void,
            leaves as usize as *mut c_void,
            traps as usize as *mut c_void,
        ];
        let mut g = grid(
            ring_thread,
            a.as_mut_ptr(),
            Dim3::new(1, 1, 1),
            Dim3::new(n, 1, 1),
            4 * n as usize,
        );
        g.block_fn = Some(ring_block);
        let o = r.run_block(&g, 0);
        match (leaves, traps) {
            (0, 0) => {
                assert_eq!(o, BlockOutcome::Completed);
                for t in 0..n {
                    let nb = (t + 1) % n;
                    assert_eq!(out[t as usize], 4 * nb + 6, "thread {t}");
                }
                for w in 0..n / 32 {
                    let lo = w * 32;
                    assert_eq!(out[(n + w) as usize], (lo..lo + 32).sum::<u32>());
                }
            }
            (_, 0) => assert_eq!(
                o,
                BlockOutcome::DivergentBarrier {
                    waiting: n - 1,
                    threads: n
                }
            ),
            _ => assert_eq!(
                o,
                BlockOutcome::Trapped {
                    thread: Dim3::new(70, 0, 0)
                }
            ),
        }
    }
}

// Random programs of barriers, warp shuffles, one early return and one trap, in both
// forms, on one runner: the outcome and every value against a model. Ring mode is entered
// and left at random points.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Op {
    Barrier,
    Shfl,
    Return(u32),
    Trap(u32),
}

struct Prog {
    ops: Vec<Op>,
    out: *mut u64,
}

unsafe fn run_prog(ctx: *mut KernelCtx, prog: &Prog, lp: *mut KernelLoop, t: u32) {
    let n = (*ctx).block_dim.x;
    let sh = (*ctx).shared as *mut u64;
    let mut acc = t as u64;
    for (i, op) in prog.ops.iter().enumerate() {
        match *op {
            Op::Barrier => {
                *sh.add(t as usize) = acc * 3 + i as u64;
                unsafe { sync_threads(lp) };
                acc += *sh.add(((t + 1) % n) as usize);
                unsafe { sync_threads(lp) };
            }
            Op::Shfl => {
                acc += unsafe { warp_exchange(lp, u32::MAX, WarpOp::ShflXor, acc, 1, 32) };
            }
            Op::Return(k) if k == t => return,
            Op::Trap(k) if k == t => unsafe { trap(lp) },
            _ => {}
        }
    }
    *prog.out.add(t as usize) = acc;
}

unsafe extern "C" fn prog_thread(args: *mut *mut c_void) {
    let prog = &*(*args as *const Prog);
    let ctx = kernel_ctx::current();
    run_prog(ctx, prog, std::ptr::null_mut(), (*ctx).thread_idx.x);
}

unsafe extern "C" fn prog_block(
    ctx: *mut KernelCtx,
    args: *mut *mut c_void,
    first: c_uint,
    end: c_uint,
) {
    let prog = &*(*args as *const Prog);
    block_loop(first, end, |lp, t| run_prog(ctx, prog, lp, t));
}

/// The model: the outcome, and the values when the block completes.
fn model(ops: &[Op], n: u32) -> (BlockOutcome, Vec<u64>) {
    let ret = ops.iter().position(|o| matches!(o, Op::Return(_)));
    // A trap by a thread that returned before it never happens.
    let trap = ops.iter().position(|o| matches!(o, Op::Trap(_))).filter(|&tp| {
        !matches!(ret, Some(r) if r < tp && matches!((ops[r], ops[tp]), (Op::Return(a), Op::Trap(b)) if a == b))
    });
    // The first barrier after the return, if the trap does not come first (a warp
    // operation does not wait for a lane that returned: CUDA's partial-warp rule).
    let diverges = ret.and_then(|r| {
        if n == 1 || trap.is_some_and(|tp| tp < r) {
            // (Alone, a thread that returns leaves nobody waiting.)
            return None;
        }
        let until = trap.unwrap_or(ops.len());
        ops[r + 1..until].iter().position(|o| *o == Op::Barrier)
    });
    if diverges.is_some() {
        return (
            BlockOutcome::DivergentBarrier {
                waiting: n - 1,
                threads: n,
            },
            vec![],
        );
    }
    if let Some(tp) = trap {
        let Op::Trap(k) = ops[tp] else { unreachable!() };
        return (
            BlockOutcome::Trapped {
                thread: Dim3::new(k, 0, 0),
            },
            vec![],
        );
    }
    let mut acc: Vec<u64> = (0..n as u64).collect();
    let mut alive = vec![true; n as usize];
    for (i, op) in ops.iter().enumerate() {
        match *op {
            Op::Barrier => {
                let sh: Vec<u64> = acc.iter().map(|a| a * 3 + i as u64).collect();
                for t in 0..n as usize {
                    acc[t] += sh[(t + 1) % n as usize];
                }
            }
            Op::Shfl => {
                // From a lane that returned: the caller's own value.
                let old = acc.clone();
                for t in 0..n as usize {
                    acc[t] += old[if alive[t ^ 1] { t ^ 1 } else { t }];
                }
            }
            Op::Return(k) => alive[k as usize] = false,
            Op::Trap(_) => {}
        }
    }
    let vals = (0..n as usize)
        .map(|t| if alive[t] { acc[t] } else { 0 })
        .collect();
    (BlockOutcome::Completed, vals)
}

#[test]
fn random_sync_programs_match_the_model() {
    let mut rnd = xorshift();
    let mut r = BlockRunner::new(64 * 1024);
    for case in 0..2000 {
        let n = [1u32, 2, 3, 32, 64, 96, 256][rnd(7) as usize];
        let warps = n.is_multiple_of(32);
        let len = 1 + rnd(8) as usize;
        let mut ops = Vec::new();
        let (mut returned, mut trapped) = (false, false);
        for _ in 0..len {
            ops.push(match rnd(10) {
                0 if !returned => {
                    returned = true;
                    Op::Return(rnd(n as u64) as u32)
                }
                1 if !trapped => {
                    trapped = true;
                    Op::Trap(rnd(n as u64) as u32)
                }
                2..=4 if warps => Op::Shfl,
                _ => Op::Barrier,
            });
        }
        let mut out = vec![0u64; n as usize];
        let prog = Prog {
            ops: ops.clone(),
            out: out.as_mut_ptr(),
        };
        let mut a = [&prog as *const Prog as *mut c_void];
        let block_form = rnd(2) == 0;
        let mut g = grid(
            prog_thread,
            a.as_mut_ptr(),
            Dim3::new(1, 1, 1),
            Dim3::new(n, 1, 1),
            8 * n as usize,
        );
        if block_form {
            g.block_fn = Some(prog_block);
        }
        let (want, vals) = model(&ops, n);
        let got = r.run_block(&g, 0);
        assert_eq!(
            got, want,
            "case {case}: {n} threads, block form {block_form}, {ops:?}"
        );
        if want == BlockOutcome::Completed {
            assert_eq!(out, vals, "case {case}: {n} threads, {ops:?}");
        }
    }
}

unsafe extern "C" fn divergent(_args: *mut *mut c_void) {
    if (*kernel_ctx::current()).thread_idx.x < 3 {
        unsafe { sync_threads(std::ptr::null_mut()) };
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
        unsafe { trap(std::ptr::null_mut()) };
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

// Warp sum by shuffle-down: lane 0 of each warp writes the sum of its warp's lanes.
unsafe extern "C" fn warp_sum(args: *mut *mut c_void) {
    let out = *args as *mut u32;
    let c = &*kernel_ctx::current();
    let t = c.thread_idx.x;
    let mut v = (t + 1) as u64;
    let mut d = 16;
    while d > 0 {
        v += unsafe { warp_exchange(std::ptr::null_mut(), u32::MAX, WarpOp::ShflDown, v, d, 32) };
        d /= 2;
    }
    if t.is_multiple_of(32) {
        *out.add((t / 32) as usize) = v as u32;
    }
}

#[test]
fn shuffle_down_sums_each_warp() {
    let mut out = [0u32; 4];
    let mut a = [out.as_mut_ptr() as *mut c_void];
    let g = grid(
        warp_sum,
        a.as_mut_ptr(),
        Dim3::new(1, 1, 1),
        Dim3::new(128, 1, 1),
        0,
    );
    let mut r = BlockRunner::new(64 * 1024);
    assert_eq!(r.run_block(&g, 0), BlockOutcome::Completed);
    for (w, &s) in out.iter().enumerate() {
        let lo = w as u32 * 32 + 1;
        assert_eq!(s, (lo..lo + 32).sum::<u32>());
    }
}

#[test]
fn a_bigger_block_after_a_smaller_one_gets_its_warps() {
    let mut r = BlockRunner::new(64 * 1024);
    for threads in [64u32, 128] {
        let mut out = [0u32; 4];
        let mut a = [out.as_mut_ptr() as *mut c_void];
        let g = grid(
            warp_sum,
            a.as_mut_ptr(),
            Dim3::new(1, 1, 1),
            Dim3::new(threads, 1, 1),
            0,
        );
        assert_eq!(r.run_block(&g, 0), BlockOutcome::Completed);
        let last = threads / 32 - 1;
        let lo = last * 32 + 1;
        assert_eq!(out[last as usize], (lo..lo + 32).sum::<u32>());
    }
}

/// Lanes `>= *args[1]` return at once; the others scan their values (linear index + 1)
/// with full-mask shuffles up (CUDA's shfl_scan) and write the scan and the ballot of all
/// lanes to `out[2 * t]`, `out[2 * t + 1]`.
unsafe extern "C" fn scan_unless_returned(args: *mut *mut c_void) {
    let out = *args as *mut u64;
    let keep = *(*args.add(1) as *const u32);
    let c = &*kernel_ctx::current();
    let t = linear(c.thread_idx, c.block_dim);
    let lane = t % 32;
    if lane >= keep {
        return;
    }
    let mut v = (t + 1) as u64;
    let mut d = 1;
    while d < 32 {
        let n = unsafe { warp_exchange(std::ptr::null_mut(), u32::MAX, WarpOp::ShflUp, v, d, 32) };
        if lane >= d as u32 {
            v += n;
        }
        d *= 2;
    }
    let b = unsafe { warp_exchange(std::ptr::null_mut(), u32::MAX, WarpOp::Ballot, 1, 0, 32) };
    *out.add(2 * t as usize) = v;
    *out.add(2 * t as usize + 1) = b;
}

#[test]
fn full_masks_wait_only_for_lanes_that_exist_and_have_not_returned() {
    let mut r = BlockRunner::new(64 * 1024);
    for (block, keep) in [
        (Dim3::new(120, 1, 1), 32),
        (Dim3::new(33, 1, 1), 32),
        (Dim3::new(7, 1, 1), 32),
        (Dim3::new(10, 5, 1), 32),
        (Dim3::new(64, 1, 1), 20),
        (Dim3::new(3, 4, 5), 9),
    ] {
        let n = block.volume() as u32;
        let mut out = vec![0u64; 2 * n as usize];
        let mut keep = keep;
        let mut a = [
            out.as_mut_ptr() as *mut c_void,
            &mut keep as *mut u32 as *mut c_void,
        ];
        let g = grid(
            scan_unless_returned,
            a.as_mut_ptr(),
            Dim3::new(1, 1, 1),
            block,
            0,
        );
        assert_eq!(r.run_block(&g, 0), BlockOutcome::Completed, "{block:?}");
        for t in 0..n {
            let (w, lane) = (t / 32, t % 32);
            let lanes = (n - w * 32).min(32).min(keep);
            if lane >= keep {
                assert_eq!(out[2 * t as usize], 0);
                continue;
            }
            let scan: u64 = (w * 32..=t).map(|x| x as u64 + 1).sum();
            assert_eq!(out[2 * t as usize], scan, "{block:?} thread {t}");
            let ballot = if lanes == 32 {
                u32::MAX
            } else {
                (1u32 << lanes) - 1
            };
            assert_eq!(
                out[2 * t as usize + 1],
                ballot as u64,
                "{block:?} thread {t}"
            );
        }
    }
}

unsafe extern "C" fn half_warp_waits_half_at_barrier(_: *mut *mut c_void) {
    if (*kernel_ctx::current()).thread_idx.x < 16 {
        unsafe { warp_exchange(std::ptr::null_mut(), u32::MAX, WarpOp::Sync, 0, 0, 32) };
    } else {
        unsafe { sync_threads(std::ptr::null_mut()) };
    }
}

#[test]
fn a_named_lane_that_waits_elsewhere_fails_the_run() {
    let g = grid(
        half_warp_waits_half_at_barrier,
        std::ptr::null_mut(),
        Dim3::new(1, 1, 1),
        Dim3::new(32, 1, 1),
        0,
    );
    let mut r = BlockRunner::new(64 * 1024);
    assert!(matches!(
        r.run_block(&g, 0),
        BlockOutcome::DivergentBarrier { .. } | BlockOutcome::DivergentWarp { .. }
    ));
}

unsafe extern "C" fn grid_count(args: *mut *mut c_void) {
    let ctr = *args as *const AtomicU32;
    let out = *args.add(1) as *mut u32;
    let c = &*kernel_ctx::current();
    (*ctr).fetch_add(1, Ordering::Relaxed);
    unsafe { grid_sync(std::ptr::null_mut()) };
    // Every thread of the grid has counted before any reads.
    let lin = c.block_idx.x * c.block_dim.x + c.thread_idx.x;
    *out.add(lin as usize) = (*ctr).load(Ordering::Relaxed);
}

// Block 1 skips the grid sync.
unsafe extern "C" fn grid_sync_but_block_1(_args: *mut *mut c_void) {
    if (*kernel_ctx::current()).block_idx.x != 1 {
        unsafe { grid_sync(std::ptr::null_mut()) };
    }
}

#[test]
fn grid_sync_waits_for_every_block() {
    let ctr = AtomicU32::new(0);
    let mut out = [0u32; 4 * 8];
    let mut a = [
        &ctr as *const AtomicU32 as *mut c_void,
        out.as_mut_ptr() as *mut c_void,
    ];
    let mut g = grid(
        grid_count,
        a.as_mut_ptr(),
        Dim3::new(4, 1, 1),
        Dim3::new(8, 1, 1),
        0,
    );
    let mut r = BlockRunner::new(64 * 1024);
    assert!(matches!(r.run_block(&g, 0), BlockOutcome::Misuse { .. }));
    ctr.store(0, Ordering::Relaxed);
    g.cooperative = true;
    assert_eq!(r.run_block(&g, 0), BlockOutcome::Completed);
    assert!(out.iter().all(|&v| v == 32));
    // A smaller cooperative grid after it: its carriers, idle since, had carried blocks the
    // new grid does not have (it entered block 3 of 3: an index out of bounds, a panic).
    let mut small = grid(
        grid_sync_but_block_1,
        std::ptr::null_mut(),
        Dim3::new(3, 1, 1),
        Dim3::new(8, 1, 1),
        0,
    );
    small.cooperative = true;
    assert_eq!(
        r.run_block(&small, 0),
        BlockOutcome::DivergentGrid {
            waiting: 16,
            threads: 24
        }
    );
    ctr.store(0, Ordering::Relaxed);
    g.grid = Dim3::new(3, 1, 1);
    assert_eq!(r.run_block(&g, 0), BlockOutcome::Completed);
    assert!(out[..24].iter().all(|&v| v == 24));
}

// Each thread counts itself at (block, thread); block 2's thread 3 traps when args[1] is
// non-null; every block does a barrier when args[2] is non-null.
unsafe extern "C" fn count_blocks(args: *mut *mut c_void) {
    let hits = *args as *const AtomicU32;
    let c = &*kernel_ctx::current();
    let (b, t) = (c.block_idx.x, c.thread_idx.x);
    if !(*args.add(2)).is_null() {
        unsafe { sync_threads(std::ptr::null_mut()) };
    }
    let c = &*kernel_ctx::current();
    if !(*args.add(1)).is_null() && b == 2 && t == 3 {
        unsafe { trap(std::ptr::null_mut()) };
    }
    (*hits.add((c.block_idx.x * c.block_dim.x + c.thread_idx.x) as usize))
        .fetch_add(1, Ordering::Relaxed);
}

#[test]
fn a_run_of_blocks_runs_each_thread_once_and_stops_at_a_failure() {
    let mut r = BlockRunner::new(64 * 1024);
    for barrier in [false, true] {
        let hits: Vec<AtomicU32> = (0..6 * 8).map(|_| AtomicU32::new(0)).collect();
        let flag = if barrier {
            std::ptr::dangling_mut::<c_void>()
        } else {
            std::ptr::null_mut()
        };
        let mut a = [hits.as_ptr() as *mut c_void, std::ptr::null_mut(), flag];
        let args = a.as_mut_ptr();
        let g = grid(
            count_blocks,
            args,
            Dim3::new(6, 1, 1),
            Dim3::new(8, 1, 1),
            0,
        );
        // Blocks 1..5 in one run: block 0 and 5 untouched, the others once per thread.
        assert_eq!(r.run_blocks(&g, 1, 4, None), (BlockOutcome::Completed, 4));
        for (i, h) in hits.iter().enumerate() {
            let want = u32::from((8..40).contains(&i));
            assert_eq!(
                h.load(Ordering::Relaxed),
                want,
                "barrier {barrier} slot {i}"
            );
        }
        // A trap in block 2 ends the run there: block 3 does not run.
        unsafe { *args.add(1) = std::ptr::dangling_mut::<c_void>() };
        for h in &hits {
            h.store(0, Ordering::Relaxed);
        }
        let (o, at) = r.run_blocks(&g, 0, 6, None);
        assert_eq!(at, 2);
        assert_eq!(
            o,
            BlockOutcome::Trapped {
                thread: Dim3::new(3, 0, 0)
            }
        );
        assert_eq!(hits[3 * 8].load(Ordering::Relaxed), 0);
        // A set stop flag ends the run after its first block.
        unsafe { *args.add(1) = std::ptr::null_mut() };
        let stop = AtomicBool::new(true);
        for h in &hits {
            h.store(0, Ordering::Relaxed);
        }
        assert_eq!(
            r.run_blocks(&g, 0, 6, Some(&stop)),
            (BlockOutcome::Completed, 0)
        );
        assert_eq!(
            hits.iter().map(|h| h.load(Ordering::Relaxed)).sum::<u32>(),
            8
        );
    }
}

#[test]
fn sync_and_trap_outside_kernels_do_nothing() {
    unsafe { sync_threads(std::ptr::null_mut()) };
    unsafe { trap(std::ptr::null_mut()) };
    assert_eq!(
        unsafe { warp_exchange(std::ptr::null_mut(), 1, WarpOp::Shfl, 7, 3, 32) },
        7
    );
}
