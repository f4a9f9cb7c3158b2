//! Handle registry: maps opaque handle values to live objects by index + generation, so that a
//! destroyed, reused or forged handle is looked up and refused, never dereferenced.
//!
//! A handle is `(generation << 32) | (index + 1)`; zero is never a handle. Slots live in
//! lazily allocated segments that never move, each guarded by its own small lock, so lookups
//! from many threads do not contend on one lock.

use parking_lot::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

const SEGMENT_BITS: u32 = 12;
const SEGMENT_SIZE: usize = 1 << SEGMENT_BITS;
const SEGMENTS: usize = 1024; // 4M handles of each kind

struct Slot<T> {
    generation: u32,
    value: Option<Arc<T>>,
}

type Segment<T> = Box<[Mutex<Slot<T>>]>;

pub struct Registry<T> {
    segments: Box<[OnceLock<Segment<T>>]>,
    free: Mutex<FreeList>,
    live: AtomicUsize,
}

struct FreeList {
    indices: Vec<u32>,
    next_fresh: u32,
}

fn split(handle: u64) -> Option<(usize, u32)> {
    let low = (handle & 0xffff_ffff) as usize;
    if low == 0 {
        return None;
    }
    Some((low - 1, (handle >> 32) as u32))
}

impl<T> Default for Registry<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T> Registry<T> {
    pub fn new() -> Registry<T> {
        Registry {
            segments: (0..SEGMENTS).map(|_| OnceLock::new()).collect(),
            free: Mutex::new(FreeList {
                indices: Vec::new(),
                next_fresh: 0,
            }),
            live: AtomicUsize::new(0),
        }
    }

    fn slot(&self, index: usize) -> Option<&Mutex<Slot<T>>> {
        let seg = self.segments.get(index >> SEGMENT_BITS)?.get()?;
        Some(&seg[index & (SEGMENT_SIZE - 1)])
    }

    fn slot_or_create(&self, index: usize) -> &Mutex<Slot<T>> {
        let seg = self.segments[index >> SEGMENT_BITS].get_or_init(|| {
            (0..SEGMENT_SIZE)
                .map(|_| {
                    Mutex::new(Slot {
                        generation: 1,
                        value: None,
                    })
                })
                .collect()
        });
        &seg[index & (SEGMENT_SIZE - 1)]
    }

    /// Registers `value`; `None` when every slot is taken.
    pub fn insert(&self, value: Arc<T>) -> Option<u64> {
        let index = {
            let mut f = self.free.lock();
            match f.indices.pop() {
                Some(i) => i,
                None => {
                    if f.next_fresh as usize >= SEGMENTS * SEGMENT_SIZE {
                        return None;
                    }
                    f.next_fresh += 1;
                    f.next_fresh - 1
                }
            }
        };
        let mut s = self.slot_or_create(index as usize).lock();
        s.value = Some(value);
        self.live.fetch_add(1, Ordering::Relaxed);
        Some(((s.generation as u64) << 32) | (index as u64 + 1))
    }

    /// The live object behind `handle`, if any.
    pub fn get(&self, handle: u64) -> Option<Arc<T>> {
        let (index, generation) = split(handle)?;
        let s = self.slot(index)?.lock();
        if s.generation != generation {
            return None;
        }
        s.value.clone()
    }

    /// Unregisters `handle`; its value from now on answers no lookup.
    pub fn remove(&self, handle: u64) -> Option<Arc<T>> {
        let (index, generation) = split(handle)?;
        let v = {
            let mut s = self.slot(index)?.lock();
            if s.generation != generation || s.value.is_none() {
                return None;
            }
            s.generation = s.generation.wrapping_add(1).max(1);
            s.value.take()
        };
        self.free.lock().indices.push(index as u32);
        self.live.fetch_sub(1, Ordering::Relaxed);
        v
    }

    /// Removes and returns every live entry for which `pred` is true, with its handle.
    pub fn remove_where(&self, pred: impl Fn(&T) -> bool) -> Vec<(u64, Arc<T>)> {
        let mut out = Vec::new();
        for (si, seg) in self.segments.iter().enumerate() {
            let Some(seg) = seg.get() else { break };
            for (i, slot) in seg.iter().enumerate() {
                let mut s = slot.lock();
                if s.value.as_ref().is_some_and(|v| pred(v)) {
                    let handle =
                        ((s.generation as u64) << 32) | ((si * SEGMENT_SIZE + i) as u64 + 1);
                    s.generation = s.generation.wrapping_add(1).max(1);
                    let v = s.value.take().expect("checked above");
                    drop(s);
                    self.free
                        .lock()
                        .indices
                        .push((si * SEGMENT_SIZE + i) as u32);
                    self.live.fetch_sub(1, Ordering::Relaxed);
                    out.push((handle, v));
                }
            }
        }
        out
    }

    /// Every live entry for which `pred` is true (without removing it).
    pub fn collect_where(&self, pred: impl Fn(&T) -> bool) -> Vec<Arc<T>> {
        let mut out = Vec::new();
        for seg in self.segments.iter() {
            let Some(seg) = seg.get() else { break };
            for slot in seg.iter() {
                let s = slot.lock();
                if let Some(v) = s.value.as_ref().filter(|v| pred(v)) {
                    out.push(v.clone());
                }
            }
        }
        out
    }

    pub fn live(&self) -> usize {
        self.live.load(Ordering::Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn insert_get_remove() {
        let r = Registry::new();
        let h = r.insert(Arc::new(7)).unwrap();
        assert_ne!(h, 0);
        assert_eq!(*r.get(h).unwrap(), 7);
        assert_eq!(r.live(), 1);
        assert_eq!(*r.remove(h).unwrap(), 7);
        assert!(r.get(h).is_none());
        assert!(r.remove(h).is_none(), "double remove is refused");
        assert_eq!(r.live(), 0);
    }

    #[test]
    fn reused_slot_refuses_the_old_handle() {
        let r = Registry::new();
        let a = r.insert(Arc::new(1)).unwrap();
        r.remove(a);
        let b = r.insert(Arc::new(2)).unwrap();
        assert_eq!(a & 0xffff_ffff, b & 0xffff_ffff, "same slot");
        assert!(r.get(a).is_none());
        assert_eq!(*r.get(b).unwrap(), 2);
    }

    #[test]
    fn forged_handles_are_refused() {
        let r: Registry<i32> = Registry::new();
        for h in [0u64, 1, 0xdead_beef, u64::MAX, 0x1_0000_0001] {
            assert!(r.get(h).is_none());
            assert!(r.remove(h).is_none());
        }
    }

    #[test]
    fn many_handles_and_remove_where() {
        let r = Registry::new();
        let hs: Vec<u64> = (0..10_000)
            .map(|i| r.insert(Arc::new(i)).unwrap())
            .collect();
        assert_eq!(r.live(), 10_000);
        let odd = r.remove_where(|v| v % 2 == 1);
        assert_eq!(odd.len(), 5_000);
        assert!(r.get(hs[1]).is_none());
        assert_eq!(*r.get(hs[2]).unwrap(), 2);
        assert_eq!(r.collect_where(|_| true).len(), 5_000);
    }
}
