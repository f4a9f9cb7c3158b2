//! The costly checks the validator adds: guard zones around device allocations, poisoning of new
//! and freed memory, and guard checks that catch kernels writing out of bounds.

use super::diagnostics;
use super::memory::MemoryTable;

/// Fill of never-written device memory: 0xCD bytes read as a float are -4.3e8, as an int
/// -842150451 — hard to mistake for data.
pub(crate) const POISON_NEW: u8 = 0xCD;
/// Fill of the guard zones around every allocation.
pub(crate) const GUARD_BYTE: u8 = 0xFD;

/// Poisons a new allocation's user range and fills its guard zones.
pub fn poison_new(mem: &MemoryTable, base: usize) {
    mem.with(base, |a| {
        let (block, len) = a.block();
        unsafe {
            std::ptr::write_bytes(block, GUARD_BYTE, len);
            std::ptr::write_bytes(a.base as *mut u8, POISON_NEW, a.size);
        }
    });
}

/// The first damaged guard byte of an allocation: (offset from base, as signed).
pub fn damaged_guard(base: usize, size: usize, block: *mut u8, len: usize, guard: usize) -> Option<isize> {
    if guard == 0 {
        return None;
    }
    let bytes = unsafe { std::slice::from_raw_parts(block as *const u8, len) };
    let user_start = base - block as usize;
    let user_end = user_start + size;
    (0..user_start).chain(user_end..len).find(|&i| bytes[i] != GUARD_BYTE).map(|i| i as isize - user_start as isize)
}

/// Checks an allocation's guards when it is freed.
pub fn check_on_free(mem: &MemoryTable, base: usize) {
    mem.with(base, |a| {
        let (block, len) = a.block();
        if let Some(off) = damaged_guard(a.base, a.size, block, len, a.guard) {
            diagnostics::finding(
                "birenFree",
                &format!(
                    "the {}-byte allocation at {:#x} was written out of bounds (byte at offset {off}) before it was freed",
                    a.size, a.base
                ),
            );
        }
    });
}
