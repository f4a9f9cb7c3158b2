//! Loading the library: calls before it is loaded, a path that does not load, and a second
//! library. Its own test binary (its own process): nothing else may load the library first.

use biren::{sys, DeviceBuffer, ErrorCode, Stream};

#[test]
fn before_loading_calls_fail_then_init_loads() {
    assert!(sys::api().is_none());
    let e = Stream::new().unwrap_err();
    assert_eq!(
        (e.code, e.call),
        (ErrorCode::NotInitialized, "birenStreamCreate")
    );
    assert_eq!(e.name, "BIREN_ERROR_NOT_INITIALIZED");
    assert!(e.text.contains("not loaded"), "{e}");
    assert_eq!(e.detail.as_deref(), Some("call biren::init() first"));
    assert_eq!(
        DeviceBuffer::<u8>::zeroed(1).unwrap_err().code,
        ErrorCode::NotInitialized
    );
    assert_eq!(
        biren::synchronize().unwrap_err().code,
        ErrorCode::NotInitialized
    );
    // The built-ins outside a kernel, with nothing loaded: zero, no crash.
    assert_eq!(biren::kernel::global_index_x(), 0);

    let e = biren::init_with_library("/nonexistent/libbiren_runtime.so").unwrap_err();
    assert_eq!(e.code, ErrorCode::NotInitialized);
    assert!(
        e.to_string().contains("/nonexistent/libbiren_runtime.so"),
        "{e}"
    );
    assert!(sys::api().is_none());
    // A library that loads but is not the runtime: its missing exports are named.
    match sys::load("libm.so.6") {
        Err(sys::LoadError::Load { reason, .. }) => {
            assert!(reason.contains("birenInit"), "{reason}")
        }
        other => panic!("{other:?}"),
    }
    assert!(sys::api().is_none());

    let path = std::env::var("BIREN_LIBRARY").expect("BIREN_LIBRARY: the built library");
    biren::init_with_library(&path).unwrap();
    biren::init().unwrap(); // idempotent, same library
    assert_eq!(sys::api().unwrap().path(), std::path::Path::new(&path));
    match sys::load("/some/other/libbiren_runtime.so") {
        Err(sys::LoadError::AlreadyLoaded { loaded, .. }) => {
            assert_eq!(loaded, std::path::Path::new(&path))
        }
        other => panic!("{other:?}"),
    }
    let d = DeviceBuffer::from_slice(&[1u8, 2, 3]).unwrap();
    assert_eq!(d.to_vec().unwrap(), [1, 2, 3]);
}
