//! Device memory ([`DeviceBuffer`]), page-locked host memory ([`PinnedBuffer`]) and the element
//! types they may hold ([`DeviceCopy`]).

use crate::device::{current_device, reset_epoch};
use crate::error::{api, check, BirenError, ErrorCode, Result};
use crate::stream::Stream;
use crate::sys;
use std::ffi::c_void;
use std::fmt;
use std::marker::PhantomData;
use std::mem::size_of;
use std::ops::{Deref, DerefMut};
use std::ptr::NonNull;

/// Element types that can live in device memory and be copied to and from it byte for byte.
///
/// # Safety
/// Every bit pattern of `size_of::<T>()` bytes must be a valid `T` (kernels write arbitrary
/// bytes), and `T` must own nothing (no references, `Box`, `Vec`, ...). Plain integers, floats,
/// raw pointers, [`DevicePtr`] and arrays of them qualify; `bool`, `char`, enums and references
/// do not. A `#[repr(C)]` struct of such fields may implement it.
pub unsafe trait DeviceCopy: Copy + 'static {}

macro_rules! device_copy {
    ($($t:ty)*) => { $(
        // SAFETY: every bit pattern is a valid value of this primitive type.
        unsafe impl DeviceCopy for $t {}
    )* };
}
device_copy!(u8 u16 u32 u64 u128 usize i8 i16 i32 i64 i128 isize f32 f64);
// SAFETY: an array of such types is such a type.
unsafe impl<T: DeviceCopy, const N: usize> DeviceCopy for [T; N] {}
// SAFETY: any address is a valid raw pointer value.
unsafe impl<T: 'static> DeviceCopy for *const T {}
// SAFETY: as above.
unsafe impl<T: 'static> DeviceCopy for *mut T {}

/// The address of device memory holding `T`s, as a kernel receives it. Only a kernel may
/// dereference it (through [`DevicePtr::as_raw`]).
#[repr(transparent)]
pub struct DevicePtr<T> {
    ptr: *mut T,
}

impl<T> DevicePtr<T> {
    /// The raw address.
    pub fn as_raw(self) -> *mut T {
        self.ptr
    }

    /// Whether it is NULL (the pointer of an empty buffer).
    pub fn is_null(self) -> bool {
        self.ptr.is_null()
    }
}

impl<T> Clone for DevicePtr<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for DevicePtr<T> {}
impl<T> fmt::Debug for DevicePtr<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "DevicePtr({:p})", self.ptr)
    }
}
impl<T> PartialEq for DevicePtr<T> {
    fn eq(&self, other: &Self) -> bool {
        self.ptr == other.ptr
    }
}
impl<T> Eq for DevicePtr<T> {}
// SAFETY: an address; the host never dereferences it.
unsafe impl<T> Send for DevicePtr<T> {}
// SAFETY: as above.
unsafe impl<T> Sync for DevicePtr<T> {}
// SAFETY: a transparent wrapper of a raw pointer.
unsafe impl<T: 'static> DeviceCopy for DevicePtr<T> {}

/// `len * size_of::<T>()`, or an `InvalidValue` error naming `call` when it overflows.
fn byte_len<T>(len: usize, call: &'static str) -> Result<usize> {
    len.checked_mul(size_of::<T>()).ok_or_else(|| {
        BirenError::new(ErrorCode::InvalidValue, call).with_detail(format!(
            "{len} elements of {} bytes overflow usize",
            size_of::<T>()
        ))
    })
}

fn length_mismatch(call: &'static str, what: &str, got: usize, len: usize) -> BirenError {
    BirenError::new(ErrorCode::InvalidValue, call)
        .with_detail(format!("{what} {got} elements into a buffer of {len}"))
}

/// `len` elements of `T` in device memory (`birenMalloc`), freed when dropped (`birenFree`,
/// which lets work already enqueued on the memory complete first).
///
/// Copies check lengths: the host slice must have exactly [`DeviceBuffer::len`] elements,
/// otherwise `InvalidValue` and nothing is copied. After [`crate::device_reset`] a buffer of
/// that device answers `InvalidDevicePointer` and frees nothing when dropped (the reset freed
/// it). Passed to a kernel (as a [`crate::KernelArg`]) a buffer is its device address.
///
/// ```
/// # fn main() -> Result<(), biren::BirenError> {
/// biren::init()?;
/// let mut d = biren::DeviceBuffer::from_slice(&[1.0f32, 2.0, 3.0])?;
/// assert_eq!(d.to_vec()?, [1.0, 2.0, 3.0]);
/// d.copy_from_host(&[4.0, 5.0, 6.0])?;
/// let mut back = [0.0f32; 3];
/// d.copy_to_host(&mut back)?;
/// assert_eq!(back, [4.0, 5.0, 6.0]);
/// assert!(d.copy_to_host(&mut [0.0f32; 2]).is_err(), "lengths must match");
/// # Ok(()) }
/// ```
pub struct DeviceBuffer<T: DeviceCopy> {
    ptr: *mut T,
    len: usize,
    device: i32,
    epoch: u64,
    _owns: PhantomData<T>,
}

// SAFETY: the buffer owns its device memory like a Box owns heap memory; all C calls on it are
// thread-safe. Moving it moves `T`s to another thread (through copies): `T: Send`.
unsafe impl<T: DeviceCopy + Send> Send for DeviceBuffer<T> {}
// SAFETY: `&self` methods only read the memory through thread-safe C calls; mutation needs
// `&mut self`. Sharing lets threads copy `T`s out: `T: Sync`.
unsafe impl<T: DeviceCopy + Sync> Sync for DeviceBuffer<T> {}

impl<T: DeviceCopy> DeviceBuffer<T> {
    /// `len` elements of device memory whose contents are whatever the memory held (or, with
    /// the validator on, its poison bytes `0xCD`).
    ///
    /// # Safety
    /// Reading the contents before writing them reads bytes nobody wrote. `T` is valid for
    /// every bit pattern, so no invalid value can result, but the values are arbitrary; the
    /// caller promises to write before reading, or not to care.
    pub unsafe fn uninitialized(len: usize) -> Result<DeviceBuffer<T>> {
        let bytes = byte_len::<T>(len, "DeviceBuffer::uninitialized")?;
        let api = api("birenMalloc")?;
        let device = current_device()?;
        // Read before the allocation: a reset that happens meanwhile makes the buffer stale
        // (never freed by us) rather than letting us free memory someone else got.
        let epoch = reset_epoch(device);
        let mut raw: *mut c_void = std::ptr::null_mut();
        // SAFETY: the out-parameter points to a live pointer.
        check("birenMalloc", unsafe { (api.birenMalloc)(&mut raw, bytes) })?;
        Ok(DeviceBuffer {
            ptr: raw.cast(),
            len,
            device,
            epoch,
            _owns: PhantomData,
        })
    }

    /// `len` elements of zero bytes (`birenMalloc` + `birenMemset`).
    pub fn zeroed(len: usize) -> Result<DeviceBuffer<T>> {
        // SAFETY: the contents are written right away.
        let mut b = unsafe { DeviceBuffer::uninitialized(len) }?;
        b.fill_bytes(0)?;
        Ok(b)
    }

    /// A buffer holding a copy of `src`.
    pub fn from_slice(src: &[T]) -> Result<DeviceBuffer<T>> {
        // SAFETY: the contents are written right away.
        let mut b = unsafe { DeviceBuffer::uninitialized(src.len()) }?;
        b.copy_from_host(src)?;
        Ok(b)
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether it has no elements.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Size in bytes.
    pub fn byte_len(&self) -> usize {
        self.len * size_of::<T>()
    }

    /// The device the buffer was allocated on.
    pub fn device(&self) -> i32 {
        self.device
    }

    /// The device address (NULL for an empty buffer), for kernels.
    pub fn as_device_ptr(&self) -> DevicePtr<T> {
        DevicePtr { ptr: self.ptr }
    }

    /// The address of the `ptr` field (a `*mut T` living as long as the buffer), for
    /// [`crate::KernelArg`].
    pub(crate) fn device_ptr_field(&self) -> *const *mut T {
        &self.ptr
    }

    /// `InvalidDevicePointer` if a device reset freed the memory.
    fn live(&self, call: &'static str) -> Result<&'static sys::Api> {
        let api = api(call)?;
        if reset_epoch(self.device) != self.epoch {
            return Err(BirenError::new(ErrorCode::InvalidDevicePointer, call)
                .with_detail("the buffer was freed by biren::device_reset"));
        }
        Ok(api)
    }

    /// Copies between this buffer and `host_len` host elements at `host` (`to_device`: host to
    /// device), synchronously or on `stream`: the length check, the reset check and the call.
    ///
    /// # Safety
    /// `host` must be valid for `host_len` elements, for reading (`to_device`) or writing, until
    /// the copy has completed.
    unsafe fn transfer(
        &self,
        call: &'static str,
        host: *mut T,
        host_len: usize,
        to_device: bool,
        stream: Option<&Stream>,
    ) -> Result<()> {
        if host_len != self.len {
            let what = if to_device { "copying" } else { "reading" };
            return Err(length_mismatch(call, what, host_len, self.len));
        }
        let c_call = if stream.is_some() {
            "birenMemcpyAsync"
        } else {
            "birenMemcpy"
        };
        let api = self.live(c_call)?;
        if self.byte_len() == 0 {
            return Ok(()); // nothing to do (and an empty buffer's address is NULL)
        }
        let (dst, src, kind): (*mut c_void, *const c_void, _) = if to_device {
            (self.ptr.cast(), host.cast(), sys::birenMemcpyHostToDevice)
        } else {
            (host.cast(), self.ptr.cast(), sys::birenMemcpyDeviceToHost)
        };
        // SAFETY: the device range is this live allocation of byte_len() bytes; the host range
        // is host_len == len elements, valid as the caller promised. Any bytes are valid `T`s
        // (DeviceCopy).
        check(c_call, unsafe {
            match stream {
                None => (api.birenMemcpy)(dst, src, self.byte_len(), kind),
                Some(s) => (api.birenMemcpyAsync)(dst, src, self.byte_len(), kind, s.as_raw()),
            }
        })
    }

    /// Copies `src` (exactly `len()` elements) into the buffer; returns when done.
    pub fn copy_from_host(&mut self, src: &[T]) -> Result<()> {
        let call = "DeviceBuffer::copy_from_host";
        // SAFETY: `src` is borrowed until the synchronous copy returns; it is only read.
        unsafe { self.transfer(call, src.as_ptr().cast_mut(), src.len(), true, None) }
    }

    /// Copies the buffer into `dst` (exactly `len()` elements); returns when done.
    pub fn copy_to_host(&self, dst: &mut [T]) -> Result<()> {
        let call = "DeviceBuffer::copy_to_host";
        // SAFETY: `dst` is borrowed exclusively until the synchronous copy returns.
        unsafe { self.transfer(call, dst.as_mut_ptr(), dst.len(), false, None) }
    }

    /// The contents as a new `Vec`.
    pub fn to_vec(&self) -> Result<Vec<T>> {
        let api = self.live("birenMemcpy")?;
        let mut v: Vec<T> = Vec::with_capacity(self.len);
        if self.byte_len() > 0 {
            // SAFETY: the destination is the Vec's capacity, `len` elements; the Vec is read
            // only after the copy has written them all (any bytes are valid `T`s: DeviceCopy).
            check("birenMemcpy", unsafe {
                (api.birenMemcpy)(
                    v.as_mut_ptr().cast(),
                    self.ptr.cast(),
                    self.byte_len(),
                    sys::birenMemcpyDeviceToHost,
                )
            })?;
        }
        // SAFETY: the copy succeeded (or there are no bytes), so `len` elements are written.
        unsafe { v.set_len(self.len) };
        Ok(v)
    }

    /// Copies another device buffer of the same length into this one (device to device).
    pub fn copy_from(&mut self, src: &DeviceBuffer<T>) -> Result<()> {
        if src.len != self.len {
            return Err(length_mismatch(
                "DeviceBuffer::copy_from",
                "copying",
                src.len,
                self.len,
            ));
        }
        let api = self.live("birenMemcpy")?;
        src.live("birenMemcpy")?;
        if self.byte_len() == 0 {
            return Ok(());
        }
        // SAFETY: both device ranges are byte_len() bytes of live allocations.
        check("birenMemcpy", unsafe {
            (api.birenMemcpy)(
                self.ptr.cast(),
                src.ptr.cast(),
                self.byte_len(),
                sys::birenMemcpyDeviceToDevice,
            )
        })
    }

    /// Sets every byte to `value` (`birenMemset`); returns when done.
    pub fn fill_bytes(&mut self, value: u8) -> Result<()> {
        let api = self.live("birenMemset")?;
        if self.byte_len() == 0 {
            return Ok(()); // nothing to do (and an empty buffer's address is NULL)
        }
        // SAFETY: the range is this live allocation; any bytes are valid `T`s.
        check("birenMemset", unsafe {
            (api.birenMemset)(self.ptr.cast(), value.into(), self.byte_len())
        })
    }

    /// Enqueues a byte fill on `stream` (`birenMemsetAsync`). Safe: device memory stays
    /// allocated until enqueued work on it completes.
    pub fn fill_bytes_async(&mut self, value: u8, stream: &Stream) -> Result<()> {
        let api = self.live("birenMemsetAsync")?;
        if self.byte_len() == 0 {
            return Ok(()); // nothing to do (and an empty buffer's address is NULL)
        }
        // SAFETY: the range is this live allocation.
        check("birenMemsetAsync", unsafe {
            (api.birenMemsetAsync)(
                self.ptr.cast(),
                value.into(),
                self.byte_len(),
                stream.as_raw(),
            )
        })
    }

    /// Enqueues a copy of `src` into the buffer on `stream` (`birenMemcpyAsync`).
    ///
    /// # Safety
    /// `src` is read when the copy runs: it must stay allocated and unmodified until the copy
    /// has completed (e.g. until `stream.synchronize()` returns). A [`PinnedBuffer`] that
    /// outlives the synchronize is the usual source.
    pub unsafe fn copy_from_host_async(&mut self, src: &[T], stream: &Stream) -> Result<()> {
        let call = "DeviceBuffer::copy_from_host_async";
        // SAFETY: the caller's promise; the copy only reads `src`.
        unsafe { self.transfer(call, src.as_ptr().cast_mut(), src.len(), true, Some(stream)) }
    }

    /// Enqueues a copy of the buffer into `dst` on `stream` (`birenMemcpyAsync`).
    ///
    /// # Safety
    /// `dst` is written when the copy runs: it must stay allocated, and be neither read nor
    /// written by anything else, until the copy has completed.
    pub unsafe fn copy_to_host_async(&self, dst: &mut [T], stream: &Stream) -> Result<()> {
        let call = "DeviceBuffer::copy_to_host_async";
        // SAFETY: the caller's promise.
        unsafe { self.transfer(call, dst.as_mut_ptr(), dst.len(), false, Some(stream)) }
    }
}

impl<T: DeviceCopy> fmt::Debug for DeviceBuffer<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DeviceBuffer")
            .field("ptr", &self.ptr)
            .field("len", &self.len)
            .field("device", &self.device)
            .finish()
    }
}

impl<T: DeviceCopy> Drop for DeviceBuffer<T> {
    fn drop(&mut self) {
        if self.ptr.is_null() || reset_epoch(self.device) != self.epoch {
            return; // empty, or already freed by a reset (the address may be someone else's now)
        }
        if let Some(api) = sys::api() {
            // SAFETY: our own live allocation; an error leaves nothing to clean up.
            let _ = unsafe { (api.birenFree)(self.ptr.cast()) };
        }
    }
}

/// `len` elements of page-locked host memory (`birenMallocHost`), zero-initialized, usable as a
/// slice, freed when dropped (`birenFreeHost`). Not freed by a device reset. The source or
/// destination of choice for asynchronous copies.
///
/// ```
/// # fn main() -> Result<(), biren::BirenError> {
/// biren::init()?;
/// let mut h = biren::PinnedBuffer::<i32>::zeroed(4)?;
/// h.copy_from_slice(&[1, 2, 3, 4]);
/// let mut d = biren::DeviceBuffer::<i32>::zeroed(4)?;
/// let s = biren::Stream::new()?;
/// // SAFETY: `h` is neither dropped nor written before the synchronize.
/// unsafe { d.copy_from_host_async(&h, &s)? };
/// s.synchronize()?;
/// assert_eq!(d.to_vec()?, [1, 2, 3, 4]);
/// # Ok(()) }
/// ```
pub struct PinnedBuffer<T: DeviceCopy> {
    ptr: NonNull<T>,
    len: usize,
    /// Whether `ptr` came from birenMallocHost (not for zero bytes).
    allocated: bool,
}

// SAFETY: the buffer owns its memory like a Box<[T]>.
unsafe impl<T: DeviceCopy + Send> Send for PinnedBuffer<T> {}
// SAFETY: shared access gives `&[T]` only.
unsafe impl<T: DeviceCopy + Sync> Sync for PinnedBuffer<T> {}

impl<T: DeviceCopy> PinnedBuffer<T> {
    /// `len` zeroed elements. `InvalidValue` if the library's memory is not aligned for `T`.
    pub fn zeroed(len: usize) -> Result<PinnedBuffer<T>> {
        let bytes = byte_len::<T>(len, "PinnedBuffer::zeroed")?;
        let api = api("birenMallocHost")?;
        if bytes == 0 {
            return Ok(PinnedBuffer {
                ptr: NonNull::dangling(),
                len,
                allocated: false,
            });
        }
        let mut raw: *mut c_void = std::ptr::null_mut();
        // SAFETY: the out-parameter points to a live pointer.
        check("birenMallocHost", unsafe {
            (api.birenMallocHost)(&mut raw, bytes)
        })?;
        let Some(ptr) = NonNull::new(raw.cast::<T>()) else {
            return Err(BirenError::new(ErrorCode::OutOfMemory, "birenMallocHost")
                .with_detail("returned NULL"));
        };
        if !raw.cast::<T>().is_aligned() {
            // SAFETY: our own allocation, not handed out.
            let _ = unsafe { (api.birenFreeHost)(raw) };
            return Err(
                BirenError::new(ErrorCode::InvalidValue, "birenMallocHost").with_detail(format!(
                    "memory at {raw:p} is not aligned to {} bytes",
                    std::mem::align_of::<T>()
                )),
            );
        }
        // SAFETY: `bytes` writable bytes at `raw`.
        unsafe { std::ptr::write_bytes(raw.cast::<u8>(), 0, bytes) };
        Ok(PinnedBuffer {
            ptr,
            len,
            allocated: true,
        })
    }

    /// A pinned copy of `src`.
    pub fn from_slice(src: &[T]) -> Result<PinnedBuffer<T>> {
        let mut b = PinnedBuffer::zeroed(src.len())?;
        b.copy_from_slice(src);
        Ok(b)
    }

    /// The host address (for kernels, which may read and write host memory here).
    pub fn as_ptr(&self) -> *const T {
        self.ptr.as_ptr()
    }

    /// The address of the `ptr` field (a pointer living as long as the buffer), for
    /// [`crate::KernelArg`].
    pub(crate) fn host_ptr_field(&self) -> *const NonNull<T> {
        &self.ptr
    }

    /// The host address, writable.
    pub fn as_mut_ptr(&mut self) -> *mut T {
        self.ptr.as_ptr()
    }
}

impl<T: DeviceCopy> Deref for PinnedBuffer<T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        // SAFETY: `len` initialized (zeroed, DeviceCopy) elements at an aligned `ptr`, owned.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }
}

impl<T: DeviceCopy> DerefMut for PinnedBuffer<T> {
    fn deref_mut(&mut self) -> &mut [T] {
        // SAFETY: as in deref, and `&mut self` is exclusive.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }
}

impl<T: DeviceCopy + fmt::Debug> fmt::Debug for PinnedBuffer<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PinnedBuffer")
            .field("ptr", &self.ptr)
            .field("len", &self.len)
            .finish()
    }
}

impl<T: DeviceCopy> Drop for PinnedBuffer<T> {
    fn drop(&mut self) {
        if !self.allocated {
            return;
        }
        if let Some(api) = sys::api() {
            // SAFETY: our own allocation from birenMallocHost; an error leaves nothing to do.
            let _ = unsafe { (api.birenFreeHost)(self.ptr.as_ptr().cast()) };
        }
    }
}
