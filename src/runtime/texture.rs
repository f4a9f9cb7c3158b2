//! Texture and surface objects (CUDA's cudaTextureObject_t, cudaSurfaceObject_t).
//!
//! An object is a registry handle; kernels fetch through it without calling the library: the
//! header's inline fetch functions read the object's *descriptor*, a small record in a table the
//! library exports (`birenTexTable`, `birenSurfTable`, indexed by the handle's slot). A
//! descriptor holds its object's handle as `key`; a fetch whose object value does not match the
//! key (a destroyed object, a value that never was one, an object whose array was freed) takes
//! the slow path, `diagnose`, which names the mistake and fails the launch.
//!
//! The fetch rules themselves (coordinates, address modes, filtering, read modes) are in the
//! header (tools/texture_header.py), where the compiler inlines them into the kernel.

use crate::runtime::error::{ErrorCode, Result};
use crate::runtime::memory::array::{ArrayCore, ChannelFormat, KIND_FLOAT, KIND_SIGNED};
use crate::runtime::registry::{HandleKind, Registry};
use std::cell::UnsafeCell;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// Descriptors per table: live texture objects (and, in the other table, surface objects).
pub(crate) const TABLE_SIZE: usize = 1 << 14;

/// Texel formats of a descriptor (`TexSlot::format`).
pub(crate) const FMT_F32: u8 = 0;
pub(crate) const FMT_U8: u8 = 1;
pub(crate) const FMT_S8: u8 = 2;
pub(crate) const FMT_U16: u8 = 3;
pub(crate) const FMT_S16: u8 = 4;
pub(crate) const FMT_U32: u8 = 5;
pub(crate) const FMT_S32: u8 = 6;
pub(crate) const FMT_F16: u8 = 7;

/// Address modes (CUDA's cudaTextureAddressMode values).
pub(crate) const ADDR_WRAP: u8 = 0;
pub(crate) const ADDR_CLAMP: u8 = 1;
pub(crate) const ADDR_MIRROR: u8 = 2;
pub(crate) const ADDR_BORDER: u8 = 3;

/// A descriptor: what an inline fetch needs, in the layout the header declares
/// (`birenTexSlot_`). Written by the host only while `key` is 0.
#[repr(C)]
pub struct TexSlot {
    /// The object's value while it is live and readable; 0 otherwise.
    pub key: AtomicU64,
    pub base: usize,
    pub pitch: usize,
    pub slice: usize,
    pub width: i32,
    pub height: i32,
    pub depth: i32,
    pub fwidth: f32,
    pub fheight: f32,
    pub fdepth: f32,
    pub border: [f32; 4],
    pub format: u8,
    pub channels: u8,
    pub texel: u8,
    pub normalized: u8,
    pub linear: u8,
    pub read_normalized: u8,
    pub addr: [u8; 3],
    pub dims: u8,
    pub layered: u8,
    /// The header's short paths, for one-channel float texels read as they are: `FAST_POINT`
    /// and `FAST_LINEAR` (unnormalized coordinates, every dimension clamped), `FAST_POINT_NORM`,
    /// or 0.
    pub fast: u8,
    /// The last texel's coordinates (width - 1, height - 1, depth - 1), precomputed for the
    /// point path's clamp.
    pub xmax: f32,
    pub ymax: f32,
    pub zmax: f32,
}

/// `TexSlot::fast` values.
const FAST_POINT: u8 = 1;
const FAST_LINEAR: u8 = 2;
/// Point sampling with normalized coordinates, x and y each wrapped, mirrored or clamped (the
/// header's path covers 1-D and 2-D fetches; border needs the general sampler).
const FAST_POINT_NORM: u8 = 3;
/// The largest width and height the header's linear path takes (its fixed point is exact below
/// 2^22 / 256 texels).
const FAST_LINEAR_MAX: usize = 8192;

const _: () = assert!(
    std::mem::size_of::<TexSlot>() == 96,
    "the header's birenTexSlot_"
);

impl TexSlot {
    const fn empty() -> TexSlot {
        TexSlot {
            key: AtomicU64::new(0),
            base: 0,
            pitch: 0,
            slice: 0,
            width: 0,
            height: 0,
            depth: 0,
            fwidth: 0.0,
            fheight: 0.0,
            fdepth: 0.0,
            border: [0.0; 4],
            format: 0,
            channels: 0,
            texel: 0,
            normalized: 0,
            linear: 0,
            read_normalized: 0,
            addr: [0; 3],
            dims: 0,
            layered: 0,
            fast: 0,
            xmax: 0.0,
            ymax: 0.0,
            zmax: 0.0,
        }
    }
}

/// A table of descriptors, exported to kernels.
#[repr(transparent)]
pub struct Table(UnsafeCell<[TexSlot; TABLE_SIZE]>);

// SAFETY: a slot's fields are written only while its key is 0 (no fetch can match it) and by one
// host thread at a time (the registry hands each index to one object); kernels only read.
unsafe impl Sync for Table {}

impl Table {
    fn slot(&self, index: usize) -> *mut TexSlot {
        // SAFETY: the index is checked against the table by the caller (`slot_index`).
        unsafe { (*self.0.get()).as_mut_ptr().add(index) }
    }
}

/// The texture objects' descriptors (read by the header's inline fetches).
#[no_mangle]
pub static birenTexTable: Table = Table(UnsafeCell::new([const { TexSlot::empty() }; TABLE_SIZE]));
/// The surface objects' descriptors.
#[no_mangle]
pub static birenSurfTable: Table = Table(UnsafeCell::new([const { TexSlot::empty() }; TABLE_SIZE]));

/// What an object reads: an array, or linear or pitched device memory.
#[derive(Clone, Debug)]
pub enum Resource {
    Array {
        handle: u64,
        array: Arc<ArrayCore>,
    },
    Linear {
        ptr: usize,
        format: ChannelFormat,
        bytes: usize,
    },
    Pitch2D {
        ptr: usize,
        format: ChannelFormat,
        width: usize,
        height: usize,
        pitch: usize,
    },
}

/// How a texture is sampled (CUDA's cudaTextureDesc, the fields this runtime honours).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Sampling {
    pub addr: [u8; 3],
    pub linear: bool,
    pub read_normalized: bool,
    pub normalized_coords: bool,
    pub border: [f32; 4],
}

/// A live texture or surface object.
#[derive(Debug)]
pub struct TexObject {
    pub device: usize,
    pub resource: Resource,
    pub sampling: Sampling,
    /// The texture description exactly as given (returned by birenGetTextureObjectTextureDesc).
    pub desc_bytes: Vec<u8>,
}

fn format_code(f: &ChannelFormat) -> Result<(u8, u8, u8)> {
    let (n, b) = f.check()?;
    let code = match (f.kind, b) {
        (KIND_FLOAT, 4) => FMT_F32,
        (KIND_FLOAT, 2) => FMT_F16,
        (KIND_SIGNED, 1) => FMT_S8,
        (KIND_SIGNED, 2) => FMT_S16,
        (KIND_SIGNED, 4) => FMT_S32,
        (_, 1) => FMT_U8,
        (_, 2) => FMT_U16,
        _ => FMT_U32,
    };
    Ok((code, n as u8, (n * b) as u8))
}

impl Resource {
    /// A cube map array (birenArrayCubemap), read by the cube map fetches.
    pub fn is_cubemap(&self) -> bool {
        matches!(self, Resource::Array { array, .. }
            if array.flags & crate::runtime::memory::array::CUBEMAP != 0)
    }

    fn format(&self) -> ChannelFormat {
        match self {
            Resource::Array { array, .. } => array.format,
            Resource::Linear { format, .. } | Resource::Pitch2D { format, .. } => *format,
        }
    }

    /// (base, pitch, slice, width, height, depth, dims, layered) in texels and bytes.
    fn geometry(&self) -> (usize, usize, usize, usize, usize, usize, u8, bool) {
        let texel = self.format().texel_bytes().max(1);
        match self {
            Resource::Array { array: a, .. } => {
                use crate::runtime::memory::array::{CUBEMAP, LAYERED};
                // A cube map's faces are the layers of a 2-D layered array.
                let layered = a.flags & (LAYERED | CUBEMAP) != 0;
                let dims = if layered {
                    if a.height == 0 {
                        1
                    } else {
                        2
                    }
                } else if a.depth > 0 {
                    3
                } else if a.height > 0 {
                    2
                } else {
                    1
                };
                (
                    a.base,
                    a.pitch(),
                    a.slice_bytes(),
                    a.width,
                    a.rows(),
                    a.slices(),
                    dims,
                    layered,
                )
            }
            Resource::Linear { ptr, bytes, .. } => {
                (*ptr, *bytes, *bytes, *bytes / texel, 1, 1, 1, false)
            }
            Resource::Pitch2D {
                ptr,
                width,
                height,
                pitch,
                ..
            } => (*ptr, *pitch, pitch * height, *width, *height, 1, 2, false),
        }
    }
}

/// The live texture and surface objects.
pub struct Textures {
    textures: Registry<TexObject>,
    surfaces: Registry<TexObject>,
}

impl Default for Textures {
    fn default() -> Self {
        for t in [&birenTexTable, &birenSurfTable] {
            // SAFETY: slot 0 is no object's; its key only ever holds this value.
            unsafe { (*t.slot(0)).key.store(u64::MAX, Ordering::Release) };
        }
        Textures {
            textures: Registry::new(HandleKind::TextureObject),
            surfaces: Registry::new(HandleKind::SurfaceObject),
        }
    }
}

/// The table slot of an object value: its low bits, the registry's index + 1 (an inline fetch
/// masks the value and compares the slot's key, one load and one compare). Slot 0 is never an
/// object's: its key is all ones, so that neither 0 nor a free slot's key 0 ever matches.
fn slot_index(handle: u64) -> Option<usize> {
    let low = (handle & 0xff_ffff) as usize;
    (1..TABLE_SIZE).contains(&low).then_some(low)
}

/// The memory behind a live texture or surface object `value` (its array, or its linear
/// memory), or None: race detection counts a kernel given the object as touching that memory.
/// Reads the descriptors only, without a lock (a slot's fields are set before its key).
pub fn object_memory(value: u64) -> Option<usize> {
    let index = slot_index(value)?;
    [&birenTexTable, &birenSurfTable].iter().find_map(|t| {
        // SAFETY: index < TABLE_SIZE; the key is atomic and `base` is written only while the
        // key is 0, so a matching key means a base that belongs to `value`.
        let s = unsafe { &*t.slot(index) };
        (s.key.load(Ordering::Acquire) == value).then_some(s.base)
    })
}

impl Textures {
    fn parts(&self, surface: bool) -> (&Registry<TexObject>, &'static Table) {
        if surface {
            (&self.surfaces, &birenSurfTable)
        } else {
            (&self.textures, &birenTexTable)
        }
    }

    /// Registers an object and publishes its descriptor; returns its value. Checks the sampling
    /// against the format (linear filtering and normalized reads need float results: 8- and
    /// 16-bit integers or floats); `OutOfMemory` when every descriptor is taken.
    pub fn create(&self, obj: TexObject, surface: bool) -> Result<u64> {
        let f = obj.resource.format();
        let (format, channels, texel) = format_code(&f)?;
        let s = &obj.sampling;
        let small_int = matches!(format, FMT_U8 | FMT_S8 | FMT_U16 | FMT_S16);
        let floats = format == FMT_F32 || format == FMT_F16;
        // Normalized reads are of 8/16-bit integers; filtering needs float results.
        if (s.read_normalized && !small_int) || (s.linear && !floats && !s.read_normalized) {
            return Err(ErrorCode::InvalidValue);
        }
        let (base, pitch, slice, w, h, d, dims, layered) = obj.resource.geometry();
        let sampling = *s;
        let (reg, table) = self.parts(surface);
        let handle = reg.insert(Arc::new(obj)).ok_or(ErrorCode::OutOfMemory)?;
        let Some(index) = slot_index(handle) else {
            reg.remove(handle);
            return Err(ErrorCode::OutOfMemory);
        };
        // Wrap and mirror apply to normalized coordinates only; otherwise they clamp (CUDA).
        let addr = sampling.addr.map(|m| {
            if !sampling.normalized_coords && (m == ADDR_WRAP || m == ADDR_MIRROR) {
                ADDR_CLAMP
            } else {
                m
            }
        });
        let p = table.slot(index);
        // SAFETY: the slot is ours (the registry gave its index to this object alone) and its
        // key is 0, so no fetch reads these fields as a live object's until the key is stored.
        unsafe {
            debug_assert_eq!((*p).key.load(Ordering::Relaxed), 0);
            (*p).base = base;
            (*p).pitch = pitch;
            (*p).slice = slice;
            (*p).width = w as i32;
            (*p).height = h as i32;
            (*p).depth = d as i32;
            (*p).fwidth = w as f32;
            (*p).fheight = h as f32;
            (*p).fdepth = d as f32;
            (*p).border = sampling.border;
            (*p).format = format;
            (*p).channels = channels;
            (*p).texel = texel;
            (*p).normalized = sampling.normalized_coords as u8;
            (*p).linear = sampling.linear as u8;
            (*p).read_normalized = sampling.read_normalized as u8;
            (*p).addr = addr;
            (*p).dims = dims;
            (*p).layered = layered as u8;
            // The short paths read texel i of a row at 4 i bytes: one float channel.
            let floats1 = format == FMT_F32 && channels == 1;
            let plain = floats1 && !sampling.normalized_coords && addr == [ADDR_CLAMP; 3];
            let norm_point = floats1
                && sampling.normalized_coords
                && !sampling.linear
                && addr[..2].iter().all(|&m| m != ADDR_BORDER);
            // The linear path computes in fixed point, exact for sizes up to FAST_LINEAR_MAX.
            (*p).fast = match (plain, sampling.linear) {
                (true, false) => FAST_POINT,
                (true, true) if w <= FAST_LINEAR_MAX && h <= FAST_LINEAR_MAX => FAST_LINEAR,
                _ if norm_point => FAST_POINT_NORM,
                _ => 0,
            };
            (*p).xmax = (w as f32 - 1.0).max(0.0);
            (*p).ymax = (h as f32 - 1.0).max(0.0);
            (*p).zmax = (d as f32 - 1.0).max(0.0);
            (*p).key.store(handle, Ordering::Release);
        }
        Ok(handle)
    }

    pub fn get(&self, handle: u64, surface: bool) -> Result<Arc<TexObject>> {
        self.parts(surface)
            .0
            .get(handle)
            .ok_or(ErrorCode::InvalidHandle)
    }

    /// Destroys an object: its descriptor answers no fetch from now on.
    pub fn destroy(&self, handle: u64, surface: bool) -> Result<()> {
        let (reg, table) = self.parts(surface);
        let index = slot_index(handle).ok_or(ErrorCode::InvalidHandle)?;
        // Unpublish first, under the registry's check that the handle is live.
        let key = &unsafe { &*table.slot(index) }.key;
        reg.get(handle).ok_or(ErrorCode::InvalidHandle)?;
        let _ = key.compare_exchange(handle, 0, Ordering::AcqRel, Ordering::Relaxed);
        reg.remove(handle).ok_or(ErrorCode::InvalidHandle)?;
        Ok(())
    }

    /// An array was freed: every object reading it stops answering fetches (they now take the
    /// slow path, which names the freed array). The objects stay live until destroyed.
    pub fn array_freed(&self, array: u64) {
        for surface in [false, true] {
            let (reg, table) = self.parts(surface);
            for index in reg.indices_where(
                |o| matches!(o.resource, Resource::Array { handle, .. } if handle == array),
            ) {
                // SAFETY: a live object's slot is inside the table (checked at create).
                unsafe { (*table.slot(index + 1)).key.store(0, Ordering::Release) };
            }
        }
    }

    /// Forgets the objects of `device` (birenDeviceReset).
    pub fn on_reset(&self, device: usize) {
        for surface in [false, true] {
            let (reg, table) = self.parts(surface);
            for (h, _) in reg.remove_where(|o| o.device == device) {
                if let Some(i) = slot_index(h) {
                    // SAFETY: i < TABLE_SIZE.
                    unsafe { (*table.slot(i)).key.store(0, Ordering::Release) };
                }
            }
        }
    }

    /// Why a fetch through `value` did not match a live descriptor.
    pub fn diagnose(&self, value: u64, surface: bool) -> String {
        let what = if surface { "surface" } else { "texture" };
        match self.parts(surface).0.get(value) {
            Some(o) => match &o.resource {
                Resource::Array { handle, .. } => format!(
                    "a fetch through {what} object {value:#x} reads array {handle:#x}, which was freed (birenFreeArray) while the object lives"
                ),
                _ => format!("{what} object {value:#x} is not usable"),
            },
            None if value == 0 => format!("{what} object 0 was used: no {what} object is 0 (was it created?)"),
            None if self.parts(!surface).0.get(value).is_some() => format!(
                "{value:#x} is a {} object, used as a {what} object",
                if surface { "texture" } else { "surface" }
            ),
            None => format!(
                "{what} object {value:#x} was destroyed, or never was one (a foreign or forged value)"
            ),
        }
    }

    pub fn live(&self) -> (usize, usize) {
        (self.textures.live(), self.surfaces.live())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::memory::array::{KIND_FLOAT, KIND_UNSIGNED, SURFACE_LOAD_STORE};

    fn array(flags: u32) -> Arc<ArrayCore> {
        array_of([8, 8, 8, 8], KIND_UNSIGNED, flags)
    }

    fn array_of(bits: [i32; 4], kind: i32, flags: u32) -> Arc<ArrayCore> {
        Arc::new(ArrayCore {
            device: 0,
            base: 4096,
            format: ChannelFormat { bits, kind },
            width: 8,
            height: 4,
            depth: 0,
            flags,
        })
    }

    fn obj(sampling: Sampling) -> TexObject {
        TexObject {
            device: 0,
            resource: Resource::Array {
                handle: 77,
                array: array(SURFACE_LOAD_STORE),
            },
            sampling,
            desc_bytes: Vec::new(),
        }
    }

    #[test]
    fn descriptors_follow_objects() {
        let t = Textures::default();
        let s = Sampling {
            addr: [ADDR_WRAP, ADDR_BORDER, ADDR_CLAMP],
            linear: true,
            read_normalized: true,
            ..Default::default()
        };
        let h = t.create(obj(s), false).unwrap();
        let slot = unsafe { &*birenTexTable.slot(slot_index(h).unwrap()) };
        assert_eq!(slot.key.load(Ordering::Relaxed), h);
        assert_eq!(
            (slot.width, slot.height, slot.depth, slot.dims),
            (8, 4, 1, 2)
        );
        assert_eq!(
            (slot.format, slot.channels, slot.texel, slot.pitch),
            (FMT_U8, 4, 4, 32)
        );
        assert_eq!(
            slot.addr,
            [ADDR_CLAMP, ADDR_BORDER, ADDR_CLAMP],
            "wrap needs normalized coordinates"
        );
        t.array_freed(77);
        assert_eq!(slot.key.load(Ordering::Relaxed), 0);
        assert!(t.diagnose(h, false).contains("freed"));
        assert!(t
            .diagnose(h, true)
            .contains("texture object, used as a surface"));
        t.destroy(h, false).unwrap();
        assert!(t.diagnose(h, false).contains("destroyed"));
        assert_eq!(t.destroy(h, false), Err(ErrorCode::InvalidHandle));
        assert_eq!(t.destroy(0xdead_beef, false), Err(ErrorCode::InvalidHandle));
    }

    #[test]
    fn short_paths_take_one_float_channel() {
        let t = Textures::default();
        let fast = |bits: [i32; 4], s: Sampling| {
            let mut o = obj(s);
            o.resource = Resource::Array {
                handle: 78,
                array: array_of(bits, KIND_FLOAT, 0),
            };
            let h = t.create(o, false).unwrap();
            let f = unsafe { (*birenTexTable.slot(slot_index(h).unwrap())).fast };
            t.destroy(h, false).unwrap();
            f
        };
        let clamp = Sampling {
            addr: [ADDR_CLAMP; 3],
            ..Default::default()
        };
        let one = [32, 0, 0, 0];
        assert_eq!(fast(one, clamp), FAST_POINT);
        assert_eq!(fast([32; 4], clamp), 0, "texel i is not at 4 i bytes");
        let lin = Sampling {
            linear: true,
            ..clamp
        };
        assert_eq!(fast(one, lin), FAST_LINEAR);
        let norm = Sampling {
            addr: [ADDR_WRAP, ADDR_MIRROR, ADDR_BORDER],
            normalized_coords: true,
            ..Default::default()
        };
        assert_eq!(fast(one, norm), FAST_POINT_NORM, "z's mode is not read");
        let border = Sampling {
            addr: [ADDR_WRAP, ADDR_BORDER, ADDR_WRAP],
            ..norm
        };
        assert_eq!(fast(one, border), 0);
        assert_eq!(
            fast(
                one,
                Sampling {
                    linear: true,
                    ..norm
                }
            ),
            0
        );
    }

    #[test]
    fn sampling_must_suit_the_format() {
        let t = Textures::default();
        let s = Sampling {
            linear: true,
            ..Default::default()
        };
        assert_eq!(
            t.create(obj(s), false),
            Err(ErrorCode::InvalidValue),
            "linear on uchar4 elements"
        );
    }
}
