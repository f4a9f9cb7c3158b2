//! 2D and 3D copies and fills (birenMemcpy2D/3D, birenMemset2D/3D): the checks made before
//! anything is enqueued — every row of both sides inside its buffer — and the row loop a copy
//! engine runs.

use crate::runtime::error::{ErrorCode, Result};
use crate::runtime::exec::copy::{DEFAULT, HOST_TO_HOST};
use crate::runtime::exec::executor::{ENGINE_FROM_DEVICE, ENGINE_TO_DEVICE};
use crate::runtime::Runtime;

/// One side of a strided transfer: `depth` slices `slice` bytes apart, each of `height` rows
/// `pitch` bytes apart, each row `width` bytes (the width is the transfer's).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Side {
    pub base: usize,
    pub pitch: usize,
    pub slice: usize,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StridedOp {
    /// Copy from `src`.
    Copy(Side),
    /// Fill with a byte.
    Fill(u8),
}

/// A validated 2D/3D copy or fill.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Strided {
    pub dst: Side,
    pub op: StridedOp,
    pub width: usize,
    pub height: usize,
    pub depth: usize,
    pub engine: usize,
}

impl Side {
    /// Where each of the `height` rows of each of the `depth` slices starts, in order: the row
    /// loop of every strided copy and fill.
    pub fn rows(self, height: usize, depth: usize) -> impl Iterator<Item = usize> {
        (0..depth).flat_map(move |z| {
            (0..height).map(move |y| self.base + z * self.slice + y * self.pitch)
        })
    }

    /// Bytes from the first row's start to the last row's end; None on overflow.
    fn span(&self, width: usize, height: usize, depth: usize) -> Option<usize> {
        let last_slice = (depth - 1).checked_mul(self.slice)?;
        let last_row = (height - 1).checked_mul(self.pitch)?;
        let span = last_slice.checked_add(last_row)?.checked_add(width)?;
        self.base.checked_add(span)?;
        Some(span)
    }
}

impl Strided {
    /// Bytes moved or written.
    pub fn bytes(&self) -> usize {
        self.width * self.height * self.depth
    }

    /// Runs the rows, in order.
    ///
    /// # Safety
    /// Every row of both sides was validated (`Runtime::plan_strided`) and its memory is alive.
    pub unsafe fn run(&self) {
        let rows = self.dst.rows(self.height, self.depth);
        match self.op {
            StridedOp::Copy(s) => {
                for (d, from) in rows.zip(s.rows(self.height, self.depth)) {
                    std::ptr::copy(from as *const u8, d as *mut u8, self.width);
                }
            }
            StridedOp::Fill(v) => {
                for d in rows {
                    std::ptr::write_bytes(d as *mut u8, v, self.width);
                }
            }
        }
    }

    pub fn describe(&self) -> String {
        let what = match self.op {
            StridedOp::Copy(_) => "memcpy",
            StridedOp::Fill(_) => "memset",
        };
        if self.depth > 1 {
            format!("{what}3D {}x{}x{}", self.width, self.height, self.depth)
        } else {
            format!("{what}2D {}x{}", self.width, self.height)
        }
    }
}

impl Runtime {
    /// Checks that every row of `side` lies in memory the side may use: one live device
    /// allocation (`device`), or host memory that does not wrap and stays inside the page-locked
    /// or registered buffer it starts in.
    #[allow(clippy::too_many_arguments)]
    fn strided_side(
        &self,
        side: &Side,
        width: usize,
        height: usize,
        depth: usize,
        device: bool,
        call: &str,
        arg: &str,
    ) -> Result<()> {
        if side.base == 0 {
            crate::runtime::diagnostics::finding(call, &format!("{arg} is NULL"));
            return Err(ErrorCode::InvalidValue);
        }
        let Some(span) = side.span(width, height, depth) else {
            crate::runtime::diagnostics::finding(
                call,
                &format!("{arg}: the rows' extent overflows the address space"),
            );
            return Err(ErrorCode::InvalidValue);
        };
        if device {
            self.check_device_span(side.base, span, call, arg)
        } else {
            self.check_host_span(side.base, span, call, arg)
        }
    }

    /// Validates a 2D/3D copy (`src` is Some) or fill (`value`); `None` when there is nothing
    /// to do (a zero width, height or depth). Fills are of device memory.
    #[allow(clippy::too_many_arguments)]
    pub fn plan_strided(
        &self,
        dst: Side,
        src: Option<Side>,
        value: u8,
        width: usize,
        height: usize,
        depth: usize,
        kind: i64,
        call: &str,
    ) -> Result<Option<Strided>> {
        if src.is_some() && !(HOST_TO_HOST..=DEFAULT).contains(&kind) {
            crate::runtime::diagnostics::finding(
                call,
                &format!("kind={kind} is not a birenMemcpyKind value (0..4)"),
            );
            return Err(ErrorCode::InvalidMemcpyDirection);
        }
        if width == 0 || height == 0 || depth == 0 {
            return Ok(None);
        }
        let Some(src) = src else {
            self.strided_side(&dst, width, height, depth, true, call, "devPtr")?;
            return Ok(Some(Strided {
                dst,
                op: StridedOp::Fill(value),
                width,
                height,
                depth,
                engine: ENGINE_FROM_DEVICE,
            }));
        };
        let (dst_device, src_device) = self.device_sides(kind, dst.base, src.base);
        self.strided_side(&dst, width, height, depth, dst_device, call, "dst")?;
        self.strided_side(&src, width, height, depth, src_device, call, "src")?;
        Ok(Some(Strided {
            dst,
            op: StridedOp::Copy(src),
            width,
            height,
            depth,
            engine: if src_device {
                ENGINE_FROM_DEVICE
            } else {
                ENGINE_TO_DEVICE
            },
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spans_and_rows() {
        let s = Side {
            base: 1000,
            pitch: 64,
            slice: 64 * 4,
        };
        assert_eq!(s.span(10, 1, 1), Some(10));
        assert_eq!(s.span(10, 4, 1), Some(3 * 64 + 10));
        assert_eq!(s.span(10, 4, 2), Some(256 + 3 * 64 + 10));
        let huge = Side {
            base: usize::MAX - 100,
            pitch: 64,
            slice: 0,
        };
        assert_eq!(huge.span(10, 4, 1), None);
        let mut src = vec![0u8; 64 * 4];
        for (i, b) in src.iter_mut().enumerate() {
            *b = i as u8;
        }
        let mut dst = vec![0xAAu8; 16 * 4];
        let t = Strided {
            dst: Side {
                base: dst.as_mut_ptr() as usize,
                pitch: 16,
                slice: 0,
            },
            op: StridedOp::Copy(Side {
                base: src.as_ptr() as usize + 1,
                pitch: 64,
                slice: 0,
            }),
            width: 8,
            height: 4,
            depth: 1,
            engine: 0,
        };
        unsafe { t.run() };
        for y in 0..4 {
            for x in 0..16 {
                let expect = if x < 8 { (y * 64 + 1 + x) as u8 } else { 0xAA };
                assert_eq!(dst[y * 16 + x], expect);
            }
        }
        assert_eq!(t.bytes(), 32);
    }
}
