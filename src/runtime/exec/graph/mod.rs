//! Task graphs (`birenGraph*`): a graph is a DAG of nodes (kernels, copies, fills, host
//! functions, event records and waits, child graphs, empty nodes) built explicitly or by stream
//! capture; `instantiate` turns it into an executable graph (`exec.rs`) whose launch is one op
//! in a stream (`run.rs`).
//!
//! Graphs are host objects: they belong to no device and survive `birenDeviceReset`. Handles of
//! graphs, nodes and executable graphs live in the registries of `tables()`.

pub mod capture;
pub mod events;
pub mod exec;
pub mod race;
pub mod run;

use crate::device::{Dim3, KernelFn};
use crate::runtime::error::{ErrorCode, Result};
use crate::runtime::exec::event::EventCore;
use crate::runtime::exec::launch::{KernelArgs, KernelInfo};
use crate::runtime::exec::strided::Side;
use crate::runtime::exec::work::HostCall;
use crate::runtime::lock_order::{Rank, RankedMutex};
use crate::runtime::registry::{HandleKind, Registry};
use std::fmt::Write as _;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

/// A kernel node: what a launch would carry, with its arguments captured when the node was made.
pub struct KernelNode {
    pub kernel: KernelFn,
    pub grid: Dim3,
    pub block: Dim3,
    pub shared: usize,
    pub args: KernelArgs,
    pub info: Option<Arc<KernelInfo>>,
}

/// A copy of `depth` slices of `height` rows of `width` bytes (1-D: height = depth = 1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CopyNode {
    pub dst: usize,
    pub src: usize,
    pub width: usize,
    pub height: usize,
    pub depth: usize,
    pub dst_pitch: usize,
    pub src_pitch: usize,
    /// Bytes between slices (pitch × rows of the allocation).
    pub dst_slice: usize,
    pub src_slice: usize,
    pub engine: usize,
    /// Which sides are device memory (checked again at launch).
    pub dst_device: bool,
    pub src_device: bool,
}

impl CopyNode {
    /// The bytes from the first to the last touched on each side: (dst span, src span).
    pub fn spans(&self) -> (usize, usize) {
        let span = |pitch: usize, slice: usize| {
            (self.depth - 1) * slice + (self.height - 1) * pitch + self.width
        };
        (
            span(self.dst_pitch, self.dst_slice),
            span(self.src_pitch, self.src_slice),
        )
    }

    /// The destination and source sides: (dst, src).
    pub fn sides(&self) -> (Side, Side) {
        (
            Side {
                base: self.dst,
                pitch: self.dst_pitch,
                slice: self.dst_slice,
            },
            Side {
                base: self.src,
                pitch: self.src_pitch,
                slice: self.src_slice,
            },
        )
    }

    /// Performs the copy.
    ///
    /// # Safety
    /// Every row must be valid memory (checked when the node was made and at launch).
    pub unsafe fn run(&self) {
        if self.width == 0 {
            return; // a zero extent: nothing to copy (the pointers may be anything)
        }
        let (dst, src) = self.sides();
        for (d, s) in dst
            .rows(self.height, self.depth)
            .zip(src.rows(self.height, self.depth))
        {
            std::ptr::copy(s as *const u8, d as *mut u8, self.width);
        }
    }

    pub fn bytes(&self) -> usize {
        self.width * self.height * self.depth
    }
}

/// A fill of `depth` slices (`slice` bytes apart) of `height` rows (`pitch` bytes apart) of
/// `width` elements of `elem` bytes (1, 2 or 4) with `value`. A memset node made with
/// birenGraphAddMemsetNode has one slice (CUDA's birenMemsetParams is 2-D); a captured
/// birenMemset3DAsync has `depth` slices.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FillNode {
    pub dst: usize,
    pub pitch: usize,
    pub value: u32,
    pub elem: usize,
    pub width: usize,
    pub height: usize,
    pub depth: usize,
    pub slice: usize,
}

impl FillNode {
    pub fn span(&self) -> usize {
        (self.depth - 1) * self.slice + (self.height - 1) * self.pitch + self.width * self.elem
    }

    pub fn bytes(&self) -> usize {
        self.width * self.elem * self.height * self.depth
    }

    /// The side written (its rows are `width * elem` bytes).
    pub fn side(&self) -> Side {
        Side {
            base: self.dst,
            pitch: self.pitch,
            slice: self.slice,
        }
    }

    /// # Safety
    /// Every row must be valid device memory (checked when the node was made and at launch).
    pub unsafe fn run(&self) {
        for row in self.side().rows(self.height, self.depth) {
            match self.elem {
                1 => std::ptr::write_bytes(row as *mut u8, self.value as u8, self.width),
                2 => {
                    for i in 0..self.width {
                        std::ptr::write_unaligned((row as *mut u16).add(i), self.value as u16)
                    }
                }
                _ => {
                    for i in 0..self.width {
                        std::ptr::write_unaligned((row as *mut u32).add(i), self.value)
                    }
                }
            }
        }
    }
}

/// What a node does.
#[derive(Clone)]
pub enum NodeKind {
    Kernel(Arc<KernelNode>),
    Memcpy(CopyNode),
    Memset(FillNode),
    Host(HostCall),
    /// A copy of the child graph, taken when the node was added.
    Child(Arc<GraphBody>),
    Empty,
    EventRecord(Arc<EventCore>),
    EventWait(Arc<EventCore>),
}

/// `birenGraphNodeType` values (CUDA's).
pub(crate) const NODE_KERNEL: i32 = 0;
pub(crate) const NODE_MEMCPY: i32 = 1;
pub(crate) const NODE_MEMSET: i32 = 2;
pub(crate) const NODE_HOST: i32 = 3;
pub(crate) const NODE_GRAPH: i32 = 4;
pub(crate) const NODE_EMPTY: i32 = 5;
pub(crate) const NODE_WAIT_EVENT: i32 = 6;
pub(crate) const NODE_EVENT_RECORD: i32 = 7;

impl NodeKind {
    pub fn type_code(&self) -> i32 {
        match self {
            NodeKind::Kernel(_) => NODE_KERNEL,
            NodeKind::Memcpy(_) => NODE_MEMCPY,
            NodeKind::Memset(_) => NODE_MEMSET,
            NodeKind::Host(_) => NODE_HOST,
            NodeKind::Child(_) => NODE_GRAPH,
            NodeKind::Empty => NODE_EMPTY,
            NodeKind::EventWait(_) => NODE_WAIT_EVENT,
            NodeKind::EventRecord(_) => NODE_EVENT_RECORD,
        }
    }

    /// A short label (DOT output, trace names).
    pub fn label(&self) -> String {
        match self {
            NodeKind::Kernel(k) => match &k.info {
                Some(i) => format!("kernel {}", i.name),
                None => format!(
                    "kernel {}",
                    crate::runtime::diagnostics::caller::symbol_or_address(k.kernel as usize)
                ),
            },
            NodeKind::Memcpy(c) => format!("memcpy {} B", c.bytes()),
            NodeKind::Memset(f) => format!("memset {} B = {:#x}", f.bytes(), f.value),
            NodeKind::Host(_) => "host function".into(),
            NodeKind::Child(g) => format!("child graph ({} nodes)", g.nodes.len()),
            NodeKind::Empty => "empty".into(),
            NodeKind::EventWait(e) => format!("wait event #{}", e.id),
            NodeKind::EventRecord(e) => format!("record event #{}", e.id),
        }
    }
}

/// One node: its work, its dependencies and dependents (indices into the graph's nodes).
#[derive(Clone)]
pub struct Node {
    pub kind: NodeKind,
    pub deps: Vec<u32>,
    pub succ: Vec<u32>,
    /// The node's handle (0 for nodes of a child graph's copy, which have none).
    pub handle: u64,
}

/// The contents of a graph. Nodes are never removed; indices are creation order.
#[derive(Clone, Default)]
pub struct GraphBody {
    pub nodes: Vec<Node>,
}

impl GraphBody {
    /// True if `to` can reach `from` along edges, i.e. an edge from -> to would close a cycle.
    pub fn reaches(&self, from: u32, to: u32) -> bool {
        let mut seen = vec![false; self.nodes.len()];
        let mut stack = vec![from];
        while let Some(n) = stack.pop() {
            if n == to {
                return true;
            }
            if std::mem::replace(&mut seen[n as usize], true) {
                continue;
            }
            stack.extend(self.nodes[n as usize].succ.iter().copied());
        }
        false
    }

    /// Adds a node after `deps` (distinct, existing); returns its index.
    pub fn add(&mut self, kind: NodeKind, deps: &[u32]) -> Result<u32> {
        for (i, d) in deps.iter().enumerate() {
            if *d as usize >= self.nodes.len() || deps[..i].contains(d) {
                return Err(ErrorCode::InvalidValue);
            }
        }
        let at = self.nodes.len() as u32;
        for d in deps {
            self.nodes[*d as usize].succ.push(at);
        }
        self.nodes.push(Node {
            kind,
            deps: deps.to_vec(),
            succ: Vec::new(),
            handle: 0,
        });
        Ok(at)
    }

    /// Adds the edges `from[i] -> to[i]`, all or none: INVALID_VALUE for a self edge, an edge
    /// already present (or given twice), or one that would close a cycle.
    pub fn add_edges(&mut self, edges: &[(u32, u32)]) -> Result<()> {
        let saved = self.clone_edges();
        for (k, &(f, t)) in edges.iter().enumerate() {
            let ok = f != t && !self.nodes[f as usize].succ.contains(&t) && !self.reaches(t, f);
            if !ok {
                self.restore_edges(saved);
                let _ = k;
                return Err(ErrorCode::InvalidValue);
            }
            self.nodes[f as usize].succ.push(t);
            self.nodes[t as usize].deps.push(f);
        }
        Ok(())
    }

    /// Removes the edges `from[i] -> to[i]`, all or none: INVALID_VALUE if one is absent.
    pub fn remove_edges(&mut self, edges: &[(u32, u32)]) -> Result<()> {
        let saved = self.clone_edges();
        for &(f, t) in edges {
            let s = &mut self.nodes[f as usize].succ;
            let Some(i) = s.iter().position(|x| *x == t) else {
                self.restore_edges(saved);
                return Err(ErrorCode::InvalidValue);
            };
            s.remove(i);
            let d = &mut self.nodes[t as usize].deps;
            if let Some(i) = d.iter().position(|x| *x == f) {
                d.remove(i);
            }
        }
        Ok(())
    }

    fn clone_edges(&self) -> Vec<(Vec<u32>, Vec<u32>)> {
        self.nodes
            .iter()
            .map(|n| (n.deps.clone(), n.succ.clone()))
            .collect()
    }

    fn restore_edges(&mut self, saved: Vec<(Vec<u32>, Vec<u32>)>) {
        for (n, (d, s)) in self.nodes.iter_mut().zip(saved) {
            n.deps = d;
            n.succ = s;
        }
    }

    /// Every edge, grouped by source node in creation order.
    pub fn edges(&self) -> Vec<(u32, u32)> {
        let mut v = Vec::new();
        for (i, n) in self.nodes.iter().enumerate() {
            for &s in &n.succ {
                v.push((i as u32, s));
            }
        }
        v
    }

    /// A copy with no handles (child graphs, instantiation).
    pub fn detached(&self) -> GraphBody {
        let mut b = self.clone();
        for n in &mut b.nodes {
            n.handle = 0;
        }
        b
    }

    /// The graph in Graphviz DOT, `name` as the cluster label; child graphs as nested clusters.
    pub fn dot(&self, name: &str, prefix: &str, out: &mut String, verbose: bool) {
        let _ = writeln!(out, "subgraph \"cluster_{prefix}\" {{");
        let _ = writeln!(out, "  label=\"{name}\";");
        for (i, n) in self.nodes.iter().enumerate() {
            let id = format!("{prefix}_{i}");
            let shape = match n.kind {
                NodeKind::Kernel(_) => "box",
                NodeKind::Memcpy(_) | NodeKind::Memset(_) => "parallelogram",
                NodeKind::Host(_) => "hexagon",
                NodeKind::Empty => "circle",
                NodeKind::EventRecord(_) | NodeKind::EventWait(_) => "diamond",
                NodeKind::Child(_) => "folder",
            };
            let mut label = format!("node {i}\\n{}", n.kind.label().replace('"', "'"));
            if verbose {
                match &n.kind {
                    NodeKind::Kernel(k) => {
                        let _ = write!(
                            label,
                            "\\ngrid ({},{},{}) block ({},{},{})\\nshared {} B",
                            k.grid.x, k.grid.y, k.grid.z, k.block.x, k.block.y, k.block.z, k.shared
                        );
                    }
                    NodeKind::Memcpy(c) => {
                        let _ = write!(label, "\\n{:#x} -> {:#x}", c.src, c.dst);
                    }
                    NodeKind::Memset(f) => {
                        let _ = write!(label, "\\n{:#x}", f.dst);
                    }
                    _ => {}
                }
            }
            let _ = writeln!(out, "  \"{id}\" [shape={shape}, label=\"{label}\"];");
            if let NodeKind::Child(c) = &n.kind {
                c.dot(&format!("node {i}: child graph"), &id, out, verbose);
                let _ = writeln!(
                    out,
                    "  \"{id}\" -> \"{id}_0\" [style=dashed, arrowhead=none];"
                );
            }
        }
        for (f, t) in self.edges() {
            let _ = writeln!(out, "  \"{prefix}_{f}\" -> \"{prefix}_{t}\";");
        }
        let _ = writeln!(out, "}}");
    }
}

/// A graph: its id (messages, traces) and its contents.
pub struct GraphCore {
    pub id: u64,
    pub(crate) body: RankedMutex<GraphBody>,
    /// Return address of the creator (leak reports).
    pub caller: usize,
}

/// What a node handle refers to.
pub struct NodeRef {
    pub graph: u64,
    pub index: u32,
    pub owner: std::sync::Weak<GraphCore>,
}

/// The registries of graph objects.
pub struct Tables {
    pub graphs: Registry<GraphCore>,
    pub nodes: Registry<NodeRef>,
    pub execs: Registry<exec::GraphExec>,
    ids: AtomicU64,
}

/// The process-wide tables (graphs are host objects, not a device's).
pub fn tables() -> &'static Tables {
    static T: OnceLock<Tables> = OnceLock::new();
    T.get_or_init(|| Tables {
        graphs: Registry::new(HandleKind::Graph),
        nodes: Registry::new(HandleKind::GraphNode),
        execs: Registry::new(HandleKind::GraphExec),
        ids: AtomicU64::new(0),
    })
}

impl Tables {
    pub fn next_id(&self) -> u64 {
        self.ids.fetch_add(1, Ordering::Relaxed) + 1
    }

    /// Registers a new graph with `body`; gives every node a handle. Returns the graph handle.
    pub fn insert_graph(
        &self,
        mut body: GraphBody,
        caller: usize,
    ) -> Result<(u64, Arc<GraphCore>)> {
        let id = self.next_id();
        let g = Arc::new(GraphCore {
            id,
            body: RankedMutex::new(Rank::GraphBody, GraphBody::default()),
            caller,
        });
        for (i, n) in body.nodes.iter_mut().enumerate() {
            n.handle = self
                .nodes
                .insert(Arc::new(NodeRef {
                    graph: id,
                    index: i as u32,
                    owner: Arc::downgrade(&g),
                }))
                .ok_or(ErrorCode::OutOfMemory)?;
        }
        *g.body.lock() = body;
        let h = self
            .graphs
            .insert(g.clone())
            .ok_or(ErrorCode::OutOfMemory)?;
        Ok((h, g))
    }

    /// Adds a node to `g` and gives it a handle.
    pub fn add_node(&self, g: &Arc<GraphCore>, kind: NodeKind, deps: &[u32]) -> Result<(u64, u32)> {
        let mut b = g.body.lock();
        let i = b.add(kind, deps)?;
        let h = self.nodes.insert(Arc::new(NodeRef {
            graph: g.id,
            index: i,
            owner: Arc::downgrade(g),
        }));
        let Some(h) = h else {
            // Out of handles: take the node back out (it is the last one, with no dependents).
            let n = b.nodes.pop().expect("just added");
            for d in n.deps {
                b.nodes[d as usize].succ.pop();
            }
            return Err(ErrorCode::OutOfMemory);
        };
        b.nodes[i as usize].handle = h;
        Ok((h, i))
    }

    /// Destroys a graph: its handle and its nodes' handles stop working.
    pub fn destroy_graph(&self, handle: u64) -> Result<()> {
        let g = self.graphs.remove(handle).ok_or(ErrorCode::InvalidHandle)?;
        let b = g.body.lock();
        for n in &b.nodes {
            self.nodes.remove(n.handle);
        }
        Ok(())
    }

    /// A node handle's graph id and index.
    pub fn node(&self, handle: u64) -> Result<Arc<NodeRef>> {
        self.nodes.get(handle).ok_or(ErrorCode::InvalidHandle)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chain(n: usize) -> GraphBody {
        let mut b = GraphBody::default();
        for i in 0..n {
            let deps: Vec<u32> = if i == 0 { vec![] } else { vec![i as u32 - 1] };
            b.add(NodeKind::Empty, &deps).unwrap();
        }
        b
    }

    #[test]
    fn cycles_are_refused_and_nothing_changes() {
        let mut b = chain(3);
        assert_eq!(b.add_edges(&[(2, 0)]), Err(ErrorCode::InvalidValue));
        assert_eq!(
            b.add_edges(&[(0, 1)]),
            Err(ErrorCode::InvalidValue),
            "duplicate"
        );
        assert_eq!(b.add_edges(&[(1, 1)]), Err(ErrorCode::InvalidValue), "self");
        // All or none: the first edge is fine, the second closes a cycle.
        assert_eq!(b.add_edges(&[(0, 2), (2, 0)]), Err(ErrorCode::InvalidValue));
        assert_eq!(b.edges(), vec![(0, 1), (1, 2)]);
        b.add_edges(&[(0, 2)]).unwrap();
        assert_eq!(b.edges(), vec![(0, 1), (0, 2), (1, 2)]);
        b.remove_edges(&[(1, 2)]).unwrap();
        assert_eq!(b.remove_edges(&[(1, 2)]), Err(ErrorCode::InvalidValue));
        assert_eq!(b.nodes[2].deps, vec![0]);
    }

    #[test]
    fn add_checks_dependencies() {
        let mut b = chain(2);
        assert_eq!(b.add(NodeKind::Empty, &[5]), Err(ErrorCode::InvalidValue));
        assert_eq!(
            b.add(NodeKind::Empty, &[0, 0]),
            Err(ErrorCode::InvalidValue)
        );
        assert_eq!(b.nodes.len(), 2);
        assert_eq!(b.add(NodeKind::Empty, &[0, 1]), Ok(2));
    }
}
