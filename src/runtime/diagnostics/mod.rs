//! Where the runtime tells its user what went wrong: validator findings, asynchronous errors and
//! advice, each one line, to stderr or to the callback set with `birenSetValidatorCallback`.

pub mod advice;
pub mod caller;
pub mod leaks;
pub mod racecheck;
pub mod trace;
pub mod validator;

use crate::runtime::lock_order::{Rank, RankedRwLock};
use std::sync::atomic::{AtomicBool, Ordering};

static VALIDATOR: AtomicBool = AtomicBool::new(false);

thread_local! {
    /// Whether the current API call has reported a finding already.
    static REPORTED: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Whether the calling thread's current call reported a finding; clears the mark.
/// `BIREN_ABORT_ON_INTERNAL_ERROR=1` at the last `birenInit`: the C boundary aborts the process
/// on an internal error (a caught panic) instead of returning `BIREN_ERROR_UNKNOWN`.
pub(crate) static ABORT_ON_INTERNAL_ERROR: std::sync::atomic::AtomicBool =
    std::sync::atomic::AtomicBool::new(false);

pub fn take_reported() -> bool {
    REPORTED.with(|c| c.replace(false))
}

type Sink = Box<dyn Fn(&str) + Send + Sync>;
static SINK: RankedRwLock<Option<Sink>> = RankedRwLock::new(Rank::DiagnosticsSink, None);

pub fn validator_on() -> bool {
    VALIDATOR.load(Ordering::Relaxed)
}

pub fn set_validator(on: bool) {
    VALIDATOR.store(on, Ordering::Relaxed);
}

/// Sends validator lines to `sink` instead of stderr (`None`: back to stderr).
pub fn set_sink(sink: Option<Sink>) {
    *SINK.write() = sink;
}

fn emit(line: &str) {
    match &*SINK.read() {
        Some(f) => f(line),
        None => {
            use std::io::Write;
            let mut e = std::io::stderr().lock();
            let _ = writeln!(e, "{line}");
        }
    }
}

/// A validator finding about call `call`: emitted only while the validator is on.
pub fn finding(call: &str, msg: &str) {
    if validator_on() {
        REPORTED.with(|c| c.set(true));
        emit(&format!("biren validator: {call}: {msg}"));
    }
}

/// A failure that happened on the device, away from any call: always reported (with the
/// schedule fuzzing seed, when fuzzing).
pub fn async_error(msg: &str) {
    // The note is copied out: the sink is not called under its lock.
    match schedule_note() {
        Some(n) => emit(&format!("biren: {msg} [{n}]")),
        None => emit(&format!("biren: {msg}")),
    }
}

static SCHEDULE_NOTE: RankedRwLock<Option<String>> = RankedRwLock::new(Rank::Leaf, None);

/// What to say about the schedule with every error and at exit (the fuzzing seed).
pub fn set_schedule_note(note: String) {
    *SCHEDULE_NOTE.write() = Some(note);
}

/// The schedule note, once set.
pub fn schedule_note() -> Option<String> {
    SCHEDULE_NOTE.read().clone()
}

/// Advice drawn from the seed's lessons (validator on only).
pub fn advice(msg: &str) {
    if validator_on() {
        emit(&format!("biren advice: {msg}"));
    }
}

/// A plain validator line (leak reports), emitted only while the validator is on.
pub fn line(msg: &str) {
    if validator_on() {
        emit(msg);
    }
}

/// A race detection finding (racecheck on): to stderr or the callback, whatever the validator.
pub fn racecheck_line(msg: &str) {
    emit(msg);
}
