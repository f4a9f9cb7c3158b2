//! Property test of stream capture (issue 14): a random sequence of kernel launches, copies,
//! memsets, 2D copies and fills (a region seen as 8 rows of 8 bytes) and event-based fork/join
//! between three streams, issued once directly on the streams
//! and once while capturing (then instantiated and launched as a graph), leaves device memory in
//! the same state.
//!
//! The sequences are race-free by construction: a vector clock per stream (advanced by each op,
//! merged by each record/wait pair) drops any generated op that would touch a region an
//! unordered op of another stream touches too, so both runs have exactly one outcome. The three
//! streams fork from the first at the start and join back at the end, as a capture requires.
//!
//! Driven through the C ABI as a C program would (raw pointers into the `extern "C"` exports),
//! like tests/model.rs. `BIREN_CAPTURE_CASES` (default 64) sets the number of cases.

#![allow(non_snake_case)]

use biren_runtime::ffi::capture::*;
use biren_runtime::ffi::control::*;
use biren_runtime::ffi::event::*;
use biren_runtime::ffi::graph::*;
use biren_runtime::ffi::launch::*;
use biren_runtime::ffi::memory::*;
use biren_runtime::ffi::memory2d::*;
use biren_runtime::ffi::stream::*;
use biren_runtime::ffi::types::birenError_t::*;
use biren_runtime::ffi::types::*;
use proptest::prelude::*;
use std::ffi::c_void;
use std::sync::{Mutex, Once};

const STREAMS: usize = 3;
const REGIONS: usize = 6;
const REGION: usize = 64;

static INIT: Once = Once::new();
static LOCK: Mutex<()> = Mutex::new(());

fn init() {
    INIT.call_once(|| {
        std::env::set_var("BIREN_COMPUTE_UNITS", "2");
        std::env::set_var("BIREN_VALIDATOR", "0");
        assert_eq!(birenInit(), BIREN_SUCCESS);
    });
}

/// args: (u8 *region, u32 value): thread t writes value + t * 7 to region[t].
unsafe extern "C" fn fill_kernel(args: *mut *mut c_void) {
    let base = *(*args as *const *mut u8);
    let v = *(*args.add(1) as *const u32);
    let t = birenThreadIdx().x as usize;
    *base.add(t) = (v as usize + t * 7) as u8;
}

/// args: (u8 *dst, const u8 *src): thread t doubles src[t] into dst[t].
unsafe extern "C" fn double_kernel(args: *mut *mut c_void) {
    let dst = *(*args as *const *mut u8);
    let src = *(*args.add(1) as *const *const u8);
    let t = birenThreadIdx().x as usize;
    *dst.add(t) = (*src.add(t)).wrapping_mul(2);
}

#[derive(Clone, Copy, Debug)]
enum Action {
    Fill {
        s: usize,
        r: usize,
        v: u32,
    },
    Double {
        s: usize,
        from: usize,
        to: usize,
    },
    Memset {
        s: usize,
        r: usize,
        v: u8,
    },
    Copy {
        s: usize,
        from: usize,
        to: usize,
    },
    /// A 2D copy of 6 rows of 5 bytes (pitch 8) from `from` + 2 to `to` + 9.
    Copy2D {
        s: usize,
        from: usize,
        to: usize,
    },
    /// A 2D fill of 7 rows of 6 bytes (pitch 8) from `r` + 1.
    Memset2D {
        s: usize,
        r: usize,
        v: u8,
    },
    /// Record an event in `from`, make `to` wait for it.
    Sync {
        from: usize,
        to: usize,
    },
}

fn action() -> impl Strategy<Value = Action> {
    let s = 0..STREAMS;
    let r = 0..REGIONS;
    prop_oneof![
        (s.clone(), r.clone(), any::<u32>()).prop_map(|(s, r, v)| Action::Fill { s, r, v }),
        (s.clone(), r.clone(), r.clone()).prop_map(|(s, from, to)| Action::Double { s, from, to }),
        (s.clone(), r.clone(), any::<u8>()).prop_map(|(s, r, v)| Action::Memset { s, r, v }),
        (s.clone(), r.clone(), r.clone()).prop_map(|(s, from, to)| Action::Copy { s, from, to }),
        (s.clone(), r.clone(), r.clone()).prop_map(|(s, from, to)| Action::Copy2D { s, from, to }),
        (s.clone(), r.clone(), any::<u8>()).prop_map(|(s, r, v)| Action::Memset2D { s, r, v }),
        (s.clone(), s).prop_map(|(from, to)| Action::Sync { from, to }),
    ]
}

type Clock = [u32; STREAMS];

fn le(a: &Clock, b: &Clock) -> bool {
    a.iter().zip(b).all(|(x, y)| x <= y)
}

/// Vector clocks: which ops are ordered before which.
#[derive(Default)]
struct Clocks {
    vc: [Clock; STREAMS],
    last_write: [Option<Clock>; REGIONS],
    reads: [Vec<Clock>; REGIONS],
}

impl Clocks {
    /// Admits an op of stream `s` reading `reads` and writing `writes` if it races with nothing.
    fn admit(&mut self, s: usize, reads: &[usize], writes: &[usize]) -> bool {
        let mut c = self.vc[s];
        c[s] += 1;
        let ordered_after_writes = reads
            .iter()
            .chain(writes)
            .all(|&r| self.last_write[r].as_ref().is_none_or(|w| le(w, &c)));
        let ordered_after_reads = writes
            .iter()
            .all(|&r| self.reads[r].iter().all(|x| le(x, &c)));
        if !ordered_after_writes || !ordered_after_reads {
            return false;
        }
        self.vc[s] = c;
        for &r in reads {
            self.reads[r].push(c);
        }
        for &r in writes {
            self.last_write[r] = Some(c);
            self.reads[r].clear();
        }
        true
    }

    fn sync(&mut self, from: usize, to: usize) {
        for i in 0..STREAMS {
            self.vc[to][i] = self.vc[to][i].max(self.vc[from][i]);
        }
    }
}

/// The race-free program: forks, the admitted actions, joins.
fn program(raw: &[Action]) -> Vec<Action> {
    let mut c = Clocks::default();
    let mut out = Vec::new();
    for to in 1..STREAMS {
        c.sync(0, to);
        out.push(Action::Sync { from: 0, to });
    }
    for &a in raw {
        let ok = match a {
            Action::Fill { s, r, .. }
            | Action::Memset { s, r, .. }
            | Action::Memset2D { s, r, .. } => c.admit(s, &[], &[r]),
            Action::Double { s, from, to }
            | Action::Copy { s, from, to }
            | Action::Copy2D { s, from, to } => from != to && c.admit(s, &[from], &[to]),
            Action::Sync { from, to } => {
                if from != to {
                    c.sync(from, to);
                }
                from != to
            }
        };
        if ok {
            out.push(a);
        }
    }
    for from in 1..STREAMS {
        c.sync(from, 0);
        out.push(Action::Sync { from, to: 0 });
    }
    out
}

struct World {
    mem: *mut u8,
    streams: [birenStream_t; STREAMS],
    events: Vec<birenEvent_t>,
}

impl World {
    fn new(events: usize) -> World {
        let mut mem: *mut c_void = std::ptr::null_mut();
        assert_eq!(birenMalloc(&mut mem, REGIONS * REGION), BIREN_SUCCESS);
        let mut streams = [std::ptr::null_mut(); STREAMS];
        for s in &mut streams {
            assert_eq!(birenStreamCreate(s), BIREN_SUCCESS);
        }
        let events = (0..events)
            .map(|_| {
                let mut e = std::ptr::null_mut();
                assert_eq!(birenEventCreate(&mut e), BIREN_SUCCESS);
                e
            })
            .collect();
        World {
            mem: mem as *mut u8,
            streams,
            events,
        }
    }

    fn region(&self, r: usize) -> *mut u8 {
        unsafe { self.mem.add(r * REGION) }
    }

    fn clear(&self) {
        assert_eq!(
            birenMemset(self.mem as *mut c_void, 0, REGIONS * REGION),
            BIREN_SUCCESS
        );
    }

    fn read(&self) -> Vec<u8> {
        let mut out = vec![0u8; REGIONS * REGION];
        assert_eq!(
            birenMemcpy(
                out.as_mut_ptr() as *mut c_void,
                self.mem as *const c_void,
                out.len(),
                2
            ),
            BIREN_SUCCESS
        );
        out
    }

    /// Issues the program's calls (each must succeed).
    fn issue(&self, prog: &[Action]) {
        let block = Dim3 {
            x: REGION as u32,
            y: 1,
            z: 1,
        };
        let grid = Dim3 { x: 1, y: 1, z: 1 };
        let mut next_event = 0;
        for a in prog {
            let rc = match *a {
                Action::Fill { s, r, v } => {
                    let mut p = self.region(r);
                    let mut v = v;
                    let mut args = [
                        &mut p as *mut *mut u8 as *mut c_void,
                        &mut v as *mut u32 as *mut c_void,
                    ];
                    let sizes = [8usize, 4];
                    birenLaunchKernelArgs(
                        Some(fill_kernel),
                        grid,
                        block,
                        args.as_mut_ptr(),
                        sizes.as_ptr(),
                        2,
                        0,
                        self.streams[s],
                    )
                }
                Action::Double { s, from, to } => {
                    let mut d = self.region(to);
                    let mut f = self.region(from);
                    let mut args = [
                        &mut d as *mut *mut u8 as *mut c_void,
                        &mut f as *mut *mut u8 as *mut c_void,
                    ];
                    let sizes = [8usize, 8];
                    birenLaunchKernelArgs(
                        Some(double_kernel),
                        grid,
                        block,
                        args.as_mut_ptr(),
                        sizes.as_ptr(),
                        2,
                        0,
                        self.streams[s],
                    )
                }
                Action::Memset { s, r, v } => birenMemsetAsync(
                    self.region(r) as *mut c_void,
                    v as i32,
                    REGION,
                    self.streams[s],
                ),
                Action::Copy { s, from, to } => birenMemcpyAsync(
                    self.region(to) as *mut c_void,
                    self.region(from) as *const c_void,
                    REGION,
                    3,
                    self.streams[s],
                ),
                Action::Copy2D { s, from, to } => unsafe {
                    birenMemcpy2DAsync(
                        self.region(to).add(9) as *mut c_void,
                        8,
                        self.region(from).add(2) as *const c_void,
                        8,
                        5,
                        6,
                        3,
                        self.streams[s],
                    )
                },
                Action::Memset2D { s, r, v } => unsafe {
                    birenMemset2DAsync(
                        self.region(r).add(1) as *mut c_void,
                        8,
                        v as i32,
                        6,
                        7,
                        self.streams[s],
                    )
                },
                Action::Sync { from, to } => {
                    let e = self.events[next_event % self.events.len()];
                    next_event += 1;
                    let rc = birenEventRecord(e, self.streams[from]);
                    if rc != BIREN_SUCCESS {
                        rc
                    } else {
                        birenStreamWaitEvent(self.streams[to], e)
                    }
                }
            };
            assert_eq!(rc, BIREN_SUCCESS, "{a:?}");
        }
    }

    /// Direct run: the calls on the streams.
    fn run_streams(&self, prog: &[Action]) -> Vec<u8> {
        self.clear();
        self.issue(prog);
        assert_eq!(birenDeviceSynchronize(), BIREN_SUCCESS);
        self.read()
    }

    /// Captured run: the same calls captured from stream 0, instantiated, launched `times`.
    fn run_captured(&self, prog: &[Action], times: usize) -> (Vec<u8>, usize) {
        self.clear();
        assert_eq!(birenStreamBeginCapture(self.streams[0], 0), BIREN_SUCCESS);
        self.issue(prog);
        let mut g = std::ptr::null_mut();
        assert_eq!(
            birenStreamEndCapture(self.streams[0], &mut g),
            BIREN_SUCCESS
        );
        let mut nodes = 0usize;
        assert_eq!(
            birenGraphGetNodes(g, std::ptr::null_mut(), &mut nodes),
            BIREN_SUCCESS
        );
        // Nothing ran while capturing.
        assert!(
            self.read().iter().all(|&b| b == 0),
            "work ran during capture"
        );
        let mut e = std::ptr::null_mut();
        assert_eq!(birenGraphInstantiate(&mut e, g, 0), BIREN_SUCCESS);
        let mut out = Vec::new();
        for _ in 0..times {
            self.clear();
            assert_eq!(birenGraphLaunch(e, self.streams[0]), BIREN_SUCCESS);
            assert_eq!(birenStreamSynchronize(self.streams[0]), BIREN_SUCCESS);
            let now = self.read();
            if !out.is_empty() {
                assert_eq!(now, out, "a relaunch left different memory");
            }
            out = now;
        }
        assert_eq!(birenGraphExecDestroy(e), BIREN_SUCCESS);
        assert_eq!(birenGraphDestroy(g), BIREN_SUCCESS);
        (out, nodes)
    }

    fn destroy(self) {
        for e in self.events {
            assert_eq!(birenEventDestroy(e), BIREN_SUCCESS);
        }
        for s in self.streams {
            assert_eq!(birenStreamDestroy(s), BIREN_SUCCESS);
        }
        assert_eq!(birenFree(self.mem as *mut c_void), BIREN_SUCCESS);
    }
}

fn cases() -> u32 {
    std::env::var("BIREN_CAPTURE_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(64)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn captured_sequence_leaves_the_same_memory_as_the_streams(raw in proptest::collection::vec(action(), 0..40)) {
        let _g = LOCK.lock().unwrap_or_else(|e| e.into_inner());
        init();
        let size = [8usize, 4];
        assert_eq!(birenKernelRegister(Some(fill_kernel), c"fill".as_ptr(), 2, size.as_ptr()), BIREN_SUCCESS);
        let prog = program(&raw);
        let world = World::new(4);
        let direct = world.run_streams(&prog);
        let (captured, nodes) = world.run_captured(&prog, 2);
        let work = prog.iter().filter(|a| !matches!(a, Action::Sync { .. })).count();
        world.destroy();
        prop_assert_eq!(nodes, work, "one node per captured op");
        prop_assert_eq!(direct, captured);
    }
}

#[test]
fn the_sanitizer_refuses_races() {
    // Stream 1 writes region 0 before any sync from stream 0's write: a race, dropped.
    let raw = [
        Action::Fill { s: 0, r: 0, v: 1 },
        Action::Fill { s: 1, r: 0, v: 2 },
        Action::Sync { from: 0, to: 1 },
        Action::Fill { s: 1, r: 0, v: 3 },
    ];
    let p = program(&raw);
    let fills: Vec<u32> = p
        .iter()
        .filter_map(|a| match a {
            Action::Fill { v, .. } => Some(*v),
            _ => None,
        })
        .collect();
    assert_eq!(fills, vec![1, 3]);
}
