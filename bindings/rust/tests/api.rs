//! The safe binding against the real library (`BIREN_LIBRARY`, set by `make test`): RAII,
//! length checks, error codes and names, launches, events, host functions, device resets.

use biren::{
    kernel, launch, sys, BirenError, DeviceBuffer, DeviceCopy, DevicePtr, ErrorCode, Event, Launch,
    PinnedBuffer, Stream,
};
use std::ffi::c_void;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

/// One test at a time: some reset the device or make its error sticky.
fn serial() -> MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    let guard = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    biren::init().unwrap_or_else(|e| panic!("{e} (set BIREN_LIBRARY to the built library)"));
    guard
}

fn code<T: std::fmt::Debug>(r: Result<T, BirenError>) -> ErrorCode {
    r.unwrap_err().code
}

#[test]
fn the_library_names_every_code_as_the_enum_does() {
    let _g = serial();
    for raw in (0..=16).chain([999, 12345, -1]) {
        let c = ErrorCode::from_raw(raw);
        let e = BirenError::new(c, "test");
        assert_eq!(e.name, c.name(), "code {raw}");
        assert!(!e.text.is_empty(), "code {raw} has a text");
    }
    assert_eq!(ErrorCode::from_raw(12345), ErrorCode::Unrecognized(12345));
}

#[test]
fn copies_check_lengths_and_write_nothing_on_a_mismatch() {
    let _g = serial();
    let mut d = DeviceBuffer::from_slice(&[7u16; 8]).unwrap();
    let e = d.copy_from_host(&[1u16; 9]).unwrap_err();
    assert_eq!(
        (e.code, e.name),
        (ErrorCode::InvalidValue, "BIREN_ERROR_INVALID_VALUE")
    );
    assert_eq!(e.call, "DeviceBuffer::copy_from_host");
    assert_eq!(code(d.copy_from_host(&[1u16; 7])), ErrorCode::InvalidValue);
    assert_eq!(d.to_vec().unwrap(), vec![7u16; 8], "nothing written");
    assert_eq!(
        code(d.copy_to_host(&mut [0u16; 9])),
        ErrorCode::InvalidValue
    );
    let other = DeviceBuffer::<u16>::zeroed(4).unwrap();
    assert_eq!(code(d.copy_from(&other)), ErrorCode::InvalidValue);
    let s = Stream::new().unwrap();
    // SAFETY: refused before anything is enqueued.
    assert_eq!(
        code(unsafe { d.copy_from_host_async(&[0u16; 3], &s) }),
        ErrorCode::InvalidValue
    );
    assert_eq!(d.to_vec().unwrap(), vec![7u16; 8]);

    // Device to device, byte fills, and the sizes.
    let mut e8 = DeviceBuffer::<u16>::zeroed(8).unwrap();
    e8.copy_from(&d).unwrap();
    assert_eq!(e8.to_vec().unwrap(), vec![7u16; 8]);
    e8.fill_bytes(1).unwrap();
    assert_eq!(e8.to_vec().unwrap(), vec![0x0101u16; 8]);
    assert_eq!((e8.len(), e8.byte_len(), e8.is_empty()), (8, 16, false));

    // Sizes that overflow are refused before the library is asked.
    let e = DeviceBuffer::<u64>::zeroed(usize::MAX / 4).unwrap_err();
    assert_eq!(e.code, ErrorCode::InvalidValue);
    assert!(e.to_string().contains("overflow"), "{e}");
}

#[test]
fn empty_buffers_work() {
    let _g = serial();
    let mut d = DeviceBuffer::<f64>::zeroed(0).unwrap();
    assert!(d.is_empty() && d.as_device_ptr().is_null());
    d.copy_from_host(&[]).unwrap();
    assert_eq!(d.to_vec().unwrap(), Vec::<f64>::new());
    let p = PinnedBuffer::<f64>::zeroed(0).unwrap();
    assert!(p.is_empty());
}

#[test]
fn a_device_reset_makes_old_buffers_and_handles_stale_without_touching_new_ones() {
    let _g = serial();
    let old = DeviceBuffer::from_slice(&[1u32; 64]).unwrap();
    let old_stream = Stream::new().unwrap();
    let old_event = Event::new().unwrap();
    biren::device_reset().unwrap();
    // Same size right after the reset: the allocator hands out the same address (it does today).
    let fresh = DeviceBuffer::from_slice(&[2u32; 64]).unwrap();
    let reused = old.as_device_ptr().as_raw() == fresh.as_device_ptr().as_raw();
    let e = old.to_vec().unwrap_err();
    assert_eq!(e.code, ErrorCode::InvalidDevicePointer);
    assert!(e.to_string().contains("device_reset"), "{e}");
    assert_eq!(code(old_stream.synchronize()), ErrorCode::InvalidHandle);
    assert_eq!(code(old_event.query()), ErrorCode::InvalidHandle);
    drop(old); // must not free `fresh`, even at the same address
    drop(old_stream);
    drop(old_event);
    assert_eq!(
        fresh.to_vec().unwrap(),
        vec![2u32; 64],
        "reused address: {reused}"
    );
    let mut fresh = fresh;
    fresh.copy_from_host(&[3u32; 64]).unwrap();
    assert_eq!(fresh.to_vec().unwrap(), vec![3u32; 64]);
}

/// x[i] = value + i for i < n
extern "C" fn iota(args: *mut *mut c_void) {
    // SAFETY: launched with (DevicePtr<u32>, u32, u32).
    unsafe {
        let x: DevicePtr<u32> = kernel::arg(args, 0);
        let value: u32 = kernel::arg(args, 1);
        let n: u32 = kernel::arg(args, 2);
        let i = kernel::global_index_x();
        if i < n as usize {
            *x.as_raw().add(i) = value + i as u32;
        }
    }
}

#[test]
fn launches_copy_typed_arguments() {
    let _g = serial();
    let n = 1000u32;
    let x = DeviceBuffer::<u32>::zeroed(n as usize).unwrap();
    let s = Stream::new().unwrap();
    let mut value = 5u32;
    // SAFETY: iota reads (DevicePtr<u32>, u32, u32) within n elements.
    unsafe { launch!(iota, n.div_ceil(128), 128, stream = &s; x, value, n) }.unwrap();
    value = 1_000_000; // copied at launch: the kernel must not see this
    assert_eq!(value, 1_000_000);
    s.synchronize().unwrap();
    let got = x.to_vec().unwrap();
    assert!(got.iter().enumerate().all(|(i, &v)| v == 5 + i as u32));
}

/// A `#[repr(C)]` argument of two fields.
#[repr(C)]
#[derive(Clone, Copy)]
struct Affine {
    scale: f32,
    offset: f32,
}
// SAFETY: two f32s, no padding; every bit pattern is valid.
unsafe impl DeviceCopy for Affine {}

/// x[i] = x[i] * f.scale + f.offset
extern "C" fn affine(args: *mut *mut c_void) {
    // SAFETY: launched with (DevicePtr<f32>, Affine, usize).
    unsafe {
        let x: DevicePtr<f32> = kernel::arg(args, 0);
        let f: Affine = kernel::arg(args, 1);
        let n: usize = kernel::arg(args, 2);
        let i = kernel::global_index_x();
        if i < n {
            let p = x.as_raw().add(i);
            *p = *p * f.scale + f.offset;
        }
    }
}

#[test]
fn struct_and_pinned_arguments_arrive_intact() {
    let _g = serial();
    let n = 300usize;
    let x = DeviceBuffer::from_slice(&vec![2.0f32; n]).unwrap();
    let f = Affine {
        scale: 3.0,
        offset: 0.5,
    };
    // SAFETY: affine reads (DevicePtr<f32>, Affine, usize) within n elements.
    unsafe { Launch::new(affine, 3, 128).launch(&[&x, &f, &n]) }.unwrap();
    biren::synchronize().unwrap();
    assert!(x.to_vec().unwrap().iter().all(|&v| v == 6.5));

    // A kernel may work on page-locked host memory directly.
    let mut h = PinnedBuffer::from_slice(&vec![1.0f32; n]).unwrap();
    // SAFETY: as above; `h` is not touched until the synchronize.
    unsafe { launch!(affine, 3, 128; h, f, n) }.unwrap();
    biren::synchronize().unwrap();
    assert!(h.iter().all(|&v| v == 3.5));
    h[0] = 9.0;
    assert_eq!(h[0], 9.0);
}

#[test]
fn bad_launches_are_refused_and_enqueue_nothing() {
    let _g = serial();
    let x = DeviceBuffer::<u32>::zeroed(4).unwrap();
    // SAFETY: refused: a block of 2048 threads is over the limit.
    let e = unsafe { launch!(iota, 1, 2048; x, 1u32, 4u32) }.unwrap_err();
    assert_eq!(
        (e.code, e.call),
        (ErrorCode::InvalidConfiguration, "birenLaunchKernelArgs")
    );
    let many: Vec<u32> = vec![0; 257];
    let args: Vec<&dyn biren::KernelArg> = many.iter().map(|v| v as _).collect();
    // SAFETY: refused: more than 256 arguments.
    let e = unsafe { Launch::new(iota, 1, 1).launch(&args) }.unwrap_err();
    assert_eq!(e.code, ErrorCode::InvalidValue);
    biren::synchronize().unwrap();
    assert_eq!(x.to_vec().unwrap(), vec![0; 4], "nothing ran");
}

/// Thread 3 of block 1 traps.
extern "C" fn trap_in_block_1(_args: *mut *mut c_void) {
    if kernel::block_idx().x == 1 && kernel::thread_idx().x == 3 {
        // SAFETY: no value with a destructor is alive in this frame.
        unsafe { kernel::trap() };
    }
}

#[test]
fn a_trap_is_sticky_until_reset() {
    let _g = serial();
    // SAFETY: the kernel takes no arguments.
    unsafe { Launch::new(trap_in_block_1, 4, 32).launch(&[]) }.unwrap();
    let e = biren::synchronize().unwrap_err();
    assert_eq!(
        (e.code, e.name),
        (ErrorCode::LaunchFailure, "BIREN_ERROR_LAUNCH_FAILURE")
    );
    assert_eq!(
        code(DeviceBuffer::<u8>::zeroed(16)),
        ErrorCode::LaunchFailure
    );
    biren::device_reset().unwrap();
    DeviceBuffer::<u8>::zeroed(16).unwrap();
    // Outside a kernel the built-ins are zero and the barrier and trap do nothing.
    assert_eq!(kernel::thread_idx(), biren::Dim3::new(0, 0, 0));
    kernel::sync_threads();
    // SAFETY: outside a kernel trap returns.
    unsafe { kernel::trap() };
}

#[test]
fn events_order_streams_and_time_them() {
    let _g = serial();
    let (s1, s2) = (Stream::new().unwrap(), Stream::non_blocking().unwrap());
    assert_eq!(s2.flags().unwrap(), sys::birenStreamNonBlocking);
    let urgent = Stream::with_priority(-5).unwrap();
    assert_eq!(urgent.priority().unwrap(), -5);
    let (start, done) = (Event::new().unwrap(), Event::new().unwrap());
    let x = DeviceBuffer::<u32>::zeroed(64).unwrap();
    start.record(&s1).unwrap();
    s1.launch_host_fn(|| std::thread::sleep(std::time::Duration::from_millis(30)))
        .unwrap();
    // SAFETY: iota's arguments.
    unsafe { launch!(iota, 1, 64, stream = &s1; x, 42u32, 64u32) }.unwrap();
    done.record(&s1).unwrap();
    assert!(!done.query().unwrap(), "still sleeping");
    s2.wait_event(&done).unwrap();
    let mut out = PinnedBuffer::<u32>::zeroed(64).unwrap();
    // SAFETY: `out` is read only after s2's synchronize.
    unsafe { x.copy_to_host_async(&mut out, &s2) }.unwrap();
    s2.synchronize().unwrap();
    assert!(out.iter().enumerate().all(|(i, &v)| v == 42 + i as u32));
    assert!(done.query().unwrap() && s1.query().unwrap());
    let ms = start.elapsed_time(&done).unwrap();
    assert!((29.0..10_000.0).contains(&ms), "{ms} ms");

    let untimed = Event::with_flags(sys::birenEventDisableTiming).unwrap();
    untimed.record(&s1).unwrap();
    untimed.synchronize().unwrap();
    assert_eq!(code(start.elapsed_time(&untimed)), ErrorCode::InvalidHandle);
    assert_eq!(code(Event::with_flags(0x80)), ErrorCode::InvalidValue);
}

#[test]
fn host_functions_run_in_order_and_a_panic_stays_inside() {
    let _g = serial();
    let s = Stream::new().unwrap();
    let order = Arc::new(Mutex::new(Vec::new()));
    for i in 0..5 {
        let order = order.clone();
        s.launch_host_fn(move || order.lock().unwrap().push(i))
            .unwrap();
    }
    // Keep the expected panic's message out of the test output (other panics still print).
    let default_hook = Arc::new(std::panic::take_hook());
    let hook = default_hook.clone();
    std::panic::set_hook(Box::new(move |info| {
        if !info.to_string().contains("on purpose") {
            hook(info);
        }
    }));
    s.launch_host_fn(|| panic!("a host function panicked on purpose"))
        .unwrap();
    let after = Arc::new(AtomicUsize::new(0));
    let a = after.clone();
    s.launch_host_fn(move || {
        a.fetch_add(1, Ordering::SeqCst);
    })
    .unwrap();
    s.synchronize().unwrap();
    let _ = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| default_hook(info)));
    assert_eq!(*order.lock().unwrap(), vec![0, 1, 2, 3, 4]);
    assert_eq!(after.load(Ordering::SeqCst), 1, "work after the panic ran");
}

#[test]
fn buffers_streams_and_events_are_shared_across_threads() {
    fn send_sync<T: Send + Sync>() {}
    send_sync::<DeviceBuffer<f32>>();
    send_sync::<PinnedBuffer<u8>>();
    send_sync::<Stream>();
    send_sync::<Event>();
    send_sync::<BirenError>();

    let _g = serial();
    let d = DeviceBuffer::from_slice(&(0..4096u32).collect::<Vec<_>>()).unwrap();
    let s = Stream::new().unwrap();
    std::thread::scope(|scope| {
        for _ in 0..4 {
            scope.spawn(|| {
                for _ in 0..20 {
                    let v = d.to_vec().unwrap();
                    assert_eq!(v[4095], 4095);
                    s.launch_host_fn(|| {}).unwrap();
                }
            });
        }
    });
    s.synchronize().unwrap();
    // Moved to another thread and dropped there.
    std::thread::spawn(move || drop(d)).join().unwrap();
}

#[test]
fn device_queries() {
    let _g = serial();
    assert_eq!(biren::runtime_version().unwrap(), 1000);
    let n = biren::device_count().unwrap();
    assert!(n >= 1);
    assert_eq!(code(biren::set_device(n)), ErrorCode::InvalidDevice);
    assert_eq!(biren::current_device().unwrap(), 0);
    let (free, total) = biren::mem_info().unwrap();
    assert!(free <= total && total > 0);
    let p = biren::device_properties(0).unwrap();
    assert_eq!(p.total_global_mem, total);
    // The last error is the failed set_device above; taking it clears it.
    assert_eq!(code(biren::take_last_error()), ErrorCode::InvalidDevice);
    biren::take_last_error().unwrap();
    biren::register_kernel(iota, "iota", &[8, 4, 4]).unwrap();
    assert_eq!(
        code(biren::register_kernel(iota, "bad\0name", &[])),
        ErrorCode::InvalidValue
    );
}
