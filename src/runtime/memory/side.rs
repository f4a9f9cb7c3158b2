//! Where the rows of a 2-D or 3-D box lie in memory: the layout that strided copies and fills,
//! graph copy nodes and accelerator arrays share.

/// One side of a strided transfer: `depth` slices `slice` bytes apart, each of `height` rows
/// `pitch` bytes apart, each row `width` bytes (the width is the transfer's).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Side {
    pub base: usize,
    pub pitch: usize,
    pub slice: usize,
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
    pub(crate) fn span(&self, width: usize, height: usize, depth: usize) -> Option<usize> {
        let last_slice = (depth - 1).checked_mul(self.slice)?;
        let last_row = (height - 1).checked_mul(self.pitch)?;
        let span = last_slice.checked_add(last_row)?.checked_add(width)?;
        self.base.checked_add(span)?;
        Some(span)
    }
}
