//! What race detection (diagnostics/racecheck.rs) needs to know about the device's work, told in
//! its own plain terms. A debug hook: the stream layer (`StreamCore::push_locked`) and the graph
//! layer (`graph/race.rs`) call it; it imports only the plain types below them.

use crate::runtime::diagnostics::racecheck::{OpDesc, Range};
use crate::runtime::exec::strided::{Side, StridedOp};
use crate::runtime::exec::work::Work;

/// The rows a 2D/3D copy or fill touches, of `depth` slices of `height` rows of `width` bytes:
/// `src`'s read (a copy), `dst`'s written. Streams' strided ops and graphs' copy and fill nodes
/// alike.
pub(crate) fn strided_ranges(
    dst: Side,
    src: Option<Side>,
    width: usize,
    height: usize,
    depth: usize,
) -> Vec<Range> {
    let side =
        |s: Side, write| Range::strided(s.base, width, height, depth, s.pitch, s.slice, write);
    let mut v = src.map_or_else(Vec::new, |s| side(s, false));
    v.extend(side(dst, true));
    v
}

/// A kernel's argument words, and the memory of each texture or surface object among them (a
/// surface write or a texture fetch touches the array behind the object, not an argument).
pub(crate) fn kernel_words(mut words: Vec<usize>) -> Vec<usize> {
    let objects: Vec<usize> = words
        .iter()
        .filter_map(|&w| crate::runtime::texture::object_memory(w as u64))
        .collect();
    words.extend(objects);
    words
}

/// What `w` touches and how it is named in a report.
pub(crate) fn work_desc(w: &Work) -> OpDesc {
    let mut d = OpDesc {
        kind: "op",
        name: String::new(),
        code: 0,
        ranges: Vec::new(),
        words: Vec::new(),
        graph: None,
    };
    match w {
        Work::Kernel(l) => {
            d.kind = "kernel";
            // Registered name, or the symbol looked up only when a race is reported.
            d.name = l.info.as_ref().map_or(String::new(), |i| i.name.clone());
            d.words = kernel_words(l.args.words());
            d.code = l.kernel as usize;
        }
        Work::Copy { dst, src, len, .. } => {
            d.kind = "memcpy";
            d.ranges = vec![
                Range::flat(*src, *len, false),
                Range::flat(*dst, *len, true),
            ];
        }
        Work::Fill { dst, len, .. } => {
            d.kind = "memset";
            d.ranges = vec![Range::flat(*dst, *len, true)];
        }
        Work::Strided(t) => {
            d.kind = match t.op {
                StridedOp::Copy(_) => "2D/3D memcpy",
                StridedOp::Fill(_) => "2D/3D memset",
            };
            let src = match t.op {
                StridedOp::Copy(s) => Some(s),
                StridedOp::Fill(_) => None,
            };
            d.ranges = strided_ranges(t.dst, src, t.width, t.height, t.depth);
        }
        Work::Graph(g) => {
            d.kind = "graph launch";
            d.name = format!("graph exec #{}", g.exec_id());
            d.graph = Some(g.race_desc());
        }
        Work::Host(_) => d.kind = "host function",
    }
    d
}
