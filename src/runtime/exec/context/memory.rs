//! Device memory as the context hands it out: allocation (which may wait for deferred frees to
//! make room) and `birenFree` (which waits for the work that may use the memory).

use super::DeviceContext;
use crate::device::engine::on_device_thread;
use crate::runtime::error::{ErrorCode, Result};
use crate::runtime::exec::stream::StreamPoint;
use crate::runtime::exec::work::Point;

impl DeviceContext {
    /// Frees a device allocation once the work enqueued so far no longer needs it.
    pub fn free(&self, base: usize) -> Result<()> {
        let a = self.exec.memory.unregister(base)?;
        if self.exec.is_idle() {
            self.exec.release(a);
        } else {
            let until = self
                .all_streams()
                .iter()
                .filter_map(|s| s.pending_tail().map(|p| p.point()))
                .collect();
            self.exec.free_after(a, until);
        }
        Ok(())
    }

    /// Allocates, waiting for deferred frees when the device is full (not on the device's own
    /// threads: a host function would wait for work queued behind itself); race detection
    /// learns of the allocation (every kind: birenMalloc, pitched, 3-D, managed, pools).
    pub fn malloc(&self, size: usize, guard: usize, caller: usize) -> Result<usize> {
        let p = self.allocate(size, guard, caller)?;
        if crate::runtime::diagnostics::racecheck::on() {
            crate::runtime::diagnostics::racecheck::alloc(p, size, Some(self.index));
        }
        Ok(p)
    }

    pub(super) fn allocate(&self, size: usize, guard: usize, caller: usize) -> Result<usize> {
        let _no_reset = self.creating();
        match self.exec.memory.allocate(size, guard, caller) {
            Err(ErrorCode::OutOfMemory) => {
                // Memory pools' reserves (memory freed to them and kept) come back first.
                if self.exec.memory.drop_holds() {
                    if let Ok(p) = self.exec.memory.allocate(size, guard, caller) {
                        return Ok(p);
                    }
                }
                // Memory whose work has completed comes back. (A synchronize may return
                // just before the completing thread releases it; that thread may also have
                // released it since our attempt: retry either way.)
                self.exec.reclaim();
                if let Ok(p) = self.exec.memory.allocate(size, guard, caller) {
                    return Ok(p);
                }
                if on_device_thread() {
                    return Err(ErrorCode::OutOfMemory);
                }
                // Would it fit once the deferred frees are released? If not, no wait helps.
                let rounded = (size as u64)
                    .checked_next_multiple_of(256)
                    .unwrap_or(u64::MAX);
                let mem = &self.exec.memory;
                let after = mem.used().saturating_sub(self.exec.deferred_bytes());
                if after.saturating_add(rounded) > mem.capacity() {
                    if self.exec.drain_quarantine() {
                        return mem.allocate(size, guard, caller);
                    }
                    return Err(ErrorCode::OutOfMemory);
                }
                let points = self.exec.deferred_points();
                if points.is_empty() {
                    if self.exec.drain_quarantine() {
                        return self.exec.memory.allocate(size, guard, caller);
                    }
                    return Err(ErrorCode::OutOfMemory);
                }
                for p in points {
                    // Work that can never finish holds its memory for good: out of memory.
                    self.wait_deferred(&p).map_err(|_| ErrorCode::OutOfMemory)?;
                }
                self.exec.reclaim();
                self.exec.memory.allocate(size, guard, caller)
            }
            r => r,
        }
    }

    /// Waits for a point a deferred free waits for (the executor names the stream by id only).
    pub(super) fn wait_deferred(&self, p: &Point) -> Result<()> {
        let Some(stream) = self.all_streams().into_iter().find(|s| s.id == p.of.id()) else {
            return Ok(()); // gone (reset): its work is dropped, its points reached
        };
        self.wait_point(&StreamPoint { stream, seq: p.seq }, "birenMalloc")
    }
}
