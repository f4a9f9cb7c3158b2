//! The runtime's error codes: one table gives each its stable value, its name and its text.

/// An error the runtime reports. Values are part of the C ABI: never renumber, never reuse.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ErrorCode {
    InvalidValue = 1,
    OutOfMemory = 2,
    NotInitialized = 3,
    InvalidDevice = 4,
    InvalidHandle = 5,
    InvalidDevicePointer = 6,
    OutOfBounds = 7,
    InvalidMemcpyDirection = 8,
    InvalidConfiguration = 9,
    NotReady = 10,
    Deadlock = 11,
    LaunchFailure = 12,
    IllegalAddress = 13,
    NotPermitted = 14,
    NotSupported = 15,
    UnsupportedLimit = 16,
    InvalidPitchValue = 17,
    InvalidSymbol = 18,
    HostMemoryAlreadyRegistered = 19,
    HostMemoryNotRegistered = 20,
    InvalidDeviceFunction = 21,
    PeerAccessAlreadyEnabled = 22,
    PeerAccessNotEnabled = 23,
    LaunchTimeout = 24,
    IllegalState = 401,
    OperatingSystem = 304,
    StreamCaptureUnsupported = 900,
    StreamCaptureInvalidated = 901,
    StreamCaptureMerge = 902,
    StreamCaptureUnmatched = 903,
    StreamCaptureUnjoined = 904,
    StreamCaptureIsolation = 905,
    StreamCaptureImplicit = 906,
    CapturedEvent = 907,
    StreamCaptureWrongThread = 908,
    GraphExecUpdateFailure = 910,
    CooperativeLaunchTooLarge = 30,
    InvalidChannelDescriptor = 31,
    Assert = 32,
    Unknown = 999,
}

/// The result type of every core operation.
pub type Result<T> = std::result::Result<T, ErrorCode>;

/// (code, name, text) for every value, success included.
pub(crate) const ERROR_TABLE: &[(i32, &str, &str)] = &[
    (0, "BIREN_SUCCESS", "no error"),
    (
        1,
        "BIREN_ERROR_INVALID_VALUE",
        "an argument is NULL, out of range or otherwise invalid",
    ),
    (
        2,
        "BIREN_ERROR_OUT_OF_MEMORY",
        "the device (or host) memory is exhausted",
    ),
    (
        3,
        "BIREN_ERROR_NOT_INITIALIZED",
        "the runtime is not initialized: call birenInit() first",
    ),
    (4, "BIREN_ERROR_INVALID_DEVICE", "no such device"),
    (
        5,
        "BIREN_ERROR_INVALID_HANDLE",
        "the stream or event handle is invalid or was destroyed",
    ),
    (
        6,
        "BIREN_ERROR_INVALID_DEVICE_POINTER",
        "the pointer is not in any live device allocation",
    ),
    (
        7,
        "BIREN_ERROR_OUT_OF_BOUNDS",
        "the range runs past the end of its device allocation",
    ),
    (
        8,
        "BIREN_ERROR_INVALID_MEMCPY_DIRECTION",
        "unknown birenMemcpyKind value",
    ),
    (
        9,
        "BIREN_ERROR_INVALID_CONFIGURATION",
        "invalid launch configuration (grid, block or shared memory)",
    ),
    (
        10,
        "BIREN_ERROR_NOT_READY",
        "the work has not completed yet",
    ),
    (
        11,
        "BIREN_ERROR_DEADLOCK",
        "the wait can never be satisfied: cyclic or unsatisfiable dependency",
    ),
    (
        12,
        "BIREN_ERROR_LAUNCH_FAILURE",
        "a kernel launch failed (trap or divergent barrier)",
    ),
    (
        13,
        "BIREN_ERROR_ILLEGAL_ADDRESS",
        "a kernel accessed an illegal address (outside its allocations, or a NULL or wild pointer)",
    ),
    (
        14,
        "BIREN_ERROR_NOT_PERMITTED",
        "the operation is not permitted in this context",
    ),
    (
        15,
        "BIREN_ERROR_NOT_SUPPORTED",
        "the operation is not supported",
    ),
    (
        16,
        "BIREN_ERROR_UNSUPPORTED_LIMIT",
        "the limit is not supported by the device",
    ),
    (
        17,
        "BIREN_ERROR_INVALID_PITCH_VALUE",
        "a pitch, width or height of a 2D/3D copy or fill is invalid",
    ),
    (
        18,
        "BIREN_ERROR_INVALID_SYMBOL",
        "the symbol is not a declared device symbol",
    ),
    (
        19,
        "BIREN_ERROR_HOST_MEMORY_ALREADY_REGISTERED",
        "part of the host range is already registered",
    ),
    (
        20,
        "BIREN_ERROR_HOST_MEMORY_NOT_REGISTERED",
        "the host pointer is not the start of a registered range",
    ),
    (
        21,
        "BIREN_ERROR_INVALID_DEVICE_FUNCTION",
        "the kernel function is NULL or invalid",
    ),
    (
        22,
        "BIREN_ERROR_PEER_ACCESS_ALREADY_ENABLED",
        "peer access to that device is enabled already",
    ),
    (
        23,
        "BIREN_ERROR_PEER_ACCESS_NOT_ENABLED",
        "peer access to that device is not enabled",
    ),
    (
        24,
        "BIREN_ERROR_LAUNCH_TIMEOUT",
        "a kernel ran longer than BIREN_KERNEL_TIMEOUT_MS and was stopped by the watchdog",
    ),
    (
        401,
        "BIREN_ERROR_ILLEGAL_STATE",
        "the resource is not in a valid state for this operation",
    ),
    (
        304,
        "BIREN_ERROR_OPERATING_SYSTEM",
        "an operating system call failed (e.g. a file could not be written)",
    ),
    (
        900,
        "BIREN_ERROR_STREAM_CAPTURE_UNSUPPORTED",
        "the operation is not permitted while a stream is capturing",
    ),
    (
        901,
        "BIREN_ERROR_STREAM_CAPTURE_INVALIDATED",
        "the current capture sequence was invalidated by an earlier error",
    ),
    (
        902,
        "BIREN_ERROR_STREAM_CAPTURE_MERGE",
        "the operation would merge two independent capture sequences",
    ),
    (
        903,
        "BIREN_ERROR_STREAM_CAPTURE_UNMATCHED",
        "the capture was not initiated in this stream",
    ),
    (
        904,
        "BIREN_ERROR_STREAM_CAPTURE_UNJOINED",
        "the capture sequence contains a fork that was not joined to the primary stream",
    ),
    (
        905,
        "BIREN_ERROR_STREAM_CAPTURE_ISOLATION",
        "a dependency would cross the capture sequence boundary",
    ),
    (
        906,
        "BIREN_ERROR_STREAM_CAPTURE_IMPLICIT",
        "the operation would create an implicit dependency on the default stream, which a capturing stream forbids",
    ),
    (
        907,
        "BIREN_ERROR_CAPTURED_EVENT",
        "the operation is not permitted on an event last recorded in a capturing stream",
    ),
    (
        908,
        "BIREN_ERROR_STREAM_CAPTURE_WRONG_THREAD",
        "a thread-local or global capture was ended from another thread",
    ),
    (
        910,
        "BIREN_ERROR_GRAPH_EXEC_UPDATE_FAILURE",
        "the graph update was not performed: it changes the executable graph in a way update does not allow",
    ),
    (
        30,
        "BIREN_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE",
        "the cooperative launch's grid does not fit on the device at once",
    ),
    (
        31,
        "BIREN_ERROR_INVALID_CHANNEL_DESCRIPTOR",
        "the channel format descriptor is invalid (channels 1, 2 or 4 of 8, 16 or 32 bits, the same size)",
    ),
    (
        32,
        "BIREN_ERROR_ASSERT",
        "a device-side assert() failed in a kernel (CUDA's cudaErrorAssert)",
    ),
    (
        999,
        "BIREN_ERROR_UNKNOWN",
        "an unknown internal error occurred",
    ),
];

impl ErrorCode {
    /// Every error code, in table order.
    pub const ALL: [ErrorCode; 40] = [
        ErrorCode::InvalidValue,
        ErrorCode::OutOfMemory,
        ErrorCode::NotInitialized,
        ErrorCode::InvalidDevice,
        ErrorCode::InvalidHandle,
        ErrorCode::InvalidDevicePointer,
        ErrorCode::OutOfBounds,
        ErrorCode::InvalidMemcpyDirection,
        ErrorCode::InvalidConfiguration,
        ErrorCode::NotReady,
        ErrorCode::Deadlock,
        ErrorCode::LaunchFailure,
        ErrorCode::IllegalAddress,
        ErrorCode::NotPermitted,
        ErrorCode::NotSupported,
        ErrorCode::UnsupportedLimit,
        ErrorCode::InvalidPitchValue,
        ErrorCode::InvalidSymbol,
        ErrorCode::HostMemoryAlreadyRegistered,
        ErrorCode::HostMemoryNotRegistered,
        ErrorCode::InvalidDeviceFunction,
        ErrorCode::PeerAccessAlreadyEnabled,
        ErrorCode::PeerAccessNotEnabled,
        ErrorCode::LaunchTimeout,
        ErrorCode::IllegalState,
        ErrorCode::OperatingSystem,
        ErrorCode::StreamCaptureUnsupported,
        ErrorCode::StreamCaptureInvalidated,
        ErrorCode::StreamCaptureMerge,
        ErrorCode::StreamCaptureUnmatched,
        ErrorCode::StreamCaptureUnjoined,
        ErrorCode::StreamCaptureIsolation,
        ErrorCode::StreamCaptureImplicit,
        ErrorCode::CapturedEvent,
        ErrorCode::StreamCaptureWrongThread,
        ErrorCode::GraphExecUpdateFailure,
        ErrorCode::CooperativeLaunchTooLarge,
        ErrorCode::InvalidChannelDescriptor,
        ErrorCode::Assert,
        ErrorCode::Unknown,
    ];

    pub fn code(self) -> i32 {
        self as i32
    }

    pub fn from_code(code: i32) -> Option<ErrorCode> {
        Self::ALL.iter().copied().find(|e| e.code() == code)
    }

    pub fn name(self) -> &'static str {
        error_name(self.code())
    }
}

fn entry(code: i32) -> Option<&'static (i32, &'static str, &'static str)> {
    ERROR_TABLE.iter().find(|e| e.0 == code)
}

/// The name of a code (`BIREN_ERROR_...`), or a fixed text for unknown values.
pub fn error_name(code: i32) -> &'static str {
    entry(code).map_or("BIREN_ERROR_UNRECOGNIZED", |e| e.1)
}

/// The text of a code, or a fixed text for unknown values.
pub fn error_text(code: i32) -> &'static str {
    entry(code).map_or("unrecognized error code", |e| e.2)
}

/// Packs a Result into a C code: 0 on success.
pub fn code_of(r: Result<()>) -> i32 {
    match r {
        Ok(()) => 0,
        Err(e) => e.code(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_code_has_one_table_entry() {
        for e in ErrorCode::ALL {
            let n = ERROR_TABLE.iter().filter(|t| t.0 == e.code()).count();
            assert_eq!(n, 1, "{e:?}");
            assert_eq!(ErrorCode::from_code(e.code()), Some(e));
        }
        assert_eq!(ERROR_TABLE.len(), ErrorCode::ALL.len() + 1);
    }

    #[test]
    fn values_are_stable() {
        assert_eq!(ErrorCode::InvalidValue.code(), 1);
        assert_eq!(ErrorCode::Deadlock.code(), 11);
        assert_eq!(ErrorCode::NotSupported.code(), 15);
        assert_eq!(ErrorCode::Unknown.code(), 999);
    }

    #[test]
    fn unknown_values_have_names_and_texts() {
        assert_eq!(error_name(12345), "BIREN_ERROR_UNRECOGNIZED");
        assert_eq!(error_text(-1), "unrecognized error code");
        assert_eq!(error_name(0), "BIREN_SUCCESS");
        assert!(ErrorCode::from_code(500).is_none());
        assert_eq!(ErrorCode::from_code(24), Some(ErrorCode::LaunchTimeout));
    }
}
