//! Flags of page-locked host allocations and registered host ranges (birenHostAlloc,
//! birenHostRegister), by base address. The ranges themselves live in the runtime's host
//! memory table, where the copy checks and birenPointerGetAttributes find them.

use parking_lot::RwLock;
use std::collections::HashMap;

#[derive(Default)]
pub struct HostFlags {
    map: RwLock<HashMap<usize, u32>>,
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
