//! Several devices (CUDA's peer access and cudaMemcpyPeer). All simulated devices live in one
//! process and one address space, so every device can reach every other's memory; peer access
//! is recorded per pair as CUDA does, and peer copies are ordinary copies checked against the
//! named devices.

use super::boundary::{ffi_call, out};
use super::memory::copy_or_fill;
use super::types::*;
use crate::runtime::diagnostics;
use crate::runtime::error::{ErrorCode, Result};
use crate::runtime::exec::executor::ENGINE_FROM_DEVICE;
use crate::runtime::exec::work::Work;
use crate::runtime::{self, Runtime};
use std::ffi::{c_int, c_uint, c_void};

/// Attributes of a device pair (CUDA's cudaDeviceP2PAttr values).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub enum birenDeviceP2PAttr {
    /// Relative performance of the link: 0 (all pairs alike).
    birenDevP2PAttrPerformanceRank = 1,
    /// 1: peer access is supported.
    birenDevP2PAttrAccessSupported = 2,
    /// 1: atomics over the link are native (one process, one memory).
    birenDevP2PAttrNativeAtomicSupported = 3,
    /// 0: no CUDA arrays.
    birenDevP2PAttrCudaArrayAccessSupported = 4,
}
/// A P2P attribute received from C: read as an integer and checked.
pub type birenDeviceP2PAttr_int = c_int;

fn dev(rt: &Runtime, d: c_int) -> Result<usize> {
    let i = usize::try_from(d).map_err(|_| ErrorCode::InvalidDevice)?;
    rt.device(i)?;
    Ok(i)
}

/// Writes 1 to *canAccessPeer if kernels of `device` can use memory of `peerDevice` (every
/// other device here), 0 for the device itself. Returns BIREN_ERROR_INVALID_VALUE if
/// canAccessPeer is NULL, BIREN_ERROR_INVALID_DEVICE for a device that does not exist.
/// Thread-safe.
#[no_mangle]
pub extern "C" fn birenDeviceCanAccessPeer(
    canAccessPeer: *mut c_int,
    device: c_int,
    peerDevice: c_int,
) -> birenError_t {
    ffi_call!("birenDeviceCanAccessPeer"(canAccessPeer, device, peerDevice) {
        let rt = runtime::get()?;
        let o = out(canAccessPeer)?;
        let (a, b) = (dev(rt, device)?, dev(rt, peerDevice)?);
        *o = (a != b) as c_int;
        Ok(())
    })
}

/// Enables the current device's access to `peerDevice`'s memory (recorded: it is always
/// possible here, kernels may use peer memory either way). `flags` must be 0.
/// Returns BIREN_ERROR_INVALID_DEVICE for a device that does not exist or the current device
/// itself, BIREN_ERROR_INVALID_VALUE for flags != 0, BIREN_ERROR_PEER_ACCESS_ALREADY_ENABLED if it
/// is enabled already. Reset by birenDeviceReset of the current device. Thread-safe.
#[no_mangle]
pub extern "C" fn birenDeviceEnablePeerAccess(peerDevice: c_int, flags: c_uint) -> birenError_t {
    ffi_call!("birenDeviceEnablePeerAccess"(peerDevice, flags) {
        let rt = runtime::get()?;
        let me = rt.current_index();
        let peer = dev(rt, peerDevice)?;
        if peer == me {
            diagnostics::finding("birenDeviceEnablePeerAccess", "peerDevice is the current device");
            return Err(ErrorCode::InvalidDevice);
        }
        if flags != 0 {
            return Err(ErrorCode::InvalidValue);
        }
        if !rt.peers.lock().insert((me, peer)) {
            diagnostics::finding("birenDeviceEnablePeerAccess", &format!("access from device {me} to {peer} is enabled already"));
            return Err(ErrorCode::PeerAccessAlreadyEnabled);
        }
        Ok(())
    })
}

/// Disables the current device's access to `peerDevice` enabled by birenDeviceEnablePeerAccess.
/// Returns BIREN_ERROR_INVALID_DEVICE for a device that does not exist,
/// BIREN_ERROR_PEER_ACCESS_NOT_ENABLED if it was not enabled. Thread-safe.
#[no_mangle]
pub extern "C" fn birenDeviceDisablePeerAccess(peerDevice: c_int) -> birenError_t {
    ffi_call!("birenDeviceDisablePeerAccess"(peerDevice) {
        let rt = runtime::get()?;
        let me = rt.current_index();
        let peer = dev(rt, peerDevice)?;
        if !rt.peers.lock().remove(&(me, peer)) {
            diagnostics::finding("birenDeviceDisablePeerAccess", &format!("access from device {me} to {peer} was not enabled"));
            return Err(ErrorCode::PeerAccessNotEnabled);
        }
        Ok(())
    })
}

/// Writes attribute `attr` of the link from `srcDevice` to `dstDevice` to *value.
/// Returns BIREN_ERROR_INVALID_VALUE if value is NULL, attr is unknown, or the two devices are
/// the same; BIREN_ERROR_INVALID_DEVICE for a device that does not exist. Thread-safe.
#[no_mangle]
pub extern "C" fn birenDeviceGetP2PAttribute(
    value: *mut c_int,
    attr: birenDeviceP2PAttr_int,
    srcDevice: c_int,
    dstDevice: c_int,
) -> birenError_t {
    ffi_call!("birenDeviceGetP2PAttribute"(value, attr, srcDevice, dstDevice) {
        let rt = runtime::get()?;
        let o = out(value)?;
        let (a, b) = (dev(rt, srcDevice)?, dev(rt, dstDevice)?);
        if a == b {
            diagnostics::finding("birenDeviceGetP2PAttribute", "srcDevice and dstDevice are the same device");
            return Err(ErrorCode::InvalidValue);
        }
        *o = match attr {
            1 => 0,
            2 | 3 => 1,
            4 => 0,
            _ => {
                diagnostics::finding("birenDeviceGetP2PAttribute", &format!("attr={attr} is not a birenDeviceP2PAttr value"));
                return Err(ErrorCode::InvalidValue);
            }
        };
        Ok(())
    })
}

#[allow(clippy::too_many_arguments)]
fn copy_peer(
    dst: *mut c_void,
    dstDevice: c_int,
    src: *const c_void,
    srcDevice: c_int,
    count: usize,
    stream: birenStream_t,
    sync: bool,
    call: &str,
) -> Result<()> {
    copy_or_fill(
        stream,
        sync,
        call,
        |rt| {
            let (dd, sd) = (dev(rt, dstDevice)?, dev(rt, srcDevice)?);
            if count == 0 {
                return Ok(None);
            }
            let check = |p: usize, d: usize, arg: &str| -> Result<()> {
                rt.device(d)?
                    .exec
                    .memory
                    .check_range(p, count)
                    .map(|_| ())
                    .inspect_err(|e| {
                        diagnostics::finding(
                            call,
                            &format!(
                                "{arg}={p:#x}: {} on device {d}",
                                if *e == ErrorCode::OutOfBounds {
                                    format!("{count} bytes run past the end of its allocation")
                                } else {
                                    "is not in a live allocation".to_string()
                                }
                            ),
                        );
                    })
            };
            check(dst as usize, dd, "dst")?;
            check(src as usize, sd, "src")?;
            Ok(Some(Work::Copy {
                dst: dst as usize,
                src: src as usize,
                len: count,
                engine: ENGINE_FROM_DEVICE,
                dir: crate::runtime::exec::copy::CopyDir::DeviceToDevice,
            }))
        },
        Some(|w: &Work| {
            if let Work::Copy { dst, src, len, .. } = *w {
                // SAFETY: both ranges were checked against their devices' allocations.
                unsafe { std::ptr::copy(src as *const u8, dst as *mut u8, len) };
            }
        }),
    )
}

/// Copies `count` bytes from device memory src on `srcDevice` to device memory dst on
/// `dstDevice` and returns when done; ordered like work on the current device's default stream.
/// Peer access need not be enabled. Returns BIREN_ERROR_INVALID_DEVICE for a device that does
/// not exist; BIREN_ERROR_INVALID_DEVICE_POINTER if a side is not in a live allocation of its
/// device; BIREN_ERROR_OUT_OF_BOUNDS if a range runs past its allocation. Count 0 succeeds.
/// Nothing is written on error. BIREN_ERROR_NOT_PERMITTED inside a kernel or a host function.
/// Thread-safe.
#[no_mangle]
pub extern "C" fn birenMemcpyPeer(
    dst: *mut c_void,
    dstDevice: c_int,
    src: *const c_void,
    srcDevice: c_int,
    count: usize,
) -> birenError_t {
    ffi_call!("birenMemcpyPeer"(dst, dstDevice, src, srcDevice, count) {
        super::current_device()?;
        copy_peer(dst, dstDevice, src, srcDevice, count, std::ptr::null_mut(), true, "birenMemcpyPeer")
    })
}

/// Enqueues birenMemcpyPeer's copy on `stream`; checked at enqueue, nothing enqueued on error.
/// BIREN_ERROR_INVALID_HANDLE for a destroyed or unknown stream. Thread-safe.
#[no_mangle]
pub extern "C" fn birenMemcpyPeerAsync(
    dst: *mut c_void,
    dstDevice: c_int,
    src: *const c_void,
    srcDevice: c_int,
    count: usize,
    stream: birenStream_t,
) -> birenError_t {
    ffi_call!("birenMemcpyPeerAsync"(dst, dstDevice, src, srcDevice, count, stream) {
        copy_peer(dst, dstDevice, src, srcDevice, count, stream, false, "birenMemcpyPeerAsync")
    })
}
