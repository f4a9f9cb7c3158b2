//! What race detection (diagnostics/racecheck.rs) needs to know about streams and ops, told in
//! its own plain terms. Each hook in the stream queue is `if racecheck::on() { ... }`.

use crate::runtime::diagnostics::racecheck::{
    self, GraphDesc, NodeDesc, OpDesc, Range, Reach, StreamKind, StreamTag,
};
use crate::runtime::exec::graph::exec::{ExecGraph, ExecWork};
use crate::runtime::exec::graph::{CopyNode, FillNode};
use crate::runtime::exec::stream::{OpWork, StreamCore};
use crate::runtime::exec::strided::{Side, StridedOp};
use crate::runtime::exec::work::Work;
use parking_lot::Mutex;
use std::sync::{Arc, Weak};

pub(crate) fn tag(s: &StreamCore) -> StreamTag {
    StreamTag {
        id: s.id,
        device: s.device,
        kind: if s.is_default {
            StreamKind::Default
        } else if s.is_blocking() {
            StreamKind::Blocking
        } else {
            StreamKind::NonBlocking
        },
    }
}

/// The rows a 2D/3D copy or fill touches, of `depth` slices of `height` rows of `width` bytes:
/// `src`'s read (a copy), `dst`'s written. Streams' strided ops and graphs' copy and fill nodes
/// alike.
fn strided_ranges(
    dst: Side,
    src: Option<Side>,
    width: usize,
    height: usize,
    depth: usize,
) -> Vec<Range> {
    let side =
        |s: Side, write| Range::strided(s.base, width, height, depth, s.pitch, s.slice, write);
    let mut v = src.map_or_else(Vec::new, |s| side(s, false));
    v.extend(side(dst, true));
    v
}

/// A kernel's argument words, and the memory of each texture or surface object among them (a
/// surface write or a texture fetch touches the array behind the object, not an argument).
fn kernel_words(mut words: Vec<usize>) -> Vec<usize> {
    let objects: Vec<usize> = words
        .iter()
        .filter_map(|&w| crate::runtime::texture::object_memory(w as u64))
        .collect();
    words.extend(objects);
    words
}

fn copy_node_ranges(c: &CopyNode) -> Vec<Range> {
    let (dst, src) = c.sides();
    strided_ranges(dst, Some(src), c.width, c.height, c.depth)
}

fn fill_node_ranges(f: &FillNode) -> Vec<Range> {
    strided_ranges(f.side(), None, f.width * f.elem, f.height, f.depth)
}

/// Executable graphs described lately (an executable graph is immutable; the weak reference
/// keeps its address from being reused while it is listed).
static GRAPHS: Mutex<Vec<(Weak<ExecGraph>, Arc<GraphDesc>)>> = Mutex::new(Vec::new());
const GRAPHS_KEPT: usize = 32;

/// What each node of `g` touches, and which node comes before which (once per executable graph).
fn graph_desc(g: &Arc<ExecGraph>) -> Arc<GraphDesc> {
    let mut cache = GRAPHS.lock();
    if let Some((_, d)) = cache
        .iter()
        .find(|(w, _)| std::ptr::eq(w.as_ptr(), Arc::as_ptr(g)))
    {
        return d.clone();
    }
    // Nodes after an event wait node are ordered after the awaited record, which the launch's
    // one clock does not show: their accesses are not tracked (no false report; a race of
    // theirs with other streams is missed, see the README).
    let mut after_wait = vec![false; g.nodes.len()];
    let mut todo: Vec<u32> = g
        .nodes
        .iter()
        .enumerate()
        .filter(|(_, n)| matches!(n.work, ExecWork::EventWait { .. }))
        .map(|(i, _)| i as u32)
        .collect();
    while let Some(i) = todo.pop() {
        for &j in g.nodes[i as usize].succ.iter() {
            if !after_wait[j as usize] {
                after_wait[j as usize] = true;
                todo.push(j);
            }
        }
    }
    let nodes = g
        .nodes
        .iter()
        .enumerate()
        .map(|(i, n)| {
            let (ranges, words) = match &n.work {
                _ if after_wait[i] => (Vec::new(), Vec::new()),
                ExecWork::Kernel(k) => (Vec::new(), kernel_words(k.args.words())),
                ExecWork::Fused(c) => (
                    Vec::new(),
                    kernel_words(c.kernels().iter().flat_map(|k| k.args.words()).collect()),
                ),
                ExecWork::Copy(c) => (copy_node_ranges(c), Vec::new()),
                ExecWork::Fill(f) => (fill_node_ranges(f), Vec::new()),
                ExecWork::Host(_)
                | ExecWork::Nothing
                | ExecWork::EventWait { .. }
                | ExecWork::EventRecord { .. } => (Vec::new(), Vec::new()),
            };
            NodeDesc {
                label: format!("graph exec #{} node {}: {}", g.exec_id, n.path, n.label()),
                ranges,
                words,
            }
        })
        .collect();
    let reach = Reach::new(g.nodes.iter().map(|n| n.succ.clone()).collect());
    let d = Arc::new(GraphDesc { nodes, reach });
    cache.retain(|(w, _)| w.strong_count() > 0);
    if cache.len() >= GRAPHS_KEPT {
        cache.remove(0);
    }
    cache.push((Arc::downgrade(g), d.clone()));
    d
}

fn desc(w: &OpWork) -> OpDesc {
    let mut d = OpDesc {
        kind: "op",
        name: String::new(),
        code: 0,
        ranges: Vec::new(),
        words: Vec::new(),
        graph: None,
    };
    match w {
        OpWork::Run(Work::Kernel(l)) => {
            d.kind = "kernel";
            // Registered name, or the symbol looked up only when a race is reported.
            d.name = l.info.as_ref().map_or(String::new(), |i| i.name.clone());
            d.words = kernel_words(l.args.words());
            d.code = l.kernel as usize;
        }
        OpWork::Run(Work::Copy { dst, src, len, .. }) => {
            d.kind = "memcpy";
            d.ranges = vec![
                Range::flat(*src, *len, false),
                Range::flat(*dst, *len, true),
            ];
        }
        OpWork::Run(Work::Fill { dst, len, .. }) => {
            d.kind = "memset";
            d.ranges = vec![Range::flat(*dst, *len, true)];
        }
        OpWork::Run(Work::Strided(t)) => {
            d.kind = match t.op {
                StridedOp::Copy(_) => "2D/3D memcpy",
                StridedOp::Fill(_) => "2D/3D memset",
            };
            let src = match t.op {
                StridedOp::Copy(s) => Some(s),
                StridedOp::Fill(_) => None,
            };
            d.ranges = strided_ranges(t.dst, src, t.width, t.height, t.depth);
        }
        OpWork::Run(Work::Graph(g, _)) => {
            d.kind = "graph launch";
            d.name = format!("graph exec #{}", g.exec_id);
            d.graph = Some(graph_desc(g));
        }
        OpWork::Run(Work::Host(_)) => d.kind = "host function",
        OpWork::Record(_) => d.kind = "event record",
        OpWork::Wait { .. } => d.kind = "event wait",
        OpWork::Hook { .. } => d.kind = "graph event node",
    }
    d
}

/// Op `seq` is being pushed on `s` (the queue is locked).
pub(crate) fn pushed(s: &StreamCore, seq: u64, w: &OpWork) {
    racecheck::pushed(tag(s), seq, desc(w));
}
