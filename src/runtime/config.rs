//! Configuration read from the environment at `birenInit`.

use crate::runtime::error::{ErrorCode, Result};
use crate::runtime::exec::scheduler::Policy;

#[derive(Clone, Debug)]
pub struct Config {
    pub device_count: usize,
    pub compute_units: usize,
    pub device_memory: u64,
    pub policy: Policy,
    pub validator: bool,
    pub deadlock_timeout_ms: u64,
    /// Kernel watchdog: a launch running longer fails with LAUNCH_TIMEOUT (0: off).
    pub kernel_timeout_ms: u64,
    pub trace_path: Option<String>,
    pub log: LogLevel,
    /// Race detection (`BIREN_RACECHECK=1`).
    pub racecheck: bool,
    /// Order of ready work (`BIREN_SCHEDULE`).
    pub schedule: Schedule,
    /// Abort the process on an internal error (a panic caught at the C boundary) instead of
    /// returning `BIREN_ERROR_UNKNOWN` (`BIREN_ABORT_ON_INTERNAL_ERROR=1`): for test suites.
    pub abort_on_internal_error: bool,
}

/// Record and replay (`BIREN_RECORD`, `BIREN_REPLAY`, `BIREN_REPLAY_TIMEOUT_MS`): read with the
/// same rules as `Config`, but kept apart from it (only `birenInit` needs them).
#[derive(Clone, Debug, Default)]
pub struct ReplayConfig {
    /// Record API calls and scheduling decisions to this file.
    pub record: Option<String>,
    /// Replay a recording.
    pub replay: Option<String>,
    /// How long a replay waits for a recorded turn before it runs free.
    pub timeout_ms: u64,
}

impl ReplayConfig {
    pub fn from_lookup(
        get: impl Fn(&str) -> Option<String>,
    ) -> std::result::Result<ReplayConfig, ConfigError> {
        let get = |k: &str| get(k).filter(|v| !v.is_empty());
        let mut c = ReplayConfig {
            record: get("BIREN_RECORD"),
            replay: get("BIREN_REPLAY"),
            timeout_ms: 10_000,
        };
        if let (Some(_), Some(v)) = (&c.record, &c.replay) {
            return Err(ConfigError {
                var: "BIREN_REPLAY",
                value: v.clone(),
                expected: "no BIREN_RECORD at the same time (record one run, replay another)",
            });
        }
        if let Some(v) = get("BIREN_REPLAY_TIMEOUT_MS") {
            c.timeout_ms = parse_uint(
                "BIREN_REPLAY_TIMEOUT_MS",
                &v,
                1,
                MAX_TIMEOUT_MS,
                "a whole number of milliseconds from 1 to 86400000",
            )?;
        }
        Ok(c)
    }
}

/// `ReplayConfig` from the environment; a malformed value as `load`.
pub fn load_replay() -> Result<ReplayConfig> {
    ReplayConfig::from_lookup(|k| std::env::var(k).ok()).map_err(|e| {
        eprintln!("{e}");
        ErrorCode::InvalidValue
    })
}

/// `BIREN_SCHEDULE`: how ready operations are ordered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Schedule {
    /// As soon as they are ready (the default).
    Normal,
    /// Random short delays before operations start, drawn from the seed (`fuzz[:SEED]`).
    Fuzz(u64),
    /// One operation at a time in the whole runtime, all devices together (`serial`).
    Serial,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LogLevel {
    Off,
    Errors,
    Api,
}

pub(crate) const DEFAULT_DEVICE_MEMORY: u64 = 8 << 30;
pub(crate) const MAX_DEVICES: usize = 16;
pub(crate) const MAX_COMPUTE_UNITS: usize = 256;

/// A malformed variable: its name, its value and what was expected.
#[derive(Debug, PartialEq, Eq)]
pub struct ConfigError {
    pub var: &'static str,
    pub value: String,
    pub expected: &'static str,
}

/// A 0/1 variable's value.
fn flag(var: &'static str, v: String) -> std::result::Result<bool, ConfigError> {
    match v.as_str() {
        "0" => Ok(false),
        "1" => Ok(true),
        _ => Err(ConfigError {
            var,
            value: v,
            expected: "0 or 1",
        }),
    }
}

impl std::fmt::Display for ConfigError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "biren: invalid {}={:?}: expected {}",
            self.var, self.value, self.expected
        )
    }
}

/// The largest `BIREN_DEVICE_MEMORY`: each device reserves address space for its memory up
/// front, so that what `birenMemGetInfo` reports free can really be allocated.
pub(crate) const MAX_DEVICE_MEMORY: u64 = 1 << 40;
/// The largest timeout in milliseconds (a day).
pub(crate) const MAX_TIMEOUT_MS: u64 = 24 * 3600 * 1000;

/// A whole number written with ASCII digits only (no sign, no spaces), in `min..=max`.
fn parse_uint(
    var: &'static str,
    v: &str,
    min: u64,
    max: u64,
    expected: &'static str,
) -> std::result::Result<u64, ConfigError> {
    let err = || ConfigError {
        var,
        value: v.to_string(),
        expected,
    };
    if v.is_empty() || !v.bytes().all(|b| b.is_ascii_digit()) {
        return Err(err());
    }
    let n: u64 = v.parse().map_err(|_| err())?;
    if n < min || n > max {
        return Err(err());
    }
    Ok(n)
}

/// Parses `BIREN_DEVICE_MEMORY`-style sizes: digits with an optional K, M or G suffix (either
/// case), nothing else; at least one byte.
pub fn parse_bytes(v: &str) -> Option<u64> {
    let (digits, shift) = match v.chars().last()? {
        'k' | 'K' => (&v[..v.len() - 1], 10),
        'm' | 'M' => (&v[..v.len() - 1], 20),
        'g' | 'G' => (&v[..v.len() - 1], 30),
        _ => (v, 0),
    };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let n: u64 = digits.parse().ok()?;
    let bytes = n.checked_mul(1u64 << shift)?;
    (bytes > 0).then_some(bytes)
}

/// `fuzz` (a seed drawn from the clock), `fuzz:SEED` or `serial`.
fn parse_schedule(v: &str) -> Option<Schedule> {
    match v {
        "serial" => Some(Schedule::Serial),
        "fuzz" => {
            let t = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(1, |d| d.as_nanos() as u64);
            Some(Schedule::Fuzz(t ^ (std::process::id() as u64) << 32))
        }
        _ => {
            let seed = v.strip_prefix("fuzz:")?;
            parse_uint("BIREN_SCHEDULE", seed, 0, u64::MAX, "")
                .ok()
                .map(Schedule::Fuzz)
        }
    }
}

impl Config {
    /// Reads the configuration through `get` (the environment in production, a map in tests).
    ///
    /// One rule for every variable: the value is taken exactly as written (no surrounding
    /// spaces, no sign), and an empty value counts as unset.
    pub fn from_lookup(
        get: impl Fn(&str) -> Option<String>,
    ) -> std::result::Result<Config, ConfigError> {
        let get = |k: &str| get(k).filter(|v| !v.is_empty());
        let host_cpus = std::thread::available_parallelism().map_or(2, |n| n.get());
        let mut c = Config {
            device_count: 1,
            compute_units: host_cpus.min(MAX_COMPUTE_UNITS),
            device_memory: DEFAULT_DEVICE_MEMORY,
            policy: Policy::Preemptive,
            validator: false,
            deadlock_timeout_ms: 200,
            kernel_timeout_ms: 0,
            trace_path: None,
            log: LogLevel::Off,
            racecheck: false,
            abort_on_internal_error: false,
            schedule: Schedule::Normal,
        };
        if let Some(v) = get("BIREN_DEVICE_COUNT") {
            c.device_count = parse_uint(
                "BIREN_DEVICE_COUNT",
                &v,
                1,
                MAX_DEVICES as u64,
                "a whole number from 1 to 16",
            )? as usize;
        }
        if let Some(v) = get("BIREN_COMPUTE_UNITS") {
            c.compute_units = parse_uint(
                "BIREN_COMPUTE_UNITS",
                &v,
                1,
                MAX_COMPUTE_UNITS as u64,
                "a whole number from 1 to 256",
            )? as usize;
        }
        if let Some(v) = get("BIREN_DEVICE_MEMORY") {
            c.device_memory =
                parse_bytes(&v)
                    .filter(|&b| b <= MAX_DEVICE_MEMORY)
                    .ok_or(ConfigError {
                        var: "BIREN_DEVICE_MEMORY",
                        value: v.clone(),
                        expected: "a byte count from 1 to 1024G, with an optional K, M or G suffix",
                    })?;
        }
        if let Some(v) = get("BIREN_SCHEDULING") {
            c.policy = match v.as_str() {
                "preemptive" => Policy::Preemptive,
                "cooperative" => Policy::Cooperative,
                _ => {
                    return Err(ConfigError {
                        var: "BIREN_SCHEDULING",
                        value: v,
                        expected: "preemptive or cooperative",
                    })
                }
            };
        }
        if let Some(v) = get("BIREN_VALIDATOR") {
            c.validator = flag("BIREN_VALIDATOR", v)?;
        }
        if let Some(v) = get("BIREN_RACECHECK") {
            c.racecheck = flag("BIREN_RACECHECK", v)?;
        }
        if let Some(v) = get("BIREN_ABORT_ON_INTERNAL_ERROR") {
            c.abort_on_internal_error = flag("BIREN_ABORT_ON_INTERNAL_ERROR", v)?;
        }
        if let Some(v) = get("BIREN_SCHEDULE") {
            c.schedule = parse_schedule(&v).ok_or(ConfigError {
                var: "BIREN_SCHEDULE",
                value: v.clone(),
                expected: "fuzz, fuzz:SEED (a whole number below 2^64) or serial",
            })?;
        }
        if let Some(v) = get("BIREN_DEADLOCK_TIMEOUT_MS") {
            c.deadlock_timeout_ms = parse_uint(
                "BIREN_DEADLOCK_TIMEOUT_MS",
                &v,
                0,
                MAX_TIMEOUT_MS,
                "a whole number of milliseconds from 0 (at once) to 86400000",
            )?;
        }
        if let Some(v) = get("BIREN_KERNEL_TIMEOUT_MS") {
            c.kernel_timeout_ms = parse_uint(
                "BIREN_KERNEL_TIMEOUT_MS",
                &v,
                0,
                MAX_TIMEOUT_MS,
                "a whole number of milliseconds from 0 (no watchdog) to 86400000",
            )?;
        }
        if let Some(v) = get("BIREN_TRACE") {
            c.trace_path = Some(v);
        }
        if let Some(v) = get("BIREN_LOG") {
            c.log = match v.as_str() {
                "off" | "0" => LogLevel::Off,
                "errors" => LogLevel::Errors,
                "api" => LogLevel::Api,
                _ => {
                    return Err(ConfigError {
                        var: "BIREN_LOG",
                        value: v,
                        expected: "api, errors or off",
                    })
                }
            };
        }
        Ok(c)
    }

    pub fn from_env() -> std::result::Result<Config, ConfigError> {
        Self::from_lookup(|k| std::env::var(k).ok())
    }
}

impl From<ConfigError> for ErrorCode {
    fn from(_: ConfigError) -> Self {
        ErrorCode::InvalidValue
    }
}

/// Convenience for callers that only need the code.
pub fn load() -> Result<Config> {
    Config::from_env().map_err(|e| {
        eprintln!("{e}");
        ErrorCode::InvalidValue
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn cfg(pairs: &[(&str, &str)]) -> std::result::Result<Config, ConfigError> {
        let m: HashMap<String, String> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        Config::from_lookup(|k| m.get(k).cloned())
    }

    #[test]
    fn defaults() {
        let c = cfg(&[]).unwrap();
        assert_eq!(c.device_count, 1);
        assert!(c.compute_units >= 1);
        assert_eq!(c.policy, Policy::Preemptive);
        assert_eq!(c.deadlock_timeout_ms, 200);
    }

    #[test]
    fn byte_suffixes() {
        assert_eq!(parse_bytes("4K"), Some(4096));
        assert_eq!(parse_bytes("3m"), Some(3 << 20));
        assert_eq!(parse_bytes("2G"), Some(2 << 30));
        assert_eq!(parse_bytes("100"), Some(100));
        assert_eq!(parse_bytes("0"), None);
        assert_eq!(parse_bytes("12X"), None);
        assert_eq!(parse_bytes(""), None);
        assert_eq!(parse_bytes("99999999999999999999G"), None);
    }

    #[test]
    fn malformed_values_name_the_variable() {
        let e = cfg(&[("BIREN_COMPUTE_UNITS", "lots")]).unwrap_err();
        assert_eq!(e.var, "BIREN_COMPUTE_UNITS");
        assert!(e.to_string().contains("BIREN_COMPUTE_UNITS=\"lots\""));
        assert_eq!(
            cfg(&[("BIREN_SCHEDULING", "fifo")]).unwrap_err().var,
            "BIREN_SCHEDULING"
        );
        assert_eq!(
            cfg(&[("BIREN_DEVICE_COUNT", "0")]).unwrap_err().var,
            "BIREN_DEVICE_COUNT"
        );
        assert_eq!(
            cfg(&[("BIREN_VALIDATOR", "yes")]).unwrap_err().var,
            "BIREN_VALIDATOR"
        );
        assert_eq!(
            cfg(&[("BIREN_DEVICE_MEMORY", "1Q")]).unwrap_err().var,
            "BIREN_DEVICE_MEMORY"
        );
    }

    #[test]
    fn one_rule_for_every_variable() {
        for bad in [" 2", "+2", "2 ", "-1", "0x2", "2.0"] {
            assert_eq!(
                cfg(&[("BIREN_DEVICE_COUNT", bad)]).unwrap_err().var,
                "BIREN_DEVICE_COUNT",
                "{bad:?}"
            );
            assert!(
                cfg(&[("BIREN_DEADLOCK_TIMEOUT_MS", bad)]).is_err(),
                "{bad:?}"
            );
        }
        assert!(cfg(&[("BIREN_VALIDATOR", " 1")]).is_err());
        assert!(cfg(&[("BIREN_ABORT_ON_INTERNAL_ERROR", "yes")]).is_err());
        assert!(
            cfg(&[("BIREN_ABORT_ON_INTERNAL_ERROR", "1")])
                .unwrap()
                .abort_on_internal_error
        );
        assert!(cfg(&[("BIREN_SCHEDULING", "cooperative ")]).is_err());
        assert!(cfg(&[("BIREN_DEVICE_MEMORY", " 64M")]).is_err());
        // Empty counts as unset, for every variable.
        for var in [
            "BIREN_DEVICE_COUNT",
            "BIREN_COMPUTE_UNITS",
            "BIREN_DEVICE_MEMORY",
            "BIREN_SCHEDULING",
            "BIREN_VALIDATOR",
            "BIREN_DEADLOCK_TIMEOUT_MS",
            "BIREN_KERNEL_TIMEOUT_MS",
            "BIREN_TRACE",
            "BIREN_LOG",
            "BIREN_RACECHECK",
            "BIREN_SCHEDULE",
            "BIREN_ABORT_ON_INTERNAL_ERROR",
        ] {
            let c = cfg(&[(var, "")]).unwrap();
            assert!(!c.abort_on_internal_error);
            assert_eq!(c.device_count, 1);
            assert!(!c.validator);
            assert!(c.trace_path.is_none());
            assert!(!c.racecheck);
            assert_eq!(c.schedule, Schedule::Normal);
        }
    }

    #[test]
    fn record_and_replay() {
        let rc = |pairs: &[(&str, &str)]| {
            let m: HashMap<String, String> = pairs
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect();
            ReplayConfig::from_lookup(|k| m.get(k).cloned())
        };
        let c = rc(&[("BIREN_RECORD", "run.txt")]).unwrap();
        assert_eq!(c.record.as_deref(), Some("run.txt"));
        assert_eq!(c.timeout_ms, 10_000);
        let c = rc(&[
            ("BIREN_REPLAY", "run.txt"),
            ("BIREN_REPLAY_TIMEOUT_MS", "500"),
        ])
        .unwrap();
        assert_eq!(c.replay.as_deref(), Some("run.txt"));
        assert_eq!(c.timeout_ms, 500);
        let both = rc(&[("BIREN_RECORD", "a"), ("BIREN_REPLAY", "b")]).unwrap_err();
        assert_eq!(both.var, "BIREN_REPLAY");
        for bad in ["0", "-1", "1s", " 5"] {
            assert_eq!(
                rc(&[("BIREN_REPLAY_TIMEOUT_MS", bad)]).unwrap_err().var,
                "BIREN_REPLAY_TIMEOUT_MS"
            );
        }
        for var in ["BIREN_RECORD", "BIREN_REPLAY", "BIREN_REPLAY_TIMEOUT_MS"] {
            let c = rc(&[(var, "")]).unwrap();
            assert!(c.record.is_none() && c.replay.is_none() && c.timeout_ms == 10_000);
        }
    }

    #[test]
    fn racecheck_and_schedule() {
        let c = cfg(&[("BIREN_RACECHECK", "1"), ("BIREN_SCHEDULE", "fuzz:42")]).unwrap();
        assert!(c.racecheck);
        assert_eq!(c.schedule, Schedule::Fuzz(42));
        assert_eq!(
            cfg(&[("BIREN_SCHEDULE", "serial")]).unwrap().schedule,
            Schedule::Serial
        );
        assert!(matches!(
            cfg(&[("BIREN_SCHEDULE", "fuzz")]).unwrap().schedule,
            Schedule::Fuzz(_)
        ));
        for bad in [
            "fuzz:",
            "fuzz:-1",
            "fuzz: 3",
            "random",
            "fuzz:18446744073709551616",
        ] {
            assert_eq!(
                cfg(&[("BIREN_SCHEDULE", bad)]).unwrap_err().var,
                "BIREN_SCHEDULE",
                "{bad:?}"
            );
        }
        assert_eq!(
            cfg(&[("BIREN_RACECHECK", "yes")]).unwrap_err().var,
            "BIREN_RACECHECK"
        );
    }

    #[test]
    fn device_memory_is_capped_at_what_can_be_reserved() {
        assert_eq!(
            cfg(&[("BIREN_DEVICE_MEMORY", "1024G")])
                .unwrap()
                .device_memory,
            1 << 40
        );
        for big in ["1025G", "9223372036854775808", "17179869184G"] {
            assert_eq!(
                cfg(&[("BIREN_DEVICE_MEMORY", big)]).unwrap_err().var,
                "BIREN_DEVICE_MEMORY"
            );
        }
    }

    #[test]
    fn values_are_read() {
        let c = cfg(&[
            ("BIREN_DEVICE_COUNT", "2"),
            ("BIREN_COMPUTE_UNITS", "3"),
            ("BIREN_DEVICE_MEMORY", "64M"),
            ("BIREN_SCHEDULING", "cooperative"),
            ("BIREN_VALIDATOR", "1"),
            ("BIREN_DEADLOCK_TIMEOUT_MS", "0"),
            ("BIREN_KERNEL_TIMEOUT_MS", "1500"),
        ])
        .unwrap();
        assert_eq!(
            (c.device_count, c.compute_units, c.device_memory),
            (2, 3, 64 << 20)
        );
        assert_eq!(c.policy, Policy::Cooperative);
        assert!(c.validator);
        assert_eq!(c.deadlock_timeout_ms, 0);
        assert_eq!(c.kernel_timeout_ms, 1500);
    }
}
