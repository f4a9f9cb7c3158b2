//! Compute units: one worker thread each, taking blocks from a `BlockSource` and running them.

use super::block::{BlockOutcome, BlockRunner, Grid};
use std::sync::Arc;
use std::thread::JoinHandle;

/// Where compute units get their blocks: the scheduler implements it.
pub trait BlockSource: Send + Sync + 'static {
    type Kernel: Send;
    /// What one compute unit remembers between blocks (e.g. the kernel it is working on).
    type UnitState;
    /// The initial state of compute unit `cu`.
    fn unit_state(&self, cu: usize) -> Self::UnitState;
    /// Waits for the next block for a compute unit; `None` when the device shuts down.
    fn next_block(&self, unit: &mut Self::UnitState) -> Option<(Self::Kernel, u64)>;
    /// The grid of a kernel the source handed out.
    fn grid(kernel: &Self::Kernel) -> &Grid;
    /// An id of the launch, unique on the device and never 0 (for the kernel watchdog).
    fn launch_id(kernel: &Self::Kernel) -> u64;
    /// Reports that a block handed out by `next_block` to `unit` has ended.
    fn block_done(
        &self,
        unit: &mut Self::UnitState,
        kernel: Self::Kernel,
        block: u64,
        outcome: BlockOutcome,
    );
}

/// The worker threads of one device.
pub struct ComputeUnits {
    threads: Vec<JoinHandle<()>>,
}

/// Fiber stack per simulated thread that uses barriers: room for a few hundred KiB of locals.
pub(crate) const FIBER_STACK_SIZE: usize = 256 * 1024;

impl ComputeUnits {
    /// Starts `count` units; returns once each has reported its context offset.
    pub fn start<S: BlockSource>(device: usize, count: usize, source: Arc<S>) -> ComputeUnits {
        let ready = Arc::new(std::sync::Barrier::new(count + 1));
        let watchdog = super::fault::Watchdog::start(device, count);
        let threads = (0..count)
            .map(|cu| {
                let src = source.clone();
                let ready = ready.clone();
                let watch = watchdog.as_ref().map(|w| (w.clone(), w.units[cu].clone()));
                std::thread::Builder::new()
                    .name(format!("biren-d{device}-cu{cu}"))
                    .spawn(move || {
                        super::engine::mark_device_thread();
                        super::kernel_ctx::report_offset();
                        super::fault::prepare_unit_thread();
                        if let Some((w, _)) = &watch {
                            w.register_unit(cu);
                        }
                        ready.wait();
                        let mut runner = BlockRunner::new(FIBER_STACK_SIZE);
                        let mut unit = src.unit_state(cu);
                        while let Some((k, b)) = src.next_block(&mut unit) {
                            let outcome = match &watch {
                                None => runner.run_block(S::grid(&k), b),
                                Some((_, u)) => {
                                    u.begin_block(S::launch_id(&k));
                                    let o = runner.run_block(S::grid(&k), b);
                                    u.end_block();
                                    o
                                }
                            };
                            src.block_done(&mut unit, k, b, outcome);
                        }
                        super::fault::forget_unit_thread();
                    })
                    .expect("biren: cannot start a compute unit thread")
            })
            .collect();
        ready.wait();
        ComputeUnits { threads }
    }

    pub fn count(&self) -> usize {
        self.threads.len()
    }
}
