//! Handle registry: maps opaque handle values to live objects by index + generation, so that a
//! destroyed, reused or forged handle is looked up and refused, never dereferenced.
//!
//! A handle is `(generation << 32) | (kind << 24) | (index + 1)`; zero is never a handle. The
//! kind is the registry's own tag (`HandleKind`), so a handle of one type passed where another is
//! expected (a stream as an event) fails the lookup. Slots live in lazily allocated segments
//! that never move, each guarded by its own small lock, so lookups from many threads do not
//! contend on one lock.

use crate::runtime::lock_order::{Rank, RankedMutex};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

const SEGMENT_BITS: u32 = 12;
const SEGMENT_SIZE: usize = 1 << SEGMENT_BITS;
const SEGMENTS: usize = 1024; // 4M handles of each kind
const INDEX_BITS: u32 = 24;
const INDEX_MASK: u64 = (1 << INDEX_BITS) - 1;

/// The type of object a registry holds; part of every handle it gives out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum HandleKind {
    Stream = 1,
    Event = 2,
    Graph = 3,
    GraphNode = 4,
    GraphExec = 5,
    MemPool = 6,
    Array = 7,
    TextureObject = 8,
    SurfaceObject = 9,
}

struct Slot<T> {
    generation: u32,
    value: Option<Arc<T>>,
}

type Segment<T> = Box<[RankedMutex<Slot<T>>]>;

pub struct Registry<T> {
    kind: HandleKind,
    segments: Box<[OnceLock<Segment<T>>]>,
    free: RankedMutex<FreeList>,
    live: AtomicUsize,
}

struct FreeList {
    indices: Vec<u32>,
    next_fresh: u32,
}

impl<T> Registry<T> {
    pub fn new(kind: HandleKind) -> Registry<T> {
        Registry {
            kind,
            segments: (0..SEGMENTS).map(|_| OnceLock::new()).collect(),
            free: RankedMutex::new(
                Rank::Leaf,
                FreeList {
                    indices: Vec::new(),
                    next_fresh: 0,
                },
            ),
            live: AtomicUsize::new(0),
        }
    }

    fn make(&self, index: usize, generation: u32) -> u64 {
        ((generation as u64) << 32) | ((self.kind as u64) << INDEX_BITS) | (index as u64 + 1)
    }

    /// The slot index and generation of `handle`, if it is a handle of this registry's kind.
    fn split(&self, handle: u64) -> Option<(usize, u32)> {
        let low = handle & INDEX_MASK;
        if low == 0 || (handle >> INDEX_BITS) & 0xff != self.kind as u64 {
            return None;
        }
        Some((low as usize - 1, (handle >> 32) as u32))
    }

    fn slot(&self, index: usize) -> Option<&RankedMutex<Slot<T>>> {
        let seg = self.segments.get(index >> SEGMENT_BITS)?.get()?;
        Some(&seg[index & (SEGMENT_SIZE - 1)])
    }

    fn slot_or_create(&self, index: usize) -> &RankedMutex<Slot<T>> {
        let seg = self.segments[index >> SEGMENT_BITS].get_or_init(|| {
            (0..SEGMENT_SIZE)
                .map(|_| {
                    RankedMutex::new(
                        Rank::Leaf,
                        Slot {
                            generation: 1,
                            value: None,
                        },
                    )
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
        Some(self.make(index as usize, s.generation))
    }

    /// The live object behind `handle`, if any.
    pub fn get(&self, handle: u64) -> Option<Arc<T>> {
        let (index, generation) = self.split(handle)?;
        let s = self.slot(index)?.lock();
        if s.generation != generation {
            return None;
        }
        s.value.clone()
    }

    /// Unregisters `handle`; its value from now on answers no lookup.
    pub fn remove(&self, handle: u64) -> Option<Arc<T>> {
        let (index, generation) = self.split(handle)?;
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
                    let handle = self.make(si * SEGMENT_SIZE + i, s.generation);
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

    /// The slot indices of every live entry for which `pred` is true.
    pub fn indices_where(&self, pred: impl Fn(&T) -> bool) -> Vec<usize> {
        let mut out = Vec::new();
        for (si, seg) in self.segments.iter().enumerate() {
            let Some(seg) = seg.get() else { break };
            for (i, slot) in seg.iter().enumerate() {
                if slot.lock().value.as_ref().is_some_and(|v| pred(v)) {
                    out.push(si * SEGMENT_SIZE + i);
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
        let r = Registry::new(HandleKind::Stream);
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
        let r = Registry::new(HandleKind::Stream);
        let a = r.insert(Arc::new(1)).unwrap();
        r.remove(a);
        let b = r.insert(Arc::new(2)).unwrap();
        assert_eq!(a & 0xffff_ffff, b & 0xffff_ffff, "same slot");
        assert!(r.get(a).is_none());
        assert_eq!(*r.get(b).unwrap(), 2);
    }

    #[test]
    fn forged_handles_are_refused() {
        let r: Registry<i32> = Registry::new(HandleKind::Stream);
        for h in [0u64, 1, 0xdead_beef, u64::MAX, 0x1_0000_0001] {
            assert!(r.get(h).is_none());
            assert!(r.remove(h).is_none());
        }
    }

    #[test]
    fn a_handle_of_another_kind_is_refused() {
        let streams = Registry::new(HandleKind::Stream);
        let events = Registry::new(HandleKind::Event);
        let s = streams.insert(Arc::new(1)).unwrap();
        let e = events.insert(Arc::new(2)).unwrap();
        assert!(events.get(s).is_none(), "a stream handle is not an event");
        assert!(events.remove(s).is_none());
        assert!(streams.get(e).is_none(), "an event handle is not a stream");
        assert_eq!(*events.get(e).unwrap(), 2);
        assert_eq!(*streams.get(s).unwrap(), 1);
    }

    #[test]
    fn many_handles_and_remove_where() {
        let r = Registry::new(HandleKind::Stream);
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
