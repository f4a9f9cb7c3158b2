//! The C surface: one file per family. Each export checks its arguments, calls the core and maps
//! the result; `boundary` catches panics and records the last error.
#![allow(non_camel_case_types, non_snake_case, non_upper_case_globals)]
// Exports take raw pointers from C by design: the C caller promises their validity, and every
// pointer is checked for NULL before use. Signatures follow the C API, however many arguments.
#![allow(clippy::not_unsafe_ptr_arg_deref, clippy::too_many_arguments)]

pub mod array;
pub mod atomic;
pub mod boundary;
pub mod capture;
pub mod control;
pub mod device;
pub mod event;
pub mod graph;
pub mod graph_types;
pub mod hostmem;
pub mod ipc;
pub mod launch;
pub mod managed;
pub mod memcpy3d_types;
pub mod memory;
pub mod memory2d;
pub mod mempool;
pub mod misc;
pub mod occupancy;
pub mod packed_args;
pub mod peer;
pub mod stream;
pub mod symbols;
pub mod texture;
pub mod types;
pub mod warp;

use crate::runtime::{self, error::Result, exec::context::DeviceContext, Runtime};
use std::sync::Arc;

/// The runtime and the calling thread's current device, refusing a device with a sticky error.
#[inline]
pub(crate) fn current_device() -> Result<(&'static Runtime, &'static Arc<DeviceContext>)> {
    let rt = runtime::get()?;
    let d = rt.current()?;
    d.exec.sticky()?;
    Ok((rt, d))
}

/// The device a stream belongs to, refusing a device with a sticky error.
#[inline]
pub(crate) fn device_of(
    rt: &'static Runtime,
    device: usize,
) -> Result<&'static Arc<DeviceContext>> {
    let d = rt.device(device)?;
    d.exec.sticky()?;
    Ok(d)
}
