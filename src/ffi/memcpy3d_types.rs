//! The C types of a 3-D copy (CUDA's cudaPos, cudaPitchedPtr, cudaExtent, cudaMemcpy3DParms),
//! used by birenGraphAddMemcpyNode. (Issue 13's birenMemcpy3D takes the same struct.)

use super::types::birenMemcpyKind_int;
use crate::runtime::copy3d::{Extent3, PitchedAt};
use std::ffi::c_void;

/// Opaque array object (birenMallocArray).
pub struct birenArray_st {
    _private: [u8; 0],
}
/// An accelerator array (CUDA's cudaArray_t): a handle from birenMallocArray or
/// birenMalloc3DArray, looked up in a registry (a freed or forged one is refused).
pub type birenArray_t = *mut birenArray_st;

/// A position in a pitched allocation: `x` in bytes, `y` in rows, `z` in slices.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct birenPos {
    /// Offset in bytes within a row.
    pub x: usize,
    /// Row.
    pub y: usize,
    /// Slice.
    pub z: usize,
}

/// Pitched memory: `ptr`, `pitch` bytes per row, `xsize` bytes of data per row (informational),
/// `ysize` rows per slice.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct birenPitchedPtr {
    /// Start of the allocation.
    pub ptr: *mut c_void,
    /// Bytes from one row to the next.
    pub pitch: usize,
    /// Logical width of a row in bytes.
    pub xsize: usize,
    /// Logical number of rows per slice.
    pub ysize: usize,
}

/// The size of a copy: `width` in bytes, `height` in rows, `depth` in slices.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct birenExtent {
    /// Width in bytes (linear memory).
    pub width: usize,
    /// Height in rows.
    pub height: usize,
    /// Depth in slices.
    pub depth: usize,
}

/// A 3-D copy, as CUDA's cudaMemcpy3DParms: `extent` from `srcPtr` at `srcPos` to `dstPtr` at
/// `dstPos`, in direction `kind` (a birenMemcpyKind value). A side may be an array
/// (`srcArray`/`dstArray`) instead of a pitched pointer: see birenMemcpy3D.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct birenMemcpy3DParms {
    /// Source array, or NULL for srcPtr.
    pub srcArray: birenArray_t,
    /// Offset into the source.
    pub srcPos: birenPos,
    /// The source pitched pointer.
    pub srcPtr: birenPitchedPtr,
    /// Destination array, or NULL for dstPtr.
    pub dstArray: birenArray_t,
    /// Offset into the destination.
    pub dstPos: birenPos,
    /// The destination pitched pointer.
    pub dstPtr: birenPitchedPtr,
    /// Size of the box to copy (width in bytes).
    pub extent: birenExtent,
    /// Direction of the copy (birenMemcpyKind).
    pub kind: birenMemcpyKind_int,
}

impl birenMemcpy3DParms {
    /// The copy in the core's terms (`Runtime::plan_copy3d`): (dst, src, extent).
    pub(crate) fn parts(&self) -> (PitchedAt, PitchedAt, Extent3) {
        let at = |ptr: &birenPitchedPtr, pos: &birenPos| PitchedAt {
            ptr: ptr.ptr as usize,
            pitch: ptr.pitch,
            ysize: ptr.ysize,
            x: pos.x,
            y: pos.y,
            z: pos.z,
        };
        let e = self.extent;
        (
            at(&self.dstPtr, &self.dstPos),
            at(&self.srcPtr, &self.srcPos),
            Extent3 {
                width: e.width,
                height: e.height,
                depth: e.depth,
            },
        )
    }
}
