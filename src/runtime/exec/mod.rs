//! The execution core: per-device contexts, stream queues, events, the executor that hands work
//! to the device, the scheduler of blocks, deadlock detection, host-side waiting, launches and
//! copies. It uses `diagnostics` and `memory`; neither of them uses it.

pub mod context;
pub mod copy;
pub mod deadlock;
pub mod event;
pub mod executor;
pub mod launch;
pub mod notifier;
pub mod scheduler;
pub mod stream;
pub mod stream_set;
