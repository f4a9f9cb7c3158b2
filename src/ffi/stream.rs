//! Streams (SPEC §5): creation, destruction, synchronization, queries, waits, host functions.

use super::boundary::{ffi_call, handle, out};
use super::misc::{birenEventWaitDefault, birenEventWaitExternal};
use super::types::*;
use super::{current_device, device_of};
use crate::runtime;
use crate::runtime::diagnostics::{self, caller};
use crate::runtime::error::{ErrorCode, Result};
use crate::runtime::exec::graph::{capture, NodeKind};
use crate::runtime::exec::replay;
use crate::runtime::exec::stream::{StreamCore, STREAM_NON_BLOCKING};
use crate::runtime::exec::work::{HostCall, Work};
use std::ffi::{c_int, c_uint, c_void};
use std::sync::Arc;

fn create(pStream: *mut birenStream_t, flags: c_uint, priority: c_int) -> Result<()> {
    let (rt, d) = current_device()?;
    let o = out(pStream)?;
    if flags & !STREAM_NON_BLOCKING != 0 {
        diagnostics::finding(
            "birenStreamCreateWithFlags",
            &format!("flags={flags:#x}: only birenStreamNonBlocking (1) is defined"),
        );
        return Err(ErrorCode::InvalidValue);
    }
    let _no_reset = d.creating();
    let priority = priority.clamp(
        super::control::BIREN_STREAM_PRIORITY_GREATEST,
        super::control::BIREN_STREAM_PRIORITY_LEAST,
    );
    let s = StreamCore::new(
        rt.next_id(),
        d.index,
        flags,
        priority,
        false,
        d.exec.clone(),
        caller::user_caller(),
    );
    let h = rt.streams.insert(s.clone()).ok_or(ErrorCode::OutOfMemory)?;
    d.add_stream(s);
    *o = h as usize as birenStream_t;
    Ok(())
}

/// Creates a blocking stream of the lowest priority on the current device and writes it to
/// *pStream. Work in it runs in order; different streams run concurrently. Pair with
/// birenStreamDestroy. BIREN_ERROR_INVALID_VALUE if pStream is NULL. Thread-safe.
#[no_mangle]
pub extern "C" fn birenStreamCreate(pStream: *mut birenStream_t) -> birenError_t {
    ffi_call!("birenStreamCreate"(pStream) { create(pStream, 0, 0) })
}

/// Creates a stream with `flags`: birenStreamDefault (0) or birenStreamNonBlocking (1, exempt
/// from the default-stream rules). BIREN_ERROR_INVALID_VALUE for NULL pStream or other flags.
#[no_mangle]
pub extern "C" fn birenStreamCreateWithFlags(
    pStream: *mut birenStream_t,
    flags: c_uint,
) -> birenError_t {
    ffi_call!("birenStreamCreateWithFlags"(pStream, flags) { create(pStream, flags, 0) })
}

/// Creates a stream with `flags` and `priority` (0 = least urgent ... -5 = most urgent; values
/// outside are clamped into that range). Under the preemptive policy a free compute unit always
/// takes the next block of the most urgent kernel.
#[no_mangle]
pub extern "C" fn birenStreamCreateWithPriority(
    pStream: *mut birenStream_t,
    flags: c_uint,
    priority: c_int,
) -> birenError_t {
    ffi_call!("birenStreamCreateWithPriority"(pStream, flags, priority) { create(pStream, flags, priority) })
}

fn stream_of(stream: birenStream_t) -> Result<(&'static runtime::Runtime, Arc<StreamCore>)> {
    let rt = runtime::get()?;
    let s = rt.stream(handle(stream))?;
    Ok((rt, s))
}

/// Destroys a stream and returns at once: work already in it still completes, then its
/// resources are released. Any later use of the handle gives BIREN_ERROR_INVALID_HANDLE.
/// BIREN_ERROR_INVALID_HANDLE for NULL (the default stream cannot be destroyed), an unknown or
/// an already destroyed stream.
#[no_mangle]
pub extern "C" fn birenStreamDestroy(stream: birenStream_t) -> birenError_t {
    ffi_call!("birenStreamDestroy"(stream) {
        let rt = runtime::get()?;
        let s = rt.streams.get(handle(stream)).ok_or(ErrorCode::InvalidHandle)?;
        device_of(rt, s.device)?;
        let s = rt.streams.remove(handle(stream)).ok_or(ErrorCode::InvalidHandle)?;
        capture::stream_gone(&s);
        rt.device(s.device)?.retire_stream(&s);
        Ok(())
    })
}

/// Waits until all work enqueued in `stream` so far has completed; reports the device's
/// asynchronous error if one occurred. BIREN_ERROR_INVALID_HANDLE for an unknown stream (or one
/// destroyed by birenDeviceReset while waiting); BIREN_ERROR_DEADLOCK if the work is blocked on a
/// wait no enqueued record can satisfy for BIREN_DEADLOCK_TIMEOUT_MS; BIREN_ERROR_NOT_PERMITTED
/// inside a kernel or host function. Waits by spinning briefly, then parking. While capturing:
/// BIREN_ERROR_STREAM_CAPTURE_UNSUPPORTED for a capturing stream, and
/// BIREN_ERROR_STREAM_CAPTURE_IMPLICIT for the default stream while a blocking stream of its
/// device captures (both invalidate the capture).
/// After a successful wait, the device's memory pools give back what was freed to them beyond
/// their release threshold (birenMemPoolAttrReleaseThreshold).
#[no_mangle]
pub extern "C" fn birenStreamSynchronize(stream: birenStream_t) -> birenError_t {
    ffi_call!("birenStreamSynchronize"(stream) {
        let (rt, s) = stream_of(stream)?;
        let d = device_of(rt, s.device)?;
        capture::check_sync(&s, "birenStreamSynchronize")?;
        d.sync_stream(&s, "birenStreamSynchronize")?;
        rt.pools.synchronized(d.index, &d.exec.memory);
        Ok(())
    })
}

/// BIREN_SUCCESS if all work enqueued in `stream` has completed, BIREN_ERROR_NOT_READY if some
/// is still queued or running (NOT_READY is an answer, not a failure: it does not set the last
/// error). BIREN_ERROR_INVALID_HANDLE for an unknown stream. While capturing, the codes of
/// birenStreamSynchronize.
#[no_mangle]
pub extern "C" fn birenStreamQuery(stream: birenStream_t) -> birenError_t {
    ffi_call!("birenStreamQuery"(stream) {
        let (rt, s) = stream_of(stream)?;
        let d = device_of(rt, s.device)?;
        capture::check_sync(&s, "birenStreamQuery")?;
        let upto = s.enqueued();
        let idle = || if s.is_idle() { Ok(()) } else { Err(ErrorCode::NotReady) };
        if replay::on() {
            // Recording: the answer is logged; replaying: the recorded answer is given.
            let tail = s.pending_tail();
            replay::answer(idle, || tail.map_or(Ok(()), |p| d.wait_point(&p, "birenStreamQuery")))?;
        } else {
            idle()?;
        }
        if diagnostics::racecheck::on() {
            diagnostics::racecheck::host_synced(&[(s.id, upto)]);
        }
        Ok(())
    })
}

/// Writes the stream's (clamped) priority to *priority. BIREN_ERROR_INVALID_VALUE if NULL.
#[no_mangle]
pub extern "C" fn birenStreamGetPriority(
    stream: birenStream_t,
    priority: *mut c_int,
) -> birenError_t {
    ffi_call!("birenStreamGetPriority"(stream, priority) {
        let (_, s) = stream_of(stream)?;
        *out(priority)? = s.priority;
        Ok(())
    })
}

/// Writes the stream's flags to *flags. BIREN_ERROR_INVALID_VALUE if NULL.
#[no_mangle]
pub extern "C" fn birenStreamGetFlags(stream: birenStream_t, flags: *mut c_uint) -> birenError_t {
    ffi_call!("birenStreamGetFlags"(stream, flags) {
        let (_, s) = stream_of(stream)?;
        *out(flags)? = s.flags;
        Ok(())
    })
}

/// Makes all later work in `stream` wait until `event`'s most recent record (at the time of
/// this call) is reached, without blocking the host. Re-recording the event later does not
/// change this wait. BIREN extension: if the event has never been recorded, the stream waits for
/// its next record, whenever it is enqueued (a host synchronize on such a stream returns
/// BIREN_ERROR_DEADLOCK if no record comes within BIREN_DEADLOCK_TIMEOUT_MS).
/// BIREN_ERROR_INVALID_HANDLE for an unknown stream or event.
#[no_mangle]
pub extern "C" fn birenStreamWaitEvent(stream: birenStream_t, event: birenEvent_t) -> birenError_t {
    ffi_call!("birenStreamWaitEvent"(stream, event) {
        wait_event(stream, event, birenEventWaitDefault, "birenStreamWaitEvent")
    })
}

fn wait_event(stream: birenStream_t, event: birenEvent_t, flags: c_uint, call: &str) -> Result<()> {
    let (rt, s) = stream_of(stream)?;
    let e = rt.event(handle(event))?;
    let d = device_of(rt, s.device)?;
    match flags {
        birenEventWaitDefault => {}
        birenEventWaitExternal => {
            if let Some(r) = capture::external_node(&s, NodeKind::EventWait(e.clone())) {
                return r;
            }
            // Outside a capture: an ordinary wait.
        }
        _ => {
            diagnostics::finding(
                call,
                &format!("flags={flags:#x}: only birenEventWaitDefault (0) and birenEventWaitExternal (1) are defined"),
            );
            return Err(ErrorCode::InvalidValue);
        }
    }
    if capture::active() {
        if let Some(r) = capture::wait(&s, &e) {
            return r;
        }
    }
    d.wait_event(&s, &e)
}

/// As birenStreamWaitEvent (CUDA's cudaStreamWaitEvent with its flags; the seed fixed
/// birenStreamWaitEvent at two parameters), with `flags`: birenEventWaitDefault (0), the same
/// as birenStreamWaitEvent; birenEventWaitExternal (1), valid only in a capturing stream: the
/// wait becomes an event wait node of the captured graph, after the stream's work captured so
/// far (and the stream's later captured work comes after it). Each launch of the graph then
/// waits there for the event's latest record at the time of the launch (BIREN extension: for
/// its next record if it has never been recorded). Such a wait does not fork or join captures.
/// Outside a capture, birenEventWaitExternal is an ordinary wait (as birenEventRecordExternal
/// is an ordinary record).
/// Returns the codes of birenStreamWaitEvent; BIREN_ERROR_INVALID_VALUE for other flags;
/// BIREN_ERROR_STREAM_CAPTURE_INVALIDATED in an invalidated capture. Thread-safe.
#[no_mangle]
pub extern "C" fn birenStreamWaitEventWithFlags(
    stream: birenStream_t,
    event: birenEvent_t,
    flags: c_uint,
) -> birenError_t {
    ffi_call!("birenStreamWaitEventWithFlags"(stream, event, flags) {
        wait_event(stream, event, flags, "birenStreamWaitEventWithFlags")
    })
}

/// Enqueues `fn(userData)` on `stream`: it runs on a runtime thread after all earlier work in the
/// stream, and later work waits for it to return. Inside it, synchronizing calls (stream, event,
/// device synchronize, birenMemcpy, birenMemset, birenDeviceReset) return
/// BIREN_ERROR_NOT_PERMITTED instead of deadlocking. BIREN_ERROR_INVALID_VALUE for a NULL fn.
#[no_mangle]
pub extern "C" fn birenLaunchHostFunc(
    stream: birenStream_t,
    r#fn: birenHostFn_t,
    userData: *mut c_void,
) -> birenError_t {
    ffi_call!("birenLaunchHostFunc"(stream, r#fn, userData) {
        let (rt, s) = stream_of(stream)?;
        let f = r#fn.ok_or(ErrorCode::InvalidValue)?;
        device_of(rt, s.device)?
            .enqueue(&s, Work::Host(HostCall::plain(f, userData as usize)), Vec::new())
            .map(|_| ())
    })
}
