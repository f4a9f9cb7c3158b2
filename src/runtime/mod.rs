//! The runtime core: plain safe Rust, no C types. The FFI layer resolves C arguments into calls
//! on `Runtime` and maps the results back.

// Three groups, with imports that run one way: `exec` -> `diagnostics` -> `memory`.
pub mod caps;
pub mod config;
pub mod copies;
pub mod copy3d;
pub mod diagnostics;
pub mod error;
pub mod exec;
pub mod ids;
pub mod kernels;
/// The lock order lives in the device layer, the lowest, so that every layer ranks its locks
/// with one checker; the runtime names it here.
pub use crate::device::lock_order;
pub mod memory;
pub mod registry;
pub mod settings;
pub mod symbols;
pub mod texture;

use config::Config;
use error::{ErrorCode, Result};
use exec::context::DeviceContext;
use exec::event::EventCore;
use exec::launch::KernelTable;
use exec::stream::StreamCore;
use memory::{MemoryTable, Region};
use parking_lot::Mutex;
use registry::{HandleKind, Registry};
use std::cell::Cell;
use std::sync::atomic::{AtomicPtr, AtomicU64, Ordering};
use std::sync::Arc;
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
    /// Flags of page-locked allocations and registered ranges (birenHostAlloc, birenHostRegister).
    pub host_flags: memory::host::HostFlags,
    /// Per device: flags and limits (birenSetDeviceFlags, birenDeviceSetLimit).
    pub settings: Vec<settings::DeviceSettings>,
    /// Kernels' attributes (birenFuncSetAttribute).
    pub func_attrs: settings::FuncAttrTable,
    /// Memory pools and stream-ordered allocations (birenMallocAsync).
    pub pools: memory::pool::Pools,
    /// Managed allocations (birenMallocManaged).
    pub managed: memory::managed::ManagedSet,
    /// Peer access enabled: (device, peer) pairs (birenDeviceEnablePeerAccess).
    pub(crate) peers: lock_order::RankedMutex<std::collections::HashSet<(usize, usize)>>,
    /// Accelerator arrays (birenMallocArray).
    pub arrays: memory::array::Arrays,
    /// Texture and surface objects.
    pub textures: texture::Textures,
    pub clock: Instant,
    ids: AtomicU64,
}

/// The runtime, once started. A pointer rather than a `OnceLock` because a child made by
/// `fork()` must be able to start a fresh one: the parent's runtime threads do not exist in the
/// child, so its runtime is abandoned (leaked, never dropped: its memory is the child's copy).
static RUNTIME: AtomicPtr<Runtime> = AtomicPtr::new(std::ptr::null_mut());
static INIT: Mutex<()> = Mutex::new(());
pub(crate) use diagnostics::ABORT_ON_INTERNAL_ERROR;

/// Set in a child forked after the runtime was started (see `install_fork_handlers`).
static FORKED_AFTER_INIT: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

thread_local! {
    static CURRENT_DEVICE: Cell<usize> = const { Cell::new(0) };
    /// The stream this host thread last launched on, with its handle (see `stream_ref`).
    static LAST_STREAM: Cell<Option<(u64, Arc<StreamCore>)>> = const { Cell::new(None) };
}

/// A stream borrowed for one call (`Runtime::stream_ref`): the current device's default stream,
/// or a stream by handle that goes back to the thread's one-entry cache when dropped.
pub enum StreamRef {
    Default(&'static Arc<StreamCore>),
    /// Always `Some` until dropped.
    Handle(u64, Option<Arc<StreamCore>>),
}

impl std::ops::Deref for StreamRef {
    type Target = Arc<StreamCore>;
    fn deref(&self) -> &Arc<StreamCore> {
        match self {
            StreamRef::Default(s) => s,
            StreamRef::Handle(_, s) => s.as_ref().expect("present until dropped"),
        }
    }
}

impl Drop for StreamRef {
    fn drop(&mut self) {
        if let StreamRef::Handle(h, s) = self {
            if let Some(s) = s.take() {
                let old = LAST_STREAM.with(|c| c.replace(Some((*h, s))));
                drop(old);
            }
        }
    }
}

/// Starts the runtime (idempotent, thread-safe). A malformed configuration fails with
/// `InvalidValue` after one line on stderr naming the variable.
pub fn init() -> Result<&'static Runtime> {
    if let Some(rt) = try_get() {
        return Ok(rt);
    }
    let _g = INIT.lock();
    if let Some(rt) = try_get() {
        return Ok(rt);
    }
    if FORKED_AFTER_INIT.load(Ordering::Acquire) {
        eprintln!(
            "biren: birenInit in a process forked after its parent started the runtime: not supported \
             (the runtime's threads did not follow the fork). Start worker processes before birenInit, \
             or exec a new program (posix_spawn; Python: multiprocessing's \"spawn\" start method)."
        );
        return Err(ErrorCode::NotSupported);
    }
    install_fork_handlers();
    let config = config::load()?;
    let replay_config = config::load_replay()?;
    diagnostics::set_validator(config.validator);
    if config.racecheck {
        diagnostics::racecheck::set(true);
    }
    ABORT_ON_INTERNAL_ERROR.store(config.abort_on_internal_error, Ordering::Relaxed);
    let device_log = exec::replay::configure(&config, &replay_config)?;
    exec::schedule::configure(config.schedule, device_log);
    let clock = Instant::now();
    if let Some(path) = &config.trace_path {
        diagnostics::trace::start(path.clone(), clock, config.compute_units);
    }
    crate::device::fault::install_handlers();
    crate::device::fault::set_kernel_timeout_ms(config.kernel_timeout_ms);
    let futures = Arc::new(exec::event::Futures::default());
    let devices = (0..config.device_count)
        .map(|i| {
            Arc::new(DeviceContext::new(
                i,
                config.compute_units,
                config.device_memory,
                config.policy,
                config.deadlock_timeout_ms,
                clock,
                futures.clone(),
            ))
        })
        .collect();
    let device_count = config.device_count;
    let settings = (0..config.device_count)
        .map(|_| settings::DeviceSettings::default())
        .collect();
    let rt = Runtime {
        config,
        devices,
        streams: Registry::new(HandleKind::Stream),
        events: Registry::new(HandleKind::Event),
        kernels: KernelTable::default(),
        host_memory: MemoryTable::new(u64::MAX),
        host_flags: Default::default(),
        settings,
        func_attrs: settings::FuncAttrTable::default(),
        pools: memory::pool::Pools::new(device_count),
        managed: Default::default(),
        peers: lock_order::RankedMutex::new(lock_order::Rank::Leaf, Default::default()),
        arrays: Default::default(),
        textures: Default::default(),
        clock,
        ids: AtomicU64::new(0),
    };
    let p = Box::into_raw(Box::new(rt));
    RUNTIME.store(p, Ordering::Release);
    // SAFETY: never freed (see RUNTIME).
    Ok(unsafe { &*p })
}

/// The runtime, or `NotInitialized` before `birenInit` (and in a forked child until it calls
/// `birenInit` again).
#[inline]
pub fn get() -> Result<&'static Runtime> {
    try_get().ok_or(ErrorCode::NotInitialized)
}

/// The runtime if it was started (no error otherwise).
#[inline]
pub fn try_get() -> Option<&'static Runtime> {
    let p = RUNTIME.load(Ordering::Acquire);
    // SAFETY: a published runtime is never freed.
    (!p.is_null()).then(|| unsafe { &*p })
}

/// After `fork()` only the forking thread exists in the child, so the runtime's compute units,
/// engines and host-function thread are gone and every synchronizing call would hang. Nor can
/// the child start a fresh runtime safely: the parent's threads may have been parked inside the
/// lock library's global wait table, whose entries point into their stacks, which the C library
/// hands to the child's new threads (seen: a crash in about one fork in thirty). So, as CUDA
/// does, the child's calls fail cleanly: `NotInitialized`, and `birenInit` `NotSupported`.
/// A process that forks before `birenInit` is not affected.
fn install_fork_handlers() {
    extern "C" fn prepare() {
        // No birenInit runs across the fork: the child can take the lock.
        std::mem::forget(INIT.lock());
    }
    extern "C" fn parent() {
        // SAFETY: locked by `prepare` in this same thread.
        unsafe { INIT.force_unlock() };
    }
    extern "C" fn child() {
        // SAFETY: locked by `prepare` in the thread that is now the child's only thread.
        unsafe { INIT.force_unlock() };
        if !RUNTIME.load(Ordering::Acquire).is_null() {
            FORKED_AFTER_INIT.store(true, Ordering::Release);
        }
        RUNTIME.store(std::ptr::null_mut(), Ordering::Release);
        CURRENT_DEVICE.with(|c| c.set(0));
        diagnostics::trace::forked_child();
    }
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        // SAFETY: the handlers are async-signal-safe enough for fork: atomics and a lock.
        unsafe { libc::pthread_atfork(Some(prepare), Some(parent), Some(child)) };
    });
}

impl Runtime {
    pub fn next_id(&self) -> u64 {
        ids::next_object(&self.ids)
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

    /// Like `stream`, for the hot calls (kernel launches): the answer is the same, but a thread
    /// that launches on the same stream again reuses the reference it kept from the last call
    /// instead of looking the handle up, so it touches neither the registry nor the stream's
    /// reference count (which the device's threads touch as they run the stream's work). The
    /// kept reference is valid while its stream is neither destroyed nor killed by a reset;
    /// then the registry decides (and refuses the handle). It keeps a destroyed stream's memory
    /// until the thread launches elsewhere or exits.
    #[inline]
    pub fn stream_ref(&'static self, handle: u64) -> Result<StreamRef> {
        if handle == 0 {
            return Ok(StreamRef::Default(&self.current()?.default_stream));
        }
        if let Some((h, s)) = LAST_STREAM.with(|c| c.take()) {
            if h == handle && !s.is_destroyed() && !s.is_dead() {
                return Ok(StreamRef::Handle(h, Some(s)));
            }
        }
        let s = self.streams.get(handle).ok_or(ErrorCode::InvalidHandle)?;
        Ok(StreamRef::Handle(handle, Some(s)))
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

    /// `[p, p+len)` lies inside one live device allocation (on any device) or one device
    /// symbol (BIREN_DEVICE_SYMBOL).
    pub fn check_device_range(&self, p: usize, len: usize) -> Result<()> {
        let mut first = Err(ErrorCode::InvalidDevicePointer);
        if let Some(r) = symbols::find(p) {
            first = Err(ErrorCode::OutOfBounds);
            if p.checked_add(len).is_some_and(|end| end <= r.base + r.size) {
                return Ok(());
            }
        }
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
    /// `birenDeviceReset` of device `i`: the device, and its handles once its threads are done
    /// (a host function in progress keeps what it made until it returns). Reports leaks when the
    /// validator is on.
    pub fn reset_device(&self, i: usize) -> Result<()> {
        let d = self.device(i)?;
        if exec::context::sync_forbidden_here() {
            return Err(ErrorCode::NotPermitted);
        }
        let (mut streams, mut events) = (Vec::new(), Vec::new());
        let allocations = d.reset(|| {
            streams = self.streams.remove_where(|s| s.device == i);
            events = self.events.remove_where(|e| e.device == i);
        });
        self.settings[i].reset_limits();
        d.exec.memory.drop_holds();
        self.pools.on_reset(i);
        self.managed.on_reset(i);
        self.peers.lock().retain(|&(d, _)| d != i);
        self.textures.on_reset(i);
        self.arrays.on_reset(i);
        // After the reset dropped the queued work: streams of other devices that wait for these
        // events' first records stop waiting.
        for (_, e) in &events {
            d.abandon_future(e);
        }
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

impl Runtime {
    /// What is alive now on every device (for the report at exit).
    pub fn live_objects(&self) -> diagnostics::leaks::Leaks {
        let mut allocations = Vec::new();
        for d in &self.devices {
            d.exec
                .memory
                .for_each(|a| allocations.push((a.base, a.size, a.caller)));
        }
        diagnostics::leaks::Leaks {
            streams: self
                .streams
                .collect_where(|_| true)
                .iter()
                .map(|s| (s.id, s.caller))
                .collect(),
            events: self
                .events
                .collect_where(|_| true)
                .iter()
                .map(|e| (e.id, e.caller))
                .collect(),
            allocations,
        }
    }
}
