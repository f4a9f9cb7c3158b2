//! The reference model of the contract (`World`), which runs each action against the library
//! and against itself and compares.

use super::*;

pub(crate) type NodeId = usize;
pub(crate) type ObjId = usize;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum ObjKind {
    Device,
    Pool,
    Pinned,
}

pub(crate) struct Obj {
    pub(crate) kind: ObjKind,
    pub(crate) base: usize,
    pub(crate) size: usize,
    /// Contents; `None` for an opaque (large) allocation, or after it was freed.
    pub(crate) data: Option<Vec<Option<u8>>>,
    pub(crate) live: bool,
}

impl Obj {
    pub(crate) fn end(&self) -> usize {
        self.base + self.size
    }
    pub(crate) fn contains(&self, p: usize) -> bool {
        self.base <= p && p < self.end()
    }
}

#[derive(Clone, Debug)]
pub(crate) enum Src {
    Const(u8),
    /// byte i = v + i (the fill kernel)
    Pattern(u8),
    Bytes(Vec<u8>),
    /// copied from (object, offset)
    Copy(ObjId, usize),
}

#[derive(Clone, Debug)]
pub(crate) struct Write {
    pub(crate) dst: ObjId,
    pub(crate) off: usize,
    pub(crate) len: usize,
    pub(crate) src: Src,
}

pub(crate) struct Node {
    pub(crate) deps: Vec<NodeId>,
    /// A wait on the next record of a never-recorded event.
    pub(crate) future: Option<usize>,
    pub(crate) write: Option<Write>,
    pub(crate) host_job: Option<usize>,
    pub(crate) complete: bool,
}

pub(crate) struct MStream {
    pub(crate) handle: usize,
    pub(crate) flags: u32,
    pub(crate) prio: i32,
    pub(crate) live: bool,
    pub(crate) tail: Option<NodeId>,
}

#[derive(Clone, Copy)]
pub(crate) enum Rec {
    Node(NodeId),
    /// Recorded, and reached before the last quiescent point.
    Done,
}

pub(crate) struct MEvent {
    pub(crate) handle: usize,
    pub(crate) flags: u32,
    pub(crate) live: bool,
    pub(crate) latest: Option<Rec>,
    pub(crate) future: Option<usize>,
}

pub(crate) struct Fut {
    pub(crate) resolved: Option<NodeId>,
    pub(crate) waits: Vec<NodeId>,
}

pub(crate) struct Deferred {
    pub(crate) bytes: usize,
    pub(crate) obj: ObjId,
    pub(crate) until: Vec<NodeId>,
}

#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Ran {
    Yes,
    Maybe,
    No,
}

pub(crate) fn round256(x: usize) -> Option<usize> {
    x.checked_add(255).map(|v| v / 256 * 256)
}

pub(crate) fn overlap(a: (usize, usize), b: (usize, usize)) -> Option<(usize, usize)> {
    let (s, e) = (a.0.max(b.0), a.1.min(b.1));
    (s < e).then_some((s, e))
}

pub(crate) struct Bits(pub(crate) Vec<u64>);

impl Bits {
    pub(crate) fn new(n: usize) -> Bits {
        Bits(vec![0; n.div_ceil(64)])
    }
    pub(crate) fn set(&mut self, i: usize) {
        self.0[i / 64] |= 1 << (i % 64);
    }
    pub(crate) fn get(&self, i: usize) -> bool {
        self.0[i / 64] >> (i % 64) & 1 == 1
    }
    pub(crate) fn union(&mut self, o: &Bits) {
        for (a, b) in self.0.iter_mut().zip(&o.0) {
            *a |= b;
        }
    }
}

/// The library side and the model side of one generated case.
pub(crate) struct World {
    pub(crate) objs: Vec<Obj>,
    pub(crate) nodes: Vec<Node>,
    pub(crate) futs: Vec<Fut>,
    /// [0] is the default stream.
    pub(crate) streams: Vec<MStream>,
    pub(crate) events: Vec<MEvent>,
    pub(crate) deferred: Vec<Deferred>,
    // Boxed: the runtime holds pointers to them until the work that uses them is gone.
    #[allow(clippy::vec_box)]
    pub(crate) jobs: Vec<Box<HostJob>>,
    #[allow(clippy::vec_box)]
    pub(crate) byref: Vec<Box<ByRefArgs>>,
    pub(crate) pool: Vec<*mut u8>,
    pub(crate) last_error: Code,
    /// The device has a sticky error (a kernel trapped): calls on it fail until a reset.
    pub(crate) sticky: bool,
    pub(crate) policy: Option<i32>,
    pub(crate) calls: u64,
    pub(crate) trace: VecDeque<String>,
}

pub(crate) fn pool_layout() -> std::alloc::Layout {
    std::alloc::Layout::from_size_align(POOL_SIZE, 64).unwrap()
}

impl Drop for World {
    fn drop(&mut self) {
        // Nothing may still write into the buffers below once they are freed.
        birenDeviceReset();
        birenDeviceSynchronize();
        for o in &self.objs {
            if o.kind == ObjKind::Pinned && o.live {
                birenFreeHost(o.base as *mut c_void);
            }
        }
        for &p in &self.pool {
            unsafe { std::alloc::dealloc(p, pool_layout()) };
        }
    }
}

pub(crate) type Res = Result<(), String>;

impl World {
    pub(crate) fn new() -> World {
        let mut w = World {
            objs: Vec::new(),
            nodes: Vec::new(),
            futs: Vec::new(),
            streams: vec![MStream {
                handle: 0,
                flags: 0,
                prio: 0,
                live: true,
                tail: None,
            }],
            events: Vec::new(),
            deferred: Vec::new(),
            jobs: Vec::new(),
            byref: Vec::new(),
            pool: Vec::new(),
            last_error: BIREN_SUCCESS,
            sticky: false,
            policy: None,
            calls: 0,
            trace: VecDeque::new(),
        };
        for b in 0..POOL_BUFFERS {
            let p = unsafe { std::alloc::alloc(pool_layout()) };
            assert!(!p.is_null());
            let init: Vec<u8> = (0..POOL_SIZE).map(|i| (i * 7 + b * 31 + 1) as u8).collect();
            unsafe { std::ptr::copy_nonoverlapping(init.as_ptr(), p, POOL_SIZE) };
            w.pool.push(p);
            w.objs.push(Obj {
                kind: ObjKind::Pool,
                base: p as usize,
                size: POOL_SIZE,
                data: Some(init.into_iter().map(Some).collect()),
                live: true,
            });
        }
        w
    }

    // ---- reporting ----

    pub(crate) fn note(&mut self, s: String) {
        if self.trace.len() == 80 {
            self.trace.pop_front();
        }
        self.trace.push_back(s);
    }

    pub(crate) fn fail(&self, msg: String) -> String {
        let mut s = format!("{msg}\n  last calls (oldest first):\n");
        for t in &self.trace {
            s.push_str("    ");
            s.push_str(t);
            s.push('\n');
        }
        s
    }

    /// Checks a return code against the accepted ones and keeps the model's last error.
    pub(crate) fn check(&mut self, what: String, got: Code, ok: &[Code]) -> Res {
        self.calls += 1;
        let name = what.split(['(', ' ']).next().unwrap_or("").to_string();
        stat(format!("{name} -> {got:?}"), 1);
        let sticky_ok;
        let ok = if self.sticky && name != "birenDeviceReset" {
            sticky_ok = sticky_codes(&name, ok);
            &sticky_ok[..]
        } else {
            ok
        };
        self.note(format!("{what} -> {got:?}"));
        if !ok.contains(&got) {
            return Err(self.fail(format!("{what}: expected {ok:?}, got {got:?}")));
        }
        if got != BIREN_SUCCESS && got != BIREN_ERROR_NOT_READY {
            self.last_error = got;
        }
        if self.sticky && got == BIREN_ERROR_LAUNCH_FAILURE {
            // Refused because of the sticky error: nothing happened.
            return Err(STICKY.into());
        }
        Ok(())
    }

    pub(crate) fn ensure(&self, cond: bool, msg: impl FnOnce() -> String) -> Res {
        if cond {
            Ok(())
        } else {
            Err(self.fail(msg()))
        }
    }

    // ---- resolving references ----

    pub(crate) fn live_streams(&self) -> Vec<usize> {
        (1..self.streams.len())
            .filter(|&k| self.streams[k].live)
            .collect()
    }

    pub(crate) fn stream_handle(&self, r: SRef) -> usize {
        let live = self.live_streams();
        match r {
            SRef::Null => 0,
            SRef::Live(i) if !live.is_empty() => self.streams[live[i as usize % live.len()]].handle,
            SRef::Recent(i) if !live.is_empty() => {
                self.streams[live[live.len() - 1 - i as usize % live.len()]].handle
            }
            SRef::Live(_) | SRef::Recent(_) => 0,
            SRef::Stale(i) => {
                let dead: Vec<usize> = (1..self.streams.len())
                    .filter(|&k| !self.streams[k].live)
                    .collect();
                if dead.is_empty() {
                    FORGED[i as usize % FORGED.len()]
                } else {
                    self.streams[dead[i as usize % dead.len()]].handle
                }
            }
            SRef::Forged(i) => FORGED[i as usize % FORGED.len()],
        }
    }

    /// The model stream a handle value names, if it is valid.
    pub(crate) fn stream_of(&self, h: usize) -> Option<usize> {
        if h == 0 {
            return Some(0);
        }
        (1..self.streams.len()).find(|&k| self.streams[k].live && self.streams[k].handle == h)
    }

    pub(crate) fn event_handle(&self, r: ERef) -> usize {
        let live: Vec<usize> = (0..self.events.len())
            .filter(|&k| self.events[k].live)
            .collect();
        match r {
            ERef::Live(i) if !live.is_empty() => self.events[live[i as usize % live.len()]].handle,
            ERef::Recent(i) if !live.is_empty() => {
                self.events[live[live.len() - 1 - i as usize % live.len()]].handle
            }
            ERef::Live(i) | ERef::Recent(i) => FORGED[i as usize % FORGED.len()],
            ERef::Stale(i) => {
                let dead: Vec<usize> = (0..self.events.len())
                    .filter(|&k| !self.events[k].live)
                    .collect();
                if dead.is_empty() {
                    FORGED[i as usize % FORGED.len()]
                } else {
                    self.events[dead[i as usize % dead.len()]].handle
                }
            }
            ERef::Forged(0) => 0,
            ERef::Forged(i) => FORGED[i as usize % FORGED.len()],
        }
    }

    pub(crate) fn event_of(&self, h: usize) -> Option<usize> {
        (0..self.events.len())
            .find(|&k| self.events[k].live && self.events[k].handle == h && h != 0)
    }

    pub(crate) fn objs_where(&self, f: impl Fn(&Obj) -> bool) -> Vec<ObjId> {
        (0..self.objs.len()).filter(|&o| f(&self.objs[o])).collect()
    }

    pub(crate) fn live_dev(&self) -> Vec<ObjId> {
        self.objs_where(|o| o.kind == ObjKind::Device && o.live)
    }

    pub(crate) fn host_objs(&self) -> Vec<ObjId> {
        self.objs_where(|o| o.kind != ObjKind::Device && o.live)
    }

    pub(crate) fn at(&self, o: ObjId, off: Off) -> usize {
        let ob = &self.objs[o];
        let d = match off {
            Off::Start => 0,
            Off::Mid(m) => m as usize % ob.size,
            Off::Last => ob.size - 1,
            Off::End => ob.size,
            Off::Past(k) => ob.size + 1 + k as usize,
        };
        ob.base.wrapping_add(d)
    }

    pub(crate) fn pick(list: &[ObjId], i: u8) -> Option<ObjId> {
        (!list.is_empty()).then(|| list[i as usize % list.len()])
    }

    /// A pointer as given, for a side that the library only looks up.
    pub(crate) fn ptr_any(&self, p: PtrRef) -> usize {
        match p {
            PtrRef::Null => 0,
            PtrRef::Dev(i, off) => Self::pick(&self.live_dev(), i).map_or(0, |o| self.at(o, off)),
            PtrRef::Host(i, off) => Self::pick(&self.host_objs(), i).map_or(0, |o| self.at(o, off)),
            PtrRef::Stale(i, off) => {
                match Self::pick(&self.objs_where(|o| !o.live && o.kind != ObjKind::Pool), i) {
                    Some(o) => self.at(o, off),
                    None => BOGUS[i as usize % BOGUS.len()],
                }
            }
            PtrRef::Bogus(i) => BOGUS[i as usize % BOGUS.len()],
        }
    }

    /// A pointer for a side the library treats as host memory: always a real host buffer (or NULL).
    pub(crate) fn ptr_host(&self, p: PtrRef) -> usize {
        let hosts = self.host_objs();
        match p {
            PtrRef::Null => 0,
            PtrRef::Dev(i, off) | PtrRef::Host(i, off) | PtrRef::Stale(i, off) => {
                self.at(Self::pick(&hosts, i).unwrap(), off)
            }
            PtrRef::Bogus(i) => self.at(Self::pick(&hosts, i).unwrap(), Off::Start),
        }
    }

    pub(crate) fn find_dev(&self, p: usize) -> Option<ObjId> {
        (0..self.objs.len()).find(|&o| {
            self.objs[o].kind == ObjKind::Device && self.objs[o].live && self.objs[o].contains(p)
        })
    }

    pub(crate) fn find_host(&self, p: usize) -> Option<ObjId> {
        (0..self.objs.len()).find(|&o| {
            self.objs[o].kind != ObjKind::Device && self.objs[o].live && self.objs[o].contains(p)
        })
    }

    pub(crate) fn find_any(&self, p: usize) -> Option<ObjId> {
        self.find_dev(p).or_else(|| self.find_host(p))
    }

    pub(crate) fn room(&self, p: usize) -> Option<usize> {
        self.find_any(p).map(|o| self.objs[o].end() - p)
    }

    pub(crate) fn count(&self, c: CountSel, sides: &[usize]) -> usize {
        let fit = sides
            .iter()
            .filter_map(|&p| self.room(p))
            .min()
            .unwrap_or(64);
        match c {
            CountSel::Zero => 0,
            CountSel::Small(n) => 1 + n as usize % 512,
            CountSel::Fit => fit,
            CountSel::FitMinus(k) => fit - k as usize % fit.max(1),
            CountSel::Over(k) => fit + 1 + k as usize,
            CountSel::Huge(h) => [
                usize::MAX,
                usize::MAX / 2,
                CAP + 1,
                1 << 40,
                usize::MAX - 255,
            ][h as usize % 5],
        }
    }

    pub(crate) fn size(s: SizeSel, host: bool) -> usize {
        match s {
            SizeSel::Zero => 0,
            SizeSel::Small(n) => 1 + n as usize % 4096,
            SizeSel::Medium(n) if !host => 4097 + n as usize % 60_000,
            // n = 0 is exactly 1 MiB; others run from 1 MiB + 1 to 3 MiB, odd sizes included.
            SizeSel::Large(n) if !host => MIB + (n as usize * 37) % (2 * MIB),
            SizeSel::Big(k) if !host => {
                [CAP / 4, CAP / 3, CAP / 2, CAP - 4096, CAP][k as usize % 5]
            }
            SizeSel::Huge(k) if !host => [
                usize::MAX,
                CAP + 1,
                usize::MAX - 100,
                1 << 62,
                isize::MAX as usize,
            ][k as usize % 5],
            SizeSel::Huge(k) => [usize::MAX, usize::MAX - 100, 1 << 62][k as usize % 3],
            SizeSel::Medium(n) | SizeSel::Large(n) => 1 + n as usize % 4096,
            SizeSel::Big(n) => 1 + n as usize * 16,
        }
    }

    /// A valid region of a live, tracked device allocation: (object, offset, length).
    pub(crate) fn dev_region(&self, r: Region) -> Option<(ObjId, usize, usize)> {
        let list = self.objs_where(|o| o.kind == ObjKind::Device && o.live && o.data.is_some());
        let o = Self::pick(&list, r.obj)?;
        let size = self.objs[o].size;
        let off = r.off as usize % size;
        let len = 1 + r.len as usize % (size - off);
        Some((o, off, len))
    }

    // ---- the graph ----

    pub(crate) fn preds(&self, v: NodeId) -> Vec<NodeId> {
        let n = &self.nodes[v];
        let mut p = n.deps.clone();
        if let Some(r) = n.future.and_then(|f| self.futs[f].resolved) {
            p.push(r);
        }
        p
    }

    pub(crate) fn is_blocking(&self, k: usize) -> bool {
        k != 0 && self.streams[k].flags & birenStreamNonBlocking == 0
    }

    /// The dependencies of a new op in stream k: its stream's tail and the default-stream rules.
    pub(crate) fn new_deps(&self, k: usize) -> Vec<NodeId> {
        let mut d: Vec<NodeId> = self.streams[k].tail.into_iter().collect();
        if k == 0 {
            for j in 1..self.streams.len() {
                if self.is_blocking(j) {
                    d.extend(self.streams[j].tail);
                }
            }
        } else if self.is_blocking(k) {
            d.extend(self.streams[0].tail);
        }
        d
    }

    pub(crate) fn push_node(
        &mut self,
        k: usize,
        write: Option<Write>,
        extra: &[NodeId],
        future: Option<usize>,
    ) -> NodeId {
        let mut deps = self.new_deps(k);
        deps.extend_from_slice(extra);
        let id = self.nodes.len();
        self.nodes.push(Node {
            deps,
            future,
            write,
            host_job: None,
            complete: false,
        });
        self.streams[k].tail = Some(id);
        id
    }

    /// Some op in the ancestry of `starts` (inclusive) waits for a future that is unresolved.
    pub(crate) fn blocked(&self, starts: &[NodeId]) -> bool {
        let mut seen = vec![false; self.nodes.len()];
        let mut stack = starts.to_vec();
        while let Some(v) = stack.pop() {
            if seen[v] || self.nodes[v].complete {
                continue;
            }
            seen[v] = true;
            if let Some(f) = self.nodes[v].future {
                if self.futs[f].resolved.is_none() {
                    return true;
                }
            }
            stack.extend(self.preds(v));
        }
        false
    }

    /// One of `targets` is in the ancestry of `starts` (inclusive).
    pub(crate) fn reaches(&self, starts: &[NodeId], targets: &[NodeId]) -> bool {
        let mut seen = vec![false; self.nodes.len()];
        let mut stack = starts.to_vec();
        while let Some(v) = stack.pop() {
            if seen[v] {
                continue;
            }
            seen[v] = true;
            if targets.contains(&v) {
                return true;
            }
            stack.extend(self.preds(v));
        }
        false
    }

    pub(crate) fn mark_complete(&mut self, starts: &[NodeId]) {
        let mut stack = starts.to_vec();
        while let Some(v) = stack.pop() {
            if self.nodes[v].complete {
                continue;
            }
            self.nodes[v].complete = true;
            stack.extend(self.preds(v));
        }
    }

    pub(crate) fn tail_pending(&self, k: usize) -> Option<NodeId> {
        self.streams[k].tail.filter(|&t| !self.nodes[t].complete)
    }

    /// Evaluates the graph into the objects' contents (see the module doc).
    pub(crate) fn settle(&mut self, quiescent: bool) -> Res {
        let n = self.nodes.len();
        let preds: Vec<Vec<NodeId>> = (0..n).map(|v| self.preds(v)).collect();
        // Topological order (the model never lets a cycle in).
        let mut order = Vec::with_capacity(n);
        let mut mark = vec![0u8; n];
        for s in 0..n {
            let mut stack = vec![(s, false)];
            while let Some((v, done)) = stack.pop() {
                if done {
                    mark[v] = 2;
                    order.push(v);
                    continue;
                }
                if mark[v] != 0 {
                    self.ensure(mark[v] == 2, || "model: the graph has a cycle".into())?;
                    continue;
                }
                mark[v] = 1;
                stack.push((v, true));
                for &p in &preds[v] {
                    if mark[p] == 0 {
                        stack.push((p, false));
                    } else {
                        self.ensure(mark[p] == 2, || "model: the graph has a cycle".into())?;
                    }
                }
            }
        }
        let mut anc: Vec<Bits> = (0..n).map(|_| Bits::new(n)).collect();
        for &v in &order {
            for &p in &preds[v] {
                let (a, b) = if p < v {
                    let (l, r) = anc.split_at_mut(v);
                    (&mut r[0], &l[p])
                } else {
                    let (l, r) = anc.split_at_mut(p);
                    (&mut l[v], &r[0])
                };
                a.union(b);
                a.set(p);
            }
        }
        let ran: Vec<Ran> = (0..n)
            .map(|v| {
                if quiescent || self.nodes[v].complete {
                    Ran::Yes
                } else if self.blocked(&[v]) {
                    Ran::No
                } else {
                    Ran::Maybe
                }
            })
            .collect();
        if quiescent {
            self.ensure((0..n).all(|v| !self.blocked(&[v])), || {
                "model: blocked work at a quiescent point".into()
            })?;
        }
        // Races: pairs of unordered ops with conflicting footprints.
        let writers: Vec<NodeId> = (0..n)
            .filter(|&v| self.nodes[v].write.is_some() && ran[v] != Ran::No)
            .collect();
        let mut taint: Vec<Vec<(usize, usize)>> = vec![Vec::new(); n];
        for (i, &a) in writers.iter().enumerate() {
            for &b in &writers[i + 1..] {
                if anc[a].get(b) || anc[b].get(a) {
                    continue;
                }
                let (wa, wb) = (
                    self.nodes[a].write.as_ref().unwrap(),
                    self.nodes[b].write.as_ref().unwrap(),
                );
                if wa.dst == wb.dst {
                    if let Some(r) = overlap((wa.off, wa.off + wa.len), (wb.off, wb.off + wb.len)) {
                        taint[a].push(r);
                        taint[b].push(r);
                    }
                }
                for (x, wx, wy) in [(a, wa, wb), (b, wb, wa)] {
                    if let Src::Copy(so, soff) = wx.src {
                        if so == wy.dst {
                            if let Some((s, e)) =
                                overlap((soff, soff + wx.len), (wy.off, wy.off + wy.len))
                            {
                                taint[x].push((wx.off + s - soff, wx.off + e - soff));
                            }
                        }
                    }
                }
            }
        }
        for &v in &order {
            if ran[v] == Ran::No {
                continue;
            }
            let Some(w) = self.nodes[v].write.clone() else {
                continue;
            };
            let mut bytes: Vec<Option<u8>> = match &w.src {
                Src::Const(c) => vec![Some(*c); w.len],
                Src::Pattern(b) => (0..w.len).map(|i| Some(b.wrapping_add(i as u8))).collect(),
                Src::Bytes(bs) => bs.iter().map(|&b| Some(b)).collect(),
                Src::Copy(so, soff) => match &self.objs[*so].data {
                    Some(d) => d[*soff..*soff + w.len].to_vec(),
                    None => vec![None; w.len],
                },
            };
            if ran[v] == Ran::Maybe {
                bytes.iter_mut().for_each(|b| *b = None);
            }
            for &(s, e) in &taint[v] {
                bytes[s - w.off..e - w.off]
                    .iter_mut()
                    .for_each(|b| *b = None);
            }
            if let Some(d) = &mut self.objs[w.dst].data {
                d[w.off..w.off + w.len].copy_from_slice(&bytes);
            }
        }
        // Host functions that ran must have found synchronizing calls refused.
        for (node, &r) in self.nodes.iter().zip(&ran) {
            if let (Some(j), Ran::Yes) = (node.host_job, r) {
                let job = &self.jobs[j];
                let (r, p) = (job.ran.load(SeqCst), job.probe.load(SeqCst));
                self.ensure(r && p == BIREN_ERROR_NOT_PERMITTED as i32, || {
                    format!("host function #{j}: ran={r}, birenStreamSynchronize inside it returned {p} (expected NOT_PERMITTED = 14)")
                })?;
            }
        }
        Ok(())
    }

    /// Compares an object's known bytes with `actual`, then learns `actual`.
    pub(crate) fn compare(&mut self, o: ObjId, actual: &[u8], when: &str) -> Res {
        let ob = &self.objs[o];
        if let Some(d) = &ob.data {
            stat(
                format!("bytes compared ({when})"),
                d.iter().filter(|b| b.is_some()).count() as u64,
            );
            stat(
                format!("bytes not known ({when})"),
                d.iter().filter(|b| b.is_none()).count() as u64,
            );
            let bad: Vec<usize> = (0..ob.size)
                .filter(|&i| d[i].is_some_and(|b| b != actual[i]))
                .collect();
            if !bad.is_empty() {
                let show: Vec<String> = bad
                    .iter()
                    .take(8)
                    .map(|&i| {
                        format!(
                            "[{i}] expected {:#04x} got {:#04x}",
                            d[i].unwrap(),
                            actual[i]
                        )
                    })
                    .collect();
                return Err(self.fail(format!(
                    "{when}: contents of the {:?} object #{o} ({} bytes at {:#x}) differ from the model in {} bytes: {}",
                    ob.kind,
                    ob.size,
                    ob.base,
                    bad.len(),
                    show.join(", ")
                )));
            }
        }
        if let Some(d) = &mut self.objs[o].data {
            d.iter_mut().zip(actual).for_each(|(m, &a)| *m = Some(a));
        }
        Ok(())
    }

    pub(crate) fn host_bytes(&self, o: ObjId) -> Vec<u8> {
        let ob = &self.objs[o];
        unsafe { std::slice::from_raw_parts(ob.base as *const u8, ob.size) }.to_vec()
    }

    /// After a successful birenDeviceSynchronize: everything ran. Check all contents, then start
    /// a fresh graph from the real contents.
    pub(crate) fn quiescent_check(&mut self, when: &str) -> Res {
        self.settle(true)?;
        for o in self.objs_where(|o| o.kind == ObjKind::Device && o.live && o.data.is_some()) {
            let size = self.objs[o].size;
            let mut buf = vec![0u8; size];
            let r = birenMemcpy(
                buf.as_mut_ptr() as *mut c_void,
                self.objs[o].base as *const c_void,
                size,
                2,
            );
            self.check(
                format!("readback birenMemcpy(D2H, #{o}, {size})"),
                r,
                &[BIREN_SUCCESS],
            )?;
            self.compare(o, &buf, when)?;
        }
        for o in self.host_objs() {
            let actual = self.host_bytes(o);
            self.compare(o, &actual, when)?;
        }
        for o in &mut self.objs {
            if !o.live {
                o.data = None;
            }
        }
        self.ensure(self.futs.iter().all(|f| f.resolved.is_some()), || {
            "model: unresolved future at a quiescent point".into()
        })?;
        self.nodes.clear();
        self.futs.clear();
        self.deferred.clear();
        for s in &mut self.streams {
            s.tail = None;
        }
        for e in &mut self.events {
            e.future = None;
            if e.latest.is_some() {
                e.latest = Some(Rec::Done);
            }
        }
        Ok(())
    }

    /// After birenDeviceReset: host buffers hold what the ops that surely ran wrote.
    pub(crate) fn reset_model(&mut self) -> Res {
        self.settle(false)?;
        for o in self.host_objs() {
            let actual = self.host_bytes(o);
            self.compare(o, &actual, "after birenDeviceReset")?;
        }
        for o in &mut self.objs {
            if o.kind == ObjKind::Device {
                o.live = false;
                o.data = None;
            }
        }
        for s in &mut self.streams[1..] {
            s.live = false;
        }
        for s in &mut self.streams {
            s.tail = None;
        }
        for e in &mut self.events {
            e.live = false;
            e.future = None;
        }
        self.nodes.clear();
        self.futs.clear();
        self.deferred.clear();
        self.policy = None;
        self.sticky = false;
        Ok(())
    }

    // ---- memory accounting ----

    pub(crate) fn live_exact(&self) -> usize {
        self.live_dev().iter().map(|&o| self.objs[o].size).sum()
    }

    pub(crate) fn live_rounded(&self) -> usize {
        self.live_dev()
            .iter()
            .map(|&o| round256(self.objs[o].size).unwrap())
            .sum()
    }

    /// Bytes freed while work that may use them was pending and perhaps not released yet.
    /// Memory whose work is known complete (a synchronize covered it) is free.
    pub(crate) fn deferred_bytes(&self) -> usize {
        self.deferred
            .iter()
            .filter(|d| d.until.iter().any(|&t| !self.nodes[t].complete))
            .map(|d| d.bytes)
            .sum()
    }

    // ---- copies and fills ----

    /// The faults of one side of a copy (device side: by lookup; host side: NULL, wrap-around, and
    /// overrunning a known allocation it touches).
    pub(crate) fn side_faults(&self, p: usize, count: usize, device: bool, errs: &mut Vec<Code>) {
        if p == 0 {
            errs.push(BIREN_ERROR_INVALID_VALUE);
        } else if device {
            match self.find_dev(p) {
                None => errs.push(BIREN_ERROR_INVALID_DEVICE_POINTER),
                Some(o) => {
                    if p.checked_add(count).is_none_or(|e| e > self.objs[o].end()) {
                        errs.push(BIREN_ERROR_OUT_OF_BOUNDS);
                    }
                }
            }
        } else if p.checked_add(count).is_none() {
            errs.push(BIREN_ERROR_INVALID_VALUE);
        } else {
            // A host side that touches a known allocation (device or page-locked) must lie in it.
            let end = p + count;
            let overruns = self.objs.iter().any(|o| {
                o.live
                    && o.kind != ObjKind::Pool
                    && p < o.end()
                    && o.base < end
                    && !(o.base <= p && end <= o.end())
            });
            if overruns {
                errs.push(BIREN_ERROR_OUT_OF_BOUNDS);
            }
        }
    }

    /// Runs the model's side of an enqueue of `write` (None: nothing to write) on stream `k`,
    /// synchronous or not, and returns the accepted codes.
    pub(crate) fn enqueue_expect(&self, k: usize, sync: bool) -> Vec<Code> {
        if sync && self.blocked(&self.new_deps(k)) {
            vec![BIREN_ERROR_DEADLOCK]
        } else {
            vec![BIREN_SUCCESS]
        }
    }

    pub(crate) fn enqueue_apply(&mut self, k: usize, write: Option<Write>, sync: bool) -> NodeId {
        let id = self.push_node(k, write, &[], None);
        if sync {
            self.mark_complete(&[id]);
        }
        id
    }

    // ---- the steps ----

    pub(crate) fn step(&mut self, a: &Action) -> Res {
        match self.step_inner(a) {
            Err(e) if e == STICKY => Ok(()),
            r => r,
        }
    }

    pub(crate) fn trap(&mut self, s: SRef) -> Res {
        if self.sticky || (0..self.nodes.len()).any(|v| self.blocked(&[v])) {
            self.note("trap skipped: the device is stalled or already failed".into());
            return Ok(());
        }
        let h = self.stream_handle(s);
        let k = self.stream_of(h);
        let one = Dim3::new(1, 1, 1);
        let lines = TRAP_LINES.load(SeqCst);
        let r = birenLaunchKernelArgs(
            Some(trap_kernel),
            one,
            one,
            null_mut(),
            std::ptr::null(),
            0,
            0,
            h as birenStream_t,
        );
        let ok = if k.is_some() {
            BIREN_SUCCESS
        } else {
            BIREN_ERROR_INVALID_HANDLE
        };
        self.check(
            format!("birenLaunchKernelArgs(trap, stream {h:#x})"),
            r,
            &[ok],
        )?;
        if r != BIREN_SUCCESS {
            return Ok(());
        }
        self.enqueue_apply(k.unwrap(), None, false);
        let r = birenDeviceSynchronize();
        self.check(
            "birenDeviceSynchronize() [after trap]".into(),
            r,
            &[BIREN_ERROR_LAUNCH_FAILURE],
        )?;
        self.sticky = true;
        self.ensure(TRAP_LINES.load(SeqCst) > lines, || {
            "the trap was not reported to the validator callback".into()
        })
    }

    pub(crate) fn step_inner(&mut self, a: &Action) -> Res {
        match *a {
            Action::Trap(s) => self.trap(s),
            Action::Malloc { size, null_out } => self.malloc(Self::size(size, false), null_out),
            Action::Free { ptr } => self.free(self.ptr_any(ptr)),
            Action::MallocHost { size, null_out } => {
                self.malloc_host(Self::size(size, true), null_out)
            }
            Action::FreeHost { ptr } => self.free_host(self.ptr_any(ptr)),
            Action::Memcpy {
                dst,
                src,
                count,
                kind,
                stream,
            } => self.memcpy(dst, src, count, kind, stream),
            Action::Memset {
                ptr,
                value,
                count,
                stream,
            } => self.memset(ptr, value, count, stream),
            Action::Launch(spec) => self.launch(spec),
            Action::HostFunc {
                stream,
                dst,
                val,
                null_fn,
            } => self.host_func(stream, dst, val, null_fn),
            Action::StreamCreate(how) => self.stream_create(how),
            Action::StreamDestroy(s) => {
                let h = self.stream_handle(s);
                let r = birenStreamDestroy(h as birenStream_t);
                match self.stream_of(h).filter(|&k| k != 0) {
                    Some(k) => {
                        self.check(format!("birenStreamDestroy({h:#x})"), r, &[BIREN_SUCCESS])?;
                        self.streams[k].live = false;
                        Ok(())
                    }
                    None => self.check(
                        format!("birenStreamDestroy({h:#x})"),
                        r,
                        &[BIREN_ERROR_INVALID_HANDLE],
                    ),
                }
            }
            Action::StreamSync(s) => {
                let h = self.stream_handle(s);
                let r = birenStreamSynchronize(h as birenStream_t);
                let what = format!("birenStreamSynchronize({h:#x})");
                match self.stream_of(h) {
                    None => self.check(what, r, &[BIREN_ERROR_INVALID_HANDLE]),
                    Some(k) => match self.tail_pending(k) {
                        None => self.check(what, r, &[BIREN_SUCCESS]),
                        Some(t) if self.blocked(&[t]) => {
                            self.check(what, r, &[BIREN_ERROR_DEADLOCK])
                        }
                        Some(t) => {
                            self.check(what, r, &[BIREN_SUCCESS])?;
                            self.mark_complete(&[t]);
                            Ok(())
                        }
                    },
                }
            }
            Action::StreamQuery(s) => {
                let h = self.stream_handle(s);
                let r = birenStreamQuery(h as birenStream_t);
                let what = format!("birenStreamQuery({h:#x})");
                match self.stream_of(h) {
                    None => self.check(what, r, &[BIREN_ERROR_INVALID_HANDLE]),
                    Some(k) => match self.tail_pending(k) {
                        None => self.check(what, r, &[BIREN_SUCCESS]),
                        Some(t) if self.blocked(&[t]) => {
                            self.check(what, r, &[BIREN_ERROR_NOT_READY])
                        }
                        Some(t) => {
                            self.check(what, r, &[BIREN_SUCCESS, BIREN_ERROR_NOT_READY])?;
                            if r == BIREN_SUCCESS {
                                self.mark_complete(&[t]);
                            }
                            Ok(())
                        }
                    },
                }
            }
            Action::StreamGetInfo { s, null_out } => {
                let h = self.stream_handle(s);
                let mut prio: c_int = 77;
                let mut flags: c_uint = 77;
                let (pp, pf) = if null_out {
                    (null_mut(), null_mut())
                } else {
                    (&mut prio as *mut c_int, &mut flags as *mut c_uint)
                };
                let r1 = birenStreamGetPriority(h as birenStream_t, pp);
                let r2 = birenStreamGetFlags(h as birenStream_t, pf);
                let mut errs = Vec::new();
                let k = self.stream_of(h);
                if k.is_none() {
                    errs.push(BIREN_ERROR_INVALID_HANDLE);
                }
                if null_out {
                    errs.push(BIREN_ERROR_INVALID_VALUE);
                }
                let ok = if errs.is_empty() {
                    vec![BIREN_SUCCESS]
                } else {
                    errs
                };
                self.check(format!("birenStreamGetPriority({h:#x})"), r1, &ok)?;
                self.check(format!("birenStreamGetFlags({h:#x})"), r2, &ok)?;
                if let (Some(k), false) = (k, null_out) {
                    let (ep, ef) = (self.streams[k].prio, self.streams[k].flags);
                    self.ensure(prio == ep && flags == ef, || {
                        format!("stream {h:#x}: priority {prio} flags {flags}, expected {ep} {ef}")
                    })?;
                } else {
                    self.ensure(prio == 77 && flags == 77, || {
                        "out-parameter written on failure".into()
                    })?;
                }
                Ok(())
            }
            Action::EventCreate { flags, null_out } => self.event_create(flags, null_out),
            Action::EventDestroy(e) => {
                let h = self.event_handle(e);
                let r = birenEventDestroy(h as birenEvent_t);
                match self.event_of(h) {
                    Some(k) => {
                        self.check(format!("birenEventDestroy({h:#x})"), r, &[BIREN_SUCCESS])?;
                        self.events[k].live = false;
                        // Streams waiting for its first record stop waiting.
                        if let Some(f) = self.events[k].future.take() {
                            let id = self.nodes.len();
                            self.nodes.push(Node {
                                deps: Vec::new(),
                                future: None,
                                write: None,
                                host_job: None,
                                complete: true,
                            });
                            self.futs[f].resolved = Some(id);
                        }
                        Ok(())
                    }
                    None => self.check(
                        format!("birenEventDestroy({h:#x})"),
                        r,
                        &[BIREN_ERROR_INVALID_HANDLE],
                    ),
                }
            }
            Action::EventRecord { e, s } => self.record(e, s),
            Action::EventQuery(e) => {
                let h = self.event_handle(e);
                let r = birenEventQuery(h as birenEvent_t);
                let what = format!("birenEventQuery({h:#x})");
                match self.event_of(h) {
                    None => self.check(what, r, &[BIREN_ERROR_INVALID_HANDLE]),
                    Some(k) => match self.events[k].latest {
                        Some(Rec::Node(t)) if !self.nodes[t].complete => {
                            if self.blocked(&[t]) {
                                self.check(what, r, &[BIREN_ERROR_NOT_READY])
                            } else {
                                self.check(what, r, &[BIREN_SUCCESS, BIREN_ERROR_NOT_READY])?;
                                if r == BIREN_SUCCESS {
                                    self.mark_complete(&[t]);
                                }
                                Ok(())
                            }
                        }
                        _ => self.check(what, r, &[BIREN_SUCCESS]),
                    },
                }
            }
            Action::EventSync(e) => {
                let h = self.event_handle(e);
                let r = birenEventSynchronize(h as birenEvent_t);
                let what = format!("birenEventSynchronize({h:#x})");
                match self.event_of(h) {
                    None => self.check(what, r, &[BIREN_ERROR_INVALID_HANDLE]),
                    Some(k) => match self.events[k].latest {
                        Some(Rec::Node(t)) if !self.nodes[t].complete => {
                            if self.blocked(&[t]) {
                                self.check(what, r, &[BIREN_ERROR_DEADLOCK])
                            } else {
                                self.check(what, r, &[BIREN_SUCCESS])?;
                                self.mark_complete(&[t]);
                                Ok(())
                            }
                        }
                        _ => self.check(what, r, &[BIREN_SUCCESS]),
                    },
                }
            }
            Action::EventElapsed { a, b, null_out } => self.elapsed(a, b, null_out),
            Action::WaitEvent { s, e } => self.wait_event(s, e),
            Action::DeviceSync => self.device_sync(),
            Action::DeviceReset => {
                let r = birenDeviceReset();
                self.check("birenDeviceReset()".into(), r, &[BIREN_SUCCESS])?;
                self.reset_model()
            }
            Action::Policy { set, null_out } => self.policy(set, null_out),
            Action::Device {
                which,
                arg,
                null_out,
            } => self.device(which, arg, null_out),
            Action::PointerAttr { ptr, null_out } => self.pointer_attr(self.ptr_any(ptr), null_out),
            Action::MemGetInfo { null_out } => {
                let (mut free, mut total) = (SENTINEL, SENTINEL);
                let pf = if null_out == 1 {
                    null_mut()
                } else {
                    &mut free as *mut usize
                };
                let pt = if null_out == 2 {
                    null_mut()
                } else {
                    &mut total as *mut usize
                };
                let r = birenMemGetInfo(pf, pt);
                if null_out == 1 || null_out == 2 {
                    self.check(
                        "birenMemGetInfo(NULL)".into(),
                        r,
                        &[BIREN_ERROR_INVALID_VALUE],
                    )?;
                    return self.ensure(free == SENTINEL && total == SENTINEL, || {
                        "birenMemGetInfo wrote on failure".into()
                    });
                }
                self.check("birenMemGetInfo".into(), r, &[BIREN_SUCCESS])?;
                let hi = CAP - self.live_exact();
                // With the validator on, freed memory sits in quarantine (up to 8 MiB) and still
                // counts as used (not in the header: see the report).
                let quarantine = if validator_run() { 8 << 20 } else { 0 };
                let lo =
                    CAP.saturating_sub(self.live_rounded() + self.deferred_bytes() + quarantine);
                self.ensure(total == CAP && lo <= free && free <= hi, || {
                    format!("birenMemGetInfo: free {free} total {total}, expected total {CAP} and free in [{lo}, {hi}]")
                })
            }
            Action::LastError { peek } => {
                let r = if peek {
                    birenPeekAtLastError()
                } else {
                    birenGetLastError()
                };
                let expected = self.last_error;
                self.calls += 1;
                self.note(format!("birenGet/PeekLastError(peek={peek}) -> {r:?}"));
                self.ensure(r == expected, || {
                    format!("last error: expected {expected:?}, got {r:?}")
                })?;
                if !peek {
                    self.last_error = BIREN_SUCCESS;
                }
                Ok(())
            }
            Action::Register(which) => self.register(which),
            Action::Misc(which) => self.misc(which),
        }
    }

    pub(crate) fn malloc(&mut self, size: usize, null_out: bool) -> Res {
        let mut p = SENTINEL as *mut c_void;
        let out = if null_out {
            null_mut()
        } else {
            &mut p as *mut *mut c_void
        };
        let ok: Vec<Code> = if null_out {
            vec![BIREN_ERROR_INVALID_VALUE]
        } else if size == 0 {
            vec![BIREN_SUCCESS]
        } else {
            let (exact, rounded) = (self.live_exact(), self.live_rounded());
            let all_def = self.deferred_bytes();
            // The header lists SUCCESS and OUT_OF_MEMORY only. Freed memory that pending work may
            // still use "counts as used until that work completes" (birenMemGetInfo), so while
            // it may be pending either answer is right (the library may wait for it). Never
            // DEADLOCK: memory held by stalled work is simply not free.
            match round256(size) {
                _ if size > CAP || exact + size > CAP => vec![BIREN_ERROR_OUT_OF_MEMORY],
                Some(r) if rounded + r + all_def <= CAP => vec![BIREN_SUCCESS],
                _ => vec![BIREN_SUCCESS, BIREN_ERROR_OUT_OF_MEMORY],
            }
        };
        let r = birenMalloc(out, size);
        self.check(
            format!(
                "birenMalloc({}, {size})",
                if null_out { "NULL" } else { "&p" }
            ),
            r,
            &ok,
        )?;
        if r != BIREN_SUCCESS {
            return self.ensure(p as usize == SENTINEL, || {
                "birenMalloc wrote *devPtr on failure".into()
            });
        }
        if size == 0 {
            return self.ensure(p.is_null(), || {
                format!("birenMalloc(0) gave {p:?}, expected NULL")
            });
        }
        let p = p as usize;
        self.ensure(p != 0 && p.is_multiple_of(256), || {
            format!("birenMalloc({size}) gave {p:#x}: not 256-byte aligned")
        })?;
        let clash = self.objs.iter().enumerate().find(|(i, o)| {
            let pending = self
                .deferred
                .iter()
                .any(|d| d.obj == *i && self.blocked(&d.until));
            (o.live || pending) && overlap((o.base, o.end()), (p, p + size)).is_some()
        });
        self.ensure(clash.is_none(), || {
            let (i, o) = clash.unwrap();
            format!("birenMalloc({size}) gave {p:#x}, overlapping object #{i} ({:?}, {} bytes at {:#x}, live={})", o.kind, o.size, o.base, o.live)
        })?;
        self.objs.push(Obj {
            kind: ObjKind::Device,
            base: p,
            size,
            data: (size <= TRACK_LIMIT).then(|| vec![None; size]),
            live: true,
        });
        Ok(())
    }

    pub(crate) fn free(&mut self, p: usize) -> Res {
        let r = birenFree(p as *mut c_void);
        let what = format!("birenFree({p:#x})");
        if p == 0 {
            return self.check(what, r, &[BIREN_SUCCESS]);
        }
        match self.find_dev(p).filter(|&o| self.objs[o].base == p) {
            None => self.check(what, r, &[BIREN_ERROR_INVALID_DEVICE_POINTER]),
            Some(o) => {
                self.check(what, r, &[BIREN_SUCCESS])?;
                self.objs[o].live = false;
                let (base, end) = (self.objs[o].base, self.objs[o].end());
                if end - base >= MIB {
                    stat("large blocks (>= 1 MiB) freed".into(), 1);
                    let neighbour = self.objs.iter().any(|n| {
                        n.live
                            && n.kind == ObjKind::Device
                            && n.base >= end
                            && n.base <= (end | 4095)
                    });
                    if neighbour && base.is_multiple_of(4096) {
                        stat(
                            "  ... page-aligned, with a live neighbour in its last page".into(),
                            1,
                        );
                    }
                }
                let until: Vec<NodeId> = (0..self.streams.len())
                    .filter_map(|k| self.tail_pending(k))
                    .collect();
                if !until.is_empty() {
                    let bytes = round256(self.objs[o].size).unwrap();
                    self.deferred.push(Deferred {
                        bytes,
                        obj: o,
                        until,
                    });
                }
                Ok(())
            }
        }
    }

    pub(crate) fn malloc_host(&mut self, size: usize, null_out: bool) -> Res {
        let mut p = SENTINEL as *mut c_void;
        let out = if null_out {
            null_mut()
        } else {
            &mut p as *mut *mut c_void
        };
        let ok = if null_out {
            BIREN_ERROR_INVALID_VALUE
        } else if size > 1 << 40 {
            BIREN_ERROR_OUT_OF_MEMORY
        } else {
            BIREN_SUCCESS
        };
        let r = birenMallocHost(out, size);
        self.check(format!("birenMallocHost({size})"), r, &[ok])?;
        if r != BIREN_SUCCESS {
            return self.ensure(p as usize == SENTINEL, || {
                "birenMallocHost wrote *ptr on failure".into()
            });
        }
        if size == 0 {
            return self.ensure(p.is_null(), || {
                "birenMallocHost(0) did not give NULL".into()
            });
        }
        let p = p as usize;
        self.ensure(p != 0 && self.find_any(p).is_none(), || {
            format!("birenMallocHost gave {p:#x}, inside a live object")
        })?;
        self.objs.push(Obj {
            kind: ObjKind::Pinned,
            base: p,
            size,
            data: Some(vec![None; size]),
            live: true,
        });
        Ok(())
    }

    pub(crate) fn free_host(&mut self, p: usize) -> Res {
        let what = format!("birenFreeHost({p:#x})");
        let target = self
            .find_host(p)
            .filter(|&o| self.objs[o].kind == ObjKind::Pinned && self.objs[o].base == p);
        if let Some(o) = target {
            // Freeing a buffer that pending work still uses is the caller's bug: not generated.
            let used = self.nodes.iter().any(|n| {
                !n.complete
                    && n.write
                        .as_ref()
                        .is_some_and(|w| w.dst == o || matches!(w.src, Src::Copy(s, _) if s == o))
            });
            if used {
                self.note(format!("{what} skipped: pending work uses it"));
                return Ok(());
            }
        }
        let r = birenFreeHost(p as *mut c_void);
        if p == 0 {
            return self.check(what, r, &[BIREN_SUCCESS]);
        }
        match target {
            Some(o) => {
                self.check(what, r, &[BIREN_SUCCESS])?;
                self.objs[o].live = false;
                self.objs[o].data = None;
                Ok(())
            }
            None => self.check(what, r, &[BIREN_ERROR_INVALID_VALUE]),
        }
    }

    pub(crate) fn memcpy(
        &mut self,
        dst: PtrRef,
        src: PtrRef,
        count: CountSel,
        kind: i32,
        stream: Option<SRef>,
    ) -> Res {
        // Which sides the kind says are host memory: those must be real host buffers.
        let (d, s) = match kind {
            0 => (self.ptr_host(dst), self.ptr_host(src)),
            1 => (self.ptr_any(dst), self.ptr_host(src)),
            2 => (self.ptr_host(dst), self.ptr_any(src)),
            4 => {
                let known = |p: usize| if self.find_any(p).is_some() { p } else { 0 };
                (known(self.ptr_any(dst)), known(self.ptr_any(src)))
            }
            _ => (self.ptr_any(dst), self.ptr_any(src)),
        };
        let n = self.count(count, &[d, s]);
        let h = stream.map(|r| self.stream_handle(r));
        let sync = h.is_none();
        let k = match h {
            None => Some(0),
            Some(h) => self.stream_of(h),
        };
        let mut errs = Vec::new();
        if k.is_none() {
            errs.push(BIREN_ERROR_INVALID_HANDLE);
        }
        let (dd, sd) = match kind {
            0 => (false, false),
            1 => (true, false),
            2 => (false, true),
            3 => (true, true),
            4 => (self.find_dev(d).is_some(), self.find_dev(s).is_some()),
            _ => {
                errs.push(BIREN_ERROR_INVALID_MEMCPY_DIRECTION);
                (false, false)
            }
        };
        if (0..=4).contains(&kind) && n > 0 {
            self.side_faults(d, n, dd, &mut errs);
            self.side_faults(s, n, sd, &mut errs);
        }
        let ok = if !errs.is_empty() {
            errs
        } else if n == 0 {
            vec![BIREN_SUCCESS]
        } else {
            // Both sides valid: host sides must lie in buffers of this test (else: not generated).
            let fits = |p: usize| self.room(p).is_some_and(|r| r >= n);
            if !fits(d) || !fits(s) {
                self.note(format!(
                    "birenMemcpy{}({d:#x}, {s:#x}, {n}, {kind}) skipped: host range not ours",
                    if sync { "" } else { "Async" }
                ));
                return Ok(());
            }
            self.enqueue_expect(k.unwrap(), sync)
        };
        let r = match h {
            None => birenMemcpy(d as *mut c_void, s as *const c_void, n, kind),
            Some(h) => birenMemcpyAsync(
                d as *mut c_void,
                s as *const c_void,
                n,
                kind,
                h as birenStream_t,
            ),
        };
        let what = match h {
            None => format!("birenMemcpy({d:#x}, {s:#x}, {n}, {kind})"),
            Some(h) => format!("birenMemcpyAsync({d:#x}, {s:#x}, {n}, {kind}, {h:#x})"),
        };
        self.check(what, r, &ok)?;
        if n > 0 && r == BIREN_SUCCESS {
            let (dobj, sobj) = (self.find_any(d).unwrap(), self.find_any(s).unwrap());
            let w = Write {
                dst: dobj,
                off: d - self.objs[dobj].base,
                len: n,
                src: Src::Copy(sobj, s - self.objs[sobj].base),
            };
            self.enqueue_apply(k.unwrap(), Some(w), sync);
        }
        Ok(())
    }

    pub(crate) fn memset(
        &mut self,
        ptr: PtrRef,
        value: i32,
        count: CountSel,
        stream: Option<SRef>,
    ) -> Res {
        let p = self.ptr_any(ptr);
        let n = self.count(count, &[p]);
        let h = stream.map(|r| self.stream_handle(r));
        let sync = h.is_none();
        let k = match h {
            None => Some(0),
            Some(h) => self.stream_of(h),
        };
        let mut errs = Vec::new();
        if k.is_none() {
            errs.push(BIREN_ERROR_INVALID_HANDLE);
        }
        if n > 0 {
            self.side_faults(p, n, true, &mut errs);
        }
        let ok = if !errs.is_empty() {
            errs
        } else if n == 0 {
            vec![BIREN_SUCCESS]
        } else {
            self.enqueue_expect(k.unwrap(), sync)
        };
        let (r, what) = match h {
            None => (
                birenMemset(p as *mut c_void, value, n),
                format!("birenMemset({p:#x}, {value}, {n})"),
            ),
            Some(h) => (
                birenMemsetAsync(p as *mut c_void, value, n, h as birenStream_t),
                format!("birenMemsetAsync({p:#x}, {value}, {n}, {h:#x})"),
            ),
        };
        self.check(what, r, &ok)?;
        if n > 0 && r == BIREN_SUCCESS {
            let o = self.find_dev(p).unwrap();
            let w = Write {
                dst: o,
                off: p - self.objs[o].base,
                len: n,
                src: Src::Const(value as u8),
            };
            self.enqueue_apply(k.unwrap(), Some(w), sync);
        }
        Ok(())
    }

    pub(crate) fn launch(&mut self, spec: LaunchSpec) -> Res {
        // What the kernel will do, from valid regions only (a kernel that writes out of bounds
        // corrupts the host heap: never generated).
        let dst = self.dev_region(spec.dst);
        let src = self.dev_region(spec.src);
        let mut kernel = spec.kernel;
        let mut write: Option<Write> = None;
        let mut vals = [0u64; 3];
        let mut nargs = 0usize;
        match (kernel, dst) {
            (KSel::Fill, Some((o, off, len))) => {
                vals = [
                    (self.objs[o].base + off) as u64,
                    len as u64,
                    spec.val as u64,
                ];
                nargs = 3;
                write = Some(Write {
                    dst: o,
                    off,
                    len,
                    src: Src::Pattern(spec.val),
                });
            }
            (KSel::Copy, Some((o, off, len))) => match src {
                Some((so, soff, slen))
                    if !(so == o
                        && overlap((off, off + len.min(slen)), (soff, soff + len.min(slen)))
                            .is_some()) =>
                {
                    let len = len.min(slen);
                    vals = [
                        (self.objs[o].base + off) as u64,
                        (self.objs[so].base + soff) as u64,
                        len as u64,
                    ];
                    nargs = 3;
                    write = Some(Write {
                        dst: o,
                        off,
                        len,
                        src: Src::Copy(so, soff),
                    });
                }
                _ => {
                    kernel = KSel::Fill;
                    vals = [
                        (self.objs[o].base + off) as u64,
                        len as u64,
                        spec.val as u64,
                    ];
                    nargs = 3;
                    write = Some(Write {
                        dst: o,
                        off,
                        len,
                        src: Src::Pattern(spec.val),
                    });
                }
            },
            (KSel::Probe, Some((o, off, len))) if len >= 2 => {
                vals[0] = (self.objs[o].base + off) as u64;
                nargs = 1;
                let b = BIREN_ERROR_NOT_PERMITTED as i32 as u8;
                write = Some(Write {
                    dst: o,
                    off,
                    len: 2,
                    src: Src::Bytes(vec![b, b]),
                });
            }
            (KSel::Null, _) => {}
            _ => kernel = KSel::Nop,
        }
        let mut how = spec.how;
        if let How::BadArgs(_) = how {
            if !matches!(kernel, KSel::Null) {
                kernel = KSel::Nop;
            }
            write = None;
        }
        if matches!(how, How::Registered) && !matches!(kernel, KSel::Fill) {
            how = How::Sized;
        }
        let kfn: birenKernel_t = match kernel {
            KSel::Fill => Some(fill_kernel),
            KSel::Copy => Some(copy_kernel),
            KSel::Probe => Some(probe_kernel),
            KSel::Nop => Some(nop_kernel),
            KSel::Null => None,
        };
        let (grid, block, shared) = match spec.cfg {
            CfgSel::Ok {
                gx,
                gy,
                bx,
                by,
                bz,
                shared,
            } => (
                Dim3::new(gx as u32, gy as u32, 1),
                Dim3::new(bx as u32, by as u32, bz as u32),
                if shared { 1024 } else { 0 },
            ),
            CfgSel::Bad(b) => {
                let one = Dim3::new(1, 1, 1);
                match b {
                    0 => (Dim3::new(0, 1, 1), one, 0),
                    1 => (one, Dim3::new(0, 1, 1), 0),
                    2 => (one, Dim3::new(1025, 1, 1), 0),
                    3 => (one, Dim3::new(32, 32, 2), 0),
                    4 => (one, Dim3::new(1, 1, 65), 0),
                    5 => (Dim3::new(1, 65536, 1), one, 0),
                    6 => (Dim3::new(1 << 31, 1, 1), one, 0),
                    7 => (one, one, 48 * 1024 + 1),
                    _ => (Dim3::new(1, 1, 0), one, 0),
                }
            }
        };
        let h = self.stream_handle(spec.stream);
        let k = self.stream_of(h);
        let mut errs = Vec::new();
        if kfn.is_none() {
            errs.push(BIREN_ERROR_INVALID_VALUE);
        }
        if matches!(spec.cfg, CfgSel::Bad(_)) {
            errs.push(BIREN_ERROR_INVALID_CONFIGURATION);
        }
        if k.is_none() {
            errs.push(BIREN_ERROR_INVALID_HANDLE);
        }
        if let How::BadArgs(_) = how {
            errs.push(BIREN_ERROR_INVALID_VALUE);
        }
        let ok = if errs.is_empty() {
            vec![BIREN_SUCCESS]
        } else {
            errs
        };
        let stream = h as birenStream_t;
        let sizes = [8usize; 3];
        let (r, what) = match how {
            How::Sized => {
                let mut v = vals;
                let mut ptrs: Vec<*mut c_void> =
                    v.iter_mut().map(|x| x as *mut u64 as *mut c_void).collect();
                let r = birenLaunchKernelArgs(
                    kfn,
                    grid,
                    block,
                    ptrs.as_mut_ptr(),
                    sizes.as_ptr(),
                    nargs as c_uint,
                    shared,
                    stream,
                );
                // The values are copied at launch: scribbling over them now must not matter.
                v = [0xdead; 3];
                let _ = v;
                (r, "birenLaunchKernelArgs")
            }
            How::Registered => {
                let mut v = vals;
                let mut ptrs: Vec<*mut c_void> =
                    v.iter_mut().map(|x| x as *mut u64 as *mut c_void).collect();
                let r = birenLaunchKernel(kfn, grid, block, ptrs.as_mut_ptr(), shared, stream);
                ptrs.iter_mut().for_each(|p| *p = null_mut());
                (r, "birenLaunchKernel(registered)")
            }
            How::ByRef => {
                let mut b = Box::new(ByRefArgs {
                    vals,
                    ptrs: [null_mut(); 3],
                });
                for i in 0..3 {
                    b.ptrs[i] = &mut b.vals[i] as *mut u64 as *mut c_void;
                }
                let args = if matches!(kernel, KSel::Nop) {
                    null_mut()
                } else {
                    b.ptrs.as_mut_ptr()
                };
                let r = birenLaunchKernel(kfn, grid, block, args, shared, stream);
                self.byref.push(b);
                (r, "birenLaunchKernel(by reference)")
            }
            How::BadArgs(w) => {
                let mut zeros = vec![0u64; 300];
                let mut ptrs: Vec<*mut c_void> = zeros
                    .iter_mut()
                    .map(|x| x as *mut u64 as *mut c_void)
                    .collect();
                let big_sizes = vec![8usize; 300];
                let r = match w {
                    0 => birenLaunchKernelArgs(
                        kfn,
                        grid,
                        block,
                        ptrs.as_mut_ptr(),
                        big_sizes.as_ptr(),
                        300,
                        shared,
                        stream,
                    ),
                    1 => birenLaunchKernelArgs(
                        kfn,
                        grid,
                        block,
                        null_mut(),
                        big_sizes.as_ptr(),
                        3,
                        shared,
                        stream,
                    ),
                    2 => birenLaunchKernelArgs(
                        kfn,
                        grid,
                        block,
                        ptrs.as_mut_ptr(),
                        std::ptr::null(),
                        3,
                        shared,
                        stream,
                    ),
                    _ => {
                        ptrs[1] = null_mut();
                        birenLaunchKernelArgs(
                            kfn,
                            grid,
                            block,
                            ptrs.as_mut_ptr(),
                            big_sizes.as_ptr(),
                            3,
                            shared,
                            stream,
                        )
                    }
                };
                (r, "birenLaunchKernelArgs(bad args)")
            }
        };
        self.check(
            format!("{what}({kernel:?}, grid {:?}, block {:?}, shared {shared}, stream {h:#x}) writing {write:?}", (grid.x, grid.y, grid.z), (block.x, block.y, block.z)),
            r,
            &ok,
        )?;
        if r == BIREN_SUCCESS {
            self.enqueue_apply(k.unwrap(), write, false);
        }
        Ok(())
    }

    pub(crate) fn host_func(&mut self, stream: SRef, dst: Region, val: u8, null_fn: bool) -> Res {
        let hosts = self.host_objs();
        let o = Self::pick(&hosts, dst.obj).unwrap();
        let size = self.objs[o].size;
        let off = dst.off as usize % size;
        let len = 1 + dst.len as usize % (size - off);
        let h = self.stream_handle(stream);
        let k = self.stream_of(h);
        let mut errs = Vec::new();
        if k.is_none() {
            errs.push(BIREN_ERROR_INVALID_HANDLE);
        }
        if null_fn {
            errs.push(BIREN_ERROR_INVALID_VALUE);
        }
        let ok = if errs.is_empty() {
            vec![BIREN_SUCCESS]
        } else {
            errs
        };
        let job = Box::new(HostJob {
            dst: self.objs[o].base + off,
            len,
            val,
            ran: AtomicBool::new(false),
            probe: AtomicI32::new(-1),
        });
        let f: birenHostFn_t = if null_fn { None } else { Some(host_job) };
        let r = birenLaunchHostFunc(
            h as birenStream_t,
            f,
            &*job as *const HostJob as *mut c_void,
        );
        self.jobs.push(job);
        self.check(
            format!("birenLaunchHostFunc({h:#x}, fill #{o}[{off}..+{len}] = {val})"),
            r,
            &ok,
        )?;
        if r == BIREN_SUCCESS {
            let id = self.enqueue_apply(
                k.unwrap(),
                Some(Write {
                    dst: o,
                    off,
                    len,
                    src: Src::Const(val),
                }),
                false,
            );
            self.nodes[id].host_job = Some(self.jobs.len() - 1);
        }
        Ok(())
    }

    pub(crate) fn stream_create(&mut self, how: StreamHow) -> Res {
        let mut s = SENTINEL as birenStream_t;
        let out = if matches!(how, StreamHow::NullOut) {
            null_mut()
        } else {
            &mut s as *mut birenStream_t
        };
        let (r, flags, prio, what) = match how {
            StreamHow::Plain => (
                birenStreamCreate(out),
                0,
                0,
                "birenStreamCreate(&s)".to_string(),
            ),
            StreamHow::NullOut => (
                birenStreamCreateWithFlags(out, 1),
                1,
                0,
                "birenStreamCreateWithFlags(NULL, 1)".to_string(),
            ),
            StreamHow::Flags(f) => (
                birenStreamCreateWithFlags(out, f),
                f,
                0,
                format!("birenStreamCreateWithFlags(&s, {f:#x})"),
            ),
            StreamHow::Prio(f, p) => (
                birenStreamCreateWithPriority(out, f, p),
                f,
                p,
                format!("birenStreamCreateWithPriority(&s, {f:#x}, {p})"),
            ),
        };
        let mut errs = Vec::new();
        if out.is_null() {
            errs.push(BIREN_ERROR_INVALID_VALUE);
        }
        if flags & !birenStreamNonBlocking != 0 {
            errs.push(BIREN_ERROR_INVALID_VALUE);
        }
        let ok = if errs.is_empty() {
            vec![BIREN_SUCCESS]
        } else {
            errs
        };
        self.check(what, r, &ok)?;
        let h = s as usize;
        if r != BIREN_SUCCESS {
            return self.ensure(h == SENTINEL, || {
                "stream create wrote *pStream on failure".into()
            });
        }
        self.ensure(
            h != 0 && h != SENTINEL && self.stream_of(h).is_none(),
            || format!("stream create gave handle {h:#x}"),
        )?;
        self.streams.push(MStream {
            handle: h,
            flags,
            prio: prio.clamp(-5, 0),
            live: true,
            tail: None,
        });
        Ok(())
    }

    pub(crate) fn event_create(&mut self, flags: Option<u32>, null_out: bool) -> Res {
        let mut e = SENTINEL as birenEvent_t;
        let out = if null_out {
            null_mut()
        } else {
            &mut e as *mut birenEvent_t
        };
        let r = match flags {
            None => birenEventCreate(out),
            Some(f) => birenEventCreateWithFlags(out, f),
        };
        let f = flags.unwrap_or(0);
        let mut errs = Vec::new();
        if null_out {
            errs.push(BIREN_ERROR_INVALID_VALUE);
        }
        if f & !(birenEventBlockingSync | birenEventDisableTiming) != 0 {
            errs.push(BIREN_ERROR_INVALID_VALUE);
        }
        let ok = if errs.is_empty() {
            vec![BIREN_SUCCESS]
        } else {
            errs
        };
        self.check(
            format!(
                "birenEventCreate{}",
                flags.map_or(String::new(), |f| format!("WithFlags({f:#x})"))
            ),
            r,
            &ok,
        )?;
        let h = e as usize;
        if r != BIREN_SUCCESS {
            return self.ensure(h == SENTINEL, || {
                "event create wrote *event on failure".into()
            });
        }
        self.ensure(
            h != 0 && h != SENTINEL && self.event_of(h).is_none(),
            || format!("event create gave handle {h:#x}"),
        )?;
        self.events.push(MEvent {
            handle: h,
            flags: f,
            live: true,
            latest: None,
            future: None,
        });
        Ok(())
    }

    pub(crate) fn record(&mut self, e: ERef, s: SRef) -> Res {
        let (he, hs) = (self.event_handle(e), self.stream_handle(s));
        let r = birenEventRecord(he as birenEvent_t, hs as birenStream_t);
        let what = format!("birenEventRecord({he:#x}, {hs:#x})");
        let (Some(ev), Some(k)) = (self.event_of(he), self.stream_of(hs)) else {
            return self.check(what, r, &[BIREN_ERROR_INVALID_HANDLE]);
        };
        match self.events[ev].future {
            Some(f) => {
                if self.reaches(&self.new_deps(k), &self.futs[f].waits) {
                    return self.check(what, r, &[BIREN_ERROR_DEADLOCK]);
                }
                self.check(what, r, &[BIREN_SUCCESS])?;
                let id = self.push_node(k, None, &[], None);
                self.futs[f].resolved = Some(id);
                self.events[ev].future = None;
                self.events[ev].latest = Some(Rec::Node(id));
            }
            None => {
                self.check(what, r, &[BIREN_SUCCESS])?;
                let id = self.push_node(k, None, &[], None);
                self.events[ev].latest = Some(Rec::Node(id));
            }
        }
        Ok(())
    }

    pub(crate) fn wait_event(&mut self, s: SRef, e: ERef) -> Res {
        let (hs, he) = (self.stream_handle(s), self.event_handle(e));
        let r = birenStreamWaitEvent(hs as birenStream_t, he as birenEvent_t);
        let what = format!("birenStreamWaitEvent({hs:#x}, {he:#x})");
        let (Some(k), Some(ev)) = (self.stream_of(hs), self.event_of(he)) else {
            return self.check(what, r, &[BIREN_ERROR_INVALID_HANDLE]);
        };
        self.check(what, r, &[BIREN_SUCCESS])?;
        match self.events[ev].latest {
            Some(Rec::Node(t)) => {
                self.push_node(k, None, &[t], None);
            }
            Some(Rec::Done) => {
                self.push_node(k, None, &[], None);
            }
            None => {
                let f = match self.events[ev].future {
                    Some(f) => f,
                    None => {
                        self.futs.push(Fut {
                            resolved: None,
                            waits: Vec::new(),
                        });
                        self.events[ev].future = Some(self.futs.len() - 1);
                        self.futs.len() - 1
                    }
                };
                let id = self.push_node(k, None, &[], Some(f));
                self.futs[f].waits.push(id);
            }
        }
        Ok(())
    }

    pub(crate) fn elapsed(&mut self, a: ERef, b: ERef, null_out: bool) -> Res {
        let (ha, hb) = (self.event_handle(a), self.event_handle(b));
        let mut ms: f32 = -12345.0;
        let out = if null_out {
            null_mut()
        } else {
            &mut ms as *mut f32
        };
        let r = birenEventElapsedTime(out, ha as birenEvent_t, hb as birenEvent_t);
        let what = format!("birenEventElapsedTime({ha:#x}, {hb:#x})");
        let (ea, eb) = (self.event_of(ha), self.event_of(hb));
        let mut errs = Vec::new();
        if ea.is_none() || eb.is_none() {
            errs.push(BIREN_ERROR_INVALID_HANDLE);
        }
        if null_out {
            errs.push(BIREN_ERROR_INVALID_VALUE);
        }
        let mut points = Vec::new();
        for ev in [ea, eb].into_iter().flatten() {
            let e = &self.events[ev];
            if e.flags & birenEventDisableTiming != 0 {
                errs.push(BIREN_ERROR_INVALID_HANDLE);
            }
            match e.latest {
                None => errs.push(BIREN_ERROR_INVALID_HANDLE),
                Some(Rec::Node(t)) if !self.nodes[t].complete => points.push(t),
                Some(_) => {}
            }
        }
        if !errs.is_empty() {
            self.check(what, r, &errs)?;
            return self.ensure(ms == -12345.0, || {
                "birenEventElapsedTime wrote *ms on failure".into()
            });
        }
        if points.is_empty() {
            self.check(what, r, &[BIREN_SUCCESS])?;
        } else if self.blocked(&points) {
            self.check(what, r, &[BIREN_ERROR_NOT_READY])?;
        } else {
            self.check(what, r, &[BIREN_SUCCESS, BIREN_ERROR_NOT_READY])?;
            if r == BIREN_SUCCESS {
                self.mark_complete(&points);
            }
        }
        if r == BIREN_SUCCESS {
            self.ensure(ms.is_finite() && (ha != hb || ms == 0.0), || {
                format!("elapsed time {ms}")
            })
        } else {
            self.ensure(ms == -12345.0, || {
                "birenEventElapsedTime wrote *ms on NOT_READY".into()
            })
        }
    }

    pub(crate) fn device_sync(&mut self) -> Res {
        let r = birenDeviceSynchronize();
        let stalled = (0..self.nodes.len()).any(|v| self.blocked(&[v]));
        if stalled {
            return self.check(
                "birenDeviceSynchronize()".into(),
                r,
                &[BIREN_ERROR_DEADLOCK],
            );
        }
        self.check("birenDeviceSynchronize()".into(), r, &[BIREN_SUCCESS])?;
        self.quiescent_check("after birenDeviceSynchronize")
    }

    pub(crate) fn policy(&mut self, set: Option<i32>, null_out: bool) -> Res {
        match set {
            Some(p) => {
                let r = birenDeviceSetSchedulingPolicy(p);
                let ok = if p == 0 || p == 1 {
                    BIREN_SUCCESS
                } else {
                    BIREN_ERROR_INVALID_VALUE
                };
                self.check(format!("birenDeviceSetSchedulingPolicy({p})"), r, &[ok])?;
                if r == BIREN_SUCCESS {
                    self.policy = Some(p);
                }
                Ok(())
            }
            None => {
                let mut v: c_int = 77;
                let out = if null_out {
                    null_mut()
                } else {
                    &mut v as *mut c_int as *mut birenSchedulingPolicy
                };
                let r = birenDeviceGetSchedulingPolicy(out);
                let ok = if null_out {
                    BIREN_ERROR_INVALID_VALUE
                } else {
                    BIREN_SUCCESS
                };
                self.check("birenDeviceGetSchedulingPolicy".into(), r, &[ok])?;
                if null_out {
                    return Ok(());
                }
                let expected = self.policy;
                self.ensure(
                    (v == 0 || v == 1) && expected.is_none_or(|p| p == v),
                    || format!("scheduling policy {v}, expected {expected:?}"),
                )?;
                self.policy = Some(v);
                Ok(())
            }
        }
    }

    pub(crate) fn device(&mut self, which: u8, arg: i32, null_out: bool) -> Res {
        match which {
            0 => {
                let mut n: c_int = 77;
                let r = birenGetDeviceCount(if null_out { null_mut() } else { &mut n });
                self.check(
                    "birenGetDeviceCount".into(),
                    r,
                    &[if null_out {
                        BIREN_ERROR_INVALID_VALUE
                    } else {
                        BIREN_SUCCESS
                    }],
                )?;
                self.ensure(null_out || n == 1, || format!("device count {n}"))
            }
            1 => {
                let r = birenSetDevice(arg);
                self.check(
                    format!("birenSetDevice({arg})"),
                    r,
                    &[if arg == 0 {
                        BIREN_SUCCESS
                    } else {
                        BIREN_ERROR_INVALID_DEVICE
                    }],
                )
            }
            2 => {
                let mut d: c_int = 77;
                let r = birenGetDevice(if null_out { null_mut() } else { &mut d });
                self.check(
                    "birenGetDevice".into(),
                    r,
                    &[if null_out {
                        BIREN_ERROR_INVALID_VALUE
                    } else {
                        BIREN_SUCCESS
                    }],
                )?;
                self.ensure(null_out || d == 0, || format!("current device {d}"))
            }
            3 => {
                let mut prop: birenDeviceProp = unsafe { std::mem::zeroed() };
                let r =
                    birenGetDeviceProperties(if null_out { null_mut() } else { &mut prop }, arg);
                let mut errs = Vec::new();
                if null_out {
                    errs.push(BIREN_ERROR_INVALID_VALUE);
                }
                if arg != 0 {
                    errs.push(BIREN_ERROR_INVALID_DEVICE);
                }
                let ok = if errs.is_empty() {
                    vec![BIREN_SUCCESS]
                } else {
                    errs
                };
                self.check(format!("birenGetDeviceProperties({arg})"), r, &ok)?;
                if r == BIREN_SUCCESS {
                    let name = unsafe { CStr::from_ptr(prop.name.as_ptr()) };
                    self.ensure(
                        prop.totalGlobalMem == CAP
                            && prop.maxThreadsPerBlock == 1024
                            && prop.maxThreadsDim == [1024, 1024, 64]
                            && prop.maxGridSize == [i32::MAX, 65535, 65535]
                            && prop.multiProcessorCount == 3
                            && prop.sharedMemPerBlock == 48 * 1024
                            && !name.to_bytes().is_empty(),
                        || "birenGetDeviceProperties: unexpected properties".into(),
                    )?;
                }
                Ok(())
            }
            _ => {
                let (mut lo, mut hi): (c_int, c_int) = (77, 77);
                let r = birenDeviceGetStreamPriorityRange(
                    &mut lo,
                    if null_out { null_mut() } else { &mut hi },
                );
                self.check(
                    "birenDeviceGetStreamPriorityRange".into(),
                    r,
                    &[BIREN_SUCCESS],
                )?;
                self.ensure(lo == 0 && hi == if null_out { 77 } else { -5 }, || {
                    format!("priority range {lo} {hi}")
                })
            }
        }
    }

    pub(crate) fn pointer_attr(&mut self, p: usize, null_out: bool) -> Res {
        let mut a = birenPointerAttributes {
            type_: birenMemoryType::birenMemoryTypeHost,
            device: 77,
            devicePointer: SENTINEL as *mut c_void,
            hostPointer: SENTINEL as *mut c_void,
            basePointer: SENTINEL as *mut c_void,
            size: 77,
        };
        let out = if null_out {
            null_mut()
        } else {
            &mut a as *mut birenPointerAttributes
        };
        let r = birenPointerGetAttributes(out, p as *const c_void);
        let what = format!("birenPointerGetAttributes({p:#x})");
        if null_out {
            return self.check(what, r, &[BIREN_ERROR_INVALID_VALUE]);
        }
        self.check(what, r, &[BIREN_SUCCESS])?;
        let t = a.type_ as i32;
        let got = (
            t,
            a.device,
            a.devicePointer as usize,
            a.hostPointer as usize,
            a.basePointer as usize,
            a.size,
        );
        let pinned = self
            .find_host(p)
            .filter(|&o| self.objs[o].kind == ObjKind::Pinned);
        let expected = if let Some(o) = self.find_dev(p) {
            (2, 0, p, 0, self.objs[o].base, self.objs[o].size)
        } else if let Some(o) = pinned {
            (1, -1, 0, p, self.objs[o].base, self.objs[o].size)
        } else {
            (0, -1, 0, 0, 0, 0)
        };
        self.ensure(got == expected, || format!("attributes of {p:#x}: (type, device, devicePointer, hostPointer, base, size) = {got:x?}, expected {expected:x?}"))
    }

    pub(crate) fn register(&mut self, which: u8) -> Res {
        let sizes = vec![8usize; 300];
        let bad = [8usize, 0];
        let big = [8usize, 5000];
        let (r, ok, what) = match which {
            0 => (
                birenKernelRegister(None, null(), 1, sizes.as_ptr()),
                BIREN_ERROR_INVALID_VALUE,
                "NULL kernel",
            ),
            1 => (
                birenKernelRegister(Some(dummy_kernel), null(), 2, bad.as_ptr()),
                BIREN_ERROR_INVALID_VALUE,
                "size 0",
            ),
            2 => (
                birenKernelRegister(Some(dummy_kernel), null(), 2, big.as_ptr()),
                BIREN_ERROR_INVALID_VALUE,
                "size 5000",
            ),
            3 => (
                birenKernelRegister(Some(dummy_kernel), null(), 300, sizes.as_ptr()),
                BIREN_ERROR_INVALID_VALUE,
                "300 args",
            ),
            4 => (
                birenKernelRegister(Some(dummy_kernel), null(), 1, std::ptr::null()),
                BIREN_ERROR_INVALID_VALUE,
                "NULL sizes",
            ),
            5 => (
                birenKernelRegister(Some(fill_kernel), null(), 3, sizes.as_ptr()),
                BIREN_SUCCESS,
                "fill again",
            ),
            _ => (
                birenKernelRegister(Some(dummy_kernel), c"dummy".as_ptr(), 1, sizes.as_ptr()),
                BIREN_SUCCESS,
                "dummy",
            ),
        };
        self.check(format!("birenKernelRegister({what})"), r, &[ok])
    }

    pub(crate) fn misc(&mut self, which: u8) -> Res {
        match which {
            0 => {
                let mut v: c_int = 77;
                let r = birenRuntimeGetVersion(&mut v);
                self.check("birenRuntimeGetVersion".into(), r, &[BIREN_SUCCESS])?;
                self.ensure(v == 1000, || format!("version {v}"))
            }
            1 => {
                let r = birenRuntimeGetVersion(null_mut());
                self.check(
                    "birenRuntimeGetVersion(NULL)".into(),
                    r,
                    &[BIREN_ERROR_INVALID_VALUE],
                )
            }
            _ => {
                self.calls += 1;
                let names = [
                    (0, "BIREN_SUCCESS"),
                    (7, "BIREN_ERROR_OUT_OF_BOUNDS"),
                    (11, "BIREN_ERROR_DEADLOCK"),
                    (999, "BIREN_ERROR_UNKNOWN"),
                    (12345, "BIREN_ERROR_UNRECOGNIZED"),
                    (-1, "BIREN_ERROR_UNRECOGNIZED"),
                ];
                for (c, n) in names {
                    let p = birenGetErrorName(c);
                    let s = birenGetErrorString(c);
                    self.ensure(!p.is_null() && !s.is_null(), || {
                        format!("error name/string of {c} is NULL")
                    })?;
                    let got = unsafe { CStr::from_ptr(p) }
                        .to_str()
                        .unwrap_or("?")
                        .to_string();
                    self.ensure(got == n, || {
                        format!("birenGetErrorName({c}) = {got}, expected {n}")
                    })?;
                }
                Ok(())
            }
        }
    }

    // ---- a case ----

    pub(crate) fn begin(&mut self) -> Res {
        let r = birenDeviceReset();
        self.check(
            "birenDeviceReset() [case start]".into(),
            r,
            &[BIREN_SUCCESS],
        )?;
        birenGetLastError();
        self.last_error = BIREN_SUCCESS;
        Ok(())
    }

    /// Releases every stall whose event still exists (a record on a new non-blocking stream
    /// depends on nothing, so it can never close a cycle), synchronizes, checks everything.
    pub(crate) fn finish(&mut self) -> Res {
        let pending: Vec<usize> = (0..self.events.len())
            .filter(|&e| !self.sticky && self.events[e].live && self.events[e].future.is_some())
            .collect();
        if !pending.is_empty() {
            self.stream_create(StreamHow::Flags(birenStreamNonBlocking))?;
            let k = self.streams.len() - 1;
            let hs = self.streams[k].handle;
            for e in pending {
                let he = self.events[e].handle;
                let r = birenEventRecord(he as birenEvent_t, hs as birenStream_t);
                self.check(
                    format!("birenEventRecord({he:#x}, {hs:#x}) [release]"),
                    r,
                    &[BIREN_SUCCESS],
                )?;
                let f = self.events[e].future.take().unwrap();
                let id = self.push_node(k, None, &[], None);
                self.futs[f].resolved = Some(id);
                self.events[e].latest = Some(Rec::Node(id));
            }
        }
        if !self.sticky {
            self.device_sync()?;
        }
        let r = birenDeviceReset();
        self.check("birenDeviceReset() [case end]".into(), r, &[BIREN_SUCCESS])?;
        self.reset_model()?;
        for o in 0..self.objs.len() {
            if self.objs[o].kind == ObjKind::Pinned && self.objs[o].live {
                let r = birenFreeHost(self.objs[o].base as *mut c_void);
                self.check("birenFreeHost [case end]".into(), r, &[BIREN_SUCCESS])?;
                self.objs[o].live = false;
                self.objs[o].data = None;
            }
        }
        Ok(())
    }
}

/// Marks a call refused because of the sticky error (the step then changes nothing).
pub(crate) const STICKY: &str = "\u{0}sticky";

/// The codes accepted while the device has a sticky error. SPEC §4: "every later call on that
/// device returns the error until birenDeviceReset". Calls that work on the device (enqueue,
/// synchronize, create or destroy its streams and events, allocate, copy, query its state) must
/// not succeed; they may report another fault of their own arguments first. For calls whose tie
/// to the device is looser (pointer attributes, stream priority/flags, device properties,
/// birenFree(NULL), pinned host memory, kernel registration, ...) the normal answer is accepted
/// too: the contract does not say.
pub(crate) fn sticky_codes(name: &str, normal: &[Code]) -> Vec<Code> {
    const STRICT: &[&str] = &[
        "birenMalloc",
        "birenMemcpy",
        "birenMemcpyAsync",
        "birenMemset",
        "birenMemsetAsync",
        "birenMemGetInfo",
        "birenStreamCreate",
        "birenStreamCreateWithFlags",
        "birenStreamCreateWithPriority",
        "birenStreamDestroy",
        "birenStreamSynchronize",
        "birenStreamQuery",
        "birenStreamWaitEvent",
        "birenLaunchHostFunc",
        "birenEventCreate",
        "birenEventCreateWithFlags",
        "birenEventRecord",
        "birenEventQuery",
        "birenEventSynchronize",
        "birenEventElapsedTime",
        "birenEventDestroy",
        "birenLaunchKernel",
        "birenLaunchKernelArgs",
        "birenDeviceSynchronize",
        "birenDeviceSetSchedulingPolicy",
        "birenDeviceGetSchedulingPolicy",
    ];
    let mut ok: Vec<Code> = if STRICT.contains(&name) {
        normal
            .iter()
            .copied()
            .filter(|&c| {
                c != BIREN_SUCCESS && c != BIREN_ERROR_NOT_READY && c != BIREN_ERROR_DEADLOCK
            })
            .collect()
    } else {
        normal.to_vec()
    };
    ok.push(BIREN_ERROR_LAUNCH_FAILURE);
    ok
}

pub(crate) fn null() -> *const c_char {
    std::ptr::null()
}
