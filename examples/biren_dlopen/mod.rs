//! A minimal Rust binding of libbiren_runtime loaded at run time with `libloading`: the
//! exports this crate's dlopen example and test use, declared as in `include/biren_runtime.h`.
//! Copy it into a project that talks to the runtime through `dlopen` instead of linking it.
//!
//! The library is looked for at `$BIREN_LIBRARY`, then next to the running executable's
//! target directory (`target/<profile>/libbiren_runtime.so`, where cargo puts the cdylib),
//! then at `$CARGO_MANIFEST_DIR/target/<profile>/libbiren_runtime.so`.

#![allow(non_snake_case, dead_code)]

use libloading::Library;
use std::ffi::{c_char, c_int, c_uint, c_void, CStr};
use std::path::PathBuf;
use std::sync::OnceLock;

/// `birenError_t`: every call's result, an `int` with stable values.
pub type Error = c_int;
pub const SUCCESS: Error = 0;
pub const ERROR_INVALID_VALUE: Error = 1;
pub const ERROR_INVALID_DEVICE_POINTER: Error = 6;
pub const ERROR_OUT_OF_BOUNDS: Error = 7;
pub const ERROR_INVALID_CONFIGURATION: Error = 9;
pub const ERROR_LAUNCH_FAILURE: Error = 12;

/// `birenMemcpyKind`.
pub const MEMCPY_HOST_TO_DEVICE: c_int = 1;
pub const MEMCPY_DEVICE_TO_HOST: c_int = 2;

/// `birenStream_t` (null: the default stream) and `birenEvent_t`.
pub type Stream = *mut c_void;
pub type Event = *mut c_void;

/// `birenKernel_t`: a kernel is a plain C-ABI function taking CUDA's array of argument pointers.
pub type Kernel = unsafe extern "C" fn(args: *mut *mut c_void);

/// `dim3`.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Dim3 {
    pub x: c_uint,
    pub y: c_uint,
    pub z: c_uint,
}

impl Dim3 {
    pub const fn new(x: u32, y: u32, z: u32) -> Dim3 {
        Dim3 { x, y, z }
    }
}

macro_rules! exports {
    ($($name:ident: fn($($arg:ty),*) $(-> $ret:ty)?;)*) => {
        /// The loaded library: one field per export, called as `(biren.birenInit)()`.
        pub struct Biren {
            $(pub $name: unsafe extern "C" fn($($arg),*) $(-> $ret)?,)*
            pub path: PathBuf,
            _library: Library,
        }

        impl Biren {
            /// Loads the library at `path` and resolves every declared export.
            pub fn load(path: PathBuf) -> Result<Biren, String> {
                // SAFETY: loading runs the library's initializers, which only set up statics.
                let failed = |e: libloading::Error| format!("{}: {e}", path.display());
                let library = unsafe { Library::new(&path) }.map_err(failed)?;
                $(
                    // SAFETY: the type is the export's C signature from include/biren_runtime.h.
                    let symbol = concat!(stringify!($name), "\0").as_bytes();
                    let $name = *unsafe {
                        library.get::<unsafe extern "C" fn($($arg),*) $(-> $ret)?>(symbol)
                    }
                    .map_err(failed)?;
                )*
                Ok(Biren { $($name,)* path, _library: library })
            }
        }
    };
}

exports! {
    birenInit: fn() -> Error;
    birenDeviceReset: fn() -> Error;
    birenDeviceSynchronize: fn() -> Error;
    birenRuntimeGetVersion: fn(*mut c_int) -> Error;
    birenGetErrorName: fn(Error) -> *const c_char;
    birenGetErrorString: fn(Error) -> *const c_char;
    birenGetLastError: fn() -> Error;
    birenMalloc: fn(*mut *mut c_void, usize) -> Error;
    birenFree: fn(*mut c_void) -> Error;
    birenMemcpy: fn(*mut c_void, *const c_void, usize, c_int) -> Error;
    birenMemcpyAsync: fn(*mut c_void, *const c_void, usize, c_int, Stream) -> Error;
    birenKernelRegister: fn(Option<Kernel>, *const c_char, c_uint, *const usize) -> Error;
    birenLaunchKernel: fn(Option<Kernel>, Dim3, Dim3, *mut *mut c_void, usize, Stream) -> Error;
    birenLaunchKernelArgs:
        fn(Option<Kernel>, Dim3, Dim3, *mut *mut c_void, *const usize, c_uint, usize, Stream) -> Error;
    birenThreadIdx: fn() -> Dim3;
    birenBlockIdx: fn() -> Dim3;
    birenBlockDim: fn() -> Dim3;
    birenGridDim: fn() -> Dim3;
    birenSharedMemory: fn() -> *mut c_void;
    birenSyncThreads: fn();
    birenTrap: fn();
    birenStreamCreate: fn(*mut Stream) -> Error;
    birenStreamSynchronize: fn(Stream) -> Error;
    birenStreamDestroy: fn(Stream) -> Error;
    birenStreamWaitEvent: fn(Stream, Event) -> Error;
    birenEventCreate: fn(*mut Event) -> Error;
    birenEventRecord: fn(Event, Stream) -> Error;
    birenEventSynchronize: fn(Event) -> Error;
    birenEventDestroy: fn(Event) -> Error;
}

/// A failed call: the code and the library's name for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BirenError {
    pub call: &'static str,
    pub code: Error,
    pub name: String,
}

impl std::fmt::Display for BirenError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {} ({})", self.call, self.name, self.code)
    }
}

impl std::error::Error for BirenError {}

/// The candidate paths, in order.
pub fn candidates() -> Vec<PathBuf> {
    let mut paths = Vec::new();
    if let Some(p) = std::env::var_os("BIREN_LIBRARY") {
        paths.push(PathBuf::from(p));
    }
    // target/<profile>/deps/<test> or target/<profile>/examples/<example>
    if let Some(dir) = std::env::current_exe()
        .ok()
        .and_then(|e| e.parent()?.parent().map(|d| d.to_path_buf()))
    {
        paths.push(dir.join("libbiren_runtime.so"));
    }
    let profile = if cfg!(debug_assertions) {
        "debug"
    } else {
        "release"
    };
    paths.push(
        PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("target")
            .join(profile)
            .join("libbiren_runtime.so"),
    );
    paths
}

impl Biren {
    /// The process-wide instance, loaded on first use; panics naming every place it tried.
    pub fn get() -> &'static Biren {
        static BIREN: OnceLock<Biren> = OnceLock::new();
        BIREN.get_or_init(|| {
            let mut tried = Vec::new();
            for path in candidates() {
                if !path.exists() {
                    tried.push(format!("{} (no such file)", path.display()));
                    continue;
                }
                match Biren::load(path) {
                    Ok(b) => return b,
                    Err(e) => tried.push(e),
                }
            }
            panic!(
                "cannot load libbiren_runtime.so; tried:\n  {}\n(build it with `cargo build` or set BIREN_LIBRARY)",
                tried.join("\n  ")
            )
        })
    }

    /// The library's name for an error code ("BIREN_ERROR_OUT_OF_BOUNDS").
    pub fn error_name(&self, code: Error) -> String {
        // SAFETY: birenGetErrorName never returns NULL; the string is static.
        unsafe { CStr::from_ptr((self.birenGetErrorName)(code)) }
            .to_string_lossy()
            .into_owned()
    }

    /// `Ok(())` for BIREN_SUCCESS, else the code with its name.
    pub fn check(&self, call: &'static str, code: Error) -> Result<(), BirenError> {
        if code == SUCCESS {
            Ok(())
        } else {
            Err(BirenError {
                call,
                code,
                name: self.error_name(code),
            })
        }
    }
}

/// Argument `i` of a kernel's `args`, read as a `T` (the launch gave a pointer to a `T` there).
///
/// # Safety
/// `args` must be the kernel's argument array with at least `i + 1` entries, entry `i` pointing
/// to a value of type `T`.
pub unsafe fn arg<T: Copy>(args: *mut *mut c_void, i: usize) -> T {
    *(*args.add(i) as *const T)
}

/// The calling kernel thread's global x index: blockIdx.x * blockDim.x + threadIdx.x.
pub fn global_x() -> usize {
    let b = Biren::get();
    // SAFETY: the built-ins take no arguments and only read the calling thread's context.
    let (t, bi, bd) = unsafe {
        (
            (b.birenThreadIdx)(),
            (b.birenBlockIdx)(),
            (b.birenBlockDim)(),
        )
    };
    bi.x as usize * bd.x as usize + t.x as usize
}
