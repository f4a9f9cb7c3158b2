//! The runtime core: plain safe Rust, no C types. The FFI layer resolves C arguments into calls
//! on `Runtime` and maps the results back.

// Three groups, with imports that run one way: `exec` -> `diagnostics` -> `memory`.
pub mod config;
pub mod diagnostics;
pub mod error;
pub mod exec;
pub mod memory;
pub mod registry;

use config::Config;
use error::{ErrorCode, Result};
use exec::context::DeviceContext;
use exec::event::EventCore;
use exec::launch::KernelTable;
use exec::stream::StreamCore;
use memory::{MemoryTable, Region};
use parking_lot::Mutex;
use registry::Registry;
use std::cell::Cell;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Instant;

pub(crate) const VERSION_MAJOR: i32 = 1;
pub(crate) const VERSION_MINOR: i32 = 0;

pub struct Runtime {
    pub config: Config,
    pub devices: Vec<Arc<DeviceContext>>,
    pub streams: Registry<StreamCore>,
    pub events: Registry<EventCore>,
    pub kernels: KernelTable,
    /// Page-locked host memory from `birenMallocHost`.
    pub host_memory: MemoryTable,
    pub clock: Instant,
    ids: AtomicU64,
}

static RUNTIME: OnceLock<Runtime> = OnceLock::new();
static INIT: Mutex<()> = Mutex::new(());

thread_local! {
    static CURRENT_DEVICE: Cell<usize> = const { Cell::new(0) };
}

/// Starts the runtime (idempotent, thread-safe). A malformed configuration fails with
/// `InvalidValue` after one line on stderr naming the variable.
pub fn init() -> Result<&'static Runtime> {
    if let Some(rt) = RUNTIME.get() {
        return Ok(rt);
    }
    let _g = INIT.lock();
    if let Some(rt) = RUNTIME.get() {
        return Ok(rt);
    }
    let config = config::load()?;
    diagnostics::set_validator(config.validator);
    let clock = Instant::now();
    if let Some(path) = &config.trace_path {
        diagnostics::trace::start(path.clone(), clock);
    }
    let devices = (0..config.device_count)
        .map(|i| {
            Arc::new(DeviceContext::new(
                i,
                config.compute_units,
                config.device_memory,
                config.policy,
                config.deadlock_timeout_ms,
                clock,
            ))
        })
        .collect();
    let rt = Runtime {
        config,
        devices,
        streams: Registry::new(),
        events: Registry::new(),
        kernels: KernelTable::default(),
        host_memory: MemoryTable::new(u64::MAX),
        clock,
        ids: AtomicU64::new(0),
    };
    let _ = RUNTIME.set(rt);
    Ok(RUNTIME.get().expect("just set"))
}

/// The runtime, or `NotInitialized` before `birenInit`.
#[inline]
pub fn get() -> Result<&'static Runtime> {
    RUNTIME.get().ok_or(ErrorCode::NotInitialized)
}

/// The runtime if it was started (no error otherwise).
pub fn try_get() -> Option<&'static Runtime> {
    RUNTIME.get()
}

impl Runtime {
    pub fn next_id(&self) -> u64 {
        self.ids.fetch_add(1, Ordering::Relaxed) + 1
    }

    pub fn device_count(&self) -> usize {
        self.devices.len()
    }

    pub fn device(&self, i: usize) -> Result<&Arc<DeviceContext>> {
        self.devices.get(i).ok_or(ErrorCode::InvalidDevice)
    }

    pub fn current_index(&self) -> usize {
        CURRENT_DEVICE.with(|c| c.get())
    }

    /// The calling thread's current device.
    #[inline]
    pub fn current(&self) -> Result<&Arc<DeviceContext>> {
        self.device(self.current_index())
    }

    pub fn set_current(&self, i: usize) -> Result<()> {
        self.device(i)?;
        CURRENT_DEVICE.with(|c| c.set(i));
        Ok(())
    }

    /// A stream by handle; 0 is the current device's default stream.
    #[inline]
    pub fn stream(&self, handle: u64) -> Result<Arc<StreamCore>> {
        if handle == 0 {
            return Ok(self.current()?.default_stream.clone());
        }
        self.streams.get(handle).ok_or(ErrorCode::InvalidHandle)
    }

    pub fn event(&self, handle: u64) -> Result<Arc<EventCore>> {
        self.events.get(handle).ok_or(ErrorCode::InvalidHandle)
    }

    /// The device allocation that contains `p`, on any device.
    pub fn device_region(&self, p: usize) -> Option<(usize, Region)> {
        self.devices
            .iter()
            .enumerate()
            .find_map(|(i, d)| d.exec.memory.find(p).map(|r| (i, r)))
    }

    /// `[p, p+len)` lies inside one live device allocation (on any device).
    pub fn check_device_range(&self, p: usize, len: usize) -> Result<()> {
        let mut first = Err(ErrorCode::InvalidDevicePointer);
        for d in &self.devices {
            match d.exec.memory.check_range(p, len) {
                Ok(_) => return Ok(()),
                Err(ErrorCode::OutOfBounds) => first = Err(ErrorCode::OutOfBounds),
                Err(_) => {}
            }
        }
        first
    }
}

impl Runtime {
    /// `birenDeviceReset` of device `i`: handles first (so nothing new reaches the device), then
    /// the device itself. Reports leaks when the validator is on.
    pub fn reset_device(&self, i: usize) -> Result<()> {
        let d = self.device(i)?;
        if exec::context::sync_forbidden_here() {
            return Err(ErrorCode::NotPermitted);
        }
        let streams = self.streams.remove_where(|s| s.device == i);
        let events = self.events.remove_where(|e| e.device == i);
        let allocations = d.reset();
        exec::graph::capture::forget_device(i);
        diagnostics::leaks::Leaks {
            streams: streams.iter().map(|(_, s)| (s.id, s.caller)).collect(),
            events: events.iter().map(|(_, e)| (e.id, e.caller)).collect(),
            allocations,
        }
        .report(&format!("birenDeviceReset, device {i}"));
        diagnostics::trace::flush();
        Ok(())
    }
}
