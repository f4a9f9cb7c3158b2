//! The C types of graphs and stream capture (CUDA's, cuda -> biren).

use super::types::{birenHostFn_t, birenKernel_t, Dim3};
use std::ffi::{c_int, c_uint, c_void};

/// Opaque graph object; only ever handled through birenGraph_t.
pub struct birenGraph_st {
    _private: [u8; 0],
}
/// A graph handle: a DAG of nodes built explicitly or by stream capture.
pub type birenGraph_t = *mut birenGraph_st;

/// Opaque graph node; only ever handled through birenGraphNode_t.
pub struct birenGraphNode_st {
    _private: [u8; 0],
}
/// A node of a graph. Valid until its graph is destroyed.
pub type birenGraphNode_t = *mut birenGraphNode_st;

/// Opaque executable graph; only ever handled through birenGraphExec_t.
pub struct birenGraphExec_st {
    _private: [u8; 0],
}
/// An executable graph (birenGraphInstantiate), launched with birenGraphLaunch.
pub type birenGraphExec_t = *mut birenGraphExec_st;

/// What a graph node does (birenGraphNodeGetType).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum birenGraphNodeType {
    birenGraphNodeTypeKernel = 0,
    birenGraphNodeTypeMemcpy = 1,
    birenGraphNodeTypeMemset = 2,
    birenGraphNodeTypeHost = 3,
    birenGraphNodeTypeGraph = 4,
    birenGraphNodeTypeEmpty = 5,
    birenGraphNodeTypeWaitEvent = 6,
    birenGraphNodeTypeEventRecord = 7,
}

/// A kernel node: `func` launched as `gridDim` blocks of `blockDim` threads with
/// `sharedMemBytes` of shared memory and the arguments `kernelParams` (CUDA's array of pointers
/// to the values), or the same arguments packed in one buffer through `extra` (CUDA's driver
/// form with BIREN_LAUNCH_PARAM_*).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct birenKernelNodeParams {
    /// The kernel.
    pub func: birenKernel_t,
    /// Grid dimensions.
    pub gridDim: Dim3,
    /// Block dimensions.
    pub blockDim: Dim3,
    /// Dynamic shared memory per block in bytes.
    pub sharedMemBytes: c_uint,
    /// Pointers to the argument values, as for birenLaunchKernel; or NULL, with `extra`.
    pub kernelParams: *mut *mut c_void,
    /// NULL, or the arguments packed in one buffer in CUDA's driver form: a list of key/value
    /// pairs ended by BIREN_LAUNCH_PARAM_END — BIREN_LAUNCH_PARAM_BUFFER_POINTER followed by the
    /// buffer, BIREN_LAUNCH_PARAM_BUFFER_SIZE followed by a pointer to a size_t holding its size
    /// (a buffer pointer without a size has no effect, as in CUDA). Each argument lies in the
    /// buffer at the next offset that is a multiple of its alignment, taken as the largest power
    /// of two (at most 16) dividing its size — the layout of a C struct of the arguments for
    /// scalars, pointers, vector types and structs whose alignment is that. The size must be
    /// the end of the last argument or that rounded up to the largest alignment (sizeof such a
    /// struct). Needs a kernel whose argument sizes are known (birenKernelRegister or
    /// BIREN_KERNEL); the values are copied when the node is made or its parameters set.
    pub extra: *mut *mut c_void,
}

/// A memset node: `height` rows of `width` elements of `elementSize` bytes (1, 2 or 4) set to
/// `value` (its low elementSize bytes), rows `pitch` bytes apart, from `dst`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct birenMemsetParams {
    /// Start of the memory to fill.
    pub dst: *mut c_void,
    /// Bytes from one row to the next.
    pub pitch: usize,
    /// The value to write.
    pub value: c_uint,
    /// Bytes per element: 1, 2 or 4.
    pub elementSize: c_uint,
    /// Elements per row.
    pub width: usize,
    /// Rows.
    pub height: usize,
}

/// A host node: `fn(userData)` run on a runtime thread.
/// cbindgen:field-names=[fn, userData]
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct birenHostNodeParams {
    /// The host function.
    pub fn_: birenHostFn_t,
    /// Its argument.
    pub userData: *mut c_void,
}

/// How a capture restricts potentially unsafe calls (birenStreamBeginCapture,
/// birenThreadExchangeStreamCaptureMode).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum birenStreamCaptureMode {
    birenStreamCaptureModeGlobal = 0,
    birenStreamCaptureModeThreadLocal = 1,
    birenStreamCaptureModeRelaxed = 2,
}

/// A capture mode received from C: read as an integer and checked.
pub type birenStreamCaptureMode_int = c_int;

/// Whether a stream is capturing (birenStreamIsCapturing, birenStreamGetCaptureInfo).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum birenStreamCaptureStatus {
    birenStreamCaptureStatusNone = 0,
    birenStreamCaptureStatusActive = 1,
    /// The capture failed; birenStreamEndCapture will return STREAM_CAPTURE_INVALIDATED.
    birenStreamCaptureStatusInvalidated = 2,
}

/// Why birenGraphExecUpdate did or did not update (CUDA's values).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum birenGraphExecUpdateResult {
    birenGraphExecUpdateSuccess = 0,
    birenGraphExecUpdateError = 1,
    birenGraphExecUpdateErrorTopologyChanged = 2,
    birenGraphExecUpdateErrorNodeTypeChanged = 3,
    birenGraphExecUpdateErrorFunctionChanged = 4,
    birenGraphExecUpdateErrorParametersChanged = 5,
    birenGraphExecUpdateErrorNotSupported = 6,
    birenGraphExecUpdateErrorUnsupportedFunctionChange = 7,
    birenGraphExecUpdateErrorAttributesChanged = 8,
}

/// What birenGraphExecUpdate reports: the result, and the node of the new graph that caused a
/// failure (NULL if none); errorFromNode is always NULL here.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct birenGraphExecUpdateResultInfo {
    /// A birenGraphExecUpdateResult value.
    pub result: birenGraphExecUpdateResult,
    /// The node of the new graph that caused the failure, if any.
    pub errorNode: birenGraphNode_t,
    /// The node of the original graph that caused it, if any.
    pub errorFromNode: birenGraphNode_t,
}

/// birenGraphInstantiateWithFlags: accepted for compatibility (no memory-allocation nodes exist,
/// so there is nothing to free at launch).
pub const birenGraphInstantiateFlagAutoFreeOnLaunch: u64 = 1;
/// birenGraphInstantiateWithFlags: the graph is prepared for launch at instantiation (always so).
pub const birenGraphInstantiateFlagUpload: u64 = 2;
/// birenGraphDebugDotPrint: also print each node's parameters.
pub const birenGraphDebugDotFlagsVerbose: c_uint = 1;
