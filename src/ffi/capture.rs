//! Stream capture (CUDA's cudaStreamBeginCapture family, cuda -> biren): record the work
//! enqueued in streams as a graph instead of running it.

use super::boundary::{ffi_call, handle, out};
use super::device_of;
use super::graph_types::*;
use super::types::*;
use crate::runtime;
use crate::runtime::diagnostics::caller;
use crate::runtime::error::ErrorCode;
use crate::runtime::exec::graph::capture;
use std::ffi::{c_int, c_ulonglong};

/// Starts capturing `stream`: until birenStreamEndCapture, work enqueued in it (kernels, copies,
/// memsets, 2D/3D copies and memsets, host functions, graph launches, event records and waits)
/// is recorded as nodes of a graph and does not run. Other streams join the capture by waiting
/// (birenStreamWaitEvent) for an event recorded in a capturing stream, and must join back before
/// the capture ends. birenEventRecordWithFlags(..., birenEventRecordExternal) and
/// birenStreamWaitEventWithFlags(..., birenEventWaitExternal) add event record and wait nodes.
/// `mode` restricts potentially unsafe calls (birenMalloc, birenFree, birenMemcpy, birenMemset,
/// their 2D/3D forms, birenDeviceSynchronize) while the capture lasts: birenStreamCaptureModeGlobal (in any thread
/// whose mode is global, and in this thread), ...ThreadLocal (in this thread only), ...Relaxed
/// (nowhere); such a call then returns BIREN_ERROR_STREAM_CAPTURE_UNSUPPORTED and invalidates the
/// calling thread's captures.
/// Returns BIREN_ERROR_STREAM_CAPTURE_UNSUPPORTED for the default (NULL) stream;
/// BIREN_ERROR_ILLEGAL_STATE if the stream is already capturing; BIREN_ERROR_INVALID_VALUE for an
/// unknown mode; BIREN_ERROR_INVALID_HANDLE for a destroyed stream.
#[no_mangle]
pub extern "C" fn birenStreamBeginCapture(
    stream: birenStream_t,
    mode: birenStreamCaptureMode_int,
) -> birenError_t {
    ffi_call!("birenStreamBeginCapture"(stream, mode) {
        let rt = runtime::get()?;
        let s = rt.stream(handle(stream))?;
        device_of(rt, s.device)?;
        capture::begin(&s, mode, caller::user_caller())
    })
}

/// Ends the capture begun in `stream` and writes the captured graph to *pGraph (the caller owns
/// it: birenGraphDestroy). Every stream that joined the capture leaves it.
/// Returns BIREN_ERROR_ILLEGAL_STATE if the stream is not capturing;
/// BIREN_ERROR_STREAM_CAPTURE_UNMATCHED if the capture began in another stream (the capture goes
/// on); BIREN_ERROR_STREAM_CAPTURE_WRONG_THREAD for a global or thread-local capture begun by
/// another thread (the capture goes on); BIREN_ERROR_STREAM_CAPTURE_INVALIDATED if an illegal
/// call invalidated it, and BIREN_ERROR_STREAM_CAPTURE_UNJOINED if a stream forked from it did
/// not join back (in both cases the capture ends and no graph is written);
/// BIREN_ERROR_INVALID_VALUE if pGraph is NULL.
#[no_mangle]
pub extern "C" fn birenStreamEndCapture(
    stream: birenStream_t,
    pGraph: *mut birenGraph_t,
) -> birenError_t {
    ffi_call!("birenStreamEndCapture"(stream, pGraph) {
        let rt = runtime::get()?;
        let s = rt.stream(handle(stream))?;
        let o = out(pGraph)?;
        let h = capture::end(&s)?;
        *o = h as usize as birenGraph_t;
        Ok(())
    })
}

fn status_of(code: i32) -> birenStreamCaptureStatus {
    match code {
        capture::STATUS_ACTIVE => birenStreamCaptureStatus::birenStreamCaptureStatusActive,
        capture::STATUS_INVALIDATED => {
            birenStreamCaptureStatus::birenStreamCaptureStatusInvalidated
        }
        _ => birenStreamCaptureStatus::birenStreamCaptureStatusNone,
    }
}

/// Writes whether `stream` is capturing to *pCaptureStatus (None, Active, or Invalidated).
/// BIREN_ERROR_STREAM_CAPTURE_IMPLICIT for the default stream while a blocking stream of its
/// device captures; BIREN_ERROR_INVALID_VALUE if pCaptureStatus is NULL.
/// Thread-safe.
#[no_mangle]
pub extern "C" fn birenStreamIsCapturing(
    stream: birenStream_t,
    pCaptureStatus: *mut birenStreamCaptureStatus,
) -> birenError_t {
    ffi_call!("birenStreamIsCapturing"(stream, pCaptureStatus) {
        let rt = runtime::get()?;
        let s = rt.stream(handle(stream))?;
        let o = out(pCaptureStatus)?;
        *o = status_of(capture::info(&s)?.0);
        Ok(())
    })
}

/// Writes the capture status of `stream` to *captureStatus_out and, when it is capturing, to the
/// optional (NULL: not wanted) outputs: the capture's unique id, the graph being built (owned by
/// the capture until birenStreamEndCapture), and the nodes the stream's next captured work will
/// depend on (*dependencies_out points to runtime memory valid until the next call of this
/// function for the same capture or the end of the capture). When not capturing, the optional
/// outputs are left alone. Errors as birenStreamIsCapturing.
/// Thread-safe.
#[no_mangle]
pub extern "C" fn birenStreamGetCaptureInfo(
    stream: birenStream_t,
    captureStatus_out: *mut birenStreamCaptureStatus,
    id_out: *mut c_ulonglong,
    graph_out: *mut birenGraph_t,
    dependencies_out: *mut *const birenGraphNode_t,
    numDependencies_out: *mut usize,
) -> birenError_t {
    ffi_call!("birenStreamGetCaptureInfo"(stream, captureStatus_out, id_out, graph_out, dependencies_out, numDependencies_out) {
        let rt = runtime::get()?;
        let s = rt.stream(handle(stream))?;
        let o = out(captureStatus_out)?;
        let (status, id, graph, deps, n) = capture::info(&s)?;
        *o = status_of(status);
        if status != capture::STATUS_NONE {
            unsafe {
                if let Some(p) = id_out.as_mut() { *p = id; }
                if let Some(p) = graph_out.as_mut() { *p = graph as usize as birenGraph_t; }
                if let Some(p) = dependencies_out.as_mut() { *p = deps as *const birenGraphNode_t; }
                if let Some(p) = numDependencies_out.as_mut() { *p = n; }
            }
        }
        Ok(())
    })
}

/// Sets the calling thread's capture interaction mode to *mode and writes the previous one to
/// *mode (so that a second call restores it). A thread in mode global is refused potentially
/// unsafe calls while it or any other thread has a global capture (or it has a thread-local
/// one); thread-local only for its own captures; relaxed never. Default: global.
/// BIREN_ERROR_INVALID_VALUE for a NULL mode or an unknown value (nothing changes then).
#[no_mangle]
pub extern "C" fn birenThreadExchangeStreamCaptureMode(
    mode: *mut birenStreamCaptureMode,
) -> birenError_t {
    ffi_call!("birenThreadExchangeStreamCaptureMode"(mode) {
        runtime::get()?;
        if mode.is_null() {
            return Err(ErrorCode::InvalidValue);
        }
        // Read as an integer: the value comes from C and may be anything.
        let p = mode as *mut c_int;
        let old = capture::exchange_mode(unsafe { p.read() })?;
        unsafe { p.write(old) };
        Ok(())
    })
}
