//! Static shared memory (`BIREN_SHARED`) per block while a unit holds several blocks at once.
//!
//! `BIREN_SHARED` arrays are thread-locals of the compute unit's OS thread: per block as long as
//! a unit runs one block at a time. A cooperative grid runs all its blocks at once on one unit,
//! as fibers of that one thread, so the unit keeps a copy of those thread-locals per block and
//! swaps it in when it turns to another block (`Run::enter_block`). The header places the arrays
//! in one section, `biren_shared`, of each program or library (a part of that module's
//! thread-local block), and registers from a constructor a function that returns the section's
//! bounds on the calling thread (`register`).

use std::ffi::c_void;
use std::sync::Mutex;

/// Writes the bounds of a module's `biren_shared` section, on the calling thread.
pub type SectionBounds = unsafe extern "C" fn(*mut *mut c_void, *mut *mut c_void);

/// The registered modules' bounds functions.
static SECTIONS: Mutex<Vec<SectionBounds>> = Mutex::new(Vec::new());

/// Records a module's bounds function (again: no change).
pub fn register(f: SectionBounds) {
    let mut s = SECTIONS.lock().unwrap_or_else(|e| e.into_inner());
    if !s.iter().any(|&g| g as usize == f as usize) {
        s.push(f);
    }
}

/// Forgets a module's bounds function (its module is being unloaded); unknown: no change.
pub fn unregister(f: SectionBounds) {
    let mut s = SECTIONS.lock().unwrap_or_else(|e| e.into_inner());
    s.retain(|&g| g as usize != f as usize);
}

/// The copies of one run's blocks: which block's data the thread-locals hold, and the others'.
#[derive(Default)]
pub(super) struct BlockCopies {
    /// The sections on this thread, (start, length), disjoint; empty when off.
    ranges: Vec<(usize, usize)>,
    total: usize,
    /// Block b's copy is `saved[b * total..][..total]` while another block's is live.
    saved: Vec<u8>,
    live: u32,
}

impl BlockCopies {
    /// Starts a run of `blocks` blocks on the calling thread, the first one's data live: keeps a
    /// copy per block when there are several (else nothing to do).
    pub(super) fn start(&mut self, blocks: u32) {
        self.ranges.clear();
        self.total = 0;
        self.live = 0;
        if blocks < 2 {
            return;
        }
        let fs: Vec<SectionBounds> = SECTIONS.lock().unwrap_or_else(|e| e.into_inner()).clone();
        for f in fs {
            let (mut b, mut e) = (std::ptr::null_mut(), std::ptr::null_mut());
            // SAFETY: a registered function of a loaded module (its destructor unregisters it).
            unsafe { f(&mut b, &mut e) };
            let (b, e) = (b as usize, e as usize);
            if b != 0 && e > b {
                self.ranges.push((b, e - b));
            }
        }
        // Every translation unit of a module registers the same section: once each.
        self.ranges.sort_unstable();
        self.ranges.dedup();
        let mut merged: Vec<(usize, usize)> = Vec::with_capacity(self.ranges.len());
        for &(b, n) in &self.ranges {
            match merged.last_mut() {
                Some((mb, mn)) if b <= *mb + *mn => *mn = (*mn).max(b + n - *mb),
                _ => merged.push((b, n)),
            }
        }
        self.ranges = merged;
        self.total = self.ranges.iter().map(|r| r.1).sum();
        let want = self.total * blocks as usize;
        if self.saved.len() < want {
            self.saved.resize(want, 0);
        }
    }

    /// Makes block `b`'s data the live one (saving the live block's).
    #[inline]
    pub(super) fn enter(&mut self, b: u32) {
        if b != self.live && self.total != 0 {
            self.swap(b);
        }
    }

    #[cold]
    #[inline(never)]
    fn swap(&mut self, b: u32) {
        let (old, new) = (self.live as usize * self.total, b as usize * self.total);
        let mut at = 0;
        for &(start, n) in &self.ranges {
            // SAFETY: the section is this thread's (`start`), `n` bytes of it; `saved` holds
            // `total` bytes per block of the run.
            unsafe {
                let live = start as *mut u8;
                let saved = self.saved.as_mut_ptr();
                std::ptr::copy_nonoverlapping(live, saved.add(old + at), n);
                std::ptr::copy_nonoverlapping(saved.add(new + at), live, n);
            }
            at += n;
        }
        self.live = b;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::UnsafeCell;

    thread_local! {
        static SECTION: UnsafeCell<[u32; 8]> = const { UnsafeCell::new([0; 8]) };
    }

    unsafe extern "C" fn bounds(b: *mut *mut c_void, e: *mut *mut c_void) {
        SECTION.with(|s| unsafe {
            *b = s.get() as *mut c_void;
            *e = (s.get() as *mut u32).add(8) as *mut c_void;
        });
    }

    #[test]
    fn each_block_keeps_its_own_copy_of_the_section() {
        register(bounds);
        register(bounds);
        let at = |i: usize| SECTION.with(|s| unsafe { (s.get() as *mut u32).add(i) });
        let mut c = BlockCopies::default();
        c.start(3);
        for b in 0..3u32 {
            c.enter(b);
            unsafe { *at(0) = 100 + b };
        }
        for b in [1u32, 0, 2, 2, 1] {
            c.enter(b);
            assert_eq!(unsafe { *at(0) }, 100 + b);
        }
        // One block: nothing is kept.
        c.start(1);
        assert_eq!(c.total, 0);
        unregister(bounds);
        c.start(2);
        assert!(c.ranges.iter().all(|&(s, _)| s != at(0) as usize));
    }
}
