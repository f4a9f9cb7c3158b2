//! Ring mode's turns: the array a block's ring barrier walks (`Turn`), the order of a 2-D or 3-D
//! block's threads in it (`ring_order`), and how a compute unit chooses that order per kernel by
//! timing (`TurnOrder`). Part of `block`: the slots and the run are the block's (`super`).

use super::{Dim3, Slot};
use std::ffi::c_void;

/// A fiber's turn in ring mode (`Run::turns`): what the ring barrier reads of the fiber that
/// runs next and writes of the one that waits, kept in the ring's order so that the barrier
/// walks one array in sequence (which the processor fetches ahead) instead of a chain of slot
/// lines in the order the fibers were made.
#[derive(Clone, Copy)]
#[repr(C, align(32))]
pub(super) struct Turn {
    /// The fiber's saved stack pointer while it waits (its slot's `sp` is written back when the
    /// ring is left).
    pub(super) sp: *mut c_void,
    /// Its stack's top (the frame prefetch's limit).
    pub(super) top: usize,
    /// The index of its thread.
    pub(super) idx: Dim3,
    /// Its slot.
    pub(super) slot: u32,
}
const _: () = assert!(std::mem::size_of::<Turn>() == 32);

/// Blocks timed in each turn order before a unit chooses one for a kernel (`TurnOrder`).
pub(super) const ORDER_TRIALS: usize = 3;

/// The turn order a unit uses for the 2-D and 3-D blocks of one kernel (`ring_order`): row by
/// row (`threadIdx.x` fastest, the order threads start in) or column by column. Neither is
/// better for every kernel: column order lets a tiled matrix multiply's misses on different
/// rows overlap (~15% faster), row order keeps a 2-D copy's stores to one line together (column
/// order ~12% slower). So the unit times its first blocks of the kernel in each order, in turn
/// (from the ring's forming to the block's end), and keeps the faster: column order only when
/// its median is at least 3% below row order's.
#[derive(Clone, Copy)]
pub(super) struct TurnOrder {
    pub(super) kernel: usize,
    pub(super) block: Dim3,
    /// Nanoseconds per timed block, row order then column order.
    times: [[u64; ORDER_TRIALS]; 2],
    counts: [usize; 2],
    /// The order chosen (true: column), once both have been timed.
    chosen: Option<bool>,
}

impl TurnOrder {
    pub(super) fn new(kernel: usize, block: Dim3) -> TurnOrder {
        TurnOrder {
            kernel,
            block,
            times: [[0; ORDER_TRIALS]; 2],
            counts: [0; 2],
            chosen: None,
        }
    }

    /// The order for the next block (true: column), and whether to time it.
    pub(super) fn next(&self) -> (bool, bool) {
        match self.chosen {
            Some(c) => (c, false),
            None => (self.counts[1] < self.counts[0], true),
        }
    }

    /// A block in order `column` took `ns` from the ring's forming to its end.
    pub(super) fn record(&mut self, column: bool, ns: u64) {
        let k = column as usize;
        if self.chosen.is_some() || self.counts[k] == ORDER_TRIALS {
            return;
        }
        self.times[k][self.counts[k]] = ns;
        self.counts[k] += 1;
        if self.counts == [ORDER_TRIALS; 2] {
            let median = |t: &[u64; ORDER_TRIALS]| {
                let mut t = *t;
                t.sort_unstable();
                t[ORDER_TRIALS / 2]
            };
            let (row, col) = (median(&self.times[0]), median(&self.times[1]));
            self.chosen = Some(col.saturating_mul(100) < row.saturating_mul(97));
        }
    }
}

/// The orders a unit has chosen or is timing, one per kernel and block shape (at most
/// `TURN_ORDERS`, the oldest replaced).
pub(super) const TURN_ORDERS: usize = 16;

/// Nanoseconds of the monotonic clock.
pub(super) fn now_ns() -> u64 {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: a valid timespec; CLOCK_MONOTONIC always exists.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut t) };
    t.tv_sec as u64 * 1_000_000_000 + t.tv_nsec as u64
}

/// The ring's turns, into `turns` (capacity for every thread is reserved when the run starts),
/// in the order the threads take them at its barriers; returns the place of `cur` (running).
/// Row order keeps the round's order: the waiting ones `w`, then the last to arrive (`cur`)
/// (threads start `threadIdx.x` fastest). `column` (a block of two or three dimensions, when
/// the unit chose it: `TurnOrder`) goes column by column: `threadIdx.x` slowest, `threadIdx.z`
/// fastest (as HIP-CPU's fibers do). A tiled kernel's threads of one row read the same cache
/// line of a row-major matrix: in row order a turn after a miss waits for the same line
/// fifteen times over, while in column order each turn asks for another row's line and the
/// misses overlap (the tiled matrix multiply in 2-D blocks of 16x16: ~15% faster,
/// BENCHMARKS.md round eleven).
///
/// # Safety
/// `w` and `cur` are the block's `blockDim.x * .y * .z` fibers, each carrying one thread whose
/// index is in its slot.
pub(super) unsafe fn ring_order(
    turns: &mut Vec<Turn>,
    slots: *const Slot,
    w: &[u32],
    cur: u32,
    bd: Dim3,
    column: bool,
) -> u32 {
    let turn = |f: u32| {
        let s = unsafe { &*slots.add(f as usize) };
        Turn {
            sp: s.sp,
            top: s.top,
            idx: s.idx,
            slot: f,
        }
    };
    turns.clear();
    if !column || (bd.y == 1 && bd.z == 1) {
        turns.extend(w.iter().map(|&f| turn(f)));
        turns.push(turn(cur));
        return w.len() as u32;
    }
    let n = w.len() + 1;
    debug_assert_eq!(n, (bd.x * bd.y * bd.z) as usize);
    let mut none = turn(cur);
    none.slot = u32::MAX;
    turns.resize(n, none);
    let mut at_cur = 0;
    for &f in w.iter().chain(std::iter::once(&cur)) {
        let t = turn(f);
        let at = ((t.idx.x * bd.y + t.idx.y) * bd.z + t.idx.z) as usize;
        debug_assert_eq!(turns[at].slot, u32::MAX, "biren: a ring place taken twice");
        turns[at] = t;
        if f == cur {
            at_cur = at as u32;
        }
    }
    at_cur
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_turn_order_chosen_is_the_faster_by_three_percent() {
        let pick = |row: [u64; ORDER_TRIALS], col: [u64; ORDER_TRIALS]| {
            let mut o = TurnOrder::new(1, Dim3::new(16, 16, 1));
            for i in 0..ORDER_TRIALS {
                assert_eq!(o.next(), (false, true));
                o.record(false, row[i]);
                assert_eq!(o.next(), (true, true));
                o.record(true, col[i]);
            }
            let c = o.chosen.expect("chosen after the trials");
            assert_eq!(o.next(), (c, false));
            // Later times change nothing.
            o.record(!c, 1);
            assert_eq!(o.chosen, Some(c));
            c
        };
        assert!(pick([100, 100, 100], [80, 90, 95]), "column clearly faster");
        assert!(!pick([100, 100, 100], [98, 99, 97]), "within 3%: row");
        assert!(!pick([100, 90, 110], [120, 130, 110]), "column slower");
        // Medians: one slow block (an interrupt) does not decide.
        assert!(pick([100, 100, 1000], [90, 5000, 90]), "medians");
    }
}
