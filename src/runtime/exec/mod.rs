//! The execution core: per-device contexts, stream queues, events, the executor that hands work
//! to the device, the scheduler of blocks, deadlock detection, host-side waiting, graphs, launches
//! and copies. It uses `diagnostics` and `memory`; neither of them uses it, and none of the three
//! reaches the runtime's root (`Runtime`), which imports them.
//!
//! Inside, the files stand in five layers, and a file imports only its own layer and those below
//! it (`tests/architecture.rs` reads every path and fails on one that runs up):
//!
//! ```text
//!   context   context/ (DeviceContext: enqueue, records, waits, reset), context/host_sync.rs,
//!             context/memory.rs, context/graph_launch.rs (a launch with event nodes)
//!   graphs    graph/ (the model: GraphCore, nodes), graph/exec.rs (ExecGraph: the plan),
//!             graph/run.rs (GraphRun, GraphLaunch), graph/events.rs, graph/capture.rs,
//!             graph/race.rs
//!   streams   stream/ (StreamCore: the op queue), stream/point.rs (points, deps, records,
//!             futures), stream/report.rs, stream_set.rs, event.rs, deadlock.rs
//!   device    executor/ (Executor: dispatch, sticky error), executor/backlog.rs,
//!             executor/frees.rs, executor/reset.rs, scheduler.rs, notifier.rs
//!   ops       work.rs (Work, Ticket, Completion, Progress, GraphWork), copy.rs (directions,
//!             engine ids), strided.rs, launch.rs (Launch, KernelArgs, the kernel table)
//!
//!   debug hooks, called from any layer, importing only the ops: schedule.rs (BIREN_SCHEDULE),
//!   race.rs (what race detection is told of the device's work), replay/ (BIREN_RECORD/REPLAY)
//! ```
//!
//! What runs up does so through trait objects the lower layer defines: a finished piece of work
//! calls its `Ticket`'s `Completion` (a stream, or a graph node); deferred frees wait for `Point`s
//! of a `Progress` (a stream); a graph launch is a `Work::Graph` holding a `GraphWork`, which the
//! executor starts without knowing graphs; a deferred op is a closure the schedule runs.
//!
//! The checks of copies that need the whole runtime (every device's memory, the host
//! registrations) are `Runtime` methods in `runtime/copies.rs`.

pub mod context;
pub mod copy;
pub mod deadlock;
pub mod event;
pub mod executor;
pub mod graph;
pub mod launch;
pub mod notifier;
pub mod race;
pub mod replay;
pub mod schedule;
pub mod scheduler;
pub mod stream;
pub mod stream_set;
pub mod strided;
pub mod work;
