//! Pitched and 2D/3D memory (CUDA's cudaMallocPitch, cudaMalloc3D, cudaMemcpy2D/3D,
//! cudaMemset2D/3D): allocations whose rows are padded to an aligned pitch, and copies and
//! fills of rectangles and boxes, every row checked before a byte moves.

use super::boundary::{ffi_call, out};
use super::current_device;
use super::memory::{copy_or_fill, GUARD};
use super::types::*;
use crate::runtime::caps::{MAX_PITCH, PITCH_ALIGNMENT};
use crate::runtime::copy3d::Extent3;
use crate::runtime::diagnostics::{self, caller};
use crate::runtime::error::{ErrorCode, Result};
use crate::runtime::exec::graph::capture;
use crate::runtime::exec::strided::{Side, Strided};
use crate::runtime::exec::work::Work;
use crate::runtime::{self, Runtime};
use std::ffi::{c_int, c_void};

pub use super::memcpy3d_types::{birenExtent, birenMemcpy3DParms, birenPitchedPtr, birenPos};

impl super::boundary::LogArg for birenExtent {
    fn show(&self) -> String {
        format!("{{{}, {}, {}}}", self.width, self.height, self.depth)
    }
}

impl super::boundary::LogArg for birenPitchedPtr {
    fn show(&self) -> String {
        format!(
            "{{{:p}, {}, {}, {}}}",
            self.ptr, self.pitch, self.xsize, self.ysize
        )
    }
}

fn pitch_for(width: usize) -> Option<usize> {
    width.checked_next_multiple_of(PITCH_ALIGNMENT)
}

/// Allocates `rows` rows of `width` bytes (None: the row count overflowed) at a pitch rounded up
/// to PITCH_ALIGNMENT; no rows or no width allocate nothing (NULL). Returns (pointer, pitch).
fn malloc_pitched(
    d: &crate::runtime::exec::context::DeviceContext,
    width: usize,
    rows: Option<usize>,
) -> Result<(*mut c_void, usize)> {
    let pitch = pitch_for(width).ok_or(ErrorCode::InvalidValue)?;
    let bytes = rows
        .and_then(|r| pitch.checked_mul(r))
        .ok_or(ErrorCode::OutOfMemory)?;
    if bytes == 0 {
        return Ok((std::ptr::null_mut(), pitch));
    }
    let guard = if diagnostics::validator_on() {
        GUARD
    } else {
        0
    };
    Ok((
        d.malloc(bytes, guard, caller::user_caller())? as *mut c_void,
        pitch,
    ))
}

/// Allocates `pitch * height` bytes of device memory for `height` rows of `width` bytes, with
/// the pitch (bytes between rows) rounded up to a multiple of 512, and writes the address to
/// *devPtr and the pitch to *pitch. A zero width or height allocates nothing (*devPtr = NULL,
/// *pitch = the rounded width). Address element (x, y) of type T as
/// (T *)((char *)devPtr + y * pitch) + x.
/// Returns BIREN_ERROR_INVALID_VALUE if devPtr or pitch is NULL or width is over memPitch
/// (2^31-1); BIREN_ERROR_OUT_OF_MEMORY past the device's capacity. Nothing is written on error.
/// Thread-safe.
#[no_mangle]
pub extern "C" fn birenMallocPitch(
    devPtr: *mut *mut c_void,
    pitch: *mut usize,
    width: usize,
    height: usize,
) -> birenError_t {
    ffi_call!("birenMallocPitch"(devPtr, pitch, width, height) {
        let (_, d) = current_device()?;
        let (o, op) = (out(devPtr)?, out(pitch)?);
        if width > MAX_PITCH {
            diagnostics::finding("birenMallocPitch", &format!("width={width} is over memPitch ({MAX_PITCH})"));
            return Err(ErrorCode::InvalidValue);
        }
        let (ptr, p) = malloc_pitched(d, width, Some(height))?;
        *o = ptr;
        *op = p;
        Ok(())
    })
}

/// Allocates device memory for a box of `extent` (width in bytes, height rows, depth slices)
/// with rows padded to a pitch that is a multiple of 512, and writes it to *pitchedDevPtr:
/// ptr, pitch, xsize = extent.width, ysize = extent.height. A zero extent allocates nothing
/// (ptr NULL). Free it with birenFree(ptr).
/// Returns BIREN_ERROR_INVALID_VALUE if pitchedDevPtr is NULL or the width is over memPitch;
/// BIREN_ERROR_OUT_OF_MEMORY past the capacity (or if the size overflows). Nothing is written on
/// error. Thread-safe.
#[no_mangle]
pub extern "C" fn birenMalloc3D(
    pitchedDevPtr: *mut birenPitchedPtr,
    extent: birenExtent,
) -> birenError_t {
    ffi_call!("birenMalloc3D"(pitchedDevPtr, extent) {
        let (_, d) = current_device()?;
        let o = out(pitchedDevPtr)?;
        if extent.width > MAX_PITCH {
            diagnostics::finding("birenMalloc3D", &format!("extent.width={} is over memPitch ({MAX_PITCH})", extent.width));
            return Err(ErrorCode::InvalidValue);
        }
        let (ptr, p) = malloc_pitched(d, extent.width, extent.height.checked_mul(extent.depth))?;
        *o = birenPitchedPtr { ptr, pitch: p, xsize: extent.width, ysize: extent.height };
        Ok(())
    })
}

fn run_inline(w: &Work) {
    if let Work::Strided(t) = w {
        // SAFETY: validated by plan_strided, and no reset has run since.
        unsafe { t.run() };
    }
}

pub(crate) fn strided_on(
    stream: birenStream_t,
    sync: bool,
    call: &str,
    plan: impl FnOnce(&Runtime) -> Result<Option<Strided>>,
) -> Result<()> {
    copy_or_fill(
        stream,
        sync,
        call,
        |rt| Ok(plan(rt)?.map(Work::Strided)),
        Some(run_inline),
    )
}

fn check_pitches(
    dpitch: usize,
    spitch: usize,
    width: usize,
    height: usize,
    call: &str,
) -> Result<()> {
    if dpitch > MAX_PITCH
        || spitch > MAX_PITCH
        || (height > 0 && width > 0 && (width > dpitch || width > spitch))
    {
        diagnostics::finding(
            call,
            &format!("width={width} dpitch={dpitch} spitch={spitch}: the width must not exceed either pitch, nor a pitch memPitch ({MAX_PITCH})"),
        );
        return Err(ErrorCode::InvalidPitchValue);
    }
    Ok(())
}

#[allow(clippy::too_many_arguments)]
fn memcpy2d(
    dst: *mut c_void,
    dpitch: usize,
    src: *const c_void,
    spitch: usize,
    width: usize,
    height: usize,
    kind: c_int,
    stream: birenStream_t,
    sync: bool,
    call: &str,
) -> Result<()> {
    strided_on(stream, sync, call, |rt| {
        if !(0..=4).contains(&kind) {
            diagnostics::finding(
                call,
                &format!("kind={kind} is not a birenMemcpyKind value (0..4)"),
            );
            return Err(ErrorCode::InvalidMemcpyDirection);
        }
        check_pitches(dpitch, spitch, width, height, call)?;
        let d = Side {
            base: dst as usize,
            pitch: dpitch,
            slice: 0,
        };
        let s = Side {
            base: src as usize,
            pitch: spitch,
            slice: 0,
        };
        rt.plan_strided(d, Some(s), 0, width, height, 1, kind as i64, call)
    })
}

/// Copies `height` rows of `width` bytes from src (rows `spitch` bytes apart) to dst (rows
/// `dpitch` bytes apart) and returns when done; ordered like work on the default stream.
/// A zero width or height succeeds at once.
///
/// Checked before anything is written: an unknown kind gives
/// BIREN_ERROR_INVALID_MEMCPY_DIRECTION; width over dpitch or spitch, or a pitch over memPitch,
/// BIREN_ERROR_INVALID_PITCH_VALUE; NULL dst or src BIREN_ERROR_INVALID_VALUE; then every row of
/// both sides: device rows outside any live allocation give BIREN_ERROR_INVALID_DEVICE_POINTER,
/// rows running past the end of their device allocation, page-locked or registered host buffer
/// BIREN_ERROR_OUT_OF_BOUNDS. On any error nothing is written. Each row is copied as by memmove.
/// BIREN_ERROR_NOT_PERMITTED inside a kernel or a host function. Thread-safe.
/// BIREN_ERROR_STREAM_CAPTURE_UNSUPPORTED while a stream capture forbids synchronous calls (as
/// birenMemcpy; the calling thread's captures are invalidated).
#[no_mangle]
pub extern "C" fn birenMemcpy2D(
    dst: *mut c_void,
    dpitch: usize,
    src: *const c_void,
    spitch: usize,
    width: usize,
    height: usize,
    kind: birenMemcpyKind_int,
) -> birenError_t {
    ffi_call!("birenMemcpy2D"(dst, dpitch, src, spitch, width, height, kind) {
        current_device()?;
        capture::check_unsafe("birenMemcpy2D")?;
        memcpy2d(dst, dpitch, src, spitch, width, height, kind, std::ptr::null_mut(), true, "birenMemcpy2D")
    })
}

/// Enqueues birenMemcpy2D's copy on `stream` (NULL: the default stream), run by a copy engine;
/// checked at enqueue exactly as birenMemcpy2D, nothing enqueued on error.
/// Into a capturing stream it is captured as a memcpy node of the capture's graph (nothing runs).
/// BIREN_ERROR_INVALID_HANDLE for a destroyed or unknown stream. Thread-safe.
#[no_mangle]
pub extern "C" fn birenMemcpy2DAsync(
    dst: *mut c_void,
    dpitch: usize,
    src: *const c_void,
    spitch: usize,
    width: usize,
    height: usize,
    kind: birenMemcpyKind_int,
    stream: birenStream_t,
) -> birenError_t {
    ffi_call!("birenMemcpy2DAsync"(dst, dpitch, src, spitch, width, height, kind, stream) {
        memcpy2d(dst, dpitch, src, spitch, width, height, kind, stream, false, "birenMemcpy2DAsync")
    })
}

fn memset2d(
    devPtr: *mut c_void,
    pitch: usize,
    value: c_int,
    width: usize,
    height: usize,
    depth: usize,
    slice: usize,
    stream: birenStream_t,
    sync: bool,
    call: &str,
) -> Result<()> {
    strided_on(stream, sync, call, |rt| {
        if width > 0 && height > 0 && depth > 0 && (width > pitch || pitch > MAX_PITCH) {
            diagnostics::finding(call, &format!("width={width} pitch={pitch}: the width must not exceed the pitch, nor the pitch memPitch"));
            return Err(ErrorCode::InvalidValue);
        }
        let d = Side {
            base: devPtr as usize,
            pitch,
            slice,
        };
        rt.plan_strided(d, None, value as u8, width, height, depth, 0, call)
    })
}

/// Sets `height` rows of `width` bytes of device memory, rows `pitch` bytes apart, to the byte
/// `value` (its low 8 bits) and returns when done; ordered like work on the default stream.
/// A zero width or height succeeds at once. Returns BIREN_ERROR_INVALID_VALUE for NULL devPtr or
/// width over pitch; BIREN_ERROR_INVALID_DEVICE_POINTER for rows outside any live device
/// allocation; BIREN_ERROR_OUT_OF_BOUNDS for rows past its end. Nothing is written on error.
/// BIREN_ERROR_NOT_PERMITTED inside a kernel or a host function. Thread-safe.
/// BIREN_ERROR_STREAM_CAPTURE_UNSUPPORTED while a stream capture forbids synchronous calls (as
/// birenMemcpy; the calling thread's captures are invalidated).
#[no_mangle]
pub extern "C" fn birenMemset2D(
    devPtr: *mut c_void,
    pitch: usize,
    value: c_int,
    width: usize,
    height: usize,
) -> birenError_t {
    ffi_call!("birenMemset2D"(devPtr, pitch, value, width, height) {
        current_device()?;
        capture::check_unsafe("birenMemset2D")?;
        memset2d(devPtr, pitch, value, width, height, 1, 0, std::ptr::null_mut(), true, "birenMemset2D")
    })
}

/// Enqueues birenMemset2D's fill on `stream`; checked at enqueue as birenMemset2D.
/// Into a capturing stream it is captured as a memset node of the capture's graph (nothing runs).
/// BIREN_ERROR_INVALID_HANDLE for a destroyed or unknown stream. Thread-safe.
#[no_mangle]
pub extern "C" fn birenMemset2DAsync(
    devPtr: *mut c_void,
    pitch: usize,
    value: c_int,
    width: usize,
    height: usize,
    stream: birenStream_t,
) -> birenError_t {
    ffi_call!("birenMemset2DAsync"(devPtr, pitch, value, width, height, stream) {
        memset2d(devPtr, pitch, value, width, height, 1, 0, stream, false, "birenMemset2DAsync")
    })
}

fn slice_of(p: &birenPitchedPtr) -> Option<usize> {
    p.pitch.checked_mul(p.ysize)
}

fn memset3d(
    pitchedDevPtr: birenPitchedPtr,
    value: c_int,
    extent: birenExtent,
    stream: birenStream_t,
    sync: bool,
    call: &str,
) -> Result<()> {
    let p = pitchedDevPtr;
    if extent.depth > 1 && extent.height > p.ysize {
        diagnostics::finding(call, &format!("extent.height={} is over pitchedDevPtr.ysize={}: rows would run into the next slice", extent.height, p.ysize));
        return Err(ErrorCode::InvalidValue);
    }
    let slice = slice_of(&p).ok_or(ErrorCode::InvalidValue)?;
    memset2d(
        p.ptr,
        p.pitch,
        value,
        extent.width,
        extent.height,
        extent.depth,
        slice,
        stream,
        sync,
        call,
    )
}

/// Sets a box of `extent` (width bytes, height rows, depth slices) of the pitched device memory
/// `pitchedDevPtr` (slices pitch * ysize bytes apart) to the byte `value`, and returns when
/// done. A zero extent succeeds at once. Returns BIREN_ERROR_INVALID_VALUE for a NULL ptr, a
/// width over the pitch, or (depth > 1) a height over ysize; BIREN_ERROR_INVALID_DEVICE_POINTER
/// or BIREN_ERROR_OUT_OF_BOUNDS when a row lies outside its allocation. Nothing is written on
/// error. Thread-safe.
/// BIREN_ERROR_STREAM_CAPTURE_UNSUPPORTED while a stream capture forbids synchronous calls (as
/// birenMemcpy; the calling thread's captures are invalidated).
#[no_mangle]
pub extern "C" fn birenMemset3D(
    pitchedDevPtr: birenPitchedPtr,
    value: c_int,
    extent: birenExtent,
) -> birenError_t {
    ffi_call!("birenMemset3D"(pitchedDevPtr, value, extent) {
        current_device()?;
        capture::check_unsafe("birenMemset3D")?;
        memset3d(pitchedDevPtr, value, extent, std::ptr::null_mut(), true, "birenMemset3D")
    })
}

/// Enqueues birenMemset3D's fill on `stream`; checked at enqueue as birenMemset3D.
/// Into a capturing stream it is captured as a memset node of the capture's graph (nothing runs).
/// BIREN_ERROR_INVALID_HANDLE for a destroyed or unknown stream. Thread-safe.
#[no_mangle]
pub extern "C" fn birenMemset3DAsync(
    pitchedDevPtr: birenPitchedPtr,
    value: c_int,
    extent: birenExtent,
    stream: birenStream_t,
) -> birenError_t {
    ffi_call!("birenMemset3DAsync"(pitchedDevPtr, value, extent, stream) {
        memset3d(pitchedDevPtr, value, extent, stream, false, "birenMemset3DAsync")
    })
}

fn memcpy3d(
    p: *const birenMemcpy3DParms,
    stream: birenStream_t,
    sync: bool,
    call: &str,
) -> Result<()> {
    runtime::get()?;
    // SAFETY: the C caller promises a non-NULL p points to a birenMemcpy3DParms.
    let Some(p) = (unsafe { p.as_ref() }) else {
        diagnostics::finding(call, "p is NULL");
        return Err(ErrorCode::InvalidValue);
    };
    let (dst, src, whole) = p.parts();
    let e = p.extent;
    strided_on(stream, sync, call, |rt| {
        if e.width == 0 || e.height == 0 || e.depth == 0 {
            return rt.plan_copy3d(dst, src, whole, p.kind as i64, call);
        }
        // Arrays (their extent and positions in texels): see birenMemcpy3D's doc.
        let (dst_array, src_array, width) = super::array::memcpy3d_array_sides(rt, p, call)?;
        let extent = Extent3 {
            width,
            height: e.height,
            depth: e.depth,
        };
        rt.plan_copy3d_arrays(dst, src, dst_array, src_array, extent, p.kind as i64, call)
    })
}

/// Copies the box p->extent (width in bytes, height rows, depth slices) from p->srcPtr at
/// p->srcPos to p->dstPtr at p->dstPos (positions: x in bytes, y in rows, z in slices; a
/// pitched pointer's slices are pitch * ysize bytes apart) in direction p->kind, and returns
/// when done; ordered like work on the default stream. A zero extent succeeds at once.
///
/// A side may be an array (srcArray/dstArray, the pointer then NULL): the extent is then in
/// texels of the array (width x texel bytes moved per row), the array's position in texels, a
/// pointer side's position in bytes (as CUDA).
///
/// Checked before anything is written: BIREN_ERROR_INVALID_VALUE for a NULL p, NULL pointers,
/// a side with both an array and a pointer, a box outside an array, arrays of different texel
/// sizes, or (depth > 1) rows that would run into the next slice (pos.y + height > ysize);
/// BIREN_ERROR_INVALID_HANDLE for a freed array; BIREN_ERROR_INVALID_MEMCPY_DIRECTION for a kind
/// that makes an array host memory; BIREN_ERROR_INVALID_MEMCPY_DIRECTION for an
/// unknown kind; BIREN_ERROR_INVALID_PITCH_VALUE when pos.x + width is over a pitch; then every
/// row as birenMemcpy2D (BIREN_ERROR_INVALID_DEVICE_POINTER, BIREN_ERROR_OUT_OF_BOUNDS).
/// Nothing is written on error. Thread-safe.
/// BIREN_ERROR_STREAM_CAPTURE_UNSUPPORTED while a stream capture forbids synchronous calls (as
/// birenMemcpy; the calling thread's captures are invalidated).
#[no_mangle]
pub extern "C" fn birenMemcpy3D(p: *const birenMemcpy3DParms) -> birenError_t {
    ffi_call!("birenMemcpy3D"(p) {
        current_device()?;
        capture::check_unsafe("birenMemcpy3D")?;
        memcpy3d(p, std::ptr::null_mut(), true, "birenMemcpy3D")
    })
}

/// Enqueues birenMemcpy3D's copy on `stream`; checked at enqueue as birenMemcpy3D (the struct
/// is read during the call and may be reused at once). Into a capturing stream it is captured as a memcpy node of the capture's graph (nothing runs).
/// BIREN_ERROR_INVALID_HANDLE for a destroyed or unknown stream. Thread-safe.
#[no_mangle]
pub extern "C" fn birenMemcpy3DAsync(
    p: *const birenMemcpy3DParms,
    stream: birenStream_t,
) -> birenError_t {
    ffi_call!("birenMemcpy3DAsync"(p, stream) {
        memcpy3d(p, stream, false, "birenMemcpy3DAsync")
    })
}
