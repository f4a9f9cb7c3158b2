//! The generated actions: abstract references, resolved against the state when they run, so
//! that shrinking always yields runnable sequences; and their strategies.

use super::*;

// ---------------------------------------------------------------------------------------------

#[derive(Clone, Copy, Debug)]
pub(crate) enum SRef {
    /// The default stream (NULL).
    Null,
    /// The i-th live stream (NULL if none).
    Live(u8),
    /// The i-th most recently created live stream.
    Recent(u8),
    /// The i-th destroyed stream (by birenStreamDestroy or birenDeviceReset).
    Stale(u8),
    /// A forged handle value.
    Forged(u8),
}

#[derive(Clone, Copy, Debug)]
pub(crate) enum ERef {
    Live(u8),
    Recent(u8),
    Stale(u8),
    /// A forged handle value (0 = NULL).
    Forged(u8),
}

#[derive(Clone, Copy, Debug)]
pub(crate) enum Off {
    Start,
    Mid(u16),
    Last,
    /// One past the end.
    End,
    /// Further past the end.
    Past(u16),
}

#[derive(Clone, Copy, Debug)]
pub(crate) enum PtrRef {
    Null,
    /// Into the i-th live device allocation.
    Dev(u8, Off),
    /// Into the i-th host buffer (the pool, then live pinned allocations).
    Host(u8, Off),
    /// Into the i-th freed allocation (device or pinned): dangling.
    Stale(u8, Off),
    Bogus(u8),
}

#[derive(Clone, Copy, Debug)]
pub(crate) enum CountSel {
    Zero,
    Small(u16),
    /// Exactly what fits from the pointers.
    Fit,
    FitMinus(u16),
    /// Past the end by 1 + k.
    Over(u16),
    Huge(u8),
}

#[derive(Clone, Copy, Debug)]
pub(crate) enum SizeSel {
    Zero,
    Small(u16),
    Medium(u16),
    /// A device allocation of 1 MiB to 3 MiB, mostly not a whole number of pages, tracked
    /// byte by byte (freeing one hands its range back to the kernel).
    Large(u16),
    Big(u8),
    Huge(u8),
}

#[derive(Clone, Copy, Debug)]
pub(crate) enum KSel {
    Fill,
    Copy,
    Probe,
    Nop,
    Null,
}

#[derive(Clone, Copy, Debug)]
pub(crate) enum How {
    /// birenLaunchKernelArgs with sizes (BIREN_LAUNCH).
    Sized,
    /// birenLaunchKernel of the registered fill kernel (values copied by registration).
    Registered,
    /// birenLaunchKernel, args by reference, kept alive until the case ends.
    ByRef,
    /// birenLaunchKernelArgs with faulty arguments.
    BadArgs(u8),
}

#[derive(Clone, Copy, Debug)]
pub(crate) enum CfgSel {
    Ok {
        gx: u8,
        gy: u8,
        bx: u8,
        by: u8,
        bz: u8,
        shared: bool,
    },
    Bad(u8),
}

#[derive(Clone, Copy, Debug)]
pub(crate) struct Region {
    pub(crate) obj: u8,
    pub(crate) off: u16,
    pub(crate) len: u16,
}

#[derive(Clone, Copy, Debug)]
pub(crate) struct LaunchSpec {
    pub(crate) kernel: KSel,
    pub(crate) dst: Region,
    pub(crate) src: Region,
    pub(crate) val: u8,
    pub(crate) cfg: CfgSel,
    pub(crate) stream: SRef,
    pub(crate) how: How,
}

#[derive(Clone, Copy, Debug)]
pub(crate) enum StreamHow {
    Plain,
    Flags(u32),
    Prio(u32, i32),
    NullOut,
}

#[derive(Clone, Copy, Debug)]
pub(crate) enum Action {
    Malloc {
        size: SizeSel,
        null_out: bool,
    },
    Free {
        ptr: PtrRef,
    },
    MallocHost {
        size: SizeSel,
        null_out: bool,
    },
    FreeHost {
        ptr: PtrRef,
    },
    Memcpy {
        dst: PtrRef,
        src: PtrRef,
        count: CountSel,
        kind: i32,
        stream: Option<SRef>,
    },
    Memset {
        ptr: PtrRef,
        value: i32,
        count: CountSel,
        stream: Option<SRef>,
    },
    Launch(LaunchSpec),
    HostFunc {
        stream: SRef,
        dst: Region,
        val: u8,
        null_fn: bool,
    },
    StreamCreate(StreamHow),
    StreamDestroy(SRef),
    StreamSync(SRef),
    StreamQuery(SRef),
    StreamGetInfo {
        s: SRef,
        null_out: bool,
    },
    EventCreate {
        flags: Option<u32>,
        null_out: bool,
    },
    EventDestroy(ERef),
    EventRecord {
        e: ERef,
        s: SRef,
    },
    EventQuery(ERef),
    EventSync(ERef),
    EventElapsed {
        a: ERef,
        b: ERef,
        null_out: bool,
    },
    WaitEvent {
        s: SRef,
        e: ERef,
    },
    DeviceSync,
    DeviceReset,
    Policy {
        set: Option<i32>,
        null_out: bool,
    },
    Device {
        which: u8,
        arg: i32,
        null_out: bool,
    },
    PointerAttr {
        ptr: PtrRef,
        null_out: bool,
    },
    MemGetInfo {
        null_out: u8,
    },
    LastError {
        peek: bool,
    },
    Register(u8),
    Misc(u8),
    /// A trapping kernel, then birenDeviceSynchronize: the device's error becomes sticky.
    Trap(SRef),
}

pub(crate) fn sref() -> impl Strategy<Value = SRef> {
    prop_oneof![
        4 => Just(SRef::Null),
        6 => any::<u8>().prop_map(SRef::Live),
        3 => (0u8..3).prop_map(SRef::Recent),
        1 => any::<u8>().prop_map(SRef::Stale),
        1 => (0u8..5).prop_map(SRef::Forged),
    ]
}

pub(crate) fn eref() -> impl Strategy<Value = ERef> {
    prop_oneof![
        6 => any::<u8>().prop_map(ERef::Live),
        3 => (0u8..3).prop_map(ERef::Recent),
        1 => any::<u8>().prop_map(ERef::Stale),
        1 => (0u8..6).prop_map(ERef::Forged),
    ]
}

pub(crate) fn off() -> impl Strategy<Value = Off> {
    prop_oneof![
        6 => Just(Off::Start),
        5 => any::<u16>().prop_map(Off::Mid),
        1 => Just(Off::Last),
        1 => Just(Off::End),
        1 => (0u16..600).prop_map(Off::Past),
    ]
}

pub(crate) fn ptr() -> impl Strategy<Value = PtrRef> {
    prop_oneof![
        1 => Just(PtrRef::Null),
        9 => (any::<u8>(), off()).prop_map(|(i, o)| PtrRef::Dev(i, o)),
        4 => (any::<u8>(), off()).prop_map(|(i, o)| PtrRef::Host(i, o)),
        1 => (any::<u8>(), off()).prop_map(|(i, o)| PtrRef::Stale(i, o)),
        1 => (0u8..4).prop_map(PtrRef::Bogus),
    ]
}

pub(crate) fn count() -> impl Strategy<Value = CountSel> {
    prop_oneof![
        1 => Just(CountSel::Zero),
        4 => (0u16..512).prop_map(CountSel::Small),
        6 => Just(CountSel::Fit),
        4 => any::<u16>().prop_map(CountSel::FitMinus),
        2 => (0u16..300).prop_map(CountSel::Over),
        1 => (0u8..5).prop_map(CountSel::Huge),
    ]
}

pub(crate) fn size() -> impl Strategy<Value = SizeSel> {
    prop_oneof![
        1 => Just(SizeSel::Zero),
        12 => any::<u16>().prop_map(SizeSel::Small),
        2 => any::<u16>().prop_map(SizeSel::Medium),
        2 => any::<u16>().prop_map(SizeSel::Large),
        1 => (0u8..5).prop_map(SizeSel::Big),
        1 => (0u8..5).prop_map(SizeSel::Huge),
    ]
}

pub(crate) fn kind() -> impl Strategy<Value = i32> {
    prop_oneof![
        2 => Just(0),
        4 => Just(1),
        4 => Just(2),
        4 => Just(3),
        3 => Just(4),
        1 => prop::sample::select(vec![5, -1, 100, i32::MIN, i32::MAX]),
    ]
}

pub(crate) fn region() -> impl Strategy<Value = Region> {
    (any::<u8>(), any::<u16>(), any::<u16>()).prop_map(|(obj, off, len)| Region { obj, off, len })
}

pub(crate) fn launch() -> impl Strategy<Value = LaunchSpec> {
    let kernel = prop_oneof![
        5 => Just(KSel::Fill),
        3 => Just(KSel::Copy),
        1 => Just(KSel::Probe),
        1 => Just(KSel::Nop),
        1 => Just(KSel::Null),
    ];
    let cfg = prop_oneof![
        8 => (1u8..=4, 1u8..=2, 1u8..=64, 1u8..=2, 1u8..=2, any::<bool>())
            .prop_map(|(gx, gy, bx, by, bz, shared)| CfgSel::Ok { gx, gy, bx, by, bz, shared }),
        1 => (0u8..9).prop_map(CfgSel::Bad),
    ];
    let how = prop_oneof![
        5 => Just(How::Sized),
        3 => Just(How::Registered),
        2 => Just(How::ByRef),
        1 => (0u8..4).prop_map(How::BadArgs),
    ];
    (kernel, region(), region(), any::<u8>(), cfg, sref(), how).prop_map(
        |(kernel, dst, src, val, cfg, stream, how)| LaunchSpec {
            kernel,
            dst,
            src,
            val,
            cfg,
            stream,
            how,
        },
    )
}

pub(crate) fn stream_how() -> impl Strategy<Value = StreamHow> {
    prop_oneof![
        3 => Just(StreamHow::Plain),
        4 => prop::sample::select(vec![0u32, 1, 1, 2, 3, 0x8000_0000]).prop_map(StreamHow::Flags),
        2 => (prop::sample::select(vec![0u32, 1, 7]), prop::sample::select(vec![-100, -6, -5, -3, 0, 1, 99]))
            .prop_map(|(f, p)| StreamHow::Prio(f, p)),
        1 => Just(StreamHow::NullOut),
    ]
}

pub(crate) fn opt_stream() -> impl Strategy<Value = Option<SRef>> {
    prop_oneof![1 => Just(None), 3 => sref().prop_map(Some)]
}

pub(crate) fn action() -> impl Strategy<Value = Action> {
    prop_oneof![
        10 => (size(), prop::bool::weighted(0.05)).prop_map(|(size, null_out)| Action::Malloc { size, null_out }),
        4 => ptr().prop_map(|ptr| Action::Free { ptr }),
        2 => (size(), prop::bool::weighted(0.1)).prop_map(|(size, null_out)| Action::MallocHost { size, null_out }),
        2 => ptr().prop_map(|ptr| Action::FreeHost { ptr }),
        16 => (ptr(), ptr(), count(), kind(), opt_stream())
            .prop_map(|(dst, src, count, kind, stream)| Action::Memcpy { dst, src, count, kind, stream }),
        6 => (ptr(), prop::sample::select(vec![0, 7, 0xab, 0x1cd, -1, -256]), count(), opt_stream())
            .prop_map(|(ptr, value, count, stream)| Action::Memset { ptr, value, count, stream }),
        10 => launch().prop_map(Action::Launch),
        2 => (sref(), region(), any::<u8>(), prop::bool::weighted(0.1))
            .prop_map(|(stream, dst, val, null_fn)| Action::HostFunc { stream, dst, val, null_fn }),
        5 => stream_how().prop_map(Action::StreamCreate),
        2 => sref().prop_map(Action::StreamDestroy),
        3 => sref().prop_map(Action::StreamSync),
        2 => sref().prop_map(Action::StreamQuery),
        1 => (sref(), prop::bool::weighted(0.2)).prop_map(|(s, null_out)| Action::StreamGetInfo { s, null_out }),
        4 => (prop::option::of(prop::sample::select(vec![0u32, 1, 2, 3, 4, 0x10, u32::MAX])), prop::bool::weighted(0.05))
            .prop_map(|(flags, null_out)| Action::EventCreate { flags, null_out }),
        2 => eref().prop_map(Action::EventDestroy),
        6 => (eref(), sref()).prop_map(|(e, s)| Action::EventRecord { e, s }),
        2 => eref().prop_map(Action::EventQuery),
        2 => eref().prop_map(Action::EventSync),
        1 => (eref(), eref(), prop::bool::weighted(0.1)).prop_map(|(a, b, null_out)| Action::EventElapsed { a, b, null_out }),
        6 => (sref(), eref()).prop_map(|(s, e)| Action::WaitEvent { s, e }),
        3 => Just(Action::DeviceSync),
        1 => Just(Action::DeviceReset),
        1 => (prop::option::of(prop::sample::select(vec![0, 1, 2, -1, 100])), prop::bool::weighted(0.2))
            .prop_map(|(set, null_out)| Action::Policy { set, null_out }),
        1 => (0u8..5, prop::sample::select(vec![0, 1, -1, 7]), prop::bool::weighted(0.2))
            .prop_map(|(which, arg, null_out)| Action::Device { which, arg, null_out }),
        2 => (ptr(), prop::bool::weighted(0.1)).prop_map(|(ptr, null_out)| Action::PointerAttr { ptr, null_out }),
        1 => (0u8..4).prop_map(|null_out| Action::MemGetInfo { null_out }),
        2 => any::<bool>().prop_map(|peek| Action::LastError { peek }),
        1 => (0u8..7).prop_map(Action::Register),
        1 => (0u8..4).prop_map(Action::Misc),
    ]
}

/// Small scenarios that random generation rarely assembles: cycles of waits and pipelines.
pub(crate) fn scenario() -> impl Strategy<Value = Vec<Action>> {
    let after_trap = prop::collection::vec(action(), 4);
    (
        0u8..7,
        any::<bool>(),
        any::<bool>(),
        region(),
        any::<u8>(),
        after_trap,
        sref(),
    )
        .prop_map(|(which, fa, fb, r, val, after, ts)| {
            use Action::*;
            let flags = |b: bool| StreamCreate(StreamHow::Flags(b as u32));
            let ev = EventCreate {
                flags: None,
                null_out: false,
            };
            let (s0, s1, e0, e1) = (
                SRef::Recent(0),
                SRef::Recent(1),
                ERef::Recent(0),
                ERef::Recent(1),
            );
            match which {
                // The seed's case: A waits for B's event while B waits for A's.
                0 => vec![
                    flags(fa),
                    flags(fb),
                    ev,
                    ev,
                    WaitEvent { s: s1, e: e1 },
                    WaitEvent { s: s0, e: e0 },
                    EventRecord { e: e0, s: s1 },
                    EventRecord { e: e1, s: s0 },
                    DeviceSync,
                ],
                // A stream waits for a record it would make later itself.
                1 => vec![
                    flags(fa),
                    ev,
                    WaitEvent { s: s0, e: e0 },
                    EventRecord { e: e0, s: s0 },
                    StreamSync(s0),
                ],
                // A record on the NULL stream of an event a (blocking?) stream waits for.
                2 => vec![
                    flags(fa),
                    ev,
                    WaitEvent { s: s0, e: e0 },
                    EventRecord {
                        e: e0,
                        s: SRef::Null,
                    },
                    DeviceSync,
                ],
                // A stall, then the record that releases it.
                3 => vec![
                    flags(fa),
                    ev,
                    WaitEvent { s: s0, e: e0 },
                    Memset {
                        ptr: PtrRef::Dev(r.obj, Off::Start),
                        value: val as i32,
                        count: CountSel::Fit,
                        stream: Some(s0),
                    },
                    StreamSync(s0),
                    Memset {
                        ptr: PtrRef::Dev(r.obj, Off::Start),
                        value: 1,
                        count: CountSel::Fit,
                        stream: None,
                    },
                    flags(fb),
                    EventRecord { e: e0, s: s0 },
                    StreamSync(s1),
                    DeviceSync,
                ],
                // Large blocks freed between live neighbours (issue 16, bug 1). After a reset
                // the arena starts afresh, so the first block starts on a page boundary: its
                // free hands [start, start + size) to the kernel, which must not zero the
                // small neighbour that starts in the block's last page. Every byte of every
                // block is compared at both synchronizes.
                6 => {
                    let fill = |i: u8, v: u8| Memset {
                        ptr: PtrRef::Dev(i, Off::Start),
                        value: (v | 1) as i32,
                        count: CountSel::Fit,
                        stream: None,
                    };
                    let dev = |i: u8| PtrRef::Dev(i, Off::Start);
                    vec![
                        DeviceReset,
                        Malloc {
                            size: SizeSel::Large(r.len),
                            null_out: false,
                        },
                        Malloc {
                            size: SizeSel::Small(r.off),
                            null_out: false,
                        },
                        Malloc {
                            size: SizeSel::Large(r.off),
                            null_out: false,
                        },
                        Malloc {
                            size: SizeSel::Small(r.len),
                            null_out: false,
                        },
                        fill(0, val),
                        fill(1, val.wrapping_add(1)),
                        fill(2, val.wrapping_add(2)),
                        fill(3, val.wrapping_add(3)),
                        Free { ptr: dev(0) },
                        DeviceSync,
                        Free { ptr: dev(1) },
                        DeviceSync,
                    ]
                }
                // A trap: the device's error is sticky until birenDeviceReset.
                5 => {
                    let mut v = vec![Trap(ts)];
                    v.extend(after);
                    v.push(DeviceReset);
                    v
                }
                // A pipeline across two streams: copy in, kernel, record, wait, copy out.
                _ => vec![
                    flags(fa),
                    flags(fb),
                    ev,
                    Memcpy {
                        dst: PtrRef::Dev(r.obj, Off::Start),
                        src: PtrRef::Host(r.obj, Off::Mid(r.off)),
                        count: CountSel::Fit,
                        kind: 1,
                        stream: Some(s1),
                    },
                    Launch(LaunchSpec {
                        kernel: KSel::Fill,
                        dst: r,
                        src: r,
                        val,
                        cfg: CfgSel::Ok {
                            gx: 2,
                            gy: 1,
                            bx: 32,
                            by: 1,
                            bz: 1,
                            shared: false,
                        },
                        stream: s1,
                        how: How::Registered,
                    }),
                    EventRecord { e: e0, s: s1 },
                    WaitEvent { s: s0, e: e0 },
                    Memcpy {
                        dst: PtrRef::Host(r.obj.wrapping_add(1), Off::Start),
                        src: PtrRef::Dev(r.obj, Off::Start),
                        count: CountSel::Fit,
                        kind: 2,
                        stream: Some(s0),
                    },
                    Memcpy {
                        dst: PtrRef::Dev(r.obj.wrapping_add(1), Off::Start),
                        src: PtrRef::Dev(r.obj, Off::Start),
                        count: CountSel::Fit,
                        kind: 4,
                        stream: Some(s0),
                    },
                    EventSync(e0),
                ],
            }
        })
}

pub(crate) fn program() -> impl Strategy<Value = Vec<Vec<Action>>> {
    let chunk = prop_oneof![
        14 => action().prop_map(|a| vec![a]),
        1 => scenario(),
    ];
    prop::collection::vec(chunk, 0..110)
}
