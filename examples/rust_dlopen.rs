//! A Rust program using libbiren_runtime through `dlopen` (libloading): a kernel written in Rust,
//! run on the simulated device, and an error with its name.
//!
//!     cargo run --example rust_dlopen            # loads target/debug/libbiren_runtime.so
//!     BIREN_LIBRARY=/usr/local/lib/libbiren_runtime.so.1 cargo run --example rust_dlopen

mod biren_dlopen;

use biren_dlopen::*;
use std::ffi::c_void;
use std::ptr::null_mut;

/// y[i] = a * x[i] + y[i]
extern "C" fn saxpy(args: *mut *mut c_void) {
    unsafe {
        let a: f32 = arg(args, 0);
        let x: *const f32 = arg(args, 1);
        let y: *mut f32 = arg(args, 2);
        let n: usize = arg(args, 3);
        let i = global_x();
        if i < n {
            *y.add(i) += a * *x.add(i);
        }
    }
}

fn main() -> Result<(), BirenError> {
    let b = Biren::get();
    println!("loaded {}", b.path.display());
    unsafe {
        b.check("birenInit", (b.birenInit)())?;
        let mut version = 0;
        b.check(
            "birenRuntimeGetVersion",
            (b.birenRuntimeGetVersion)(&mut version),
        )?;
        println!("BIREN runtime {}.{}", version / 1000, version % 1000 / 10);

        let n: usize = 1 << 20;
        let x: Vec<f32> = (0..n).map(|i| i as f32).collect();
        let mut y = vec![1.0f32; n];
        let bytes = n * 4;
        let (mut dx, mut dy) = (null_mut(), null_mut());
        b.check("birenMalloc", (b.birenMalloc)(&mut dx, bytes))?;
        b.check("birenMalloc", (b.birenMalloc)(&mut dy, bytes))?;
        b.check(
            "birenMemcpy",
            (b.birenMemcpy)(dx, x.as_ptr().cast(), bytes, MEMCPY_HOST_TO_DEVICE),
        )?;
        b.check(
            "birenMemcpy",
            (b.birenMemcpy)(dy, y.as_ptr().cast(), bytes, MEMCPY_HOST_TO_DEVICE),
        )?;

        // CUDA's argument convention: an array of pointers to the values, copied at launch.
        let (mut a, mut count) = (2.0f32, n);
        let mut args: [*mut c_void; 4] = [
            (&mut a as *mut f32).cast(),
            (&mut dx as *mut *mut c_void).cast(),
            (&mut dy as *mut *mut c_void).cast(),
            (&mut count as *mut usize).cast(),
        ];
        let sizes = [4usize, 8, 8, 8];
        let block = 256u32;
        let grid = n.div_ceil(block as usize) as u32;
        b.check(
            "birenLaunchKernelArgs",
            (b.birenLaunchKernelArgs)(
                Some(saxpy),
                Dim3::new(grid, 1, 1),
                Dim3::new(block, 1, 1),
                args.as_mut_ptr(),
                sizes.as_ptr(),
                4,
                0,
                null_mut(),
            ),
        )?;
        b.check("birenDeviceSynchronize", (b.birenDeviceSynchronize)())?;
        b.check(
            "birenMemcpy",
            (b.birenMemcpy)(y.as_mut_ptr().cast(), dy, bytes, MEMCPY_DEVICE_TO_HOST),
        )?;
        let wrong = (0..n).filter(|&i| y[i] != 2.0 * i as f32 + 1.0).count();
        println!("saxpy on {n} elements ({grid} blocks of {block} threads): {wrong} wrong");

        b.check("birenFree", (b.birenFree)(dx))?;
        b.check("birenFree", (b.birenFree)(dy))?;
        // Freeing twice is an error, reported with its code and name.
        if let Err(e) = b.check("birenFree", (b.birenFree)(dx)) {
            println!("as expected, {e}");
        }
        if wrong != 0 {
            std::process::exit(1);
        }
    }
    Ok(())
}
