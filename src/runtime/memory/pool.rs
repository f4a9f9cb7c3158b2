//! Memory pools and stream-ordered allocation (birenMallocAsync, birenFreeAsync, birenMemPool*).
//!
//! An allocation from a pool is device memory like any other, made at the call; its free is
//! stream-ordered: the allocation leaves the memory table at once (later calls naming it are
//! refused), and its memory goes back when the stream reaches the free (the executor's deferred
//! frees). Pools keep no memory in reserve: the device arena reuses freed blocks itself, so a
//! pool's reserved bytes are its used bytes and trimming has nothing to return.

use crate::runtime::error::{ErrorCode, Result};
use crate::runtime::registry::Registry;
use parking_lot::{Mutex, RwLock};
use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicI32, AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

/// One pool.
pub struct PoolCore {
    pub device: usize,
    pub is_default: bool,
    /// Largest total of live allocations (0: the device's capacity).
    pub max_size: u64,
    used: AtomicU64,
    used_high: AtomicU64,
    pub release_threshold: AtomicU64,
    /// ReuseFollowEventDependencies, ReuseAllowOpportunistic, ReuseAllowInternalDependencies.
    pub reuse: [AtomicI32; 3],
    /// Access granted to other devices (birenMemPoolSetAccess): device -> flags.
    pub access: Mutex<HashMap<usize, i32>>,
}

impl PoolCore {
    pub fn new(device: usize, is_default: bool, max_size: u64) -> PoolCore {
        PoolCore {
            device,
            is_default,
            max_size,
            used: AtomicU64::new(0),
            used_high: AtomicU64::new(0),
            release_threshold: AtomicU64::new(0),
            reuse: [AtomicI32::new(1), AtomicI32::new(1), AtomicI32::new(1)],
            access: Mutex::new(HashMap::new()),
        }
    }

    pub fn used(&self) -> u64 {
        self.used.load(Ordering::SeqCst)
    }

    pub fn used_high(&self) -> u64 {
        self.used_high.load(Ordering::SeqCst)
    }

    /// Resets the high-water mark to the current use (the only value CUDA accepts is 0).
    pub fn reset_high(&self) {
        self.used_high.store(self.used(), Ordering::SeqCst);
    }

    /// Counts `bytes` against the pool; `OutOfMemory` past its maximum size.
    fn charge(&self, bytes: u64) -> Result<()> {
        let max = if self.max_size == 0 {
            u64::MAX
        } else {
            self.max_size
        };
        let now = self
            .used
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |u| {
                u.checked_add(bytes).filter(|&n| n <= max)
            })
            .map_err(|_| ErrorCode::OutOfMemory)?
            + bytes;
        self.used_high.fetch_max(now, Ordering::SeqCst);
        Ok(())
    }

    fn credit(&self, bytes: u64) {
        let _ = self
            .used
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |u| {
                Some(u.saturating_sub(bytes))
            });
    }
}

/// Where a stream-ordered free happened, for the validator's message about later uses.
#[derive(Clone, Debug)]
pub struct FreedRange {
    pub size: usize,
    pub stream: u64,
}

pub struct Pools {
    pub registry: Registry<PoolCore>,
    /// Per device: (default pool handle, current pool handle).
    defaults: Vec<OnceLock<u64>>,
    current: Vec<Mutex<u64>>,
    /// Live pool allocations: base -> (pool, bytes charged).
    live: Mutex<HashMap<usize, (Arc<PoolCore>, u64)>>,
    /// Recently freed ranges (at most FREED_KEPT), by base.
    freed: RwLock<BTreeMap<usize, FreedRange>>,
}

const FREED_KEPT: usize = 4096;

impl Pools {
    pub fn new(devices: usize) -> Pools {
        Pools {
            registry: Registry::new(crate::runtime::registry::HandleKind::MemPool),
            defaults: (0..devices).map(|_| OnceLock::new()).collect(),
            current: (0..devices).map(|_| Mutex::new(0)).collect(),
            live: Mutex::new(HashMap::new()),
            freed: RwLock::new(BTreeMap::new()),
        }
    }

    /// The default pool of `device` (created on first use).
    pub fn default_pool(&self, device: usize) -> Result<u64> {
        let cell = self.defaults.get(device).ok_or(ErrorCode::InvalidDevice)?;
        if let Some(h) = cell.get() {
            return Ok(*h);
        }
        let h = *cell.get_or_init(|| {
            self.registry
                .insert(Arc::new(PoolCore::new(device, true, 0)))
                .unwrap_or(0)
        });
        if h == 0 {
            return Err(ErrorCode::OutOfMemory);
        }
        Ok(h)
    }

    /// The pool birenMallocAsync uses on `device`.
    pub fn current_pool(&self, device: usize) -> Result<u64> {
        let cur = *self
            .current
            .get(device)
            .ok_or(ErrorCode::InvalidDevice)?
            .lock();
        if cur != 0 && self.registry.get(cur).is_some() {
            return Ok(cur);
        }
        self.default_pool(device)
    }

    pub fn set_current(&self, device: usize, pool: u64) -> Result<()> {
        *self
            .current
            .get(device)
            .ok_or(ErrorCode::InvalidDevice)?
            .lock() = pool;
        Ok(())
    }

    /// Before allocating `bytes` from `pool`.
    pub fn charge(&self, pool: &PoolCore, bytes: u64) -> Result<()> {
        pool.charge(bytes)
    }

    /// After a failed allocation that was charged.
    pub fn refund(&self, pool: &PoolCore, bytes: u64) {
        pool.credit(bytes)
    }

    /// Records a pool allocation at `base`.
    pub fn record(&self, base: usize, pool: Arc<PoolCore>, bytes: u64) {
        self.freed.write().remove(&base);
        self.live.lock().insert(base, (pool, bytes));
    }

    /// A pool allocation (or any allocation) at `base` is freed in stream `stream`.
    pub fn freed(&self, base: usize, size: usize, stream: u64) {
        if let Some((pool, bytes)) = self.live.lock().remove(&base) {
            pool.credit(bytes);
        }
        let mut f = self.freed.write();
        if f.len() >= FREED_KEPT {
            if let Some(&k) = f.keys().next() {
                f.remove(&k);
            }
        }
        f.insert(base, FreedRange { size, stream });
    }

    /// Forgets a pool allocation freed some other way (birenFree).
    pub fn forget(&self, base: usize) {
        if let Some((pool, bytes)) = self.live.lock().remove(&base) {
            pool.credit(bytes);
        }
    }

    /// The stream-ordered free `p` lies in, if one is remembered.
    pub fn freed_range(&self, p: usize) -> Option<(usize, FreedRange)> {
        let f = self.freed.read();
        let (&base, r) = f.range(..=p).next_back()?;
        (p < base + r.size).then(|| (base, r.clone()))
    }

    /// The device was reset: its pool allocations are gone.
    pub fn on_reset(&self, device: usize) {
        self.live.lock().retain(|_, (pool, bytes)| {
            if pool.device == device {
                pool.credit(*bytes);
                false
            } else {
                true
            }
        });
        self.freed.write().clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counters_and_limits() {
        let pools = Pools::new(1);
        let h = pools.default_pool(0).unwrap();
        assert_eq!(pools.default_pool(0).unwrap(), h);
        assert_eq!(pools.current_pool(0).unwrap(), h);
        let p = Arc::new(PoolCore::new(0, false, 1000));
        pools.charge(&p, 600).unwrap();
        assert_eq!(pools.charge(&p, 500), Err(ErrorCode::OutOfMemory));
        pools.record(0x1000, p.clone(), 600);
        assert_eq!((p.used(), p.used_high()), (600, 600));
        pools.freed(0x1000, 600, 7);
        assert_eq!((p.used(), p.used_high()), (0, 600));
        p.reset_high();
        assert_eq!(p.used_high(), 0);
        assert_eq!(pools.freed_range(0x1100).unwrap().1.stream, 7);
        assert!(pools.freed_range(0x1000 + 600).is_none());
        assert_eq!(pools.default_pool(1), Err(ErrorCode::InvalidDevice));
    }
}
