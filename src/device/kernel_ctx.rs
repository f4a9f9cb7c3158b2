//! The per-thread kernel context: what `birenThreadIdx()` and friends read.
//!
//! Each compute unit is one OS thread; the context lives in a thread-local of that thread and
//! is rewritten before each simulated kernel thread runs. The header's inline built-ins fetch
//! its address once per kernel invocation (`birenKernelContext`, declared `const`), so reading
//! an index costs a load.

use std::cell::UnsafeCell;
use std::ffi::{c_uint, c_void};

/// Three unsigned extents: grid and block dimensions, thread and block indices.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(C)]
pub struct Dim3 {
    /// Extent or index along x.
    pub x: c_uint,
    /// Extent or index along y.
    pub y: c_uint,
    /// Extent or index along z.
    pub z: c_uint,
}

impl Dim3 {
    pub const fn new(x: u32, y: u32, z: u32) -> Dim3 {
        Dim3 { x, y, z }
    }
    pub fn volume(self) -> u64 {
        self.x as u64 * self.y as u64 * self.z as u64
    }
    /// The linear index of `b` (x fastest): `unlinear`'s inverse.
    pub fn unlinear_index(self, b: Dim3) -> u64 {
        b.x as u64 + self.x as u64 * (b.y as u64 + self.y as u64 * b.z as u64)
    }

    /// The coordinates of linear index `i` (x fastest).
    pub fn unlinear(self, i: u64) -> Dim3 {
        let x = (i % self.x as u64) as u32;
        let r = i / self.x as u64;
        Dim3 {
            x,
            y: (r % self.y as u64) as u32,
            z: (r / self.y as u64) as u32,
        }
    }

    /// The block after `b` in grid `self` (x fastest; blocks run in this order, as on CUDA
    /// hardware, which promises none): no division.
    pub fn block_after(self, b: Dim3) -> Dim3 {
        if b.x + 1 < self.x {
            Dim3::new(b.x + 1, b.y, b.z)
        } else if b.y + 1 < self.y {
            Dim3::new(0, b.y + 1, b.z)
        } else {
            Dim3::new(0, 0, b.z + 1)
        }
    }
}

/// The context a kernel thread sees. Layout shared with the header (`birenKernelCtx`).
#[derive(Clone, Copy, Debug)]
#[repr(C)]
pub struct KernelCtx {
    pub thread_idx: Dim3,
    pub block_idx: Dim3,
    pub block_dim: Dim3,
    pub grid_dim: Dim3,
    pub shared: *mut c_void,
}

const EMPTY: KernelCtx = KernelCtx {
    thread_idx: Dim3::new(0, 0, 0),
    block_idx: Dim3::new(0, 0, 0),
    block_dim: Dim3::new(0, 0, 0),
    grid_dim: Dim3::new(0, 0, 0),
    shared: std::ptr::null_mut(),
};

/// Everything a compute unit's thread keeps per thread, in one thread-local so that the hot
/// paths (`birenKernelContext`, `birenSyncThreads`) pay for one TLS lookup.
#[repr(C)]
pub struct UnitTls {
    /// First, so that a pointer to the `UnitTls` is a pointer to the context.
    pub ctx: KernelCtx,
    /// The run (block or cooperative grid) this unit executes, or null outside a kernel.
    pub run: *mut c_void,
    /// True while the unit executes on a kernel fiber with the driver's context saved: set by a
    /// fiber when it starts, cleared just before the run switches back to the driver (the fault
    /// handler's test).
    pub on_fiber: bool,
    /// The signal that struck the kernel thread, set by the fault handler.
    pub fault: super::fault::Fault,
}

/// The thread loop of a `BIREN_KERNEL` block entry, shared with the header (`birenKernelLoop`):
/// the entry runs threads up to `end` (linear), the current row up to `xe`; `tid` is the index of
/// the thread running. Sync points lower `end` and `xe` to stop the loop after the thread that
/// waits (its successors go on in another fiber).
#[derive(Clone, Copy, Debug)]
#[repr(C)]
pub struct KernelLoop {
    /// The index of the thread running.
    pub tid: Dim3,
    /// The loop runs threads up to this one (linear index, exclusive).
    pub end: c_uint,
    /// The current row runs up to this x (exclusive).
    pub xe: c_uint,
}

thread_local! {
    static UNIT: UnsafeCell<UnitTls> = const {
        UnsafeCell::new(UnitTls {
            ctx: EMPTY,
            run: std::ptr::null_mut(),
            on_fiber: false,
            fault: super::fault::Fault { signal: 0, addr: 0 },
        })
    };
}

/// The calling thread's per-unit state.
#[inline]
pub fn unit() -> *mut UnitTls {
    // Thread pointer + the uniform offset when there is one: no `__tls_get_addr` call.
    let off = FAST_OFFSET_PUBLISHED.load(std::sync::atomic::Ordering::Relaxed);
    if off != 0 {
        return (thread_pointer() as isize + off) as *mut UnitTls;
    }
    UNIT.with(|c| c.get())
}

/// The calling thread's per-unit state through the uniform offset, without a call; `None`
/// when there is none (then `unit()` asks the TLS runtime).
#[inline(always)]
pub fn unit_fast() -> Option<*mut UnitTls> {
    let off = FAST_OFFSET_PUBLISHED.load(std::sync::atomic::Ordering::Relaxed);
    if off == 0 {
        return None;
    }
    Some((thread_pointer() as isize + off) as *mut UnitTls)
}

/// `fast_offset()` once every compute unit has reported (0 until then, and if there is none).
pub(crate) static FAST_OFFSET_PUBLISHED: std::sync::atomic::AtomicIsize =
    std::sync::atomic::AtomicIsize::new(0);

/// Makes `unit()` use the uniform offset (at init, after all compute units reported).
pub fn publish_fast_offset() -> isize {
    let off = fast_offset();
    FAST_OFFSET_PUBLISHED.store(off, std::sync::atomic::Ordering::Relaxed);
    off
}

/// The thread pointer of the calling thread (what `%fs:0` / `tpidr_el0` holds), or 0 where
/// unknown.
#[inline]
pub fn thread_pointer() -> usize {
    #[cfg(target_arch = "x86_64")]
    unsafe {
        let tp: usize;
        std::arch::asm!("mov {}, fs:0", out(reg) tp, options(nostack, readonly, preserves_flags));
        tp
    }
    #[cfg(target_arch = "aarch64")]
    unsafe {
        let tp: usize;
        std::arch::asm!("mrs {}, tpidr_el0", out(reg) tp, options(nostack, nomem, preserves_flags));
        tp
    }
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    0
}

/// The offset of the kernel context from the thread pointer, the same on every compute unit
/// thread, or 0. The library's TLS block sits at a fixed offset from the thread pointer when the
/// library is loaded with the program (static TLS); then kernels find their context with one
/// load (see `birenKernelCtxOffset`). Loaded with dlopen, the offset differs per thread: 0.
static FAST_OFFSET: std::sync::atomic::AtomicIsize = std::sync::atomic::AtomicIsize::new(0);
static FAST_CONFLICT: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Called by every compute unit thread before it runs a kernel.
pub(crate) fn report_offset() {
    use std::sync::atomic::Ordering::SeqCst;
    let tp = thread_pointer();
    let off = if tp == 0 {
        0
    } else {
        UNIT.with(|c| c.get()) as isize - tp as isize
    };
    if off == 0 {
        FAST_CONFLICT.store(true, SeqCst);
        return;
    }
    if let Err(prev) = FAST_OFFSET.compare_exchange(0, off, SeqCst, SeqCst) {
        if prev != off {
            FAST_CONFLICT.store(true, SeqCst);
        }
    }
}

/// The uniform offset of the context from the thread pointer, or 0 if there is none.
pub fn fast_offset() -> isize {
    use std::sync::atomic::Ordering::SeqCst;
    if FAST_CONFLICT.load(SeqCst) {
        0
    } else {
        FAST_OFFSET.load(SeqCst)
    }
}

/// The calling thread's context (all zero outside a kernel).
#[inline]
pub fn current() -> *mut KernelCtx {
    unit() as *mut KernelCtx
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn block_after_follows_unlinear_and_unlinear_index_inverts_it() {
        for g in [
            Dim3::new(4, 3, 2),
            Dim3::new(9, 5, 3),
            Dim3::new(1000, 1, 1),
            Dim3::new(1, 9, 2),
        ] {
            let mut b = Dim3::new(0, 0, 0);
            for l in 0..g.volume() {
                assert_eq!(g.unlinear(l), b, "{g:?} {l}");
                assert_eq!(g.unlinear_index(b), l, "{g:?} {b:?}");
                b = g.block_after(b);
            }
            assert_eq!(b, Dim3::new(0, 0, g.z), "{g:?}: after the last block");
        }
    }

    #[test]
    fn unlinear_is_x_fastest() {
        let d = Dim3::new(4, 3, 2);
        assert_eq!(d.volume(), 24);
        assert_eq!(d.unlinear(0), Dim3::new(0, 0, 0));
        assert_eq!(d.unlinear(5), Dim3::new(1, 1, 0));
        assert_eq!(d.unlinear(23), Dim3::new(3, 2, 1));
    }
}
