//! The built cdylib, loaded at run time with libloading as a Rust client would: kernels written
//! in Rust run end to end, and error codes and their names cross the boundary.
//! `cargo test [--release]` builds target/<profile>/libbiren_runtime.so before running this.

#[path = "../examples/biren_dlopen/mod.rs"]
mod biren_dlopen;

use biren_dlopen::*;
use std::ffi::{c_void, CString};
use std::ptr::{null, null_mut};
use std::sync::{Mutex, MutexGuard};

/// The runtime is process-wide and one test traps (a sticky error until reset): one at a time.
fn serial() -> MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    let guard = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let b = Biren::get();
    assert_eq!(unsafe { (b.birenInit)() }, SUCCESS);
    guard
}

fn ok(call: &'static str, code: Error) {
    if let Err(e) = Biren::get().check(call, code) {
        panic!("{e}");
    }
}

fn malloc(bytes: usize) -> *mut c_void {
    let mut p = null_mut();
    ok("birenMalloc", unsafe {
        (Biren::get().birenMalloc)(&mut p, bytes)
    });
    p
}

fn to_device<T>(src: &[T]) -> *mut c_void {
    let bytes = std::mem::size_of_val(src);
    let d = malloc(bytes);
    ok("birenMemcpy", unsafe {
        (Biren::get().birenMemcpy)(d, src.as_ptr().cast(), bytes, MEMCPY_HOST_TO_DEVICE)
    });
    d
}

fn to_host<T: Copy + Default>(src: *mut c_void, n: usize) -> Vec<T> {
    let mut out = vec![T::default(); n];
    let bytes = n * std::mem::size_of::<T>();
    ok("birenMemcpy", unsafe {
        (Biren::get().birenMemcpy)(out.as_mut_ptr().cast(), src, bytes, MEMCPY_DEVICE_TO_HOST)
    });
    out
}

fn free(p: *mut c_void) {
    ok("birenFree", unsafe { (Biren::get().birenFree)(p) });
}

/// c[i] = a[i] + b[i]
extern "C" fn vector_add(args: *mut *mut c_void) {
    unsafe {
        let a: *const f32 = arg(args, 0);
        let b: *const f32 = arg(args, 1);
        let c: *mut f32 = arg(args, 2);
        let n: i32 = arg(args, 3);
        let i = global_x();
        if i < n as usize {
            *c.add(i) = *a.add(i) + *b.add(i);
        }
    }
}

/// x[i] *= factor
extern "C" fn scale(args: *mut *mut c_void) {
    unsafe {
        let x: *mut f32 = arg(args, 0);
        let factor: f32 = arg(args, 1);
        let n: u32 = arg(args, 2);
        let i = global_x();
        if i < n as usize {
            *x.add(i) *= factor;
        }
    }
}

#[test]
fn a_rust_kernel_runs_end_to_end() {
    let _g = serial();
    let b = Biren::get();
    let n = 10_000usize;
    let xs: Vec<f32> = (0..n).map(|i| i as f32).collect();
    let ys: Vec<f32> = (0..n).map(|i| (2 * i) as f32).collect();
    let (da, db, dc) = (to_device(&xs), to_device(&ys), malloc(n * 4));
    let mut stream: Stream = null_mut();
    ok("birenStreamCreate", unsafe {
        (b.birenStreamCreate)(&mut stream)
    });

    // Argument values are copied at launch (birenLaunchKernelArgs): locals are fine.
    let (mut pa, mut pb, mut pc, mut count) = (da, db, dc, n as i32);
    let mut args: [*mut c_void; 4] = [
        (&mut pa as *mut *mut c_void).cast(),
        (&mut pb as *mut *mut c_void).cast(),
        (&mut pc as *mut *mut c_void).cast(),
        (&mut count as *mut i32).cast(),
    ];
    let sizes = [8usize, 8, 8, 4];
    let grid = Dim3::new(n.div_ceil(256) as u32, 1, 1);
    let block = Dim3::new(256, 1, 1);
    ok("birenLaunchKernelArgs", unsafe {
        (b.birenLaunchKernelArgs)(
            Some(vector_add),
            grid,
            block,
            args.as_mut_ptr(),
            sizes.as_ptr(),
            4,
            0,
            stream,
        )
    });
    ok("birenStreamSynchronize", unsafe {
        (b.birenStreamSynchronize)(stream)
    });
    let out: Vec<f32> = to_host(dc, n);
    assert!(
        out.iter().enumerate().all(|(i, &v)| v == (3 * i) as f32),
        "wrong sums"
    );

    ok("birenStreamDestroy", unsafe {
        (b.birenStreamDestroy)(stream)
    });
    for p in [da, db, dc] {
        free(p);
    }
}

#[test]
fn a_registered_rust_kernel_has_its_arguments_copied_at_launch() {
    let _g = serial();
    let b = Biren::get();
    let n = 1000u32;
    let d = to_device(&vec![1.0f32; n as usize]);
    let name = CString::new("scale").unwrap();
    let sizes = [std::mem::size_of::<*mut c_void>(), 4, 4];
    ok("birenKernelRegister", unsafe {
        (b.birenKernelRegister)(Some(scale), name.as_ptr(), 3, sizes.as_ptr())
    });

    let (mut x, mut factor, mut count) = (d, 3.0f32, n);
    let mut args: [*mut c_void; 3] = [
        (&mut x as *mut *mut c_void).cast(),
        (&mut factor as *mut f32).cast(),
        (&mut count as *mut u32).cast(),
    ];
    ok("birenLaunchKernel", unsafe {
        (b.birenLaunchKernel)(
            Some(scale),
            Dim3::new(4, 1, 1),
            Dim3::new(256, 1, 1),
            args.as_mut_ptr(),
            0,
            null_mut(),
        )
    });
    factor = -100.0; // the launch copied 3.0
    std::hint::black_box(&mut factor);
    ok("birenDeviceSynchronize", unsafe {
        (b.birenDeviceSynchronize)()
    });
    assert!(to_host::<f32>(d, n as usize).iter().all(|&v| v == 3.0));
    free(d);
}

/// out[blockIdx.x] = sum of the block's slice of `input`, through shared memory and barriers.
extern "C" fn block_sum(args: *mut *mut c_void) {
    let b = Biren::get();
    unsafe {
        let input: *const i32 = arg(args, 0);
        let out: *mut i32 = arg(args, 1);
        let sh = (b.birenSharedMemory)() as *mut i32;
        let (t, bi, bd) = (
            (b.birenThreadIdx)().x as usize,
            (b.birenBlockIdx)().x as usize,
            (b.birenBlockDim)().x as usize,
        );
        *sh.add(t) = *input.add(bi * bd + t);
        (b.birenSyncThreads)();
        let mut s = bd / 2;
        while s > 0 {
            if t < s {
                *sh.add(t) += *sh.add(t + s);
            }
            (b.birenSyncThreads)();
            s /= 2;
        }
        if t == 0 {
            *out.add(bi) = *sh;
        }
    }
}

#[test]
fn a_rust_kernel_uses_shared_memory_and_barriers() {
    let _g = serial();
    let b = Biren::get();
    let (blocks, threads) = (6usize, 128usize);
    let input: Vec<i32> = (0..(blocks * threads) as i32).collect();
    let (din, dout) = (to_device(&input), malloc(blocks * 4));
    let (mut pin, mut pout) = (din, dout);
    let mut args: [*mut c_void; 2] = [
        (&mut pin as *mut *mut c_void).cast(),
        (&mut pout as *mut *mut c_void).cast(),
    ];
    let sizes = [8usize, 8];
    ok("birenLaunchKernelArgs", unsafe {
        (b.birenLaunchKernelArgs)(
            Some(block_sum),
            Dim3::new(blocks as u32, 1, 1),
            Dim3::new(threads as u32, 1, 1),
            args.as_mut_ptr(),
            sizes.as_ptr(),
            2,
            threads * 4,
            null_mut(),
        )
    });
    let sums: Vec<i32> = to_host(dout, blocks);
    let expected: Vec<i32> = input.chunks(threads).map(|c| c.iter().sum()).collect();
    assert_eq!(sums, expected);
    free(din);
    free(dout);
}

#[test]
fn error_codes_and_their_names_cross() {
    let _g = serial();
    let b = Biren::get();
    unsafe { (b.birenGetLastError)() };

    // A double free.
    let d = malloc(64);
    free(d);
    let e = unsafe { (b.birenFree)(d) };
    assert_eq!(e, ERROR_INVALID_DEVICE_POINTER);
    assert_eq!(b.error_name(e), "BIREN_ERROR_INVALID_DEVICE_POINTER");
    assert_eq!(
        unsafe { (b.birenGetLastError)() },
        ERROR_INVALID_DEVICE_POINTER
    );
    assert_eq!(unsafe { (b.birenGetLastError)() }, SUCCESS);

    // A copy past the end of an allocation writes nothing.
    let d = to_device(&[7u8; 16]);
    let e = unsafe { (b.birenMemcpy)(d, [1u8; 17].as_ptr().cast(), 17, MEMCPY_HOST_TO_DEVICE) };
    let err = b.check("birenMemcpy", e).unwrap_err();
    assert_eq!(
        (err.code, err.name.as_str()),
        (ERROR_OUT_OF_BOUNDS, "BIREN_ERROR_OUT_OF_BOUNDS")
    );
    assert_eq!(
        err.to_string(),
        "birenMemcpy: BIREN_ERROR_OUT_OF_BOUNDS (7)"
    );
    assert_eq!(to_host::<u8>(d, 16), vec![7u8; 16]);
    free(d);

    // Launches: no kernel, too many threads.
    let one = Dim3::new(1, 1, 1);
    let e = unsafe { (b.birenLaunchKernel)(None, one, one, null_mut(), 0, null_mut()) };
    assert_eq!(e, ERROR_INVALID_VALUE);
    let e = unsafe {
        (b.birenLaunchKernel)(
            Some(vector_add),
            one,
            Dim3::new(2048, 1, 1),
            null_mut(),
            0,
            null_mut(),
        )
    };
    assert_eq!(b.error_name(e), "BIREN_ERROR_INVALID_CONFIGURATION");

    // Names exist for values that are not error codes.
    assert_eq!(b.error_name(12345), "BIREN_ERROR_UNRECOGNIZED");
    assert!(!unsafe { (b.birenGetErrorString)(-1) }.is_null());
    let mut v = 0;
    ok("birenRuntimeGetVersion", unsafe {
        (b.birenRuntimeGetVersion)(&mut v)
    });
    assert_eq!(v, 1000);
}

/// Thread 3 of block 1 traps.
extern "C" fn trap_in_block_1(_args: *mut *mut c_void) {
    let b = Biren::get();
    unsafe {
        if (b.birenBlockIdx)().x == 1 && (b.birenThreadIdx)().x == 3 {
            (b.birenTrap)();
        }
    }
}

#[test]
fn a_trap_in_a_rust_kernel_fails_the_launch_until_reset() {
    let _g = serial();
    let b = Biren::get();
    let e = unsafe {
        (b.birenLaunchKernelArgs)(
            Some(trap_in_block_1),
            Dim3::new(4, 1, 1),
            Dim3::new(32, 1, 1),
            null_mut(),
            null(),
            0,
            0,
            null_mut(),
        )
    };
    ok("birenLaunchKernelArgs", e);
    let e = unsafe { (b.birenDeviceSynchronize)() };
    assert_eq!(
        (e, b.error_name(e).as_str()),
        (ERROR_LAUNCH_FAILURE, "BIREN_ERROR_LAUNCH_FAILURE")
    );
    let mut p = null_mut();
    assert_eq!(
        unsafe { (b.birenMalloc)(&mut p, 16) },
        ERROR_LAUNCH_FAILURE,
        "sticky"
    );
    ok("birenDeviceReset", unsafe { (b.birenDeviceReset)() });
    free(malloc(16));
}

/// Thread 0 sleeps, then every thread writes `value` to x[i].
extern "C" fn slow_fill(args: *mut *mut c_void) {
    unsafe {
        let x: *mut i32 = arg(args, 0);
        let value: i32 = arg(args, 1);
        let i = global_x();
        if i == 0 {
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        *x.add(i) = value;
    }
}

#[test]
fn an_event_orders_two_streams() {
    let _g = serial();
    let b = Biren::get();
    let n = 64usize;
    let d = to_device(&vec![0i32; n]);
    let (mut s1, mut s2, mut ev): (Stream, Stream, Event) = (null_mut(), null_mut(), null_mut());
    ok("birenStreamCreate", unsafe {
        (b.birenStreamCreate)(&mut s1)
    });
    ok("birenStreamCreate", unsafe {
        (b.birenStreamCreate)(&mut s2)
    });
    ok("birenEventCreate", unsafe { (b.birenEventCreate)(&mut ev) });
    let (mut x, mut value) = (d, 42i32);
    let mut args: [*mut c_void; 2] = [
        (&mut x as *mut *mut c_void).cast(),
        (&mut value as *mut i32).cast(),
    ];
    let sizes = [8usize, 4];
    ok("birenLaunchKernelArgs", unsafe {
        (b.birenLaunchKernelArgs)(
            Some(slow_fill),
            Dim3::new(1, 1, 1),
            Dim3::new(n as u32, 1, 1),
            args.as_mut_ptr(),
            sizes.as_ptr(),
            2,
            0,
            s1,
        )
    });
    ok("birenEventRecord", unsafe { (b.birenEventRecord)(ev, s1) });
    ok("birenStreamWaitEvent", unsafe {
        (b.birenStreamWaitEvent)(s2, ev)
    });
    let mut out = vec![0i32; n];
    ok("birenMemcpyAsync", unsafe {
        (b.birenMemcpyAsync)(out.as_mut_ptr().cast(), d, n * 4, MEMCPY_DEVICE_TO_HOST, s2)
    });
    ok("birenStreamSynchronize", unsafe {
        (b.birenStreamSynchronize)(s2)
    });
    assert_eq!(out, vec![42; n]);
    ok("birenEventSynchronize", unsafe {
        (b.birenEventSynchronize)(ev)
    });
    ok("birenEventDestroy", unsafe { (b.birenEventDestroy)(ev) });
    ok("birenStreamDestroy", unsafe { (b.birenStreamDestroy)(s1) });
    ok("birenStreamDestroy", unsafe { (b.birenStreamDestroy)(s2) });
    free(d);
}
