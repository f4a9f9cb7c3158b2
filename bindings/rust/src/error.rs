//! Error codes and the error every fallible call returns.

use crate::sys;
use std::ffi::CStr;
use std::fmt;

/// `birenError_t` as a Rust enum: the header's values, plus [`ErrorCode::Unrecognized`] for any
/// other integer (a newer library, or a corrupted value), so no code from C is ever lost.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ErrorCode {
    /// `BIREN_SUCCESS` (0).
    Success,
    /// `BIREN_ERROR_INVALID_VALUE` (1).
    InvalidValue,
    /// `BIREN_ERROR_OUT_OF_MEMORY` (2).
    OutOfMemory,
    /// `BIREN_ERROR_NOT_INITIALIZED` (3).
    NotInitialized,
    /// `BIREN_ERROR_INVALID_DEVICE` (4).
    InvalidDevice,
    /// `BIREN_ERROR_INVALID_HANDLE` (5).
    InvalidHandle,
    /// `BIREN_ERROR_INVALID_DEVICE_POINTER` (6).
    InvalidDevicePointer,
    /// `BIREN_ERROR_OUT_OF_BOUNDS` (7).
    OutOfBounds,
    /// `BIREN_ERROR_INVALID_MEMCPY_DIRECTION` (8).
    InvalidMemcpyDirection,
    /// `BIREN_ERROR_INVALID_CONFIGURATION` (9).
    InvalidConfiguration,
    /// `BIREN_ERROR_NOT_READY` (10).
    NotReady,
    /// `BIREN_ERROR_DEADLOCK` (11).
    Deadlock,
    /// `BIREN_ERROR_LAUNCH_FAILURE` (12).
    LaunchFailure,
    /// `BIREN_ERROR_ILLEGAL_ADDRESS` (13).
    IllegalAddress,
    /// `BIREN_ERROR_NOT_PERMITTED` (14).
    NotPermitted,
    /// `BIREN_ERROR_NOT_SUPPORTED` (15).
    NotSupported,
    /// `BIREN_ERROR_UNSUPPORTED_LIMIT` (16).
    UnsupportedLimit,
    /// `BIREN_ERROR_INVALID_PITCH_VALUE` (17).
    InvalidPitchValue,
    /// `BIREN_ERROR_INVALID_SYMBOL` (18).
    InvalidSymbol,
    /// `BIREN_ERROR_HOST_MEMORY_ALREADY_REGISTERED` (19).
    HostMemoryAlreadyRegistered,
    /// `BIREN_ERROR_HOST_MEMORY_NOT_REGISTERED` (20).
    HostMemoryNotRegistered,
    /// `BIREN_ERROR_INVALID_DEVICE_FUNCTION` (21).
    InvalidDeviceFunction,
    /// `BIREN_ERROR_PEER_ACCESS_ALREADY_ENABLED` (22).
    PeerAccessAlreadyEnabled,
    /// `BIREN_ERROR_PEER_ACCESS_NOT_ENABLED` (23).
    PeerAccessNotEnabled,
    /// `BIREN_ERROR_LAUNCH_TIMEOUT` (24).
    LaunchTimeout,
    /// `BIREN_ERROR_ILLEGAL_STATE` (401).
    IllegalState,
    /// `BIREN_ERROR_OPERATING_SYSTEM` (304).
    OperatingSystem,
    /// `BIREN_ERROR_STREAM_CAPTURE_UNSUPPORTED` (900).
    StreamCaptureUnsupported,
    /// `BIREN_ERROR_STREAM_CAPTURE_INVALIDATED` (901).
    StreamCaptureInvalidated,
    /// `BIREN_ERROR_STREAM_CAPTURE_MERGE` (902).
    StreamCaptureMerge,
    /// `BIREN_ERROR_STREAM_CAPTURE_UNMATCHED` (903).
    StreamCaptureUnmatched,
    /// `BIREN_ERROR_STREAM_CAPTURE_UNJOINED` (904).
    StreamCaptureUnjoined,
    /// `BIREN_ERROR_STREAM_CAPTURE_ISOLATION` (905).
    StreamCaptureIsolation,
    /// `BIREN_ERROR_STREAM_CAPTURE_IMPLICIT` (906).
    StreamCaptureImplicit,
    /// `BIREN_ERROR_CAPTURED_EVENT` (907).
    CapturedEvent,
    /// `BIREN_ERROR_STREAM_CAPTURE_WRONG_THREAD` (908).
    StreamCaptureWrongThread,
    /// `BIREN_ERROR_GRAPH_EXEC_UPDATE_FAILURE` (910).
    GraphExecUpdateFailure,
    /// `BIREN_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE` (30).
    CooperativeLaunchTooLarge,
    /// `BIREN_ERROR_INVALID_CHANNEL_DESCRIPTOR` (31).
    InvalidChannelDescriptor,
    /// `BIREN_ERROR_ASSERT` (32): a device-side assert failed in a kernel.
    Assert,
    /// `BIREN_ERROR_UNKNOWN` (999).
    Unknown,
    /// A value the header does not list.
    Unrecognized(i32),
}

/// `(code, value, name)` for every value the header lists.
const TABLE: [(ErrorCode, i32, &str); 41] = [
    (ErrorCode::Success, 0, "BIREN_SUCCESS"),
    (ErrorCode::InvalidValue, 1, "BIREN_ERROR_INVALID_VALUE"),
    (ErrorCode::OutOfMemory, 2, "BIREN_ERROR_OUT_OF_MEMORY"),
    (ErrorCode::NotInitialized, 3, "BIREN_ERROR_NOT_INITIALIZED"),
    (ErrorCode::InvalidDevice, 4, "BIREN_ERROR_INVALID_DEVICE"),
    (ErrorCode::InvalidHandle, 5, "BIREN_ERROR_INVALID_HANDLE"),
    (
        ErrorCode::InvalidDevicePointer,
        6,
        "BIREN_ERROR_INVALID_DEVICE_POINTER",
    ),
    (ErrorCode::OutOfBounds, 7, "BIREN_ERROR_OUT_OF_BOUNDS"),
    (
        ErrorCode::InvalidMemcpyDirection,
        8,
        "BIREN_ERROR_INVALID_MEMCPY_DIRECTION",
    ),
    (
        ErrorCode::InvalidConfiguration,
        9,
        "BIREN_ERROR_INVALID_CONFIGURATION",
    ),
    (ErrorCode::NotReady, 10, "BIREN_ERROR_NOT_READY"),
    (ErrorCode::Deadlock, 11, "BIREN_ERROR_DEADLOCK"),
    (ErrorCode::LaunchFailure, 12, "BIREN_ERROR_LAUNCH_FAILURE"),
    (ErrorCode::IllegalAddress, 13, "BIREN_ERROR_ILLEGAL_ADDRESS"),
    (ErrorCode::NotPermitted, 14, "BIREN_ERROR_NOT_PERMITTED"),
    (ErrorCode::NotSupported, 15, "BIREN_ERROR_NOT_SUPPORTED"),
    (
        ErrorCode::UnsupportedLimit,
        16,
        "BIREN_ERROR_UNSUPPORTED_LIMIT",
    ),
    (
        ErrorCode::InvalidPitchValue,
        17,
        "BIREN_ERROR_INVALID_PITCH_VALUE",
    ),
    (ErrorCode::InvalidSymbol, 18, "BIREN_ERROR_INVALID_SYMBOL"),
    (
        ErrorCode::HostMemoryAlreadyRegistered,
        19,
        "BIREN_ERROR_HOST_MEMORY_ALREADY_REGISTERED",
    ),
    (
        ErrorCode::HostMemoryNotRegistered,
        20,
        "BIREN_ERROR_HOST_MEMORY_NOT_REGISTERED",
    ),
    (
        ErrorCode::InvalidDeviceFunction,
        21,
        "BIREN_ERROR_INVALID_DEVICE_FUNCTION",
    ),
    (
        ErrorCode::PeerAccessAlreadyEnabled,
        22,
        "BIREN_ERROR_PEER_ACCESS_ALREADY_ENABLED",
    ),
    (
        ErrorCode::PeerAccessNotEnabled,
        23,
        "BIREN_ERROR_PEER_ACCESS_NOT_ENABLED",
    ),
    (ErrorCode::LaunchTimeout, 24, "BIREN_ERROR_LAUNCH_TIMEOUT"),
    (ErrorCode::IllegalState, 401, "BIREN_ERROR_ILLEGAL_STATE"),
    (
        ErrorCode::OperatingSystem,
        304,
        "BIREN_ERROR_OPERATING_SYSTEM",
    ),
    (
        ErrorCode::StreamCaptureUnsupported,
        900,
        "BIREN_ERROR_STREAM_CAPTURE_UNSUPPORTED",
    ),
    (
        ErrorCode::StreamCaptureInvalidated,
        901,
        "BIREN_ERROR_STREAM_CAPTURE_INVALIDATED",
    ),
    (
        ErrorCode::StreamCaptureMerge,
        902,
        "BIREN_ERROR_STREAM_CAPTURE_MERGE",
    ),
    (
        ErrorCode::StreamCaptureUnmatched,
        903,
        "BIREN_ERROR_STREAM_CAPTURE_UNMATCHED",
    ),
    (
        ErrorCode::StreamCaptureUnjoined,
        904,
        "BIREN_ERROR_STREAM_CAPTURE_UNJOINED",
    ),
    (
        ErrorCode::StreamCaptureIsolation,
        905,
        "BIREN_ERROR_STREAM_CAPTURE_ISOLATION",
    ),
    (
        ErrorCode::StreamCaptureImplicit,
        906,
        "BIREN_ERROR_STREAM_CAPTURE_IMPLICIT",
    ),
    (ErrorCode::CapturedEvent, 907, "BIREN_ERROR_CAPTURED_EVENT"),
    (
        ErrorCode::StreamCaptureWrongThread,
        908,
        "BIREN_ERROR_STREAM_CAPTURE_WRONG_THREAD",
    ),
    (
        ErrorCode::GraphExecUpdateFailure,
        910,
        "BIREN_ERROR_GRAPH_EXEC_UPDATE_FAILURE",
    ),
    (
        ErrorCode::CooperativeLaunchTooLarge,
        30,
        "BIREN_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE",
    ),
    (
        ErrorCode::InvalidChannelDescriptor,
        31,
        "BIREN_ERROR_INVALID_CHANNEL_DESCRIPTOR",
    ),
    (ErrorCode::Assert, 32, "BIREN_ERROR_ASSERT"),
    (ErrorCode::Unknown, 999, "BIREN_ERROR_UNKNOWN"),
];

impl ErrorCode {
    /// The code for a C value; values the header does not list give `Unrecognized(value)`.
    pub fn from_raw(value: i32) -> ErrorCode {
        TABLE
            .iter()
            .find(|(_, v, _)| *v == value)
            .map_or(ErrorCode::Unrecognized(value), |(c, _, _)| *c)
    }

    /// The C value.
    pub fn raw(self) -> i32 {
        match self {
            ErrorCode::Unrecognized(v) => v,
            code => TABLE.iter().find(|(c, _, _)| *c == code).expect("listed").1,
        }
    }

    /// The header's name (`"BIREN_ERROR_OUT_OF_BOUNDS"`); `"BIREN_ERROR_UNRECOGNIZED"` for a
    /// value it does not list, as `birenGetErrorName` says.
    pub fn name(self) -> &'static str {
        TABLE
            .iter()
            .find(|(c, _, _)| *c == self)
            .map_or("BIREN_ERROR_UNRECOGNIZED", |(_, _, n)| n)
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A failed call: its code, the library's name and text for it (`birenGetErrorName`,
/// `birenGetErrorString`), the C call that failed, and for errors this crate detects itself (a
/// length mismatch, a buffer freed by a device reset) what was wrong.
///
/// ```
/// # fn main() -> Result<(), biren::BirenError> {
/// biren::init()?;
/// let mut small = biren::DeviceBuffer::<u8>::zeroed(16)?;
/// let err = small.copy_from_host(&[0u8; 32]).unwrap_err();
/// assert_eq!(err.code, biren::ErrorCode::InvalidValue);
/// assert_eq!(err.name, "BIREN_ERROR_INVALID_VALUE");
/// assert!(err.to_string().contains("32 elements into a buffer of 16"));
/// # Ok(()) }
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BirenError {
    /// The code.
    pub code: ErrorCode,
    /// `birenGetErrorName(code)`.
    pub name: &'static str,
    /// `birenGetErrorString(code)`.
    pub text: &'static str,
    /// The C function that returned the code (or the Rust method that refused the call).
    pub call: &'static str,
    /// What this crate found wrong, when it refused a call before reaching the library.
    pub detail: Option<String>,
}

/// The result of every fallible call.
pub type Result<T, E = BirenError> = std::result::Result<T, E>;

/// A static C string from the library as `&'static str` (the library is never unloaded).
fn library_str(p: *const std::ffi::c_char) -> Option<&'static str> {
    if p.is_null() {
        return None;
    }
    // SAFETY: birenGetErrorName/String return NUL-terminated static strings of the library,
    // which stays loaded for the life of the process (sys::API is never dropped).
    unsafe { CStr::from_ptr(p) }.to_str().ok()
}

impl BirenError {
    /// The error for `code` returned by `call`, named by the library.
    pub fn new(code: ErrorCode, call: &'static str) -> BirenError {
        let (name, text) = match sys::api() {
            Some(api) => {
                // SAFETY: both functions accept any value and return static strings.
                let name = library_str(unsafe { (api.birenGetErrorName)(code.raw()) });
                let text = library_str(unsafe { (api.birenGetErrorString)(code.raw()) });
                (name.unwrap_or(code.name()), text.unwrap_or(""))
            }
            None => (code.name(), "the BIREN runtime library is not loaded"),
        };
        BirenError {
            code,
            name,
            text,
            call,
            detail: None,
        }
    }

    /// The same error with a description of what was wrong.
    pub fn with_detail(mut self, detail: impl Into<String>) -> BirenError {
        self.detail = Some(detail.into());
        self
    }

    /// The error a call gets before the library is loaded.
    pub(crate) fn not_loaded(call: &'static str) -> BirenError {
        BirenError::new(ErrorCode::NotInitialized, call).with_detail("call biren::init() first")
    }
}

impl fmt::Display for BirenError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {} ({})", self.call, self.name, self.code.raw())?;
        if !self.text.is_empty() {
            write!(f, ": {}", self.text)?;
        }
        if let Some(d) = &self.detail {
            write!(f, " ({d})")?;
        }
        Ok(())
    }
}

impl std::error::Error for BirenError {}

/// `Ok(())` for `BIREN_SUCCESS`, else the error for `raw` returned by `call`.
pub(crate) fn check(call: &'static str, raw: sys::birenError_t) -> Result<()> {
    if raw == sys::BIREN_SUCCESS {
        Ok(())
    } else {
        Err(BirenError::new(ErrorCode::from_raw(raw), call))
    }
}

/// The loaded library, or `NOT_INITIALIZED` naming `call`.
pub(crate) fn api(call: &'static str) -> Result<&'static sys::Api> {
    sys::api().ok_or_else(|| BirenError::not_loaded(call))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every `BIREN_*` value of the committed header maps to the variant of the same name and
    /// back, and the enum lists no value the header lacks.
    #[test]
    fn codes_match_the_header() {
        let header = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../include/biren_runtime.h"
        ))
        .expect("include/biren_runtime.h");
        let start = header
            .find("typedef enum birenError_t {")
            .expect("the error enum");
        let body = &header[start..start + header[start..].find('}').unwrap()];
        let mut seen = 0;
        for line in body.lines().filter(|l| l.contains(" = ")) {
            let (name, value) = line.trim().trim_end_matches(',').split_once(" = ").unwrap();
            let value: i32 = value.parse().unwrap();
            let code = ErrorCode::from_raw(value);
            assert_eq!((code.name(), code.raw()), (name, value));
            seen += 1;
        }
        assert_eq!(seen, TABLE.len());
        assert_eq!(ErrorCode::from_raw(500), ErrorCode::Unrecognized(500));
        assert_eq!(ErrorCode::Unrecognized(-3).raw(), -3);
        assert_eq!(ErrorCode::from_raw(-3).name(), "BIREN_ERROR_UNRECOGNIZED");
    }

    #[test]
    fn display_names_the_call_code_and_detail() {
        let e = BirenError {
            code: ErrorCode::OutOfBounds,
            name: "BIREN_ERROR_OUT_OF_BOUNDS",
            text: "past the end",
            call: "birenMemcpy",
            detail: Some("why".into()),
        };
        assert_eq!(
            e.to_string(),
            "birenMemcpy: BIREN_ERROR_OUT_OF_BOUNDS (7): past the end (why)"
        );
    }
}
