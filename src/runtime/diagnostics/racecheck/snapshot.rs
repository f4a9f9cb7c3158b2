//! What memory held before a kernel ran, to find what it wrote: a copy of small allocations, a
//! digest of each 256-byte chunk of larger ones.

/// Chunk size of kernel write detection.
pub(super) const CHUNK: usize = 256;

/// What an allocation held before a kernel: a copy (small allocations: copying and comparing
/// is cheaper than hashing) or a digest of each chunk.
pub(super) enum Snapshot {
    Copy(Vec<u8>),
    Digest(Vec<u64>),
}

impl Snapshot {
    #[cfg(test)]
    pub(super) fn copy(base: usize, size: usize) -> Snapshot {
        Snapshot::copy_into(base, size, Vec::new())
    }

    /// A copy into `buf` (a buffer given back by an earlier snapshot: no allocation).
    pub(super) fn copy_into(base: usize, size: usize, mut buf: Vec<u8>) -> Snapshot {
        buf.clear();
        // SAFETY: as in `digest`.
        buf.extend_from_slice(unsafe { std::slice::from_raw_parts(base as *const u8, size) });
        Snapshot::Copy(buf)
    }

    /// The copy's buffer, for the next snapshot.
    pub(super) fn into_buffer(self) -> Option<Vec<u8>> {
        match self {
            Snapshot::Copy(b) => Some(b),
            Snapshot::Digest(_) => None,
        }
    }

    /// Which chunks of [base, base+size) differ now (empty: none).
    pub(super) fn changed(&self, base: usize, size: usize) -> Vec<bool> {
        match self {
            Snapshot::Copy(before) => {
                // SAFETY: as in `digest`.
                let now = unsafe { std::slice::from_raw_parts(base as *const u8, size) };
                if before[..] == now[..] {
                    return Vec::new(); // the usual case: one comparison, nothing allocated
                }
                before
                    .chunks(CHUNK)
                    .zip(now.chunks(CHUNK))
                    .map(|(a, b)| a != b)
                    .collect()
            }
            Snapshot::Digest(before) => {
                let now = digest(base, size);
                before.iter().zip(&now).map(|(a, b)| a != b).collect()
            }
        }
    }
}

/// Digest of each CHUNK of [base, base+size): four independent multiply-xor lanes.
pub(super) fn digest(base: usize, size: usize) -> Vec<u64> {
    // SAFETY: a live allocation's bytes (device memory, or page-locked host memory); a kernel may
    // write it concurrently only in a racy program, and then the digest is merely different.
    let bytes = unsafe { std::slice::from_raw_parts(base as *const u8, size) };
    const K: u64 = 0x9E37_79B9_7F4A_7C15;
    bytes
        .chunks(CHUNK)
        .map(|c| {
            let mut h = [1u64, 2, 3, 4];
            let mut words = c.chunks_exact(32);
            for w in &mut words {
                for (l, hl) in h.iter_mut().enumerate() {
                    let v = u64::from_ne_bytes(w[l * 8..l * 8 + 8].try_into().unwrap());
                    *hl = (*hl ^ v).wrapping_mul(K).rotate_left(31);
                }
            }
            for (i, &b) in words.remainder().iter().enumerate() {
                h[i & 3] = (h[i & 3] ^ b as u64).wrapping_mul(K);
            }
            h[0] ^ h[1].rotate_left(16) ^ h[2].rotate_left(32) ^ h[3].rotate_left(48)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digests_see_one_changed_chunk() {
        let mut v = vec![7u8; 1000];
        let before = digest(v.as_ptr() as usize, v.len());
        assert_eq!(before.len(), 4);
        v[600] = 8;
        let after = digest(v.as_ptr() as usize, v.len());
        let changed: Vec<usize> = (0..4).filter(|&i| before[i] != after[i]).collect();
        assert_eq!(changed, vec![2]);
        v[999] = 0;
        assert_ne!(digest(v.as_ptr() as usize, v.len())[3], before[3]);
        let snap = Snapshot::copy(v.as_ptr() as usize, v.len());
        assert!(
            snap.changed(v.as_ptr() as usize, v.len()).is_empty(),
            "nothing changed"
        );
        v[300] = 1;
        assert_eq!(
            snap.changed(v.as_ptr() as usize, v.len()),
            vec![false, true, false, false]
        );
    }
}
