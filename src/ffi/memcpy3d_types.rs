//! The C types of a 3-D copy (CUDA's cudaPos, cudaPitchedPtr, cudaExtent, cudaMemcpy3DParms),
//! used by birenGraphAddMemcpyNode. (Issue 13's birenMemcpy3D takes the same struct.)

use super::types::birenMemcpyKind_int;
use std::ffi::c_void;

/// Opaque array object. The runtime has no arrays: every array field must be NULL.
pub struct birenArray_st {
    _private: [u8; 0],
}
/// An array handle (not supported: always NULL).
pub type birenArray_t = *mut birenArray_st;

/// A position in a pitched allocation: `x` in bytes, `y` in rows, `z` in slices.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct birenPos {
    pub x: usize,
    pub y: usize,
    pub z: usize,
}

/// Pitched memory: `ptr`, `pitch` bytes per row, `xsize` bytes of data per row (informational),
/// `ysize` rows per slice.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct birenPitchedPtr {
    pub ptr: *mut c_void,
    pub pitch: usize,
    pub xsize: usize,
    pub ysize: usize,
}

/// The size of a copy: `width` in bytes, `height` in rows, `depth` in slices.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct birenExtent {
    pub width: usize,
    pub height: usize,
    pub depth: usize,
}

/// A 3-D copy, as CUDA's cudaMemcpy3DParms: `extent` from `srcPtr` at `srcPos` to `dstPtr` at
/// `dstPos`, in direction `kind` (a birenMemcpyKind value). `srcArray` and `dstArray` must be
/// NULL (no arrays).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct birenMemcpy3DParms {
    pub srcArray: birenArray_t,
    pub srcPos: birenPos,
    pub srcPtr: birenPitchedPtr,
    pub dstArray: birenArray_t,
    pub dstPos: birenPos,
    pub dstPtr: birenPitchedPtr,
    pub extent: birenExtent,
    pub kind: birenMemcpyKind_int,
}
