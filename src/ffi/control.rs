//! Control, devices and errors (SPEC §2).

use super::boundary::{ffi_call, ffi_value, last_error, out, take_last_error};
use super::current_device;
use super::types::*;
use crate::runtime::error::{self, ErrorCode};
use crate::runtime::exec::scheduler::Policy;
use crate::runtime::{self, diagnostics};
use std::ffi::{c_char, c_int, c_void};

/// Starts the runtime and its simulated device(s), reading the configuration from the
/// environment (BIREN_DEVICE_COUNT, BIREN_COMPUTE_UNITS, BIREN_DEVICE_MEMORY, BIREN_SCHEDULING,
/// BIREN_VALIDATOR, BIREN_DEADLOCK_TIMEOUT_MS, BIREN_KERNEL_TIMEOUT_MS, BIREN_TRACE, BIREN_LOG;
/// a value is taken exactly as written, and an empty one counts as unset). Must come before
/// every other call except the error-string, last-error and version calls; the others return
/// BIREN_ERROR_NOT_INITIALIZED before it.
///
/// Idempotent and thread-safe: later calls return BIREN_SUCCESS and change nothing.
/// Returns BIREN_ERROR_INVALID_VALUE, after one line on stderr naming the variable, when a
/// variable is malformed; the runtime then stays uninitialized and birenInit may be retried.
///
/// fork(): as with CUDA, a child forked after birenInit cannot use the runtime (its threads did
/// not follow the fork). In the child every call returns BIREN_ERROR_NOT_INITIALIZED at once
/// (never a hang), and birenInit returns BIREN_ERROR_NOT_SUPPORTED with one line on stderr.
/// Start worker processes before birenInit, or exec a new program (posix_spawn; in Python,
/// multiprocessing's "spawn" start method). A child forked before birenInit may call it as
/// usual. The child does not write the parent's BIREN_TRACE file. The parent is unaffected.
#[no_mangle]
pub extern "C" fn birenInit() -> birenError_t {
    ffi_call!("birenInit"() {
        runtime::init()?;
        crate::ffi::launch::publish_context_offset();
        crate::ffi::launch::install_exit_hook();
        Ok(())
    })
}

/// Resets the current device: drops every command not yet started, lets running blocks and
/// copies finish, destroys all its streams and events (their handles then give
/// BIREN_ERROR_INVALID_HANDLE), frees all its device memory and clears its sticky error.
/// Host threads blocked in a synchronize on the device return (a stream or event synchronize
/// with BIREN_ERROR_INVALID_HANDLE, a device synchronize with BIREN_SUCCESS). Page-locked host
/// memory from birenMallocHost is not freed. The runtime stays initialized and the device is
/// usable at once. With the validator on, prints a leak report of what was still alive.
/// A host function running when the reset begins is waited for, and keeps the streams and
/// events it made until it returns; they are destroyed with the rest.
///
/// Returns BIREN_ERROR_NOT_PERMITTED from inside a kernel or a host function.
#[no_mangle]
pub extern "C" fn birenDeviceReset() -> birenError_t {
    ffi_call!("birenDeviceReset"() {
        let rt = runtime::get()?;
        rt.reset_device(rt.current_index())
    })
}

/// Waits until all work enqueued so far on the current device has completed, then reports the
/// device's first asynchronous error (e.g. BIREN_ERROR_LAUNCH_FAILURE after a birenTrap).
/// Returns BIREN_ERROR_DEADLOCK if the work is blocked on a wait that no enqueued record can
/// satisfy for BIREN_DEADLOCK_TIMEOUT_MS; BIREN_ERROR_NOT_PERMITTED inside a kernel or host function.
/// Syncing the whole device is the coarsest (slowest) synchronization: prefer stream or event syncs.
/// After a successful wait, the device's memory pools give back what was freed to them beyond
/// their release threshold (birenMemPoolAttrReleaseThreshold).
#[no_mangle]
pub extern "C" fn birenDeviceSynchronize() -> birenError_t {
    ffi_call!("birenDeviceSynchronize"() {
        let (rt, d) = current_device()?;
        crate::runtime::exec::graph::capture::check_unsafe("birenDeviceSynchronize")?;
        d.sync_device()?;
        rt.pools.synchronized(d.index, &d.exec.memory);
        Ok(())
    })
}

/// Writes the number of devices (BIREN_DEVICE_COUNT, default 1) to *count.
/// BIREN_ERROR_INVALID_VALUE if count is NULL.
#[no_mangle]
pub extern "C" fn birenGetDeviceCount(count: *mut c_int) -> birenError_t {
    ffi_call!("birenGetDeviceCount"(count) {
        let rt = runtime::get()?;
        *out(count)? = rt.device_count() as c_int;
        Ok(())
    })
}

/// Makes `device` the calling host thread's current device (each thread starts on device 0).
/// BIREN_ERROR_INVALID_DEVICE if there is no such device.
#[no_mangle]
pub extern "C" fn birenSetDevice(device: c_int) -> birenError_t {
    ffi_call!("birenSetDevice"(device) {
        let rt = runtime::get()?;
        let i = usize::try_from(device).map_err(|_| ErrorCode::InvalidDevice)?;
        rt.set_current(i)
    })
}

/// Writes the calling host thread's current device to *device. BIREN_ERROR_INVALID_VALUE if NULL.
#[no_mangle]
pub extern "C" fn birenGetDevice(device: *mut c_int) -> birenError_t {
    ffi_call!("birenGetDevice"(device) {
        let rt = runtime::get()?;
        *out(device)? = rt.current_index() as c_int;
        Ok(())
    })
}

/// Fills the fields of *prop that version 1.0 of this header had (name .. streamPrioritiesSupported)
/// and writes nothing past them: programs compiled against that header pass that smaller
/// struct. Programs compiled against this header reach birenGetDeviceProperties_v2 under this
/// name (see the macro of that name below), which fills every field.
/// BIREN_ERROR_INVALID_VALUE if prop is NULL; BIREN_ERROR_INVALID_DEVICE if there is no such device.
#[no_mangle]
pub extern "C" fn birenGetDeviceProperties(
    prop: *mut birenDeviceProp,
    device: c_int,
) -> birenError_t {
    ffi_call!("birenGetDeviceProperties"(prop, device) {
        let rt = runtime::get()?;
        let i = usize::try_from(device).map_err(|_| ErrorCode::InvalidDevice)?;
        rt.device(i)?;
        out(prop)?;
        let full = super::device::properties(i)?;
        // SAFETY: the caller's struct has at least the version-1.0 fields; only those are written.
        unsafe {
            std::ptr::copy_nonoverlapping(
                &full as *const birenDeviceProp as *const u8,
                prop as *mut u8,
                super::device::PROP_V1_BYTES,
            )
        };
        Ok(())
    })
}

/// Lowest stream priority (least urgent): 0.
pub const BIREN_STREAM_PRIORITY_LEAST: c_int = 0;
/// Highest stream priority (most urgent): -5. Lower numbers are more urgent.
pub const BIREN_STREAM_PRIORITY_GREATEST: c_int = -5;

/// Writes the stream priority range: *leastPriority = 0, *greatestPriority = -5 (lower number =
/// higher priority). Either pointer may be NULL (then it is not written).
#[no_mangle]
pub extern "C" fn birenDeviceGetStreamPriorityRange(
    leastPriority: *mut c_int,
    greatestPriority: *mut c_int,
) -> birenError_t {
    ffi_call!("birenDeviceGetStreamPriorityRange"(leastPriority, greatestPriority) {
        runtime::get()?;
        if let Ok(l) = out(leastPriority) {
            *l = BIREN_STREAM_PRIORITY_LEAST;
        }
        if let Ok(g) = out(greatestPriority) {
            *g = BIREN_STREAM_PRIORITY_GREATEST;
        }
        Ok(())
    })
}

/// Sets how the current device's compute units are shared between kernels: preemptive (default:
/// a free compute unit always takes the next block of the highest-priority kernel) or cooperative
/// (a started kernel keeps the device until its last block is dispatched). Takes effect for the
/// next block dispatched. BIREN_ERROR_INVALID_VALUE for an unknown policy value.
#[no_mangle]
pub extern "C" fn birenDeviceSetSchedulingPolicy(
    policy: birenSchedulingPolicy_int,
) -> birenError_t {
    ffi_call!("birenDeviceSetSchedulingPolicy"(policy) {
        let (_, d) = current_device()?;
        let p = Policy::from_int(policy as i64)?;
        d.exec.scheduler.set_policy(p);
        Ok(())
    })
}

/// Writes the current device's scheduling policy to *policy. BIREN_ERROR_INVALID_VALUE if NULL.
#[no_mangle]
pub extern "C" fn birenDeviceGetSchedulingPolicy(
    policy: *mut birenSchedulingPolicy,
) -> birenError_t {
    ffi_call!("birenDeviceGetSchedulingPolicy"(policy) {
        let (_, d) = current_device()?;
        *out(policy)? = match d.exec.scheduler.policy() {
            Policy::Preemptive => birenSchedulingPolicy::birenSchedulePreemptive,
            Policy::Cooperative => birenSchedulingPolicy::birenScheduleCooperative,
        };
        Ok(())
    })
}

/// Writes the runtime version, 1000*major + 10*minor, to *runtimeVersion. Works before birenInit.
/// BIREN_ERROR_INVALID_VALUE if NULL.
#[no_mangle]
pub extern "C" fn birenRuntimeGetVersion(runtimeVersion: *mut c_int) -> birenError_t {
    ffi_call!("birenRuntimeGetVersion"(runtimeVersion) {
        *out(runtimeVersion)? = 1000 * runtime::VERSION_MAJOR + 10 * runtime::VERSION_MINOR;
        Ok(())
    })
}

fn static_cstr(s: &'static str) -> *const c_char {
    // The table's strings are NUL-terminated copies made once.
    use std::collections::HashMap;
    use std::sync::OnceLock;
    static CACHE: OnceLock<HashMap<&'static str, std::ffi::CString>> = OnceLock::new();
    let m = CACHE.get_or_init(|| {
        let mut m = HashMap::new();
        for (_, name, text) in error::ERROR_TABLE {
            m.insert(*name, std::ffi::CString::new(*name).unwrap());
            m.insert(*text, std::ffi::CString::new(*text).unwrap());
        }
        for s in [error::error_name(-1), error::error_text(-1)] {
            m.insert(s, std::ffi::CString::new(s).unwrap());
        }
        m
    });
    m.get(s)
        .map_or(c"unrecognized error code".as_ptr(), |c| c.as_ptr())
}

/// A static, NUL-terminated description of `error`. Never NULL, also for values that are not
/// error codes. Works before birenInit. Thread-safe.
#[no_mangle]
pub extern "C" fn birenGetErrorString(error: birenError_int) -> *const c_char {
    ffi_value!(
        "birenGetErrorString",
        c"unrecognized error code".as_ptr(),
        { static_cstr(error::error_text(error)) }
    )
}

/// The static name of `error`, e.g. "BIREN_ERROR_OUT_OF_BOUNDS"; "BIREN_ERROR_UNRECOGNIZED" for
/// values that are not error codes. Never NULL. Works before birenInit. Thread-safe.
#[no_mangle]
pub extern "C" fn birenGetErrorName(error: birenError_int) -> *const c_char {
    ffi_value!("birenGetErrorName", c"BIREN_ERROR_UNRECOGNIZED".as_ptr(), {
        static_cstr(error::error_name(error))
    })
}

/// Returns the last error of a failing call made by the calling host thread, and resets it to
/// BIREN_SUCCESS. Every failing call sets it (BIREN_ERROR_NOT_READY, an answer rather than a
/// failure, does not). Works before birenInit.
#[no_mangle]
pub extern "C" fn birenGetLastError() -> birenError_t {
    ffi_value!("birenGetLastError", birenError_t::BIREN_ERROR_UNKNOWN, {
        birenError_t::from_code(take_last_error())
    })
}

/// Returns the calling host thread's last error without resetting it. Works before birenInit.
#[no_mangle]
pub extern "C" fn birenPeekAtLastError() -> birenError_t {
    ffi_value!("birenPeekAtLastError", birenError_t::BIREN_ERROR_UNKNOWN, {
        birenError_t::from_code(last_error())
    })
}

/// Turns the validator on (enable != 0) or off. On, every call checks all its parameters and
/// reports each problem as one line on stderr (or to the birenSetValidatorCallback callback),
/// kernels' out-of-bounds writes are detected, leaks are reported at reset and exit, and advice
/// is given on costly patterns. It costs time; use it while debugging. Same as BIREN_VALIDATOR=1.
/// Affects allocations made after the call (guard zones).
#[no_mangle]
pub extern "C" fn birenSetDeviceValidator(enable: c_int) -> birenError_t {
    ffi_call!("birenSetDeviceValidator"(enable) {
        runtime::get()?;
        diagnostics::set_validator(enable != 0);
        Ok(())
    })
}

/// Turns race detection on (enable != 0) or off; same as BIREN_RACECHECK=1 at birenInit.
/// On, the runtime tracks what orders work (stream order, event records and waits, the legacy
/// default stream's rules, host synchronizations, host functions, graph edges, a graph
/// launch's place in its stream and after the exec's previous launch, stream-ordered frees) and
/// what each operation touches (copies and memsets by byte range on device memory and on
/// birenMallocHost memory, 2D/3D ones by their rows; kernels by the allocations their copied
/// pointer arguments point into, writes found by comparing the memory before and after; each
/// node of a launched graph likewise; birenFreeAsync as a write of the whole allocation at its
/// point in stream order), and reports each pair of conflicting accesses that
/// nothing orders as one line beginning "biren racecheck:" (stderr, or the
/// birenSetValidatorCallback callback), once per race, with a count at exit. Turning it on
/// forgets what was tracked before; memory allocated before the call is tracked from then on.
/// Kernels launched by reference (unregistered, without BIREN_LAUNCH) are not seen, nor are
/// plain loads and stores by host code. Returns BIREN_ERROR_NOT_INITIALIZED before birenInit.
/// Thread-safe, but work already enqueued when it is turned on is not tracked.
#[no_mangle]
pub extern "C" fn birenSetRaceCheck(enable: c_int) -> birenError_t {
    ffi_call!("birenSetRaceCheck"(enable) {
        let rt = runtime::get()?;
        let was = diagnostics::racecheck::on();
        diagnostics::racecheck::set(enable != 0);
        if enable != 0 && !was {
            // Listed first, told after: the race detector's lock is not taken under a table's.
            let mut live = Vec::new();
            for d in &rt.devices {
                d.exec.memory.for_each(|a| live.push((a.base, a.size, Some(d.index))));
            }
            rt.host_memory.for_each(|a| live.push((a.base, a.size, None)));
            for (base, size, device) in live {
                diagnostics::racecheck::alloc(base, size, device);
            }
        }
        Ok(())
    })
}

struct CallbackTarget {
    f: unsafe extern "C" fn(*const c_char, *mut c_void),
    data: usize,
}

/// Sends validator lines to `callback(message, userData)` instead of stderr; NULL restores
/// stderr. The message is valid only during the call. The callback may run on any thread
/// (including runtime threads) and must not call the runtime.
#[no_mangle]
pub extern "C" fn birenSetValidatorCallback(
    callback: birenValidatorCallback_t,
    userData: *mut c_void,
) -> birenError_t {
    ffi_call!("birenSetValidatorCallback"(callback, userData) {
        runtime::get()?;
        match callback {
            None => diagnostics::set_sink(None),
            Some(f) => {
                let t = CallbackTarget { f, data: userData as usize };
                diagnostics::set_sink(Some(Box::new(move |line: &str| {
                    let c = std::ffi::CString::new(line.replace('\0', " ")).unwrap_or_default();
                    unsafe { (t.f)(c.as_ptr(), t.data as *mut c_void) };
                })));
            }
        }
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ffi::memory::{birenFree, birenMalloc};

    /// Turning race detection on tells it of the live allocations. The memory table's lock is a
    /// leaf of the lock order: the allocations are listed under it and told after it (the
    /// checker of the crate's tests panicked when the detector's lock was taken under it).
    #[test]
    fn race_detection_learns_the_live_allocations_outside_the_tables_lock() {
        assert_eq!(birenInit(), birenError_t::BIREN_SUCCESS);
        let mut p: *mut c_void = std::ptr::null_mut();
        assert_eq!(birenMalloc(&mut p, 4096), birenError_t::BIREN_SUCCESS);
        assert_eq!(birenSetRaceCheck(1), birenError_t::BIREN_SUCCESS);
        assert_eq!(birenSetRaceCheck(0), birenError_t::BIREN_SUCCESS);
        assert_eq!(birenFree(p), birenError_t::BIREN_SUCCESS);
    }
}
