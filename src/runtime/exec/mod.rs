//! The execution core: per-device contexts, stream queues, events, the executor that hands work
//! to the device, the scheduler of blocks, deadlock detection, host-side waiting, launches and
//! copies. It uses `diagnostics` and `memory`; neither of them uses it.
//!
//! Inside, the imports run one way (an arrow is "imports"; nothing imports what is above it):
//!
//! ```text
//!   context ----------------------------------+  (DeviceContext: enqueue, records, waits,
//!     |        \          \                   |   host synchronize, free, reset)
//!     v         v          v                  |
//!   event    deadlock     copy                |
//!     \         |          |                  |
//!      v        v          |                  |
//!       stream  (StreamCore, ops, deps,       |
//!         |      records, futures)            |
//!         |    \                              |
//!         v     v                             v
//!     executor  notifier                   (all below)
//!         |
//!         v
//!     scheduler
//!         |
//!         v
//!       work  (Work, Ticket, Completion, Progress: plain types and traits)
//!         |
//!         v
//!       launch (Launch, KernelArgs, the kernel table)
//! ```
//!
//! Beside them, `schedule` (the order in which ready ops start: fuzzing, serial, record and
//! replay) is used by `stream`, and `replay` (BIREN_RECORD / BIREN_REPLAY: the recording, the
//! host threads' turns) by `schedule`, `context` and the FFI's boundary; `replay` imports
//! nothing from `exec`.
//!
//! Completions flow up without imports: the executor and the scheduler finish a `Ticket`, whose
//! `Completion` is the stream that started the work; deferred frees wait for `Point`s of a
//! `Progress`, which the streams implement.

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
