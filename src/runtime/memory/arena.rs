//! Device memory: one private mapping per memory table, carved by a small allocator.
//!
//! Device memory is not host heap memory: a kernel that writes through a stale pointer (after a
//! free or a reset) scribbles on device memory, as on real hardware, and can never corrupt the
//! runtime's own heap. The mapping is reserved with MAP_NORESERVE, so untouched capacity costs
//! nothing; freed ranges are reused, and large ones are handed back to the kernel.

use crate::runtime::lock_order::{Rank, RankedMutex};
use std::collections::BTreeMap;

const GRANULE: usize = 256;
/// Sizes up to this many bytes are kept in exact-size free lists.
const SMALL_MAX: usize = 16 * 1024;
/// Freed ranges at least this large are returned to the OS (madvise DONTNEED).
const RETURN_MIN: usize = 1 << 20;

pub struct Arena {
    base: usize,
    len: usize,
    /// The memfd the mapping shares (so another process can map an allocation: IPC), or -1
    /// when the arena is a private anonymous mapping (memfd unavailable).
    fd: i32,
    state: RankedMutex<State>,
}

struct State {
    /// Everything below `top` has been handed out at least once.
    top: usize,
    /// Free small blocks by size class (size / GRANULE - 1).
    small: Vec<Vec<usize>>,
    /// Free large ranges: offset -> length, coalesced.
    large: BTreeMap<usize, usize>,
}

// The arena hands out addresses; the bytes belong to whoever holds an allocation.
unsafe impl Send for Arena {}
unsafe impl Sync for Arena {}

impl Arena {
    /// Reserves `len` bytes of address space (nothing is committed until touched).
    pub fn new(len: usize) -> Option<Arena> {
        let len = len.checked_next_multiple_of(GRANULE)?.max(GRANULE);
        // A shared memory file first (device memory another process can map: IPC), else
        // private anonymous memory. Either way pages are committed only when touched.
        // SAFETY: plain system calls; every result is checked.
        let fd = unsafe { libc::memfd_create(c"biren-device-memory".as_ptr(), libc::MFD_CLOEXEC) };
        let shared = fd >= 0 && unsafe { libc::ftruncate(fd, len as libc::off_t) } == 0;
        if fd >= 0 && !shared {
            unsafe { libc::close(fd) };
        }
        let fd = if shared { fd } else { -1 };
        let flags = if shared {
            libc::MAP_SHARED | libc::MAP_NORESERVE
        } else {
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE
        };
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                flags,
                fd,
                0,
            )
        };
        if p == libc::MAP_FAILED {
            if fd >= 0 {
                unsafe { libc::close(fd) };
            }
            return None;
        }
        let classes = SMALL_MAX / GRANULE;
        Some(Arena {
            base: p as usize,
            len,
            fd,
            state: RankedMutex::new(
                Rank::Leaf,
                State {
                    top: 0,
                    small: vec![Vec::new(); classes],
                    large: BTreeMap::new(),
                },
            ),
        })
    }

    /// True if `p` lies in the arena.
    pub fn contains(&self, p: usize) -> bool {
        p >= self.base && p < self.base + self.len
    }

    /// Where `p` is in the shared memory file: (fd, offset), if the arena has one.
    pub fn file_location(&self, p: usize) -> Option<(i32, u64)> {
        (self.fd >= 0 && self.contains(p)).then(|| (self.fd, (p - self.base) as u64))
    }

    /// `size` bytes (a multiple of 256), 256-byte aligned, or None when the arena is full.
    pub fn alloc(&self, size: usize) -> Option<usize> {
        debug_assert!(size > 0 && size.is_multiple_of(GRANULE));
        let mut st = self.state.lock();
        if size <= SMALL_MAX {
            if let Some(off) = st.small[size / GRANULE - 1].pop() {
                return Some(self.base + off);
            }
        } else {
            let fit = st
                .large
                .iter()
                .find(|(_, &l)| l >= size)
                .map(|(&o, &l)| (o, l));
            if let Some((off, l)) = fit {
                st.large.remove(&off);
                if l > size {
                    st.large.insert(off + size, l - size);
                }
                return Some(self.base + off);
            }
        }
        let off = st.top;
        if self.len - off < size {
            return None;
        }
        st.top += size;
        Some(self.base + off)
    }

    /// Returns a block from `alloc` (same size).
    pub fn free(&self, p: usize, size: usize) {
        let off = p - self.base;
        let mut st = self.state.lock();
        if size <= SMALL_MAX {
            st.small[size / GRANULE - 1].push(off);
            return;
        }
        let (mut start, mut len) = (off, size);
        if let Some((&o, &l)) = st.large.range(..start).next_back() {
            if o + l == start {
                st.large.remove(&o);
                start = o;
                len += l;
            }
        }
        if let Some(&l) = st.large.get(&(off + size)) {
            st.large.remove(&(off + size));
            len += l;
        }
        if start + len == st.top {
            st.top = start; // the free range ends the used part: give it back to the bump
        } else {
            st.large.insert(start, len);
        }
        if size >= RETURN_MIN {
            // Under the lock: once it is released, the range may be handed out and written.
            self.give_back(off, size);
        }
    }

    /// Forgets every block (all were freed): the next allocations start afresh, and the pages
    /// go back to the OS.
    pub fn clear(&self) {
        let mut st = self.state.lock();
        let used = st.top;
        st.top = 0;
        st.small.iter_mut().for_each(Vec::clear);
        st.large.clear();
        self.give_back(0, used);
    }

    /// Hands the whole pages inside `[off, off + len)` back to the OS (they read as zeros
    /// afterwards). Only whole pages: the kernel rounds a partial page up, and the rest of that
    /// page may belong to a live neighbour. The caller holds the state lock, so the range cannot
    /// be handed out again before the pages are gone.
    fn give_back(&self, off: usize, len: usize) {
        // Whole pages only (neighbours may share the edge pages).
        let page = page_size();
        let start = (self.base + off).next_multiple_of(page);
        let end = (self.base + off + len) / page * page;
        if end > start {
            // A shared mapping's pages are released from the file (MADV_REMOVE), a private
            // one's dropped.
            let advice = if self.fd >= 0 {
                libc::MADV_REMOVE
            } else {
                libc::MADV_DONTNEED
            };
            // SAFETY: the pages lie in our mapping and hold no live allocation.
            unsafe { libc::madvise(start as *mut libc::c_void, end - start, advice) };
        }
    }
}

fn page_size() -> usize {
    static PAGE: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    // SAFETY: sysconf has no preconditions.
    *PAGE.get_or_init(|| match unsafe { libc::sysconf(libc::_SC_PAGESIZE) } {
        n if n > 0 => n as usize,
        _ => 4096,
    })
}

impl Drop for Arena {
    fn drop(&mut self) {
        unsafe { libc::munmap(self.base as *mut libc::c_void, self.len) };
        if self.fd >= 0 {
            unsafe { libc::close(self.fd) };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reuses_and_coalesces() {
        let a = Arena::new(1 << 24).unwrap();
        let x = a.alloc(256).unwrap();
        let y = a.alloc(256).unwrap();
        assert_ne!(x, y);
        assert_eq!(x % 256, 0);
        a.free(x, 256);
        assert_eq!(a.alloc(256), Some(x), "small blocks are reused");
        let big1 = a.alloc(64 * 1024).unwrap();
        let big2 = a.alloc(64 * 1024).unwrap();
        let _keep = a.alloc(256).unwrap();
        a.free(big1, 64 * 1024);
        a.free(big2, 64 * 1024);
        assert_eq!(a.alloc(128 * 1024), Some(big1), "neighbours coalesce");
        unsafe { std::ptr::write_bytes(big1 as *mut u8, 7, 128 * 1024) };
    }

    /// Regression: freeing a large block whose end is not on a page boundary zeroed the start of
    /// the live block after it (madvise rounds the length up to a whole page).
    #[test]
    fn giving_back_a_large_block_keeps_its_neighbours() {
        let a = Arena::new(1 << 26).unwrap();
        let before = a.alloc(4096).unwrap(); // so that `big` starts on a page boundary
        let size = (1000 * 1000 * 4usize).next_multiple_of(GRANULE) + GRANULE; // not whole pages
        let big = a.alloc(size).unwrap();
        let after = a.alloc(64 * 1024).unwrap();
        unsafe {
            std::ptr::write_bytes(before as *mut u8, 0x5A, 4096);
            std::ptr::write_bytes(big as *mut u8, 1, size);
            std::ptr::write_bytes(after as *mut u8, 0xA5, 64 * 1024);
        }
        a.free(big, size);
        let ok_after = unsafe { std::slice::from_raw_parts(after as *const u8, 64 * 1024) };
        let ok_before = unsafe { std::slice::from_raw_parts(before as *const u8, 4096) };
        assert!(
            ok_after.iter().all(|&b| b == 0xA5),
            "the next block was zeroed"
        );
        assert!(
            ok_before.iter().all(|&b| b == 0x5A),
            "the previous block was zeroed"
        );
    }

    #[test]
    fn full_arena_refuses() {
        let a = Arena::new(4096).unwrap();
        assert!(a.alloc(4096).is_some());
        assert!(a.alloc(256).is_none());
        a.clear();
        assert!(a.alloc(4096).is_some());
    }
}
