//! Advice drawn from the seed's lessons, each given at most once per process (validator on).

use crate::runtime::diagnostics;
use crate::runtime::lock_order::{Rank, RankedMutex};
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
static SYNC_WINDOW: RankedMutex<Option<(Instant, u32)>> = RankedMutex::new(Rank::Leaf, None);
pub(crate) const SYNCS_PER_SECOND: u32 = 100;

/// A birenDeviceSynchronize: many per second means the program syncs the whole device in a loop.
pub fn device_synchronized() {
    if !diagnostics::validator_on() {
        return;
    }
    let now = Instant::now();
    // The count under the window's lock, the advice after it (the sink is not called under it).
    let count = {
        let mut w = SYNC_WINDOW.lock();
        let (start, n) = w.get_or_insert((now, 0));
        if now.duration_since(*start) > Duration::from_secs(1) {
            *start = now;
            *n = 0;
        }
        *n += 1;
        *n
    };
    if count == SYNCS_PER_SECOND && DEVICE_SYNC_LOOP.first() {
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

static REPEATED_LAUNCHES: Once = Once::new();

/// Kernels of at most this many threads in all count as small (launch cost matters for them).
pub(crate) const SMALL_KERNEL_THREADS: u64 = 1 << 16;
/// Repetitions of one sequence of small launches after which a graph is suggested.
pub(crate) const REPEATS_FOR_GRAPH: usize = 50;
const MAX_PERIOD: usize = 16;

/// A host thread's recent small launches: the kernels, and the period they repeat with.
#[derive(Default)]
struct LaunchHistory {
    recent: std::collections::VecDeque<usize>,
    period: usize,
    /// Launches that followed the current period's pattern.
    matched: usize,
}

thread_local! {
    static HISTORY: std::cell::RefCell<LaunchHistory> = std::cell::RefCell::new(LaunchHistory::default());
}

impl LaunchHistory {
    /// Records `kernel`; returns the repeating sequence once it has repeated often enough.
    fn push(&mut self, kernel: usize) -> Option<Vec<usize>> {
        self.recent.push_back(kernel);
        if self.recent.len() > 2 * MAX_PERIOD {
            self.recent.pop_front();
        }
        let n = self.recent.len();
        if self.period > 0 && n > self.period && self.recent[n - 1 - self.period] == kernel {
            self.matched += 1;
        } else {
            // Find the shortest period of two or more launches the recent history repeats with.
            self.period = 0;
            self.matched = 0;
            for p in 2..=MAX_PERIOD.min(n / 2) {
                if (0..p).all(|i| self.recent[n - 1 - i] == self.recent[n - 1 - p - i]) {
                    self.period = p;
                    self.matched = p;
                    break;
                }
            }
        }
        let p = self.period;
        // A pattern of one kernel repeated is not "a sequence"; nor is a period made of a
        // shorter one.
        let distinct = p > 0 && (1..p).any(|i| self.recent[n - 1 - i] != kernel);
        (distinct && self.matched >= p * REPEATS_FOR_GRAPH)
            .then(|| self.recent.iter().skip(n - p).copied().collect())
    }
}

/// A small kernel launched by this host thread (validator on): a sequence of small launches
/// repeated in the same order many times is what a graph is for.
pub fn small_kernel_launched(kernel: usize, threads: u64, name: impl Fn(usize) -> String) {
    if !diagnostics::validator_on()
        || threads > SMALL_KERNEL_THREADS
        || REPEATED_LAUNCHES.0.load(Ordering::Relaxed)
    {
        return;
    }
    let Some(seq) = HISTORY.with(|h| h.borrow_mut().push(kernel)) else {
        return;
    };
    if REPEATED_LAUNCHES.first() {
        let names: Vec<String> = seq.iter().map(|&k| name(k)).collect();
        diagnostics::advice(&format!(
            "this host thread has launched the same sequence of {} small kernels ({}) {REPEATS_FOR_GRAPH} times in a row: \
             each launch pays the API's cost again. Capture one iteration into a graph once (birenStreamBeginCapture, the \
             launches, birenStreamEndCapture, birenGraphInstantiate) and launch it with birenGraphLaunch: one call per \
             iteration instead of {}.",
            seq.len(),
            names.join(", "),
            seq.len()
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_repeated_sequence_is_noticed_once_it_repeats_enough() {
        let mut h = LaunchHistory::default();
        let pattern = [1usize, 2, 3];
        let mut found = None;
        for round in 0..REPEATS_FOR_GRAPH + 2 {
            for &k in &pattern {
                if let Some(s) = h.push(k) {
                    found.get_or_insert((round, s));
                }
            }
        }
        let (round, seq) = found.expect("noticed");
        assert!(
            (REPEATS_FOR_GRAPH - 1..=REPEATS_FOR_GRAPH).contains(&round),
            "{round}"
        );
        let mut rotated = seq.clone();
        rotated.sort();
        assert_eq!(rotated, vec![1, 2, 3]);
    }

    #[test]
    fn one_kernel_repeated_or_no_pattern_is_not_a_sequence() {
        let mut h = LaunchHistory::default();
        for _ in 0..1000 {
            assert!(h.push(7).is_none());
        }
        // A pattern broken every 10 rounds never repeats 50 times in a row.
        let mut h = LaunchHistory::default();
        for round in 0..500 {
            for k in [1usize, 2, 3] {
                assert!(h.push(k).is_none());
            }
            if round % 10 == 9 {
                assert!(h.push(4).is_none());
            }
        }
    }
}
