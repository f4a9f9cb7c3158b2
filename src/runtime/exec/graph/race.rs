//! What race detection needs to know of an executable graph: what each node touches and which
//! node comes before which (`GraphWork::race_desc`).

use crate::runtime::diagnostics::racecheck::{GraphDesc, NodeDesc, Range, Reach};
use crate::runtime::exec::graph::exec::{ExecGraph, ExecWork};
use crate::runtime::exec::graph::{CopyNode, FillNode};
use crate::runtime::exec::race::{kernel_words, strided_ranges};
use crate::runtime::lock_order::{Rank, RankedMutex};
use std::sync::{Arc, Weak};

fn copy_node_ranges(c: &CopyNode) -> Vec<Range> {
    let (dst, src) = c.sides();
    strided_ranges(dst, Some(src), c.width, c.height, c.depth)
}

fn fill_node_ranges(f: &FillNode) -> Vec<Range> {
    strided_ranges(f.side(), None, f.width * f.elem, f.height, f.depth)
}

/// Executable graphs described lately (an executable graph is immutable; the weak reference
/// keeps its address from being reused while it is listed).
static GRAPHS: RankedMutex<Vec<(Weak<ExecGraph>, Arc<GraphDesc>)>> =
    RankedMutex::new(Rank::RaceGraphs, Vec::new());
const GRAPHS_KEPT: usize = 32;

/// What each node of `g` touches, and which node comes before which (once per executable graph).
pub(crate) fn graph_desc(g: &Arc<ExecGraph>) -> Arc<GraphDesc> {
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
