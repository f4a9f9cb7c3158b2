//! Copies as plain values: the `birenMemcpyKind` directions, the copy engines' ids, and a checked
//! copy's plan (the checks themselves need the runtime: `runtime/copies.rs`).

/// The copy engines of a device: host to device, and device to host (also device to device).
pub(crate) const ENGINE_TO_DEVICE: usize = 0;
pub(crate) const ENGINE_FROM_DEVICE: usize = 1;

/// `birenMemcpyKind` values.
pub(crate) const HOST_TO_HOST: i64 = 0;
pub(crate) const HOST_TO_DEVICE: i64 = 1;
pub(crate) const DEVICE_TO_HOST: i64 = 2;
pub(crate) const DEVICE_TO_DEVICE: i64 = 3;
pub(crate) const DEFAULT: i64 = 4;

/// Which memories a copy goes between (shown in the trace).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CopyDir {
    HostToHost,
    HostToDevice,
    DeviceToHost,
    DeviceToDevice,
}

impl CopyDir {
    pub fn short_name(self) -> &'static str {
        match self {
            CopyDir::HostToHost => "HtoH",
            CopyDir::HostToDevice => "HtoD",
            CopyDir::DeviceToHost => "DtoH",
            CopyDir::DeviceToDevice => "DtoD",
        }
    }
}

/// A validated copy.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CopyPlan {
    pub dst: usize,
    pub src: usize,
    pub len: usize,
    pub engine: usize,
    pub dst_device: bool,
    pub src_device: bool,
}

impl CopyPlan {
    pub fn dir(&self) -> CopyDir {
        match (self.src_device, self.dst_device) {
            (false, false) => CopyDir::HostToHost,
            (false, true) => CopyDir::HostToDevice,
            (true, false) => CopyDir::DeviceToHost,
            (true, true) => CopyDir::DeviceToDevice,
        }
    }
}
