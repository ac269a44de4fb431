//! Object ids ↔ dense node indices.

use super::id_bitmap::{Block, IdBitmap};
use rayon::prelude::*;

/// The sorted object ids: node `i` is the `i`-th. Keys are offsets from the smallest id in units of the
/// ids' common alignment (8 bytes in HotSpot dumps). Where the keys are dense enough (a heap's objects
/// packed in its regions), one bit per key (`IdBitmap`); else 32-bit keys whenever they fit, which halves
/// the array for heaps up to 32 GB, with a bucket table over the range that makes a lookup a short binary
/// search; else the ids themselves.
pub struct ObjectIds {
    min: u64,
    /// log2 of the alignment all ids share relative to `min`.
    align: u32,
    narrow: Vec<u32>,
    wide: Vec<u64>,
    shift: u32,
    buckets: Vec<u32>,
    bitmap: Option<IdBitmap>,
}

impl ObjectIds {
    /// From sorted, distinct ids.
    pub(super) fn new(ids: Vec<u64>) -> ObjectIds {
        let (Some(&min), Some(&max)) = (ids.first(), ids.last()) else {
            return ObjectIds::empty();
        };
        let align = common_alignment(&[&ids], min);
        let span = (max - min) >> align;
        if span <= u32::MAX as u64 {
            let narrow = ids.par_iter().map(|&i| ((i - min) >> align) as u32).collect();
            ObjectIds::indexed(min, align, narrow, Vec::new(), span)
        } else {
            ObjectIds::indexed(min, 0, Vec::new(), ids, max - min)
        }
    }

    /// From each chunk's ids in file order (fewer than 2^32 in all). Whenever they fit in 32 bits, each
    /// chunk's are narrowed and sorted on their own, then merged in parallel by key range: no 64-bit copy of
    /// all ids, no sort of the whole. (Files list objects in address order by and large, so a key range
    /// takes its keys from one or two chunks.)
    pub(super) fn from_chunks(chunks: Vec<Vec<u64>>) -> ObjectIds {
        let min = chunks.par_iter().filter_map(|c| c.iter().copied().min()).min();
        let max = chunks.par_iter().filter_map(|c| c.iter().copied().max()).max();
        let (Some(min), Some(max)) = (min, max) else {
            return ObjectIds::empty();
        };
        let runs: Vec<&[u64]> = chunks.iter().map(|c| &c[..]).collect();
        let align = common_alignment(&runs, min);
        let span = (max - min) >> align;
        let upper: usize = chunks.iter().map(Vec::len).sum();
        // Bits when they take less room than 32-bit keys would (3 bytes an object at most).
        if span <= u32::MAX as u64 && IdBitmap::bytes_for(span) <= 3 * upper as u64 {
            let bitmap = IdBitmap::new(&chunks, |id| (id - min) >> align, span);
            return ObjectIds { min, align, bitmap: Some(bitmap), ..ObjectIds::empty() };
        }
        if span > u32::MAX as u64 {
            let mut ids = chunks.concat();
            drop(chunks);
            ids.par_sort_unstable();
            ids.dedup();
            return ObjectIds::new(ids);
        }
        let runs: Vec<Vec<u32>> = chunks
            .into_par_iter()
            .map(|c| {
                let mut keys: Vec<u32> = c.iter().map(|&i| ((i - min) >> align) as u32).collect();
                drop(c);
                keys.sort_unstable();
                keys
            })
            .collect();
        let narrow = merge_sorted(runs, span);
        ObjectIds::indexed(min, align, narrow, Vec::new(), span)
    }

    fn empty() -> ObjectIds {
        ObjectIds {
            min: 0,
            align: 0,
            narrow: Vec::new(),
            wide: Vec::new(),
            shift: 0,
            buckets: vec![0, 0],
            bitmap: None,
        }
    }

    /// The ids with the bucket table over their keys' range `0..=span`.
    fn indexed(min: u64, align: u32, narrow: Vec<u32>, wide: Vec<u64>, span: u64) -> ObjectIds {
        let n = narrow.len().max(wide.len());
        let want = (n.next_power_of_two() / 8).clamp(1, 1 << 22) as u64;
        let mut shift = 0;
        while shift < 63 && (span >> shift) >= want {
            shift += 1;
        }
        let mut out = ObjectIds { min, align, narrow, wide, shift, buckets: Vec::new(), bitmap: None };
        let nb = (span >> shift) as usize + 2;
        let mut buckets = vec![0u32; nb];
        let mut i = 0usize;
        for (b, slot) in buckets.iter_mut().enumerate() {
            while i < n && (out.key_at(i) >> shift) < b as u64 {
                i += 1;
            }
            *slot = i as u32;
        }
        out.buckets = buckets;
        out
    }

    /// Takes the 32-bit keys out (for parking them on disk); `None` unless the ids are stored so.
    pub(crate) fn take_narrow(&mut self) -> Option<Vec<u32>> {
        if self.narrow.is_empty() { None } else { Some(std::mem::take(&mut self.narrow)) }
    }

    pub(crate) fn put_narrow(&mut self, v: Vec<u32>) {
        self.narrow = v;
    }

    /// Takes the bits out (for parking them on disk); `None` unless the ids are stored so.
    pub(crate) fn take_bits(&mut self) -> Option<Vec<Block>> {
        self.bitmap.as_mut().map(IdBitmap::take_blocks)
    }

    pub(crate) fn put_bits(&mut self, v: Vec<Block>) {
        if let Some(b) = &mut self.bitmap {
            b.put_blocks(v);
        }
    }

    fn key_at(&self, i: usize) -> u64 {
        if self.wide.is_empty() { self.narrow[i] as u64 } else { self.wide[i] - self.min }
    }

    pub fn len(&self) -> usize {
        match &self.bitmap {
            Some(b) => b.len(),
            None => self.narrow.len().max(self.wide.len()),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The id of node `v`.
    pub fn get(&self, v: u32) -> u64 {
        if let Some(b) = &self.bitmap {
            return self.min + (b.key_of(v) << self.align);
        }
        let v = v as usize;
        if self.wide.is_empty() { self.min + ((self.narrow[v] as u64) << self.align) } else { self.wide[v] }
    }

    /// The node of an id that is likely node `hint` (files list objects mostly in address order).
    pub fn find_near(&self, hint: u32, id: u64) -> Option<u32> {
        if self.bitmap.is_none() && (hint as usize) < self.len() && self.get(hint) == id {
            return Some(hint);
        }
        self.find(id)
    }

    /// The node of an id.
    pub fn find(&self, id: u64) -> Option<u32> {
        if id < self.min || (id - self.min) & ((1u64 << self.align) - 1) != 0 {
            return None;
        }
        let key = (id - self.min) >> self.align;
        if let Some(b) = &self.bitmap {
            return b.node_of(key);
        }
        let b = key >> self.shift;
        if b >= self.buckets.len().saturating_sub(1) as u64 {
            return None;
        }
        let b = b as usize;
        let (lo, hi) = (self.buckets[b] as usize, self.buckets[b + 1] as usize);
        let found = if self.wide.is_empty() {
            self.narrow[lo..hi].binary_search(&(key as u32)).ok()
        } else {
            self.wide[lo..hi].binary_search(&id).ok()
        };
        found.map(|i| (lo + i) as u32)
    }
}

/// log2 of the alignment (at most 8 bytes) every id shares relative to `min`: the low bits in which none
/// differs from it.
fn common_alignment(runs: &[&[u64]], min: u64) -> u32 {
    let differ = runs.par_iter().map(|r| r.iter().fold(0u64, |a, &i| a | (i ^ min))).reduce(|| 0, |a, b| a | b);
    differ.trailing_zeros().min(3)
}

/// Sorted runs of keys in `0..=span` merged into one sorted run without repeats: the key range is cut into
/// parts, each part's share of every run is found by binary search, and the parts are filled in parallel.
fn merge_sorted(runs: Vec<Vec<u32>>, span: u64) -> Vec<u32> {
    let total: usize = runs.iter().map(Vec::len).sum();
    let parts = (total / (1 << 16)).clamp(1, 4096) as u64;
    // Part j holds the keys in bounds[j]..bounds[j + 1].
    let bounds: Vec<u64> = (0..=parts).map(|j| (span + 1) * j / parts).collect();
    let cuts: Vec<Vec<usize>> =
        runs.par_iter().map(|r| bounds.iter().map(|&b| r.partition_point(|&k| (k as u64) < b)).collect()).collect();
    let sizes: Vec<usize> = (0..parts as usize).map(|j| cuts.iter().map(|c| c[j + 1] - c[j]).sum()).collect();
    let mut out = vec![0u32; total];
    let mut slices = Vec::with_capacity(sizes.len());
    let mut rest = &mut out[..];
    for &size in &sizes {
        let (part, tail) = rest.split_at_mut(size);
        slices.push(part);
        rest = tail;
    }
    // Each part: its shares copied in, sorted (a part's keys come from one or two runs, so the stable
    // sort finds them already in order), repeats dropped; how many remain.
    let kept: Vec<usize> = slices
        .into_par_iter()
        .enumerate()
        .map(|(j, part)| {
            let mut at = 0;
            let mut shares = 0;
            for (r, c) in runs.iter().zip(&cuts) {
                let share = &r[c[j]..c[j + 1]];
                if !share.is_empty() {
                    part[at..at + share.len()].copy_from_slice(share);
                    at += share.len();
                    shares += 1;
                }
            }
            if shares > 1 {
                part.sort();
            }
            let mut kept = part.len().min(1);
            for i in 1..part.len() {
                if part[i] != part[kept - 1] {
                    part[kept] = part[i];
                    kept += 1;
                }
            }
            kept
        })
        .collect();
    drop(runs);
    // Close the gaps repeats left (none in a well-formed file).
    let mut to = 0;
    let mut from = 0;
    for (size, kept) in sizes.iter().zip(&kept) {
        out.copy_within(from..from + kept, to);
        to += kept;
        from += size;
    }
    out.truncate(to);
    out.shrink_to_fit();
    out
}

#[cfg(test)]
mod tests {
    use super::ObjectIds;

    /// Chunks of ids as a file gives them (mostly in order, some out of it, repeats, odd alignment):
    /// `from_chunks` finds every id at the node a global sort gives it.
    fn same_as_sorted(chunks: Vec<Vec<u64>>) -> ObjectIds {
        let mut all = chunks.concat();
        all.sort_unstable();
        all.dedup();
        let ids = ObjectIds::from_chunks(chunks);
        assert_eq!(ids.len(), all.len());
        assert!(ids.find(all.first().map_or(0, |f| f + 1)).is_none());
        for (v, &id) in all.iter().enumerate() {
            assert_eq!(ids.get(v as u32), id);
            assert_eq!(ids.find(id), Some(v as u32));
        }
        assert_eq!(ids.find(all.last().map_or(0, |l| l + 8)), None);
        ids
    }

    #[test]
    fn chunks_merge_into_one_sorted_run() {
        let base = 0x7f00_0000_0000u64;
        // Classes first (ids spread over the heap), then objects in address order, one repeat, a chunk
        // overlapping the previous one.
        let classes: Vec<u64> = (0..1000).rev().map(|i| base + i * 4096 + 16).collect();
        let a: Vec<u64> = (0..200_000).map(|i| base + i * 24).collect();
        let b: Vec<u64> = (150_000..400_000).map(|i| base + i * 24 + 8).chain([base + 24]).collect();
        assert!(same_as_sorted(vec![classes.clone(), a, b, Vec::new()]).bitmap.is_some());
        // Too sparse for bits: 32-bit keys.
        let sparse: Vec<u64> = (0..5000).map(|i| base + i * 4096 + 8 * (i % 3)).collect();
        let ids = same_as_sorted(vec![sparse, classes]);
        assert!(ids.bitmap.is_none() && !ids.narrow.is_empty());
        // 4-byte aligned ids, and ids too far apart for 32-bit keys.
        same_as_sorted(vec![vec![12, 8, 4], vec![16, 4]]);
        assert!(!same_as_sorted(vec![vec![8, 1 << 40], vec![16 << 40, 24]]).wide.is_empty());
        same_as_sorted(Vec::new());
    }
}
