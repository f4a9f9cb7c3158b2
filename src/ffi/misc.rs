//! Smaller pieces of CUDA's runtime API: stream callbacks with a status, a stream's device,
//! event records with flags, profiler start/stop and named ranges (NVTX's push/pop) in the trace.

use super::boundary::{ffi_call, handle, out};
use super::device_of;
use super::types::*;
use crate::runtime::diagnostics;
use crate::runtime::diagnostics::trace::{self, Track};
use crate::runtime::error::ErrorCode;
use crate::runtime::exec::graph::capture;
use crate::runtime::exec::work::{HostCall, HostFn, Work};
use crate::runtime::{self};
use std::cell::RefCell;
use std::ffi::{c_char, c_int, c_uint, c_void, CStr};

/// A stream callback (CUDA's cudaStreamCallback_t): the stream it was added to, the status of
/// the stream's work before it, and the user's data.
pub type birenStreamCallback_t = Option<
    unsafe extern "C" fn(stream: birenStream_t, status: birenError_t, userData: *mut c_void),
>;

/// birenEventRecordWithFlags flag: an ordinary record.
pub const birenEventRecordDefault: c_uint = 0;
/// birenEventRecordWithFlags flag: in a capturing stream, the record becomes an event record
/// node of the captured graph (each launch of the graph records the event when the node's
/// dependencies have completed); outside a capture an ordinary record.
pub const birenEventRecordExternal: c_uint = 1;
/// birenStreamWaitEventWithFlags flag: an ordinary wait.
pub const birenEventWaitDefault: c_uint = 0;
/// birenStreamWaitEventWithFlags flag: in a capturing stream, the wait becomes an event wait
/// node of the captured graph (each launch of the graph waits there for the event's latest
/// record at the time of the launch); outside a capture an ordinary wait.
pub const birenEventWaitExternal: c_uint = 1;

/// Calls a stream callback for `HostFn::Callback`, which carries it as plain words.
///
/// # Safety
/// `f` is a `birenStreamCallback_t` function turned into a `usize` by birenStreamAddCallback,
/// and the user promised that `data` is valid until it has run.
unsafe fn run_callback(f: usize, stream: usize, status: i32, data: usize) {
    type Callback = unsafe extern "C" fn(birenStream_t, birenError_t, *mut c_void);
    // SAFETY: f was made from a `Callback` (above); function pointers and usize are one size.
    let f = unsafe { std::mem::transmute::<usize, Callback>(f) };
    unsafe {
        f(
            stream as birenStream_t,
            birenError_t::from_code(status),
            data as *mut c_void,
        )
    };
}

/// Enqueues `callback(stream, status, userData)` on `stream` (NULL: the default stream): it runs
/// on a runtime thread once the work enqueued before it has completed, and later work in the
/// stream waits for it to return. `status` is BIREN_SUCCESS, or the device's sticky error (e.g.
/// BIREN_ERROR_LAUNCH_FAILURE after a kernel trapped): a device with a sticky error skips its
/// other queued work but still calls the callbacks, with that error. The callback must not call
/// synchronizing runtime calls (they return BIREN_ERROR_NOT_PERMITTED there). `flags` must be 0.
/// Returns BIREN_ERROR_INVALID_VALUE for a NULL callback or flags != 0,
/// BIREN_ERROR_INVALID_HANDLE for a destroyed or unknown stream,
/// BIREN_ERROR_STREAM_CAPTURE_UNSUPPORTED for a capturing stream (as in CUDA, a stream callback
/// cannot be captured; the capture is invalidated: use birenLaunchHostFunc), and
/// BIREN_ERROR_STREAM_CAPTURE_IMPLICIT for the default stream while a blocking stream of its
/// device captures; nothing is enqueued on error. (A callback dropped by birenDeviceReset before
/// it ran is not called.) Thread-safe.
#[no_mangle]
pub extern "C" fn birenStreamAddCallback(
    stream: birenStream_t,
    callback: birenStreamCallback_t,
    userData: *mut c_void,
    flags: c_uint,
) -> birenError_t {
    ffi_call!("birenStreamAddCallback"(stream, callback, userData, flags) {
        let rt = runtime::get()?;
        let s = rt.stream(handle(stream))?;
        let d = device_of(rt, s.device)?;
        let Some(f) = callback else {
            diagnostics::finding("birenStreamAddCallback", "callback is NULL");
            return Err(ErrorCode::InvalidValue);
        };
        if flags != 0 {
            diagnostics::finding("birenStreamAddCallback", &format!("flags={flags:#x}: must be 0"));
            return Err(ErrorCode::InvalidValue);
        }
        // CUDA's stream callbacks cannot be captured (birenLaunchHostFunc can): refused, and
        // the capture is invalidated.
        capture::check_sync(&s, "birenStreamAddCallback")?;
        let call = HostCall {
            func: HostFn::Callback { call: run_callback, f: f as usize, stream: stream as usize },
            data: userData as usize,
        };
        d.enqueue(&s, Work::Host(call), Vec::new()).map(|_| ())
    })
}

/// Writes the device `stream` belongs to (NULL: the current device's default stream) to
/// *device. Returns BIREN_ERROR_INVALID_VALUE if device is NULL, BIREN_ERROR_INVALID_HANDLE for
/// a destroyed or unknown stream. Nothing is written on error. Thread-safe.
#[no_mangle]
pub extern "C" fn birenStreamGetDevice(stream: birenStream_t, device: *mut c_int) -> birenError_t {
    ffi_call!("birenStreamGetDevice"(stream, device) {
        let rt = runtime::get()?;
        let o = out(device)?;
        let s = rt.stream(handle(stream))?;
        *o = s.device as c_int;
        Ok(())
    })
}

/// Resumes recording the trace (BIREN_TRACE) after birenProfilerStop. Without BIREN_TRACE there
/// is nothing to record and it does nothing. Always BIREN_SUCCESS after birenInit. Thread-safe.
#[no_mangle]
pub extern "C" fn birenProfilerStart() -> birenError_t {
    ffi_call!("birenProfilerStart"() {
        runtime::get()?;
        trace::set_recording(true);
        Ok(())
    })
}

/// Pauses recording the trace (BIREN_TRACE) until birenProfilerStart: work that runs meanwhile
/// is not drawn (the file is still written at reset and exit). Without BIREN_TRACE it does
/// nothing. Always BIREN_SUCCESS after birenInit. Thread-safe.
#[no_mangle]
pub extern "C" fn birenProfilerStop() -> birenError_t {
    ffi_call!("birenProfilerStop"() {
        runtime::get()?;
        trace::set_recording(false);
        Ok(())
    })
}

thread_local! {
    static RANGES: RefCell<Vec<(String, u64)>> = const { RefCell::new(Vec::new()) };
}

/// Opens a named range on the calling host thread (NVTX's nvtxRangePushA): with BIREN_TRACE it
/// is drawn on the thread's track, from this call to the matching birenRangePop. Ranges nest;
/// each host thread has its own stack (at most 1024 deep). Works before birenInit.
/// Returns BIREN_ERROR_INVALID_VALUE for a NULL name or a stack 1024 deep. Thread-safe.
#[no_mangle]
pub extern "C" fn birenRangePush(name: *const c_char) -> birenError_t {
    ffi_call!("birenRangePush"(name) {
        if name.is_null() {
            diagnostics::finding("birenRangePush", "name is NULL");
            return Err(ErrorCode::InvalidValue);
        }
        let n = unsafe { CStr::from_ptr(name) }.to_string_lossy().into_owned();
        RANGES.with(|r| {
            let mut r = r.borrow_mut();
            if r.len() >= 1024 {
                diagnostics::finding("birenRangePush", "1024 ranges are open on this thread: a birenRangePop is missing");
                return Err(ErrorCode::InvalidValue);
            }
            r.push((n, trace::now()));
            Ok(())
        })
    })
}

/// Closes the calling host thread's innermost range (NVTX's nvtxRangePop), drawing it in the
/// trace. Returns BIREN_ERROR_INVALID_VALUE when no range is open on this thread. Thread-safe.
#[no_mangle]
pub extern "C" fn birenRangePop() -> birenError_t {
    ffi_call!("birenRangePop"() {
        let Some((name, t0)) = RANGES.with(|r| r.borrow_mut().pop()) else {
            diagnostics::finding("birenRangePop", "no range is open on this thread");
            return Err(ErrorCode::InvalidValue);
        };
        trace::span(Track::HostThread, trace::RANGE, name, t0, "\"range\":true".into());
        Ok(())
    })
}
