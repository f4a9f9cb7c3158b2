//! Accelerator arrays (CUDA's cudaArray): device memory with a texel format and an extent, which
//! textures and surfaces read and write. A handle from the registry names each; the memory is an
//! ordinary device allocation, so copies into and out of an array are 2D/3D copies of its rows
//! (`Side`) and go through streams, graphs, the race detector and the trace like any other.
//!
//! Layout: texels row-major, rows packed (`pitch` = width * texel size), slices (3-D) or layers
//! one after another. A 2-D neighbourhood of a texel is then its row and the rows above and
//! below, each a contiguous run: a bilinear fetch reads two cache lines at most.

use crate::runtime::error::{ErrorCode, Result};
use crate::runtime::memory::side::Side;
use crate::runtime::registry::{HandleKind, Registry};
use std::sync::Arc;

/// CUDA's cudaArrayLayered.
pub(crate) const LAYERED: u32 = 1;
/// CUDA's cudaArraySurfaceLoadStore.
pub(crate) const SURFACE_LOAD_STORE: u32 = 2;
/// CUDA's cudaArrayCubemap: six square faces (layers), or with LAYERED six per cube.
pub(crate) const CUBEMAP: u32 = 4;
/// CUDA's cudaArrayTextureGather.
pub(crate) const TEXTURE_GATHER: u32 = 8;
/// Flags an array may have (sparse and deferred-mapping arrays are not offered).
pub(crate) const KNOWN_FLAGS: u32 = LAYERED | SURFACE_LOAD_STORE | CUBEMAP | TEXTURE_GATHER | 0x20;

/// Extent limits (texels) of compute capability 6.0's textures and surfaces.
pub(crate) const MAX_1D: usize = 131072;
pub(crate) const MAX_2D: (usize, usize) = (131072, 65536);
pub(crate) const MAX_3D: usize = 16384;
pub(crate) const MAX_LAYERED: (usize, usize) = (32768, 2048);
/// A cube map's face width (and height), and the cubes of a layered cube map.
pub(crate) const MAX_CUBEMAP: (usize, usize) = (32768, 2046);

/// Channel kinds (CUDA's cudaChannelFormatKind).
pub(crate) const KIND_SIGNED: i32 = 0;
pub(crate) const KIND_UNSIGNED: i32 = 1;
pub(crate) const KIND_FLOAT: i32 = 2;

/// A texel format: bits per channel x, y, z, w and the channel kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ChannelFormat {
    pub bits: [i32; 4],
    pub kind: i32,
}

impl ChannelFormat {
    /// Checks the format (channels 1, 2 or 4 of the same size, in order; 8/16/32 bits for
    /// integers, 16/32 for floats) and returns (channels, bytes per channel).
    pub fn check(&self) -> Result<(usize, usize)> {
        let n = self.bits.iter().take_while(|&&b| b != 0).count();
        let size = self.bits[0];
        let sizes_ok = match self.kind {
            KIND_SIGNED | KIND_UNSIGNED => matches!(size, 8 | 16 | 32),
            KIND_FLOAT => matches!(size, 16 | 32),
            _ => false,
        };
        if !sizes_ok
            || !matches!(n, 1 | 2 | 4)
            || self.bits[..n].iter().any(|&b| b != size)
            || self.bits[n..].iter().any(|&b| b != 0)
        {
            return Err(ErrorCode::InvalidChannelDescriptor);
        }
        Ok((n, size as usize / 8))
    }

    /// Bytes per texel (the format was checked).
    pub fn texel_bytes(&self) -> usize {
        self.check().map_or(0, |(n, b)| n * b)
    }
}

/// A live array. Height 0: 1-D; depth 0: 2-D (or 1-D layered with LAYERED: height 0, depth
/// layers). With LAYERED the depth counts layers; with CUBEMAP it counts faces (6 per cube, in
/// CUDA's order +x, -x, +y, -y, +z, -z), each a width x height (square) layer.
#[derive(Debug)]
pub struct ArrayCore {
    pub device: usize,
    pub base: usize,
    pub format: ChannelFormat,
    pub width: usize,
    pub height: usize,
    pub depth: usize,
    pub flags: u32,
}

impl ArrayCore {
    pub fn texel_bytes(&self) -> usize {
        self.format.texel_bytes()
    }
    /// Bytes of one row.
    pub fn pitch(&self) -> usize {
        self.width * self.texel_bytes()
    }
    pub fn rows(&self) -> usize {
        self.height.max(1)
    }
    /// Slices (3-D) or layers.
    pub fn slices(&self) -> usize {
        self.depth.max(1)
    }
    /// Bytes from one slice or layer to the next.
    pub fn slice_bytes(&self) -> usize {
        self.pitch() * self.rows()
    }
    pub fn bytes(&self) -> usize {
        self.slice_bytes() * self.slices()
    }

    /// The rows of a box in the array: `width` bytes from byte `x` of row `y` of slice `z`,
    /// `height` rows, `depth` slices, all inside the array (else `InvalidValue`, said why).
    #[allow(clippy::too_many_arguments)]
    pub fn side(
        &self,
        x: usize,
        y: usize,
        z: usize,
        width: usize,
        height: usize,
        depth: usize,
        call: &str,
        arg: &str,
    ) -> Result<Side> {
        let inside =
            |pos: usize, len: usize, max: usize| pos.checked_add(len).is_some_and(|e| e <= max);
        if !inside(x, width, self.pitch())
            || !inside(y, height, self.rows())
            || !inside(z, depth, self.slices())
        {
            crate::runtime::diagnostics::finding(
                call,
                &format!(
                    "{arg}: the box of {width} bytes x {height} rows x {depth} at ({x} bytes, {y}, {z}) is outside the array of {} bytes x {} rows x {}",
                    self.pitch(),
                    self.rows(),
                    self.slices()
                ),
            );
            return Err(ErrorCode::InvalidValue);
        }
        Ok(Side {
            base: self.base + z * self.slice_bytes() + y * self.pitch() + x,
            pitch: self.pitch(),
            slice: self.slice_bytes(),
        })
    }
}

/// Checks an array's extent against `flags` and the limits; returns its size in bytes.
pub fn check_extent(
    format: &ChannelFormat,
    width: usize,
    height: usize,
    depth: usize,
    flags: u32,
) -> Result<usize> {
    format.check()?;
    if flags & !KNOWN_FLAGS != 0 || width == 0 {
        return Err(ErrorCode::InvalidValue);
    }
    let ok = if flags & CUBEMAP != 0 {
        let cubes = if flags & LAYERED != 0 {
            1..=MAX_CUBEMAP.1
        } else {
            1..=1
        };
        width == height
            && width <= MAX_CUBEMAP.0
            && depth.is_multiple_of(6)
            && cubes.contains(&(depth / 6))
    } else if flags & LAYERED != 0 {
        width <= MAX_LAYERED.0 && height <= MAX_LAYERED.0 && (1..=MAX_LAYERED.1).contains(&depth)
    } else if depth > 0 {
        height > 0 && width <= MAX_3D && height <= MAX_3D && depth <= MAX_3D
    } else if height > 0 {
        width <= MAX_2D.0 && height <= MAX_2D.1
    } else {
        width <= MAX_1D
    };
    if !ok {
        return Err(ErrorCode::InvalidValue);
    }
    Ok(width * format.texel_bytes() * height.max(1) * depth.max(1))
}

/// The live arrays of every device.
pub struct Arrays {
    registry: Registry<ArrayCore>,
}

impl Default for Arrays {
    fn default() -> Self {
        Arrays {
            registry: Registry::new(HandleKind::Array),
        }
    }
}

impl Arrays {
    pub fn insert(&self, a: ArrayCore) -> Option<u64> {
        self.registry.insert(Arc::new(a))
    }
    pub fn get(&self, handle: u64) -> Result<Arc<ArrayCore>> {
        self.registry.get(handle).ok_or(ErrorCode::InvalidHandle)
    }
    pub fn remove(&self, handle: u64) -> Option<Arc<ArrayCore>> {
        self.registry.remove(handle)
    }
    /// Forgets the arrays of `device` (its memory went with the reset).
    pub fn on_reset(&self, device: usize) -> Vec<(u64, Arc<ArrayCore>)> {
        self.registry.remove_where(|a| a.device == device)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f(bits: [i32; 4], kind: i32) -> ChannelFormat {
        ChannelFormat { bits, kind }
    }

    #[test]
    fn formats() {
        assert_eq!(f([32, 0, 0, 0], KIND_FLOAT).check(), Ok((1, 4)));
        assert_eq!(f([8, 8, 8, 8], KIND_UNSIGNED).check(), Ok((4, 1)));
        assert_eq!(f([16, 16, 0, 0], KIND_SIGNED).check(), Ok((2, 2)));
        for bad in [
            f([0, 0, 0, 0], KIND_FLOAT),
            f([8, 8, 8, 0], KIND_UNSIGNED),
            f([8, 16, 0, 0], KIND_UNSIGNED),
            f([8, 0, 8, 0], KIND_UNSIGNED),
            f([8, 0, 0, 0], KIND_FLOAT),
            f([12, 0, 0, 0], KIND_SIGNED),
            f([32, 0, 0, 0], 3),
        ] {
            assert_eq!(
                bad.check(),
                Err(ErrorCode::InvalidChannelDescriptor),
                "{bad:?}"
            );
        }
    }

    #[test]
    fn extents_and_sides() {
        let fl = f([32, 0, 0, 0], KIND_FLOAT);
        assert_eq!(check_extent(&fl, 16, 0, 0, 0), Ok(64));
        assert_eq!(check_extent(&fl, 16, 4, 0, 0), Ok(256));
        assert_eq!(check_extent(&fl, 16, 4, 2, LAYERED), Ok(512));
        assert_eq!(check_extent(&fl, 0, 4, 0, 0), Err(ErrorCode::InvalidValue));
        assert_eq!(check_extent(&fl, 4, 0, 3, 0), Err(ErrorCode::InvalidValue));
        assert_eq!(
            check_extent(&fl, 4, 4, 0, LAYERED),
            Err(ErrorCode::InvalidValue)
        );
        assert_eq!(check_extent(&fl, 4, 4, 6, CUBEMAP), Ok(384));
        assert_eq!(check_extent(&fl, 4, 4, 12, CUBEMAP | LAYERED), Ok(768));
        for (w, h, d, fl_) in [
            (4, 4, 12, CUBEMAP),
            (4, 3, 6, CUBEMAP),
            (4, 4, 0, CUBEMAP),
            (4, 4, 7, CUBEMAP | LAYERED),
            (4, 4, 0, CUBEMAP | LAYERED),
            (4, 0, 6, CUBEMAP),
            (MAX_CUBEMAP.0 + 1, MAX_CUBEMAP.0 + 1, 6, CUBEMAP),
        ] {
            assert_eq!(
                check_extent(&fl, w, h, d, fl_),
                Err(ErrorCode::InvalidValue),
                "{w} x {h} x {d} flags {fl_}"
            );
        }
        assert_eq!(
            check_extent(&fl, 4, 4, 0, 0x40),
            Err(ErrorCode::InvalidValue)
        );
        assert_eq!(
            check_extent(&fl, MAX_1D + 1, 0, 0, 0),
            Err(ErrorCode::InvalidValue)
        );
        let a = ArrayCore {
            device: 0,
            base: 1 << 20,
            format: fl,
            width: 16,
            height: 4,
            depth: 2,
            flags: 0,
        };
        let s = a.side(8, 1, 1, 56, 3, 1, "t", "dst").unwrap();
        assert_eq!(s.base, (1 << 20) + 256 + 64 + 8);
        assert_eq!((s.pitch, s.slice), (64, 256));
        assert!(a.side(8, 1, 1, 57, 3, 1, "t", "dst").is_err());
        assert!(a.side(0, 2, 0, 4, 3, 1, "t", "dst").is_err());
        assert!(a.side(0, 0, 1, 4, 1, 2, "t", "dst").is_err());
        assert!(a.side(usize::MAX, 0, 0, 4, 1, 1, "t", "dst").is_err());
    }
}
