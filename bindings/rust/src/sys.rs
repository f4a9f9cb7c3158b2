//! The raw C API: the exports of `include/biren_runtime.h` as function pointers resolved from
//! the loaded library, with the C types they use.
//!
//! Everything here is `unsafe` to call and checks nothing beyond what the C library checks; the
//! rest of the crate is built on it. Use it for what the safe types do not cover, e.g.
//! `birenSetValidatorCallback`:
//!
//! ```
//! # fn main() -> Result<(), biren::BirenError> {
//! biren::init()?;
//! let api = biren::sys::api().expect("loaded by init");
//! let mut version = 0;
//! // SAFETY: the out-parameter points to a live c_int.
//! let code = unsafe { (api.birenRuntimeGetVersion)(&mut version) };
//! assert_eq!(code, biren::sys::BIREN_SUCCESS);
//! assert_eq!(version, 1000);
//! # Ok(()) }
//! ```

#![allow(non_snake_case, non_camel_case_types, non_upper_case_globals)]

use libloading::Library;
use std::ffi::{c_char, c_int, c_uint, c_void};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

/// `birenError_t`: every call's result, read as an integer (values outside the header's list
/// stay representable).
pub type birenError_t = c_int;
/// `BIREN_SUCCESS`.
pub const BIREN_SUCCESS: birenError_t = 0;

/// `birenMemcpyKind` values.
pub const birenMemcpyHostToHost: c_int = 0;
/// Host to device.
pub const birenMemcpyHostToDevice: c_int = 1;
/// Device to host.
pub const birenMemcpyDeviceToHost: c_int = 2;
/// Device to device.
pub const birenMemcpyDeviceToDevice: c_int = 3;
/// Inferred from the pointers.
pub const birenMemcpyDefault: c_int = 4;

/// Stream flag: the stream neither waits for nor blocks the default stream.
pub const birenStreamNonBlocking: c_uint = 1;
/// Event flag: synchronize parks the host thread.
pub const birenEventBlockingSync: c_uint = 1;
/// Event flag: the event records no time (cheaper; `elapsed_time` refuses it).
pub const birenEventDisableTiming: c_uint = 2;

/// `birenStream_t`; NULL is the current device's default stream.
pub type birenStream_t = *mut c_void;
/// `birenEvent_t`.
pub type birenEvent_t = *mut c_void;
/// `birenKernel_t`: a kernel receives CUDA's array of pointers to its argument values.
pub type birenKernel_t = unsafe extern "C" fn(args: *mut *mut c_void);
/// `birenHostFn_t`.
pub type birenHostFn_t = unsafe extern "C" fn(user_data: *mut c_void);
/// `birenValidatorCallback_t`.
pub type birenValidatorCallback_t = unsafe extern "C" fn(message: *const c_char, user: *mut c_void);

/// `dim3`: grid and block extents, thread and block indices.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Dim3 {
    /// Extent or index along x.
    pub x: u32,
    /// Along y.
    pub y: u32,
    /// Along z.
    pub z: u32,
}

impl Dim3 {
    /// `Dim3 { x, y, z }`.
    pub const fn new(x: u32, y: u32, z: u32) -> Dim3 {
        Dim3 { x, y, z }
    }
}

impl From<u32> for Dim3 {
    /// `(x, 1, 1)`.
    fn from(x: u32) -> Dim3 {
        Dim3::new(x, 1, 1)
    }
}

impl From<(u32, u32)> for Dim3 {
    /// `(x, y, 1)`.
    fn from((x, y): (u32, u32)) -> Dim3 {
        Dim3::new(x, y, 1)
    }
}

impl From<(u32, u32, u32)> for Dim3 {
    fn from((x, y, z): (u32, u32, u32)) -> Dim3 {
        Dim3::new(x, y, z)
    }
}

/// `birenDeviceProp`.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct birenDeviceProp {
    /// NUL-terminated device name.
    pub name: [c_char; 256],
    /// Device memory capacity in bytes.
    pub totalGlobalMem: usize,
    /// Largest `sharedMem` a launch may ask for.
    pub sharedMemPerBlock: usize,
    /// Most threads in a block.
    pub maxThreadsPerBlock: c_int,
    /// Largest block extents.
    pub maxThreadsDim: [c_int; 3],
    /// Largest grid extents.
    pub maxGridSize: [c_int; 3],
    /// Compute units.
    pub multiProcessorCount: c_int,
    /// Copy engines.
    pub asyncEngineCount: c_int,
    /// 1: kernels of different streams run concurrently.
    pub concurrentKernels: c_int,
    /// 1: stream priorities are honoured.
    pub streamPrioritiesSupported: c_int,
}

/// `birenChannelFormatDesc`: bits of channels x, y, z, w and their kind (2: float).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct birenChannelFormatDesc {
    /// Bits of channel x.
    pub x: c_int,
    /// Bits of channel y.
    pub y: c_int,
    /// Bits of channel z.
    pub z: c_int,
    /// Bits of channel w.
    pub w: c_int,
    /// `birenChannelFormatKind`: 0 signed, 1 unsigned, 2 float.
    pub f: c_int,
}

/// `birenResourceDesc` with its union as its largest member (`res.pitch2D`): `ptr` is
/// `res.array.array` for resType 0 (an array), `res.linear.devPtr` / `res.pitch2D.devPtr`
/// otherwise.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct birenResourceDesc {
    /// `birenResourceType`: 0 array, 2 linear, 3 pitch2D.
    pub resType: c_int,
    /// The array, or the device memory.
    pub ptr: *mut c_void,
    /// The texel format (linear and pitch2D).
    pub desc: birenChannelFormatDesc,
    /// `res.linear.sizeInBytes`, or `res.pitch2D.width`.
    pub width: usize,
    /// `res.pitch2D.height`.
    pub height: usize,
    /// `res.pitch2D.pitchInBytes`.
    pub pitchInBytes: usize,
}

/// `birenTextureDesc`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct birenTextureDesc {
    /// Address modes of x, y, z: 0 wrap, 1 clamp, 2 mirror, 3 border.
    pub addressMode: [c_int; 3],
    /// 0 point, 1 linear.
    pub filterMode: c_int,
    /// 0 element type, 1 normalized float.
    pub readMode: c_int,
    /// Must be 0.
    pub sRGB: c_int,
    /// The border colour.
    pub borderColor: [f32; 4],
    /// Nonzero: coordinates in [0, 1).
    pub normalizedCoords: c_int,
    /// Ignored.
    pub maxAnisotropy: c_uint,
    /// Ignored.
    pub mipmapFilterMode: c_int,
    /// Ignored.
    pub mipmapLevelBias: f32,
    /// Ignored.
    pub minMipmapLevelClamp: f32,
    /// Ignored.
    pub maxMipmapLevelClamp: f32,
    /// Ignored.
    pub disableTrilinearOptimization: c_int,
    /// Ignored.
    pub seamlessCubemap: c_int,
}

macro_rules! exports {
    ($($name:ident: fn($($arg:ty),*) $(-> $ret:ty)?;)*) => {
        /// The loaded library: one field per export of the header, called as
        /// `(api.birenInit)()`. Obtained from [`api`].
        pub struct Api {
            $(
                #[doc = concat!("`", stringify!($name), "` (see include/biren_runtime.h).")]
                pub $name: unsafe extern "C" fn($($arg),*) $(-> $ret)?,
            )*
            path: PathBuf,
            _library: Library,
        }

        impl Api {
            /// Loads the library at `path` and resolves every declared export.
            fn open(path: &Path) -> Result<Api, LoadError> {
                let failed = |e: libloading::Error| LoadError::Load {
                    path: path.to_path_buf(),
                    reason: e.to_string(),
                };
                // SAFETY: loading runs the library's initializers, which only set up statics.
                let library = unsafe { Library::new(path) }.map_err(failed)?;
                $(
                    // SAFETY: the type is the export's C signature from include/biren_runtime.h.
                    let $name = *unsafe {
                        library.get::<unsafe extern "C" fn($($arg),*) $(-> $ret)?>(
                            concat!(stringify!($name), "\0").as_bytes(),
                        )
                    }
                    .map_err(failed)?;
                )*
                Ok(Api { $($name,)* path: path.to_path_buf(), _library: library })
            }
        }
    };
}

exports! {
    birenInit: fn() -> birenError_t;
    birenDeviceReset: fn() -> birenError_t;
    birenDeviceSynchronize: fn() -> birenError_t;
    birenGetDeviceCount: fn(*mut c_int) -> birenError_t;
    birenSetDevice: fn(c_int) -> birenError_t;
    birenGetDevice: fn(*mut c_int) -> birenError_t;
    birenGetDeviceProperties: fn(*mut birenDeviceProp, c_int) -> birenError_t;
    birenDeviceGetStreamPriorityRange: fn(*mut c_int, *mut c_int) -> birenError_t;
    birenDeviceSetSchedulingPolicy: fn(c_int) -> birenError_t;
    birenDeviceGetSchedulingPolicy: fn(*mut c_int) -> birenError_t;
    birenRuntimeGetVersion: fn(*mut c_int) -> birenError_t;
    birenGetErrorString: fn(birenError_t) -> *const c_char;
    birenGetErrorName: fn(birenError_t) -> *const c_char;
    birenGetLastError: fn() -> birenError_t;
    birenPeekAtLastError: fn() -> birenError_t;
    birenSetDeviceValidator: fn(c_int) -> birenError_t;
    birenSetValidatorCallback: fn(Option<birenValidatorCallback_t>, *mut c_void) -> birenError_t;
    birenEventCreate: fn(*mut birenEvent_t) -> birenError_t;
    birenEventCreateWithFlags: fn(*mut birenEvent_t, c_uint) -> birenError_t;
    birenEventRecord: fn(birenEvent_t, birenStream_t) -> birenError_t;
    birenEventQuery: fn(birenEvent_t) -> birenError_t;
    birenEventSynchronize: fn(birenEvent_t) -> birenError_t;
    birenEventElapsedTime: fn(*mut f32, birenEvent_t, birenEvent_t) -> birenError_t;
    birenEventDestroy: fn(birenEvent_t) -> birenError_t;
    birenLaunchKernel:
        fn(Option<birenKernel_t>, Dim3, Dim3, *mut *mut c_void, usize, birenStream_t) -> birenError_t;
    birenLaunchKernelArgs: fn(
        Option<birenKernel_t>, Dim3, Dim3, *mut *mut c_void, *const usize, c_uint, usize, birenStream_t
    ) -> birenError_t;
    birenKernelRegister:
        fn(Option<birenKernel_t>, *const c_char, c_uint, *const usize) -> birenError_t;
    birenThreadIdx: fn() -> Dim3;
    birenBlockIdx: fn() -> Dim3;
    birenBlockDim: fn() -> Dim3;
    birenGridDim: fn() -> Dim3;
    birenSharedMemory: fn() -> *mut c_void;
    birenSyncThreads: fn();
    birenTrap: fn();
    birenMalloc: fn(*mut *mut c_void, usize) -> birenError_t;
    birenFree: fn(*mut c_void) -> birenError_t;
    birenCreateChannelDesc: fn(c_int, c_int, c_int, c_int, c_int) -> birenChannelFormatDesc;
    birenMallocArray:
        fn(*mut *mut c_void, *const birenChannelFormatDesc, usize, usize, c_uint) -> birenError_t;
    birenFreeArray: fn(*mut c_void) -> birenError_t;
    birenMemcpy2DToArray:
        fn(*mut c_void, usize, usize, *const c_void, usize, usize, usize, c_int) -> birenError_t;
    birenMemcpy2DFromArray:
        fn(*mut c_void, usize, *mut c_void, usize, usize, usize, usize, c_int) -> birenError_t;
    birenCreateTextureObject: fn(
        *mut u64, *const birenResourceDesc, *const birenTextureDesc, *const c_void
    ) -> birenError_t;
    birenDestroyTextureObject: fn(u64) -> birenError_t;
    birenGetTextureObjectResourceDesc: fn(*mut birenResourceDesc, u64) -> birenError_t;
    birenMallocHost: fn(*mut *mut c_void, usize) -> birenError_t;
    birenFreeHost: fn(*mut c_void) -> birenError_t;
    birenMemcpy: fn(*mut c_void, *const c_void, usize, c_int) -> birenError_t;
    birenMemcpyAsync: fn(*mut c_void, *const c_void, usize, c_int, birenStream_t) -> birenError_t;
    birenMemset: fn(*mut c_void, c_int, usize) -> birenError_t;
    birenMemsetAsync: fn(*mut c_void, c_int, usize, birenStream_t) -> birenError_t;
    birenMemGetInfo: fn(*mut usize, *mut usize) -> birenError_t;
    birenStreamCreate: fn(*mut birenStream_t) -> birenError_t;
    birenStreamCreateWithFlags: fn(*mut birenStream_t, c_uint) -> birenError_t;
    birenStreamCreateWithPriority: fn(*mut birenStream_t, c_uint, c_int) -> birenError_t;
    birenStreamDestroy: fn(birenStream_t) -> birenError_t;
    birenStreamSynchronize: fn(birenStream_t) -> birenError_t;
    birenStreamQuery: fn(birenStream_t) -> birenError_t;
    birenStreamGetPriority: fn(birenStream_t, *mut c_int) -> birenError_t;
    birenStreamGetFlags: fn(birenStream_t, *mut c_uint) -> birenError_t;
    birenStreamWaitEvent: fn(birenStream_t, birenEvent_t) -> birenError_t;
    birenLaunchHostFunc: fn(birenStream_t, Option<birenHostFn_t>, *mut c_void) -> birenError_t;
}

impl Api {
    /// The file the library was loaded from (as given or as found by the loader).
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl std::fmt::Debug for Api {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Api")
            .field("path", &self.path)
            .finish_non_exhaustive()
    }
}

/// Why the library could not be loaded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LoadError {
    /// `dlopen` or a symbol lookup failed for this path.
    Load {
        /// The path or loader name tried.
        path: PathBuf,
        /// The loader's message.
        reason: String,
    },
    /// Nothing was found under any of the default names.
    NotFound {
        /// Every path or name tried, with the loader's message.
        tried: Vec<LoadError>,
    },
    /// The library loaded, but its `birenRuntimeGetVersion` is not of major version 1, the API
    /// this crate declares.
    Incompatible {
        /// The path loaded.
        path: PathBuf,
        /// What it reported (`1000 * major + 10 * minor`).
        version: i32,
    },
    /// A library is already loaded in this process from another path.
    AlreadyLoaded {
        /// The path of the loaded library.
        loaded: PathBuf,
        /// The path asked for.
        requested: PathBuf,
    },
}

impl std::fmt::Display for LoadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LoadError::Load { path, reason } => {
                write!(f, "cannot load {}: {reason}", path.display())
            }
            LoadError::NotFound { tried } => {
                write!(f, "libbiren_runtime not found (set BIREN_LIBRARY to its path, or install it); tried:")?;
                for t in tried {
                    write!(f, "\n  {t}")?;
                }
                Ok(())
            }
            LoadError::Incompatible { path, version } => write!(
                f,
                "{} is BIREN runtime version {version}, not 1.x",
                path.display()
            ),
            LoadError::AlreadyLoaded { loaded, requested } => write!(
                f,
                "cannot load {}: {} is already loaded in this process",
                requested.display(),
                loaded.display()
            ),
        }
    }
}

impl std::error::Error for LoadError {}

/// The names tried, in order, when no path is given: `$BIREN_LIBRARY` if it is set (and then
/// nothing else), else `libbiren_runtime.so.1` and `libbiren_runtime.so` as the dynamic loader
/// finds them (`LD_LIBRARY_PATH`, the executable's run path, the `ldconfig` cache).
pub fn default_candidates() -> Vec<PathBuf> {
    match std::env::var_os("BIREN_LIBRARY") {
        Some(p) if !p.is_empty() => vec![PathBuf::from(p)],
        _ => vec![
            PathBuf::from("libbiren_runtime.so.1"),
            PathBuf::from("libbiren_runtime.so"),
        ],
    }
}

static API: OnceLock<Api> = OnceLock::new();
static LOADING: Mutex<()> = Mutex::new(());

/// The loaded library, or `None` before [`load`], [`load_default`] or [`crate::init`].
pub fn api() -> Option<&'static Api> {
    API.get()
}

/// Loads the library from `path` (a file path, or a bare name the dynamic loader resolves) and
/// keeps it loaded for the life of the process. The file is trusted to be a BIREN runtime: its
/// initializers run, and after its version is checked (major version 1, else
/// [`LoadError::Incompatible`]) its exports are called with the header's signatures. Loading the same path again returns the same
/// library; another path once one is loaded is [`LoadError::AlreadyLoaded`].
pub fn load(path: impl AsRef<Path>) -> Result<&'static Api, LoadError> {
    let path = path.as_ref();
    let _guard = LOADING.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(api) = API.get() {
        return if api.path == path {
            Ok(api)
        } else {
            Err(LoadError::AlreadyLoaded {
                loaded: api.path.clone(),
                requested: path.to_path_buf(),
            })
        };
    }
    let api = Api::open(path)?;
    let mut version = 0;
    // SAFETY: the out-parameter points to a live c_int; the call works before birenInit.
    let code = unsafe { (api.birenRuntimeGetVersion)(&mut version) };
    if code != BIREN_SUCCESS || version / 1000 != 1 {
        return Err(LoadError::Incompatible {
            path: path.to_path_buf(),
            version,
        });
    }
    Ok(API.get_or_init(|| api))
}

/// The loaded library, loading it first from [`default_candidates`] if none is loaded.
pub fn load_default() -> Result<&'static Api, LoadError> {
    if let Some(api) = API.get() {
        return Ok(api);
    }
    let mut tried = Vec::new();
    for candidate in default_candidates() {
        match load(&candidate) {
            Ok(api) => return Ok(api),
            // Another thread loaded it meanwhile: use that one.
            Err(LoadError::AlreadyLoaded { .. }) => return Ok(API.get().expect("loaded")),
            Err(e) => tried.push(e),
        }
    }
    Err(LoadError::NotFound { tried })
}
