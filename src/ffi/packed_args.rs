//! The driver-style packed form of kernel arguments (`birenKernelNodeParams.extra`, CUDA's
//! `extra` with `CU_LAUNCH_PARAM_*`): a list of (key, value) pairs ended by
//! `BIREN_LAUNCH_PARAM_END`, where `BIREN_LAUNCH_PARAM_BUFFER_POINTER` gives a buffer holding
//! every argument and `BIREN_LAUNCH_PARAM_BUFFER_SIZE` a pointer to its size in bytes.
//!
//! The buffer's layout needs the kernel's argument sizes (a registered or BIREN_KERNEL kernel):
//! each argument at the next offset that is a multiple of its alignment, which is taken as the
//! largest power of two, at most 16, that divides its size (1, 2, 4, 8 and 16-byte scalars and
//! vectors, pointers, and structs whose size is a multiple of their alignment as C requires).

use crate::runtime::diagnostics;
use crate::runtime::error::{ErrorCode, Result};
use std::ffi::c_void;

/// `BIREN_LAUNCH_PARAM_END` (CUDA's `CU_LAUNCH_PARAM_END`).
pub(crate) const PARAM_END: usize = 0;
/// `BIREN_LAUNCH_PARAM_BUFFER_POINTER` (CUDA's `CU_LAUNCH_PARAM_BUFFER_POINTER`).
pub(crate) const PARAM_BUFFER_POINTER: usize = 1;
/// `BIREN_LAUNCH_PARAM_BUFFER_SIZE` (CUDA's `CU_LAUNCH_PARAM_BUFFER_SIZE`).
pub(crate) const PARAM_BUFFER_SIZE: usize = 2;

/// The alignment of an argument of `size` bytes in the packed buffer.
pub fn alignment(size: usize) -> usize {
    if size == 0 {
        1
    } else {
        (1usize << size.trailing_zeros()).min(16)
    }
}

/// The offsets of arguments of `sizes` in the packed buffer, the end of the last one, and the
/// buffer's size once padded to the largest alignment (a C struct of the arguments).
pub fn layout(sizes: &[usize]) -> (Vec<usize>, usize, usize) {
    let mut at = 0usize;
    let mut max_align = 1;
    let offsets = sizes
        .iter()
        .map(|&s| {
            let a = alignment(s);
            max_align = max_align.max(a);
            at = at.next_multiple_of(a);
            let o = at;
            at += s;
            o
        })
        .collect();
    (offsets, at, at.next_multiple_of(max_align))
}

/// Reads the `extra` list and returns one pointer per argument into the user's buffer (the
/// form `kernelParams` has), for a kernel whose arguments have `sizes`. INVALID_VALUE, with a
/// validator finding, for an unknown key, a key given twice, a list without END after its
/// pairs, a NULL size pointer, a size without a buffer, or a size that does not match the
/// layout. Reads at most five entries of `extra` (two pairs and END).
///
/// # Safety
/// `extra` must point to a list as described, each value readable as stated.
pub unsafe fn unpack(
    extra: *const *mut c_void,
    sizes: &[usize],
    call: &str,
) -> Result<Vec<*mut c_void>> {
    let bad = |why: String| {
        diagnostics::finding(call, &format!("extra: {why}"));
        Err(ErrorCode::InvalidValue)
    };
    let (mut buffer, mut size): (Option<*mut c_void>, Option<usize>) = (None, None);
    let mut i = 0;
    loop {
        if i == 4 {
            // Two pairs read: only END may follow.
            if *extra.add(i) as usize != PARAM_END {
                return bad(
                    "no BIREN_LAUNCH_PARAM_END after the buffer pointer and size (each key may appear once)"
                        .into(),
                );
            }
            break;
        }
        let key = *extra.add(i) as usize;
        match key {
            PARAM_END => break,
            PARAM_BUFFER_POINTER if buffer.is_none() => buffer = Some(*extra.add(i + 1)),
            PARAM_BUFFER_SIZE if size.is_none() => {
                let p = *extra.add(i + 1) as *const usize;
                if p.is_null() {
                    return bad("the value of BIREN_LAUNCH_PARAM_BUFFER_SIZE (a pointer to a size_t) is NULL".into());
                }
                size = Some(p.read_unaligned());
            }
            PARAM_BUFFER_POINTER | PARAM_BUFFER_SIZE => {
                return bad(format!("key {key:#x} is given twice"));
            }
            _ => {
                return bad(format!(
                    "unknown key {key:#x} at entry {i} (BIREN_LAUNCH_PARAM_BUFFER_POINTER, \
                     BIREN_LAUNCH_PARAM_BUFFER_SIZE or BIREN_LAUNCH_PARAM_END expected; a list without END?)"
                ));
            }
        }
        i += 2;
    }
    // As in CUDA: a buffer pointer without a size has no effect; a nonzero size needs a buffer.
    let (buffer, size) = match (buffer, size) {
        (Some(b), Some(s)) => (b, s),
        (None, Some(s)) if s != 0 => {
            return bad(format!(
                "BIREN_LAUNCH_PARAM_BUFFER_SIZE is {s} without BIREN_LAUNCH_PARAM_BUFFER_POINTER"
            ));
        }
        _ => (std::ptr::null_mut(), 0),
    };
    let (offsets, end, padded) = layout(sizes);
    if size < end || size > padded {
        return bad(format!(
            "the buffer is {size} bytes; the kernel's {} arguments of sizes {sizes:?} take {end} bytes \
             (each at a multiple of its alignment){}",
            sizes.len(),
            if padded != end {
                format!(", {padded} with the trailing padding of a struct")
            } else {
                String::new()
            }
        ));
    }
    if size > 0 && buffer.is_null() {
        return bad("the value of BIREN_LAUNCH_PARAM_BUFFER_POINTER is NULL".into());
    }
    Ok(offsets
        .iter()
        .map(|&o| (buffer as *mut u8).add(o) as *mut c_void)
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout_is_that_of_a_c_struct_of_the_arguments() {
        // (int*, int, double): 0, 8, 16; end 24.
        assert_eq!(layout(&[8, 4, 8]), (vec![0, 8, 16], 24, 24));
        // (char, int, short): 0, 4, 8; end 10, padded 12.
        assert_eq!(layout(&[1, 4, 2]), (vec![0, 4, 8], 10, 12));
        // (float3 = 12 bytes, align 4; double2 = 16, align 16).
        assert_eq!(layout(&[12, 16]), (vec![0, 16], 32, 32));
        assert_eq!(layout(&[]), (vec![], 0, 0));
        assert_eq!(alignment(24), 8);
        assert_eq!(alignment(3), 1);
        assert_eq!(alignment(64), 16);
    }

    fn list(entries: &[usize]) -> Vec<*mut c_void> {
        entries.iter().map(|&e| e as *mut c_void).collect()
    }

    #[test]
    fn malformed_lists_are_refused() {
        let mut buf = [0u8; 16];
        let size: usize = 16;
        let b = buf.as_mut_ptr() as usize;
        let s = &size as *const usize as usize;
        let ok = list(&[1, b, 2, s, 0]);
        let p = unsafe { unpack(ok.as_ptr(), &[8, 8], "t") }.unwrap();
        assert_eq!(p[1] as usize - p[0] as usize, 8);
        // Size first, then pointer: the same.
        let ok2 = list(&[2, s, 1, b, 0]);
        assert!(unsafe { unpack(ok2.as_ptr(), &[8, 8], "t") }.is_ok());
        let cases: &[&[usize]] = &[
            &[1, b, 2, s, 7], // no END after two pairs
            &[1, b, 1, b, 0], // key twice
            &[9, 0, 0],       // unknown key
            &[1, b, 2, 0, 0], // NULL size pointer
            &[2, s, 0],       // size without buffer
        ];
        for c in cases {
            let l = list(c);
            assert_eq!(
                unsafe { unpack(l.as_ptr(), &[8, 8], "t") }.err(),
                Some(ErrorCode::InvalidValue),
                "{c:?}"
            );
        }
        // Size mismatch with the layout (12 bytes for two 8-byte arguments).
        let small: usize = 12;
        let l = list(&[1, b, 2, &small as *const usize as usize, 0]);
        assert_eq!(
            unsafe { unpack(l.as_ptr(), &[8, 8], "t") }.err(),
            Some(ErrorCode::InvalidValue)
        );
        // No arguments: an empty list or a zero size is fine.
        let empty = list(&[0]);
        assert!(unsafe { unpack(empty.as_ptr(), &[], "t") }
            .unwrap()
            .is_empty());
    }
}
