//! Which node of a graph is ordered before which: node i before node j if a path of edges
//! leads from i to j. A bit matrix for graphs of up to `BITS_UP_TO` nodes (built once per
//! executable graph, in reverse topological order); larger graphs are searched on demand.

/// Graphs up to this many nodes get a bit matrix (4096 nodes: 2 MiB).
const BITS_UP_TO: usize = 4096;

pub enum Reach {
    /// Row i: the nodes reachable from i (i itself included).
    Bits { words: usize, bits: Vec<u64> },
    /// Dependents of each node.
    Search(Vec<Box<[u32]>>),
}

impl Reach {
    /// From the dependents of each node (edges of a DAG).
    pub fn new(succ: Vec<Box<[u32]>>) -> Reach {
        let n = succ.len();
        if n > BITS_UP_TO {
            return Reach::Search(succ);
        }
        let words = n.div_ceil(64).max(1);
        let mut bits = vec![0u64; n * words];
        // Post-order: a node's row is filled after all its dependents' rows.
        let mut done = vec![false; n];
        let mut stack: Vec<(u32, usize)> = Vec::new();
        for root in 0..n as u32 {
            if done[root as usize] {
                continue;
            }
            stack.push((root, 0));
            while let Some(&mut (v, ref mut k)) = stack.last_mut() {
                let vs = &succ[v as usize];
                if *k < vs.len() {
                    let w = vs[*k];
                    *k += 1;
                    if (w as usize) < n && !done[w as usize] {
                        stack.push((w, 0));
                    }
                    continue;
                }
                stack.pop();
                let v = v as usize;
                bits[v * words + v / 64] |= 1 << (v % 64);
                for &w in vs.iter() {
                    let w = w as usize;
                    if w >= n {
                        continue;
                    }
                    for x in 0..words {
                        let b = bits[w * words + x];
                        bits[v * words + x] |= b;
                    }
                }
                done[v] = true;
            }
        }
        Reach::Bits { words, bits }
    }

    /// True if node `i` is node `j` or a path of edges leads from `i` to `j`.
    pub fn reaches(&self, i: u32, j: u32) -> bool {
        let (i, j) = (i as usize, j as usize);
        match self {
            Reach::Bits { words, bits } => bits
                .get(i * words + j / 64)
                .is_some_and(|w| w >> (j % 64) & 1 == 1),
            Reach::Search(succ) => {
                if i == j {
                    return true;
                }
                let mut seen = vec![false; succ.len()];
                let mut todo = vec![i];
                while let Some(v) = todo.pop() {
                    for &w in succ.get(v).map_or(&[][..], |s| &s[..]) {
                        let w = w as usize;
                        if w == j {
                            return true;
                        }
                        if w < seen.len() && !seen[w] {
                            seen[w] = true;
                            todo.push(w);
                        }
                    }
                }
                false
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn graph(n: usize, edges: &[(u32, u32)]) -> Vec<Box<[u32]>> {
        let mut s = vec![Vec::new(); n];
        for &(a, b) in edges {
            s[a as usize].push(b);
        }
        s.into_iter().map(|v| v.into_boxed_slice()).collect()
    }

    #[test]
    fn paths_order_nodes_both_ways_of_computing() {
        // 0 -> 1 -> 3, 0 -> 2, 4 alone; 70 nodes so rows span two words.
        let mut e = vec![(0, 1), (1, 3), (0, 2)];
        e.extend((5..69).map(|i| (i, i + 1)));
        let succ = graph(70, &e);
        for r in [Reach::new(succ.clone()), Reach::Search(succ)] {
            assert!(r.reaches(0, 3) && r.reaches(0, 2) && r.reaches(1, 3));
            assert!(r.reaches(4, 4), "a node is ordered with itself");
            assert!(!r.reaches(3, 0), "edges have a direction");
            assert!(
                !r.reaches(1, 2) && !r.reaches(2, 1),
                "siblings are unordered"
            );
            assert!(!r.reaches(0, 4) && !r.reaches(4, 0));
            assert!(r.reaches(5, 69) && !r.reaches(69, 5));
        }
    }
}
