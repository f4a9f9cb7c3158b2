//! The rules every kernel launch and every graph kernel node follows: which registration a
//! kernel has, and which configurations it may run with.

use crate::device::Dim3;
use crate::runtime::diagnostics;
use crate::runtime::error::Result;
use crate::runtime::exec::launch::{check_config, KernelInfo, BLOCK_KERNELS};
use crate::runtime::Runtime;
use std::sync::Arc;

impl Runtime {
    /// Kernel `k`'s registration: a `BIREN_KERNEL` kernel's own (its block entry, its sizes)
    /// first, else birenKernelRegister's.
    #[inline]
    pub fn kernel_info(&self, k: usize) -> Option<Arc<KernelInfo>> {
        BLOCK_KERNELS.get(k).or_else(|| self.kernels.get(k))
    }

    /// Checks that kernel `k` may run as `grid` blocks of `block` threads with `shared` bytes of
    /// dynamic shared memory: the device's limits, and the kernel's
    /// birenFuncAttributeMaxDynamicSharedMemorySize. `InvalidConfiguration` otherwise (said to
    /// the validator for `call`).
    pub fn check_launch_config(
        &self,
        k: usize,
        grid: Dim3,
        block: Dim3,
        shared: usize,
        call: &str,
    ) -> Result<()> {
        if let Err(e) = check_config(grid, block, shared) {
            diagnostics::finding(
                call,
                &format!(
                    "invalid configuration grid=({},{},{}) block=({},{},{}) sharedMem={shared}: limits are block <= (1024,1024,64) with at most 1024 threads, grid <= (2147483647,65535,65535), no zero dimension, sharedMem <= 49152",
                    grid.x, grid.y, grid.z, block.x, block.y, block.z
                ),
            );
            return Err(e);
        }
        let max_shared = self.func_attrs.get(k).max_dynamic_shared;
        if shared > max_shared {
            diagnostics::finding(
                call,
                &format!("sharedMem={shared} is over the kernel's birenFuncAttributeMaxDynamicSharedMemorySize ({max_shared})"),
            );
            return Err(crate::runtime::error::ErrorCode::InvalidConfiguration);
        }
        Ok(())
    }
}
