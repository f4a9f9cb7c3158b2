//! The parameters of a 3-D copy (CUDA's cudaMemcpy3DParms, pitched pointers only): one parser
//! for birenMemcpy3D / birenMemcpy3DAsync and birenGraphAddMemcpyNode, with CUDA's codes.

use crate::runtime::diagnostics;
use crate::runtime::error::{ErrorCode, Result};
use crate::runtime::exec::strided::{Side, Strided};
use crate::runtime::Runtime;

/// One side of a 3-D copy as the parameters give it: a pitched pointer (`ptr`, `pitch` bytes per
/// row, `ysize` rows per slice) and a position in it (`x` bytes, `y` rows, `z` slices).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PitchedAt {
    pub ptr: usize,
    pub pitch: usize,
    pub ysize: usize,
    pub x: usize,
    pub y: usize,
    pub z: usize,
}

/// The size of a 3-D copy: `width` bytes, `height` rows, `depth` slices.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Extent3 {
    pub width: usize,
    pub height: usize,
    pub depth: usize,
}

impl Runtime {
    /// Checks the 3-D copy of `extent` from `src` to `dst` in direction `kind` and plans it;
    /// `None` for a zero extent (nothing to copy, nothing else checked). In order:
    /// `InvalidMemcpyDirection` for a kind that is no birenMemcpyKind; `InvalidPitchValue` for a
    /// pitch over memPitch or a row (x + width) over its pitch; `InvalidValue` for rows that
    /// would run into the next slice (y + height > ysize, when depth > 1 or z > 0), a NULL
    /// pointer or a position that overflows; then every row of both sides as `plan_strided`.
    pub fn plan_copy3d(
        &self,
        dst: PitchedAt,
        src: PitchedAt,
        extent: Extent3,
        kind: i64,
        call: &str,
    ) -> Result<Option<Strided>> {
        if !(0..=4).contains(&kind) {
            diagnostics::finding(
                call,
                &format!("kind={kind} is not a birenMemcpyKind value (0..4)"),
            );
            return Err(ErrorCode::InvalidMemcpyDirection);
        }
        let Extent3 {
            width,
            height,
            depth,
        } = extent;
        if width == 0 || height == 0 || depth == 0 {
            return Ok(None);
        }
        let d = copy3d_side(&dst, extent, call, "dstPtr")?;
        let s = copy3d_side(&src, extent, call, "srcPtr")?;
        self.plan_strided(d, Some(s), 0, width, height, depth, kind, call)
    }

    /// As `plan_copy3d`, where either side may be an accelerator array's, already placed and
    /// checked against the array's extent (`array_dst`, `array_src`; the extent's width then in
    /// bytes).
    #[allow(clippy::too_many_arguments)]
    pub fn plan_copy3d_arrays(
        &self,
        dst: PitchedAt,
        src: PitchedAt,
        array_dst: Option<Side>,
        array_src: Option<Side>,
        extent: Extent3,
        kind: i64,
        call: &str,
    ) -> Result<Option<Strided>> {
        if array_dst.is_none() && array_src.is_none() {
            return self.plan_copy3d(dst, src, extent, kind, call);
        }
        if !(0..=4).contains(&kind) {
            diagnostics::finding(
                call,
                &format!("kind={kind} is not a birenMemcpyKind value (0..4)"),
            );
            return Err(ErrorCode::InvalidMemcpyDirection);
        }
        if extent.width == 0 || extent.height == 0 || extent.depth == 0 {
            return Ok(None);
        }
        let d = match array_dst {
            Some(d) => d,
            None => copy3d_side(&dst, extent, call, "dstPtr")?,
        };
        let s = match array_src {
            Some(s) => s,
            None => copy3d_side(&src, extent, call, "srcPtr")?,
        };
        self.plan_strided(
            d,
            Some(s),
            0,
            extent.width,
            extent.height,
            extent.depth,
            kind,
            call,
        )
    }
}

/// Where a side's box starts, its pitch and slice, checked as `plan_copy3d` says.
fn copy3d_side(p: &PitchedAt, e: Extent3, call: &str, arg: &str) -> Result<Side> {
    let bad = |why: String| {
        diagnostics::finding(call, &format!("{arg}: {why}"));
        Err(ErrorCode::InvalidValue)
    };
    if p.pitch > crate::runtime::caps::MAX_PITCH
        || p.x.checked_add(e.width).is_none_or(|end| end > p.pitch)
    {
        diagnostics::finding(
            call,
            &format!(
                "{arg}: pos.x={} + extent.width={} is over the pitch {} (or the pitch over memPitch)",
                p.x, e.width, p.pitch
            ),
        );
        return Err(ErrorCode::InvalidPitchValue);
    }
    let Some(slice) = p.pitch.checked_mul(p.ysize) else {
        return bad(format!("pitch {} x ysize {} overflows", p.pitch, p.ysize));
    };
    if (e.depth > 1 || p.z > 0) && p.y.checked_add(e.height).is_none_or(|end| end > p.ysize) {
        return bad(format!(
            "pos.y={} + extent.height={} is over ysize={}: rows would run into the next slice",
            p.y, e.height, p.ysize
        ));
    }
    let offset =
        p.z.checked_mul(slice)
            .and_then(|o| o.checked_add(p.y.checked_mul(p.pitch)?))
            .and_then(|o| o.checked_add(p.x));
    match offset.and_then(|o| p.ptr.checked_add(o)) {
        Some(base) if p.ptr != 0 => Ok(Side {
            base,
            pitch: p.pitch,
            slice,
        }),
        _ => bad("NULL pointer, or the position overflows".into()),
    }
}
