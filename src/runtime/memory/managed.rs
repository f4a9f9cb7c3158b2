//! Managed allocations (birenMallocManaged): device allocations marked as usable from host and
//! device alike, with their attach flags and the advice given for them.

use parking_lot::RwLock;
use std::collections::HashMap;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Managed {
    pub device: usize,
    pub flags: u32,
    pub read_mostly: bool,
    /// Preferred location: a device, -1 the host, None no preference.
    pub preferred: Option<i32>,
}

#[derive(Default)]
pub struct ManagedSet {
    map: RwLock<HashMap<usize, Managed>>,
}

impl ManagedSet {
    pub fn insert(&self, base: usize, m: Managed) {
        self.map.write().insert(base, m);
    }
    pub fn get(&self, base: usize) -> Option<Managed> {
        self.map.read().get(&base).copied()
    }
    pub fn update(&self, base: usize, f: impl FnOnce(&mut Managed)) {
        if let Some(m) = self.map.write().get_mut(&base) {
            f(m);
        }
    }
    pub fn remove(&self, base: usize) {
        self.map.write().remove(&base);
    }
    pub fn on_reset(&self, device: usize) {
        self.map.write().retain(|_, m| m.device != device);
    }
}
