//! Events (SPEC §5): creation, records, queries, synchronization, timing, destruction.

use super::boundary::{ffi_call, handle, out};
use super::misc::{birenEventRecordDefault, birenEventRecordExternal};
use super::types::*;
use super::{current_device, device_of};
use crate::runtime;
use crate::runtime::diagnostics::{self, caller};
use crate::runtime::error::{ErrorCode, Result};
use crate::runtime::exec::event::{EventCore, EVENT_BLOCKING_SYNC, EVENT_DISABLE_TIMING};
use crate::runtime::exec::graph::{capture, NodeKind};
use crate::runtime::exec::replay;
use std::ffi::{c_float, c_uint};
use std::sync::Arc;

fn create(event: *mut birenEvent_t, flags: c_uint) -> Result<()> {
    let (rt, d) = current_device()?;
    let o = out(event)?;
    if flags & !(EVENT_BLOCKING_SYNC | EVENT_DISABLE_TIMING) != 0 {
        diagnostics::finding("birenEventCreateWithFlags", &format!("flags={flags:#x}: only birenEventBlockingSync (1) and birenEventDisableTiming (2) are defined"));
        return Err(ErrorCode::InvalidValue);
    }
    let e = Arc::new(EventCore::new(
        rt.next_id(),
        d.index,
        flags,
        caller::user_caller(),
    ));
    let h = rt.events.insert(e).ok_or(ErrorCode::OutOfMemory)?;
    crate::runtime::diagnostics::advice::event_created();
    *o = h as usize as birenEvent_t;
    Ok(())
}

/// Creates an event on the current device and writes it to *event. Every birenEventCreate needs
/// a birenEventDestroy. BIREN_ERROR_INVALID_VALUE if event is NULL. Thread-safe.
#[no_mangle]
pub extern "C" fn birenEventCreate(event: *mut birenEvent_t) -> birenError_t {
    ffi_call!("birenEventCreate"(event) { create(event, 0) })
}

/// Creates an event with flags (birenEventDefault, birenEventBlockingSync,
/// birenEventDisableTiming, or'ed). BIREN_ERROR_INVALID_VALUE for unknown flags.
#[no_mangle]
pub extern "C" fn birenEventCreateWithFlags(
    event: *mut birenEvent_t,
    flags: c_uint,
) -> birenError_t {
    ffi_call!("birenEventCreateWithFlags"(event, flags) { create(event, flags) })
}

fn event_of(event: birenEvent_t) -> Result<(&'static runtime::Runtime, Arc<EventCore>)> {
    let rt = runtime::get()?;
    let e = rt.event(handle(event))?;
    Ok((rt, e))
}

/// Records `event` in `stream` (NULL: the default stream): the event captures all work enqueued
/// in the stream so far and is reached when that work completes. Re-recording replaces the
/// captured state (waits already made keep the record they captured).
/// Returns BIREN_ERROR_DEADLOCK, enqueueing nothing, if the record would complete a cycle of
/// waits: a stream already waits (birenStreamWaitEvent on the never-recorded event) for this
/// record, and this record would itself have to wait for that stream — e.g. stream A waits for
/// B's event while B waits for A's, or a stream waits for a record it would make later itself.
/// With the validator on, the cycle's streams and events are printed.
/// BIREN_ERROR_INVALID_HANDLE for an unknown event or stream.
#[no_mangle]
pub extern "C" fn birenEventRecord(event: birenEvent_t, stream: birenStream_t) -> birenError_t {
    ffi_call!("birenEventRecord"(event, stream) {
        record(event, stream, birenEventRecordDefault, "birenEventRecord")
    })
}

fn record(event: birenEvent_t, stream: birenStream_t, flags: c_uint, call: &str) -> Result<()> {
    let (rt, e) = event_of(event)?;
    let s = rt.stream(handle(stream))?;
    let d = device_of(rt, s.device)?;
    match flags {
        birenEventRecordDefault => {}
        birenEventRecordExternal => {
            if let Some(r) = capture::external_node(&s, NodeKind::EventRecord(e.clone())) {
                return r;
            }
            // Outside a capture: an ordinary record.
        }
        _ => {
            diagnostics::finding(
                call,
                &format!("flags={flags:#x}: only birenEventRecordDefault (0) and birenEventRecordExternal (1) are defined"),
            );
            return Err(ErrorCode::InvalidValue);
        }
    }
    if capture::active() {
        if let Some(r) = capture::record(&e, &s) {
            return r;
        }
    }
    d.record(&e, &s)
}

/// As birenEventRecord, with `flags`: birenEventRecordDefault (0), the same as
/// birenEventRecord; birenEventRecordExternal (1): in a capturing stream the record becomes an
/// event record node of the captured graph, after the stream's work captured so far (and the
/// stream's later captured work comes after it); each launch of the graph records the event
/// when the node's dependencies have completed. Such a record does not fork or join captures (a
/// birenStreamWaitEvent on the event during the capture does not refer to it). Outside a
/// capture, birenEventRecordExternal is an ordinary record.
/// Returns the codes of birenEventRecord; BIREN_ERROR_INVALID_VALUE for other flags;
/// BIREN_ERROR_STREAM_CAPTURE_INVALIDATED in an invalidated capture. Thread-safe.
#[no_mangle]
pub extern "C" fn birenEventRecordWithFlags(
    event: birenEvent_t,
    stream: birenStream_t,
    flags: c_uint,
) -> birenError_t {
    ffi_call!("birenEventRecordWithFlags"(event, stream, flags) {
        record(event, stream, flags, "birenEventRecordWithFlags")
    })
}

/// BIREN_SUCCESS if the event's latest record has been reached (or it was never recorded),
/// BIREN_ERROR_NOT_READY otherwise (an answer: the last error is not set).
#[no_mangle]
pub extern "C" fn birenEventQuery(event: birenEvent_t) -> birenError_t {
    ffi_call!("birenEventQuery"(event) {
        let (rt, e) = event_of(event)?;
        let d = device_of(rt, e.device)?;
        capture::check_event(&e)?;
        let latest = e.latest();
        let reached = || match &latest {
            Some(r) if !r.reached() => Err(ErrorCode::NotReady),
            _ => Ok(()),
        };
        if replay::on() {
            // Recording: the answer is logged; replaying: the recorded answer is given.
            let settle = || latest.as_ref().map_or(Ok(()), |r| d.wait_point(&r.point, "birenEventQuery"));
            replay::answer(reached, settle)?;
        } else {
            reached()?;
        }
        if let Some(r) = latest.filter(|_| diagnostics::racecheck::on()) {
            diagnostics::racecheck::host_synced(&[(r.point.stream.id, r.point.seq)]);
        }
        Ok(())
    })
}

/// Waits until the event's latest record is reached; returns at once if it was never recorded.
/// BIREN_ERROR_DEADLOCK if the record is blocked on a wait that no enqueued record can satisfy
/// for BIREN_DEADLOCK_TIMEOUT_MS; BIREN_ERROR_NOT_PERMITTED inside a kernel or host function.
/// After a successful wait, the device's memory pools give back what was freed to them beyond
/// their release threshold (birenMemPoolAttrReleaseThreshold).
#[no_mangle]
pub extern "C" fn birenEventSynchronize(event: birenEvent_t) -> birenError_t {
    ffi_call!("birenEventSynchronize"(event) {
        let (rt, e) = event_of(event)?;
        let d = device_of(rt, e.device)?;
        capture::check_event(&e)?;
        d.sync_event(&e)?;
        rt.pools.synchronized(d.index, &d.exec.memory);
        Ok(())
    })
}

/// Writes the time in milliseconds between the records of `start` and `end` to *ms (resolution
/// better than 1 microsecond). BIREN_ERROR_NOT_READY if either record has not been reached;
/// BIREN_ERROR_INVALID_HANDLE if either event is unknown, was never recorded, or was created with
/// birenEventDisableTiming; BIREN_ERROR_INVALID_VALUE if ms is NULL.
#[no_mangle]
pub extern "C" fn birenEventElapsedTime(
    ms: *mut c_float,
    start: birenEvent_t,
    end: birenEvent_t,
) -> birenError_t {
    ffi_call!("birenEventElapsedTime"(ms, start, end) {
        let (rt, a) = event_of(start)?;
        let b = rt.event(handle(end))?;
        let o = out(ms)?;
        device_of(rt, a.device)?;
        if a.timing_disabled() || b.timing_disabled() {
            diagnostics::finding("birenEventElapsedTime", "an event was created with birenEventDisableTiming");
            return Err(ErrorCode::InvalidHandle);
        }
        let (Some(ra), Some(rb)) = (a.latest(), b.latest()) else {
            diagnostics::finding("birenEventElapsedTime", "an event was never recorded");
            return Err(ErrorCode::InvalidHandle);
        };
        let (Some(ta), Some(tb)) = (ra.time_ns(), rb.time_ns()) else {
            return Err(ErrorCode::NotReady);
        };
        let v = ((tb as f64 - ta as f64) / 1e6) as c_float;
        // Recording: logged; replaying: the recorded value.
        *o = if replay::on() { replay::elapsed(v) } else { v };
        Ok(())
    })
}

/// Destroys an event. Safe while a record of it is pending: the record still happens and waits on
/// it still hold. Streams that wait for the first record of a never-recorded event (the
/// birenStreamWaitEvent extension) stop waiting when it is destroyed, as a wait on a
/// never-recorded event does in CUDA: their later work runs (the validator says so). Later use of
/// the handle gives BIREN_ERROR_INVALID_HANDLE (also for a second destroy, and for a stream
/// handle passed as an event).
#[no_mangle]
pub extern "C" fn birenEventDestroy(event: birenEvent_t) -> birenError_t {
    ffi_call!("birenEventDestroy"(event) {
        let (rt, e) = event_of(event)?;
        let d = device_of(rt, e.device)?;
        rt.events.remove(handle(event)).ok_or(ErrorCode::InvalidHandle)?;
        let released = d.abandon_future(&e);
        if !released.is_empty() {
            let names: Vec<String> = released.iter().map(|&s| crate::runtime::exec::deadlock::stream_name(s)).collect();
            crate::runtime::diagnostics::line(&format!(
                "biren validator: birenEventDestroy: event #{} was destroyed before its first record while {} waited for it: the waits are released and the work after them runs",
                e.id,
                names.join(", ")
            ));
        }
        crate::runtime::diagnostics::advice::event_destroyed();
        Ok(())
    })
}
