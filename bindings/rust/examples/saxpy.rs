//! A Rust program on the BIREN runtime through the safe binding: a kernel written in Rust, run
//! on the simulated device and timed with events, and an error with its code, name and text.
//!
//!     make && BIREN_LIBRARY=$PWD/target/release/libbiren_runtime.so \
//!         cargo run --release -p biren --example saxpy
//!     # installed: cargo run -p biren --example saxpy   (finds libbiren_runtime.so.1)

use biren::{kernel, launch, DeviceBuffer, DevicePtr, Event, Stream};
use std::ffi::c_void;

/// y[i] = a * x[i] + y[i]
extern "C" fn saxpy(args: *mut *mut c_void) {
    // SAFETY: launched below with (f32, DevicePtr<f32>, DevicePtr<f32>, usize).
    unsafe {
        let a: f32 = kernel::arg(args, 0);
        let x: DevicePtr<f32> = kernel::arg(args, 1);
        let y: DevicePtr<f32> = kernel::arg(args, 2);
        let n: usize = kernel::arg(args, 3);
        let i = kernel::global_index_x();
        if i < n {
            *y.as_raw().add(i) += a * *x.as_raw().add(i);
        }
    }
}

fn main() -> Result<(), biren::BirenError> {
    biren::init()?;
    let v = biren::runtime_version()?;
    println!(
        "BIREN runtime {}.{} from {}",
        v / 1000,
        v % 1000 / 10,
        biren::sys::api().expect("loaded").path().display()
    );

    let n: usize = 1 << 20;
    let x = DeviceBuffer::from_slice(&(0..n).map(|i| i as f32).collect::<Vec<_>>())?;
    let y = DeviceBuffer::from_slice(&vec![1.0f32; n])?;
    let stream = Stream::new()?;
    let (start, end) = (Event::new()?, Event::new()?);
    let block = 256u32;
    let grid = n.div_ceil(block as usize) as u32;
    start.record(&stream)?;
    // SAFETY: saxpy reads (f32, ptr, ptr, usize) and stays within n elements of x and y.
    unsafe { launch!(saxpy, grid, block, stream = &stream; 2.0f32, x, y, n)? };
    end.record(&stream)?;
    stream.synchronize()?;
    let out = y.to_vec()?;
    let wrong = (0..n).filter(|&i| out[i] != 2.0 * i as f32 + 1.0).count();
    println!(
        "saxpy on {n} elements ({grid} blocks of {block} threads) in {:.2} ms: {wrong} wrong",
        start.elapsed_time(&end)?
    );

    // A copy of the wrong length is refused, nothing written.
    let mut small = DeviceBuffer::<f32>::zeroed(4)?;
    if let Err(e) = small.copy_from_host(&[1.0; 5]) {
        println!("as expected, {e}");
    }
    if wrong != 0 {
        std::process::exit(1);
    }
    Ok(())
}
