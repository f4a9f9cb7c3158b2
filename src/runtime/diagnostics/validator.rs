//! The costly checks the validator adds: guard zones around device allocations, poisoning of new
//! and freed memory, and guard checks that catch kernels writing out of bounds.

use crate::runtime::diagnostics;
use crate::runtime::memory::{Allocation, MemoryTable};

pub(crate) use crate::runtime::memory::{GUARD_BYTE, POISON_FREED};

/// The damaged guard bytes of an allocation, as a range of offsets from its base (negative:
/// before its start): (first, last).
pub fn damaged_guard(
    base: usize,
    size: usize,
    block: *mut u8,
    len: usize,
    guard: usize,
) -> Option<(isize, isize)> {
    if guard == 0 {
        return None;
    }
    let bytes = unsafe { std::slice::from_raw_parts(block as *const u8, len) };
    let user_start = base - block as usize;
    let user_end = user_start + size;
    let bad = |i: &usize| bytes[*i] != GUARD_BYTE;
    let off = |i: usize| i as isize - user_start as isize;
    let first = (0..user_start).chain(user_end..len).find(bad)?;
    let last = (0..user_start).chain(user_end..len).rev().find(bad)?;
    Some((off(first), off(last)))
}

/// Restores an allocation's guard zones after a reported overwrite.
pub fn repair_guards(a: &Allocation) {
    let (block, len) = a.block();
    let user_start = a.base - block as usize;
    unsafe {
        std::ptr::write_bytes(block, GUARD_BYTE, user_start);
        std::ptr::write_bytes(
            (a.base + a.size) as *mut u8,
            GUARD_BYTE,
            len - user_start - a.size,
        );
    }
}

/// Checks an allocation's guards when it is freed.
pub fn check_on_free(mem: &MemoryTable, base: usize) {
    mem.with(base, |a| {
        let (block, len) = a.block();
        if let Some((first, last)) = damaged_guard(a.base, a.size, block, len, a.guard) {
            diagnostics::finding(
                "birenFree",
                &format!(
                    "the {}-byte allocation at {:#x} was written out of bounds (offsets {first}..{last}) before it was freed",
                    a.size, a.base
                ),
            );
        }
    });
}
