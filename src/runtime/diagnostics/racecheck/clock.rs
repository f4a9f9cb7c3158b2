//! Vector clocks, and the integer-keyed maps race detection keeps them in.

use std::collections::HashMap;

/// A vector clock: sorted (component, tick) pairs; absent components are 0.
#[derive(Clone, Default, Debug, PartialEq, Eq)]
pub struct Clock(pub(super) Vec<(u64, u64)>);

impl Clock {
    pub fn get(&self, c: u64) -> u64 {
        match self.0.binary_search_by_key(&c, |e| e.0) {
            Ok(i) => self.0[i].1,
            Err(_) => 0,
        }
    }
    pub fn set(&mut self, c: u64, t: u64) {
        match self.0.binary_search_by_key(&c, |e| e.0) {
            Ok(i) => self.0[i].1 = self.0[i].1.max(t),
            Err(i) => self.0.insert(i, (c, t)),
        }
    }
    /// Joins `o` into `self`, in place (clocks are small; most joins add nothing new).
    pub fn join(&mut self, o: &Clock) {
        for &(c, t) in &o.0 {
            self.set(c, t);
        }
    }
}

/// Hashes integer keys with one multiplication (SipHash costs more than the rest of a hook).
#[derive(Default)]
pub(super) struct IntHasher(u64);

impl std::hash::Hasher for IntHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ b as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = (self.0 ^ n)
            .wrapping_mul(0x9E37_79B9_7F4A_7C15)
            .rotate_left(29);
    }
    fn write_usize(&mut self, n: usize) {
        self.write_u64(n as u64);
    }
}

pub(super) type IntMap<K, V> = HashMap<K, V, std::hash::BuildHasherDefault<IntHasher>>;

#[cfg(test)]
mod tests {
    use super::*;

    fn clock(v: &[(u64, u64)]) -> Clock {
        let mut c = Clock::default();
        for &(k, t) in v {
            c.set(k, t);
        }
        c
    }

    #[test]
    fn clocks_join_and_order() {
        let mut a = clock(&[(1, 3), (5, 1)]);
        a.join(&clock(&[(2, 7), (5, 4)]));
        assert_eq!(a, clock(&[(1, 3), (2, 7), (5, 4)]));
        assert_eq!(a.get(9), 0);
        a.set(1, 2);
        assert_eq!(a.get(1), 3, "set never lowers a component");
    }
}
