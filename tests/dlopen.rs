//! The built cdylib, loaded at run time through the safe binding (`bindings/rust`, crate
//! `biren`) as a Rust client would: kernels written in Rust run end to end, and error codes and
//! their names cross the boundary. `cargo test [--release]` builds
//! target/<profile>/libbiren_runtime.so before running this; `$BIREN_LIBRARY` overrides it.

use biren::{kernel, launch, sys, DeviceBuffer, DevicePtr, Dim3, ErrorCode, Event, Launch, Stream};
use std::ffi::c_void;
use std::path::PathBuf;
use std::ptr::null_mut;
use std::sync::{Mutex, MutexGuard};

/// `$BIREN_LIBRARY`, else the cdylib cargo built beside this test
/// (target/<profile>/deps/dlopen-* → target/<profile>/libbiren_runtime.so).
fn library() -> PathBuf {
    if let Some(p) = std::env::var_os("BIREN_LIBRARY").filter(|p| !p.is_empty()) {
        return PathBuf::from(p);
    }
    let exe = std::env::current_exe().expect("the test's path");
    exe.parent()
        .and_then(|deps| deps.parent())
        .expect("target/<profile>")
        .join("libbiren_runtime.so")
}

/// The runtime is process-wide and one test traps (a sticky error until reset): one at a time.
fn serial() -> MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    let guard = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    biren::init_with_library(library()).unwrap_or_else(|e| panic!("{e}"));
    guard
}

/// c[i] = a[i] + b[i]
extern "C" fn vector_add(args: *mut *mut c_void) {
    // SAFETY: launched with (DevicePtr<f32> x3, i32).
    unsafe {
        let a: DevicePtr<f32> = kernel::arg(args, 0);
        let b: DevicePtr<f32> = kernel::arg(args, 1);
        let c: DevicePtr<f32> = kernel::arg(args, 2);
        let n: i32 = kernel::arg(args, 3);
        let i = kernel::global_index_x();
        if i < n as usize {
            *c.as_raw().add(i) = *a.as_raw().add(i) + *b.as_raw().add(i);
        }
    }
}

/// x[i] *= factor
extern "C" fn scale(args: *mut *mut c_void) {
    // SAFETY: launched with (DevicePtr<f32>, f32, u32).
    unsafe {
        let x: DevicePtr<f32> = kernel::arg(args, 0);
        let factor: f32 = kernel::arg(args, 1);
        let n: u32 = kernel::arg(args, 2);
        let i = kernel::global_index_x();
        if i < n as usize {
            *x.as_raw().add(i) *= factor;
        }
    }
}

#[test]
fn a_rust_kernel_runs_end_to_end() {
    let _g = serial();
    let n = 10_000usize;
    let xs: Vec<f32> = (0..n).map(|i| i as f32).collect();
    let ys: Vec<f32> = (0..n).map(|i| (2 * i) as f32).collect();
    let (a, b) = (
        DeviceBuffer::from_slice(&xs).unwrap(),
        DeviceBuffer::from_slice(&ys).unwrap(),
    );
    let c = DeviceBuffer::<f32>::zeroed(n).unwrap();
    let stream = Stream::new().unwrap();
    // Argument values are copied at launch (birenLaunchKernelArgs): temporaries are fine.
    // SAFETY: vector_add reads (ptr, ptr, ptr, i32) within n elements.
    unsafe {
        launch!(vector_add, n.div_ceil(256) as u32, 256, stream = &stream; a, b, c, n as i32)
    }
    .unwrap();
    stream.synchronize().unwrap();
    let out = c.to_vec().unwrap();
    assert!(
        out.iter().enumerate().all(|(i, &v)| v == (3 * i) as f32),
        "wrong sums"
    );
}

#[test]
fn a_registered_rust_kernel_has_its_arguments_copied_at_launch() {
    let _g = serial();
    let api = sys::api().unwrap();
    let n = 1000u32;
    let d = DeviceBuffer::from_slice(&vec![1.0f32; n as usize]).unwrap();
    biren::register_kernel(scale, "scale", &[size_of::<*mut c_void>(), 4, 4]).unwrap();

    // A plain birenLaunchKernel (the raw C call) of a registered kernel copies the values.
    let (mut x, mut factor, mut count) = (d.as_device_ptr(), 3.0f32, n);
    let mut args: [*mut c_void; 3] = [
        (&mut x as *mut DevicePtr<f32>).cast(),
        (&mut factor as *mut f32).cast(),
        (&mut count as *mut u32).cast(),
    ];
    // SAFETY: args point to live values of the registered sizes; scale stays within n.
    let e = unsafe {
        (api.birenLaunchKernel)(
            Some(scale),
            Dim3::new(4, 1, 1),
            Dim3::new(256, 1, 1),
            args.as_mut_ptr(),
            0,
            null_mut(),
        )
    };
    assert_eq!(e, sys::BIREN_SUCCESS);
    factor = -100.0; // the launch copied 3.0
    std::hint::black_box(&mut factor);
    biren::synchronize().unwrap();
    assert!(d.to_vec().unwrap().iter().all(|&v| v == 3.0));
}

/// out[blockIdx.x] = sum of the block's slice of `input`, through shared memory and barriers.
extern "C" fn block_sum(args: *mut *mut c_void) {
    // SAFETY: launched with (DevicePtr<i32>, DevicePtr<i32>) and blockDim.x * 4 shared bytes.
    unsafe {
        let input: DevicePtr<i32> = kernel::arg(args, 0);
        let out: DevicePtr<i32> = kernel::arg(args, 1);
        let sh = kernel::shared_memory().cast::<i32>();
        let (t, bi, bd) = (
            kernel::thread_idx().x as usize,
            kernel::block_idx().x as usize,
            kernel::block_dim().x as usize,
        );
        *sh.add(t) = *input.as_raw().add(bi * bd + t);
        kernel::sync_threads();
        let mut s = bd / 2;
        while s > 0 {
            if t < s {
                *sh.add(t) += *sh.add(t + s);
            }
            kernel::sync_threads();
            s /= 2;
        }
        if t == 0 {
            *out.as_raw().add(bi) = *sh;
        }
    }
}

#[test]
fn a_rust_kernel_uses_shared_memory_and_barriers() {
    let _g = serial();
    let (blocks, threads) = (6usize, 128usize);
    let input: Vec<i32> = (0..(blocks * threads) as i32).collect();
    let din = DeviceBuffer::from_slice(&input).unwrap();
    let dout = DeviceBuffer::<i32>::zeroed(blocks).unwrap();
    // SAFETY: block_sum's arguments and threads * 4 bytes of shared memory.
    unsafe {
        Launch::new(block_sum, blocks as u32, threads as u32)
            .shared_mem(threads * 4)
            .launch(&[&din, &dout])
    }
    .unwrap();
    biren::synchronize().unwrap();
    let expected: Vec<i32> = input.chunks(threads).map(|c| c.iter().sum()).collect();
    assert_eq!(dout.to_vec().unwrap(), expected);
}

#[test]
fn error_codes_and_their_names_cross() {
    let _g = serial();
    let api = sys::api().unwrap();
    let _ = biren::take_last_error();

    // A double free (through the raw API: the safe buffer cannot be freed twice).
    let mut p = null_mut();
    // SAFETY: live out-parameter; then the pointer is freed twice on purpose.
    unsafe {
        assert_eq!((api.birenMalloc)(&mut p, 64), sys::BIREN_SUCCESS);
        assert_eq!((api.birenFree)(p), sys::BIREN_SUCCESS);
        let e = ErrorCode::from_raw((api.birenFree)(p));
        assert_eq!(e, ErrorCode::InvalidDevicePointer);
    }
    let err = biren::take_last_error().unwrap_err();
    assert_eq!(
        (err.code, err.name),
        (
            ErrorCode::InvalidDevicePointer,
            "BIREN_ERROR_INVALID_DEVICE_POINTER"
        )
    );
    biren::take_last_error().unwrap();

    // A copy past the end of an allocation writes nothing.
    let d = DeviceBuffer::from_slice(&[7u8; 16]).unwrap();
    // SAFETY: 17 readable host bytes; the device side is refused before anything moves.
    let raw = unsafe {
        (api.birenMemcpy)(
            d.as_device_ptr().as_raw().cast(),
            [1u8; 17].as_ptr().cast(),
            17,
            sys::birenMemcpyHostToDevice,
        )
    };
    let err = biren::BirenError::new(ErrorCode::from_raw(raw), "birenMemcpy");
    assert_eq!(
        (err.code, err.name),
        (ErrorCode::OutOfBounds, "BIREN_ERROR_OUT_OF_BOUNDS")
    );
    assert!(
        err.to_string()
            .starts_with("birenMemcpy: BIREN_ERROR_OUT_OF_BOUNDS (7): "),
        "{err}"
    );
    assert_eq!(d.to_vec().unwrap(), vec![7u8; 16]);

    // Launches: no kernel, too many threads.
    let one = Dim3::new(1, 1, 1);
    // SAFETY: refused (NULL kernel) before anything runs.
    let e = unsafe { (api.birenLaunchKernel)(None, one, one, null_mut(), 0, null_mut()) };
    assert_eq!(ErrorCode::from_raw(e), ErrorCode::InvalidValue);
    // SAFETY: refused (2048 threads) before anything runs.
    let e = unsafe { Launch::new(vector_add, 1, 2048).launch(&[]) }.unwrap_err();
    assert_eq!(e.name, "BIREN_ERROR_INVALID_CONFIGURATION");

    // Names exist for values that are not error codes.
    assert_eq!(
        biren::BirenError::new(ErrorCode::from_raw(12345), "x").name,
        "BIREN_ERROR_UNRECOGNIZED"
    );
    // SAFETY: accepts any value.
    assert!(!unsafe { (api.birenGetErrorString)(-1) }.is_null());
    assert_eq!(biren::runtime_version().unwrap(), 1000);
}

/// Thread 3 of block 1 traps.
extern "C" fn trap_in_block_1(_args: *mut *mut c_void) {
    if kernel::block_idx().x == 1 && kernel::thread_idx().x == 3 {
        // SAFETY: nothing with a destructor is alive here.
        unsafe { kernel::trap() };
    }
}

#[test]
fn a_trap_in_a_rust_kernel_fails_the_launch_until_reset() {
    let _g = serial();
    // SAFETY: no arguments.
    unsafe { Launch::new(trap_in_block_1, 4, 32).launch(&[]) }.unwrap();
    let e = biren::synchronize().unwrap_err();
    assert_eq!(
        (e.code, e.name),
        (ErrorCode::LaunchFailure, "BIREN_ERROR_LAUNCH_FAILURE")
    );
    assert_eq!(
        DeviceBuffer::<u8>::zeroed(16).unwrap_err().code,
        ErrorCode::LaunchFailure,
        "sticky"
    );
    biren::device_reset().unwrap();
    DeviceBuffer::<u8>::zeroed(16).unwrap();
}

/// Thread 0 sleeps, then every thread writes `value` to x[i].
extern "C" fn slow_fill(args: *mut *mut c_void) {
    // SAFETY: launched with (DevicePtr<i32>, i32), one thread per element.
    unsafe {
        let x: DevicePtr<i32> = kernel::arg(args, 0);
        let value: i32 = kernel::arg(args, 1);
        let i = kernel::global_index_x();
        if i == 0 {
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        *x.as_raw().add(i) = value;
    }
}

#[test]
fn an_event_orders_two_streams() {
    let _g = serial();
    let n = 64usize;
    let d = DeviceBuffer::<i32>::zeroed(n).unwrap();
    let (s1, s2, ev) = (
        Stream::new().unwrap(),
        Stream::new().unwrap(),
        Event::new().unwrap(),
    );
    // SAFETY: slow_fill's arguments, one thread per element.
    unsafe { launch!(slow_fill, 1, n as u32, stream = &s1; d, 42i32) }.unwrap();
    ev.record(&s1).unwrap();
    s2.wait_event(&ev).unwrap();
    let mut out = vec![0i32; n];
    // SAFETY: `out` is read only after s2's synchronize.
    unsafe { d.copy_to_host_async(&mut out, &s2) }.unwrap();
    s2.synchronize().unwrap();
    assert_eq!(out, vec![42; n]);
    ev.synchronize().unwrap();
}
