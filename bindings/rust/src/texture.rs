//! Accelerator arrays and texture objects: an [`Array`] of `f32` texels filled from the host,
//! and a [`TextureObject`] reading it, whose value kernels pass to the header's fetches
//! (`birenTex2DFloat`, ...).
//!
//! ```
//! # fn main() -> Result<(), biren::BirenError> {
//! biren::init()?;
//! let a = biren::Array::new_f32(4, 2)?;
//! a.copy_from(&[0.0, 1.0, 2.0, 3.0, 10.0, 11.0, 12.0, 13.0])?;
//! let mut back = [0.0f32; 8];
//! a.copy_to(&mut back)?;
//! assert_eq!(back[5], 11.0);
//! let t = biren::TextureObject::new(&a, true)?;
//! assert_ne!(t.value(), 0);
//! # Ok(()) }
//! ```

use crate::error::{api, check, BirenError, ErrorCode, Result};
use crate::sys;

/// A 2-D array of `f32` texels (`birenMallocArray`), freed on drop.
#[derive(Debug)]
pub struct Array {
    raw: *mut std::ffi::c_void,
    width: usize,
    height: usize,
}

// SAFETY: an array handle is a registry key the crate never dereferences; the C calls on it are
// thread-safe.
unsafe impl Send for Array {}
// SAFETY: as above.
unsafe impl Sync for Array {}

impl Array {
    /// `width` x `height` float texels (height 0: a 1-D array).
    pub fn new_f32(width: usize, height: usize) -> Result<Array> {
        let api = api("birenMallocArray")?;
        // SAFETY: plain values.
        let desc = unsafe { (api.birenCreateChannelDesc)(32, 0, 0, 0, 2) };
        let mut raw = std::ptr::null_mut();
        // SAFETY: the out-parameter and the descriptor are live.
        check("birenMallocArray", unsafe {
            (api.birenMallocArray)(&mut raw, &desc, width, height, 0)
        })?;
        Ok(Array { raw, width, height })
    }

    fn texels(&self) -> usize {
        self.width * self.height.max(1)
    }

    /// Fills the array from `data` (row after row); `InvalidValue` unless it has one value per
    /// texel.
    pub fn copy_from(&self, data: &[f32]) -> Result<()> {
        if data.len() != self.texels() {
            return Err(BirenError::new(
                ErrorCode::InvalidValue,
                "birenMemcpy2DToArray",
            ));
        }
        let api = api("birenMemcpy2DToArray")?;
        let row = self.width * 4;
        // SAFETY: data holds height rows of `row` bytes.
        check("birenMemcpy2DToArray", unsafe {
            (api.birenMemcpy2DToArray)(
                self.raw,
                0,
                0,
                data.as_ptr().cast(),
                row,
                row,
                self.height.max(1),
                sys::birenMemcpyHostToDevice,
            )
        })
    }

    /// Copies the array into `out` (one value per texel).
    pub fn copy_to(&self, out: &mut [f32]) -> Result<()> {
        if out.len() != self.texels() {
            return Err(BirenError::new(
                ErrorCode::InvalidValue,
                "birenMemcpy2DFromArray",
            ));
        }
        let api = api("birenMemcpy2DFromArray")?;
        let row = self.width * 4;
        // SAFETY: out holds height rows of `row` bytes.
        check("birenMemcpy2DFromArray", unsafe {
            (api.birenMemcpy2DFromArray)(
                out.as_mut_ptr().cast(),
                row,
                self.raw,
                0,
                0,
                row,
                self.height.max(1),
                sys::birenMemcpyDeviceToHost,
            )
        })
    }

    /// The `birenArray_t` handle.
    pub fn as_raw(&self) -> *mut std::ffi::c_void {
        self.raw
    }
}

impl Drop for Array {
    fn drop(&mut self) {
        if let Some(api) = sys::api() {
            // SAFETY: our live handle.
            unsafe { (api.birenFreeArray)(self.raw) };
        }
    }
}

/// A texture object on an [`Array`] (`birenCreateTextureObject`): clamped, unnormalized
/// coordinates, point or bilinear filtering. Destroyed on drop; it must not outlive the array.
#[derive(Debug)]
pub struct TextureObject {
    value: u64,
}

impl TextureObject {
    /// A texture reading `array`, bilinear if `linear`.
    pub fn new(array: &Array, linear: bool) -> Result<TextureObject> {
        let api = api("birenCreateTextureObject")?;
        let res = sys::birenResourceDesc {
            resType: 0,
            ptr: array.raw,
            desc: sys::birenChannelFormatDesc::default(),
            width: 0,
            height: 0,
            pitchInBytes: 0,
        };
        let tex = sys::birenTextureDesc {
            addressMode: [1; 3],
            filterMode: linear as i32,
            ..Default::default()
        };
        let mut value = 0u64;
        // SAFETY: the out-parameter and both descriptions are live.
        check("birenCreateTextureObject", unsafe {
            (api.birenCreateTextureObject)(&mut value, &res, &tex, std::ptr::null())
        })?;
        Ok(TextureObject { value })
    }

    /// The value kernels fetch through (`birenTextureObject_t`).
    pub fn value(&self) -> u64 {
        self.value
    }

    /// The array the object reads (`birenGetTextureObjectResourceDesc`).
    pub fn array(&self) -> Result<*mut std::ffi::c_void> {
        let api = api("birenGetTextureObjectResourceDesc")?;
        let mut res = sys::birenResourceDesc {
            resType: -1,
            ptr: std::ptr::null_mut(),
            desc: sys::birenChannelFormatDesc::default(),
            width: 0,
            height: 0,
            pitchInBytes: 0,
        };
        // SAFETY: the out-parameter is live.
        check("birenGetTextureObjectResourceDesc", unsafe {
            (api.birenGetTextureObjectResourceDesc)(&mut res, self.value)
        })?;
        Ok(res.ptr)
    }
}

impl Drop for TextureObject {
    fn drop(&mut self) {
        if let Some(api) = sys::api() {
            // SAFETY: a plain value.
            unsafe { (api.birenDestroyTextureObject)(self.value) };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn array_and_texture_object() {
        crate::init().unwrap();
        let a = Array::new_f32(3, 2).unwrap();
        a.copy_from(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]).unwrap();
        let mut back = [0.0f32; 6];
        a.copy_to(&mut back).unwrap();
        assert_eq!(back, [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
        assert!(a.copy_from(&[1.0]).is_err());
        let t = TextureObject::new(&a, false).unwrap();
        assert_eq!(t.array().unwrap(), a.as_raw());
    }
}
