//! Events: points in a stream to wait for, or to time.

use crate::error::{api, check, ErrorCode, Result};
use crate::stream::Stream;
use crate::sys;

/// An event (`birenEvent_t`), destroyed when dropped (errors on drop are ignored).
///
/// ```
/// # fn main() -> Result<(), biren::BirenError> {
/// biren::init()?;
/// let s = biren::Stream::new()?;
/// let (start, end) = (biren::Event::new()?, biren::Event::new()?);
/// start.record(&s)?;
/// s.launch_host_fn(|| std::thread::sleep(std::time::Duration::from_millis(20)))?;
/// end.record(&s)?;
/// end.synchronize()?;
/// let ms = start.elapsed_time(&end)?;
/// assert!(ms >= 19.0, "{ms} ms");
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct Event {
    raw: sys::birenEvent_t,
}

// SAFETY: an event handle is a registry key, not a pointer the crate dereferences; every C call
// on it is thread-safe.
unsafe impl Send for Event {}
// SAFETY: as above; no method mutates Rust-side state.
unsafe impl Sync for Event {}

impl Event {
    /// An event on the current device that records time (`birenEventCreate`).
    pub fn new() -> Result<Event> {
        let api = api("birenEventCreate")?;
        let mut raw = std::ptr::null_mut();
        // SAFETY: the out-parameter points to a live handle.
        check("birenEventCreate", unsafe {
            (api.birenEventCreate)(&mut raw)
        })?;
        Ok(Event { raw })
    }

    /// `birenEventCreateWithFlags`: [`sys::birenEventDisableTiming`] (cheaper records, no
    /// [`Event::elapsed_time`]) and/or [`sys::birenEventBlockingSync`]; `InvalidValue` for
    /// unknown flags.
    pub fn with_flags(flags: u32) -> Result<Event> {
        let api = api("birenEventCreateWithFlags")?;
        let mut raw = std::ptr::null_mut();
        // SAFETY: the out-parameter points to a live handle; flags are checked by the library.
        check("birenEventCreateWithFlags", unsafe {
            (api.birenEventCreateWithFlags)(&mut raw, flags)
        })?;
        Ok(Event { raw })
    }

    /// The C handle, for [`crate::sys`] calls. Valid while `self` lives.
    pub fn as_raw(&self) -> sys::birenEvent_t {
        self.raw
    }

    /// Captures the work enqueued in `stream` so far; re-recording replaces the capture.
    pub fn record(&self, stream: &Stream) -> Result<()> {
        let api = api("birenEventRecord")?;
        // SAFETY: both handles are checked by the library's registry.
        check("birenEventRecord", unsafe {
            (api.birenEventRecord)(self.raw, stream.as_raw())
        })
    }

    /// Waits until the latest record is reached (at once if never recorded).
    pub fn synchronize(&self) -> Result<()> {
        let api = api("birenEventSynchronize")?;
        // SAFETY: the handle is checked by the library's registry.
        check("birenEventSynchronize", unsafe {
            (api.birenEventSynchronize)(self.raw)
        })
    }

    /// `Ok(true)` if the latest record has been reached (or there is none), `Ok(false)` if not
    /// yet; never blocks.
    pub fn query(&self) -> Result<bool> {
        let api = api("birenEventQuery")?;
        // SAFETY: the handle is checked by the library's registry.
        match check("birenEventQuery", unsafe {
            (api.birenEventQuery)(self.raw)
        }) {
            Ok(()) => Ok(true),
            Err(e) if e.code == ErrorCode::NotReady => Ok(false),
            Err(e) => Err(e),
        }
    }

    /// Milliseconds from this event's record to `end`'s (`birenEventElapsedTime(ms, self,
    /// end)`). `NotReady` if either record has not been reached; `InvalidHandle` if either was
    /// never recorded or was created without timing.
    pub fn elapsed_time(&self, end: &Event) -> Result<f32> {
        let api = api("birenEventElapsedTime")?;
        let mut ms = 0f32;
        // SAFETY: the out-parameter points to a live f32; handles are checked by the registry.
        check("birenEventElapsedTime", unsafe {
            (api.birenEventElapsedTime)(&mut ms, self.raw, end.raw)
        })?;
        Ok(ms)
    }
}

impl Drop for Event {
    fn drop(&mut self) {
        if let Some(api) = sys::api() {
            // SAFETY: the handle is checked by the library's registry; an error (destroyed by
            // a device reset) leaves nothing to clean up.
            let _ = unsafe { (api.birenEventDestroy)(self.raw) };
        }
    }
}
