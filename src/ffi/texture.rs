//! Texture and surface objects (CUDA's cudaCreateTextureObject, cudaCreateSurfaceObject, ...):
//! their C descriptions, checked and handed to the core (runtime/texture.rs), and the slow paths
//! of the header's inline fetches.

use super::array::{array_of, birenChannelFormatDesc};
use super::boundary::{ffi_call, ffi_value, out};
use super::current_device;
use super::memcpy3d_types::birenArray_t;
use super::types::*;
use crate::device::{self, KernelLoop};
use crate::runtime::diagnostics;
use crate::runtime::error::{ErrorCode, Result};
use crate::runtime::memory::array::SURFACE_LOAD_STORE;
use crate::runtime::texture::{Resource, Sampling, TexObject};
use crate::runtime::{self, Runtime};
use std::ffi::{c_int, c_uint, c_ulonglong, c_void};

/// A texture object (CUDA's cudaTextureObject_t): a value from birenCreateTextureObject; 0 is
/// never one.
pub type birenTextureObject_t = c_ulonglong;
/// A surface object (CUDA's cudaSurfaceObject_t).
pub type birenSurfaceObject_t = c_ulonglong;

/// What a texture or surface object reads (CUDA's cudaResourceType).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub enum birenResourceType {
    /// An array (res.array).
    birenResourceTypeArray = 0,
    /// A mipmapped array (not supported).
    birenResourceTypeMipmappedArray = 1,
    /// Linear device memory (res.linear), for birenTex1Dfetch*.
    birenResourceTypeLinear = 2,
    /// Pitched 2-D device memory (res.pitch2D).
    birenResourceTypePitch2D = 3,
}
/// A resource type received from C.
pub type birenResourceType_int = c_int;

/// Address modes (CUDA's cudaTextureAddressMode).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub enum birenTextureAddressMode {
    /// Coordinates wrap around (normalized coordinates only).
    birenAddressModeWrap = 0,
    /// Coordinates clamp to the edge.
    birenAddressModeClamp = 1,
    /// Coordinates mirror at each edge (normalized coordinates only).
    birenAddressModeMirror = 2,
    /// Outside, the border colour.
    birenAddressModeBorder = 3,
}
/// An address mode received from C.
pub type birenTextureAddressMode_int = c_int;

/// Filtering (CUDA's cudaTextureFilterMode).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub enum birenTextureFilterMode {
    /// The nearest texel.
    birenFilterModePoint = 0,
    /// Linear interpolation of the nearest 2, 4 or 8 texels (float results only).
    birenFilterModeLinear = 1,
}
/// A filter mode received from C.
pub type birenTextureFilterMode_int = c_int;

/// Read modes (CUDA's cudaTextureReadMode).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub enum birenTextureReadMode {
    /// The texel's own type.
    birenReadModeElementType = 0,
    /// 8- and 16-bit integers as floats in [0, 1] ([-1, 1] signed).
    birenReadModeNormalizedFloat = 1,
}
/// A read mode received from C.
pub type birenTextureReadMode_int = c_int;

/// Surface accesses out of range (CUDA's cudaSurfaceBoundaryMode).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub enum birenSurfaceBoundaryMode {
    /// Reads give 0, writes are dropped.
    birenBoundaryModeZero = 0,
    /// The coordinates are clamped to the surface.
    birenBoundaryModeClamp = 1,
    /// The launch fails with BIREN_ERROR_ILLEGAL_ADDRESS (the default).
    birenBoundaryModeTrap = 2,
}

/// res.array of a birenResourceDesc.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct birenResourceDescArray {
    /// The array.
    pub array: birenArray_t,
}
/// res.mipmap of a birenResourceDesc (not supported).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct birenResourceDescMipmap {
    /// The mipmapped array.
    pub mipmap: *mut c_void,
}
/// res.linear of a birenResourceDesc.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct birenResourceDescLinear {
    /// Device memory.
    pub devPtr: *mut c_void,
    /// Its texel format.
    pub desc: birenChannelFormatDesc,
    /// Its size in bytes.
    pub sizeInBytes: usize,
}
/// res.pitch2D of a birenResourceDesc.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct birenResourceDescPitch2D {
    /// Device memory.
    pub devPtr: *mut c_void,
    /// Its texel format.
    pub desc: birenChannelFormatDesc,
    /// Width in texels.
    pub width: usize,
    /// Height in rows.
    pub height: usize,
    /// Bytes from one row to the next.
    pub pitchInBytes: usize,
}
/// The resource of a birenResourceDesc, by resType.
#[repr(C)]
#[derive(Clone, Copy)]
pub union birenResourceDescRes {
    /// birenResourceTypeArray.
    pub array: birenResourceDescArray,
    /// birenResourceTypeMipmappedArray.
    pub mipmap: birenResourceDescMipmap,
    /// birenResourceTypeLinear.
    pub linear: birenResourceDescLinear,
    /// birenResourceTypePitch2D.
    pub pitch2D: birenResourceDescPitch2D,
}
/// What a texture or surface object reads (CUDA's cudaResourceDesc).
#[repr(C)]
#[derive(Clone, Copy)]
pub struct birenResourceDesc {
    /// Which member of res is meant (a birenResourceType value).
    pub resType: birenResourceType_int,
    /// The resource.
    pub res: birenResourceDescRes,
}

/// How a texture is sampled (CUDA's cudaTextureDesc). Set every field (memset the struct to 0
/// first, as with CUDA); the mipmap, anisotropy and cube-map fields must stay 0.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct birenTextureDesc {
    /// Address mode of x, y and z.
    pub addressMode: [birenTextureAddressMode_int; 3],
    /// Point or linear filtering.
    pub filterMode: birenTextureFilterMode_int,
    /// Element type or normalized float.
    pub readMode: birenTextureReadMode_int,
    /// sRGB conversion (not supported: must be 0).
    pub sRGB: c_int,
    /// The border colour (address mode border).
    pub borderColor: [f32; 4],
    /// Nonzero: coordinates in [0, 1) rather than [0, size).
    pub normalizedCoords: c_int,
    /// Anisotropic filtering (ignored).
    pub maxAnisotropy: c_uint,
    /// Mipmap filtering (ignored).
    pub mipmapFilterMode: birenTextureFilterMode_int,
    /// Mipmap level bias (ignored).
    pub mipmapLevelBias: f32,
    /// Mipmap level clamp (ignored).
    pub minMipmapLevelClamp: f32,
    /// Mipmap level clamp (ignored).
    pub maxMipmapLevelClamp: f32,
    /// Trilinear optimization (ignored).
    pub disableTrilinearOptimization: c_int,
    /// Filtering across a cube map's faces: not supported (non-zero on a cube map array:
    /// BIREN_ERROR_NOT_SUPPORTED; ignored for other resources, as it means nothing there).
    pub seamlessCubemap: c_int,
}

/// A view of a resource (CUDA's cudaResourceViewDesc; not supported: pass NULL).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct birenResourceViewDesc {
    /// Format of the view.
    pub format: c_int,
    /// Width of the view.
    pub width: usize,
    /// Height of the view.
    pub height: usize,
    /// Depth of the view.
    pub depth: usize,
    /// First mipmap level.
    pub firstMipmapLevel: c_uint,
    /// Last mipmap level.
    pub lastMipmapLevel: c_uint,
    /// First layer.
    pub firstLayer: c_uint,
    /// Last layer.
    pub lastLayer: c_uint,
}

fn bad<T>(call: &str, why: &str) -> Result<T> {
    diagnostics::finding(call, why);
    Err(ErrorCode::InvalidValue)
}

/// The core resource of a C description, checked.
fn resource(rt: &Runtime, r: &birenResourceDesc, call: &str) -> Result<Resource> {
    // SAFETY: resType says which member the caller set.
    unsafe {
        match r.resType {
            0 => {
                let a = r.res.array.array;
                Ok(Resource::Array {
                    handle: a as usize as u64,
                    array: array_of(rt, a, call)?,
                })
            }
            2 => {
                let l = r.res.linear;
                let format = l.desc.core();
                let texel = format.texel_bytes();
                if format.check().is_err() {
                    diagnostics::finding(call, "res.linear.desc is not a texel format");
                    return Err(ErrorCode::InvalidChannelDescriptor);
                }
                if l.sizeInBytes / texel > 1 << 27 {
                    return bad(call, "res.linear.sizeInBytes: over 2^27 texels");
                }
                rt.check_device_span(l.devPtr as usize, l.sizeInBytes, call, "res.linear.devPtr")
                    .map_err(|_| ErrorCode::InvalidValue)?;
                Ok(Resource::Linear {
                    ptr: l.devPtr as usize,
                    format,
                    bytes: l.sizeInBytes,
                })
            }
            3 => {
                let p = r.res.pitch2D;
                let format = p.desc.core();
                if format.check().is_err() {
                    diagnostics::finding(call, "res.pitch2D.desc is not a texel format");
                    return Err(ErrorCode::InvalidChannelDescriptor);
                }
                let row = p.width.checked_mul(format.texel_bytes());
                if p.width == 0 || p.height == 0 || row.is_none_or(|r| r > p.pitchInBytes) {
                    return bad(
                        call,
                        "res.pitch2D: zero width or height, or a row wider than pitchInBytes",
                    );
                }
                let span = p
                    .pitchInBytes
                    .checked_mul(p.height - 1)
                    .and_then(|s| s.checked_add(row?));
                let span = span.ok_or(ErrorCode::InvalidValue)?;
                rt.check_device_span(p.devPtr as usize, span, call, "res.pitch2D.devPtr")
                    .map_err(|_| ErrorCode::InvalidValue)?;
                Ok(Resource::Pitch2D {
                    ptr: p.devPtr as usize,
                    format,
                    width: p.width,
                    height: p.height,
                    pitch: p.pitchInBytes,
                })
            }
            1 => {
                diagnostics::finding(call, "mipmapped arrays are not supported");
                Err(ErrorCode::NotSupported)
            }
            t => bad(
                call,
                &format!("resType={t} is not a birenResourceType value"),
            ),
        }
    }
}

fn sampling(t: &birenTextureDesc, call: &str) -> Result<Sampling> {
    if t.addressMode.iter().any(|m| !(0..=3).contains(m))
        || !(0..=1).contains(&t.filterMode)
        || !(0..=1).contains(&t.readMode)
    {
        return bad(
            call,
            "an address, filter or read mode is not one of its enum's values",
        );
    }
    if t.sRGB != 0 {
        diagnostics::finding(call, "sRGB conversion is not supported");
        return Err(ErrorCode::NotSupported);
    }
    Ok(Sampling {
        addr: t.addressMode.map(|m| m as u8),
        linear: t.filterMode == 1,
        read_normalized: t.readMode == 1,
        normalized_coords: t.normalizedCoords != 0,
        border: t.borderColor,
    })
}

fn desc_bytes(t: &birenTextureDesc) -> Vec<u8> {
    // SAFETY: a plain C struct, read as its bytes.
    unsafe {
        std::slice::from_raw_parts(
            t as *const birenTextureDesc as *const u8,
            std::mem::size_of::<birenTextureDesc>(),
        )
    }
    .to_vec()
}

/// Creates a texture object reading *pResDesc (an array, linear or pitched device memory)
/// sampled as *pTexDesc, and writes it to *pTexObject. pResViewDesc must be NULL.
/// Returns BIREN_ERROR_INVALID_VALUE for NULL pTexObject, pResDesc or pTexDesc, an unknown
/// resource type or mode, device memory outside a live allocation or a pitch2D row wider than
/// its pitch, linear filtering of element-type integer texels or a normalized-float read of
/// 32-bit or float texels (as CUDA, filtering and normalized reads give floats of 8/16-bit
/// integers and floats); BIREN_ERROR_INVALID_HANDLE for an array freed or never one;
/// BIREN_ERROR_INVALID_CHANNEL_DESCRIPTOR for a format that is not one;
/// BIREN_ERROR_NOT_SUPPORTED for mipmapped arrays, a resource view, sRGB or seamlessCubemap on a
/// cube map array;
/// BIREN_ERROR_OUT_OF_MEMORY past 16383 live texture objects. Nothing is written on error.
/// The object keeps reading the resource as it is: freeing the array (or memory) while the
/// object is used is the caller's bug (fetches through it then fail the launch). Thread-safe.
#[no_mangle]
pub extern "C" fn birenCreateTextureObject(
    pTexObject: *mut birenTextureObject_t,
    pResDesc: *const birenResourceDesc,
    pTexDesc: *const birenTextureDesc,
    pResViewDesc: *const birenResourceViewDesc,
) -> birenError_t {
    ffi_call!("birenCreateTextureObject"(pTexObject, pResDesc, pTexDesc, pResViewDesc) {
        let (rt, d) = current_device()?;
        let o = out(pTexObject)?;
        // SAFETY: the C caller promises non-NULL pointers point to the structs.
        let (Some(r), Some(t)) = (unsafe { pResDesc.as_ref() }, unsafe { pTexDesc.as_ref() }) else {
            return bad("birenCreateTextureObject", "pResDesc or pTexDesc is NULL");
        };
        if !pResViewDesc.is_null() {
            diagnostics::finding("birenCreateTextureObject", "resource views are not supported: pResViewDesc must be NULL");
            return Err(ErrorCode::NotSupported);
        }
        let res = resource(rt, r, "birenCreateTextureObject")?;
        if t.seamlessCubemap != 0 && res.is_cubemap() {
            diagnostics::finding("birenCreateTextureObject", "seamlessCubemap: filtering across a cube map's faces is not supported");
            return Err(ErrorCode::NotSupported);
        }
        let obj = TexObject {
            device: d.index,
            resource: res,
            sampling: sampling(t, "birenCreateTextureObject")?,
            desc_bytes: desc_bytes(t),
        };
        *o = rt.textures.create(obj, false).inspect_err(|e| {
            if *e == ErrorCode::InvalidValue {
                diagnostics::finding("birenCreateTextureObject", "linear filtering and normalized-float reads need float results: 8/16-bit integer texels read as normalized floats, or float texels (normalized reads: integers only)");
            }
        })?;
        Ok(())
    })
}

/// Destroys a texture object: fetches through it fail from now on. 0 succeeds (no object).
/// Returns BIREN_ERROR_INVALID_HANDLE for an object already destroyed or never one. Kernels
/// still running that fetch through it fail. Thread-safe.
#[no_mangle]
pub extern "C" fn birenDestroyTextureObject(texObject: birenTextureObject_t) -> birenError_t {
    ffi_call!("birenDestroyTextureObject"(texObject) {
        let rt = runtime::get()?;
        if texObject == 0 {
            return Ok(());
        }
        rt.textures.destroy(texObject, false).inspect_err(|_| {
            diagnostics::finding("birenDestroyTextureObject", &rt.textures.diagnose(texObject, false));
        })
    })
}

fn resource_desc(r: &Resource) -> birenResourceDesc {
    match r {
        Resource::Array { handle, .. } => birenResourceDesc {
            resType: 0,
            res: birenResourceDescRes {
                array: birenResourceDescArray {
                    array: *handle as usize as birenArray_t,
                },
            },
        },
        Resource::Linear { ptr, format, bytes } => birenResourceDesc {
            resType: 2,
            res: birenResourceDescRes {
                linear: birenResourceDescLinear {
                    devPtr: *ptr as *mut c_void,
                    desc: birenChannelFormatDesc::from_core(format),
                    sizeInBytes: *bytes,
                },
            },
        },
        Resource::Pitch2D {
            ptr,
            format,
            width,
            height,
            pitch,
        } => birenResourceDesc {
            resType: 3,
            res: birenResourceDescRes {
                pitch2D: birenResourceDescPitch2D {
                    devPtr: *ptr as *mut c_void,
                    desc: birenChannelFormatDesc::from_core(format),
                    width: *width,
                    height: *height,
                    pitchInBytes: *pitch,
                },
            },
        },
    }
}

/// Writes the resource description texObject was created with to *pResDesc.
/// BIREN_ERROR_INVALID_VALUE for NULL pResDesc; BIREN_ERROR_INVALID_HANDLE for an object
/// destroyed or never one. Thread-safe.
#[no_mangle]
pub extern "C" fn birenGetTextureObjectResourceDesc(
    pResDesc: *mut birenResourceDesc,
    texObject: birenTextureObject_t,
) -> birenError_t {
    ffi_call!("birenGetTextureObjectResourceDesc"(pResDesc, texObject) {
        let rt = runtime::get()?;
        let o = out(pResDesc)?;
        *o = resource_desc(&rt.textures.get(texObject, false)?.resource);
        Ok(())
    })
}

/// Writes the texture description texObject was created with to *pTexDesc (as given).
/// BIREN_ERROR_INVALID_VALUE for NULL pTexDesc; BIREN_ERROR_INVALID_HANDLE for an object
/// destroyed or never one. Thread-safe.
#[no_mangle]
pub extern "C" fn birenGetTextureObjectTextureDesc(
    pTexDesc: *mut birenTextureDesc,
    texObject: birenTextureObject_t,
) -> birenError_t {
    ffi_call!("birenGetTextureObjectTextureDesc"(pTexDesc, texObject) {
        let rt = runtime::get()?;
        let o = out(pTexDesc)?;
        let t = rt.textures.get(texObject, false)?;
        // SAFETY: desc_bytes holds a birenTextureDesc's bytes (made by desc_bytes).
        *o = unsafe { std::ptr::read_unaligned(t.desc_bytes.as_ptr() as *const birenTextureDesc) };
        Ok(())
    })
}

/// Creates a surface object on the array of *pResDesc (resType birenResourceTypeArray, an
/// array allocated with birenArraySurfaceLoadStore) and writes it to *pSurfObject.
/// Returns BIREN_ERROR_INVALID_VALUE for NULL arguments, another resource type or an array
/// without birenArraySurfaceLoadStore; BIREN_ERROR_INVALID_HANDLE for an array freed or never
/// one; BIREN_ERROR_OUT_OF_MEMORY past 16383 live surface objects. Nothing is written on error.
/// Thread-safe.
#[no_mangle]
pub extern "C" fn birenCreateSurfaceObject(
    pSurfObject: *mut birenSurfaceObject_t,
    pResDesc: *const birenResourceDesc,
) -> birenError_t {
    ffi_call!("birenCreateSurfaceObject"(pSurfObject, pResDesc) {
        let (rt, d) = current_device()?;
        let o = out(pSurfObject)?;
        // SAFETY: the C caller promises a non-NULL pResDesc points to the struct.
        let Some(r) = (unsafe { pResDesc.as_ref() }) else {
            return bad("birenCreateSurfaceObject", "pResDesc is NULL");
        };
        if r.resType != 0 {
            return bad("birenCreateSurfaceObject", "a surface object needs an array (resType birenResourceTypeArray)");
        }
        let res = resource(rt, r, "birenCreateSurfaceObject")?;
        if let Resource::Array { array, .. } = &res {
            if array.flags & SURFACE_LOAD_STORE == 0 {
                return bad("birenCreateSurfaceObject", "the array was not allocated with birenArraySurfaceLoadStore");
            }
        }
        let obj = TexObject {
            device: d.index,
            resource: res,
            sampling: Sampling { addr: [1; 3], ..Default::default() },
            desc_bytes: Vec::new(),
        };
        *o = rt.textures.create(obj, true)?;
        Ok(())
    })
}

/// Destroys a surface object. 0 succeeds. BIREN_ERROR_INVALID_HANDLE for an object already
/// destroyed or never one. Thread-safe.
#[no_mangle]
pub extern "C" fn birenDestroySurfaceObject(surfObject: birenSurfaceObject_t) -> birenError_t {
    ffi_call!("birenDestroySurfaceObject"(surfObject) {
        let rt = runtime::get()?;
        if surfObject == 0 {
            return Ok(());
        }
        rt.textures.destroy(surfObject, true).inspect_err(|_| {
            diagnostics::finding("birenDestroySurfaceObject", &rt.textures.diagnose(surfObject, true));
        })
    })
}

/// Writes the resource description surfObject was created with to *pResDesc.
/// BIREN_ERROR_INVALID_VALUE for NULL pResDesc; BIREN_ERROR_INVALID_HANDLE for an object
/// destroyed or never one. Thread-safe.
#[no_mangle]
pub extern "C" fn birenGetSurfaceObjectResourceDesc(
    pResDesc: *mut birenResourceDesc,
    surfObject: birenSurfaceObject_t,
) -> birenError_t {
    ffi_call!("birenGetSurfaceObjectResourceDesc"(pResDesc, surfObject) {
        let rt = runtime::get()?;
        let o = out(pResDesc)?;
        *o = resource_desc(&rt.textures.get(surfObject, true)?.resource);
        Ok(())
    })
}

fn report(msg: &str) {
    diagnostics::finding("kernel", msg);
}

/// The slow path of a fetch through a texture object with no live descriptor (see the header's
/// texture section): reports it and fails the calling kernel's launch.
#[no_mangle]
pub extern "C" fn birenTexInvalid(t: c_ulonglong) {
    ffi_value!("birenTexInvalid", (), {
        if let Some(rt) = runtime::try_get() {
            report(&rt.textures.diagnose(t, false));
        }
        // SAFETY: a NULL loop is allowed (the block names its first thread then).
        unsafe {
            device::block::illegal_access(
                std::ptr::null_mut(),
                "a texture fetch through an object that is not a live texture object (destroyed, never one, or its array freed)",
            )
        }
    })
}

/// The slow path of a surface access (see the header's surface section).
#[no_mangle]
pub extern "C" fn birenSurfInvalid(
    loop_: *mut birenKernelLoop,
    s: c_ulonglong,
    x: c_int,
    y: c_int,
    z: c_int,
    outOfRange: c_int,
) {
    ffi_value!("birenSurfInvalid", (), {
        let what = if outOfRange != 0 {
            if let Some(rt) = runtime::try_get() {
                report(&format!("surface object {s:#x}: an access at ({x} bytes, {y}, {z}) is outside the surface (boundary mode trap)"));
                let _ = rt;
            }
            "a surface access out of range (boundary mode trap)"
        } else {
            if let Some(rt) = runtime::try_get() {
                report(&rt.textures.diagnose(s, true));
            }
            "a surface access through an object that is not a live surface object (destroyed, never one, or its array freed)"
        };
        // SAFETY: loop_ is the caller's biren_loop_ or NULL.
        unsafe { device::block::illegal_access(loop_ as *mut KernelLoop, what) }
    })
}
