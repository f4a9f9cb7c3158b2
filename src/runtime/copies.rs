//! The checks on every copy and fill that need the whole runtime (every device's memory, the
//! page-locked and registered host buffers), made before anything is enqueued or written. The
//! plain descriptions they check and return live in `exec::copy` and `exec::strided`.

use crate::runtime::error::{ErrorCode, Result};
use crate::runtime::exec::copy::{
    CopyPlan, DEFAULT, DEVICE_TO_DEVICE, DEVICE_TO_HOST, ENGINE_FROM_DEVICE, ENGINE_TO_DEVICE,
    HOST_TO_DEVICE, HOST_TO_HOST,
};
use crate::runtime::exec::strided::{Side, Strided, StridedOp};
use crate::runtime::Runtime;

impl Runtime {
    /// Which sides of a copy in direction `kind` from `src` to `dst` are device memory: (dst,
    /// src); for birenMemcpyDefault, where the pointers lie.
    pub fn device_sides(&self, kind: i64, dst: usize, src: usize) -> (bool, bool) {
        match kind {
            HOST_TO_HOST => (false, false),
            HOST_TO_DEVICE => (true, false),
            DEVICE_TO_HOST => (false, true),
            DEVICE_TO_DEVICE => (true, true),
            _ => (
                self.device_region(dst).is_some(),
                self.device_region(src).is_some(),
            ),
        }
    }

    /// A host range of a strided copy or fill: not NULL, no wrap-around, and inside any known
    /// allocation it touches (`OutOfBounds` otherwise), as for every copy.
    pub(crate) fn check_host_span(
        &self,
        p: usize,
        len: usize,
        call: &str,
        arg: &str,
    ) -> Result<()> {
        if p == 0 {
            return Err(ErrorCode::InvalidValue);
        }
        self.host_range(p, len, call, arg)
    }

    /// A side of a copy that `kind` calls host memory. Its range must not overflow, and if it
    /// touches a known allocation — device memory (a HostToHost copy into a device buffer) or
    /// page-locked host memory — it must lie inside it, whatever the kind says.
    fn host_range(&self, p: usize, len: usize, call: &str, arg: &str) -> Result<()> {
        if p.checked_add(len).is_none() {
            crate::runtime::diagnostics::finding(
                call,
                &format!("{arg}={p:#x}: range of {len} bytes overflows"),
            );
            return Err(ErrorCode::InvalidValue);
        }
        let tables = self
            .devices
            .iter()
            .map(|d| (&d.exec.memory, "device allocation"))
            .chain(std::iter::once((
                &self.host_memory,
                "page-locked or registered host buffer",
            )));
        for (table, what) in tables {
            if let Some(Err(e)) = table.touches(p, len) {
                let why = match table.find(p) {
                    Some(r) => format!(
                        "{arg}={p:#x}: {len} bytes from offset {} run {} bytes past the end of the {}-byte {what} at {:#x}",
                        p - r.base,
                        (p - r.base).saturating_add(len) - r.size,
                        r.size,
                        r.base
                    ),
                    None => format!("{arg}={p:#x}: {len} bytes run into a {what} they do not start in"),
                };
                crate::runtime::diagnostics::finding(call, &why);
                return Err(e);
            }
        }
        Ok(())
    }

    /// A device range inside one live allocation or symbol (findings name what is wrong).
    pub(crate) fn check_device_span(
        &self,
        p: usize,
        len: usize,
        call: &str,
        arg: &str,
    ) -> Result<()> {
        let r = self.check_device_range(p, len);
        if let Err(e) = r {
            let why = match e {
                ErrorCode::OutOfBounds => {
                    let reg = self
                        .device_region(p)
                        .map(|(_, r)| r)
                        .or_else(|| crate::runtime::symbols::find(p));
                    match reg {
                        Some(r) => format!(
                            "{arg}={p:#x}: {len} bytes from offset {} run {} bytes past the end of the {}-byte allocation at {:#x}",
                            p - r.base,
                            (p - r.base).saturating_add(len) - r.size,
                            r.size,
                            r.base
                        ),
                        None => format!("{arg}={p:#x}: range of {len} bytes overflows"),
                    }
                }
                _ => match self.pools.freed_range(p) {
                    Some((base, f)) => format!(
                        "{arg}={p:#x} lies in the {}-byte allocation at {base:#x} that birenFreeAsync freed in {}: a use after the free in stream order",
                        f.size,
                        crate::runtime::ids::stream_name(f.stream)
                    ),
                    None => format!("{arg}={p:#x} is not inside any live device allocation (host pointer, freed, or never allocated)"),
                },
            };
            crate::runtime::diagnostics::finding(call, &why);
        }
        r
    }

    /// Validates a copy of `len` bytes; `None` when there is nothing to do (`len == 0`).
    pub fn plan_copy(
        &self,
        dst: usize,
        src: usize,
        len: usize,
        kind: i64,
        call: &str,
    ) -> Result<Option<CopyPlan>> {
        if !(HOST_TO_HOST..=DEFAULT).contains(&kind) {
            crate::runtime::diagnostics::finding(
                call,
                &format!("kind={kind} is not a birenMemcpyKind value (0..4)"),
            );
            return Err(ErrorCode::InvalidMemcpyDirection);
        }
        if len == 0 {
            return Ok(None);
        }
        if dst == 0 || src == 0 {
            crate::runtime::diagnostics::finding(
                call,
                &format!(
                    "{} is NULL with count={len}",
                    if dst == 0 { "dst" } else { "src" }
                ),
            );
            return Err(ErrorCode::InvalidValue);
        }
        let (dst_device, src_device) = self.device_sides(kind, dst, src);
        if dst_device {
            self.check_device_span(dst, len, call, "dst")?;
        } else {
            self.check_host_span(dst, len, call, "dst")?;
        }
        if src_device {
            self.check_device_span(src, len, call, "src")?;
        } else {
            self.check_host_span(src, len, call, "src")?;
        }
        let engine = if src_device {
            ENGINE_FROM_DEVICE
        } else {
            ENGINE_TO_DEVICE
        };
        Ok(Some(CopyPlan {
            dst,
            src,
            len,
            engine,
            dst_device,
            src_device,
        }))
    }

    /// Validates a fill of device memory; `None` when `len == 0`.
    pub fn plan_fill(&self, dst: usize, len: usize, call: &str) -> Result<Option<()>> {
        if len == 0 {
            return Ok(None);
        }
        if dst == 0 {
            crate::runtime::diagnostics::finding(call, &format!("devPtr is NULL with count={len}"));
            return Err(ErrorCode::InvalidValue);
        }
        self.check_device_span(dst, len, call, "devPtr")?;
        Ok(Some(()))
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
