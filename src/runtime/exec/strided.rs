//! 2D and 3D copies and fills (birenMemcpy2D/3D, birenMemset2D/3D) as plain values, and the row
//! loop a copy engine runs. The checks made before anything is enqueued (every row of both sides
//! inside its buffer) are `Runtime::plan_strided`, in `runtime/copies.rs`.

pub use crate::runtime::memory::side::Side;

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
