//! Managed allocations (birenMallocManaged): device allocations marked as usable from host and
//! device alike, with their attach flags and the advice given for them.

use crate::runtime::lock_order::{Rank, RankedRwLock};
use std::collections::HashMap;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Managed {
    pub device: usize,
    pub flags: u32,
    pub read_mostly: bool,
    /// Preferred location: a device, -1 the host, None no preference.
    pub preferred: Option<i32>,
}

pub struct ManagedSet {
    map: RankedRwLock<HashMap<usize, Managed>>,
}

impl Default for ManagedSet {
    fn default() -> ManagedSet {
        ManagedSet {
            map: RankedRwLock::new(Rank::Leaf, HashMap::new()),
        }
    }
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
