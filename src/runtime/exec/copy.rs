//! Checks on every copy and fill, made before anything is enqueued or written.

use crate::runtime::error::{ErrorCode, Result};
use crate::runtime::exec::executor::{ENGINE_FROM_DEVICE, ENGINE_TO_DEVICE};
use crate::runtime::Runtime;

/// `birenMemcpyKind` values.
pub(crate) const HOST_TO_HOST: i64 = 0;
pub(crate) const HOST_TO_DEVICE: i64 = 1;
pub(crate) const DEVICE_TO_HOST: i64 = 2;
pub(crate) const DEVICE_TO_DEVICE: i64 = 3;
pub(crate) const DEFAULT: i64 = 4;

/// A validated copy.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CopyPlan {
    pub dst: usize,
    pub src: usize,
    pub len: usize,
    pub engine: usize,
    pub dst_device: bool,
    pub src_device: bool,
}

impl Runtime {
    /// A host range: not NULL, no wrap-around, and inside the page-locked allocation or
    /// registered range it starts in, if it starts in one (`OutOfBounds` otherwise).
    pub(crate) fn check_host_span(
        &self,
        p: usize,
        len: usize,
        call: &str,
        arg: &str,
    ) -> Result<()> {
        if p == 0 || p.checked_add(len).is_none() {
            return Err(ErrorCode::InvalidValue);
        }
        if let Some(r) = self.host_memory.find(p) {
            if p + len > r.base + r.size {
                crate::runtime::diagnostics::finding(
                    call,
                    &format!(
                        "{arg}={p:#x}: {len} bytes from offset {} run {} bytes past the end of the {}-byte page-locked or registered host buffer at {:#x}",
                        p - r.base,
                        p - r.base + len - r.size,
                        r.size,
                        r.base
                    ),
                );
                return Err(ErrorCode::OutOfBounds);
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
                        crate::runtime::exec::deadlock::stream_name(f.stream)
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
        let (dst_device, src_device) = match kind {
            HOST_TO_HOST => (false, false),
            HOST_TO_DEVICE => (true, false),
            DEVICE_TO_HOST => (false, true),
            DEVICE_TO_DEVICE => (true, true),
            _ => (
                self.device_region(dst).is_some(),
                self.device_region(src).is_some(),
            ),
        };
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
