//! The boundary every export crosses: panics become error codes, failures set the calling
//! thread's last error, and calls are logged when `BIREN_LOG` asks for it.

use super::types::birenError_t;
use crate::runtime::config::LogLevel;
use crate::runtime::diagnostics::{self, trace};
use crate::runtime::error::{self, ErrorCode, Result};
use std::cell::Cell;
use std::sync::OnceLock;

thread_local! {
    static LAST_ERROR: Cell<i32> = const { Cell::new(0) };
}

pub fn last_error() -> i32 {
    LAST_ERROR.with(|c| c.get())
}

pub fn take_last_error() -> i32 {
    LAST_ERROR.with(|c| c.replace(0))
}

static LOG: OnceLock<LogLevel> = OnceLock::new();

/// The API log level, read from `BIREN_LOG` once (calls before `birenInit` are logged too).
pub fn log_level() -> LogLevel {
    *LOG.get_or_init(
        || match std::env::var("BIREN_LOG").as_deref().map(str::trim) {
            Ok("api") => LogLevel::Api,
            Ok("errors") => LogLevel::Errors,
            _ => LogLevel::Off,
        },
    )
}

/// Codes that answer a question rather than report a failure; they leave the last error alone.
fn is_answer(code: i32) -> bool {
    code == ErrorCode::NotReady.code()
}

/// Ends a call: records the last error, logs, and converts to the C code.
#[inline]
pub fn finish(name: &str, r: Result<()>, args: impl Fn() -> String) -> birenError_t {
    let code = error::code_of(r);
    let failed = code != 0 && !is_answer(code);
    if failed {
        LAST_ERROR.with(|c| c.set(code));
    }
    if diagnostics::validator_on() {
        // Every failure gets one validator line; calls that explained it already are not repeated.
        if !diagnostics::take_reported() && failed {
            failure_finding(name, &args(), code);
        }
    }
    if failed && trace::on() {
        trace::instant(
            trace::Track::HostThread,
            trace::ERROR,
            format!("{name} -> {}", error::error_name(code)),
            String::new(),
        );
    }
    let level = log_level();
    if level != LogLevel::Off && (level == LogLevel::Api || failed) {
        log_line(name, &args(), code);
    }
    birenError_t::from_code(code)
}

#[cold]
fn failure_finding(name: &str, args: &str, code: i32) {
    diagnostics::finding(
        name,
        &format!(
            "({}) returned {}: {}",
            args.trim_end(),
            error::error_name(code),
            error::error_text(code)
        ),
    );
    diagnostics::take_reported();
}

#[cold]
fn log_line(name: &str, args: &str, code: i32) {
    use std::io::Write;
    let line = format!(
        "biren api: {name}({}) -> {}\n",
        args.trim_end(),
        error::error_name(code)
    );
    // One write call per line: lines from different threads never interleave.
    let _ = std::io::stderr().lock().write_all(line.as_bytes());
}

/// A panic inside the library: reported once on stderr, returned as `UNKNOWN`.
#[cold]
pub fn panicked(name: &str, payload: Box<dyn std::any::Any + Send>) -> ErrorCode {
    let what = payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_default();
    eprintln!("biren: internal error in {name}: {what}");
    if crate::runtime::ABORT_ON_INTERNAL_ERROR.load(std::sync::atomic::Ordering::Relaxed) {
        eprintln!("biren: BIREN_ABORT_ON_INTERNAL_ERROR=1: aborting");
        std::process::abort();
    }
    ErrorCode::Unknown
}

/// The body of an export returning `birenError_t`: `ffi_call!(name(arg, ...) { body })`, where
/// body evaluates to `Result<()>`. Catches panics, sets the last error, logs.
macro_rules! ffi_call {
    ($name:literal ( $($arg:ident),* ) $body:block) => {{
        if $crate::runtime::diagnostics::racecheck::on() {
            $crate::runtime::diagnostics::racecheck::set_call($name);
        }
        // BIREN_RECORD / BIREN_REPLAY: the call's turn, held until it returns (or waits).
        let turn = $crate::runtime::exec::replay::on() && $crate::runtime::exec::replay::enter($name);
        let r: $crate::runtime::error::Result<()> =
            match ::std::panic::catch_unwind(::std::panic::AssertUnwindSafe(|| -> $crate::runtime::error::Result<()> { $body })) {
                Ok(r) => r,
                Err(p) => Err($crate::ffi::boundary::panicked($name, p)),
            };
        let code = $crate::ffi::boundary::finish($name, r, || {
            #[allow(unused_mut)]
            let mut s = String::new();
            $( s.push_str(&format!("{}={}, ", stringify!($arg), $crate::ffi::boundary::LogArg::show(&$arg))); )*
            s.trim_end_matches(", ").to_string()
        });
        if turn {
            $crate::runtime::exec::replay::leave();
        }
        code
    }};
}

/// The body of an export that returns a value instead of a code: panics give `$fallback`.
macro_rules! ffi_value {
    ($name:literal, $fallback:expr, $body:block) => {{
        match ::std::panic::catch_unwind(::std::panic::AssertUnwindSafe(|| $body)) {
            Ok(v) => v,
            Err(p) => {
                let _ = $crate::ffi::boundary::panicked($name, p);
                $fallback
            }
        }
    }};
}

pub(crate) use {ffi_call, ffi_value};

/// How an argument is written in the API log: as a C programmer would write it.
pub trait LogArg {
    fn show(&self) -> String;
}

impl<T> LogArg for *mut T {
    fn show(&self) -> String {
        if self.is_null() {
            "NULL".into()
        } else {
            format!("{:p}", *self)
        }
    }
}

impl<T> LogArg for *const T {
    fn show(&self) -> String {
        if self.is_null() {
            "NULL".into()
        } else {
            format!("{:p}", *self)
        }
    }
}

macro_rules! log_as_display {
    ($($t:ty),*) => { $( impl LogArg for $t { fn show(&self) -> String { self.to_string() } } )* };
}
log_as_display!(i32, u32, usize, i64, u64, f32);

impl LogArg for crate::device::Dim3 {
    fn show(&self) -> String {
        format!("({},{},{})", self.x, self.y, self.z)
    }
}

/// Function pointers (kernels, callbacks): their symbol name when `dladdr` knows it.
impl<F: std::fmt::Pointer + Copy> LogArg for Option<F> {
    fn show(&self) -> String {
        match self {
            None => "NULL".into(),
            Some(f) => {
                let text = format!("{:p}", *f);
                let addr = usize::from_str_radix(text.trim_start_matches("0x"), 16).unwrap_or(0);
                crate::runtime::diagnostics::caller::symbol_or_address(addr)
            }
        }
    }
}

/// An out-parameter: `InvalidValue` when NULL.
#[inline]
pub fn out<'a, T>(p: *mut T) -> Result<&'a mut T> {
    // SAFETY: the C caller promises a non-NULL out-pointer is valid for a write.
    unsafe { p.as_mut() }.ok_or(ErrorCode::InvalidValue)
}

/// A handle's value as a registry key.
#[inline]
pub fn handle<T>(p: *mut T) -> u64 {
    p as usize as u64
}
