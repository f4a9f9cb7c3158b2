//! Stream capture (`birenStreamBeginCapture` ... `birenStreamEndCapture`): while a stream
//! captures, the work enqueued in it becomes nodes of a graph instead of running. A capture
//! starts in one stream (its origin); `birenEventRecord` in a capturing stream marks the event
//! with the stream's current tail nodes, and `birenStreamWaitEvent` on such an event pulls the
//! waiting stream into the capture (a fork) or adds the dependency (a join). The capture ends in
//! its origin stream, once every forked stream has joined back.
//!
//! When no capture exists anywhere, every hook costs one relaxed atomic load (`active`).

use super::run::GraphLaunch;
use super::{tables, CopyNode, FillNode, GraphBody, GraphCore, KernelNode, NodeKind};
use crate::runtime::diagnostics;
use crate::runtime::error::{ErrorCode, Result};
use crate::runtime::exec::event::EventCore;
use crate::runtime::exec::stream::StreamCore;
use crate::runtime::exec::strided::StridedOp;
use crate::runtime::exec::work::Work;
use crate::runtime::lock_order::{Rank, RankedMutex};
use std::cell::Cell;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;

/// `birenStreamCaptureMode` values (CUDA's); thread-local is 1.
pub(crate) const MODE_GLOBAL: i32 = 0;
pub(crate) const MODE_RELAXED: i32 = 2;

/// `birenStreamCaptureStatus` values (CUDA's).
pub(crate) const STATUS_NONE: i32 = 0;
pub(crate) const STATUS_ACTIVE: i32 = 1;
pub(crate) const STATUS_INVALIDATED: i32 = 2;

/// Captures in progress, process-wide.
static ACTIVE: AtomicUsize = AtomicUsize::new(0);
static THREAD_TOKENS: AtomicU64 = AtomicU64::new(1);

thread_local! {
    static THREAD_MODE: Cell<i32> = const { Cell::new(MODE_GLOBAL) };
    static THREAD_TOKEN: u64 = THREAD_TOKENS.fetch_add(1, Ordering::Relaxed);
}

fn me() -> u64 {
    THREAD_TOKEN.with(|t| *t)
}

/// True while any capture is in progress (one relaxed load: the hooks' fast path).
#[inline]
pub fn active() -> bool {
    ACTIVE.load(Ordering::Relaxed) != 0
}

struct Capture {
    id: u64,
    mode: i32,
    owner: u64,
    device: usize,
    origin: Arc<StreamCore>,
    graph: Arc<GraphCore>,
    graph_handle: u64,
    invalidated: bool,
    /// Streams in the capture and the nodes their next work depends on.
    tails: HashMap<u64, (Arc<StreamCore>, Vec<u32>)>,
    /// What birenStreamGetCaptureInfo last handed out (valid until the next such call).
    deps_out: Box<[u64]>,
}

#[derive(Default)]
struct Table {
    caps: HashMap<u64, Capture>,
    /// stream id -> capture id
    by_stream: HashMap<u64, u64>,
    /// event id -> (capture id, the capturing stream's tail when the event was recorded)
    marks: HashMap<u64, (u64, Vec<u32>)>,
}

static TABLE: RankedMutex<Option<Table>> = RankedMutex::new(Rank::CaptureTable, None);
static CAPTURE_IDS: AtomicU64 = AtomicU64::new(0);

fn with<R>(f: impl FnOnce(&mut Table) -> R) -> R {
    let mut g = TABLE.lock();
    f(g.get_or_insert_with(Table::default))
}

impl Table {
    fn of(&mut self, s: &StreamCore) -> Option<&mut Capture> {
        let id = *self.by_stream.get(&s.id)?;
        self.caps.get_mut(&id)
    }

    /// Ends capture `id` (its streams leave it, its event marks go); returns it.
    fn remove(&mut self, id: u64) -> Option<Capture> {
        let c = self.caps.remove(&id)?;
        for sid in c.tails.keys() {
            self.by_stream.remove(sid);
        }
        self.marks.retain(|_, (cid, _)| *cid != id);
        ACTIVE.fetch_sub(1, Ordering::Relaxed);
        Some(c)
    }

    /// Capture ids on `device` whose streams include a blocking one.
    fn with_blocking(&self, device: usize) -> Vec<u64> {
        self.caps
            .values()
            .filter(|c| c.device == device && c.tails.values().any(|(s, _)| s.is_blocking()))
            .map(|c| c.id)
            .collect()
    }

    fn invalidate(&mut self, id: u64, why: &str) {
        if let Some(c) = self.caps.get_mut(&id) {
            if !c.invalidated {
                c.invalidated = true;
                diagnostics::finding(
                    "stream capture",
                    &format!(
                        "the capture begun in stream #{} is invalidated: {why}. birenStreamEndCapture will return \
                         BIREN_ERROR_STREAM_CAPTURE_INVALIDATED.",
                        c.origin.id
                    ),
                );
            }
        }
    }
}

/// `birenStreamBeginCapture`.
pub fn begin(s: &Arc<StreamCore>, mode: i32, caller: usize) -> Result<()> {
    if !(MODE_GLOBAL..=MODE_RELAXED).contains(&mode) {
        return Err(ErrorCode::InvalidValue);
    }
    if s.is_default {
        diagnostics::finding(
            "birenStreamBeginCapture",
            "the default (NULL) stream cannot be captured: capture a stream created with birenStreamCreate",
        );
        return Err(ErrorCode::StreamCaptureUnsupported);
    }
    with(|t| {
        if t.by_stream.contains_key(&s.id) {
            diagnostics::finding(
                "birenStreamBeginCapture",
                &format!("stream #{} is already capturing", s.id),
            );
            return Err(ErrorCode::IllegalState);
        }
        let (graph_handle, graph) = tables().insert_graph(GraphBody::default(), caller)?;
        let id = CAPTURE_IDS.fetch_add(1, Ordering::Relaxed) + 1;
        let mut tails = HashMap::new();
        tails.insert(s.id, (s.clone(), Vec::new()));
        t.caps.insert(
            id,
            Capture {
                id,
                mode,
                owner: me(),
                device: s.device,
                origin: s.clone(),
                graph,
                graph_handle,
                invalidated: false,
                tails,
                deps_out: Box::new([]),
            },
        );
        t.by_stream.insert(s.id, id);
        ACTIVE.fetch_add(1, Ordering::Relaxed);
        Ok(())
    })
}

/// True, the first time per kernel and with the validator on, for a launch whose arguments are
/// read by reference (the advice is given once per kernel).
fn captured_by_reference(l: &crate::runtime::exec::launch::Launch) -> bool {
    static ADVISED: RankedMutex<Vec<usize>> = RankedMutex::new(Rank::Leaf, Vec::new());
    let by_reference = matches!(
        l.args,
        crate::runtime::exec::launch::KernelArgs::ByReference(p) if !p.is_null()
    );
    if !by_reference || !diagnostics::validator_on() {
        return false;
    }
    let mut seen = ADVISED.lock();
    if seen.contains(&(l.kernel as usize)) {
        return false;
    }
    seen.push(l.kernel as usize);
    true
}

/// The node a piece of stream work becomes when captured.
fn node_of(work: Work) -> NodeKind {
    match work {
        Work::Kernel(l) => {
            if captured_by_reference(&l) {
                diagnostics::advice(&format!(
                    "{} was captured with its arguments by reference (an unregistered kernel launched with \
                     birenLaunchKernel): every launch of the graph reads them again, so they must stay valid as long \
                     as the graph does. Register the kernel (birenKernelRegister) or launch it with BIREN_LAUNCH to \
                     have the values captured.",
                    l.name()
                ));
            }
            NodeKind::Kernel(Arc::new(KernelNode {
                kernel: l.kernel,
                grid: l.grid,
                block: l.block,
                shared: l.shared,
                args: l.args,
                info: l.info,
            }))
        }
        Work::Copy {
            dst,
            src,
            len,
            engine,
            ..
        } => NodeKind::Memcpy(CopyNode {
            dst,
            src,
            width: len,
            height: 1,
            depth: 1,
            dst_pitch: len,
            src_pitch: len,
            dst_slice: len,
            src_slice: len,
            engine,
            // Which sides are device memory is looked up again at every launch.
            dst_device: false,
            src_device: false,
        }),
        Work::Fill { dst, value, len } => NodeKind::Memset(FillNode {
            dst,
            pitch: len,
            value: value as u32,
            elem: 1,
            width: len,
            height: 1,
            depth: 1,
            slice: len,
        }),
        Work::Host(h) => NodeKind::Host(h),
        Work::Graph(g) => {
            let l = g
                .as_any()
                .downcast_ref::<GraphLaunch>()
                .expect("graph launches are GraphLaunch");
            NodeKind::Child(Arc::new(l.graph.source.detached()))
        }
        Work::Strided(t) => match t.op {
            StridedOp::Copy(src) => {
                // Which sides are device memory decides what each launch checks again.
                let device = |p: usize| {
                    crate::runtime::try_get().is_some_and(|rt| rt.device_region(p).is_some())
                };
                NodeKind::Memcpy(CopyNode {
                    dst: t.dst.base,
                    src: src.base,
                    width: t.width,
                    height: t.height,
                    depth: t.depth,
                    dst_pitch: t.dst.pitch,
                    src_pitch: src.pitch,
                    dst_slice: t.dst.slice,
                    src_slice: src.slice,
                    engine: t.engine,
                    dst_device: device(t.dst.base),
                    src_device: device(src.base),
                })
            }
            StridedOp::Fill(v) => NodeKind::Memset(FillNode {
                dst: t.dst.base,
                pitch: t.dst.pitch,
                value: v as u32,
                elem: 1,
                width: t.width,
                height: t.height,
                depth: t.depth,
                slice: t.dst.slice,
            }),
        },
    }
}

/// The enqueue hook: work for a capturing stream becomes a node (`Ok(result)`); other work is
/// handed back (`Err(work)`) to be enqueued as usual. Work on the default stream while a
/// blocking stream of its device captures is refused (STREAM_CAPTURE_IMPLICIT) and invalidates
/// that capture.
pub fn divert(s: &Arc<StreamCore>, work: Work) -> std::result::Result<Result<u64>, Work> {
    with(|t| {
        if let Some(c) = t.of(s) {
            if c.invalidated {
                return Ok(Err(ErrorCode::StreamCaptureInvalidated));
            }
            let deps = c.tails.get(&s.id).map(|x| x.1.clone()).unwrap_or_default();
            let h = tables().add_node(&c.graph, node_of(work), &deps);
            return Ok(h.map(|(_, index)| {
                if let Some(tail) = c.tails.get_mut(&s.id) {
                    tail.1 = vec![index];
                }
                0
            }));
        }
        if s.is_default {
            let ids = t.with_blocking(s.device);
            if !ids.is_empty() {
                for id in ids {
                    t.invalidate(
                        id,
                        "work was enqueued on the default stream, which would wait for the capturing blocking stream",
                    );
                }
                return Ok(Err(ErrorCode::StreamCaptureImplicit));
            }
        }
        Err(work)
    })
}

/// An event record or wait made with the External flag (birenEventRecordWithFlags,
/// birenStreamWaitEventWithFlags): in a capturing stream, `kind` (an event record or wait node)
/// is added after the stream's tail and becomes it (`Some`); `None` if `s` does not capture.
pub fn external_node(s: &Arc<StreamCore>, kind: NodeKind) -> Option<Result<()>> {
    with(|t| {
        let c = t.of(s)?;
        if c.invalidated {
            return Some(Err(ErrorCode::StreamCaptureInvalidated));
        }
        let deps = c.tails.get(&s.id).map(|x| x.1.clone()).unwrap_or_default();
        let h = tables().add_node(&c.graph, kind, &deps);
        Some(h.map(|(_, index)| {
            if let Some(tail) = c.tails.get_mut(&s.id) {
                tail.1 = vec![index];
            }
        }))
    })
}

/// True if `s` takes part in a capture.
pub fn captures(s: &StreamCore) -> bool {
    active() && with(|t| t.by_stream.contains_key(&s.id))
}

/// `birenEventRecord` hook: a record in a capturing stream marks the event with the stream's
/// tail (`Some`); a record elsewhere clears an earlier mark and proceeds (`None`).
pub fn record(ev: &EventCore, s: &Arc<StreamCore>) -> Option<Result<()>> {
    with(|t| {
        if let Some(c) = t.of(s) {
            if c.invalidated {
                return Some(Err(ErrorCode::StreamCaptureInvalidated));
            }
            let (cid, tail) = (
                c.id,
                c.tails.get(&s.id).map(|x| x.1.clone()).unwrap_or_default(),
            );
            t.marks.insert(ev.id, (cid, tail));
            return Some(Ok(()));
        }
        t.marks.remove(&ev.id);
        if s.is_default {
            let ids = t.with_blocking(s.device);
            if !ids.is_empty() {
                for id in ids {
                    t.invalidate(id, "an event was recorded on the default stream");
                }
                return Some(Err(ErrorCode::StreamCaptureImplicit));
            }
        }
        None
    })
}

/// `birenStreamWaitEvent` hook: a wait on an event recorded in a capture forks the stream into
/// that capture or joins it; a capturing stream may not wait for an event recorded outside it.
pub fn wait(s: &Arc<StreamCore>, ev: &EventCore) -> Option<Result<()>> {
    with(|t| {
        let mark = t.marks.get(&ev.id).cloned();
        let mine = t.by_stream.get(&s.id).copied();
        match (mark, mine) {
            (None, None) => {
                if s.is_default && !t.with_blocking(s.device).is_empty() {
                    for id in t.with_blocking(s.device) {
                        t.invalidate(id, "the default stream was made to wait for an event");
                    }
                    return Some(Err(ErrorCode::StreamCaptureImplicit));
                }
                None
            }
            (None, Some(cid)) => {
                t.invalidate(
                    cid,
                    &format!(
                        "stream #{} waited for event #{}, which was not recorded in this capture",
                        s.id, ev.id
                    ),
                );
                Some(Err(ErrorCode::StreamCaptureIsolation))
            }
            (Some((ecid, nodes)), Some(cid)) if ecid == cid => {
                let c = t.caps.get_mut(&cid).expect("stream's capture");
                if c.invalidated {
                    return Some(Err(ErrorCode::StreamCaptureInvalidated));
                }
                let body = c.graph.body.lock();
                let tail = &mut c.tails.get_mut(&s.id).expect("member").1;
                for n in nodes {
                    if !tail.contains(&n) {
                        tail.push(n);
                    }
                }
                // A node that another dependency already follows adds nothing: drop it (the
                // captured graph then has no redundant edges).
                let all = tail.clone();
                tail.retain(|&x| !all.iter().any(|&y| y != x && body.reaches(x, y)));
                Some(Ok(()))
            }
            (Some(_), Some(cid)) => {
                t.invalidate(cid, "a wait would merge two independent captures");
                Some(Err(ErrorCode::StreamCaptureMerge))
            }
            (Some((ecid, nodes)), None) => {
                if s.is_default {
                    t.invalidate(
                        ecid,
                        "the default stream was made to wait for a captured event",
                    );
                    return Some(Err(ErrorCode::StreamCaptureImplicit));
                }
                let c = t.caps.get_mut(&ecid).expect("mark's capture");
                if c.invalidated {
                    return Some(Err(ErrorCode::StreamCaptureInvalidated));
                }
                if c.device != s.device {
                    return Some(Err(ErrorCode::InvalidValue));
                }
                c.tails.insert(s.id, (s.clone(), nodes));
                t.by_stream.insert(s.id, ecid);
                Some(Ok(()))
            }
        }
    })
}

/// `birenStreamEndCapture`: the captured graph's handle.
pub fn end(s: &Arc<StreamCore>) -> Result<u64> {
    with(|t| {
        let Some(cid) = t.by_stream.get(&s.id).copied() else {
            diagnostics::finding(
                "birenStreamEndCapture",
                &format!("stream #{} is not capturing", s.id),
            );
            return Err(ErrorCode::IllegalState);
        };
        let c = &t.caps[&cid];
        if c.origin.id != s.id {
            diagnostics::finding(
                "birenStreamEndCapture",
                &format!(
                    "stream #{} joined a capture begun in stream #{}: end it there",
                    s.id, c.origin.id
                ),
            );
            return Err(ErrorCode::StreamCaptureUnmatched);
        }
        if c.mode != MODE_RELAXED && c.owner != me() {
            diagnostics::finding(
                "birenStreamEndCapture",
                "the capture was begun by another thread in global or thread-local mode",
            );
            return Err(ErrorCode::StreamCaptureWrongThread);
        }
        let c = t.remove(cid).expect("present");
        if c.invalidated {
            let _ = tables().destroy_graph(c.graph_handle);
            return Err(ErrorCode::StreamCaptureInvalidated);
        }
        let body = c.graph.body.lock();
        let origin_tail = &c.tails[&s.id].1;
        // Everything the origin's tail depends on, itself included.
        let mut joined = vec![false; body.nodes.len()];
        let mut stack = origin_tail.clone();
        while let Some(n) = stack.pop() {
            if !std::mem::replace(&mut joined[n as usize], true) {
                stack.extend(body.nodes[n as usize].deps.iter().copied());
            }
        }
        let unjoined = c
            .tails
            .iter()
            .find(|(sid, (_, tail))| **sid != s.id && tail.iter().any(|n| !joined[*n as usize]));
        if let Some((sid, _)) = unjoined {
            diagnostics::finding(
                "birenStreamEndCapture",
                &format!(
                    "stream #{sid} forked from the capture and its work was not joined back into stream #{} \
                     (record an event in stream #{sid} and make stream #{} wait for it before ending the capture)",
                    s.id, s.id
                ),
            );
            drop(body);
            let _ = tables().destroy_graph(c.graph_handle);
            return Err(ErrorCode::StreamCaptureUnjoined);
        }
        Ok(c.graph_handle)
    })
}

/// `birenStreamIsCapturing` / `birenStreamGetCaptureInfo`: (status, capture id, graph handle,
/// dependency node handles).
pub fn info(s: &Arc<StreamCore>) -> Result<(i32, u64, u64, *const u64, usize)> {
    with(|t| {
        if s.is_default && !t.with_blocking(s.device).is_empty() {
            return Err(ErrorCode::StreamCaptureImplicit);
        }
        let Some(c) = t.of(s) else {
            return Ok((STATUS_NONE, 0, 0, std::ptr::null(), 0));
        };
        let status = if c.invalidated {
            STATUS_INVALIDATED
        } else {
            STATUS_ACTIVE
        };
        let body = c.graph.body.lock();
        let deps: Box<[u64]> = c.tails[&s.id]
            .1
            .iter()
            .map(|&i| body.nodes[i as usize].handle)
            .collect();
        drop(body);
        c.deps_out = deps;
        Ok((
            status,
            c.id,
            c.graph_handle,
            c.deps_out.as_ptr(),
            c.deps_out.len(),
        ))
    })
}

/// Sets the calling thread's capture interaction mode; returns the previous one.
pub fn exchange_mode(mode: i32) -> Result<i32> {
    if !(MODE_GLOBAL..=MODE_RELAXED).contains(&mode) {
        return Err(ErrorCode::InvalidValue);
    }
    Ok(THREAD_MODE.with(|m| m.replace(mode)))
}

/// A potentially unsafe call (allocation, free, synchronous copy, synchronize): refused with
/// STREAM_CAPTURE_UNSUPPORTED while the calling thread's mode forbids it — global: this thread
/// has a non-relaxed capture, or another thread a global one; thread-local: this thread has a
/// non-relaxed capture; relaxed: never. The thread's own captures are invalidated.
pub fn check_unsafe(call: &str) -> Result<()> {
    if !active() {
        return Ok(());
    }
    let mode = THREAD_MODE.with(|m| m.get());
    if mode == MODE_RELAXED {
        return Ok(());
    }
    let me = me();
    with(|t| {
        let own: Vec<u64> = t
            .caps
            .values()
            .filter(|c| c.owner == me && c.mode != MODE_RELAXED)
            .map(|c| c.id)
            .collect();
        let other_global = mode == MODE_GLOBAL
            && t.caps
                .values()
                .any(|c| c.owner != me && c.mode == MODE_GLOBAL);
        if own.is_empty() && !other_global {
            return Ok(());
        }
        diagnostics::finding(
            call,
            "is not permitted while a stream capture is in progress (capture modes global and thread-local forbid \
             potentially unsafe calls; use birenThreadExchangeStreamCaptureMode with birenStreamCaptureModeRelaxed \
             if the call is safe)",
        );
        for id in own {
            t.invalidate(id, &format!("{call} was called during the capture"));
        }
        Err(ErrorCode::StreamCaptureUnsupported)
    })
}

/// birenStreamSynchronize / birenStreamQuery of a capturing stream: refused, and the capture is
/// invalidated (nothing in it has been enqueued to wait for). Of the default stream while a
/// blocking stream of its device captures: STREAM_CAPTURE_IMPLICIT, and that capture is
/// invalidated.
pub fn check_sync(s: &StreamCore, call: &str) -> Result<()> {
    if !active() {
        return Ok(());
    }
    with(|t| {
        if s.is_default {
            // The default stream would wait for the capturing blocking streams' work.
            let ids = t.with_blocking(s.device);
            for &id in &ids {
                t.invalidate(id, &format!("{call} was called on the default stream"));
            }
            return if ids.is_empty() {
                Ok(())
            } else {
                Err(ErrorCode::StreamCaptureImplicit)
            };
        }
        let Some(cid) = t.by_stream.get(&s.id).copied() else {
            return Ok(());
        };
        t.invalidate(cid, &format!("{call} was called on a capturing stream"));
        Err(ErrorCode::StreamCaptureUnsupported)
    })
}

/// birenEventQuery / birenEventSynchronize of an event last recorded in a capture.
pub fn check_event(ev: &EventCore) -> Result<()> {
    if !active() {
        return Ok(());
    }
    with(|t| {
        if t.marks.contains_key(&ev.id) {
            return Err(ErrorCode::CapturedEvent);
        }
        Ok(())
    })
}

/// A stream is destroyed: a capture it takes part in is invalidated (ended, if it began there).
pub fn stream_gone(s: &StreamCore) {
    if !active() {
        return;
    }
    with(|t| {
        let Some(cid) = t.by_stream.get(&s.id).copied() else {
            return;
        };
        if t.caps[&cid].origin.id == s.id {
            if let Some(c) = t.remove(cid) {
                let _ = tables().destroy_graph(c.graph_handle);
            }
        } else {
            t.invalidate(
                cid,
                &format!("stream #{} was destroyed while capturing", s.id),
            );
        }
    })
}

/// birenDeviceReset: the device's captures end (their streams are gone).
pub fn forget_device(device: usize) {
    if !active() {
        return;
    }
    with(|t| {
        let ids: Vec<u64> = t
            .caps
            .values()
            .filter(|c| c.device == device)
            .map(|c| c.id)
            .collect();
        for id in ids {
            if let Some(c) = t.remove(id) {
                let _ = tables().destroy_graph(c.graph_handle);
            }
        }
    })
}

/// Captures still open (origin stream id, nodes so far), for the report at exit.
pub fn open_captures() -> Vec<(u64, usize)> {
    if !active() {
        return Vec::new();
    }
    with(|t| {
        t.caps
            .values()
            .map(|c| (c.origin.id, c.graph.body.lock().nodes.len()))
            .collect()
    })
}
