//! The table of live allocations: device memory (with a capacity) and registered host memory.
//! Lookups of the allocation a pointer lies in are O(log n) in an ordered map.

pub mod arena;
pub mod array;
pub mod host;
pub mod managed;
pub mod pool;
pub mod side;

use crate::runtime::error::{ErrorCode, Result};
use crate::runtime::lock_order::{Rank, RankedMutex, RankedRwLock};
use arena::Arena;
use std::alloc::Layout;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};

pub(crate) const ALIGN: usize = 256;

/// Fill of never-written device memory: 0xCD bytes read as a float are -4.3e8, as an int
/// -842150451 — hard to mistake for data.
pub(crate) const POISON_NEW: u8 = 0xCD;
/// Fill of freed device memory kept in quarantine: a kernel that writes it wrote after a free.
pub(crate) const POISON_FREED: u8 = 0xDD;
/// Fill of the guard zones around every allocation.
pub(crate) const GUARD_BYTE: u8 = 0xFD;

/// One live allocation: `[base, base + size)` is the user's; the block behind it may be larger
/// (alignment padding, validator guard zones).
#[derive(Debug)]
pub struct Allocation {
    pub base: usize,
    pub size: usize,
    /// Bytes counted against the capacity.
    pub reserved: u64,
    /// Guard bytes on each side of the user range (0 without the validator).
    pub guard: usize,
    block: *mut u8,
    block_len: usize,
    /// Unique, increasing allocation number (for reports).
    pub serial: u64,
    /// Return address of the code that made it (for leak reports), 0 if unknown.
    pub caller: usize,
}

unsafe impl Send for Allocation {}
unsafe impl Sync for Allocation {}

impl Allocation {
    pub fn end(&self) -> usize {
        self.base + self.size
    }
    /// The whole block, guards included: (start, len).
    pub fn block(&self) -> (*mut u8, usize) {
        (self.block, self.block_len)
    }
    /// Memory the runtime knows but does not own (birenHostRegister).
    pub fn is_foreign(&self) -> bool {
        self.block_len == 0
    }
}

/// Where a pointer lies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Region {
    pub base: usize,
    pub size: usize,
}

/// Where a table's memory comes from.
enum Backing {
    /// The host heap (page-locked host memory).
    Heap,
    /// A device arena: stale writes never reach the host heap.
    Arena(Arena),
}

pub struct MemoryTable {
    map: RankedRwLock<BTreeMap<usize, Allocation>>,
    backing: Backing,
    used: AtomicU64,
    capacity: u64,
    serial: AtomicU64,
    /// Capacity that memory pools keep in reserve (counted in `used`), and the generation of
    /// those holds: `drop_holds` takes them all back and starts a new one.
    held: RankedMutex<Held>,
}

/// Capacity held by pools (`MemoryTable::hold`).
#[derive(Default)]
struct Held {
    bytes: u64,
    generation: u64,
}

impl MemoryTable {
    /// A table of host memory (no capacity in practice).
    pub fn new(capacity: u64) -> MemoryTable {
        MemoryTable {
            map: RankedRwLock::new(Rank::Leaf, BTreeMap::new()),
            backing: Backing::Heap,
            used: AtomicU64::new(0),
            capacity,
            serial: AtomicU64::new(0),
            held: RankedMutex::new(Rank::Leaf, Held::default()),
        }
    }

    /// A table of device memory: its own arena of address space, twice the capacity plus room
    /// for the validator's guard zones (reserved, not committed). Falls back to the host heap if
    /// the address space cannot be reserved.
    pub fn device(capacity: u64) -> MemoryTable {
        let len = (capacity as usize)
            .saturating_mul(2)
            .saturating_add(256 << 20);
        let mut t = MemoryTable::new(capacity);
        if let Some(a) = Arena::new(len) {
            t.backing = Backing::Arena(a);
        }
        t
    }

    /// Where the allocation byte `p` lives in a shared memory file (fd, offset), for IPC.
    pub fn file_location(&self, p: usize) -> Option<(i32, u64)> {
        match &self.backing {
            Backing::Arena(a) => a.file_location(p),
            Backing::Heap => None,
        }
    }

    pub fn capacity(&self) -> u64 {
        self.capacity
    }

    pub fn used(&self) -> u64 {
        self.used.load(Ordering::SeqCst)
    }

    /// Holds `bytes` of capacity for a memory pool's reserve (memory freed to the pool and kept,
    /// as CUDA's pools keep it up to their release threshold): counted as used until `unhold`.
    /// Returns the holds' generation, or None when the capacity is not there.
    pub fn hold(&self, bytes: u64) -> Option<u64> {
        let mut h = self.held.lock();
        if !self.reserve(bytes) {
            return None;
        }
        h.bytes += bytes;
        Some(h.generation)
    }

    /// Gives back `bytes` held in generation `generation` (nothing if the holds were dropped
    /// since: they are back already).
    pub fn unhold(&self, bytes: u64, generation: u64) {
        let mut h = self.held.lock();
        if h.generation == generation {
            let b = bytes.min(h.bytes);
            h.bytes -= b;
            self.used.fetch_sub(b, Ordering::SeqCst);
        }
    }

    /// Takes back every pool's reserve (an allocation ran short, or a reset); true if there was
    /// any. The pools see it by the generation of their holds.
    pub fn drop_holds(&self) -> bool {
        let mut h = self.held.lock();
        h.generation += 1;
        let b = std::mem::take(&mut h.bytes);
        self.used.fetch_sub(b, Ordering::SeqCst);
        b != 0
    }

    /// The generation of the holds now.
    pub fn hold_generation(&self) -> u64 {
        self.held.lock().generation
    }

    fn reserve(&self, bytes: u64) -> bool {
        self.used
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |u| {
                u.checked_add(bytes).filter(|&n| n <= self.capacity)
            })
            .is_ok()
    }

    /// Allocates `size` bytes (> 0), 256-byte aligned, with `guard` bytes (a multiple of 256)
    /// on each side. With guards (the validator's), the guards are filled and the user range
    /// poisoned before the allocation is registered. `OutOfMemory` past the capacity or when the
    /// host refuses.
    pub fn allocate(&self, size: usize, guard: usize, caller: usize) -> Result<usize> {
        debug_assert!(size > 0 && guard.is_multiple_of(ALIGN));
        let rounded = size
            .checked_next_multiple_of(ALIGN)
            .ok_or(ErrorCode::OutOfMemory)?;
        let total = rounded
            .checked_add(2 * guard)
            .ok_or(ErrorCode::OutOfMemory)?;
        if total > isize::MAX as usize / 2 {
            return Err(ErrorCode::OutOfMemory);
        }
        let reserved = rounded as u64;
        if !self.reserve(reserved) {
            return Err(ErrorCode::OutOfMemory);
        }
        let block = match &self.backing {
            Backing::Arena(a) => a
                .alloc(total)
                .map_or(std::ptr::null_mut(), |p| p as *mut u8),
            Backing::Heap => match Layout::from_size_align(total, ALIGN) {
                // SAFETY: the layout has a non-zero size.
                Ok(layout) => unsafe { std::alloc::alloc(layout) },
                Err(_) => std::ptr::null_mut(),
            },
        };
        if block.is_null() {
            self.used.fetch_sub(reserved, Ordering::SeqCst);
            return Err(ErrorCode::OutOfMemory);
        }
        let base = block as usize + guard;
        if guard > 0 {
            // Guards and poison before the allocation becomes visible: a concurrent guard check
            // must never see unfilled guard bytes.
            unsafe {
                std::ptr::write_bytes(block, GUARD_BYTE, total);
                std::ptr::write_bytes(base as *mut u8, POISON_NEW, size);
            }
        }
        let a = Allocation {
            base,
            size,
            reserved,
            guard,
            block,
            block_len: total,
            serial: self.serial.fetch_add(1, Ordering::Relaxed) + 1,
            caller,
        };
        self.map.write().insert(base, a);
        Ok(base)
    }

    /// Unregisters the allocation that starts at `base`; the memory stays reserved until
    /// `release`. `InvalidDevicePointer` if no live allocation starts there.
    pub fn unregister(&self, base: usize) -> Result<Allocation> {
        self.map
            .write()
            .remove(&base)
            .ok_or(ErrorCode::InvalidDevicePointer)
    }

    /// Makes `[base, base + size)`, memory the caller owns, known to the table (size > 0).
    /// `HostMemoryAlreadyRegistered` if it overlaps a live allocation or registered range.
    pub fn register_foreign(&self, base: usize, size: usize, caller: usize) -> Result<()> {
        let end = base.checked_add(size).ok_or(ErrorCode::InvalidValue)?;
        let mut m = self.map.write();
        if let Some((_, a)) = m.range(..end).next_back() {
            if a.end() > base {
                return Err(ErrorCode::HostMemoryAlreadyRegistered);
            }
        }
        let a = Allocation {
            base,
            size,
            reserved: 0,
            guard: 0,
            block: std::ptr::null_mut(),
            block_len: 0,
            serial: self.serial.fetch_add(1, Ordering::Relaxed) + 1,
            caller,
        };
        m.insert(base, a);
        Ok(())
    }

    /// Unregisters the allocation that starts at `base` if `keep` says so;
    /// `InvalidDevicePointer` if none starts there or `keep` refuses it.
    pub fn unregister_if(
        &self,
        base: usize,
        keep: impl Fn(&Allocation) -> bool,
    ) -> Result<Allocation> {
        let mut m = self.map.write();
        match m.get(&base) {
            Some(a) if keep(a) => Ok(m.remove(&base).expect("present")),
            _ => Err(ErrorCode::InvalidDevicePointer),
        }
    }

    /// Returns an unregistered allocation's memory to its backing and the capacity.
    pub fn release(&self, a: Allocation) {
        if a.is_foreign() {
            return;
        }
        match &self.backing {
            Backing::Arena(arena) => arena.free(a.block as usize, a.block_len),
            // SAFETY: block came from std::alloc::alloc with this size and alignment.
            Backing::Heap => unsafe {
                std::alloc::dealloc(
                    a.block,
                    Layout::from_size_align_unchecked(a.block_len, ALIGN),
                )
            },
        }
        self.used.fetch_sub(a.reserved, Ordering::SeqCst);
    }

    /// After every allocation was released (reset): the device memory's pages go back to the OS.
    pub fn reclaim_backing(&self) {
        if let Backing::Arena(a) = &self.backing {
            if self.map.read().is_empty() && self.used() == 0 {
                a.clear();
            }
        }
    }

    /// The allocation `[base, base+size)` that contains `p`, if any.
    pub fn find(&self, p: usize) -> Option<Region> {
        let m = self.map.read();
        let (_, a) = m.range(..=p).next_back()?;
        (p < a.end()).then_some(Region {
            base: a.base,
            size: a.size,
        })
    }

    /// Runs `f` on the allocation that contains `p`.
    pub fn with<R>(&self, p: usize, f: impl FnOnce(&Allocation) -> R) -> Option<R> {
        let m = self.map.read();
        let (_, a) = m.range(..=p).next_back()?;
        (p < a.end()).then(|| f(a))
    }

    /// Checks that `[p, p+len)` lies inside one live allocation (len > 0).
    pub fn check_range(&self, p: usize, len: usize) -> Result<Region> {
        let r = self.find(p).ok_or(ErrorCode::InvalidDevicePointer)?;
        match p.checked_add(len) {
            Some(end) if end <= r.base + r.size => Ok(r),
            _ => Err(ErrorCode::OutOfBounds),
        }
    }

    /// Whether `[p, p+len)` (len > 0) touches an allocation: `None` if it touches none,
    /// `Some(Ok)` if it lies inside one, `Some(Err(OutOfBounds))` if it overlaps one without
    /// fitting in it (it starts inside and runs past the end, or runs into one from outside).
    pub fn touches(&self, p: usize, len: usize) -> Option<Result<Region>> {
        let end = p.saturating_add(len);
        let m = self.map.read();
        if let Some((_, a)) = m.range(..=p).next_back() {
            if p < a.end() {
                let r = Region {
                    base: a.base,
                    size: a.size,
                };
                return Some(if end <= a.end() && p.checked_add(len).is_some() {
                    Ok(r)
                } else {
                    Err(ErrorCode::OutOfBounds)
                });
            }
        }
        let next = m.range(p.saturating_add(1)..end).next();
        next.map(|_| Err(ErrorCode::OutOfBounds))
    }

    /// Unregisters every allocation (for reset), returning them.
    pub fn unregister_all(&self) -> Vec<Allocation> {
        std::mem::take(&mut *self.map.write())
            .into_values()
            .collect()
    }

    /// Runs `f` over every live allocation, under the table's lock (a leaf of the lock order:
    /// `f` takes no lock).
    pub fn for_each(&self, mut f: impl FnMut(&Allocation)) {
        for a in self.map.read().values() {
            f(a);
        }
    }

    pub fn count(&self) -> usize {
        self.map.read().len()
    }
}

impl Drop for MemoryTable {
    fn drop(&mut self) {
        for a in self.unregister_all() {
            self.release(a);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aligned_and_counted() {
        let t = MemoryTable::new(1 << 20);
        let p = t.allocate(100, 0, 0).unwrap();
        assert_eq!(p % ALIGN, 0);
        assert_eq!(t.used(), 256);
        let a = t.unregister(p).unwrap();
        t.release(a);
        assert_eq!(t.used(), 0);
    }

    #[test]
    fn capacity_is_enforced() {
        let t = MemoryTable::device(4096);
        let a = t.allocate(4096, 0, 0).unwrap();
        assert_eq!(t.allocate(1, 0, 0), Err(ErrorCode::OutOfMemory));
        assert_eq!(t.allocate(usize::MAX, 0, 0), Err(ErrorCode::OutOfMemory));
        assert_eq!(
            t.allocate(usize::MAX - 10, 256, 0),
            Err(ErrorCode::OutOfMemory)
        );
        t.release(t.unregister(a).unwrap());
        assert!(t.allocate(4000, 0, 0).is_ok());
    }

    #[test]
    fn lookups_and_ranges() {
        let t = MemoryTable::new(1 << 30);
        let a = t.allocate(3072, 0, 0).unwrap();
        let b = t.allocate(100, 256, 0).unwrap();
        assert_eq!(
            t.find(a),
            Some(Region {
                base: a,
                size: 3072
            })
        );
        assert_eq!(
            t.find(a + 3071),
            Some(Region {
                base: a,
                size: 3072
            })
        );
        assert_eq!(t.find(a + 3072), None);
        assert_eq!(t.find(b + 99).map(|r| r.base), Some(b));
        assert_eq!(t.find(b - 1), None, "guard zone is not the user's");
        assert!(t.check_range(a, 3072).is_ok());
        assert_eq!(t.check_range(a + 2048, 2048), Err(ErrorCode::OutOfBounds));
        assert_eq!(t.check_range(a, usize::MAX), Err(ErrorCode::OutOfBounds));
        assert_eq!(
            t.check_range(12345, 1),
            Err(ErrorCode::InvalidDevicePointer)
        );
        assert_eq!(
            t.unregister(a + 1).unwrap_err(),
            ErrorCode::InvalidDevicePointer
        );
        let al = t.unregister(a).unwrap();
        assert_eq!(
            t.unregister(a).unwrap_err(),
            ErrorCode::InvalidDevicePointer,
            "double free"
        );
        t.release(al);
    }

    #[test]
    fn foreign_ranges() {
        let t = MemoryTable::new(u64::MAX);
        let mut buf = vec![0u8; 4096];
        let b = buf.as_mut_ptr() as usize;
        t.register_foreign(b + 1024, 1024, 0).unwrap();
        assert_eq!(t.find(b + 2047).map(|r| r.base), Some(b + 1024));
        assert_eq!(t.check_range(b + 1024, 1025), Err(ErrorCode::OutOfBounds));
        for (at, len) in [(b, 1025), (b + 2047, 10), (b + 1500, 1), (b, 4096)] {
            assert_eq!(
                t.register_foreign(at, len, 0),
                Err(ErrorCode::HostMemoryAlreadyRegistered)
            );
        }
        t.register_foreign(b, 1024, 0).unwrap();
        t.register_foreign(b + 2048, 1024, 0).unwrap();
        assert!(t.unregister_if(b + 1024, |a| !a.is_foreign()).is_err());
        let a = t.unregister_if(b + 1024, |a| a.is_foreign()).unwrap();
        t.release(a);
        assert_eq!(t.used(), 0);
        assert_eq!(t.count(), 2);
        buf[0] = 1;
    }

    #[test]
    fn thousands_of_allocations() {
        let t = MemoryTable::device(1 << 30);
        let ps: Vec<usize> = (0..5000)
            .map(|i| t.allocate(64 + i, 0, 0).unwrap())
            .collect();
        for (i, &p) in ps.iter().enumerate() {
            assert_eq!(t.find(p + 10).unwrap().size, 64 + i);
        }
        assert_eq!(t.count(), 5000);
    }
}
