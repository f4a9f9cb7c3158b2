//! Accelerator arrays (CUDA's cudaArray, cudaMallocArray, cudaMemcpy2DToArray, ...): texel
//! formats, allocation, queries, and copies into, out of and between arrays, each checked
//! against the array's extent before a byte moves. The copies are 2D copies of the array's rows
//! (see runtime/memory/array.rs), enqueued like birenMemcpy2D's.

use super::boundary::{ffi_call, ffi_value, handle, out};
use super::current_device;
use super::memcpy3d_types::{birenArray_t, birenExtent, birenMemcpy3DParms};
use super::memory::GUARD;
use super::memory2d::strided_on;
use super::types::*;
use crate::runtime::caps::MAX_PITCH;
use crate::runtime::diagnostics::{self, caller, racecheck};
use crate::runtime::error::{ErrorCode, Result};
use crate::runtime::exec::copy::{DEFAULT, DEVICE_TO_DEVICE, DEVICE_TO_HOST, HOST_TO_DEVICE};
use crate::runtime::exec::graph::capture;
use crate::runtime::exec::strided::Side;
use crate::runtime::memory::array::{self, ArrayCore, ChannelFormat};
use crate::runtime::{self, Runtime};
use std::ffi::{c_int, c_uint, c_void};
use std::sync::Arc;

/// The kind of a texel's channels (CUDA's cudaChannelFormatKind).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub enum birenChannelFormatKind {
    /// Signed integers.
    birenChannelFormatKindSigned = 0,
    /// Unsigned integers.
    birenChannelFormatKindUnsigned = 1,
    /// Floats (16 or 32 bits).
    birenChannelFormatKindFloat = 2,
    /// No channel (not a texel format).
    birenChannelFormatKindNone = 3,
}

/// A channel kind received from C: read as an integer and checked.
pub type birenChannelFormatKind_int = c_int;

/// A texel format (CUDA's cudaChannelFormatDesc): bits of channels x, y, z, w (0: absent) and
/// their kind. Valid formats have 1, 2 or 4 channels of one size: 8, 16 or 32 bits for integers,
/// 16 or 32 for floats.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct birenChannelFormatDesc {
    /// Bits of channel x.
    pub x: c_int,
    /// Bits of channel y.
    pub y: c_int,
    /// Bits of channel z.
    pub z: c_int,
    /// Bits of channel w.
    pub w: c_int,
    /// The channels' kind (a birenChannelFormatKind value).
    pub f: birenChannelFormatKind_int,
}

impl birenChannelFormatDesc {
    pub(crate) fn core(&self) -> ChannelFormat {
        ChannelFormat {
            bits: [self.x, self.y, self.z, self.w],
            kind: self.f,
        }
    }
    pub(crate) fn from_core(f: &ChannelFormat) -> birenChannelFormatDesc {
        birenChannelFormatDesc {
            x: f.bits[0],
            y: f.bits[1],
            z: f.bits[2],
            w: f.bits[3],
            f: f.kind,
        }
    }
}

/// birenMallocArray and birenMalloc3DArray flags (CUDA's values).
pub const birenArrayDefault: c_uint = 0;
/// The array has layers: birenMalloc3DArray's depth counts them.
pub const birenArrayLayered: c_uint = 1;
/// Surface objects may be created on the array (birenCreateSurfaceObject).
pub const birenArraySurfaceLoadStore: c_uint = 2;
/// A cube map (birenMalloc3DArray only): six square faces, the depth's six layers in CUDA's
/// order +x, -x, +y, -y, +z, -z; with birenArrayLayered, a multiple of six (cube c's faces are
/// layers 6c .. 6c + 5). Read with birenTexCubemap* / birenTexCubemapLayered*.
pub const birenArrayCubemap: c_uint = 4;
/// Texture gather (accepted; no gather fetches are offered).
pub const birenArrayTextureGather: c_uint = 8;

/// Returns the texel format {x, y, z, w, f} (bits per channel and kind), as CUDA's
/// cudaCreateChannelDesc; nothing is checked here (birenMallocArray checks it). In C++ the
/// header adds CUDA's template birenCreateChannelDesc<T>() for the scalar and vector types.
/// Thread-safe; may be called before birenInit.
#[no_mangle]
pub extern "C" fn birenCreateChannelDesc(
    x: c_int,
    y: c_int,
    z: c_int,
    w: c_int,
    f: birenChannelFormatKind_int,
) -> birenChannelFormatDesc {
    ffi_value!(
        "birenCreateChannelDesc",
        birenChannelFormatDesc { x, y, z, w, f },
        { birenChannelFormatDesc { x, y, z, w, f } }
    )
}

/// The live array behind a handle (`InvalidHandle`: freed, or never an array).
pub(crate) fn array_of(rt: &Runtime, a: birenArray_t, call: &str) -> Result<Arc<ArrayCore>> {
    rt.arrays.get(handle(a)).inspect_err(|_| {
        diagnostics::finding(
            call,
            &format!(
                "array {:#x} is not a live array (freed, NULL, or never one)",
                a as usize
            ),
        )
    })
}

fn malloc_array(
    array: *mut birenArray_t,
    desc: *const birenChannelFormatDesc,
    width: usize,
    height: usize,
    depth: usize,
    flags: c_uint,
    call: &str,
) -> Result<()> {
    let (rt, d) = current_device()?;
    let o = out(array)?;
    // SAFETY: the C caller promises a non-NULL desc points to a birenChannelFormatDesc.
    let desc = unsafe { desc.as_ref() }.ok_or(ErrorCode::InvalidValue)?;
    let format = desc.core();
    capture::check_unsafe(call)?;
    let bytes = array::check_extent(&format, width, height, depth, flags).inspect_err(|e| {
        diagnostics::finding(
            call,
            &format!(
                "{desc:?} {width} x {height} x {depth} flags={flags:#x}: {}",
                if *e == ErrorCode::InvalidChannelDescriptor {
                    "not a texel format (1, 2 or 4 channels of 8, 16 or 32 bits, one size; floats 16 or 32)"
                } else {
                    "not an extent an array may have (width > 0; 3-D needs a height; layered a depth of layers; a cube map square faces and a depth of 6, layered a multiple of 6; within the device's limits) or unknown flags"
                }
            ),
        )
    })?;
    let guard = if diagnostics::validator_on() {
        GUARD
    } else {
        0
    };
    let base = d.malloc(bytes, guard, caller::user_caller())?;
    if racecheck::on() {
        racecheck::alloc(base, bytes, Some(d.index));
    }
    let core = ArrayCore {
        device: d.index,
        base,
        format,
        width,
        height,
        depth,
        flags,
    };
    let Some(h) = rt.arrays.insert(core) else {
        let _ = d.free(base);
        return Err(ErrorCode::OutOfMemory);
    };
    *o = h as usize as birenArray_t;
    Ok(())
}

/// Allocates an array of `width` x `height` texels of format *desc (height 0: a 1-D array) and
/// writes its handle to *array. `flags`: birenArrayDefault, or birenArraySurfaceLoadStore (so
/// surface objects may write it), birenArrayTextureGather. Texels are laid out row-major, rows
/// packed. Free it with birenFreeArray.
/// Returns BIREN_ERROR_INVALID_VALUE for NULL array or desc, a zero width, an extent over the
/// limits (1-D 131072; 2-D 131072 x 65536), birenArrayLayered, birenArrayCubemap (both made with
/// birenMalloc3DArray) or unknown flags; BIREN_ERROR_INVALID_CHANNEL_DESCRIPTOR
/// for a format that is not one (1, 2 or 4 channels of one size: 8/16/32-bit integers, 16/32-bit
/// floats); BIREN_ERROR_OUT_OF_MEMORY past the device's capacity. Nothing is written on error.
/// Thread-safe. In C++ height and flags default to 0, as CUDA's.
#[no_mangle]
pub extern "C" fn birenMallocArray(
    array: *mut birenArray_t,
    desc: *const birenChannelFormatDesc,
    width: usize,
    height: usize,
    flags: c_uint,
) -> birenError_t {
    ffi_call!("birenMallocArray"(array, desc, width, height, flags) {
        if flags & (birenArrayLayered | birenArrayCubemap) != 0 {
            diagnostics::finding("birenMallocArray", "birenArrayLayered, birenArrayCubemap: layered arrays and cube maps are made with birenMalloc3DArray");
            return Err(ErrorCode::InvalidValue);
        }
        malloc_array(array, desc, width, height, 0, flags, "birenMallocArray")
    })
}

/// Allocates an array of extent.width x extent.height x extent.depth texels of format *desc
/// (in texels, not bytes) and writes its handle to *array: height and depth 0 a 1-D array,
/// depth 0 a 2-D array, all three a 3-D array; with birenArrayLayered, depth layers of a 1-D
/// (height 0) or 2-D array; with birenArrayCubemap, a cube map: width == height, depth 6 (with
/// birenArrayLayered as well, a multiple of 6: that many / 6 cubes). Flags as birenMallocArray,
/// plus birenArrayLayered and birenArrayCubemap.
/// Returns BIREN_ERROR_INVALID_VALUE for NULL array or desc, a zero width, a depth without a
/// height (unlayered), a layered array without layers, a cube map whose faces are not square
/// or whose depth is not 6 (layered: a multiple of 6), an extent over the limits (3-D 16384
/// each; layered 32768 x 32768 x 2048 layers; cube maps 32768 wide, 2046 cubes) or unknown flags;
/// BIREN_ERROR_INVALID_CHANNEL_DESCRIPTOR; BIREN_ERROR_OUT_OF_MEMORY. Nothing is written on error.
/// Thread-safe. In C++ flags defaults to 0.
#[no_mangle]
pub extern "C" fn birenMalloc3DArray(
    array: *mut birenArray_t,
    desc: *const birenChannelFormatDesc,
    extent: birenExtent,
    flags: c_uint,
) -> birenError_t {
    ffi_call!("birenMalloc3DArray"(array, desc, extent, flags) {
        malloc_array(array, desc, extent.width, extent.height, extent.depth, flags, "birenMalloc3DArray")
    })
}

/// Frees an array. NULL succeeds. Work already enqueued that uses it still completes: the
/// memory is released when it has. Texture and surface objects made on it stay objects (destroy
/// them too) but no longer read it: a kernel that fetches through one fails with
/// BIREN_ERROR_ILLEGAL_ADDRESS, and the validator names the freed array.
/// Returns BIREN_ERROR_INVALID_HANDLE for an array already freed or never one. Thread-safe.
#[no_mangle]
pub extern "C" fn birenFreeArray(array: birenArray_t) -> birenError_t {
    ffi_call!("birenFreeArray"(array) {
        let rt = runtime::get()?;
        if array.is_null() {
            return Ok(());
        }
        capture::check_unsafe("birenFreeArray")?;
        let a = array_of(rt, array, "birenFreeArray")?;
        let d = super::device_of(rt, a.device)?;
        rt.arrays.remove(handle(array)).ok_or(ErrorCode::InvalidHandle)?;
        rt.textures.array_freed(handle(array));
        if diagnostics::validator_on() {
            crate::runtime::diagnostics::validator::check_on_free(&d.exec.memory, a.base);
        }
        d.free(a.base)?;
        if racecheck::on() {
            racecheck::freed(a.base);
        }
        Ok(())
    })
}

/// Describes an array: its texel format to *desc, its extent in texels to *extent (as given at
/// allocation: height 0 for 1-D, depth 0 for 2-D, layers in depth), its flags to *flags. Each
/// out-parameter may be NULL (not written). Returns BIREN_ERROR_INVALID_HANDLE for an array
/// freed or never one (nothing written). Thread-safe.
#[no_mangle]
pub extern "C" fn birenArrayGetInfo(
    desc: *mut birenChannelFormatDesc,
    extent: *mut birenExtent,
    flags: *mut c_uint,
    array: birenArray_t,
) -> birenError_t {
    ffi_call!("birenArrayGetInfo"(desc, extent, flags, array) {
        let rt = runtime::get()?;
        let a = array_of(rt, array, "birenArrayGetInfo")?;
        if let Ok(d) = out(desc) {
            *d = birenChannelFormatDesc::from_core(&a.format);
        }
        if let Ok(e) = out(extent) {
            *e = birenExtent { width: a.width, height: a.height, depth: a.depth };
        }
        if let Ok(f) = out(flags) {
            *f = a.flags;
        }
        Ok(())
    })
}

/// Which kinds a copy into (`to`) and/or out of (`from`) an array may have: the array side is
/// device memory.
fn check_kind(kind: c_int, to: bool, from: bool, call: &str) -> Result<()> {
    let k = kind as i64;
    let ok = k == DEFAULT
        || k == DEVICE_TO_DEVICE
        || (to && !from && k == HOST_TO_DEVICE)
        || (from && !to && k == DEVICE_TO_HOST);
    if !ok {
        diagnostics::finding(
            call,
            &format!("kind={kind}: an array is device memory; this copy's kind must be {} or birenMemcpyDefault", match (to, from) {
                (true, false) => "birenMemcpyHostToDevice, birenMemcpyDeviceToDevice",
                (false, true) => "birenMemcpyDeviceToHost, birenMemcpyDeviceToDevice",
                _ => "birenMemcpyDeviceToDevice",
            }),
        );
        return Err(ErrorCode::InvalidMemcpyDirection);
    }
    Ok(())
}

fn linear_side(
    p: *const c_void,
    pitch: usize,
    width: usize,
    height: usize,
    call: &str,
) -> Result<Side> {
    if pitch > MAX_PITCH || (height > 1 && width > pitch) {
        diagnostics::finding(
            call,
            &format!("width={width} is over the pitch {pitch} (or the pitch over memPitch)"),
        );
        return Err(ErrorCode::InvalidPitchValue);
    }
    Ok(Side {
        base: p as usize,
        pitch,
        slice: 0,
    })
}

/// A copy between an array and linear memory or another array: `dst`/`src` give each side as
/// an array box or linear memory; checked, then enqueued as a 2D copy.
enum End {
    Array(birenArray_t, usize, usize),
    Linear(*const c_void, usize),
}

#[allow(clippy::too_many_arguments)]
fn copy_2d(
    dst: End,
    src: End,
    width: usize,
    height: usize,
    kind: c_int,
    stream: birenStream_t,
    sync: bool,
    call: &str,
) -> Result<()> {
    strided_on(stream, sync, call, |rt| {
        let to = matches!(dst, End::Array(..));
        let from = matches!(src, End::Array(..));
        check_kind(kind, to, from, call)?;
        let side = |e: &End, arg: &str| -> Result<Side> {
            match *e {
                End::Array(a, x, y) => {
                    array_of(rt, a, call)?.side(x, y, 0, width, height, 1, call, arg)
                }
                End::Linear(p, pitch) => linear_side(p, pitch, width, height, call),
            }
        };
        let d = side(&dst, "dst")?;
        let s = side(&src, "src")?;
        rt.plan_strided(d, Some(s), 0, width, height, 1, kind as i64, call)
    })
}

/// The linear view of a 1-D run of `count` bytes from (wOffset bytes, hOffset rows) of an array
/// (CUDA's cudaMemcpyToArray: the run may continue over the following rows).
fn run_in(a: &ArrayCore, w: usize, h: usize, count: usize, call: &str) -> Result<Side> {
    let start = h.checked_mul(a.pitch()).and_then(|o| o.checked_add(w));
    if w >= a.pitch() && count > 0
        || start
            .and_then(|s| s.checked_add(count))
            .is_none_or(|end| end > a.bytes())
    {
        diagnostics::finding(call, &format!("{count} bytes from ({w} bytes, row {h}) run past the array's end ({} bytes of {} per row)", a.bytes(), a.pitch()));
        return Err(ErrorCode::InvalidValue);
    }
    Ok(Side {
        base: a.base + start.unwrap_or(0),
        pitch: count,
        slice: 0,
    })
}

fn copy_run(
    array: birenArray_t,
    w: usize,
    h: usize,
    other: *const c_void,
    count: usize,
    to: bool,
    kind: c_int,
    stream: birenStream_t,
    sync: bool,
    call: &str,
) -> Result<()> {
    strided_on(stream, sync, call, |rt| {
        check_kind(kind, to, !to, call)?;
        let a = array_of(rt, array, call)?;
        let in_array = run_in(&a, w, h, count, call)?;
        let lin = Side {
            base: other as usize,
            pitch: count,
            slice: 0,
        };
        let (d, s) = if to { (in_array, lin) } else { (lin, in_array) };
        rt.plan_strided(d, Some(s), 0, count, 1, 1, kind as i64, call)
    })
}

/// Copies `height` rows of `width` bytes from src (rows `spitch` bytes apart) into the array
/// dst at byte wOffset of row hOffset (CUDA's cudaMemcpy2DToArray) and returns when done;
/// ordered like work on the default stream. Zero width or height succeeds at once.
/// Checked before a byte moves: BIREN_ERROR_INVALID_HANDLE for a dst that is no live array;
/// BIREN_ERROR_INVALID_MEMCPY_DIRECTION unless kind is birenMemcpyHostToDevice,
/// birenMemcpyDeviceToDevice or birenMemcpyDefault; BIREN_ERROR_INVALID_VALUE if the box runs
/// outside the array (wOffset + width over its row of width x texel bytes, hOffset + height over
/// its rows) or src is NULL; BIREN_ERROR_INVALID_PITCH_VALUE for width over spitch; src rows as
/// birenMemcpy2D's (BIREN_ERROR_INVALID_DEVICE_POINTER, BIREN_ERROR_OUT_OF_BOUNDS).
/// BIREN_ERROR_NOT_PERMITTED inside a kernel or host function. Thread-safe.
#[no_mangle]
pub extern "C" fn birenMemcpy2DToArray(
    dst: birenArray_t,
    wOffset: usize,
    hOffset: usize,
    src: *const c_void,
    spitch: usize,
    width: usize,
    height: usize,
    kind: birenMemcpyKind_int,
) -> birenError_t {
    ffi_call!("birenMemcpy2DToArray"(dst, wOffset, hOffset, src, spitch, width, height, kind) {
        current_device()?;
        capture::check_unsafe("birenMemcpy2DToArray")?;
        copy_2d(End::Array(dst, wOffset, hOffset), End::Linear(src, spitch), width, height, kind, std::ptr::null_mut(), true, "birenMemcpy2DToArray")
    })
}

/// Enqueues birenMemcpy2DToArray's copy on `stream` (NULL: the default stream); checked at
/// enqueue as birenMemcpy2DToArray, nothing enqueued on error; captured into a capturing
/// stream's graph as a memcpy node. BIREN_ERROR_INVALID_HANDLE for a destroyed stream.
#[no_mangle]
pub extern "C" fn birenMemcpy2DToArrayAsync(
    dst: birenArray_t,
    wOffset: usize,
    hOffset: usize,
    src: *const c_void,
    spitch: usize,
    width: usize,
    height: usize,
    kind: birenMemcpyKind_int,
    stream: birenStream_t,
) -> birenError_t {
    ffi_call!("birenMemcpy2DToArrayAsync"(dst, wOffset, hOffset, src, spitch, width, height, kind, stream) {
        copy_2d(End::Array(dst, wOffset, hOffset), End::Linear(src, spitch), width, height, kind, stream, false, "birenMemcpy2DToArrayAsync")
    })
}

/// Copies `height` rows of `width` bytes from the array src at byte wOffset of row hOffset to
/// dst (rows `dpitch` bytes apart) (CUDA's cudaMemcpy2DFromArray); checked as
/// birenMemcpy2DToArray, the kind birenMemcpyDeviceToHost, birenMemcpyDeviceToDevice or
/// birenMemcpyDefault. Returns when done. Thread-safe.
#[no_mangle]
pub extern "C" fn birenMemcpy2DFromArray(
    dst: *mut c_void,
    dpitch: usize,
    src: birenArray_t,
    wOffset: usize,
    hOffset: usize,
    width: usize,
    height: usize,
    kind: birenMemcpyKind_int,
) -> birenError_t {
    ffi_call!("birenMemcpy2DFromArray"(dst, dpitch, src, wOffset, hOffset, width, height, kind) {
        current_device()?;
        capture::check_unsafe("birenMemcpy2DFromArray")?;
        copy_2d(End::Linear(dst, dpitch), End::Array(src, wOffset, hOffset), width, height, kind, std::ptr::null_mut(), true, "birenMemcpy2DFromArray")
    })
}

/// Enqueues birenMemcpy2DFromArray's copy on `stream`; checked at enqueue as it.
#[no_mangle]
pub extern "C" fn birenMemcpy2DFromArrayAsync(
    dst: *mut c_void,
    dpitch: usize,
    src: birenArray_t,
    wOffset: usize,
    hOffset: usize,
    width: usize,
    height: usize,
    kind: birenMemcpyKind_int,
    stream: birenStream_t,
) -> birenError_t {
    ffi_call!("birenMemcpy2DFromArrayAsync"(dst, dpitch, src, wOffset, hOffset, width, height, kind, stream) {
        copy_2d(End::Linear(dst, dpitch), End::Array(src, wOffset, hOffset), width, height, kind, stream, false, "birenMemcpy2DFromArrayAsync")
    })
}

/// Copies a box of `width` bytes x `height` rows from array src at (wOffsetSrc bytes,
/// hOffsetSrc) to array dst at (wOffsetDst, hOffsetDst) (CUDA's cudaMemcpy2DArrayToArray);
/// kind birenMemcpyDeviceToDevice or birenMemcpyDefault; each box checked against its array
/// (BIREN_ERROR_INVALID_VALUE). Returns when done. Thread-safe.
#[no_mangle]
pub extern "C" fn birenMemcpy2DArrayToArray(
    dst: birenArray_t,
    wOffsetDst: usize,
    hOffsetDst: usize,
    src: birenArray_t,
    wOffsetSrc: usize,
    hOffsetSrc: usize,
    width: usize,
    height: usize,
    kind: birenMemcpyKind_int,
) -> birenError_t {
    ffi_call!("birenMemcpy2DArrayToArray"(dst, wOffsetDst, hOffsetDst, src, wOffsetSrc, hOffsetSrc, width, height, kind) {
        current_device()?;
        capture::check_unsafe("birenMemcpy2DArrayToArray")?;
        copy_2d(End::Array(dst, wOffsetDst, hOffsetDst), End::Array(src, wOffsetSrc, hOffsetSrc), width, height, kind, std::ptr::null_mut(), true, "birenMemcpy2DArrayToArray")
    })
}

/// Copies `count` bytes from src into the array dst from byte wOffset of row hOffset on, the
/// run continuing over the following rows (CUDA's deprecated cudaMemcpyToArray). Checked as
/// birenMemcpy2DToArray: BIREN_ERROR_INVALID_VALUE when wOffset is not inside a row or the run
/// passes the array's last byte. Returns when done. Thread-safe.
#[no_mangle]
pub extern "C" fn birenMemcpyToArray(
    dst: birenArray_t,
    wOffset: usize,
    hOffset: usize,
    src: *const c_void,
    count: usize,
    kind: birenMemcpyKind_int,
) -> birenError_t {
    ffi_call!("birenMemcpyToArray"(dst, wOffset, hOffset, src, count, kind) {
        current_device()?;
        capture::check_unsafe("birenMemcpyToArray")?;
        copy_run(dst, wOffset, hOffset, src, count, true, kind, std::ptr::null_mut(), true, "birenMemcpyToArray")
    })
}

/// Enqueues birenMemcpyToArray's copy on `stream`; checked at enqueue as it.
#[no_mangle]
pub extern "C" fn birenMemcpyToArrayAsync(
    dst: birenArray_t,
    wOffset: usize,
    hOffset: usize,
    src: *const c_void,
    count: usize,
    kind: birenMemcpyKind_int,
    stream: birenStream_t,
) -> birenError_t {
    ffi_call!("birenMemcpyToArrayAsync"(dst, wOffset, hOffset, src, count, kind, stream) {
        copy_run(dst, wOffset, hOffset, src, count, true, kind, stream, false, "birenMemcpyToArrayAsync")
    })
}

/// Copies `count` bytes out of the array src, from byte wOffset of row hOffset on, to dst
/// (CUDA's deprecated cudaMemcpyFromArray); checked as birenMemcpyToArray. Returns when done.
#[no_mangle]
pub extern "C" fn birenMemcpyFromArray(
    dst: *mut c_void,
    src: birenArray_t,
    wOffset: usize,
    hOffset: usize,
    count: usize,
    kind: birenMemcpyKind_int,
) -> birenError_t {
    ffi_call!("birenMemcpyFromArray"(dst, src, wOffset, hOffset, count, kind) {
        current_device()?;
        capture::check_unsafe("birenMemcpyFromArray")?;
        copy_run(src, wOffset, hOffset, dst, count, false, kind, std::ptr::null_mut(), true, "birenMemcpyFromArray")
    })
}

/// Enqueues birenMemcpyFromArray's copy on `stream`; checked at enqueue as it.
#[no_mangle]
pub extern "C" fn birenMemcpyFromArrayAsync(
    dst: *mut c_void,
    src: birenArray_t,
    wOffset: usize,
    hOffset: usize,
    count: usize,
    kind: birenMemcpyKind_int,
    stream: birenStream_t,
) -> birenError_t {
    ffi_call!("birenMemcpyFromArrayAsync"(dst, src, wOffset, hOffset, count, kind, stream) {
        copy_run(src, wOffset, hOffset, dst, count, false, kind, stream, false, "birenMemcpyFromArrayAsync")
    })
}

/// The array sides of a 3-D copy (CUDA's cudaMemcpy3D with srcArray/dstArray), self-contained so
/// that any parser of birenMemcpy3DParms can call it. With an array involved, the extent and the
/// array's position are in texels of that array and a pointer side's position in bytes; returns
/// (dst side, src side, width in bytes), a side None where the parameters give a pointer. Checks:
/// a side given both an array and a pointer, two arrays of different texel sizes, a box outside
/// an array (BIREN_ERROR_INVALID_VALUE); a freed array (BIREN_ERROR_INVALID_HANDLE); the kind
/// against the array sides (BIREN_ERROR_INVALID_MEMCPY_DIRECTION).
pub(crate) fn memcpy3d_array_sides(
    rt: &Runtime,
    p: &birenMemcpy3DParms,
    call: &str,
) -> Result<(Option<Side>, Option<Side>, usize)> {
    let e = p.extent;
    if p.srcArray.is_null() && p.dstArray.is_null() {
        return Ok((None, None, e.width));
    }
    if (!p.srcArray.is_null() && !p.srcPtr.ptr.is_null())
        || (!p.dstArray.is_null() && !p.dstPtr.ptr.is_null())
    {
        diagnostics::finding(call, "a side has both an array and a pointer: give one");
        return Err(ErrorCode::InvalidValue);
    }
    check_kind(p.kind, !p.dstArray.is_null(), !p.srcArray.is_null(), call)?;
    let dst = (!p.dstArray.is_null())
        .then(|| array_of(rt, p.dstArray, call))
        .transpose()?;
    let src = (!p.srcArray.is_null())
        .then(|| array_of(rt, p.srcArray, call))
        .transpose()?;
    let texel = match (&dst, &src) {
        (Some(d), Some(s)) if d.texel_bytes() != s.texel_bytes() => {
            diagnostics::finding(call, "the arrays' texels differ in size");
            return Err(ErrorCode::InvalidValue);
        }
        (Some(a), _) | (_, Some(a)) => a.texel_bytes(),
        _ => 1,
    };
    let width = e.width.checked_mul(texel).ok_or(ErrorCode::InvalidValue)?;
    let side = |a: &Option<Arc<ArrayCore>>,
                pos: &super::memcpy3d_types::birenPos,
                arg: &str|
     -> Result<Option<Side>> {
        a.as_ref()
            .map(|a| {
                let x = pos.x.checked_mul(texel).ok_or(ErrorCode::InvalidValue)?;
                a.side(x, pos.y, pos.z, width, e.height, e.depth, call, arg)
            })
            .transpose()
    };
    Ok((
        side(&dst, &p.dstPos, "dstArray")?,
        side(&src, &p.srcPos, "srcArray")?,
        width,
    ))
}
