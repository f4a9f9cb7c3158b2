//! Advice drawn from the seed's lessons, each given at most once per process (validator on).

use crate::runtime::diagnostics;
use parking_lot::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

struct Once(AtomicBool);

impl Once {
    const fn new() -> Once {
        Once(AtomicBool::new(false))
    }
    fn first(&self) -> bool {
        !self.0.swap(true, Ordering::Relaxed)
    }
}

static DEVICE_SYNC_LOOP: Once = Once::new();
static DEFAULT_STREAM: Once = Once::new();
static EVENT_CHURN: Once = Once::new();
static MANY_STREAMS: Once = Once::new();

/// Device synchronizes in the current one-second window.
static SYNC_WINDOW: Mutex<Option<(Instant, u32)>> = Mutex::new(None);
pub(crate) const SYNCS_PER_SECOND: u32 = 100;

/// A birenDeviceSynchronize: many per second means the program syncs the whole device in a loop.
pub fn device_synchronized() {
    if !diagnostics::validator_on() {
        return;
    }
    let now = Instant::now();
    let mut w = SYNC_WINDOW.lock();
    let (start, n) = w.get_or_insert((now, 0));
    if now.duration_since(*start) > Duration::from_secs(1) {
        *start = now;
        *n = 0;
    }
    *n += 1;
    if *n == SYNCS_PER_SECOND && DEVICE_SYNC_LOOP.first() {
        diagnostics::advice(&format!(
            "birenDeviceSynchronize was called {SYNCS_PER_SECOND} times within a second. Each device-wide sync is a host round trip \
             that drains every stream; synchronize only the stream (birenStreamSynchronize) or the event (birenEventSynchronize) \
             you need, once per frame or batch (the seed's image pipeline gained 30% going from 4 device syncs per frame to 1)."
        ));
    }
}

/// Work on the default stream had to wait for `blocking` other streams.
pub fn default_stream_serialized(blocking: usize) {
    if diagnostics::validator_on() && DEFAULT_STREAM.first() {
        diagnostics::advice(&format!(
            "work enqueued on the default stream waited for {blocking} other stream(s), and later work in every blocking stream \
             will wait for it: the default stream serializes the device. Use explicit streams, or create them with \
             birenStreamNonBlocking."
        ));
    }
}

static EVENTS_CREATED: AtomicU64 = AtomicU64::new(0);
static EVENTS_DESTROYED: AtomicU64 = AtomicU64::new(0);

pub fn event_created() {
    let c = EVENTS_CREATED.fetch_add(1, Ordering::Relaxed) + 1;
    if diagnostics::validator_on()
        && c >= 1000
        && c > 10 * (EVENTS_DESTROYED.load(Ordering::Relaxed) + 1)
        && EVENT_CHURN.first()
    {
        diagnostics::advice(&format!(
            "{c} events were created but only {} destroyed: every birenEventCreate needs a birenEventDestroy (leaked events are \
             the seed's classic memory leak). Reuse events: re-recording one replaces its captured state.",
            EVENTS_DESTROYED.load(Ordering::Relaxed)
        ));
    }
}

pub fn event_destroyed() {
    EVENTS_DESTROYED.fetch_add(1, Ordering::Relaxed);
}

/// Streams outnumbering compute units by this factor, all with work in flight at once, earn the
/// advice (a few more streams than units is normal: copies and waits overlap kernels).
const BUSY_STREAMS_PER_UNIT: usize = 4;

/// `busy` streams of a device with `units` compute units had work in flight at the same time
/// (seen at a device synchronize).
pub fn streams_busy(busy: usize, units: usize, device: usize) {
    if diagnostics::validator_on() && busy > units * BUSY_STREAMS_PER_UNIT && MANY_STREAMS.first() {
        diagnostics::advice(&format!(
            "{busy} streams had work in flight at once on device {device}, which has {units} compute units: streams far beyond \
             the number of compute units add overhead without adding parallelism (the seed saw 100 streams run slower than a few)."
        ));
    }
}
