//! What a program may change about a device and its kernels: device flags, limits
//! (birenDeviceSetLimit) and per-kernel attributes (birenFuncSetAttribute).

use crate::runtime::caps::SHARED_MEM_PER_BLOCK_OPTIN;
use crate::runtime::error::{ErrorCode, Result};
use crate::runtime::lock_order::{Rank, RankedRwLock};
use std::collections::HashMap;
use std::sync::atomic::{AtomicU32, AtomicUsize, Ordering};

/// Fiber stack of each simulated thread by default (the compute units' own default).
pub(crate) const DEFAULT_STACK_SIZE: usize = crate::device::compute_unit::FIBER_STACK_SIZE;
/// Bounds of birenDeviceSetLimit(birenLimitStackSize).
pub(crate) const MIN_STACK_SIZE: usize = 16 * 1024;
pub(crate) const MAX_STACK_SIZE: usize = 16 << 20;
pub(crate) const DEFAULT_PRINTF_FIFO: usize = 1 << 20;
pub(crate) const DEFAULT_MALLOC_HEAP: usize = 8 << 20;
pub(crate) const DEFAULT_L2_FETCH: usize = 64;

/// `birenLimit` values (CUDA's cudaLimit) the runtime acts on; the others (device runtime sync
/// depth 3, pending launch count 4, persisting L2 cache size 6) are refused as unsupported.
pub(crate) const LIMIT_STACK_SIZE: i64 = 0;
pub(crate) const LIMIT_PRINTF_FIFO_SIZE: i64 = 1;
pub(crate) const LIMIT_MALLOC_HEAP_SIZE: i64 = 2;
pub(crate) const LIMIT_MAX_L2_FETCH_GRANULARITY: i64 = 5;

/// Device flags (CUDA's cudaDeviceScheduleAuto .. cudaDeviceLmemResizeToMax).
pub(crate) const DEVICE_FLAGS_MASK: u32 = 0x1f;
pub(crate) const DEVICE_SCHEDULE_MASK: u32 = 0x07;

/// One device's settings.
pub struct DeviceSettings {
    flags: AtomicU32,
    stack_size: AtomicUsize,
    printf_fifo: AtomicUsize,
    malloc_heap: AtomicUsize,
    l2_fetch: AtomicUsize,
}

impl Default for DeviceSettings {
    fn default() -> Self {
        DeviceSettings {
            flags: AtomicU32::new(0),
            stack_size: AtomicUsize::new(DEFAULT_STACK_SIZE),
            printf_fifo: AtomicUsize::new(DEFAULT_PRINTF_FIFO),
            malloc_heap: AtomicUsize::new(DEFAULT_MALLOC_HEAP),
            l2_fetch: AtomicUsize::new(DEFAULT_L2_FETCH),
        }
    }
}

impl DeviceSettings {
    pub fn flags(&self) -> u32 {
        self.flags.load(Ordering::Relaxed)
    }

    /// `InvalidValue` for bits outside the mask or two scheduling flags at once.
    pub fn set_flags(&self, flags: u32) -> Result<()> {
        let sched = flags & DEVICE_SCHEDULE_MASK;
        if flags & !DEVICE_FLAGS_MASK != 0 || sched.count_ones() > 1 {
            return Err(ErrorCode::InvalidValue);
        }
        self.flags.store(flags, Ordering::Relaxed);
        Ok(())
    }

    /// The stack of each simulated thread of launches made from now on.
    #[inline]
    pub fn stack_size(&self) -> usize {
        self.stack_size.load(Ordering::Relaxed)
    }

    fn slot(&self, limit: i64) -> Result<&AtomicUsize> {
        match limit {
            LIMIT_STACK_SIZE => Ok(&self.stack_size),
            LIMIT_PRINTF_FIFO_SIZE => Ok(&self.printf_fifo),
            LIMIT_MALLOC_HEAP_SIZE => Ok(&self.malloc_heap),
            LIMIT_MAX_L2_FETCH_GRANULARITY => Ok(&self.l2_fetch),
            _ => Err(ErrorCode::UnsupportedLimit),
        }
    }

    pub fn limit(&self, limit: i64) -> Result<usize> {
        Ok(self.slot(limit)?.load(Ordering::Relaxed))
    }

    /// Sets a limit, rounding as the device needs; the value kept is what `limit` reports.
    pub fn set_limit(&self, limit: i64, value: usize) -> Result<()> {
        let slot = self.slot(limit)?;
        let v = match limit {
            LIMIT_STACK_SIZE => {
                if value > MAX_STACK_SIZE {
                    return Err(ErrorCode::InvalidValue);
                }
                value.max(MIN_STACK_SIZE).next_multiple_of(4096)
            }
            LIMIT_MAX_L2_FETCH_GRANULARITY => {
                if value > 128 {
                    return Err(ErrorCode::InvalidValue);
                }
                value
            }
            _ => value,
        };
        slot.store(v, Ordering::Relaxed);
        Ok(())
    }

    /// Limits back to their defaults (birenDeviceReset); the flags are kept, as CUDA keeps the
    /// primary context's flags.
    pub fn reset_limits(&self) {
        let d = DeviceSettings::default();
        for l in [
            LIMIT_STACK_SIZE,
            LIMIT_PRINTF_FIFO_SIZE,
            LIMIT_MALLOC_HEAP_SIZE,
            LIMIT_MAX_L2_FETCH_GRANULARITY,
        ] {
            let v = d.limit(l).unwrap_or(0);
            if let Ok(s) = self.slot(l) {
                s.store(v, Ordering::Relaxed);
            }
        }
    }
}

/// What birenFuncSetAttribute set for one kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FuncAttrs {
    pub max_dynamic_shared: usize,
    pub preferred_carveout: i32,
    pub cache_config: i32,
}

impl Default for FuncAttrs {
    fn default() -> Self {
        FuncAttrs {
            max_dynamic_shared: SHARED_MEM_PER_BLOCK_OPTIN,
            preferred_carveout: -1,
            cache_config: 0,
        }
    }
}

/// Kernels' attributes by address. Launches skip the lookup while none was set.
pub struct FuncAttrTable {
    map: RankedRwLock<HashMap<usize, FuncAttrs>>,
    count: AtomicUsize,
}

impl Default for FuncAttrTable {
    fn default() -> FuncAttrTable {
        FuncAttrTable {
            map: RankedRwLock::new(Rank::Leaf, HashMap::new()),
            count: AtomicUsize::new(0),
        }
    }
}

impl FuncAttrTable {
    #[inline]
    pub fn get(&self, kernel: usize) -> FuncAttrs {
        if self.count.load(Ordering::Acquire) == 0 {
            return FuncAttrs::default();
        }
        self.map.read().get(&kernel).copied().unwrap_or_default()
    }

    pub fn update(&self, kernel: usize, f: impl FnOnce(&mut FuncAttrs)) {
        let mut m = self.map.write();
        f(m.entry(kernel).or_default());
        self.count.store(m.len(), Ordering::Release);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_round_and_refuse() {
        let s = DeviceSettings::default();
        assert_eq!(s.limit(LIMIT_STACK_SIZE), Ok(DEFAULT_STACK_SIZE));
        s.set_limit(LIMIT_STACK_SIZE, 1).unwrap();
        assert_eq!(s.stack_size(), MIN_STACK_SIZE);
        s.set_limit(LIMIT_STACK_SIZE, 100_000).unwrap();
        assert_eq!(s.stack_size(), 102_400);
        assert_eq!(
            s.set_limit(LIMIT_STACK_SIZE, MAX_STACK_SIZE + 1),
            Err(ErrorCode::InvalidValue)
        );
        assert_eq!(s.stack_size(), 102_400, "nothing changed on error");
        assert_eq!(
            s.set_limit(3 /* device runtime sync depth */, 2),
            Err(ErrorCode::UnsupportedLimit)
        );
        assert_eq!(s.limit(99), Err(ErrorCode::UnsupportedLimit));
        s.reset_limits();
        assert_eq!(s.stack_size(), DEFAULT_STACK_SIZE);
    }

    #[test]
    fn flags() {
        let s = DeviceSettings::default();
        assert!(s.set_flags(0x4 | 0x8).is_ok());
        assert_eq!(s.flags(), 0xc);
        assert_eq!(s.set_flags(0x1 | 0x2), Err(ErrorCode::InvalidValue));
        assert_eq!(s.set_flags(0x20), Err(ErrorCode::InvalidValue));
        assert_eq!(s.flags(), 0xc);
    }
}
