//! One id space for what the core's dependency bookkeeping names by number: streams (and events,
//! from the same counter), the lanes of graph event nodes, racecheck's host threads, and the
//! default streams. A deadlock report, a wait-for graph and racecheck's vector clocks all key on
//! these numbers, so the ranges are disjoint and every id is allocated here:
//!
//! ```text
//!   [1, LANE_BASE)              streams and events (next_object, per runtime)
//!   [LANE_BASE, HOST_BASE)      lanes of graph event nodes (next_lane)
//!   [HOST_BASE, DEFAULT_BASE)   racecheck's host threads (next_host)
//!   [DEFAULT_BASE, u64::MAX]    the default streams, one per device (default_stream_id)
//! ```

use std::sync::atomic::{AtomicU64, Ordering};

/// The first lane id.
pub(crate) const LANE_BASE: u64 = 1 << 61;
/// The first host-thread id.
pub(crate) const HOST_BASE: u64 = 1 << 62;
/// Devices that have a default-stream id.
const MAX_DEVICES: u64 = 64;
/// The lowest default-stream id.
pub(crate) const DEFAULT_BASE: u64 = u64::MAX - (MAX_DEVICES - 1);

static LANES: AtomicU64 = AtomicU64::new(LANE_BASE);
static HOSTS: AtomicU64 = AtomicU64::new(HOST_BASE);

/// The next stream or event id from a runtime's counter (which starts at 0).
pub(crate) fn next_object(counter: &AtomicU64) -> u64 {
    let id = counter.fetch_add(1, Ordering::Relaxed) + 1;
    assert!(id < LANE_BASE, "biren: stream and event ids ran out");
    id
}

/// A new lane id.
pub(crate) fn next_lane() -> u64 {
    let id = LANES.fetch_add(1, Ordering::Relaxed);
    assert!(id < HOST_BASE, "biren: lane ids ran out");
    id
}

/// A new host-thread id.
pub(crate) fn next_host() -> u64 {
    let id = HOSTS.fetch_add(1, Ordering::Relaxed);
    assert!(id < DEFAULT_BASE, "biren: host-thread ids ran out");
    id
}

/// The default stream of `device` (from the top of the space down).
pub(crate) const fn default_stream_id(device: usize) -> u64 {
    u64::MAX - device as u64
}

/// True for a lane's id.
pub(crate) fn is_lane(id: u64) -> bool {
    (LANE_BASE..HOST_BASE).contains(&id)
}

/// True for a host thread's id.
pub(crate) fn is_host(id: u64) -> bool {
    (HOST_BASE..DEFAULT_BASE).contains(&id)
}

/// How messages name the stream (or lane) `id`.
pub(crate) fn stream_name(id: u64) -> String {
    if id >= DEFAULT_BASE {
        "the default stream".to_string()
    } else if is_lane(id) {
        format!("event node lane #{} of a graph launch", id - LANE_BASE)
    } else {
        format!("stream #{id}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streams_lanes_host_threads_and_default_streams_never_share_an_id() {
        let c = AtomicU64::new(0);
        let (s, l, h) = (next_object(&c), next_lane(), next_host());
        assert!(s >= 1 && !is_lane(s) && !is_host(s) && s < DEFAULT_BASE);
        assert!(is_lane(l) && !is_host(l));
        assert!(is_host(h) && !is_lane(h));
        for d in 0..MAX_DEVICES as usize {
            let id = default_stream_id(d);
            assert!(id >= DEFAULT_BASE && !is_lane(id) && !is_host(id));
        }
        assert_ne!(l, h);
        assert!(stream_name(l).starts_with("event node lane"));
        assert_eq!(stream_name(default_stream_id(3)), "the default stream");
        assert_eq!(stream_name(s), format!("stream #{s}"));
    }
}
