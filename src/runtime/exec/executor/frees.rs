//! Deferred frees (a `birenFree` of memory that enqueued work may still use waits for that
//! work) and, with the validator on, the quarantine of freed memory that catches writes after
//! free.

use super::{DeferredFree, Executor};
use crate::runtime::diagnostics::{self, validator};
use crate::runtime::error::{ErrorCode, Result};
use crate::runtime::exec::work::Point;
use crate::runtime::memory::Allocation;
use std::sync::atomic::Ordering;

/// Freed memory kept to catch writes after free (validator on).
const QUARANTINE_BYTES: usize = 8 << 20;

impl Executor {
    /// Returns a freed allocation's memory; with the validator on, keeps it poisoned in
    /// quarantine for a while to catch kernels that write to it after the free.
    pub fn release(&self, a: Allocation) {
        if a.guard == 0 || !diagnostics::validator_on() {
            self.memory.release(a);
            return;
        }
        unsafe { std::ptr::write_bytes(a.base as *mut u8, validator::POISON_FREED, a.size) };
        let evicted: Vec<Allocation> = {
            let mut q = self.quarantine.lock();
            q.bytes += a.size;
            q.allocs.push_back(a);
            let mut out = Vec::new();
            while q.bytes > QUARANTINE_BYTES {
                let Some(old) = q.allocs.pop_front() else {
                    break;
                };
                q.bytes -= old.size;
                out.push(old);
            }
            out
        };
        for a in evicted {
            self.memory.release(a);
        }
    }

    /// Empties the quarantine (when memory runs short, and at reset).
    pub fn drain_quarantine(&self) -> bool {
        let all: Vec<Allocation> = {
            let mut q = self.quarantine.lock();
            q.bytes = 0;
            q.allocs.drain(..).collect()
        };
        let any = !all.is_empty();
        for a in all {
            self.memory.release(a);
        }
        any
    }

    /// Validator: checks every allocation's guard zones and the quarantined freed memory. A
    /// damaged byte means `culprit` (or work that ran alongside it) wrote out of bounds or after
    /// a free: reported, and the device gets the sticky ILLEGAL_ADDRESS.
    pub fn check_memory(&self, culprit: &str) -> Result<()> {
        let mut problems = Vec::new();
        self.memory.for_each(|a| {
            let (block, len) = a.block();
            if let Some((first, last)) = validator::damaged_guard(a.base, a.size, block, len, a.guard) {
                let place = if last < 0 {
                    format!("bytes {first}..{last} before its start")
                } else if first >= 0 {
                    format!("bytes {first}..{last} past its end")
                } else {
                    format!("bytes {first}..{last}, before its start and past its end")
                };
                problems.push(format!(
                    "{culprit} wrote out of bounds of the {}-byte allocation at {:#x}: {place}. \
                     The launch fails with BIREN_ERROR_ILLEGAL_ADDRESS (sticky until birenDeviceReset).",
                    a.size, a.base
                ));
                validator::repair_guards(a);
            }
        });
        for a in self.quarantine.lock().allocs.iter() {
            let bytes = unsafe { std::slice::from_raw_parts(a.base as *const u8, a.size) };
            if let Some(off) = bytes.iter().position(|&b| b != validator::POISON_FREED) {
                problems.push(format!(
                    "{culprit} wrote to freed memory (use after free): the {}-byte allocation at {:#x}, offset {off}, was already freed. \
                     The launch fails with BIREN_ERROR_ILLEGAL_ADDRESS (sticky until birenDeviceReset).",
                    a.size, a.base
                ));
                unsafe {
                    std::ptr::write_bytes(a.base as *mut u8, validator::POISON_FREED, a.size)
                };
            }
        }
        if problems.is_empty() {
            return Ok(());
        }
        for p in &problems {
            diagnostics::finding("device memory", p);
        }
        self.set_sticky(ErrorCode::IllegalAddress);
        Err(ErrorCode::IllegalAddress)
    }

    /// Releases `a` once every point in `until` is reached (now, if they all are).
    pub fn free_after(&self, a: Allocation, mut until: Vec<Point>) {
        until.retain(|p| !p.reached());
        if until.is_empty() {
            self.release(a);
            return;
        }
        self.deferred
            .lock()
            .push_back(DeferredFree { alloc: a, until });
        self.has_deferred.store(true, Ordering::Release);
        self.reclaim_front();
    }

    /// The completion path (every op that completes, on the device's threads): releases the
    /// oldest deferred frees whose work has completed. It never waits for the list's lock (its
    /// holder looks again when it unlocks) and, when the oldest free is still pending, reads
    /// one of its points: the cost does not grow with the number of deferred frees.
    pub(super) fn reclaim_front(&self) {
        self.recheck.store(true, Ordering::SeqCst);
        while self.recheck.load(Ordering::SeqCst) {
            let Some(mut d) = self.deferred.try_lock() else {
                return; // the holder sees `recheck` after it unlocks
            };
            self.recheck.store(false, Ordering::SeqCst);
            while let Some(f) = d.front_mut() {
                // Points once reached stay reached: drop them as they are found.
                while f.until.last().is_some_and(|p| p.reached()) {
                    f.until.pop();
                }
                if !f.until.is_empty() {
                    break;
                }
                if let Some(f) = d.pop_front() {
                    self.release(f.alloc);
                }
            }
            if d.is_empty() {
                self.has_deferred.store(false, Ordering::Release);
            }
        }
    }

    /// After unlocking the deferred list elsewhere: a completion may have skipped its look.
    pub(super) fn after_deferred_unlock(&self) {
        if self.recheck.load(Ordering::SeqCst) {
            self.reclaim_front();
        }
    }

    /// Releases every deferred free whose work has completed, wherever it is in the list; true
    /// if any was released (the slow paths: an allocation that ran short, birenMemGetInfo, a
    /// device synchronize).
    ///
    /// Releases happen under the list's lock, so whoever takes the lock afterwards (another
    /// reclaim, an allocation that ran short) sees the memory back.
    pub fn reclaim(&self) -> bool {
        let mut d = self.deferred.lock();
        let mut any = false;
        let mut i = 0;
        while i < d.len() {
            d[i].until.retain(|p| !p.reached());
            if d[i].until.is_empty() {
                // (in order: the oldest stays at the front for `reclaim_front`)
                if let Some(f) = d.remove(i) {
                    self.release(f.alloc);
                }
                any = true;
            } else {
                i += 1;
            }
        }
        if d.is_empty() {
            self.has_deferred.store(false, Ordering::Release);
        }
        drop(d);
        self.after_deferred_unlock();
        any
    }

    /// The points deferred frees wait for (an allocation that fails for lack of memory waits
    /// for them and tries again).
    pub fn deferred_points(&self) -> Vec<Point> {
        let points = self
            .deferred
            .lock()
            .iter()
            .flat_map(|d| d.until.iter().cloned())
            .collect();
        self.after_deferred_unlock();
        points
    }

    /// Bytes held by deferred frees (released once their work completes).
    pub fn deferred_bytes(&self) -> u64 {
        let bytes = self.deferred.lock().iter().map(|d| d.alloc.reserved).sum();
        self.after_deferred_unlock();
        bytes
    }
}
