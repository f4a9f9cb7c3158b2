//! The per-thread kernel context: what `birenThreadIdx()` and friends read.
//!
//! Each compute unit is one OS thread; the context lives in a thread-local of that thread and
//! is rewritten before each simulated kernel thread runs. The header's inline built-ins fetch
//! its address once per kernel invocation (`birenKernelContext`, declared `const`), so reading
//! an index costs a load.

use std::cell::{Cell, UnsafeCell};
use std::ffi::{c_uint, c_void};

/// Three unsigned extents: grid and block dimensions, thread and block indices.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(C)]
pub struct Dim3 {
    pub x: c_uint,
    pub y: c_uint,
    pub z: c_uint,
}

impl Dim3 {
    pub const fn new(x: u32, y: u32, z: u32) -> Dim3 {
        Dim3 { x, y, z }
    }
    pub fn volume(self) -> u64 {
        self.x as u64 * self.y as u64 * self.z as u64
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

thread_local! {
    static CTX: UnsafeCell<KernelCtx> = const { UnsafeCell::new(EMPTY) };
    static IN_KERNEL: Cell<bool> = const { Cell::new(false) };
}

/// The calling thread's context (all zero outside a kernel).
pub fn current() -> *mut KernelCtx {
    CTX.with(|c| c.get())
}

/// True while the calling thread runs a kernel's code.
pub fn in_kernel() -> bool {
    IN_KERNEL.with(|c| c.get())
}

pub(crate) fn set_in_kernel(v: bool) {
    IN_KERNEL.with(|c| c.set(v))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unlinear_is_x_fastest() {
        let d = Dim3::new(4, 3, 2);
        assert_eq!(d.volume(), 24);
        assert_eq!(d.unlinear(0), Dim3::new(0, 0, 0));
        assert_eq!(d.unlinear(5), Dim3::new(1, 1, 0));
        assert_eq!(d.unlinear(23), Dim3::new(3, 2, 1));
    }
}
