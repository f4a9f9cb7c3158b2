//! Graphs (CUDA's cudaGraph* calls, cuda -> biren): building, querying, instantiating,
//! launching, updating and destroying task graphs.

use super::boundary::{ffi_call, handle, out};
use super::device_of;
use super::graph_types::*;
use super::memcpy3d_types::birenMemcpy3DParms;
use super::types::*;
use crate::runtime::copy3d::Extent3;
use crate::runtime::diagnostics::{self, caller};
use crate::runtime::error::{ErrorCode, Result};
use crate::runtime::exec::context::graph_launch;
use crate::runtime::exec::executor::ENGINE_TO_DEVICE;
use crate::runtime::exec::graph::exec::{GraphExec, UPDATE_SUCCESS};
use crate::runtime::exec::graph::run::GraphLaunch;
use crate::runtime::exec::graph::{
    capture, tables, CopyNode, FillNode, GraphCore, KernelNode, NodeKind,
};
use crate::runtime::exec::launch::KernelArgs;
use crate::runtime::exec::stream::{Dep, StreamPoint};
use crate::runtime::exec::strided::StridedOp;
use crate::runtime::exec::work::HostCall;
use crate::runtime::{self, Runtime};
use std::ffi::{c_char, c_uint, c_ulonglong, c_void, CStr};
use std::sync::Arc;

fn graph_of(g: birenGraph_t) -> Result<Arc<GraphCore>> {
    runtime::get()?;
    tables()
        .graphs
        .get(handle(g))
        .ok_or(ErrorCode::InvalidHandle)
}

fn exec_of(e: birenGraphExec_t) -> Result<Arc<GraphExec>> {
    runtime::get()?;
    tables()
        .execs
        .get(handle(e))
        .ok_or(ErrorCode::InvalidHandle)
}

/// The indices in graph `g` of `n` node handles at `p`: INVALID_VALUE for NULL with n > 0 or a
/// node of another graph, INVALID_HANDLE for a destroyed or forged node.
fn nodes_in(g: &GraphCore, p: *const birenGraphNode_t, n: usize, call: &str) -> Result<Vec<u32>> {
    if n == 0 {
        return Ok(Vec::new());
    }
    if p.is_null() {
        diagnostics::finding(call, &format!("the node array is NULL with a count of {n}"));
        return Err(ErrorCode::InvalidValue);
    }
    let hs = unsafe { std::slice::from_raw_parts(p, n) };
    hs.iter()
        .map(|h| {
            let r = tables().node(handle(*h))?;
            if r.graph != g.id {
                diagnostics::finding(call, &format!("node {:p} belongs to another graph", *h));
                return Err(ErrorCode::InvalidValue);
            }
            Ok(r.index)
        })
        .collect()
}

/// The common part of every birenGraphAdd*Node: checks, then adds `kind()` after the
/// dependencies and writes the new node's handle.
fn add_node(
    pGraphNode: *mut birenGraphNode_t,
    graph: birenGraph_t,
    pDependencies: *const birenGraphNode_t,
    numDependencies: usize,
    call: &str,
    kind: impl FnOnce(&'static Runtime) -> Result<NodeKind>,
) -> Result<()> {
    let rt = runtime::get()?;
    let o = out(pGraphNode)?;
    let g = graph_of(graph)?;
    let deps = nodes_in(&g, pDependencies, numDependencies, call)?;
    if (1..deps.len()).any(|i| deps[..i].contains(&deps[i])) {
        diagnostics::finding(call, "a dependency is listed twice");
        return Err(ErrorCode::InvalidValue);
    }
    let k = kind(rt)?;
    let (h, _) = tables().add_node(&g, k, &deps)?;
    *o = h as usize as birenGraphNode_t;
    Ok(())
}

/// Creates an empty graph and writes it to *pGraph. `flags` must be 0. Pair with
/// birenGraphDestroy. BIREN_ERROR_INVALID_VALUE for NULL pGraph or nonzero flags. Thread-safe.
#[no_mangle]
pub extern "C" fn birenGraphCreate(pGraph: *mut birenGraph_t, flags: c_uint) -> birenError_t {
    ffi_call!("birenGraphCreate"(pGraph, flags) {
        runtime::get()?;
        let o = out(pGraph)?;
        if flags != 0 {
            diagnostics::finding("birenGraphCreate", &format!("flags={flags:#x}: must be 0"));
            return Err(ErrorCode::InvalidValue);
        }
        let (h, _) = tables().insert_graph(Default::default(), caller::user_caller())?;
        *o = h as usize as birenGraph_t;
        Ok(())
    })
}

/// The kernel node `p` describes, with its argument values captured now when their sizes are
/// known (a registered kernel).
fn kernel_node(rt: &Runtime, p: &birenKernelNodeParams, call: &str) -> Result<KernelNode> {
    let Some(k) = p.func else {
        diagnostics::finding(call, "func is NULL");
        return Err(ErrorCode::InvalidValue);
    };
    if !p.extra.is_null() && !p.kernelParams.is_null() {
        diagnostics::finding(
            call,
            "kernelParams and extra are both non-NULL: pass the arguments in one of them",
        );
        return Err(ErrorCode::InvalidValue);
    }
    let shared = p.sharedMemBytes as usize;
    // As a launch's: the device's limits and the kernel's dynamic shared memory limit.
    rt.check_launch_config(k as usize, p.gridDim, p.blockDim, shared, call)?;
    let info = rt.kernel_info(k as usize);
    let args = match &info {
        Some(i) if !p.extra.is_null() => unsafe {
            let call = format!("{call}: kernel '{}'", i.name);
            let ptrs = super::packed_args::unpack(p.extra, &i.arg_sizes, &call)?;
            KernelArgs::copy(ptrs.as_ptr(), &i.arg_sizes)?
        },
        Some(i) => {
            if let Some(why) = unsafe { i.missing_argument(p.kernelParams) } {
                diagnostics::finding(call, &why);
                return Err(ErrorCode::InvalidValue);
            }
            unsafe { KernelArgs::copy(p.kernelParams, &i.arg_sizes)? }
        }
        None if !p.extra.is_null() => {
            diagnostics::finding(
                call,
                &format!(
                    "extra (packed arguments) needs the kernel's argument sizes, and {} is not registered: \
                     register it with birenKernelRegister (or write it with BIREN_KERNEL), or pass kernelParams",
                    diagnostics::caller::symbol_or_address(k as usize)
                ),
            );
            return Err(ErrorCode::InvalidValue);
        }
        None => {
            static ADVISED: std::sync::Mutex<Vec<usize>> = std::sync::Mutex::new(Vec::new());
            let mut seen = ADVISED.lock().unwrap_or_else(|e| e.into_inner());
            if diagnostics::validator_on() && !seen.contains(&(k as usize)) {
                seen.push(k as usize);
                diagnostics::advice(&format!(
                "{} is not registered: the graph node reads its kernelParams by reference at every launch, so they must stay valid \
                 while the graph exists. Register it (birenKernelRegister) to have the values copied when the node is made.",
                diagnostics::caller::symbol_or_address(k as usize)
                ));
            }
            KernelArgs::ByReference(p.kernelParams)
        }
    };
    Ok(KernelNode {
        kernel: k,
        grid: p.gridDim,
        block: p.blockDim,
        shared,
        args,
        info,
    })
}

/// Adds a kernel node to `graph` after the `numDependencies` nodes in `pDependencies` and writes
/// it to *pGraphNode. For a kernel registered with birenKernelRegister the argument values are
/// copied now (the caller may reuse kernelParams at once); for an unregistered kernel,
/// kernelParams and the values it points to are read at every launch and must stay valid.
/// The arguments may instead be packed in one buffer given by `extra` (CUDA's driver form, see
/// birenKernelNodeParams.extra), for a kernel whose argument sizes are known.
/// BIREN_ERROR_INVALID_VALUE for NULL pGraphNode or pNodeParams, a NULL func, both kernelParams
/// and extra non-NULL, extra for an unregistered kernel, a malformed extra list (an unknown or
/// repeated key, no BIREN_LAUNCH_PARAM_END after the pairs, a size that does not match the
/// kernel's argument layout), a NULL kernelParams (without extra) or a NULL kernelParams[i] for a
/// kernel whose signature is known (BIREN_KERNEL, birenKernelRegister: kernelParams carries no
/// length, as in CUDA, so its number of entries cannot be checked; the validator names the
/// kernel and the argument), NULL pDependencies with numDependencies > 0, a dependency listed twice or from another graph;
/// BIREN_ERROR_INVALID_CONFIGURATION as birenLaunchKernel; BIREN_ERROR_INVALID_HANDLE for a
/// destroyed graph or node. Thread-safe (calls on one graph are serialized).
#[no_mangle]
pub extern "C" fn birenGraphAddKernelNode(
    pGraphNode: *mut birenGraphNode_t,
    graph: birenGraph_t,
    pDependencies: *const birenGraphNode_t,
    numDependencies: usize,
    pNodeParams: *const birenKernelNodeParams,
) -> birenError_t {
    ffi_call!("birenGraphAddKernelNode"(pGraphNode, graph, pDependencies, numDependencies, pNodeParams) {
        add_node(pGraphNode, graph, pDependencies, numDependencies, "birenGraphAddKernelNode", |rt| {
            let p = unsafe { pNodeParams.as_ref() }.ok_or(ErrorCode::InvalidValue)?;
            Ok(NodeKind::Kernel(Arc::new(kernel_node(rt, p, "birenGraphAddKernelNode")?)))
        })
    })
}

/// Checks one side of a copy: `len` bytes from `p`, device memory or host memory.
fn side(rt: &Runtime, p: usize, len: usize, device: bool, call: &str, what: &str) -> Result<()> {
    if p == 0 || p.checked_add(len).is_none() {
        diagnostics::finding(call, &format!("{what} is NULL or its range overflows"));
        return Err(ErrorCode::InvalidValue);
    }
    if device {
        rt.check_device_range(p, len).inspect_err(|e| {
            diagnostics::finding(
                call,
                &format!(
                    "{what}={p:#x}, {len} bytes: {}",
                    crate::runtime::error::error_text(e.code())
                ),
            )
        })?;
    }
    Ok(())
}

/// The copy node for a (checked) 3-D copy: checked as birenMemcpy3D checks it
/// (`Runtime::plan_copy3d_arrays`, array sides included); a zero extent makes a node that
/// copies nothing.
fn copy_node(rt: &Runtime, p: &birenMemcpy3DParms, call: &str) -> Result<CopyNode> {
    let (dst, src, extent) = p.parts();
    let kind = p.kind as i64;
    // Arrays: the extent and their positions in texels (see birenMemcpy3D).
    let (dst_array, src_array, width) = super::array::memcpy3d_array_sides(rt, p, call)?;
    let (dst_device, src_device) = rt.device_sides(kind, dst.ptr, src.ptr);
    let (dst_device, src_device) = (
        dst_device || dst_array.is_some(),
        src_device || src_array.is_some(),
    );
    let extent = Extent3 { width, ..extent };
    let planned = rt.plan_copy3d_arrays(dst, src, dst_array, src_array, extent, kind, call)?;
    let Some(t) = planned else {
        // A zero extent copies nothing (a node that does nothing), from pointers that are there.
        let d = dst_array.map_or(dst.ptr, |a| a.base);
        let s = src_array.map_or(src.ptr, |a| a.base);
        if s == 0 || d == 0 {
            diagnostics::finding(call, "srcPtr.ptr or dstPtr.ptr is NULL");
            return Err(ErrorCode::InvalidValue);
        }
        return Ok(CopyNode {
            dst: d,
            src: s,
            width: 0,
            height: 1,
            depth: 1,
            dst_pitch: 0,
            src_pitch: 0,
            dst_slice: 0,
            src_slice: 0,
            engine: ENGINE_TO_DEVICE,
            dst_device,
            src_device,
        });
    };
    let StridedOp::Copy(s) = t.op else {
        unreachable!("biren: plan_copy3d planned a fill");
    };
    Ok(CopyNode {
        dst: t.dst.base,
        src: s.base,
        width: t.width,
        height: t.height,
        depth: t.depth,
        dst_pitch: t.dst.pitch,
        src_pitch: s.pitch,
        dst_slice: t.dst.slice,
        src_slice: s.slice,
        engine: t.engine,
        dst_device,
        src_device,
    })
}

/// Adds a copy node described as by CUDA's cudaMemcpy3DParms (see birenMemcpy3DParms): `extent`
/// (width in bytes, height in rows, depth in slices) from srcPtr at srcPos to dstPtr at dstPos.
/// A side may be an array (srcArray/dstArray, its pointer NULL), as for birenMemcpy3D: the
/// extent and the array's position are then in texels, and the box is checked against the
/// array's extent now; the copy itself runs at each launch.
/// Checked now as birenMemcpy3D checks its arguments, and again at every launch (device memory
/// or an array freed since makes the launch fail with BIREN_ERROR_INVALID_DEVICE_POINTER). Any
/// parameters birenMemcpy3D accepts are accepted (2-D and 3-D boxes at any position; a zero
/// extent makes a node that copies nothing, as birenMemcpy3D copies nothing), and refused with
/// its codes: BIREN_ERROR_INVALID_VALUE for NULL pointers, a side with both an array and a
/// pointer, a box outside an array, arrays of different texel sizes, or rows that would run into
/// the next slice; BIREN_ERROR_INVALID_HANDLE for a freed array;
/// BIREN_ERROR_INVALID_PITCH_VALUE for a row (pos.x + width) over its pitch or a pitch over
/// memPitch; BIREN_ERROR_INVALID_MEMCPY_DIRECTION for an unknown kind or one that makes an array
/// host memory; BIREN_ERROR_INVALID_DEVICE_POINTER / BIREN_ERROR_OUT_OF_BOUNDS for device ranges
/// not inside one live allocation; the dependency errors of birenGraphAddKernelNode.
/// Thread-safe.
#[no_mangle]
pub extern "C" fn birenGraphAddMemcpyNode(
    pGraphNode: *mut birenGraphNode_t,
    graph: birenGraph_t,
    pDependencies: *const birenGraphNode_t,
    numDependencies: usize,
    pCopyParams: *const birenMemcpy3DParms,
) -> birenError_t {
    ffi_call!("birenGraphAddMemcpyNode"(pGraphNode, graph, pDependencies, numDependencies, pCopyParams) {
        add_node(pGraphNode, graph, pDependencies, numDependencies, "birenGraphAddMemcpyNode", |rt| {
            let p = unsafe { pCopyParams.as_ref() }.ok_or(ErrorCode::InvalidValue)?;
            Ok(NodeKind::Memcpy(copy_node(rt, p, "birenGraphAddMemcpyNode")?))
        })
    })
}

/// Sets the parameters of memcpy node `node` (CUDA's cudaGraphMemcpyNodeSetParams) to those of
/// *pNodeParams, checked as birenGraphAddMemcpyNode checks them (arrays included); execs
/// instantiated from the graph before are not affected. On error the node is unchanged.
/// BIREN_ERROR_INVALID_VALUE for NULL pNodeParams or a node that is not a memcpy node, and the
/// parameter errors of birenGraphAddMemcpyNode; BIREN_ERROR_INVALID_HANDLE for a destroyed
/// node. Thread-safe.
#[no_mangle]
pub extern "C" fn birenGraphMemcpyNodeSetParams(
    node: birenGraphNode_t,
    pNodeParams: *const birenMemcpy3DParms,
) -> birenError_t {
    ffi_call!("birenGraphMemcpyNodeSetParams"(node, pNodeParams) {
        let call = "birenGraphMemcpyNodeSetParams";
        let rt = runtime::get()?;
        let r = tables().node(handle(node))?;
        let g = r.owner.upgrade().ok_or(ErrorCode::InvalidHandle)?;
        let p = unsafe { pNodeParams.as_ref() }.ok_or(ErrorCode::InvalidValue)?;
        let c = copy_node(rt, p, call)?;
        let mut body = g.body.lock();
        let n = body.nodes.get_mut(r.index as usize).ok_or(ErrorCode::InvalidHandle)?;
        if !matches!(n.kind, NodeKind::Memcpy(_)) {
            diagnostics::finding(call, "the node is not a memcpy node");
            return Err(ErrorCode::InvalidValue);
        }
        n.kind = NodeKind::Memcpy(c);
        Ok(())
    })
}

/// Sets the parameters of memcpy node `node` (a node of the graph `hGraphExec` was instantiated
/// from) for the exec's later launches (CUDA's cudaGraphExecMemcpyNodeSetParams); launches
/// already made keep the old ones; the graph itself is unchanged. Checked as
/// birenGraphAddMemcpyNode (arrays included). BIREN_ERROR_INVALID_VALUE for NULL pNodeParams,
/// a node of another graph or not a memcpy node, and the parameter errors of
/// birenGraphAddMemcpyNode; BIREN_ERROR_INVALID_HANDLE for a destroyed exec or node.
/// Thread-safe.
#[no_mangle]
pub extern "C" fn birenGraphExecMemcpyNodeSetParams(
    hGraphExec: birenGraphExec_t,
    node: birenGraphNode_t,
    pNodeParams: *const birenMemcpy3DParms,
) -> birenError_t {
    ffi_call!("birenGraphExecMemcpyNodeSetParams"(hGraphExec, node, pNodeParams) {
        let rt = runtime::get()?;
        let e = exec_of(hGraphExec)?;
        let r = tables().node(handle(node))?;
        let p = unsafe { pNodeParams.as_ref() }.ok_or(ErrorCode::InvalidValue)?;
        let c = copy_node(rt, p, "birenGraphExecMemcpyNodeSetParams")?;
        e.set_node(r.graph, r.index, NodeKind::Memcpy(c))
    })
}

/// Adds a node that copies `count` bytes from src to dst (as birenMemcpyAsync would), after the
/// dependencies. Checked now exactly as birenMemcpy (same codes) and again at every launch;
/// count 0 gives BIREN_ERROR_INVALID_VALUE (a node must do something; use an empty node).
/// Thread-safe.
#[no_mangle]
pub extern "C" fn birenGraphAddMemcpyNode1D(
    pGraphNode: *mut birenGraphNode_t,
    graph: birenGraph_t,
    pDependencies: *const birenGraphNode_t,
    numDependencies: usize,
    dst: *mut c_void,
    src: *const c_void,
    count: usize,
    kind: birenMemcpyKind_int,
) -> birenError_t {
    ffi_call!("birenGraphAddMemcpyNode1D"(pGraphNode, graph, pDependencies, numDependencies, dst, src, count, kind) {
        add_node(pGraphNode, graph, pDependencies, numDependencies, "birenGraphAddMemcpyNode1D", |rt| {
            let call = "birenGraphAddMemcpyNode1D";
            let Some(p) = rt.plan_copy(dst as usize, src as usize, count, kind as i64, call)? else {
                diagnostics::finding(call, "count is 0");
                return Err(ErrorCode::InvalidValue);
            };
            Ok(NodeKind::Memcpy(CopyNode {
                dst: p.dst,
                src: p.src,
                width: p.len,
                height: 1,
                depth: 1,
                dst_pitch: p.len,
                src_pitch: p.len,
                dst_slice: p.len,
                src_slice: p.len,
                engine: p.engine,
                dst_device: p.dst_device,
                src_device: p.src_device,
            }))
        })
    })
}

/// Adds a memset node (see birenMemsetParams): `height` rows of `width` elements of
/// `elementSize` bytes set to `value`, rows `pitch` bytes apart, in device memory.
/// BIREN_ERROR_INVALID_VALUE for NULL pointers, an elementSize other than 1, 2 or 4, a zero
/// width or height, a pitch smaller than a row when height > 1; BIREN_ERROR_INVALID_DEVICE_POINTER
/// / BIREN_ERROR_OUT_OF_BOUNDS for memory not inside one live device allocation.
/// Thread-safe.
#[no_mangle]
pub extern "C" fn birenGraphAddMemsetNode(
    pGraphNode: *mut birenGraphNode_t,
    graph: birenGraph_t,
    pDependencies: *const birenGraphNode_t,
    numDependencies: usize,
    pMemsetParams: *const birenMemsetParams,
) -> birenError_t {
    ffi_call!("birenGraphAddMemsetNode"(pGraphNode, graph, pDependencies, numDependencies, pMemsetParams) {
        add_node(pGraphNode, graph, pDependencies, numDependencies, "birenGraphAddMemsetNode", |rt| {
            let call = "birenGraphAddMemsetNode";
            let p = unsafe { pMemsetParams.as_ref() }.ok_or(ErrorCode::InvalidValue)?;
            let elem = p.elementSize as usize;
            let row = p.width.checked_mul(elem);
            let ok = matches!(elem, 1 | 2 | 4)
                && p.width > 0
                && p.height > 0
                && row.is_some_and(|r| p.height == 1 || r <= p.pitch);
            if !ok {
                diagnostics::finding(call, &format!("elementSize={} width={} height={} pitch={}: elementSize must be 1, 2 or 4, width and height nonzero, rows no wider than pitch", p.elementSize, p.width, p.height, p.pitch));
                return Err(ErrorCode::InvalidValue);
            }
            let f = FillNode { dst: p.dst as usize, pitch: p.pitch, value: p.value, elem, width: p.width, height: p.height, depth: 1, slice: 0 };
            let span = (p.height - 1).checked_mul(p.pitch).and_then(|x| x.checked_add(row?));
            let Some(span) = span else { return Err(ErrorCode::InvalidValue) };
            side(rt, f.dst, span, true, call, "dst")?;
            Ok(NodeKind::Memset(f))
        })
    })
}

/// Adds a node that runs `fn(userData)` on a runtime thread (as birenLaunchHostFunc); inside
/// it, synchronizing calls return BIREN_ERROR_NOT_PERMITTED. BIREN_ERROR_INVALID_VALUE for NULL
/// pNodeParams or fn.
#[no_mangle]
pub extern "C" fn birenGraphAddHostNode(
    pGraphNode: *mut birenGraphNode_t,
    graph: birenGraph_t,
    pDependencies: *const birenGraphNode_t,
    numDependencies: usize,
    pNodeParams: *const birenHostNodeParams,
) -> birenError_t {
    ffi_call!("birenGraphAddHostNode"(pGraphNode, graph, pDependencies, numDependencies, pNodeParams) {
        add_node(pGraphNode, graph, pDependencies, numDependencies, "birenGraphAddHostNode", |_| {
            let p = unsafe { pNodeParams.as_ref() }.ok_or(ErrorCode::InvalidValue)?;
            let f = p.fn_.ok_or(ErrorCode::InvalidValue)?;
            Ok(NodeKind::Host(HostCall::plain(f, p.userData as usize)))
        })
    })
}

/// Adds a node that records `event`, as in CUDA: each launch of the graph records the event to
/// capture the completion of the node's dependencies. From birenGraphLaunch on, the event's
/// latest record is this node's (birenEventQuery, birenEventSynchronize and
/// birenStreamWaitEvent made after the launch refer to it), and it is reached as soon as the
/// node's dependencies have completed, while the rest of the graph may still run. The node's
/// dependents do not wait for anything more than its dependencies.
/// BIREN_ERROR_INVALID_HANDLE for a destroyed event. Thread-safe.
#[no_mangle]
pub extern "C" fn birenGraphAddEventRecordNode(
    pGraphNode: *mut birenGraphNode_t,
    graph: birenGraph_t,
    pDependencies: *const birenGraphNode_t,
    numDependencies: usize,
    event: birenEvent_t,
) -> birenError_t {
    ffi_call!("birenGraphAddEventRecordNode"(pGraphNode, graph, pDependencies, numDependencies, event) {
        add_node(pGraphNode, graph, pDependencies, numDependencies, "birenGraphAddEventRecordNode", |rt| {
            Ok(NodeKind::EventRecord(rt.event(handle(event))?))
        })
    })
}

/// Adds a node that waits for `event`, as in CUDA: the node's dependents start only once its
/// dependencies have completed and the work captured in the event has; other nodes of the graph
/// do not wait. What is waited for is the event's latest record at the time of
/// birenGraphLaunch (as birenStreamWaitEvent takes it at its call), or — BIREN extension — its
/// next record if it has never been recorded; that record may be made after the launch by work
/// that itself waits for nodes of the graph upstream of this node. A launch blocked on a wait
/// that nothing can satisfy makes a host synchronize on it return BIREN_ERROR_DEADLOCK after
/// BIREN_DEADLOCK_TIMEOUT_MS. BIREN_ERROR_INVALID_HANDLE for a destroyed event. Thread-safe.
#[no_mangle]
pub extern "C" fn birenGraphAddEventWaitNode(
    pGraphNode: *mut birenGraphNode_t,
    graph: birenGraph_t,
    pDependencies: *const birenGraphNode_t,
    numDependencies: usize,
    event: birenEvent_t,
) -> birenError_t {
    ffi_call!("birenGraphAddEventWaitNode"(pGraphNode, graph, pDependencies, numDependencies, event) {
        add_node(pGraphNode, graph, pDependencies, numDependencies, "birenGraphAddEventWaitNode", |rt| {
            Ok(NodeKind::EventWait(rt.event(handle(event))?))
        })
    })
}

/// Adds a node that runs a copy of `childGraph` (taken now: later changes to childGraph do not
/// affect the node). BIREN_ERROR_INVALID_HANDLE for a destroyed child graph;
/// BIREN_ERROR_INVALID_VALUE if childGraph is graph itself.
/// Thread-safe.
#[no_mangle]
pub extern "C" fn birenGraphAddChildGraphNode(
    pGraphNode: *mut birenGraphNode_t,
    graph: birenGraph_t,
    pDependencies: *const birenGraphNode_t,
    numDependencies: usize,
    childGraph: birenGraph_t,
) -> birenError_t {
    ffi_call!("birenGraphAddChildGraphNode"(pGraphNode, graph, pDependencies, numDependencies, childGraph) {
        let child = graph_of(childGraph)?;
        if handle(childGraph) == handle(graph) {
            return Err(ErrorCode::InvalidValue);
        }
        let body = Arc::new(child.body.lock().detached());
        add_node(pGraphNode, graph, pDependencies, numDependencies, "birenGraphAddChildGraphNode", |_| {
            Ok(NodeKind::Child(body))
        })
    })
}

/// Adds a node that does nothing (a join point for dependencies).
/// Thread-safe.
#[no_mangle]
pub extern "C" fn birenGraphAddEmptyNode(
    pGraphNode: *mut birenGraphNode_t,
    graph: birenGraph_t,
    pDependencies: *const birenGraphNode_t,
    numDependencies: usize,
) -> birenError_t {
    ffi_call!("birenGraphAddEmptyNode"(pGraphNode, graph, pDependencies, numDependencies) {
        add_node(pGraphNode, graph, pDependencies, numDependencies, "birenGraphAddEmptyNode", |_| Ok(NodeKind::Empty))
    })
}

/// An edge (from, to) by node index.
type Edge = (u32, u32);

fn edges_of(
    graph: birenGraph_t,
    from: *const birenGraphNode_t,
    to: *const birenGraphNode_t,
    n: usize,
    call: &str,
) -> Result<(Arc<GraphCore>, Vec<Edge>)> {
    let g = graph_of(graph)?;
    if n > 0 && (from.is_null() || to.is_null()) {
        return Err(ErrorCode::InvalidValue);
    }
    let f = nodes_in(&g, from, n, call)?;
    let t = nodes_in(&g, to, n, call)?;
    Ok((g, f.into_iter().zip(t).collect()))
}

/// Adds the `numDependencies` edges from[i] -> to[i] (to[i] runs after from[i]), all or none.
/// BIREN_ERROR_INVALID_VALUE for NULL arrays with numDependencies > 0, nodes of another graph, a
/// node depending on itself, an edge already present, or an edge that would close a cycle
/// (nothing is added then); BIREN_ERROR_INVALID_HANDLE for a destroyed graph or node.
/// Thread-safe.
#[no_mangle]
pub extern "C" fn birenGraphAddDependencies(
    graph: birenGraph_t,
    from: *const birenGraphNode_t,
    to: *const birenGraphNode_t,
    numDependencies: usize,
) -> birenError_t {
    ffi_call!("birenGraphAddDependencies"(graph, from, to, numDependencies) {
        let (g, edges) = edges_of(graph, from, to, numDependencies, "birenGraphAddDependencies")?;
        let r = g.body.lock().add_edges(&edges);
        r.inspect_err(|_| {
            diagnostics::finding("birenGraphAddDependencies", "an edge is a self edge, already present, or would close a cycle; nothing was added");
        })
    })
}

/// Removes the edges from[i] -> to[i], all or none. BIREN_ERROR_INVALID_VALUE if one of them is
/// not present (nothing is removed then), and as birenGraphAddDependencies.
/// Thread-safe.
#[no_mangle]
pub extern "C" fn birenGraphRemoveDependencies(
    graph: birenGraph_t,
    from: *const birenGraphNode_t,
    to: *const birenGraphNode_t,
    numDependencies: usize,
) -> birenError_t {
    ffi_call!("birenGraphRemoveDependencies"(graph, from, to, numDependencies) {
        let (g, edges) = edges_of(graph, from, to, numDependencies, "birenGraphRemoveDependencies")?;
        let r = g.body.lock().remove_edges(&edges);
        r
    })
}

/// Writes up to *count handles to `dst` (NULL: only the count) and the total to *count; the
/// entries past the total are set to NULL, as CUDA does.
fn write_list(items: &[u64], dst: *mut birenGraphNode_t, count: *mut usize) -> Result<()> {
    let c = out(count)?;
    if !dst.is_null() {
        let room = *c;
        for i in 0..room {
            let h = items.get(i).copied().unwrap_or(0);
            unsafe { *dst.add(i) = h as usize as birenGraphNode_t };
        }
    }
    *c = items.len();
    Ok(())
}

/// Writes the graph's nodes (in creation order) to `nodes` and their number to *numNodes. With
/// nodes NULL only the number is written; otherwise at most *numNodes handles are written (the
/// rest of the array, if the graph has fewer, is set to NULL) and *numNodes becomes the graph's
/// node count. BIREN_ERROR_INVALID_VALUE if numNodes is NULL; BIREN_ERROR_INVALID_HANDLE for a
/// destroyed graph.
/// Thread-safe.
#[no_mangle]
pub extern "C" fn birenGraphGetNodes(
    graph: birenGraph_t,
    nodes: *mut birenGraphNode_t,
    numNodes: *mut usize,
) -> birenError_t {
    ffi_call!("birenGraphGetNodes"(graph, nodes, numNodes) {
        let g = graph_of(graph)?;
        let hs: Vec<u64> = g.body.lock().nodes.iter().map(|n| n.handle).collect();
        write_list(&hs, nodes, numNodes)
    })
}

/// As birenGraphGetNodes, for the nodes without dependencies.
/// Thread-safe.
#[no_mangle]
pub extern "C" fn birenGraphGetRootNodes(
    graph: birenGraph_t,
    pRootNodes: *mut birenGraphNode_t,
    pNumRootNodes: *mut usize,
) -> birenError_t {
    ffi_call!("birenGraphGetRootNodes"(graph, pRootNodes, pNumRootNodes) {
        let g = graph_of(graph)?;
        let hs: Vec<u64> = g.body.lock().nodes.iter().filter(|n| n.deps.is_empty()).map(|n| n.handle).collect();
        write_list(&hs, pRootNodes, pNumRootNodes)
    })
}

/// Writes the graph's edges as pairs from[i] -> to[i] and their number to *numEdges; with from
/// and to both NULL only the number. Otherwise at most *numEdges pairs are written (entries past
/// the total set to NULL). BIREN_ERROR_INVALID_VALUE if numEdges is NULL or only one of from and
/// to is NULL.
/// Thread-safe.
#[no_mangle]
pub extern "C" fn birenGraphGetEdges(
    graph: birenGraph_t,
    from: *mut birenGraphNode_t,
    to: *mut birenGraphNode_t,
    numEdges: *mut usize,
) -> birenError_t {
    ffi_call!("birenGraphGetEdges"(graph, from, to, numEdges) {
        let g = graph_of(graph)?;
        if from.is_null() != to.is_null() {
            return Err(ErrorCode::InvalidValue);
        }
        let c = out(numEdges)?;
        let b = g.body.lock();
        let edges = b.edges();
        if !from.is_null() {
            for i in 0..*c {
                let (f, t) = edges.get(i).map_or((0, 0), |&(f, t)| (b.nodes[f as usize].handle, b.nodes[t as usize].handle));
                unsafe {
                    *from.add(i) = f as usize as birenGraphNode_t;
                    *to.add(i) = t as usize as birenGraphNode_t;
                }
            }
        }
        *c = edges.len();
        Ok(())
    })
}

/// Writes the node's type to *pType. BIREN_ERROR_INVALID_VALUE if pType is NULL;
/// BIREN_ERROR_INVALID_HANDLE for a destroyed or forged node.
/// Thread-safe.
#[no_mangle]
pub extern "C" fn birenGraphNodeGetType(
    node: birenGraphNode_t,
    pType: *mut birenGraphNodeType,
) -> birenError_t {
    ffi_call!("birenGraphNodeGetType"(node, pType) {
        runtime::get()?;
        let o = out(pType)?;
        let r = tables().node(handle(node))?;
        let g = r.owner.upgrade().ok_or(ErrorCode::InvalidHandle)?;
        use birenGraphNodeType::*;
        *o = match g.body.lock().nodes[r.index as usize].kind.type_code() {
            0 => birenGraphNodeTypeKernel,
            1 => birenGraphNodeTypeMemcpy,
            2 => birenGraphNodeTypeMemset,
            3 => birenGraphNodeTypeHost,
            4 => birenGraphNodeTypeGraph,
            5 => birenGraphNodeTypeEmpty,
            6 => birenGraphNodeTypeWaitEvent,
            _ => birenGraphNodeTypeEventRecord,
        };
        Ok(())
    })
}

/// Creates a copy of `originalGraph` (same nodes, parameters and edges; new node handles) and
/// writes it to *pGraphClone. BIREN_ERROR_INVALID_VALUE if pGraphClone is NULL;
/// BIREN_ERROR_INVALID_HANDLE for a destroyed graph.
/// Thread-safe.
#[no_mangle]
pub extern "C" fn birenGraphClone(
    pGraphClone: *mut birenGraph_t,
    originalGraph: birenGraph_t,
) -> birenError_t {
    ffi_call!("birenGraphClone"(pGraphClone, originalGraph) {
        let o = out(pGraphClone)?;
        let g = graph_of(originalGraph)?;
        let body = g.body.lock().detached();
        let (h, _) = tables().insert_graph(body, caller::user_caller())?;
        *o = h as usize as birenGraph_t;
        Ok(())
    })
}

fn instantiate(
    pGraphExec: *mut birenGraphExec_t,
    graph: birenGraph_t,
    flags: u64,
    call: &str,
) -> Result<()> {
    let rt = runtime::get()?;
    let o = out(pGraphExec)?;
    let g = graph_of(graph)?;
    let allowed = birenGraphInstantiateFlagAutoFreeOnLaunch | birenGraphInstantiateFlagUpload;
    if flags & !allowed != 0 {
        diagnostics::finding(
            call,
            &format!("flags={flags:#x}: only AutoFreeOnLaunch (1) and Upload (2) are supported"),
        );
        return Err(ErrorCode::InvalidValue);
    }
    let d = rt.current()?;
    d.exec.sticky()?;
    let t = tables();
    let id = t.next_id();
    let body = g.body.lock().detached();
    let e = Arc::new(GraphExec::new(
        id,
        d.index,
        g.id,
        body,
        caller::user_caller(),
    ));
    let h = t.execs.insert(e).ok_or(ErrorCode::OutOfMemory)?;
    *o = h as usize as birenGraphExec_t;
    Ok(())
}

/// Instantiates `graph` for the current device: flattens child graphs and computes, for every
/// node, its dependency count and dependents, so that a launch is cheap. The exec is independent
/// of the graph afterwards (the graph may change or be destroyed). `flags`: 0,
/// birenGraphInstantiateFlagAutoFreeOnLaunch, birenGraphInstantiateFlagUpload.
/// BIREN_ERROR_INVALID_VALUE for NULL pGraphExec or other flags; BIREN_ERROR_INVALID_HANDLE for a
/// destroyed graph. Pair with birenGraphExecDestroy.
/// Thread-safe.
#[no_mangle]
pub extern "C" fn birenGraphInstantiate(
    pGraphExec: *mut birenGraphExec_t,
    graph: birenGraph_t,
    flags: c_ulonglong,
) -> birenError_t {
    ffi_call!("birenGraphInstantiate"(pGraphExec, graph, flags) {
        instantiate(pGraphExec, graph, flags, "birenGraphInstantiate")
    })
}

/// Same as birenGraphInstantiate.
/// Thread-safe.
#[no_mangle]
pub extern "C" fn birenGraphInstantiateWithFlags(
    pGraphExec: *mut birenGraphExec_t,
    graph: birenGraph_t,
    flags: c_ulonglong,
) -> birenError_t {
    ffi_call!("birenGraphInstantiateWithFlags"(pGraphExec, graph, flags) {
        instantiate(pGraphExec, graph, flags, "birenGraphInstantiateWithFlags")
    })
}

/// Launches `graphExec` in `stream` (NULL: the default stream) as one item of the stream: it
/// starts after the stream's earlier work, later work waits for all of it. Inside, every node
/// starts when its dependencies have finished; independent nodes run in parallel on the compute
/// units and copy engines. Launches of one exec run one after another, also from different
/// streams. A node that fails (birenTrap) fails the launch: BIREN_ERROR_LAUNCH_FAILURE, sticky,
/// reported by later calls; the nodes not yet started are skipped. Into a capturing stream, the
/// launch is captured as a child graph node.
/// Returns BIREN_ERROR_INVALID_HANDLE for a destroyed exec or stream; BIREN_ERROR_INVALID_VALUE
/// for a stream of another device than the exec's; BIREN_ERROR_INVALID_DEVICE_POINTER if a copy
/// or memset node's device memory has been freed (nothing is enqueued then). Event record and
/// wait nodes act at their place in the graph (see birenGraphAddEventRecordNode and
/// birenGraphAddEventWaitNode): the launch makes their records and takes their waits' records,
/// with the codes of birenEventRecord and birenStreamWaitEvent. A record node's record refused
/// with BIREN_ERROR_DEADLOCK (it would complete a cycle of waits: the event's next record is
/// awaited by work that waits for this very node) is returned as such, but the launch itself is
/// then enqueued and runs, without recording that event (the one exception to "a failed call
/// enqueues nothing"). Thread-safe.
#[no_mangle]
pub extern "C" fn birenGraphLaunch(
    graphExec: birenGraphExec_t,
    stream: birenStream_t,
) -> birenError_t {
    ffi_call!("birenGraphLaunch"(graphExec, stream) {
        let rt = runtime::get()?;
        let e = tables().execs.get(handle(graphExec)).ok_or(ErrorCode::InvalidHandle)?;
        let s = rt.stream(handle(stream))?;
        let d = device_of(rt, s.device)?;
        if s.device != e.device {
            diagnostics::finding("birenGraphLaunch", &format!("the exec was instantiated for device {}, the stream is on device {}", e.device, s.device));
            return Err(ErrorCode::InvalidValue);
        }
        let epoch = d.exec.epoch();
        let stack_size = rt.settings[s.device].stack_size();
        let g = e.snapshot();
        check_memory_nodes(rt, &g)?;
        // A host far ahead of the device waits for room here, before taking the exec's locks,
        // and the enqueues under them do not wait: a host function launching this exec would
        // wait on the locks meanwhile, and the device's progress with it.
        let _room = d.exec.make_room();
        let mut last = e.last.lock();
        // A launch follows the exec's previous launch (CUDA's rule); race detection also wants
        // the edge when that launch is complete already (a reached point costs nothing).
        let deps: Vec<Dep> = last.iter().filter(|p| !Arc::ptr_eq(&p.stream, &s) && (!p.reached() || diagnostics::racecheck::on())).cloned().map(Dep::Point).collect();
        let plain = (g.waits.is_empty() && g.records.is_empty()) || capture::captures(&s);
        let (seq, events) = if plain {
            // No event nodes, or captured (as a child graph node, event nodes included).
            (d.enqueue_since(&s, GraphLaunch::work(d.exec.clone(), g.clone(), None, stack_size), deps, epoch)?, Ok(()))
        } else {
            graph_launch::enqueue_launch(d, &s, &g, deps, epoch, &mut e.lanes.lock(), stack_size)?
        };
        if seq != 0 {
            *last = Some(StreamPoint { stream: s.clone(), seq });
        }
        drop(last);
        events?;
        Ok(())
    })
}

/// Every copy and memset node's device memory must still be live (it is checked at launch).
fn check_memory_nodes(
    rt: &Runtime,
    g: &crate::runtime::exec::graph::exec::ExecGraph,
) -> Result<()> {
    use crate::runtime::exec::graph::exec::ExecWork;
    for &i in g.memory_nodes.iter() {
        let n = &g.nodes[i as usize];
        let bad = match &n.work {
            ExecWork::Copy(c) if c.bytes() == 0 => false,
            ExecWork::Copy(c) => {
                let (ds, ss) = c.spans();
                (c.dst_device && rt.check_device_range(c.dst, ds).is_err())
                    || (c.src_device && rt.check_device_range(c.src, ss).is_err())
            }
            ExecWork::Fill(f) => rt.check_device_range(f.dst, f.span()).is_err(),
            _ => false,
        };
        if bad {
            diagnostics::finding(
                "birenGraphLaunch",
                &format!(
                    "graph exec #{} node {} ({}) uses device memory that is no longer allocated (freed, or the device was reset); nothing was enqueued",
                    g.exec_id, n.path, n.label()
                ),
            );
            return Err(ErrorCode::InvalidDevicePointer);
        }
    }
    Ok(())
}

/// Sets the parameters of kernel node `node` (a node of the graph `hGraphExec` was instantiated
/// from) for the exec's later launches; launches already made keep the old ones. Argument values
/// are captured as by birenGraphAddKernelNode. BIREN_ERROR_INVALID_VALUE for NULL pNodeParams,
/// a node of another graph or not a kernel node, and the parameter errors of
/// birenGraphAddKernelNode; BIREN_ERROR_INVALID_HANDLE for a destroyed exec or node.
/// Thread-safe.
#[no_mangle]
pub extern "C" fn birenGraphExecKernelNodeSetParams(
    hGraphExec: birenGraphExec_t,
    node: birenGraphNode_t,
    pNodeParams: *const birenKernelNodeParams,
) -> birenError_t {
    ffi_call!("birenGraphExecKernelNodeSetParams"(hGraphExec, node, pNodeParams) {
        let rt = runtime::get()?;
        let e = exec_of(hGraphExec)?;
        let r = tables().node(handle(node))?;
        let p = unsafe { pNodeParams.as_ref() }.ok_or(ErrorCode::InvalidValue)?;
        let k = kernel_node(rt, p, "birenGraphExecKernelNodeSetParams")?;
        e.set_kernel(r.graph, r.index, k)
    })
}

/// Updates `hGraphExec` with the parameters of `hGraph`, whose topology must be that of the
/// graph the exec came from (same nodes in the same order, same types, same edges). Launches
/// already made keep the old parameters. Writes the outcome to *resultInfo in every case (as
/// CUDA does): birenGraphExecUpdateSuccess, or ...ErrorTopologyChanged / ...ErrorNodeTypeChanged
/// / ...ErrorParametersChanged with errorNode set to the offending node of hGraph.
/// BIREN_ERROR_GRAPH_EXEC_UPDATE_FAILURE when the update was refused (the exec is unchanged);
/// BIREN_ERROR_INVALID_VALUE if resultInfo is NULL; BIREN_ERROR_INVALID_HANDLE for a destroyed
/// exec or graph.
/// Thread-safe.
#[no_mangle]
pub extern "C" fn birenGraphExecUpdate(
    hGraphExec: birenGraphExec_t,
    hGraph: birenGraph_t,
    resultInfo: *mut birenGraphExecUpdateResultInfo,
) -> birenError_t {
    ffi_call!("birenGraphExecUpdate"(hGraphExec, hGraph, resultInfo) {
        let e = exec_of(hGraphExec)?;
        let g = graph_of(hGraph)?;
        let o = out(resultInfo)?;
        let body = g.body.lock().clone();
        use birenGraphExecUpdateResult::*;
        match e.update(&body) {
            Ok(()) => {
                *o = birenGraphExecUpdateResultInfo { result: birenGraphExecUpdateSuccess, errorNode: std::ptr::null_mut(), errorFromNode: std::ptr::null_mut() };
                let _ = UPDATE_SUCCESS;
                Ok(())
            }
            Err((code, node)) => {
                let result = match code {
                    2 => birenGraphExecUpdateErrorTopologyChanged,
                    3 => birenGraphExecUpdateErrorNodeTypeChanged,
                    5 => birenGraphExecUpdateErrorParametersChanged,
                    _ => birenGraphExecUpdateError,
                };
                let errorNode = body.nodes.get(node as usize).map_or(0, |n| n.handle) as usize as birenGraphNode_t;
                *o = birenGraphExecUpdateResultInfo { result, errorNode, errorFromNode: std::ptr::null_mut() };
                diagnostics::finding("birenGraphExecUpdate", &format!("{result:?} at node {node}; the exec is unchanged"));
                Err(ErrorCode::GraphExecUpdateFailure)
            }
        }
    })
}

/// Destroys a graph and its nodes (their handles then give BIREN_ERROR_INVALID_HANDLE). Execs
/// instantiated from it are not affected. BIREN_ERROR_INVALID_HANDLE for a destroyed or forged
/// graph.
/// Thread-safe.
#[no_mangle]
pub extern "C" fn birenGraphDestroy(graph: birenGraph_t) -> birenError_t {
    ffi_call!("birenGraphDestroy"(graph) {
        runtime::get()?;
        tables().destroy_graph(handle(graph))
    })
}

/// Destroys an executable graph. Launches already enqueued still complete (the validator warns
/// when one is pending: destroying an exec that runs is a bug in CUDA programs).
/// BIREN_ERROR_INVALID_HANDLE for a destroyed or forged exec.
/// Thread-safe.
#[no_mangle]
pub extern "C" fn birenGraphExecDestroy(graphExec: birenGraphExec_t) -> birenError_t {
    ffi_call!("birenGraphExecDestroy"(graphExec) {
        let rt = runtime::get()?;
        let e = tables().execs.remove(handle(graphExec)).ok_or(ErrorCode::InvalidHandle)?;
        if let Ok(d) = device_of(rt, e.device) {
            e.lanes.lock().retire(d);
        }
        if diagnostics::validator_on() {
            if let Some(p) = e.last.lock().as_ref().filter(|p| !p.reached()) {
                diagnostics::finding(
                    "birenGraphExecDestroy",
                    &format!("graph exec #{} is destroyed while its launch in stream #{} has not completed; the launch still runs to completion", e.id, p.stream.id),
                );
            }
        }
        Ok(())
    })
}

/// Writes the graph as a Graphviz DOT file at `path` (render with `dot -Tsvg`): a box per
/// kernel, a parallelogram per copy or memset, and so on, with their edges; child graphs as
/// nested clusters. `flags` nonzero (birenGraphDebugDotFlagsVerbose) adds each node's
/// parameters. BIREN_ERROR_INVALID_VALUE for a NULL path; BIREN_ERROR_OPERATING_SYSTEM if the
/// file cannot be written; BIREN_ERROR_INVALID_HANDLE for a destroyed graph.
/// Thread-safe.
#[no_mangle]
pub extern "C" fn birenGraphDebugDotPrint(
    graph: birenGraph_t,
    path: *const c_char,
    flags: c_uint,
) -> birenError_t {
    ffi_call!("birenGraphDebugDotPrint"(graph, path, flags) {
        let g = graph_of(graph)?;
        if path.is_null() {
            return Err(ErrorCode::InvalidValue);
        }
        let p = unsafe { CStr::from_ptr(path) }.to_string_lossy().into_owned();
        let mut s = format!("digraph \"graph {}\" {{\n  compound=true;\n", g.id);
        g.body.lock().dot(&format!("graph #{}", g.id), "g", &mut s, flags != 0);
        s.push_str("}\n");
        std::fs::write(&p, s).map_err(|e| {
            diagnostics::finding("birenGraphDebugDotPrint", &format!("cannot write {p}: {e}"));
            ErrorCode::OperatingSystem
        })
    })
}

/// At exit (validator on): captures still open, graphs and execs still alive.
pub(crate) fn report_at_exit() {
    for (stream, nodes) in capture::open_captures() {
        diagnostics::line(&format!(
            "biren validator: a stream capture begun in stream #{stream} was never ended ({nodes} node(s) captured, nothing of it ran): \
             call birenStreamEndCapture"
        ));
    }
    let graphs = tables().graphs.collect_where(|_| true);
    let execs = tables().execs.collect_where(|_| true);
    if !graphs.is_empty() || !execs.is_empty() {
        diagnostics::line(&format!(
            "biren leak report (process exit): {} graph(s), {} graph exec(s) still alive",
            graphs.len(),
            execs.len()
        ));
        for g in graphs {
            diagnostics::line(&format!(
                "  leaked graph #{}, created by {}",
                g.id,
                caller::describe(g.caller)
            ));
        }
        for e in execs {
            diagnostics::line(&format!(
                "  leaked graph exec #{}, instantiated by {}",
                e.id,
                caller::describe(e.caller)
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ffi::event::{birenEventCreate, birenEventDestroy};

    /// A launch holds its exec's locks while it enqueues (launches of one exec run in order),
    /// and a host function may launch the same exec: so the enqueues under those locks never
    /// wait for room on the device (it waits before it takes them). The lock-order checker of
    /// the crate's tests panicked at the enqueue's wait, which the boundary turned into an
    /// error, for a plain launch and for one with an event record node (its lanes).
    #[test]
    fn a_launch_waits_for_room_before_it_takes_its_execs_locks() {
        assert_eq!(
            crate::ffi::control::birenInit(),
            birenError_t::BIREN_SUCCESS
        );
        let mut ev: birenEvent_t = std::ptr::null_mut();
        assert_eq!(birenEventCreate(&mut ev), birenError_t::BIREN_SUCCESS);
        for with_event in [false, true] {
            let mut g: birenGraph_t = std::ptr::null_mut();
            assert_eq!(birenGraphCreate(&mut g, 0), birenError_t::BIREN_SUCCESS);
            let mut n: birenGraphNode_t = std::ptr::null_mut();
            let added = if with_event {
                birenGraphAddEventRecordNode(&mut n, g, std::ptr::null(), 0, ev)
            } else {
                birenGraphAddEmptyNode(&mut n, g, std::ptr::null(), 0)
            };
            assert_eq!(added, birenError_t::BIREN_SUCCESS);
            let mut e: birenGraphExec_t = std::ptr::null_mut();
            assert_eq!(
                birenGraphInstantiate(&mut e, g, 0),
                birenError_t::BIREN_SUCCESS
            );
            for _ in 0..3 {
                assert_eq!(
                    birenGraphLaunch(e, std::ptr::null_mut()),
                    birenError_t::BIREN_SUCCESS
                );
            }
            assert_eq!(
                crate::ffi::control::birenDeviceSynchronize(),
                birenError_t::BIREN_SUCCESS
            );
            assert_eq!(birenGraphExecDestroy(e), birenError_t::BIREN_SUCCESS);
            assert_eq!(birenGraphDestroy(g), birenError_t::BIREN_SUCCESS);
        }
        assert_eq!(birenEventDestroy(ev), birenError_t::BIREN_SUCCESS);
    }
}
