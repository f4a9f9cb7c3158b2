//! The simulated accelerator: compute units that run kernel blocks, the block executor with its
//! barriers, and the engine threads that run copies and host functions. It knows nothing of
//! streams or handles; it runs what the scheduler gives it.

pub mod block;
pub mod compute_unit;
pub mod engine;
pub mod fault;
pub mod fiber;
pub mod kernel_ctx;
pub mod lock_order;

pub use block::{BlockFn, BlockOutcome, BlockRunner, BlocksFn, Grid, KernelFn};
pub use compute_unit::{BlockSource, ComputeUnits};
pub use engine::EngineThread;
pub use kernel_ctx::{Dim3, KernelCtx, KernelLoop};
