//! The streams of one device other than its default stream: kept until destroyed and drained.
//!
//! Adding and retiring a stream are O(1) amortised whatever the number of live streams: a
//! destroyed stream that still has work stays in the set (device-wide waits and resets must see
//! it) and is swept out in bulk once such streams make up half of the set.

use super::stream::StreamCore;
use std::collections::HashMap;
use std::sync::Arc;

/// Fewer destroyed-but-busy streams than this are never swept (a sweep is not worth it).
const SWEEP_MIN: usize = 64;

#[derive(Default)]
pub struct StreamSet {
    by_id: HashMap<u64, Arc<StreamCore>>,
    /// Streams not destroyed yet.
    live: usize,
    /// Destroyed streams that had work when they were retired (still in `by_id`, maybe idle).
    retired_busy: usize,
    /// The next sweep waits until `retired_busy` reaches this: twice what the last sweep left,
    /// so that streams that stay busy are not rescanned at every add (amortised O(1)).
    sweep_at: usize,
}

impl StreamSet {
    pub fn add(&mut self, s: Arc<StreamCore>) {
        if self.retired_busy >= SWEEP_MIN.max(self.sweep_at)
            && self.retired_busy * 2 >= self.by_id.len()
        {
            self.by_id.retain(|_, s| !(s.is_destroyed() && s.is_idle()));
            self.retired_busy = self.by_id.len() - self.live;
            self.sweep_at = self.retired_busy * 2;
        }
        self.by_id.insert(s.id, s);
        self.live += 1;
    }

    /// Forgets a destroyed stream now if it is idle, else at a later sweep.
    pub fn retire(&mut self, s: &Arc<StreamCore>) {
        if !self.by_id.contains_key(&s.id) {
            return;
        }
        self.live -= 1;
        if s.is_idle() {
            self.by_id.remove(&s.id);
        } else {
            self.retired_busy += 1;
        }
    }

    pub fn live(&self) -> usize {
        self.live
    }

    pub fn iter(&self) -> impl Iterator<Item = &Arc<StreamCore>> {
        self.by_id.values()
    }

    /// Empties the set (a reset), returning every stream it held.
    pub fn take(&mut self) -> Vec<Arc<StreamCore>> {
        self.live = 0;
        self.retired_busy = 0;
        self.sweep_at = 0;
        self.by_id.drain().map(|(_, s)| s).collect()
    }
}
