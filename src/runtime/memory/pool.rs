//! Memory pools and stream-ordered allocation (birenMallocAsync, birenFreeAsync, birenMemPool*).
//!
//! An allocation from a pool is device memory like any other, made at the call; its free is
//! stream-ordered: the allocation leaves the memory table at once (later calls naming it are
//! refused), and its memory goes back when the stream reaches the free (the executor's deferred
//! frees).
//!
//! As CUDA's, a pool keeps memory freed to it in reserve: its *reserved* bytes are its used
//! bytes plus that reserve. The reserve is capacity of the device held for the pool
//! (`MemoryTable::hold`): other allocations cannot use it, and the pool's next allocations draw
//! on it first. At a synchronize (stream, event or device) a pool gives back its reserve above
//! its release threshold (default 0: all of it); birenMemPoolTrimTo gives it back down to a
//! size. The device arena reuses freed blocks itself, so the reserve is a count of bytes, not a
//! list of blocks; an allocation of the device that finds no room takes every pool's reserve
//! back before it fails (`MemoryTable::drop_holds`), and so does a reset.

use super::MemoryTable;
use crate::runtime::error::{ErrorCode, Result};
use crate::runtime::lock_order::{Rank, RankedGuard, RankedMutex, RankedRwLock};
use crate::runtime::registry::Registry;
use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

/// One pool.
pub struct PoolCore {
    pub device: usize,
    pub is_default: bool,
    /// Largest total of live allocations (0: the device's capacity).
    pub max_size: u64,
    used: AtomicU64,
    used_high: AtomicU64,
    /// The reserve: bytes freed to the pool and kept, held in the device's memory table.
    reserve: RankedMutex<Reserve>,
    reserved_high: AtomicU64,
    /// Destroyed (birenMemPoolDestroy): what is freed to it later is not kept.
    retired: AtomicBool,
    pub release_threshold: AtomicU64,
    /// ReuseFollowEventDependencies, ReuseAllowOpportunistic, ReuseAllowInternalDependencies.
    pub reuse: [AtomicI32; 3],
    /// Access granted to other devices (birenMemPoolSetAccess): device -> flags.
    pub(crate) access: RankedMutex<HashMap<usize, i32>>,
}

impl PoolCore {
    pub fn new(device: usize, is_default: bool, max_size: u64) -> PoolCore {
        PoolCore {
            device,
            is_default,
            max_size,
            used: AtomicU64::new(0),
            used_high: AtomicU64::new(0),
            reserve: RankedMutex::new(Rank::PoolReserve, Reserve::default()),
            reserved_high: AtomicU64::new(0),
            retired: AtomicBool::new(false),
            release_threshold: AtomicU64::new(0),
            reuse: [AtomicI32::new(1), AtomicI32::new(1), AtomicI32::new(1)],
            access: RankedMutex::new(Rank::Leaf, HashMap::new()),
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

    /// The reserve, as it stands in `mem` (dropped holds count no more).
    fn reserve<'a>(&'a self, mem: &MemoryTable) -> RankedGuard<'a, Reserve> {
        let mut r = self.reserve.lock();
        if r.generation != mem.hold_generation() {
            r.bytes = 0;
        }
        r
    }

    /// Bytes reserved: used plus the reserve.
    pub fn reserved(&self, mem: &MemoryTable) -> u64 {
        let r = self.reserve(mem);
        self.used() + r.bytes
    }

    pub fn reserved_high(&self) -> u64 {
        self.reserved_high.load(Ordering::SeqCst)
    }

    /// Resets the reserved high-water mark to the bytes reserved now.
    pub fn reset_reserved_high(&self, mem: &MemoryTable) {
        self.reserved_high
            .store(self.reserved(mem), Ordering::SeqCst);
    }

    /// `bytes` of the pool were freed: they join the reserve if the device has the capacity to
    /// hold them (else they are simply gone back).
    fn keep(&self, bytes: u64, mem: &MemoryTable) {
        if bytes == 0 {
            return;
        }
        let mut r = self.reserve(mem);
        if self.retired.load(Ordering::SeqCst) {
            return;
        }
        if let Some(g) = mem.hold(bytes) {
            if g != r.generation {
                r.bytes = 0;
                r.generation = g;
            }
            r.bytes += bytes;
        }
    }

    /// Takes up to `bytes` from the reserve, for an allocation of the pool: that capacity is free
    /// for it again. Returns the bytes taken.
    fn take(&self, bytes: u64, mem: &MemoryTable) -> u64 {
        let mut r = self.reserve(mem);
        let t = r.bytes.min(bytes);
        r.bytes -= t;
        mem.unhold(t, r.generation);
        t
    }

    /// The pool is destroyed: gives back its reserve, and keeps nothing freed to it later.
    pub fn retire(&self, mem: &MemoryTable) {
        let mut r = self.reserve(mem);
        self.retired.store(true, Ordering::SeqCst);
        let give = std::mem::take(&mut r.bytes);
        mem.unhold(give, r.generation);
    }

    /// Gives back reserve until at most `keep` bytes are reserved (or the reserve is empty).
    pub fn release_to(&self, keep: u64, mem: &MemoryTable) {
        let mut r = self.reserve(mem);
        let reserved = self.used() + r.bytes;
        let give = reserved.saturating_sub(keep).min(r.bytes);
        r.bytes -= give;
        mem.unhold(give, r.generation);
    }

    fn note_reserved(&self, mem: &MemoryTable) {
        self.reserved_high
            .fetch_max(self.reserved(mem), Ordering::SeqCst);
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

/// A pool's reserve: bytes held in its device's memory table in generation `generation`.
#[derive(Default)]
struct Reserve {
    bytes: u64,
    generation: u64,
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
    current: Vec<RankedMutex<u64>>,
    /// Live pool allocations: base -> (pool, bytes charged).
    live: RankedMutex<HashMap<usize, (Arc<PoolCore>, u64)>>,
    /// Recently freed ranges (at most FREED_KEPT), by base.
    freed: RankedRwLock<BTreeMap<usize, FreedRange>>,
}

const FREED_KEPT: usize = 4096;

impl Pools {
    pub fn new(devices: usize) -> Pools {
        Pools {
            registry: Registry::new(crate::runtime::registry::HandleKind::MemPool),
            defaults: (0..devices).map(|_| OnceLock::new()).collect(),
            current: (0..devices)
                .map(|_| RankedMutex::new(Rank::Leaf, 0))
                .collect(),
            live: RankedMutex::new(Rank::Leaf, HashMap::new()),
            freed: RankedRwLock::new(Rank::Leaf, BTreeMap::new()),
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

    /// Before allocating `bytes` from `pool` (of the device whose table is `mem`): counts them
    /// and draws on the pool's reserve first. Returns the bytes drawn from the reserve.
    pub fn charge(&self, pool: &PoolCore, bytes: u64, mem: &MemoryTable) -> Result<u64> {
        pool.charge(bytes)?;
        let taken = pool.take(bytes, mem);
        if pool.max_size != 0 {
            // The reserve counts against the pool's maximum too.
            pool.release_to(pool.max_size, mem);
        }
        pool.note_reserved(mem);
        Ok(taken)
    }

    /// After a failed allocation that was charged (`taken` bytes from the reserve).
    pub fn refund(&self, pool: &PoolCore, bytes: u64, taken: u64, mem: &MemoryTable) {
        pool.credit(bytes);
        pool.keep(taken, mem);
    }

    /// A synchronize with device `device` (whose table is `mem`): each of its pools gives back
    /// its reserve above its release threshold.
    pub fn synchronized(&self, device: usize, mem: &MemoryTable) {
        for p in self.registry.collect_where(|p| p.device == device) {
            p.release_to(p.release_threshold.load(Ordering::SeqCst), mem);
        }
    }

    /// Records a pool allocation at `base`.
    pub fn record(&self, base: usize, pool: Arc<PoolCore>, bytes: u64) {
        self.freed.write().remove(&base);
        self.live.lock().insert(base, (pool, bytes));
    }

    /// A pool allocation (or any allocation) at `base` is freed in stream `stream`: its bytes
    /// go to its pool's reserve.
    pub fn freed(&self, base: usize, size: usize, stream: u64, mem: &MemoryTable) {
        self.forget(base, mem);
        let mut f = self.freed.write();
        if f.len() >= FREED_KEPT {
            if let Some(&k) = f.keys().next() {
                f.remove(&k);
            }
        }
        f.insert(base, FreedRange { size, stream });
    }

    /// A pool allocation freed some other way (birenFree): to its pool's reserve too.
    pub fn forget(&self, base: usize, mem: &MemoryTable) {
        let found = self.live.lock().remove(&base);
        if let Some((pool, bytes)) = found {
            pool.credit(bytes);
            pool.keep(bytes, mem);
        }
    }

    /// The stream-ordered free `p` lies in, if one is remembered.
    pub fn freed_range(&self, p: usize) -> Option<(usize, FreedRange)> {
        let f = self.freed.read();
        let (&base, r) = f.range(..=p).next_back()?;
        (p < base + r.size).then(|| (base, r.clone()))
    }

    /// The device was reset: its pool allocations are gone, and its pools' reserves (the
    /// reset takes the holds back: `MemoryTable::drop_holds`).
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
        let mem = MemoryTable::new(1 << 20);
        pools.charge(&p, 600, &mem).unwrap();
        assert_eq!(pools.charge(&p, 500, &mem), Err(ErrorCode::OutOfMemory));
        pools.record(0x1000, p.clone(), 600);
        assert_eq!((p.used(), p.used_high()), (600, 600));
        pools.freed(0x1000, 600, 7, &mem);
        assert_eq!((p.used(), p.used_high()), (0, 600));
        p.reset_high();
        assert_eq!(p.used_high(), 0);
        assert_eq!(pools.freed_range(0x1100).unwrap().1.stream, 7);
        assert!(pools.freed_range(0x1000 + 600).is_none());
        assert_eq!(pools.default_pool(1), Err(ErrorCode::InvalidDevice));
    }

    #[test]
    fn the_reserve_follows_the_release_threshold_and_trimming() {
        let pools = Pools::new(1);
        let mem = MemoryTable::new(1 << 20);
        let h = pools
            .registry
            .insert(Arc::new(PoolCore::new(0, false, 0)))
            .unwrap();
        let p = pools.registry.get(h).unwrap();
        assert_eq!(pools.charge(&p, 4096, &mem), Ok(0));
        pools.record(0x1000, p.clone(), 4096);
        pools.freed(0x1000, 4096, 1, &mem);
        // Freed to the pool: kept, and held in the device's capacity.
        assert_eq!((p.used(), p.reserved(&mem), mem.used()), (0, 4096, 4096));
        p.release_threshold.store(u64::MAX, Ordering::SeqCst);
        pools.synchronized(0, &mem);
        assert_eq!(p.reserved(&mem), 4096);
        // The next allocation draws on the reserve: nothing more is reserved.
        assert_eq!(pools.charge(&p, 1024, &mem), Ok(1024));
        assert_eq!((p.used(), p.reserved(&mem), mem.used()), (1024, 4096, 3072));
        pools.refund(&p, 1024, 1024, &mem);
        assert_eq!((p.used(), p.reserved(&mem)), (0, 4096));
        // Trimming keeps what it is told to; a threshold of 0 lets the rest go at a sync.
        p.release_to(1024, &mem);
        assert_eq!((p.reserved(&mem), mem.used()), (1024, 1024));
        p.release_threshold.store(512, Ordering::SeqCst);
        pools.synchronized(0, &mem);
        assert_eq!((p.reserved(&mem), mem.used()), (512, 512));
        p.release_threshold.store(0, Ordering::SeqCst);
        pools.synchronized(0, &mem);
        assert_eq!((p.reserved(&mem), mem.used()), (0, 0));
        assert_eq!(p.reserved_high(), 4096);
        // A device short of memory (or reset) takes the reserve back.
        pools.charge(&p, 2048, &mem).unwrap();
        pools.record(0x2000, p.clone(), 2048);
        pools.forget(0x2000, &mem);
        assert_eq!(p.reserved(&mem), 2048);
        assert!(mem.drop_holds());
        assert_eq!((p.reserved(&mem), mem.used()), (0, 0));
        p.reset_reserved_high(&mem);
        assert_eq!(p.reserved_high(), 0);
    }
}
