//! Safe Rust binding of the BIREN runtime (`libbiren_runtime`, a simulated accelerator with
//! CUDA's runtime API), loaded at run time with `libloading`: nothing to link, no build script.
//!
//! - [`init`] loads the library (`$BIREN_LIBRARY`, else `libbiren_runtime.so.1` through the
//!   dynamic loader; or [`init_with_library`] with a path) and starts the runtime.
//! - [`Stream`], [`Event`], [`DeviceBuffer`] and [`PinnedBuffer`] own their C resources and
//!   release them when dropped.
//! - Every fallible call returns [`Result`]`<_, `[`BirenError`]`>`, carrying the [`ErrorCode`],
//!   the library's name and text for it and the call that failed.
//! - Kernels are `extern "C" fn(*mut *mut c_void)` written in Rust (or C, in a loaded library);
//!   [`launch!`] and [`Launch`] pass typed arguments, copied at launch; inside a kernel the
//!   [`kernel`] module gives the arguments, indices, shared memory and barriers.
//! - [`sys`] is the raw C API, for what the safe layer does not cover.
//!
//! All types are `Send` and `Sync` where their contents allow: every call of the C API is
//! thread-safe. The current device is per host thread, as in C.
//!
//! # A first program
//!
//! ```
//! use biren::{kernel, launch, DeviceBuffer, DevicePtr, Event, Stream};
//! use std::ffi::c_void;
//!
//! /// y[i] = a * x[i] + y[i]
//! extern "C" fn saxpy(args: *mut *mut c_void) {
//!     // SAFETY: launched below with (f32, DevicePtr<f32>, DevicePtr<f32>, usize).
//!     unsafe {
//!         let a: f32 = kernel::arg(args, 0);
//!         let x: DevicePtr<f32> = kernel::arg(args, 1);
//!         let y: DevicePtr<f32> = kernel::arg(args, 2);
//!         let n: usize = kernel::arg(args, 3);
//!         let i = kernel::global_index_x();
//!         if i < n {
//!             *y.as_raw().add(i) += a * *x.as_raw().add(i);
//!         }
//!     }
//! }
//!
//! fn main() -> Result<(), biren::BirenError> {
//!     biren::init()?; // BIREN_LIBRARY=/path/to/libbiren_runtime.so, or installed
//!     let n = 1 << 16;
//!     let x = DeviceBuffer::from_slice(&vec![1.0f32; n])?;
//!     let y = DeviceBuffer::from_slice(&vec![2.0f32; n])?;
//!     let stream = Stream::new()?;
//!     let (start, end) = (Event::new()?, Event::new()?);
//!     start.record(&stream)?;
//!     // SAFETY: saxpy reads (f32, ptr, ptr, usize) and stays within n elements.
//!     unsafe { launch!(saxpy, (n / 256) as u32, 256, stream = &stream; 3.0f32, x, y, n)? };
//!     end.record(&stream)?;
//!     stream.synchronize()?;
//!     assert!(y.to_vec()?.iter().all(|&v| v == 5.0));
//!     println!("saxpy took {} ms", start.elapsed_time(&end)?);
//!
//!     // Errors carry the code, the library's name and text, and the call.
//!     let err = DeviceBuffer::<u8>::zeroed(usize::MAX / 2).unwrap_err();
//!     assert_eq!(err.code, biren::ErrorCode::OutOfMemory);
//!     assert_eq!(err.name, "BIREN_ERROR_OUT_OF_MEMORY");
//!     assert_eq!(err.call, "birenMalloc");
//!     Ok(())
//! }
//! ```

#![deny(unsafe_op_in_unsafe_fn, missing_docs)]

mod device;
mod error;
mod event;
pub mod kernel;
mod launch;
mod memory;
mod stream;
pub mod sys;
mod texture;

pub use device::{
    current_device, device_count, device_properties, device_reset, init, init_with_library,
    mem_info, runtime_version, set_device, set_validator, synchronize, take_last_error,
    DeviceProperties,
};
pub use error::{BirenError, ErrorCode, Result};
pub use event::Event;
pub use launch::{register_kernel, Kernel, KernelArg, Launch};
pub use memory::{DeviceBuffer, DeviceCopy, DevicePtr, PinnedBuffer};
pub use stream::Stream;
pub use sys::Dim3;
pub use texture::{Array, TextureObject};
