//! Kernel launches: configuration checks, the table of registered kernels, and argument capture.

use crate::device::{BlockFn, BlocksFn, Dim3, Grid, KernelFn};
use crate::runtime::error::{ErrorCode, Result};
use crate::runtime::lock_order::{Rank, RankedRwLock};
use std::collections::HashMap;
use std::ffi::c_void;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

pub(crate) const MAX_THREADS_PER_BLOCK: u64 = 1024;
pub(crate) const MAX_BLOCK: Dim3 = Dim3::new(1024, 1024, 64);
pub(crate) const MAX_GRID: Dim3 = Dim3::new(i32::MAX as u32, 65535, 65535);
pub(crate) const SHARED_MEM_PER_BLOCK: usize = 48 * 1024;
pub(crate) const MAX_KERNEL_ARGS: usize = 256;
pub(crate) const MAX_ARG_SIZE: usize = 4096;
/// A cooperative grid fits when it has at most this many blocks per compute unit...
pub(crate) const COOPERATIVE_BLOCKS_PER_UNIT: u64 = 32;
/// ... and at most this many threads per compute unit (CUDA's maxThreadsPerMultiProcessor).
pub(crate) const COOPERATIVE_THREADS_PER_UNIT: u64 = 2048;

/// Whether a cooperative grid fits on a device of `units` compute units at once.
pub fn cooperative_fits(grid: Dim3, block: Dim3, units: usize) -> bool {
    let blocks = grid.volume();
    blocks <= COOPERATIVE_BLOCKS_PER_UNIT * units as u64
        && blocks * block.volume() <= COOPERATIVE_THREADS_PER_UNIT * units as u64
}

/// Checks argument sizes given by a caller: at most `MAX_KERNEL_ARGS` of them, each 1 to
/// `MAX_ARG_SIZE` bytes (so their sum cannot overflow and a copy is at most 1 MiB).
pub fn check_arg_sizes(sizes: &[usize]) -> Result<()> {
    if sizes.len() > MAX_KERNEL_ARGS || sizes.iter().any(|&s| s == 0 || s > MAX_ARG_SIZE) {
        return Err(ErrorCode::InvalidValue);
    }
    Ok(())
}

/// Checks a launch configuration against the device limits.
pub fn check_config(grid: Dim3, block: Dim3, shared: usize) -> Result<()> {
    let dims_ok = |d: Dim3, max: Dim3| {
        d.x >= 1 && d.y >= 1 && d.z >= 1 && d.x <= max.x && d.y <= max.y && d.z <= max.z
    };
    if !dims_ok(grid, MAX_GRID)
        || !dims_ok(block, MAX_BLOCK)
        || block.volume() > MAX_THREADS_PER_BLOCK
        || shared > SHARED_MEM_PER_BLOCK
    {
        return Err(ErrorCode::InvalidConfiguration);
    }
    Ok(())
}

/// What `birenKernelRegister` told us about a kernel.
#[derive(Debug)]
pub struct KernelInfo {
    pub name: String,
    pub arg_sizes: Vec<usize>,
    /// The block entry of a `BIREN_KERNEL` kernel (birenKernelRegisterBlock).
    pub block_fn: Option<BlockFn>,
    /// Its range entry (birenKernelRegisterBlocks).
    pub blocks_fn: Option<BlocksFn>,
    /// Its region-form entry (birenKernelRegisterRegions, emitted by biren-cc): runs every
    /// thread of whole blocks without waiting, the body split at its barriers into loops.
    pub region_fn: Option<BlocksFn>,
    /// The per-thread entry when it is not the kernel's own address: a CUDA kernel compiled by
    /// biren-cc is known by its host stub (what `(void *)kernel` gives in the program), whose
    /// parameters are the kernel's, and runs through a generated `void (void **)` entry.
    pub thread_fn: Option<KernelFn>,
}

impl KernelInfo {
    /// What runs one thread of `kernel`: its own per-thread entry, or the kernel itself.
    #[inline]
    pub fn thread_entry(info: Option<&Arc<KernelInfo>>, kernel: KernelFn) -> KernelFn {
        info.and_then(|i| i.thread_fn).unwrap_or(kernel)
    }
}

impl KernelInfo {
    /// Why arguments of `sizes` do not fit the kernel's parameters (their number, or the first
    /// size that differs), or `None` when they do.
    pub fn mismatch(&self, sizes: &[usize]) -> Option<String> {
        let want = &self.arg_sizes;
        if sizes.len() != want.len() {
            return Some(format!(
                "kernel '{}' takes {} argument{} ({}), {} given",
                self.name,
                want.len(),
                if want.len() == 1 { "" } else { "s" },
                sizes_list(want),
                sizes.len()
            ));
        }
        let i = sizes.iter().zip(want).position(|(a, p)| a != p)?;
        Some(format!(
            "kernel '{}': argument {} of {} (args[{i}]) is {} bytes, its parameter {} bytes ({})",
            self.name,
            i + 1,
            want.len(),
            sizes[i],
            want[i],
            sizes_list(want)
        ))
    }

    /// Why the pointer array `args` (CUDA's, of unknown length) cannot hold the kernel's
    /// arguments: it is NULL, or one of its first `arg_sizes.len()` pointers is; `None` otherwise.
    ///
    /// # Safety
    /// `args` is NULL or points to at least as many pointers as the kernel has parameters (what
    /// a launch of it must pass).
    pub unsafe fn missing_argument(&self, args: *const *mut c_void) -> Option<String> {
        let n = self.arg_sizes.len();
        if n == 0 {
            return None;
        }
        if args.is_null() {
            return Some(format!(
                "kernel '{}' takes {n} argument{} ({}) and the argument array is NULL",
                self.name,
                if n == 1 { "" } else { "s" },
                sizes_list(&self.arg_sizes)
            ));
        }
        let i = (0..n).find(|&i| unsafe { (*args.add(i)).is_null() })?;
        Some(format!(
            "kernel '{}': args[{i}] (argument {} of {n}, a parameter of {} bytes) is NULL",
            self.name,
            i + 1,
            self.arg_sizes[i]
        ))
    }
}

/// "8, 8, 4 bytes": a kernel's parameter sizes for a message.
fn sizes_list(sizes: &[usize]) -> String {
    if sizes.is_empty() {
        return "none".into();
    }
    let l: Vec<String> = sizes.iter().map(|s| s.to_string()).collect();
    format!("{} bytes", l.join(", "))
}

/// Hashes a function address: one multiplication (the default SipHash costs more than the rest
/// of a launch's lookup).
#[derive(Default)]
pub struct AddressHasher(u64);

impl std::hash::Hasher for AddressHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ b as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }
    fn write_usize(&mut self, n: usize) {
        self.0 = (n as u64)
            .wrapping_mul(0x9E37_79B9_7F4A_7C15)
            .rotate_left(29);
    }
}

type AddressMap<V> = HashMap<usize, V, std::hash::BuildHasherDefault<AddressHasher>>;

pub struct KernelTable {
    map: RankedRwLock<AddressMap<Arc<KernelInfo>>>,
    /// Region-form entries by kernel, kept apart from `map`: biren-cc's registration and
    /// BIREN_KERNEL's run from two constructors whose order the linker chooses.
    regions: RankedRwLock<AddressMap<BlocksFn>>,
    /// Registrations so far: launches skip the lookup while there are none.
    count: AtomicUsize,
}

impl Default for KernelTable {
    fn default() -> KernelTable {
        KernelTable::new()
    }
}

/// The block entries of `BIREN_KERNEL` kernels. Process-wide: they register from constructors,
/// before birenInit.
pub static BLOCK_KERNELS: KernelTable = KernelTable::new();

impl KernelTable {
    pub const fn new() -> KernelTable {
        KernelTable {
            map: RankedRwLock::new(
                Rank::Leaf,
                HashMap::with_hasher(std::hash::BuildHasherDefault::new()),
            ),
            regions: RankedRwLock::new(
                Rank::Leaf,
                HashMap::with_hasher(std::hash::BuildHasherDefault::new()),
            ),
            count: AtomicUsize::new(0),
        }
    }

    pub fn register(&self, kernel: usize, name: String, arg_sizes: Vec<usize>) -> Result<()> {
        self.register_entry(kernel, name, arg_sizes, None, None, None)
    }

    /// Registers a kernel, with its block and range entries if it has them.
    pub fn register_entry(
        &self,
        kernel: usize,
        name: String,
        arg_sizes: Vec<usize>,
        block_fn: Option<BlockFn>,
        blocks_fn: Option<BlocksFn>,
        thread_fn: Option<KernelFn>,
    ) -> Result<()> {
        check_arg_sizes(&arg_sizes)?;
        let region_fn = self.regions.read().get(&kernel).copied();
        self.map.write().insert(
            kernel,
            Arc::new(KernelInfo {
                name,
                arg_sizes,
                block_fn,
                blocks_fn,
                region_fn,
                thread_fn,
            }),
        );
        self.count.fetch_add(1, Ordering::Release);
        Ok(())
    }

    /// Gives `kernel` its region-form entry, before or after its registration: a launch of a
    /// kernel that has both runs whole blocks through it.
    pub fn register_regions(&self, kernel: usize, region_fn: BlocksFn) {
        self.regions.write().insert(kernel, region_fn);
        let mut map = self.map.write();
        if let Some(info) = map.get(&kernel) {
            let updated = KernelInfo {
                name: info.name.clone(),
                arg_sizes: info.arg_sizes.clone(),
                block_fn: info.block_fn,
                blocks_fn: info.blocks_fn,
                region_fn: Some(region_fn),
                thread_fn: info.thread_fn,
            };
            map.insert(kernel, Arc::new(updated));
        }
    }

    #[inline]
    pub fn get(&self, kernel: usize) -> Option<Arc<KernelInfo>> {
        if self.count.load(Ordering::Acquire) == 0 {
            return None;
        }
        self.map.read().get(&kernel).cloned()
    }
}

/// A kernel's arguments: copied at launch (registered kernels, sized launches) or read from the
/// caller's array when the kernel runs.
pub enum KernelArgs {
    ByReference(*mut *mut c_void),
    Copied {
        ptrs: Box<[*mut c_void]>,
        _values: Box<[u128]>,
    },
}

unsafe impl Send for KernelArgs {}
// Shared between compute units only to read the pointer array, which nobody mutates.
unsafe impl Sync for KernelArgs {}

impl KernelArgs {
    /// Copies the values behind `args[i]` (each `sizes[i]` bytes).
    ///
    /// # Safety
    /// `args` must point to `sizes.len()` pointers, each to `sizes[i]` readable bytes.
    pub unsafe fn copy(args: *const *mut c_void, sizes: &[usize]) -> Result<KernelArgs> {
        if sizes.is_empty() {
            return Ok(KernelArgs::Copied {
                ptrs: Box::new([]),
                _values: Box::new([]),
            });
        }
        check_arg_sizes(sizes)?;
        if args.is_null() {
            return Err(ErrorCode::InvalidValue);
        }
        let words: usize = sizes.iter().map(|s| s.div_ceil(16)).sum();
        let mut values = vec![0u128; words].into_boxed_slice();
        let mut ptrs = Vec::with_capacity(sizes.len());
        let mut at = 0usize;
        for (i, &size) in sizes.iter().enumerate() {
            let src = *args.add(i);
            if src.is_null() {
                return Err(ErrorCode::InvalidValue);
            }
            let dst = values.as_mut_ptr().add(at) as *mut u8;
            std::ptr::copy_nonoverlapping(src as *const u8, dst, size);
            ptrs.push(dst as *mut c_void);
            at += size.div_ceil(16);
        }
        Ok(KernelArgs::Copied {
            ptrs: ptrs.into_boxed_slice(),
            _values: values,
        })
    }

    /// The copied argument values as 8-byte words (race detection looks for pointers in them);
    /// empty for arguments read by reference.
    pub fn words(&self) -> Vec<usize> {
        match self {
            KernelArgs::ByReference(_) => Vec::new(),
            KernelArgs::Copied { _values, .. } => _values
                .iter()
                .flat_map(|v| [*v as u64 as usize, (*v >> 64) as u64 as usize])
                .collect(),
        }
    }

    pub fn as_ptr(&self) -> *mut *mut c_void {
        match self {
            KernelArgs::ByReference(p) => *p,
            KernelArgs::Copied { ptrs, .. } => ptrs.as_ptr() as *mut *mut c_void,
        }
    }
}

/// A launch waiting in a stream.
pub struct Launch {
    pub kernel: KernelFn,
    pub grid: Dim3,
    pub block: Dim3,
    pub shared: usize,
    /// Fiber stack per simulated thread (the device's stack-size limit at launch).
    pub stack_size: usize,
    pub args: KernelArgs,
    pub info: Option<Arc<KernelInfo>>,
    /// birenLaunchCooperativeKernel: the whole grid is resident at once (birenGridSync).
    pub cooperative: bool,
}

impl Launch {
    pub fn grid(&self) -> Grid {
        Grid {
            kernel: KernelInfo::thread_entry(self.info.as_ref(), self.kernel),
            block_fn: self.info.as_ref().and_then(|i| i.block_fn),
            blocks_fn: self.info.as_ref().and_then(|i| i.blocks_fn),
            region_fn: self.info.as_ref().and_then(|i| i.region_fn),
            args: self.args.as_ptr(),
            grid: self.grid,
            block: self.block,
            shared_bytes: self.shared,
            stack_size: self.stack_size,
            cooperative: self.cooperative,
            fixed_order: super::replay::on(),
        }
    }

    pub fn name(&self) -> String {
        match &self.info {
            Some(i) => i.name.clone(),
            None => crate::runtime::diagnostics::caller::symbol_at(self.kernel as usize)
                .unwrap_or_else(|| format!("kernel@{:#x}", self.kernel as usize)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // Two bodies that differ: identical functions may be folded into one address.
    unsafe extern "C" fn k1(a: *mut *mut std::ffi::c_void) {
        std::hint::black_box(a);
    }
    unsafe extern "C" fn k2(a: *mut *mut std::ffi::c_void) {
        std::hint::black_box((a, 2));
    }
    unsafe extern "C" fn region(
        _: *mut crate::device::KernelCtx,
        _: *mut *mut std::ffi::c_void,
        n: u32,
    ) -> u32 {
        n
    }

    #[test]
    fn a_region_entry_attaches_whichever_registration_comes_first() {
        let t = KernelTable::new();
        // Region entry first (biren-cc's constructor ran before BIREN_KERNEL's) ...
        t.register_regions(k1 as *const () as usize, region);
        assert!(t.get(k1 as *const () as usize).is_none());
        t.register_entry(
            k1 as *const () as usize,
            "k1".into(),
            vec![4],
            None,
            None,
            None,
        )
        .unwrap();
        assert_eq!(
            t.get(k1 as *const () as usize)
                .unwrap()
                .region_fn
                .map(|f| f as usize),
            Some(region as *const () as usize)
        );
        // ... or after; the kernel keeps its name and sizes.
        t.register_entry(
            k2 as *const () as usize,
            "k2".into(),
            vec![8, 4],
            None,
            None,
            None,
        )
        .unwrap();
        assert!(t.get(k2 as *const () as usize).unwrap().region_fn.is_none());
        t.register_regions(k2 as *const () as usize, region);
        let info = t.get(k2 as *const () as usize).unwrap();
        assert_eq!(
            info.region_fn.map(|f| f as usize),
            Some(region as *const () as usize)
        );
        assert_eq!(
            (info.name.as_str(), info.arg_sizes.clone()),
            ("k2", vec![8, 4])
        );
        // A kernel known by its host stub runs through its own per-thread entry.
        t.register_entry(
            k1 as *const () as usize,
            "k1".into(),
            vec![4],
            None,
            None,
            Some(k2),
        )
        .unwrap();
        let info = t.get(k1 as *const () as usize);
        assert_eq!(
            KernelInfo::thread_entry(info.as_ref(), k1) as usize,
            k2 as *const () as usize
        );
        assert_eq!(
            KernelInfo::thread_entry(None, k1) as usize,
            k1 as *const () as usize
        );
        // Registering the kernel again keeps its region entry.
        t.register_entry(
            k2 as *const () as usize,
            "k2".into(),
            vec![8, 4],
            None,
            None,
            None,
        )
        .unwrap();
        assert!(t.get(k2 as *const () as usize).unwrap().region_fn.is_some());
    }

    #[test]
    fn config_limits() {
        let one = Dim3::new(1, 1, 1);
        assert!(check_config(one, Dim3::new(1024, 1, 1), 0).is_ok());
        assert!(check_config(Dim3::new(i32::MAX as u32, 65535, 65535), one, 48 * 1024).is_ok());
        let bad = [
            (Dim3::new(0, 1, 1), one, 0),
            (one, Dim3::new(1, 0, 1), 0),
            (one, Dim3::new(1025, 1, 1), 0),
            (one, Dim3::new(32, 32, 2), 0),
            (one, Dim3::new(1, 1, 65), 0),
            (Dim3::new(1, 65536, 1), one, 0),
            (Dim3::new(1u32 << 31, 1, 1), one, 0),
            (one, one, 48 * 1024 + 1),
        ];
        for (g, b, s) in bad {
            assert_eq!(
                check_config(g, b, s),
                Err(ErrorCode::InvalidConfiguration),
                "{g:?} {b:?} {s}"
            );
        }
    }

    #[test]
    fn copies_argument_values() {
        let mut a: i32 = 5;
        let mut b: f64 = 2.5;
        let args = [
            &mut a as *mut i32 as *mut c_void,
            &mut b as *mut f64 as *mut c_void,
        ];
        let c = unsafe { KernelArgs::copy(args.as_ptr(), &[4, 8]).unwrap() };
        a = 0;
        b = 0.0;
        let p = c.as_ptr();
        unsafe {
            assert_eq!(*(*p as *const i32), 5);
            assert_eq!(*(*p.add(1) as *const f64), 2.5);
        }
        let _ = (a, b);
        let nulls = [std::ptr::null_mut::<c_void>()];
        assert!(unsafe { KernelArgs::copy(nulls.as_ptr(), &[4]) }.is_err());
    }

    #[test]
    fn a_signature_names_the_first_mismatch() {
        let k = KernelInfo {
            name: "vadd".into(),
            arg_sizes: vec![8, 8, 4],
            block_fn: None,
            blocks_fn: None,
            region_fn: None,
            thread_fn: None,
        };
        assert_eq!(k.mismatch(&[8, 8, 4]), None);
        assert_eq!(
            k.mismatch(&[8, 8]).unwrap(),
            "kernel 'vadd' takes 3 arguments (8, 8, 4 bytes), 2 given"
        );
        assert_eq!(
            k.mismatch(&[8, 8, 8]).unwrap(),
            "kernel 'vadd': argument 3 of 3 (args[2]) is 8 bytes, its parameter 4 bytes (8, 8, 4 bytes)"
        );
        let (a, b) = (1u64, 2u64);
        let full = [
            &a as *const u64 as *mut c_void,
            &b as *const u64 as *mut c_void,
            std::ptr::null_mut(),
        ];
        let m = unsafe { k.missing_argument(full.as_ptr()) }.unwrap();
        assert!(
            m.contains("args[2] (argument 3 of 3, a parameter of 4 bytes) is NULL"),
            "{m}"
        );
        assert!(unsafe { k.missing_argument(std::ptr::null()) }
            .unwrap()
            .contains("array is NULL"));
    }

    #[test]
    fn register_checks_sizes() {
        let t = KernelTable::default();
        assert!(t.register(1, "k".into(), vec![4, 8]).is_ok());
        assert_eq!(t.get(1).unwrap().arg_sizes, vec![4, 8]);
        assert_eq!(
            t.register(2, "k".into(), vec![0]),
            Err(ErrorCode::InvalidValue)
        );
        assert!(t.get(3).is_none());
    }
}
