//! Object ids ↔ dense node indices.

use rayon::prelude::*;

/// The sorted object ids: node `i` is the `i`-th. Stored as 32-bit offsets from the smallest id (in units
/// of the ids' common alignment, 8 bytes in HotSpot dumps) whenever they fit, which halves the array for
/// heaps up to 32 GB; a bucket table over the range makes a lookup a short binary search.
pub struct ObjectIds {
    min: u64,
    /// log2 of the alignment all ids share relative to `min`.
    align: u32,
    narrow: Vec<u32>,
    wide: Vec<u64>,
    shift: u32,
    buckets: Vec<u32>,
}

impl ObjectIds {
    pub(super) fn new(ids: Vec<u64>) -> ObjectIds {
        let (Some(&min), Some(&max)) = (ids.first(), ids.last()) else {
            return ObjectIds { min: 0, align: 0, narrow: Vec::new(), wide: Vec::new(), shift: 0, buckets: vec![0, 0] };
        };
        let mut align = 3;
        while align > 0 && ids.par_iter().any(|&i| (i - min) & ((1 << align) - 1) != 0) {
            align -= 1;
        }
        let span = (max - min) >> align;
        let (narrow, wide) = if span <= u32::MAX as u64 {
            (ids.par_iter().map(|&i| ((i - min) >> align) as u32).collect(), Vec::new())
        } else {
            align = 0;
            (Vec::new(), ids)
        };
        let span = if narrow.is_empty() { max - min } else { span };
        let n = narrow.len().max(wide.len());
        let want = (n.next_power_of_two() / 8).clamp(1, 1 << 22) as u64;
        let mut shift = 0;
        while shift < 63 && (span >> shift) >= want {
            shift += 1;
        }
        let mut out = ObjectIds { min, align, narrow, wide, shift, buckets: Vec::new() };
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

    /// Takes the 32-bit storage out (for parking it on disk); `None` when the ids are 64-bit.
    pub(crate) fn take_narrow(&mut self) -> Option<Vec<u32>> {
        if self.narrow.is_empty() { None } else { Some(std::mem::take(&mut self.narrow)) }
    }

    pub(crate) fn put_narrow(&mut self, v: Vec<u32>) {
        self.narrow = v;
    }

    fn key_at(&self, i: usize) -> u64 {
        if self.wide.is_empty() { self.narrow[i] as u64 } else { self.wide[i] - self.min }
    }

    pub fn len(&self) -> usize {
        self.narrow.len().max(self.wide.len())
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The id of node `v`.
    pub fn get(&self, v: u32) -> u64 {
        let v = v as usize;
        if self.wide.is_empty() { self.min + ((self.narrow[v] as u64) << self.align) } else { self.wide[v] }
    }

    /// The node of an id.
    pub fn find(&self, id: u64) -> Option<u32> {
        if id < self.min || (id - self.min) & ((1u64 << self.align) - 1) != 0 {
            return None;
        }
        let key = (id - self.min) >> self.align;
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
