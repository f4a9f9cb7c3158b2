//! BIREN Runtime: the runtime API of a simulated BIREN accelerator, exported through a C ABI.
//!
//! - `ffi`: the C surface (`include/biren_runtime.h`).
//! - `runtime`: the runtime core (handles, memory, streams, events, scheduler, validator).
//! - `device`: the simulated accelerator (compute units, block execution, engines).

pub mod device;
pub mod ffi;
pub mod runtime;
