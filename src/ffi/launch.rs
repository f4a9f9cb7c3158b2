//! Kernels (SPEC §4): launch, registration, and the built-ins a kernel calls.

use super::boundary::{ffi_call, ffi_value, handle};
use super::device_of;
use super::types::*;
use crate::device::{self, kernel_ctx};
use crate::runtime::error::{ErrorCode, Result};
use crate::runtime::exec::launch::{
    cooperative_fits, KernelArgs, Launch, BLOCK_KERNELS, MAX_ARG_SIZE, MAX_KERNEL_ARGS,
};
use crate::runtime::exec::work::Work;
use crate::runtime::{self, diagnostics};
use std::collections::HashSet;
use std::ffi::{c_char, c_uint, c_void, CStr};
use std::sync::{Mutex, Once};

fn launch(
    kernel: birenKernel_t,
    grid: Dim3,
    block: Dim3,
    args: *mut *mut c_void,
    sizes: Option<&[usize]>,
    sharedMem: usize,
    stream: birenStream_t,
    call: &str,
    cooperative: bool,
) -> Result<()> {
    let rt = runtime::get()?;
    let Some(k) = kernel else {
        diagnostics::finding(call, "kernel is NULL");
        return Err(ErrorCode::InvalidValue);
    };
    rt.check_launch_config(k as usize, grid, block, sharedMem, call)?;
    let s = rt.stream_ref(handle(stream))?;
    let d = device_of(rt, s.device)?;
    if cooperative && !cooperative_fits(grid, block, d.exec.compute_units()) {
        diagnostics::finding(
            call,
            &format!(
                "cooperative grid ({},{},{}) of blocks ({},{},{}) does not fit on the device at once: at most {} blocks and {} threads ({} compute units)",
                grid.x, grid.y, grid.z, block.x, block.y, block.z,
                crate::runtime::exec::launch::COOPERATIVE_BLOCKS_PER_UNIT * d.exec.compute_units() as u64,
                crate::runtime::exec::launch::COOPERATIVE_THREADS_PER_UNIT * d.exec.compute_units() as u64,
                d.exec.compute_units()
            ),
        );
        return Err(ErrorCode::CooperativeLaunchTooLarge);
    }
    // Arguments may point into device memory that a reset during this call frees.
    let epoch = d.exec.epoch();
    // A BIREN_KERNEL kernel's own registration (its block entry, its sizes) comes first.
    let info = rt.kernel_info(k as usize);
    // A kernel whose signature is known: the arguments must fit it, as in a call.
    let bad = |why: String| {
        diagnostics::finding(call, &why);
        Err(ErrorCode::InvalidValue)
    };
    let args = match (sizes, &info) {
        (Some(sz), Some(i)) => match i.mismatch(sz) {
            Some(why) => return bad(why),
            None => unsafe { KernelArgs::copy(args, sz)? },
        },
        (Some(sz), None) => unsafe { KernelArgs::copy(args, sz)? },
        (None, Some(i)) => match unsafe { i.missing_argument(args) } {
            Some(why) => return bad(why),
            None => unsafe { KernelArgs::copy(args, &i.arg_sizes)? },
        },
        (None, None) => {
            // args == NULL: a kernel without arguments, nothing to read by reference.
            if diagnostics::validator_on() && !args.is_null() {
                advise_unregistered(k as usize);
            }
            KernelArgs::ByReference(args)
        }
    };
    let l = Launch {
        kernel: k,
        grid,
        block,
        shared: sharedMem,
        stack_size: rt.settings[s.device].stack_size(),
        args,
        info,
        cooperative,
    };
    match d.enqueue_since(&s, Work::Kernel(l), Vec::new(), epoch) {
        // The device was reset during the call: the launch goes the way of the reset's streams.
        Err(ErrorCode::InvalidDevicePointer) => Err(ErrorCode::InvalidHandle),
        r => {
            if r.is_ok() && diagnostics::validator_on() {
                let threads = grid.volume().saturating_mul(block.volume());
                crate::runtime::diagnostics::advice::small_kernel_launched(
                    k as usize,
                    threads,
                    |a| {
                        rt.kernels.get(a).map_or_else(
                            || crate::runtime::diagnostics::caller::symbol_or_address(a),
                            |i| i.name.clone(),
                        )
                    },
                );
            }
            r.map(|_| ())
        }
    }
}

fn advise_unregistered(k: usize) {
    static SEEN: Mutex<Option<HashSet<usize>>> = Mutex::new(None);
    let mut g = SEEN.lock().unwrap_or_else(|e| e.into_inner());
    if g.get_or_insert_with(HashSet::new).insert(k) {
        let name = crate::runtime::diagnostics::caller::symbol_at(k)
            .unwrap_or_else(|| format!("kernel@{k:#x}"));
        diagnostics::advice(&format!(
            "{name} is not registered: its args are read by reference when it runs, so they must stay valid until it completes. \
             Register it (birenKernelRegister) or launch with BIREN_LAUNCH to have the values copied at launch."
        ));
    }
}

/// Enqueues `kernel` on `stream` (NULL: the default stream) as a grid of `grid` blocks of `block`
/// threads, with `sharedMem` bytes of per-block shared memory (birenSharedMemory).
///
/// `args` is an array of pointers to the argument values, as in CUDA. For a kernel registered
/// with birenKernelRegister the values are copied now, so `args` may be reused at once. For an
/// unregistered kernel the runtime cannot know the sizes: `args` and the values it points to are
/// read when the kernel runs and must stay valid until it completes (prefer BIREN_LAUNCH).
///
/// Returns BIREN_ERROR_INVALID_VALUE for a NULL kernel; BIREN_ERROR_INVALID_CONFIGURATION for a
/// zero dimension, a block over (1024,1024,64) or 1024 threads, a grid over
/// (2^31-1,65535,65535), or sharedMem over sharedMemPerBlock or over the kernel's
/// birenFuncAttributeMaxDynamicSharedMemorySize; BIREN_ERROR_INVALID_VALUE, for a kernel whose
/// signature is known (BIREN_KERNEL, birenKernelRegister), when `args` is NULL and the kernel
/// has parameters, or one of its first numArgs pointers is NULL (the array carries no length, as
/// in CUDA: its number of entries cannot be checked; birenLaunchKernelArgs and BIREN_LAUNCH
/// check the number and sizes); BIREN_ERROR_INVALID_HANDLE for a
/// destroyed stream, or for a launch that overlaps a birenDeviceReset of its device (its
/// arguments may point to memory the reset freed). Nothing is enqueued on error. Thread-safe.
///
/// A host may run at most 4096 operations (launches, copies, host functions, graph launches)
/// ahead of a device: an enqueue that finds more unfinished there waits until 2048 are left, as
/// CUDA's launch blocks while its queue is full. If nothing finishes for 10 ms meanwhile (the
/// queued work waits for something this host has yet to do) it goes on, and enqueues do not
/// wait again until an operation finishes. Never on a runtime thread (host functions).
#[no_mangle]
pub extern "C" fn birenLaunchKernel(
    kernel: birenKernel_t,
    grid: Dim3,
    block: Dim3,
    args: *mut *mut c_void,
    sharedMem: usize,
    stream: birenStream_t,
) -> birenError_t {
    ffi_call!("birenLaunchKernel"(kernel, grid, block, args, sharedMem, stream) {
        launch(kernel, grid, block, args, None, sharedMem, stream, "birenLaunchKernel", false)
    })
}

/// Like birenLaunchKernel, but copies the `numArgs` argument values (`argSizes[i]` bytes behind
/// `args[i]`) at launch, so the caller may reuse them at once. This is what BIREN_LAUNCH calls.
/// BIREN_ERROR_INVALID_VALUE if numArgs > 0 and args or argSizes is NULL, if an args[i] is NULL,
/// if numArgs exceeds 256, if an argSizes[i] is 0 or over 4096 (the limits of
/// birenKernelRegister), or, for a kernel whose signature is known (BIREN_KERNEL,
/// birenKernelRegister), if numArgs differs from its number of parameters or an argSizes[i]
/// from the size of parameter i: nothing is enqueued, and the validator names the kernel, the
/// argument's position, its size and the parameter's.
#[no_mangle]
pub extern "C" fn birenLaunchKernelArgs(
    kernel: birenKernel_t,
    grid: Dim3,
    block: Dim3,
    args: *mut *mut c_void,
    argSizes: *const usize,
    numArgs: c_uint,
    sharedMem: usize,
    stream: birenStream_t,
) -> birenError_t {
    ffi_call!("birenLaunchKernelArgs"(kernel, grid, block, args, argSizes, numArgs, sharedMem, stream) {
        let n = numArgs as usize;
        if n > MAX_KERNEL_ARGS || (n > 0 && (args.is_null() || argSizes.is_null())) {
            return Err(ErrorCode::InvalidValue);
        }
        let sizes = if n == 0 { &[][..] } else { unsafe { std::slice::from_raw_parts(argSizes, n) } };
        if let Some((i, s)) = sizes.iter().enumerate().find(|(_, &s)| s == 0 || s > MAX_ARG_SIZE) {
            diagnostics::finding(
                "birenLaunchKernelArgs",
                &format!("argSizes[{i}] is {s}: each argument must be 1 to {MAX_ARG_SIZE} bytes"),
            );
            return Err(ErrorCode::InvalidValue);
        }
        launch(kernel, grid, block, args, Some(sizes), sharedMem, stream, "birenLaunchKernelArgs", false)
    })
}

/// Launches `kernel` like birenLaunchKernel, as a cooperative grid: all its blocks are resident
/// at once, so its threads may call birenGridSync() to wait for every thread of the grid.
///
/// The grid fits on the device when it has at most 32 blocks and at most 2048 threads per
/// compute unit (multiProcessorCount): CUDA's maxBlocksPerMultiProcessor and
/// maxThreadsPerMultiProcessor of the simulated device. The simulated device runs such a grid on
/// one compute unit, its blocks interleaved as fibers (so it does not run in parallel with
/// itself; other kernels use the other units meanwhile).
///
/// Returns BIREN_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE when the grid does not fit; otherwise the
/// codes of birenLaunchKernel. Nothing is enqueued on error. Thread-safe.
#[no_mangle]
pub extern "C" fn birenLaunchCooperativeKernel(
    kernel: birenKernel_t,
    grid: Dim3,
    block: Dim3,
    args: *mut *mut c_void,
    sharedMem: usize,
    stream: birenStream_t,
) -> birenError_t {
    ffi_call!("birenLaunchCooperativeKernel"(kernel, grid, block, args, sharedMem, stream) {
        launch(kernel, grid, block, args, None, sharedMem, stream, "birenLaunchCooperativeKernel", true)
    })
}

/// What BIREN_KERNEL registers for each kernel it defines, from a constructor that runs before
/// main (so it works before birenInit): the kernel's per-thread entry `kernel`, its `name`, the
/// sizes of its `numArgs` parameters, and its block entry `blockFn`, which runs a range of the
/// block's threads in one loop. Launches of `kernel` then run `blockFn` for the threads of a
/// block that run in one loop, and `kernel` for those that run alone (a block's thread 0 first,
/// and each thread of a block whose threads wait at sync points): the two must be the same
/// kernel. The argument values are copied at launch (birenLaunchKernel included). Registering
/// again replaces the earlier registration.
///
/// BIREN_ERROR_INVALID_VALUE for a NULL kernel or blockFn, NULL argSizes with numArgs > 0, a size
/// of 0 or over 4096, or more than 256 arguments. Thread-safe; needs no birenInit.
#[no_mangle]
pub extern "C" fn birenKernelRegisterBlock(
    kernel: birenKernel_t,
    name: *const c_char,
    numArgs: c_uint,
    argSizes: *const usize,
    blockFn: birenKernelBlock_t,
) -> birenError_t {
    ffi_call!("birenKernelRegisterBlock"(kernel, name, numArgs, argSizes, blockFn) {
        register_block(kernel, name, numArgs, argSizes, blockFn, None, None)
    })
}

/// What BIREN_KERNEL registers for each kernel it defines (this header's; older ones call
/// birenKernelRegisterBlock): as birenKernelRegisterBlock does, with the kernel's range entry
/// `blocksFn` too: once a block of a launch has run all its threads in one loop, the launch's
/// later blocks run a range at a time (consecutive blocks a compute unit took together) in one
/// call, with no runtime code between them. BIREN_ERROR_INVALID_VALUE for a NULL blocksFn and as birenKernelRegisterBlock.
/// Thread-safe; needs no birenInit.
#[no_mangle]
pub extern "C" fn birenKernelRegisterBlocks(
    kernel: birenKernel_t,
    name: *const c_char,
    numArgs: c_uint,
    argSizes: *const usize,
    blockFn: birenKernelBlock_t,
    blocksFn: birenKernelBlocks_t,
) -> birenError_t {
    ffi_call!("birenKernelRegisterBlocks"(kernel, name, numArgs, argSizes, blockFn, blocksFn) {
        let fs = blocksFn.ok_or(ErrorCode::InvalidValue)?;
        // SAFETY: birenKernelCtx and KernelCtx share one layout (repr(C), same fields).
        let fs: crate::device::BlocksFn = unsafe { std::mem::transmute(fs) };
        register_block(kernel, name, numArgs, argSizes, blockFn, Some(fs), None)
    })
}

/// What biren-cc registers for each CUDA kernel (`__global__` function) of a `.cu` source, as
/// nvcc's host code registers each kernel with CUDA's runtime: the program knows the kernel by
/// its host stub `hostFun` (the function `kernel<<<...>>>(...)` calls and `(void *)kernel`
/// names, with the kernel's own parameters), which is the key every call taking a kernel
/// (launches, graph nodes, birenFuncGetAttributes, the occupancy calls) looks it up by; its
/// threads run through `threadFn`, `blockFn` and `blocksFn` (the entries BIREN_KERNEL defines,
/// generated by biren-cc). `name` is shown in messages, traces and logs. Registering a kernel
/// again replaces the registration (its region-form entry stays).
///
/// BIREN_ERROR_INVALID_VALUE for a NULL hostFun, threadFn, blockFn or blocksFn, or as
/// birenKernelRegisterBlock for the sizes. Thread-safe; needs no birenInit.
#[no_mangle]
pub extern "C" fn birenKernelRegisterStub(
    hostFun: *const c_void,
    threadFn: birenKernel_t,
    name: *const c_char,
    numArgs: c_uint,
    argSizes: *const usize,
    blockFn: birenKernelBlock_t,
    blocksFn: birenKernelBlocks_t,
) -> birenError_t {
    ffi_call!("birenKernelRegisterStub"(hostFun, threadFn, name, numArgs, argSizes, blockFn, blocksFn) {
        if hostFun.is_null() {
            return Err(ErrorCode::InvalidValue);
        }
        let entry = threadFn.ok_or(ErrorCode::InvalidValue)?;
        let fs = blocksFn.ok_or(ErrorCode::InvalidValue)?;
        // SAFETY: birenKernelCtx and KernelCtx share one layout (repr(C), same fields).
        let fs: crate::device::BlocksFn = unsafe { std::mem::transmute(fs) };
        // SAFETY: only an address: the stub is never called as a kernel, `entry` is.
        let key: birenKernel_t = Some(unsafe { std::mem::transmute::<*const c_void, unsafe extern "C" fn(*mut *mut c_void)>(hostFun) });
        register_block(key, name, numArgs, argSizes, blockFn, Some(fs), Some(entry))
    })
}

fn register_block(
    kernel: birenKernel_t,
    name: *const c_char,
    num_args: c_uint,
    arg_sizes: *const usize,
    block_fn: birenKernelBlock_t,
    blocks_fn: Option<crate::device::BlocksFn>,
    thread_fn: Option<crate::device::KernelFn>,
) -> Result<()> {
    let k = kernel.ok_or(ErrorCode::InvalidValue)?;
    let f = block_fn.ok_or(ErrorCode::InvalidValue)?;
    let n = num_args as usize;
    if n > MAX_KERNEL_ARGS || (n > 0 && arg_sizes.is_null()) {
        return Err(ErrorCode::InvalidValue);
    }
    let sizes = if n == 0 {
        Vec::new()
    } else {
        unsafe { std::slice::from_raw_parts(arg_sizes, n) }.to_vec()
    };
    let name = if name.is_null() {
        format!("kernel@{:#x}", k as usize)
    } else {
        unsafe { CStr::from_ptr(name) }
            .to_string_lossy()
            .into_owned()
    };
    // SAFETY: birenKernelCtx and KernelCtx share one layout (repr(C), same fields).
    let f: crate::device::BlockFn = unsafe { std::mem::transmute(f) };
    BLOCK_KERNELS.register_entry(k as usize, name, sizes, Some(f), blocks_fn, thread_fn)
}

/// Registers a kernel: its name (shown in logs, traces and validator messages) and the sizes of
/// its `numArgs` arguments, so that birenLaunchKernel copies the argument values at launch.
/// Registering again replaces the earlier registration. `name` may be NULL (the address is
/// shown). Kernels are known by address: a linker that folds identical functions into one
/// (e.g. two empty kernels) makes them one kernel for this table. BIREN_ERROR_INVALID_VALUE for a NULL kernel, NULL argSizes with numArgs > 0, a size of
/// 0 or over 4096, or more than 256 arguments. Thread-safe.
#[no_mangle]
pub extern "C" fn birenKernelRegister(
    kernel: birenKernel_t,
    name: *const c_char,
    numArgs: c_uint,
    argSizes: *const usize,
) -> birenError_t {
    ffi_call!("birenKernelRegister"(kernel, name, numArgs, argSizes) {
        let rt = runtime::get()?;
        let k = kernel.ok_or(ErrorCode::InvalidValue)?;
        let n = numArgs as usize;
        if n > MAX_KERNEL_ARGS || (n > 0 && argSizes.is_null()) {
            return Err(ErrorCode::InvalidValue);
        }
        let sizes = if n == 0 { Vec::new() } else { unsafe { std::slice::from_raw_parts(argSizes, n) }.to_vec() };
        let name = if name.is_null() {
            format!("kernel@{:#x}", k as usize)
        } else {
            unsafe { CStr::from_ptr(name) }.to_string_lossy().into_owned()
        };
        rt.kernels.register(k as usize, name, sizes)
    })
}

/// The offset of the kernel context (birenKernelCtx) from the thread pointer on every compute
/// unit, or 0 when there is no such uniform offset (e.g. the library was loaded with dlopen).
/// The header's inline built-ins use it to find the context with one load; it is set by
/// birenInit and never changes afterwards.
#[no_mangle]
pub static mut birenKernelCtxOffset: isize = 0;

/// Publishes the compute units' context offset (at birenInit, before any kernel can run).
pub(crate) fn publish_context_offset() {
    // SAFETY: written once, under the init lock, before any kernel is launched; kernels read it
    // after the launch is handed to them through the scheduler's lock (happens-before).
    unsafe { birenKernelCtxOffset = kernel_ctx::publish_fast_offset() };
}

/// The calling kernel thread's context (indices, dimensions, shared memory). The built-ins
/// below read it; outside a kernel every field is zero. The pointer is fixed for a host thread.
#[no_mangle]
pub extern "C" fn birenKernelContext() -> *const birenKernelCtx {
    ffi_value!("birenKernelContext", std::ptr::null(), {
        kernel_ctx::current() as *const birenKernelCtx
    })
}

fn ctx() -> &'static birenKernelCtx {
    unsafe { &*(kernel_ctx::current() as *const birenKernelCtx) }
}

/// Index of the calling thread in its block. (The header's inline version is faster.)
#[no_mangle]
pub extern "C" fn birenThreadIdx() -> Dim3 {
    ffi_value!("birenThreadIdx", Dim3::default(), { ctx().threadIdx })
}

/// Index of the calling thread's block in the grid.
#[no_mangle]
pub extern "C" fn birenBlockIdx() -> Dim3 {
    ffi_value!("birenBlockIdx", Dim3::default(), { ctx().blockIdx })
}

/// Dimensions of the calling thread's block.
#[no_mangle]
pub extern "C" fn birenBlockDim() -> Dim3 {
    ffi_value!("birenBlockDim", Dim3::default(), { ctx().blockDim })
}

/// Dimensions of the grid.
#[no_mangle]
pub extern "C" fn birenGridDim() -> Dim3 {
    ffi_value!("birenGridDim", Dim3::default(), { ctx().gridDim })
}

/// The block's dynamic shared memory (the launch's sharedMem bytes, 16-byte aligned, not
/// initialized), or NULL when the launch asked for none or outside a kernel.
#[no_mangle]
pub extern "C" fn birenSharedMemory() -> *mut c_void {
    ffi_value!("birenSharedMemory", std::ptr::null_mut(), { ctx().shared })
}

/// Barrier of the block: every thread of the block arrives before any passes. A barrier that not
/// all threads of the block reach (some returned) fails the launch with
/// BIREN_ERROR_LAUNCH_FAILURE instead of hanging. Outside a kernel it does nothing.
#[no_mangle]
pub extern "C" fn birenSyncThreads() {
    per_thread_barrier(std::ptr::null_mut())
}

device::block::barrier_entry! {
    /// birenSyncThreads for a per-thread kernel (`lp` is NULL). The usual barrier
    /// (`per_thread_step`) calls nothing and cannot panic: it stands outside the panic
    /// boundary, which would give every barrier a stack frame; the rest is inside. A function
    /// of its own so that birenSyncThreadsLoop reaches it with a jump: each form then has its
    /// own copy of the fast path (the `BIREN_KERNEL` one without the per-thread carrier's first
    /// wait) and its own resume jump, predicted from its own kernels.
    fn per_thread_barrier(lp: *mut kernel_ctx::KernelLoop),
    step = per_thread_step,
    slow = sync_threads_slow
}

/// The usual barrier of a per-thread kernel: decides, does not switch.
extern "C" fn per_thread_step(_lp: *mut kernel_ctx::KernelLoop) -> device::fiber::Handoff {
    unsafe { device::block::barrier_step::<true>(std::ptr::null_mut()) }
}

/// The panic boundary of birenSyncThreads' slow path.
#[inline(never)]
extern "C" fn sync_threads_slow(_lp: *mut kernel_ctx::KernelLoop) {
    ffi_value!("birenSyncThreads", (), {
        unsafe { device::block::sync_threads_slow(std::ptr::null_mut()) }
    })
}

/// birenSyncThreads for a thread of a BIREN_KERNEL block entry, whose `loop` (NULL: as
/// birenSyncThreads) it stops after the calling thread. What the header's birenSyncThreads()
/// calls; other languages call birenSyncThreads.
#[no_mangle]
pub extern "C" fn birenSyncThreadsLoop(loop_: *mut birenKernelLoop) {
    // Two jumps, no frame of its own: a per-thread kernel (the header passes its NULL loop) or
    // the BIREN_KERNEL form, each with its own copy of the fast path.
    if loop_.is_null() {
        per_thread_barrier(std::ptr::null_mut())
    } else {
        form_barrier(loop_ as *mut kernel_ctx::KernelLoop)
    }
}

device::block::barrier_entry! {
    /// birenSyncThreadsLoop for a BIREN_KERNEL body: as birenSyncThreads, the fast path
    /// (`form_step`) outside the panic boundary.
    fn form_barrier(lp: *mut kernel_ctx::KernelLoop),
    step = form_step,
    slow = sync_threads_loop_slow
}

/// The usual barrier of a BIREN_KERNEL body: decides, does not switch.
extern "C" fn form_step(lp: *mut kernel_ctx::KernelLoop) -> device::fiber::Handoff {
    unsafe { device::block::barrier_step::<false>(lp) }
}

/// The panic boundary of birenSyncThreadsLoop's slow path.
#[inline(never)]
extern "C" fn sync_threads_loop_slow(lp: *mut kernel_ctx::KernelLoop) {
    ffi_value!("birenSyncThreadsLoop", (), {
        unsafe { device::block::sync_threads_slow(lp) }
    })
}

/// Grid-wide barrier of a cooperative launch (birenLaunchCooperativeKernel): every thread of the
/// grid arrives before any passes. In a launch that is not cooperative, the launch fails with
/// BIREN_ERROR_LAUNCH_FAILURE (sticky); so does a grid sync some threads never reach (they
/// returned). Outside a kernel it does nothing. CUDA: this_grid().sync().
#[no_mangle]
pub extern "C" fn birenGridSync() {
    ffi_value!("birenGridSync", (), {
        unsafe { device::block::grid_sync(std::ptr::null_mut()) }
    })
}

/// birenGridSync for a thread of a BIREN_KERNEL block entry (`loop`; NULL: as birenGridSync).
#[no_mangle]
pub extern "C" fn birenGridSyncLoop(loop_: *mut birenKernelLoop) {
    ffi_value!("birenGridSyncLoop", (), {
        unsafe { device::block::grid_sync(loop_ as *mut kernel_ctx::KernelLoop) }
    })
}

/// Aborts the launch: the calling thread stops, the block's other threads are abandoned, no
/// further block of the kernel starts, and the launch fails with BIREN_ERROR_LAUNCH_FAILURE,
/// which is sticky: every later call on the device returns it until birenDeviceReset.
/// Outside a kernel it does nothing.
#[no_mangle]
pub extern "C" fn birenTrap() {
    ffi_value!("birenTrap", (), {
        unsafe { device::block::trap(std::ptr::null_mut()) }
    })
}

/// A failed `assert(expr)` (what CUDA programs built with biren-cc call, through the C
/// library's `__assert_fail`): in a kernel, prints CUDA's message on stderr
/// ("file:line: function: block: [x,y,z], thread: [x,y,z] Assertion 'expr' failed.", with
/// CUDA's backquote before expr) and ends
/// the launch, which fails with BIREN_ERROR_ASSERT (sticky, as CUDA's cudaErrorAssert); it does
/// not return. Outside a kernel it returns, and the caller aborts as the C library does. In a
/// kernel written with BIREN_KERNEL whose threads run in one loop, the thread named is the
/// loop's first (biren-cc keeps CUDA kernels' index exact). NULL strings print as "?".
#[no_mangle]
pub extern "C" fn birenAssertFail(
    expr: *const c_char,
    file: *const c_char,
    line: c_uint,
    function: *const c_char,
) {
    ffi_value!("birenAssertFail", (), {
        let in_kernel = unsafe { !(*kernel_ctx::unit()).run.is_null() };
        if !in_kernel {
            return;
        }
        let text = |p: *const c_char| {
            if p.is_null() {
                "?".to_string()
            } else {
                unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
            }
        };
        let c = unsafe { &*kernel_ctx::current() };
        let (b, t) = (c.block_idx, c.thread_idx);
        // A CUDA kernel's body is biren-cc's NAME_biren_thread_ with the hidden indices: the
        // message names the kernel as the program wrote it.
        let function = text(function)
            .replace(", dim3, dim3, dim3, dim3, birenKernelLoop*)", ")")
            .replace("(dim3, dim3, dim3, dim3, birenKernelLoop*)", "()")
            .replace("_biren_thread_(", "(")
            .replace("_biren_fthread_(", "(");
        eprintln!(
            "{}:{}: {}: block: [{},{},{}], thread: [{},{},{}] Assertion `{}` failed.",
            text(file),
            line,
            function,
            b.x,
            b.y,
            b.z,
            t.x,
            t.y,
            t.z,
            text(expr)
        );
        unsafe { device::block::assert_failed(std::ptr::null_mut()) }
    })
}

/// birenTrap for a thread of a BIREN_KERNEL block entry (`loop`; NULL: as birenTrap).
#[no_mangle]
pub extern "C" fn birenTrapLoop(loop_: *mut birenKernelLoop) {
    ffi_value!("birenTrapLoop", (), {
        unsafe { device::block::trap(loop_ as *mut kernel_ctx::KernelLoop) }
    })
}

/// What biren-cc emits for each kernel it compiles in region form: `regionFn` runs every thread
/// of `count` consecutive blocks of `kernel`, from the one the context describes, with the
/// kernel's body split at its barriers into loops over the block's threads (none ever waits);
/// it returns `count`. Launches of `kernel` (not cooperative ones, whose grid runs as fibers)
/// then run whole blocks through it. May come before or after the kernel's own registration.
/// What differs from the fiber form: the threads of a block run in thread order inside a
/// region (CUDA promises no order between barriers); a condition around a barrier that biren-cc
/// checks at run time, or threads that returned before a barrier others reach, fail the launch
/// with BIREN_ERROR_LAUNCH_FAILURE naming the barrier's line (birenRegionDivergence); a sync
/// point reached in a function biren-cc did not see fails the launch too.
///
/// BIREN_ERROR_INVALID_VALUE for a NULL kernel or regionFn. Thread-safe; needs no birenInit.
#[no_mangle]
pub extern "C" fn birenKernelRegisterRegions(
    kernel: birenKernel_t,
    regionFn: birenKernelBlocks_t,
) -> birenError_t {
    ffi_call!("birenKernelRegisterRegions"(kernel, regionFn) {
        let k = kernel.ok_or(ErrorCode::InvalidValue)?;
        let f = regionFn.ok_or(ErrorCode::InvalidValue)?;
        // SAFETY: birenKernelCtx and KernelCtx share one layout (repr(C), same fields).
        let f: crate::device::BlocksFn = unsafe { std::mem::transmute(f) };
        BLOCK_KERNELS.register_regions(k as usize, f);
        Ok(())
    })
}

/// For region-form kernels (biren-cc): at least `bytes` bytes of the calling compute unit's
/// scratch memory, 64-byte aligned, where the per-thread values that live across a barrier are
/// kept; valid until the unit's next call. Called once per range of blocks.
#[no_mangle]
pub extern "C" fn birenRegionScratch(bytes: usize) -> *mut c_void {
    ffi_value!("birenRegionScratch", std::ptr::null_mut(), {
        device::block::region_scratch(bytes)
    })
}

/// For region-form kernels (biren-cc): the run-time check of a barrier failed in thread
/// `thread` of the calling block. `what` 0: the condition of a loop or `if` that holds the
/// barrier at `file`:`line` differs between the block's threads; 1: threads of the block
/// returned before the barrier at `file`:`line` that the others reach; 2: the width of the warp
/// shuffle at `file`:`line` is not a power of two from 1 to 32. The launch fails with
/// BIREN_ERROR_LAUNCH_FAILURE, the message naming `kernel` and the place. Outside a kernel it
/// does nothing.
#[no_mangle]
pub extern "C" fn birenRegionDivergence(
    kernel: *const c_char,
    file: *const c_char,
    line: c_uint,
    what: c_uint,
    thread: Dim3,
) {
    ffi_value!("birenRegionDivergence", (), {
        let text = |p: *const c_char| {
            if p.is_null() {
                "?".to_string()
            } else {
                unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
            }
        };
        let message = divergence_message(&text(kernel), &text(file), line, what);
        unsafe { device::block::region_divergence(thread, message) }
    })
}

/// The message of a failed region check, one per place (the validator's strings are static).
fn divergence_message(kernel: &str, file: &str, line: c_uint, what: c_uint) -> &'static str {
    use std::collections::HashMap;
    type Place = (String, String, c_uint, c_uint);
    static MESSAGES: Mutex<Option<HashMap<Place, &'static str>>> = Mutex::new(None);
    let mut m = MESSAGES.lock().unwrap_or_else(|e| e.into_inner());
    let m = m.get_or_insert_with(HashMap::new);
    let key = (kernel.to_string(), file.to_string(), line, what);
    if let Some(s) = m.get(&key) {
        return s;
    }
    let text = if what == 0 {
        format!("the condition around the barrier at {file}:{line} differs between the block's threads (biren-cc's region form of {kernel} took it for uniform, as CUDA requires it to be)")
    } else if what == 1 {
        format!("some threads of the block returned before the barrier at {file}:{line} that the others reach")
    } else {
        format!("the width of the warp shuffle at {file}:{line} is not a power of two from 1 to 32")
    };
    let s: &'static str = Box::leak(text.into_boxed_str());
    m.insert(key, s);
    s
}

/// Registers the report of what is still alive at process exit (validator on), once.
pub(crate) fn install_exit_hook() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        extern "C" fn at_exit() {
            if let Some(rt) = runtime::try_get() {
                if diagnostics::validator_on() {
                    rt.live_objects().report("process exit");
                    super::graph::report_at_exit();
                }
                diagnostics::racecheck::exit_summary();
                if let Some(n) = diagnostics::schedule_note() {
                    eprintln!("biren: {n}");
                }
                runtime::diagnostics::trace::flush();
            }
        }
        unsafe { libc::atexit(at_exit) };
    });
}
