//! The plain types at the bottom of the execution core: the work a device runs (kernels, copies,
//! fills, host functions) and the way a finished piece of work is reported back up.
//!
//! The executor and the scheduler run `Work` and report its end through a `Ticket` without
//! knowing who asked: the stream layer implements `Completion` (and `Progress`, for the frees
//! that wait for points in it). So the imports run one way, streams -> executor -> scheduler ->
//! work, and completions flow back up through these trait objects.

use crate::runtime::diagnostics::racecheck::GraphDesc;
use crate::runtime::diagnostics::trace::Track;
use crate::runtime::error::Result;
use crate::runtime::exec::copy::CopyDir;
use std::sync::Arc;

pub use crate::runtime::exec::launch::Launch;

/// A host function enqueued with `birenLaunchHostFunc` or `birenStreamAddCallback`. Plain
/// data, copied into graph nodes and dropped unrun by a reset: it owns nothing, so a call
/// dropped before it runs leaks nothing.
#[derive(Clone, Copy)]
pub struct HostCall {
    pub func: HostFn,
    pub data: usize,
}

/// What a `HostCall` calls.
#[derive(Clone, Copy)]
pub enum HostFn {
    /// `birenLaunchHostFunc`'s `fn(userData)`.
    Plain(unsafe extern "C" fn(*mut std::ffi::c_void)),
    /// A stream callback: `call(f, stream, status, userData)` calls the user's `f` with the
    /// stream's handle and the device's sticky error (0 if none). The C types of `f` belong to
    /// the C boundary, which supplies `call`. It runs even on a device with a sticky error.
    Callback {
        call: unsafe fn(f: usize, stream: usize, status: i32, data: usize),
        f: usize,
        stream: usize,
    },
}

impl HostCall {
    /// A `birenLaunchHostFunc` call of `func(data)`.
    pub fn plain(func: unsafe extern "C" fn(*mut std::ffi::c_void), data: usize) -> HostCall {
        HostCall {
            func: HostFn::Plain(func),
            data,
        }
    }

    /// Runs even on a device with a sticky error (stream callbacks, which report it).
    pub fn despite_error(&self) -> bool {
        matches!(self.func, HostFn::Callback { .. })
    }

    /// Calls it; `status` is the device's sticky error code (0 if none).
    ///
    /// # Safety
    /// The function and its data are the caller's of the enqueue, who promised they are valid
    /// until it has run.
    pub unsafe fn invoke(&self, status: i32) {
        match self.func {
            HostFn::Plain(f) => unsafe { f(self.data as *mut std::ffi::c_void) },
            HostFn::Callback { call, f, stream } => unsafe { call(f, stream, status, self.data) },
        }
    }
}

/// Work that the device runs: on the compute units, a copy engine or the host-function thread.
pub enum Work {
    Kernel(Launch),
    Copy {
        dst: usize,
        src: usize,
        len: usize,
        engine: usize,
        /// Which way the bytes go (traces, profiles).
        dir: CopyDir,
    },
    Fill {
        dst: usize,
        value: u8,
        len: usize,
    },
    Host(HostCall),
    /// A 2D/3D copy or fill (birenMemcpy2D, birenMemset3D, ...).
    Strided(crate::runtime::exec::strided::Strided),
    /// A launch of an executable graph (birenGraphLaunch): one op in its stream, which starts
    /// its nodes itself (`graph::run::GraphLaunch`).
    Graph(Box<dyn GraphWork>),
}

/// A launch of an executable graph as the layers below the graphs see it. The executor hands
/// it its ticket and the graph layer does the rest: so the device side never imports the graphs
/// that use it.
pub trait GraphWork: Send + Sync {
    /// Starts the launch's first nodes; its ticket is finished when the last node ends.
    fn start(self: Box<Self>, priority: i32, ticket: Ticket) -> Started;
    /// The executable graph's id (traces, reports).
    fn exec_id(&self) -> u64;
    /// Its number of nodes (traces).
    fn node_count(&self) -> usize;
    /// It has event nodes, so it may wait midway for other streams' work.
    fn waits_midway(&self) -> bool;
    /// What race detection needs to know of its nodes.
    fn race_desc(&self) -> Arc<GraphDesc>;
    /// The graph layer's own type (a capture turns the launch into a child graph node).
    fn as_any(&self) -> &dyn std::any::Any;
}

impl Work {
    /// What kind of work this is, in words (reports).
    pub fn kind_name(&self) -> &'static str {
        match self {
            Work::Kernel(_) => "kernel",
            Work::Copy { .. } => "copy",
            Work::Fill { .. } => "memset",
            Work::Host(_) => "host function",
            Work::Strided(_) => "2D/3D copy or memset",
            Work::Graph(..) => "graph launch",
        }
    }
}

/// Whoever is told when a piece of work has ended (a stream, for its op).
pub trait Completion: Send + Sync {
    /// Op `seq`, started at reset epoch `epoch`, has ended with `result`.
    fn op_finished(&self, seq: u64, epoch: u64, result: Result<()>);
    /// Tracing: the track that shows the op.
    fn track(&self) -> Track;
}

/// The claim of one running op on its completion: handed to the executor with the work, used
/// once when the work ends.
pub struct Ticket {
    pub to: Arc<dyn Completion>,
    pub seq: u64,
    pub epoch: u64,
}

impl Ticket {
    pub fn finish(&self, result: Result<()>) {
        self.to.op_finished(self.seq, self.epoch, result);
    }
}

/// Something with numbered points that are reached in order (a stream's completed ops).
pub trait Progress: Send + Sync {
    /// Point `seq` is reached.
    fn reached(&self, seq: u64) -> bool;
    /// A number that names the sequence (a stream's id).
    fn id(&self) -> u64;
}

/// Point `seq` of `of`.
#[derive(Clone)]
pub struct Point {
    pub of: Arc<dyn Progress>,
    pub seq: u64,
}

impl Point {
    pub fn reached(&self) -> bool {
        self.of.reached(self.seq)
    }
}

/// Outcome of handing work over.
pub enum Started {
    /// Done already (records, waits, work skipped after a sticky error).
    Done(Result<()>),
    /// Handed to a compute unit or an engine, which will finish its ticket.
    Running,
}

/// A value on cache lines of its own (two, against the adjacent-line prefetcher), so that
/// threads writing its neighbours do not take its line away.
#[repr(align(128))]
pub struct Padded<T>(pub T);

impl<T> std::ops::Deref for Padded<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.0
    }
}
