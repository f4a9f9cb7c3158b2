//! Flags of page-locked host allocations and registered host ranges (birenHostAlloc,
//! birenHostRegister), by base address. The ranges themselves live in the runtime's host
//! memory table, where the copy checks and birenPointerGetAttributes find them.

use crate::runtime::lock_order::{Rank, RankedRwLock};
use std::collections::HashMap;

pub struct HostFlags {
    map: RankedRwLock<HashMap<usize, u32>>,
}

impl Default for HostFlags {
    fn default() -> HostFlags {
        HostFlags {
            map: RankedRwLock::new(Rank::Leaf, HashMap::new()),
        }
    }
}

impl HostFlags {
    pub fn set(&self, base: usize, flags: u32) {
        self.map.write().insert(base, flags);
    }
    pub fn get(&self, base: usize) -> u32 {
        self.map.read().get(&base).copied().unwrap_or(0)
    }
    pub fn remove(&self, base: usize) {
        self.map.write().remove(&base);
    }
}
