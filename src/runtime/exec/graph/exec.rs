//! Executable graphs: a graph flattened (child graphs inlined) into nodes with, for each, the
//! number of dependencies and the list of dependents, computed once at instantiation so that a
//! launch only copies the counts.

use super::{GraphBody, KernelNode, NodeKind};
use crate::device::KernelFn;
use crate::runtime::error::{ErrorCode, Result};
use crate::runtime::exec::event::EventCore;
use crate::runtime::exec::launch::KernelInfo;
use crate::runtime::exec::stream::StreamPoint;
use crate::runtime::exec::work::HostCall;
use crate::runtime::lock_order::{Rank, RankedMutex};
use std::sync::Arc;

/// What an executable node does.
#[derive(Clone)]
pub enum ExecWork {
    Kernel(Arc<KernelNode>),
    Copy(super::CopyNode),
    Fill(super::FillNode),
    Host(HostCall),
    /// A chain of single-thread kernels run back to back as one dispatch (see `fuse`).
    Fused(Arc<FusedChain>),
    /// An event wait node: done when its dependencies are and its lane has passed the wait
    /// (graph/events.rs). `slot` indexes the exec graph's `waits`.
    EventWait {
        event: Arc<EventCore>,
        slot: u32,
    },
    /// An event record node: opens its lane's gate, behind which the record is enqueued at
    /// launch. `slot` indexes the exec graph's `records`.
    EventRecord {
        event: Arc<EventCore>,
        slot: u32,
    },
    /// Empty nodes, child-graph entries and exits.
    Nothing,
}

/// An event node of an executable graph: its node, its event, and the wait nodes nearest
/// upstream of it (slots in `waits`): the node cannot run before those have passed.
pub struct EventSlot {
    pub node: u32,
    pub event: Arc<EventCore>,
    pub after_waits: Box<[u32]>,
}

#[derive(Clone)]
pub struct ExecNode {
    pub work: ExecWork,
    pub succ: Box<[u32]>,
    pub ndeps: u32,
    /// Index path in the source graph ("3" or "3.1" inside a child graph), for names.
    pub path: String,
    /// What the node does, in words (trace, messages).
    pub what: String,
    /// A kernel node's name as the scheduler, traces and messages show it.
    pub info: Option<Arc<KernelInfo>>,
}

impl ExecNode {
    pub fn label(&self) -> &str {
        &self.what
    }
}

/// The name a kernel node runs under: "graph exec #E node P: kernel".
fn node_info(exec_id: u64, path: &str, k: &KernelNode) -> Arc<KernelInfo> {
    let name = match &k.info {
        Some(i) => i.name.clone(),
        None => crate::runtime::diagnostics::caller::symbol_or_address(k.kernel as usize),
    };
    Arc::new(KernelInfo {
        name: format!("graph exec #{exec_id} node {path}: {name}"),
        arg_sizes: k
            .info
            .as_ref()
            .map(|i| i.arg_sizes.clone())
            .unwrap_or_default(),
        block_fn: k.info.as_ref().and_then(|i| i.block_fn),
        blocks_fn: k.info.as_ref().and_then(|i| i.blocks_fn),
        region_fn: k.info.as_ref().and_then(|i| i.region_fn),
        thread_fn: k.info.as_ref().and_then(|i| i.thread_fn),
    })
}

/// One immutable version of an executable graph; updates make a new one, so that launches in
/// flight keep the version they started with.
pub struct ExecGraph {
    pub exec_id: u64,
    pub graph_id: u64,
    pub nodes: Box<[ExecNode]>,
    pub roots: Box<[u32]>,
    /// Per node, its dependencies (trace arrows).
    pub preds: Box<[Box<[u32]>]>,
    /// Event wait nodes and event record nodes, each acting at its place in the graph through
    /// a lane of its own per launch (graph/events.rs).
    pub waits: Box<[EventSlot]>,
    pub records: Box<[EventSlot]>,
    /// Executable nodes that touch memory the runtime knows (checked at every launch).
    pub memory_nodes: Box<[u32]>,
    /// The source graph, for a launch captured into another graph and for updates.
    pub source: Arc<GraphBody>,
}

/// The shape update compares: per node its type and dependents, child graphs recursively.
fn same_shape(a: &GraphBody, b: &GraphBody) -> std::result::Result<(), (i32, u32)> {
    if a.nodes.len() != b.nodes.len() {
        return Err((UPDATE_TOPOLOGY_CHANGED, 0));
    }
    for (i, (x, y)) in a.nodes.iter().zip(&b.nodes).enumerate() {
        if x.kind.type_code() != y.kind.type_code() {
            return Err((UPDATE_NODE_TYPE_CHANGED, i as u32));
        }
        if x.succ != y.succ || x.deps != y.deps {
            return Err((UPDATE_TOPOLOGY_CHANGED, i as u32));
        }
        if let (NodeKind::Child(c), NodeKind::Child(d)) = (&x.kind, &y.kind) {
            same_shape(c, d).map_err(|(r, _)| (r, i as u32))?;
        }
        if let (NodeKind::Memcpy(c), NodeKind::Memcpy(d)) = (&x.kind, &y.kind) {
            // CUDA refuses a change of the memory's kind (host <-> device) in an update.
            if c.dst_device != d.dst_device || c.src_device != d.src_device {
                return Err((UPDATE_PARAMETERS_CHANGED, i as u32));
            }
        }
    }
    Ok(())
}

/// `birenGraphExecUpdateResult` values (CUDA's).
pub(crate) const UPDATE_SUCCESS: i32 = 0;
pub(crate) const UPDATE_TOPOLOGY_CHANGED: i32 = 2;
pub(crate) const UPDATE_NODE_TYPE_CHANGED: i32 = 3;
pub(crate) const UPDATE_PARAMETERS_CHANGED: i32 = 5;

struct Flattener {
    exec_id: u64,
    nodes: Vec<ExecNode>,
}

impl Flattener {
    fn push(&mut self, work: ExecWork, path: String, what: String) -> u32 {
        let info = match &work {
            ExecWork::Kernel(k) => Some(node_info(self.exec_id, &path, k)),
            _ => None,
        };
        self.nodes.push(ExecNode {
            work,
            succ: Box::new([]),
            ndeps: 0,
            path,
            what,
            info,
        });
        self.nodes.len() as u32 - 1
    }

    fn edge(&mut self, from: u32, to: u32) {
        let n = &mut self.nodes[from as usize];
        let mut v = std::mem::take(&mut n.succ).into_vec();
        v.push(to);
        n.succ = v.into_boxed_slice();
        self.nodes[to as usize].ndeps += 1;
    }

    /// Adds `body`'s nodes; returns for each node its (entry, exit) executable nodes.
    fn add(&mut self, body: &GraphBody, prefix: &str) -> Vec<(u32, u32)> {
        let mut ends = Vec::with_capacity(body.nodes.len());
        for (i, n) in body.nodes.iter().enumerate() {
            let path = if prefix.is_empty() {
                i.to_string()
            } else {
                format!("{prefix}.{i}")
            };
            let what = n.kind.label();
            let e = match &n.kind {
                NodeKind::Kernel(k) => {
                    let x = self.push(ExecWork::Kernel(k.clone()), path, what);
                    (x, x)
                }
                NodeKind::Memcpy(c) => {
                    let x = self.push(ExecWork::Copy(*c), path, what);
                    (x, x)
                }
                NodeKind::Memset(f) => {
                    let x = self.push(ExecWork::Fill(*f), path, what);
                    (x, x)
                }
                NodeKind::Host(h) => {
                    let x = self.push(ExecWork::Host(*h), path, what);
                    (x, x)
                }
                NodeKind::Empty => {
                    let x = self.push(ExecWork::Nothing, path, what);
                    (x, x)
                }
                NodeKind::EventWait(e) => {
                    let w = ExecWork::EventWait {
                        event: e.clone(),
                        slot: 0,
                    };
                    let x = self.push(w, path, what);
                    (x, x)
                }
                NodeKind::EventRecord(e) => {
                    let w = ExecWork::EventRecord {
                        event: e.clone(),
                        slot: 0,
                    };
                    let x = self.push(w, path, what);
                    (x, x)
                }
                NodeKind::Child(c) => {
                    let entry = self.push(ExecWork::Nothing, format!("{path} (entry)"), what);
                    let inner = self.add(c, &path);
                    let exit = self.push(
                        ExecWork::Nothing,
                        format!("{path} (exit)"),
                        "child graph end".into(),
                    );
                    for (j, cn) in c.nodes.iter().enumerate() {
                        if cn.deps.is_empty() {
                            self.edge(entry, inner[j].0);
                        }
                        if cn.succ.is_empty() {
                            self.edge(inner[j].1, exit);
                        }
                    }
                    if c.nodes.is_empty() {
                        self.edge(entry, exit);
                    }
                    (entry, exit)
                }
            };
            ends.push(e);
        }
        for (i, n) in body.nodes.iter().enumerate() {
            for &s in &n.succ {
                self.edge(ends[i].1, ends[s as usize].0);
            }
        }
        ends
    }
}

impl ExecGraph {
    pub fn build(exec_id: u64, graph_id: u64, body: Arc<GraphBody>) -> ExecGraph {
        let mut f = Flattener {
            exec_id,
            nodes: Vec::new(),
        };
        f.add(&body, "");
        let nodes = fuse(exec_id, f.nodes);
        f.nodes = nodes;
        let roots = (0..f.nodes.len() as u32)
            .filter(|&i| f.nodes[i as usize].ndeps == 0)
            .collect();
        let memory_nodes = (0..f.nodes.len() as u32)
            .filter(|&i| {
                matches!(
                    f.nodes[i as usize].work,
                    ExecWork::Copy(_) | ExecWork::Fill(_)
                )
            })
            .collect();
        let mut preds = vec![Vec::new(); f.nodes.len()];
        for (i, n) in f.nodes.iter().enumerate() {
            for &s in n.succ.iter() {
                preds[s as usize].push(i as u32);
            }
        }
        let (waits, records) = event_slots(&mut f.nodes, &preds);
        ExecGraph {
            exec_id,
            graph_id,
            nodes: f.nodes.into_boxed_slice(),
            roots,
            preds: preds.into_iter().map(Vec::into_boxed_slice).collect(),
            waits,
            records,
            memory_nodes,
            source: body,
        }
    }
}

/// Numbers the event nodes (their `slot`s) and finds, for each, the wait nodes nearest
/// upstream of it (a walk back along `preds` that stops at wait nodes).
fn event_slots(nodes: &mut [ExecNode], preds: &[Vec<u32>]) -> (Box<[EventSlot]>, Box<[EventSlot]>) {
    let (mut waits, mut records) = (Vec::new(), Vec::new());
    let mut wait_slot = vec![u32::MAX; nodes.len()];
    for (i, n) in nodes.iter_mut().enumerate() {
        match &mut n.work {
            ExecWork::EventWait { event, slot } => {
                *slot = waits.len() as u32;
                wait_slot[i] = *slot;
                waits.push((i as u32, event.clone()));
            }
            ExecWork::EventRecord { event, slot } => {
                *slot = records.len() as u32;
                records.push((i as u32, event.clone()));
            }
            _ => {}
        }
    }
    if waits.is_empty() && records.is_empty() {
        return (Box::new([]), Box::new([]));
    }
    let mut seen = vec![u32::MAX; nodes.len()];
    let mut upstream = |start: u32| -> Box<[u32]> {
        let mut found = Vec::new();
        let mut stack: Vec<u32> = preds[start as usize].clone();
        while let Some(p) = stack.pop() {
            if std::mem::replace(&mut seen[p as usize], start) == start {
                continue;
            }
            if wait_slot[p as usize] != u32::MAX {
                found.push(wait_slot[p as usize]);
            } else {
                stack.extend(preds[p as usize].iter().copied());
            }
        }
        found.into_boxed_slice()
    };
    let slots = |list: Vec<(u32, Arc<EventCore>)>, upstream: &mut dyn FnMut(u32) -> Box<[u32]>| {
        list.into_iter()
            .map(|(node, event)| EventSlot {
                node,
                after_waits: upstream(node),
                event,
            })
            .collect::<Box<[EventSlot]>>()
    };
    let w = slots(waits, &mut upstream);
    let r = slots(records, &mut upstream);
    (w, r)
}

/// An executable graph handle's object.
pub struct GraphExec {
    pub id: u64,
    pub device: usize,
    pub(crate) current: RankedMutex<Arc<ExecGraph>>,
    /// The point after its latest launch: launches of one exec run one after another, also
    /// across streams. Held while a launch is enqueued.
    pub(crate) last: RankedMutex<Option<StreamPoint>>,
    /// The lanes of its event nodes (taken after `last`).
    pub(crate) lanes: RankedMutex<super::events::EventLanes>,
    pub caller: usize,
}

impl GraphExec {
    pub fn new(id: u64, device: usize, graph_id: u64, body: GraphBody, caller: usize) -> GraphExec {
        GraphExec {
            id,
            device,
            current: RankedMutex::new(
                Rank::GraphExecForm,
                Arc::new(ExecGraph::build(id, graph_id, Arc::new(body))),
            ),
            last: RankedMutex::new(Rank::GraphExecLaunch, None),
            lanes: RankedMutex::new(Rank::GraphExecLanes, Default::default()),
            caller,
        }
    }

    pub fn snapshot(&self) -> Arc<ExecGraph> {
        self.current.lock().clone()
    }

    /// Replaces the kernel of top-level node `index` (which must be a kernel node of the graph
    /// this exec was instantiated from) for later launches. The executable form is rebuilt
    /// (O(nodes)), so that chain fusion stays right for the new configuration.
    pub fn set_kernel(&self, graph_id: u64, index: u32, k: KernelNode) -> Result<()> {
        self.set_node(graph_id, index, NodeKind::Kernel(Arc::new(k)))
    }

    /// Replaces what top-level node `index` does by `kind`, a node of the same type, for later
    /// launches (`set_kernel`'s rule for any node type).
    pub fn set_node(&self, graph_id: u64, index: u32, kind: NodeKind) -> Result<()> {
        let mut cur = self.current.lock();
        if cur.graph_id != graph_id || index as usize >= cur.source.nodes.len() {
            return Err(ErrorCode::InvalidValue);
        }
        if cur.source.nodes[index as usize].kind.type_code() != kind.type_code() {
            return Err(ErrorCode::InvalidValue);
        }
        let mut source = (*cur.source).clone();
        source.nodes[index as usize].kind = kind;
        *cur = Arc::new(ExecGraph::build(
            cur.exec_id,
            cur.graph_id,
            Arc::new(source),
        ));
        Ok(())
    }

    /// `birenGraphExecUpdate`: takes `body`'s parameters if its shape is the exec's. On failure
    /// returns (result code, index of the offending top-level node).
    pub fn update(&self, body: &GraphBody) -> std::result::Result<(), (i32, u32)> {
        let mut cur = self.current.lock();
        same_shape(&cur.source, body)?;
        let next = ExecGraph::build(cur.exec_id, cur.graph_id, Arc::new(body.detached()));
        *cur = Arc::new(next);
        Ok(())
    }
}

/// A chain of kernels of one block of one thread, run as one dispatch: a trampoline kernel
/// calls them one after another on one compute unit, in the context they would each see
/// (block 0 of 1, thread 0 of 1). Each still starts only after the previous one has returned,
/// so the chain's order is kept; what goes is a scheduler round trip per node.
pub struct FusedChain {
    pub calls: Box<[(KernelFn, *mut *mut std::ffi::c_void)]>,
    /// Keeps the argument values `calls` points to alive.
    _nodes: Box<[Arc<KernelNode>]>,
    pub shared: usize,
}

impl FusedChain {
    /// The kernel nodes of the chain, in order (race detection reads their arguments).
    pub fn kernels(&self) -> &[Arc<KernelNode>] {
        &self._nodes
    }
}

// The pointers are argument arrays owned by `_nodes` (or the user's, for unregistered kernels),
// only read by the trampoline.
unsafe impl Send for FusedChain {}
unsafe impl Sync for FusedChain {}

/// The trampoline: `args` is the FusedChain itself.
///
/// # Safety
/// `args` must point to a live FusedChain.
pub unsafe extern "C" fn run_fused(args: *mut *mut std::ffi::c_void) {
    let chain = &*(args as *const FusedChain);
    for &(k, a) in chain.calls.iter() {
        k(a);
    }
}

fn single_thread(w: &ExecWork) -> Option<&Arc<KernelNode>> {
    match w {
        ExecWork::Kernel(k) if k.grid.volume() == 1 && k.block.volume() == 1 => Some(k),
        _ => None,
    }
}

/// Fuses every maximal chain (each link: the only dependent of a node that is the only
/// dependency of the next) of two or more single-thread kernels into one `Fused` node; returns
/// the nodes renumbered.
fn fuse(exec_id: u64, nodes: Vec<ExecNode>) -> Vec<ExecNode> {
    let n = nodes.len();
    let link = |i: usize| -> Option<usize> {
        let a = &nodes[i];
        if single_thread(&a.work).is_none() || a.succ.len() != 1 {
            return None;
        }
        let j = a.succ[0] as usize;
        (nodes[j].ndeps == 1 && single_thread(&nodes[j].work).is_some()).then_some(j)
    };
    let mut linked_to = vec![false; n];
    for i in 0..n {
        if let Some(j) = link(i) {
            linked_to[j] = true;
        }
    }
    // chain head -> its members, in order
    let mut member_of = vec![usize::MAX; n];
    let mut chains: Vec<Vec<usize>> = Vec::new();
    for (i, &linked) in linked_to.iter().enumerate() {
        if linked || link(i).is_none() {
            continue;
        }
        let mut c = vec![i];
        let mut at = i;
        while let Some(j) = link(at) {
            c.push(j);
            at = j;
        }
        for &m in &c {
            member_of[m] = chains.len();
        }
        chains.push(c);
    }
    if chains.is_empty() {
        return nodes;
    }
    // New index of every old node (members of a chain map to the chain's node).
    let mut new_index = vec![0u32; n];
    let mut next = 0u32;
    for i in 0..n {
        let c = member_of[i];
        if c == usize::MAX {
            new_index[i] = next;
            next += 1;
        } else if chains[c][0] == i {
            for &m in &chains[c] {
                new_index[m] = next;
            }
            next += 1;
        }
    }
    let mut out = Vec::with_capacity(next as usize);
    for i in 0..n {
        let c = member_of[i];
        if c != usize::MAX && chains[c][0] != i {
            continue;
        }
        let renumber =
            |succ: &[u32]| -> Box<[u32]> { succ.iter().map(|&s| new_index[s as usize]).collect() };
        if c == usize::MAX {
            let mut node = nodes[i].clone();
            node.succ = renumber(&node.succ);
            out.push(node);
            continue;
        }
        let members = &chains[c];
        let last = &nodes[*members.last().expect("chain")];
        let ks: Box<[Arc<KernelNode>]> = members
            .iter()
            .map(|&m| single_thread(&nodes[m].work).expect("fusible").clone())
            .collect();
        let chain = FusedChain {
            calls: ks
                .iter()
                .map(|k| {
                    (
                        KernelInfo::thread_entry(k.info.as_ref(), k.kernel),
                        k.args.as_ptr(),
                    )
                })
                .collect(),
            shared: ks.iter().map(|k| k.shared).max().unwrap_or(0),
            _nodes: ks,
        };
        let path = format!("{}..{}", nodes[members[0]].path, last.path);
        let what = format!("{} single-thread kernels run back to back", members.len());
        out.push(ExecNode {
            info: Some(Arc::new(KernelInfo {
                name: format!("graph exec #{exec_id} nodes {path}: {what}"),
                arg_sizes: Vec::new(),
                block_fn: None,
                blocks_fn: None,
                region_fn: None,
                thread_fn: None,
            })),
            work: ExecWork::Fused(Arc::new(chain)),
            succ: renumber(&last.succ),
            ndeps: nodes[members[0]].ndeps,
            path,
            what,
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::Dim3;
    use crate::runtime::exec::launch::KernelArgs;

    unsafe extern "C" fn nop(_: *mut *mut std::ffi::c_void) {}

    fn kernel(threads: u32) -> NodeKind {
        NodeKind::Kernel(Arc::new(KernelNode {
            kernel: nop,
            grid: Dim3::new(1, 1, 1),
            block: Dim3::new(threads, 1, 1),
            shared: 0,
            args: KernelArgs::ByReference(std::ptr::null_mut()),
            info: None,
        }))
    }

    fn chain(kinds: Vec<NodeKind>) -> GraphBody {
        let mut b = GraphBody::default();
        for (i, k) in kinds.into_iter().enumerate() {
            let deps: Vec<u32> = if i == 0 { vec![] } else { vec![i as u32 - 1] };
            b.add(k, &deps).unwrap();
        }
        b
    }

    #[test]
    fn chains_of_single_thread_kernels_fuse_and_wider_ones_break_them() {
        // 1 1 1 | 2 | 1 1 : the first three fuse, the 2-thread kernel stays, the last two fuse.
        let b = chain(vec![
            kernel(1),
            kernel(1),
            kernel(1),
            kernel(2),
            kernel(1),
            kernel(1),
        ]);
        let g = ExecGraph::build(1, 1, Arc::new(b));
        assert_eq!(g.nodes.len(), 3);
        assert!(matches!(&g.nodes[0].work, ExecWork::Fused(c) if c.calls.len() == 3));
        assert!(matches!(g.nodes[1].work, ExecWork::Kernel(_)));
        assert!(matches!(&g.nodes[2].work, ExecWork::Fused(c) if c.calls.len() == 2));
        assert_eq!(&*g.roots, &[0]);
        assert_eq!(&*g.nodes[0].succ, &[1]);
        assert_eq!(&*g.nodes[1].succ, &[2]);
        assert_eq!(g.nodes[2].ndeps, 1);
        assert_eq!(g.nodes[0].path, "0..2");
    }

    #[test]
    fn a_fork_is_not_fused_and_children_are_inlined() {
        // a -> (b, c): a has two dependents, nothing fuses.
        let mut b = GraphBody::default();
        b.add(kernel(1), &[]).unwrap();
        b.add(kernel(1), &[0]).unwrap();
        b.add(kernel(1), &[0]).unwrap();
        let g = ExecGraph::build(1, 1, Arc::new(b.clone()));
        assert_eq!(g.nodes.len(), 3);
        assert_eq!(g.nodes[0].succ.len(), 2);
        // A child graph between two empty nodes: entry, its 3 nodes, exit.
        let mut outer = GraphBody::default();
        outer.add(NodeKind::Empty, &[]).unwrap();
        outer.add(NodeKind::Child(Arc::new(b)), &[0]).unwrap();
        outer.add(NodeKind::Empty, &[1]).unwrap();
        let g = ExecGraph::build(1, 1, Arc::new(outer));
        assert_eq!(g.nodes.len(), 1 + 1 + 3 + 1 + 1);
        assert_eq!(&*g.roots, &[0]);
        let exit = g.nodes.iter().position(|n| n.path == "1 (exit)").unwrap();
        assert_eq!(g.nodes[exit].ndeps, 2, "the child's two leaves");
        assert_eq!(g.preds[exit].len(), 2);
    }
}
