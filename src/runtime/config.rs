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
    pub trace_path: Option<String>,
    pub log: LogLevel,
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

impl std::fmt::Display for ConfigError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "biren: invalid {}={:?}: expected {}",
            self.var, self.value, self.expected
        )
    }
}

fn parse_count(var: &'static str, v: &str, max: usize) -> std::result::Result<usize, ConfigError> {
    let err = || ConfigError {
        var,
        value: v.to_string(),
        expected: "a whole number from 1 to the limit",
    };
    let n: usize = v.trim().parse().map_err(|_| err())?;
    if n == 0 || n > max {
        return Err(err());
    }
    Ok(n)
}

/// Parses a byte size with an optional K, M or G suffix (powers of 1024).
pub fn parse_bytes(v: &str) -> Option<u64> {
    let t = v.trim();
    let (digits, shift) = match t.chars().last()? {
        'k' | 'K' => (&t[..t.len() - 1], 10),
        'm' | 'M' => (&t[..t.len() - 1], 20),
        'g' | 'G' => (&t[..t.len() - 1], 30),
        _ => (t, 0),
    };
    let n: u64 = digits.parse().ok()?;
    let bytes = n.checked_mul(1u64 << shift)?;
    (bytes > 0).then_some(bytes)
}

impl Config {
    /// Reads the configuration through `get` (the environment in production, a map in tests).
    pub fn from_lookup(
        get: impl Fn(&str) -> Option<String>,
    ) -> std::result::Result<Config, ConfigError> {
        let host_cpus = std::thread::available_parallelism().map_or(2, |n| n.get());
        let mut c = Config {
            device_count: 1,
            compute_units: host_cpus.min(MAX_COMPUTE_UNITS),
            device_memory: DEFAULT_DEVICE_MEMORY,
            policy: Policy::Preemptive,
            validator: false,
            deadlock_timeout_ms: 200,
            trace_path: None,
            log: LogLevel::Off,
        };
        if let Some(v) = get("BIREN_DEVICE_COUNT") {
            c.device_count = parse_count("BIREN_DEVICE_COUNT", &v, MAX_DEVICES)?;
        }
        if let Some(v) = get("BIREN_COMPUTE_UNITS") {
            c.compute_units = parse_count("BIREN_COMPUTE_UNITS", &v, MAX_COMPUTE_UNITS)?;
        }
        if let Some(v) = get("BIREN_DEVICE_MEMORY") {
            c.device_memory = parse_bytes(&v).ok_or(ConfigError {
                var: "BIREN_DEVICE_MEMORY",
                value: v.clone(),
                expected: "a positive byte count with an optional K, M or G suffix",
            })?;
        }
        if let Some(v) = get("BIREN_SCHEDULING") {
            c.policy = match v.trim() {
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
            c.validator = match v.trim() {
                "0" => false,
                "1" => true,
                _ => {
                    return Err(ConfigError {
                        var: "BIREN_VALIDATOR",
                        value: v,
                        expected: "0 or 1",
                    })
                }
            };
        }
        if let Some(v) = get("BIREN_DEADLOCK_TIMEOUT_MS") {
            c.deadlock_timeout_ms = v.trim().parse().map_err(|_| ConfigError {
                var: "BIREN_DEADLOCK_TIMEOUT_MS",
                value: v.clone(),
                expected: "a whole number of milliseconds (0 = at once)",
            })?;
        }
        if let Some(v) = get("BIREN_TRACE") {
            if v.trim().is_empty() {
                return Err(ConfigError {
                    var: "BIREN_TRACE",
                    value: v,
                    expected: "a file path",
                });
            }
            c.trace_path = Some(v);
        }
        if let Some(v) = get("BIREN_LOG") {
            c.log = match v.trim() {
                "" | "off" | "0" => LogLevel::Off,
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
    fn values_are_read() {
        let c = cfg(&[
            ("BIREN_DEVICE_COUNT", "2"),
            ("BIREN_COMPUTE_UNITS", "3"),
            ("BIREN_DEVICE_MEMORY", "64M"),
            ("BIREN_SCHEDULING", "cooperative"),
            ("BIREN_VALIDATOR", "1"),
            ("BIREN_DEADLOCK_TIMEOUT_MS", "0"),
        ])
        .unwrap();
        assert_eq!(
            (c.device_count, c.compute_units, c.device_memory),
            (2, 3, 64 << 20)
        );
        assert_eq!(c.policy, Policy::Cooperative);
        assert!(c.validator);
        assert_eq!(c.deadlock_timeout_ms, 0);
    }
}
