//! Device symbols: the globals a program declares with BIREN_DEVICE_SYMBOL (CUDA's __device__
//! and __constant__ variables), by address. Registered by constructors before `main`, so the
//! table does not wait for `birenInit`.

use crate::runtime::error::{ErrorCode, Result};
use crate::runtime::lock_order::{Rank, RankedRwLock};
use crate::runtime::memory::Region;
use std::collections::BTreeMap;

struct Symbol {
    size: usize,
    name: String,
}

static SYMBOLS: RankedRwLock<BTreeMap<usize, Symbol>> =
    RankedRwLock::new(Rank::Leaf, BTreeMap::new());

/// Records the symbol `[addr, addr + size)`. Registering the same address again replaces the
/// entry; a range overlapping another symbol is `InvalidValue`.
pub fn register(addr: usize, size: usize, name: String) -> Result<()> {
    let end = addr.checked_add(size).ok_or(ErrorCode::InvalidValue)?;
    if addr == 0 || size == 0 {
        return Err(ErrorCode::InvalidValue);
    }
    let mut m = SYMBOLS.write();
    let overlaps = m
        .range(..end)
        .next_back()
        .is_some_and(|(&b, s)| b != addr && b + s.size > addr)
        || m.range(addr + 1..end).next().is_some();
    if overlaps {
        return Err(ErrorCode::InvalidValue);
    }
    m.insert(addr, Symbol { size, name });
    Ok(())
}

/// The symbol that starts at `addr`: its size and name.
pub fn lookup(addr: usize) -> Option<(usize, String)> {
    SYMBOLS.read().get(&addr).map(|s| (s.size, s.name.clone()))
}

/// The symbol that contains `p`, if any.
pub fn find(p: usize) -> Option<Region> {
    let m = SYMBOLS.read();
    let (&base, s) = m.range(..=p).next_back()?;
    (p < base + s.size).then_some(Region { base, size: s.size })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn register_and_find() {
        static mut A: [u8; 64] = [0; 64];
        static mut B: [u8; 64] = [0; 64];
        let a = std::ptr::addr_of!(A) as usize;
        let b = std::ptr::addr_of!(B) as usize;
        register(a, 64, "A".into()).unwrap();
        register(a, 64, "A".into()).unwrap();
        register(b, 64, "B".into()).unwrap();
        assert_eq!(lookup(a).unwrap().0, 64);
        assert_eq!(find(a + 63).unwrap().base, a);
        assert!(lookup(a + 1).is_none());
        assert_eq!(register(a + 8, 4, "C".into()), Err(ErrorCode::InvalidValue));
        assert_eq!(register(0, 4, "N".into()), Err(ErrorCode::InvalidValue));
        assert_eq!(register(a, 0, "Z".into()), Err(ErrorCode::InvalidValue));
    }
}
