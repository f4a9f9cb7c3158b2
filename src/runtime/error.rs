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
    LaunchTimeout = 16,
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
        "BIREN_ERROR_LAUNCH_TIMEOUT",
        "a kernel ran longer than BIREN_KERNEL_TIMEOUT_MS and was stopped by the watchdog",
    ),
    (
        999,
        "BIREN_ERROR_UNKNOWN",
        "an unknown internal error occurred",
    ),
];

impl ErrorCode {
    /// Every error code, in table order.
    pub const ALL: [ErrorCode; 17] = [
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
        ErrorCode::LaunchTimeout,
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
        assert_eq!(ErrorCode::from_code(16), Some(ErrorCode::LaunchTimeout));
    }
}
