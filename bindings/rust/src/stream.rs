//! Streams: in-order queues of work on a device.

use crate::error::{api, check, ErrorCode, Result};
use crate::event::Event;
use crate::sys;
use std::ffi::{c_int, c_uint, c_void};
use std::panic::{catch_unwind, AssertUnwindSafe};

/// A stream (`birenStream_t`), destroyed when dropped. Work in one stream runs in order;
/// different streams run concurrently. [`Stream::default_stream`] is the legacy default stream
/// (the C API's `NULL`).
///
/// Dropping a stream whose work is still pending is fine: the work completes (as with
/// `birenStreamDestroy`). Errors on drop (e.g. the stream was destroyed by a device reset) are
/// ignored.
///
/// ```
/// # fn main() -> Result<(), biren::BirenError> {
/// biren::init()?;
/// let s = biren::Stream::new()?;
/// let mut d = biren::DeviceBuffer::<u32>::zeroed(4)?;
/// d.fill_bytes_async(0xff, &s)?;
/// s.synchronize()?;
/// assert!(s.query()?, "idle after a synchronize");
/// assert_eq!(d.to_vec()?, vec![u32::MAX; 4]);
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct Stream {
    raw: sys::birenStream_t,
    owned: bool,
}

// SAFETY: a stream handle is a registry key, not a pointer the crate dereferences; every C call
// on it is thread-safe.
unsafe impl Send for Stream {}
// SAFETY: as above; no method mutates Rust-side state.
unsafe impl Sync for Stream {}

/// The legacy default stream.
static DEFAULT_STREAM: Stream = Stream {
    raw: std::ptr::null_mut(),
    owned: false,
};

impl Stream {
    /// A blocking stream of the lowest priority on the current device (`birenStreamCreate`).
    pub fn new() -> Result<Stream> {
        let api = api("birenStreamCreate")?;
        let mut raw = std::ptr::null_mut();
        // SAFETY: the out-parameter points to a live handle.
        check("birenStreamCreate", unsafe {
            (api.birenStreamCreate)(&mut raw)
        })?;
        Ok(Stream { raw, owned: true })
    }

    /// A stream that neither waits for nor blocks the default stream
    /// (`birenStreamNonBlocking`).
    pub fn non_blocking() -> Result<Stream> {
        Stream::with_flags_and_priority(sys::birenStreamNonBlocking, 0)
    }

    /// A blocking stream with a priority from 0 (least urgent) to -5 (most urgent); others are
    /// clamped.
    pub fn with_priority(priority: i32) -> Result<Stream> {
        Stream::with_flags_and_priority(0, priority)
    }

    /// `birenStreamCreateWithPriority(flags, priority)`; `InvalidValue` for unknown flags.
    pub fn with_flags_and_priority(flags: u32, priority: i32) -> Result<Stream> {
        let api = api("birenStreamCreateWithPriority")?;
        let mut raw = std::ptr::null_mut();
        // SAFETY: the out-parameter points to a live handle; flags are checked by the library.
        check("birenStreamCreateWithPriority", unsafe {
            (api.birenStreamCreateWithPriority)(&mut raw, flags, priority)
        })?;
        Ok(Stream { raw, owned: true })
    }

    /// The legacy default stream of the calling thread's current device. Never destroyed.
    pub fn default_stream() -> &'static Stream {
        &DEFAULT_STREAM
    }

    /// The C handle, for [`crate::sys`] calls. Valid while `self` lives.
    pub fn as_raw(&self) -> sys::birenStream_t {
        self.raw
    }

    /// Waits until all work enqueued in the stream so far has completed; reports the device's
    /// sticky error if there is one.
    pub fn synchronize(&self) -> Result<()> {
        let api = api("birenStreamSynchronize")?;
        // SAFETY: the handle is checked by the library's registry.
        check("birenStreamSynchronize", unsafe {
            (api.birenStreamSynchronize)(self.raw)
        })
    }

    /// `Ok(true)` if all the stream's work has completed, `Ok(false)` if not yet; never blocks.
    pub fn query(&self) -> Result<bool> {
        let api = api("birenStreamQuery")?;
        // SAFETY: the handle is checked by the library's registry.
        match check("birenStreamQuery", unsafe {
            (api.birenStreamQuery)(self.raw)
        }) {
            Ok(()) => Ok(true),
            Err(e) if e.code == ErrorCode::NotReady => Ok(false),
            Err(e) => Err(e),
        }
    }

    /// Makes later work in this stream wait for `event`'s latest record (or, if the event was
    /// never recorded, for its next record: a BIREN extension). No host round trip.
    pub fn wait_event(&self, event: &Event) -> Result<()> {
        let api = api("birenStreamWaitEvent")?;
        // SAFETY: both handles are checked by the library's registry.
        check("birenStreamWaitEvent", unsafe {
            (api.birenStreamWaitEvent)(self.raw, event.as_raw())
        })
    }

    /// The stream's priority.
    pub fn priority(&self) -> Result<i32> {
        let api = api("birenStreamGetPriority")?;
        let mut p: c_int = 0;
        // SAFETY: the out-parameter points to a live c_int.
        check("birenStreamGetPriority", unsafe {
            (api.birenStreamGetPriority)(self.raw, &mut p)
        })?;
        Ok(p)
    }

    /// The stream's flags (`birenStreamNonBlocking` or 0).
    pub fn flags(&self) -> Result<u32> {
        let api = api("birenStreamGetFlags")?;
        let mut f: c_uint = 0;
        // SAFETY: the out-parameter points to a live c_uint.
        check("birenStreamGetFlags", unsafe {
            (api.birenStreamGetFlags)(self.raw, &mut f)
        })?;
        Ok(f)
    }

    /// Runs `f` on a runtime thread after all earlier work in the stream; later work waits for
    /// it to return (`birenLaunchHostFunc`). Synchronizing calls inside `f` return
    /// `NotPermitted`. A panic in `f` is caught and printed (it cannot cross the C boundary).
    /// If the work is dropped unrun (a device reset), `f` is leaked, never run.
    ///
    /// ```
    /// # fn main() -> Result<(), biren::BirenError> {
    /// use std::sync::atomic::{AtomicBool, Ordering};
    /// use std::sync::Arc;
    /// biren::init()?;
    /// let s = biren::Stream::new()?;
    /// let ran = Arc::new(AtomicBool::new(false));
    /// let flag = ran.clone();
    /// s.launch_host_fn(move || {
    ///     // Synchronizing from inside stream work would deadlock: refused.
    ///     let e = biren::synchronize().unwrap_err();
    ///     assert_eq!(e.code, biren::ErrorCode::NotPermitted);
    ///     flag.store(true, Ordering::SeqCst);
    /// })?;
    /// s.synchronize()?;
    /// assert!(ran.load(Ordering::SeqCst));
    /// # Ok(()) }
    /// ```
    pub fn launch_host_fn<F: FnOnce() + Send + 'static>(&self, f: F) -> Result<()> {
        unsafe extern "C" fn trampoline<F: FnOnce()>(data: *mut c_void) {
            // SAFETY: `data` is the Box<F> leaked below, handed to us exactly once.
            let f = unsafe { Box::from_raw(data.cast::<F>()) };
            if catch_unwind(AssertUnwindSafe(f)).is_err() {
                eprintln!("biren: a host function passed to Stream::launch_host_fn panicked");
            }
        }
        let api = api("birenLaunchHostFunc")?;
        let data = Box::into_raw(Box::new(f));
        // SAFETY: the trampoline matches birenHostFn_t and consumes `data` once.
        let r = check("birenLaunchHostFunc", unsafe {
            (api.birenLaunchHostFunc)(self.raw, Some(trampoline::<F>), data.cast())
        });
        if r.is_err() {
            // Nothing was enqueued: the closure is ours again.
            // SAFETY: `data` came from Box::into_raw above and was not handed out.
            drop(unsafe { Box::from_raw(data) });
        }
        r
    }
}

impl Drop for Stream {
    fn drop(&mut self) {
        if !self.owned {
            return;
        }
        if let Some(api) = sys::api() {
            // SAFETY: the handle is checked by the library's registry. Errors (a handle a
            // device reset already destroyed) leave nothing to clean up.
            let _ = unsafe { (api.birenStreamDestroy)(self.raw) };
        }
    }
}
