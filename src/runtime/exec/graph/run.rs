//! One launch of an executable graph, running: each node starts when its last dependency
//! finishes, on whatever runs its kind of work (compute units through the scheduler, the copy
//! engines, the host-function thread), independent nodes in parallel. Progress is
//! completion-driven, as in streams: the thread that finishes a node starts the nodes it made
//! ready; nothing blocks on a dependency. The last node to finish completes the launch's op in
//! its stream. A failed node (trap, divergent barrier) fails the launch (sticky LAUNCH_FAILURE);
//! the nodes not yet started are then skipped.

use super::events::LaunchEvents;
use super::exec::{ExecGraph, ExecWork};
use crate::runtime::diagnostics::racecheck;
use crate::runtime::diagnostics::racecheck::GraphDesc;
use crate::runtime::diagnostics::trace::{self, Track};
use crate::runtime::error::{ErrorCode, Result};
use crate::runtime::exec::executor::{Executor, ENGINE_FROM_DEVICE};
use crate::runtime::exec::launch::{KernelArgs, Launch};
use crate::runtime::exec::work::{Completion, GraphWork, Started, Ticket, Work};
use std::ffi::c_void;
use std::sync::atomic::{AtomicI32, AtomicU32, AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;

pub struct GraphRun {
    graph: Arc<ExecGraph>,
    /// Per node: dependencies not yet finished.
    pending: Box<[AtomicU32]>,
    /// Nodes not yet finished.
    left: AtomicUsize,
    /// First failure's code (0: none).
    failure: AtomicI32,
    /// The launch's op in its stream: finished by the last node.
    ticket: Ticket,
    exec: Arc<Executor>,
    priority: i32,
    /// The launching stream's id (traces, race detection).
    stream_id: u64,
    epoch: u64,
    /// Tracing only: when each node started (empty when tracing is off), and this run's id.
    started: Box<[AtomicU64]>,
    trace_id: u64,
    /// Where the launch's event nodes stand (None: the graph has none).
    events: Option<Arc<LaunchEvents>>,
    /// Of every kernel node's threads.
    stack_size: usize,
}

static TRACE_RUNS: AtomicU64 = AtomicU64::new(1);

/// The completion of a kernel node: the scheduler finishes its ticket when the last block ends.
pub struct NodeDone {
    run: Arc<GraphRun>,
    node: u32,
}

impl Completion for NodeDone {
    fn op_finished(&self, _seq: u64, _epoch: u64, r: Result<()>) {
        if racecheck::on() {
            racecheck::graph_node_finished(self.run.stream_id, self.run.ticket.seq, self.node);
        }
        GraphRun::node_done(&self.run, self.node, r);
    }
    fn track(&self) -> Track {
        Track::GraphNode {
            device: self.run.exec.device,
            exec: self.run.graph.exec_id,
            node: self.node,
        }
    }
}

/// A launch of `graph` on the device `exec` runs (`Work::Graph`), with the state of its event
/// nodes when it has some (graph/events.rs).
pub struct GraphLaunch {
    pub exec: Arc<Executor>,
    pub graph: Arc<ExecGraph>,
    pub events: Option<Arc<LaunchEvents>>,
    /// The device's stack size limit at the launch (birenDeviceSetLimit), for its kernel nodes.
    pub stack_size: usize,
}

impl GraphLaunch {
    pub fn work(
        exec: Arc<Executor>,
        graph: Arc<ExecGraph>,
        events: Option<Arc<LaunchEvents>>,
        stack_size: usize,
    ) -> Work {
        Work::Graph(Box::new(GraphLaunch {
            exec,
            graph,
            events,
            stack_size,
        }))
    }
}

impl GraphWork for GraphLaunch {
    fn start(self: Box<Self>, priority: i32, ticket: Ticket) -> Started {
        let GraphLaunch {
            exec,
            graph,
            events,
            stack_size,
        } = *self;
        start(exec, priority, ticket, graph, events, stack_size)
    }
    fn exec_id(&self) -> u64 {
        self.graph.exec_id
    }
    fn node_count(&self) -> usize {
        self.graph.nodes.len()
    }
    fn waits_midway(&self) -> bool {
        self.events.is_some()
    }
    fn race_desc(&self) -> Arc<GraphDesc> {
        super::race::graph_desc(&self.graph)
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

/// Starts a launch of `graph` as the op of `ticket` (called by the executor).
pub fn start(
    exec: Arc<Executor>,
    priority: i32,
    ticket: Ticket,
    graph: Arc<ExecGraph>,
    events: Option<Arc<LaunchEvents>>,
    stack_size: usize,
) -> Started {
    if graph.nodes.is_empty() {
        return Started::Done(Ok(()));
    }
    let stream_id = match ticket.to.track() {
        Track::Stream { id, .. } => id,
        _ => 0,
    };
    let epoch = ticket.epoch;
    let run = Arc::new(GraphRun {
        pending: graph
            .nodes
            .iter()
            .map(|n| AtomicU32::new(n.ndeps))
            .collect(),
        left: AtomicUsize::new(graph.nodes.len()),
        failure: AtomicI32::new(0),
        ticket,
        exec,
        stack_size,
        priority,
        stream_id,
        epoch,
        started: if trace::on() {
            graph.nodes.iter().map(|_| AtomicU64::new(0)).collect()
        } else {
            Box::new([])
        },
        trace_id: if trace::on() {
            TRACE_RUNS.fetch_add(1, Ordering::Relaxed)
        } else {
            0
        },
        graph,
        events,
    });
    let roots = run.graph.roots.to_vec();
    GraphRun::run_nodes(&run, roots);
    Started::Running
}

impl GraphRun {
    fn exec(&self) -> &Arc<Executor> {
        &self.exec
    }

    /// Starts the ready nodes; nodes that finish at once (empty, skipped) make their dependents
    /// ready in turn (a worklist, no recursion).
    fn run_nodes(run: &Arc<GraphRun>, mut ready: Vec<u32>) {
        let exec = run.exec().clone();
        // Between deciding to start and handing over, a reset waits for us (as for stream ops).
        if !exec.enter_start() {
            return;
        }
        if exec.epoch() != run.epoch {
            exec.leave_start();
            return; // the device was reset: this launch no longer exists
        }
        // Gates of record nodes reached: opened after the start section (their records then
        // complete in their lanes).
        let mut gates = Vec::new();
        while let Some(i) = ready.pop() {
            let node = &run.graph.nodes[i as usize];
            let skip = run.failure.load(Ordering::Acquire) != 0 || exec.sticky().is_err();
            if let Some(t) = run.started.get(i as usize) {
                t.store(trace::now(), Ordering::Relaxed);
            }
            match &node.work {
                // Even skipped, a record node records (its event must not stay pending forever).
                ExecWork::EventRecord { slot, .. } => {
                    if let Some(t) = run.events.as_ref().and_then(|e| e.open(*slot)) {
                        gates.push(t);
                    }
                    ready.extend(run.finish_node(i, Ok(())));
                }
                ExecWork::EventWait { slot, .. } => {
                    let now = match &run.events {
                        Some(e) => e.arrive(*slot, run, skip),
                        None => true,
                    };
                    if now {
                        ready.extend(run.finish_node(i, Ok(())));
                    }
                }
                _ if skip => ready.extend(run.finish_node(i, Ok(()))),
                ExecWork::Nothing => ready.extend(run.finish_node(i, Ok(()))),
                ExecWork::Kernel(k) => {
                    // The node owns the argument values; the run keeps the node alive.
                    let args = KernelArgs::ByReference(k.args.as_ptr());
                    run.submit_kernel(i, k.kernel, k.grid, k.block, k.shared, args);
                }
                ExecWork::Fused(c) => {
                    let one = crate::device::Dim3::new(1, 1, 1);
                    // The trampoline's argument is the chain (kept alive by the run).
                    let args = KernelArgs::ByReference(Arc::as_ptr(c) as *mut *mut c_void);
                    run.submit_kernel(i, super::exec::run_fused, one, one, c.shared, args);
                }
                ExecWork::Copy(c) => {
                    let c = *c;
                    // SAFETY: checked when the node was made and at this launch; the memory is
                    // kept until the launch completes (deferred frees).
                    run.submit_engine(i, c.engine, move || unsafe { c.run() });
                }
                ExecWork::Fill(f) => {
                    let f = *f;
                    // SAFETY: as for copies.
                    run.submit_engine(i, ENGINE_FROM_DEVICE, move || unsafe { f.run() });
                }
                ExecWork::Host(h) => {
                    let (r, h) = (run.clone(), *h);
                    let device = exec.device;
                    exec.submit_host(Box::new(move || {
                        if racecheck::on() {
                            racecheck::host_function_enters(r.stream_id, r.ticket.seq);
                        }
                        let t0 = trace::now();
                        // SAFETY: the promise of whoever added the node (`HostCall::invoke`).
                        // Graph host nodes are plain host functions (a stream callback cannot be
                        // captured), which take no status.
                        unsafe { h.invoke(0) };
                        r.trace_node(Track::HostFunctions { device }, i, t0);
                        GraphRun::node_done(&r, i, Ok(()));
                    }));
                }
            }
        }
        exec.leave_start();
        for t in gates {
            t.finish(Ok(()));
        }
    }

    /// Hands kernel node `i` to the scheduler; its last block reports back through `NodeDone`.
    fn submit_kernel(
        self: &Arc<Self>,
        i: u32,
        kernel: crate::device::KernelFn,
        grid: crate::device::Dim3,
        block: crate::device::Dim3,
        shared: usize,
        args: KernelArgs,
    ) {
        let launch = Launch {
            kernel,
            grid,
            block,
            shared,
            args,
            info: self.graph.nodes[i as usize].info.clone(),
            stack_size: self.stack_size,
            cooperative: false,
        };
        let ticket = Ticket {
            to: Arc::new(NodeDone {
                run: self.clone(),
                node: i,
            }),
            seq: 0,
            epoch: self.epoch,
        };
        if racecheck::on() {
            racecheck::graph_node_starts(self.stream_id, self.ticket.seq, i);
        }
        self.exec().scheduler.submit(launch, self.priority, ticket);
    }

    /// Runs `work` (copy or memset node `i`) on copy engine `engine`.
    fn submit_engine(
        self: &Arc<Self>,
        i: u32,
        engine: usize,
        work: impl FnOnce() + Send + 'static,
    ) {
        let r = self.clone();
        let device = self.exec().device;
        self.exec().submit_engine(
            engine,
            Box::new(move || {
                let t0 = trace::now();
                work();
                r.trace_node(Track::CopyEngine { device, engine }, i, t0);
                GraphRun::node_done(&r, i, Ok(()));
            }),
        );
    }

    /// A node ran elsewhere and finished: start what it made ready.
    pub(super) fn node_done(run: &Arc<GraphRun>, node: u32, r: Result<()>) {
        let ready = run.finish_node(node, r);
        if !ready.is_empty() {
            GraphRun::run_nodes(run, ready);
        }
    }

    /// Counts node `i` finished; returns the dependents it made ready. The last node completes
    /// the launch's op in its stream.
    fn finish_node(&self, i: u32, r: Result<()>) -> Vec<u32> {
        if let Err(e) = r {
            let _ = self
                .failure
                .compare_exchange(0, e.code(), Ordering::AcqRel, Ordering::Acquire);
        }
        let node = &self.graph.nodes[i as usize];
        if !self.started.is_empty() {
            self.trace_edges(i);
        }
        let mut ready = Vec::new();
        for &s in node.succ.iter() {
            if self.pending[s as usize].fetch_sub(1, Ordering::AcqRel) == 1 {
                ready.push(s);
            }
        }
        if self.left.fetch_sub(1, Ordering::AcqRel) == 1 {
            let result = match self.failure.load(Ordering::Acquire) {
                0 => Ok(()),
                c => Err(ErrorCode::from_code(c).unwrap_or(ErrorCode::LaunchFailure)),
            };
            self.ticket.finish(result);
        }
        ready
    }

    /// Tracing: node `i` as a span on its own row ("graph exec #E node i") from its start to
    /// now, with an arrow from its end to each dependent (drawn when the dependent starts, whose
    /// own span the arrow then points into).
    fn trace_edges(&self, i: u32) {
        let device = self.exec.device;
        let exec = self.graph.exec_id;
        let row = |node: u32| Track::GraphNode { device, exec, node };
        let n = &self.graph.nodes[i as usize];
        let start = self.started[i as usize].load(Ordering::Relaxed);
        trace::span(
            row(i),
            trace::GRAPH_NODE,
            format!("node {}: {}", n.path, n.label()),
            start,
            format!("\"graph exec\":{exec},\"stream\":{}", self.stream_id),
        );
        let end = trace::now();
        let id = |from: u32, to: u32| {
            1 << 62
                | (self.trace_id & 0xf_ffff) << 40
                | (from as u64 & 0xf_ffff) << 20
                | to as u64 & 0xf_ffff
        };
        // Arrows from the dependencies' ends (drawn at their ends) into this span, and from this
        // span's end to the dependents (drawn when they end, into their spans).
        for &p in self.graph.preds[i as usize].iter() {
            trace::flow_at(row(i), id(p, i), (start + 1).min(end), false);
        }
        for &s in n.succ.iter() {
            trace::flow_at(row(i), id(i, s), end.saturating_sub(1).max(start), true);
        }
    }

    /// Tracing: a span for node `i` that ran on `track` since `t0`.
    fn trace_node(&self, track: Track, i: u32, t0: u64) {
        if trace::on() {
            let n = &self.graph.nodes[i as usize];
            trace::span(
                track,
                trace::GRAPH_NODE,
                format!(
                    "graph exec #{} node {}: {}",
                    self.graph.exec_id,
                    n.path,
                    n.label()
                ),
                t0,
                String::new(),
            );
        }
    }
}
