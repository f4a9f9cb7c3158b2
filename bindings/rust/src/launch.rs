//! Launching `extern "C"` kernels with typed arguments.

use crate::error::{api, check, BirenError, ErrorCode, Result};
use crate::memory::{DeviceBuffer, DeviceCopy, PinnedBuffer};
use crate::stream::Stream;
use crate::sys::{self, Dim3};
use std::ffi::{c_void, CString};
use std::mem::size_of;

/// A kernel: a C-ABI function receiving CUDA's array of pointers to its argument values. Write
/// it as `extern "C" fn name(args: *mut *mut c_void)` and read its arguments with
/// [`crate::kernel::arg`].
pub type Kernel = sys::birenKernel_t;

/// A value that can be passed to a kernel: its bytes are copied at launch.
///
/// Every [`DeviceCopy`] type is one (passed by value); a [`DeviceBuffer`] passes its device
/// address (a [`crate::DevicePtr`]), a [`PinnedBuffer`] its host address.
///
/// # Safety
/// [`KernelArg::arg_ptr`] must point to [`KernelArg::arg_size`] readable bytes that stay valid
/// while `self` is borrowed.
pub unsafe trait KernelArg {
    /// Where the argument's bytes are.
    fn arg_ptr(&self) -> *const c_void;
    /// How many bytes the kernel receives.
    fn arg_size(&self) -> usize;
}

// SAFETY: a `T` is `size_of::<T>()` readable bytes at `self`.
unsafe impl<T: DeviceCopy> KernelArg for T {
    fn arg_ptr(&self) -> *const c_void {
        (self as *const T).cast()
    }
    fn arg_size(&self) -> usize {
        size_of::<T>()
    }
}

/// The buffer's device address.
// SAFETY: `device_ptr_field` is the address of the buffer's `*mut T` field, which lives as long
// as the borrow of the buffer.
unsafe impl<T: DeviceCopy> KernelArg for DeviceBuffer<T> {
    fn arg_ptr(&self) -> *const c_void {
        self.device_ptr_field().cast()
    }
    fn arg_size(&self) -> usize {
        size_of::<*mut T>()
    }
}

/// The buffer's host address.
// SAFETY: `host_ptr_field` is the address of the buffer's `NonNull<T>` field (a transparent
// pointer), which lives as long as the borrow of the buffer.
unsafe impl<T: DeviceCopy> KernelArg for PinnedBuffer<T> {
    fn arg_ptr(&self) -> *const c_void {
        self.host_ptr_field().cast()
    }
    fn arg_size(&self) -> usize {
        size_of::<*mut T>()
    }
}

/// A launch configuration: kernel, grid, block, shared memory, stream. Build it, then
/// [`Launch::launch`] it with the arguments; or use [`crate::launch!`].
///
/// ```
/// use std::ffi::c_void;
/// use biren::{kernel, DeviceBuffer, DevicePtr, Launch, Stream};
///
/// /// x[i] *= factor, for i < n
/// extern "C" fn scale(args: *mut *mut c_void) {
///     // SAFETY: launched below with (DevicePtr<f32>, f32, u32).
///     unsafe {
///         let x: DevicePtr<f32> = kernel::arg(args, 0);
///         let factor: f32 = kernel::arg(args, 1);
///         let n: u32 = kernel::arg(args, 2);
///         let i = kernel::global_index_x();
///         if i < n as usize {
///             *x.as_raw().add(i) *= factor;
///         }
///     }
/// }
///
/// # fn main() -> Result<(), biren::BirenError> {
/// biren::init()?;
/// let n = 1000u32;
/// let mut x = DeviceBuffer::from_slice(&vec![1.5f32; n as usize])?;
/// let s = Stream::new()?;
/// // SAFETY: `scale` reads (DevicePtr<f32>, f32, u32) and stays within n elements of x.
/// unsafe {
///     Launch::new(scale, n.div_ceil(256), 256)
///         .stream(&s)
///         .launch(&[&x, &2.0f32, &n])?;
/// }
/// s.synchronize()?;
/// assert!(x.to_vec()?.iter().all(|&v| v == 3.0));
/// # let _ = &mut x;
/// # Ok(()) }
/// ```
#[derive(Clone, Copy, Debug)]
pub struct Launch<'s> {
    kernel: Kernel,
    grid: Dim3,
    block: Dim3,
    shared_mem: usize,
    stream: Option<&'s Stream>,
}

impl<'s> Launch<'s> {
    /// `grid` blocks of `block` threads (a `u32`, a pair, a triple or a [`Dim3`]), no shared
    /// memory, the default stream.
    pub fn new(kernel: Kernel, grid: impl Into<Dim3>, block: impl Into<Dim3>) -> Launch<'s> {
        Launch {
            kernel,
            grid: grid.into(),
            block: block.into(),
            shared_mem: 0,
            stream: None,
        }
    }

    /// Bytes of per-block shared memory ([`crate::kernel::shared_memory`]).
    pub fn shared_mem(mut self, bytes: usize) -> Launch<'s> {
        self.shared_mem = bytes;
        self
    }

    /// The stream to launch on (default: the default stream).
    pub fn stream(mut self, stream: &'s Stream) -> Launch<'s> {
        self.stream = Some(stream);
        self
    }

    /// Enqueues the kernel with `args`, whose values are copied now
    /// (`birenLaunchKernelArgs`): temporaries and locals are fine. The library refuses a bad
    /// configuration (`InvalidConfiguration`) or more than 256 arguments (`InvalidValue`),
    /// enqueueing nothing. A kernel's own failure (a trap) shows at the next synchronize.
    ///
    /// # Safety
    /// The kernel runs on other threads and reads its arguments as the types it expects:
    /// `args` must match them in number, order and type, and whatever the kernel does with
    /// them (dereferencing device or host pointers) must be valid for as long as it runs.
    pub unsafe fn launch(&self, args: &[&dyn KernelArg]) -> Result<()> {
        let api = api("birenLaunchKernelArgs")?;
        let count = u32::try_from(args.len()).map_err(|_| {
            BirenError::new(ErrorCode::InvalidValue, "birenLaunchKernelArgs")
                .with_detail(format!("{} arguments", args.len()))
        })?;
        // The C API takes `void **` but only reads through it (the values are copied).
        let mut ptrs: Vec<*mut c_void> = args.iter().map(|a| a.arg_ptr().cast_mut()).collect();
        let sizes: Vec<usize> = args.iter().map(|a| a.arg_size()).collect();
        let stream = self.stream.map_or(std::ptr::null_mut(), Stream::as_raw);
        // SAFETY: `ptrs[i]` points to `sizes[i]` readable bytes (KernelArg), all alive for the
        // call; the library copies them before returning. The kernel's use of them is the
        // caller's promise.
        check("birenLaunchKernelArgs", unsafe {
            (api.birenLaunchKernelArgs)(
                Some(self.kernel),
                self.grid,
                self.block,
                if ptrs.is_empty() {
                    std::ptr::null_mut()
                } else {
                    ptrs.as_mut_ptr()
                },
                if sizes.is_empty() {
                    std::ptr::null()
                } else {
                    sizes.as_ptr()
                },
                count,
                self.shared_mem,
                stream,
            )
        })
    }
}

/// Launches a kernel with typed arguments whose values are copied at launch; evaluates to a
/// [`crate::Result`]`<()>`. It expands to the `unsafe` [`Launch::launch`], so it must be
/// written inside `unsafe { }` (see that method's safety contract).
///
/// `launch!(kernel, grid, block; args...)`, optionally with `shared = bytes` and/or
/// `stream = &stream` after the block. Arguments are expressions: values of [`DeviceCopy`]
/// types, [`DeviceBuffer`]s and [`PinnedBuffer`]s (named, not borrowed: `x`, not `&x`).
///
/// ```
/// use std::ffi::c_void;
/// use biren::{kernel, launch, DeviceBuffer, DevicePtr};
///
/// /// c[i] = a[i] + b[i]
/// extern "C" fn vector_add(args: *mut *mut c_void) {
///     // SAFETY: launched below with three DevicePtr<f32> and a usize.
///     unsafe {
///         let a: DevicePtr<f32> = kernel::arg(args, 0);
///         let b: DevicePtr<f32> = kernel::arg(args, 1);
///         let c: DevicePtr<f32> = kernel::arg(args, 2);
///         let n: usize = kernel::arg(args, 3);
///         let i = kernel::global_index_x();
///         if i < n {
///             *c.as_raw().add(i) = *a.as_raw().add(i) + *b.as_raw().add(i);
///         }
///     }
/// }
///
/// # fn main() -> Result<(), biren::BirenError> {
/// biren::init()?;
/// let n = 10_000;
/// let a = DeviceBuffer::from_slice(&(0..n).map(|i| i as f32).collect::<Vec<_>>())?;
/// let b = DeviceBuffer::from_slice(&vec![1.0f32; n])?;
/// let c = DeviceBuffer::<f32>::zeroed(n)?;
/// let s = biren::Stream::new()?;
/// // SAFETY: vector_add reads (ptr, ptr, ptr, usize) and stays within n elements.
/// unsafe { launch!(vector_add, n.div_ceil(256) as u32, 256, stream = &s; a, b, c, n)? };
/// s.synchronize()?;
/// assert_eq!(c.to_vec()?[41], 42.0);
/// # Ok(()) }
/// ```
#[macro_export]
macro_rules! launch {
    ($kernel:expr, $grid:expr, $block:expr $(, shared = $shared:expr)? $(, stream = $stream:expr)?
     ; $($arg:expr),* $(,)?) => {
        $crate::Launch::new($kernel, $grid, $block)
            $(.shared_mem($shared))?
            $(.stream($stream))?
            .launch(&[$(&$arg as &dyn $crate::KernelArg),*])
    };
}

/// Registers `kernel` under `name` (shown in traces, logs and validator messages) with the
/// sizes of its arguments (`birenKernelRegister`), so that even a plain `birenLaunchKernel`
/// copies its arguments. Launches through this crate copy them anyway; registering is for the
/// name. `InvalidValue` for a name with a NUL byte.
pub fn register_kernel(kernel: Kernel, name: &str, arg_sizes: &[usize]) -> Result<()> {
    let api = api("birenKernelRegister")?;
    let name = CString::new(name).map_err(|_| {
        BirenError::new(ErrorCode::InvalidValue, "birenKernelRegister")
            .with_detail("the name contains a NUL byte")
    })?;
    let count = u32::try_from(arg_sizes.len()).map_err(|_| {
        BirenError::new(ErrorCode::InvalidValue, "birenKernelRegister")
            .with_detail(format!("{} arguments", arg_sizes.len()))
    })?;
    // SAFETY: the name is NUL-terminated and `arg_sizes` holds `count` sizes; both are copied.
    check("birenKernelRegister", unsafe {
        (api.birenKernelRegister)(Some(kernel), name.as_ptr(), count, arg_sizes.as_ptr())
    })
}
