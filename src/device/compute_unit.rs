//! Compute units: one worker thread each, taking blocks from a `BlockSource` and running them.
//! A unit claims a run of consecutive blocks at once (the source decides how many) and reports
//! them done together: one claim and one completion per run instead of per block.

use super::block::{BlockOutcome, BlockRunner, Grid};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::thread::JoinHandle;

/// Where compute units get their blocks: the scheduler implements it.
pub trait BlockSource: Send + Sync + 'static {
    type Kernel: Send;
    /// What one compute unit remembers between blocks (e.g. the kernel it is working on).
    type UnitState;
    /// The initial state of compute unit `cu`.
    fn unit_state(&self, cu: usize) -> Self::UnitState;
    /// Waits for the next blocks for a compute unit: a kernel, its first block and how many
    /// consecutive blocks (at least 1) the unit claimed; `None` when the device shuts down.
    fn next_blocks(&self, unit: &mut Self::UnitState) -> Option<(Self::Kernel, u64, u64)>;
    /// The grid of a kernel the source handed out.
    fn grid(kernel: &Self::Kernel) -> &Grid;
    /// An id of the launch, unique on the device and never 0 (for the kernel watchdog).
    fn launch_id(kernel: &Self::Kernel) -> u64;
    /// Set when the launch is cancelled (a block of it failed, a device reset): a unit stops
    /// running the blocks it claimed.
    fn stop_flag(kernel: &Self::Kernel) -> &AtomicBool;
    /// Reports that the `count` blocks from `first` handed out by `next_blocks` to `unit` have
    /// ended: all completed (`outcome` is `Completed`), or block `at` ended with `outcome` and
    /// the blocks after it were not run.
    fn blocks_done(
        &self,
        unit: &mut Self::UnitState,
        kernel: Self::Kernel,
        first: u64,
        count: u64,
        at: u64,
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
                        while let Some((k, first, count)) = src.next_blocks(&mut unit) {
                            let grid = S::grid(&k);
                            let stop = Some(S::stop_flag(&k));
                            let (outcome, at) = match &watch {
                                None => runner.run_blocks(grid, first, count, stop),
                                Some((_, u)) => {
                                    u.begin_block(S::launch_id(&k));
                                    let o = runner.run_blocks(grid, first, count, stop);
                                    u.end_block();
                                    o
                                }
                            };
                            src.blocks_done(&mut unit, k, first, count, at, outcome);
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
