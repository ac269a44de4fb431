//! Object ids as one bit per possible key (an id's offset from the smallest, in units of the alignment),
//! in blocks of one cache line: the count of ids before the block and before each of its words, then 384
//! keys' bits. A lookup reads one cache line and counts the bits of one word (a sorted array needs a bucket
//! and a binary search: two or three cache lines); on a dense heap (HotSpot:
//! 8-byte alignment, objects of 24 bytes and more) the bits also take less room than 32-bit keys. Node `i`
//! is the `i`-th set bit.

use crate::spill::Plain;
use rayon::prelude::*;
use std::sync::atomic::AtomicU64;
use std::sync::atomic::Ordering::Relaxed;

const WORDS: usize = 6;
const KEYS_PER_BLOCK: u64 = 64 * WORDS as u64;
/// One sample per this many nodes: the block holding it, where [`IdBitmap::key_of`] starts looking.
const NODES_PER_SAMPLE: usize = 512;

/// One cache line: set bits before this block, before each of its words within it, and its bits.
#[derive(Clone, Copy, Default)]
#[repr(C, align(64))]
pub(crate) struct Block {
    rank: u32,
    sub: [u16; WORDS],
    bits: [u64; WORDS],
}

// SAFETY: 4 + 12 + 48 bytes in C order, no padding (64 bytes, aligned to 64); every bit pattern is a value.
unsafe impl Plain for Block {}

pub(super) struct IdBitmap {
    blocks: Vec<Block>,
    /// `samples[j]`: the block holding node `j * NODES_PER_SAMPLE`.
    samples: Vec<u32>,
    len: usize,
}

impl IdBitmap {
    /// Bytes the bitmap takes for keys `0..=span`.
    pub(super) fn bytes_for(span: u64) -> u64 {
        (span + 1).div_ceil(KEYS_PER_BLOCK) * 64
    }

    /// From runs of keys in `0..=span`, in any order, repeats allowed.
    pub(super) fn new(runs: &[Vec<u64>], key: impl Fn(u64) -> u64 + Sync, span: u64) -> IdBitmap {
        let nblocks = (span + 1).div_ceil(KEYS_PER_BLOCK) as usize;
        let flat: Vec<AtomicU64> =
            (0..nblocks * WORDS).into_par_iter().with_min_len(1 << 16).map(|_| AtomicU64::new(0)).collect();
        // Runs list ids mostly in address order: gather a word's bits before one atomic OR.
        runs.par_iter().for_each(|r| {
            let (mut word, mut acc) = (usize::MAX, 0u64);
            for &id in r {
                let k = key(id);
                let w = (k / 64) as usize;
                if w != word {
                    if acc != 0 {
                        flat[word].fetch_or(acc, Relaxed);
                    }
                    (word, acc) = (w, 0);
                }
                acc |= 1 << (k % 64);
            }
            if acc != 0 {
                flat[word].fetch_or(acc, Relaxed);
            }
        });
        let flat = crate::atomic_arrays::into_plain_u64(flat);
        let mut blocks: Vec<Block> = flat
            .par_chunks(WORDS)
            .with_min_len(1 << 12)
            .map(|w| {
                let mut b = Block { rank: 0, sub: [0; WORDS], bits: [0; WORDS] };
                b.bits.copy_from_slice(w);
                let mut ones = 0u32;
                for (i, x) in w.iter().enumerate() {
                    b.sub[i] = ones as u16;
                    ones += x.count_ones();
                }
                b.rank = ones;
                b
            })
            .collect();
        drop(flat);
        let mut sum = 0u32;
        for b in blocks.iter_mut() {
            (b.rank, sum) = (sum, sum + b.rank);
        }
        let len = sum as usize;
        let mut samples = Vec::with_capacity(len.div_ceil(NODES_PER_SAMPLE));
        let mut b = 0usize;
        for j in 0..len.div_ceil(NODES_PER_SAMPLE) {
            let node = (j * NODES_PER_SAMPLE) as u32;
            while b + 1 < blocks.len() && blocks[b + 1].rank <= node {
                b += 1;
            }
            samples.push(b as u32);
        }
        IdBitmap { blocks, samples, len }
    }

    /// The blocks, taken out while they are parked elsewhere (lookups need them back).
    pub(super) fn take_blocks(&mut self) -> Vec<Block> {
        std::mem::take(&mut self.blocks)
    }

    pub(super) fn put_blocks(&mut self, blocks: Vec<Block>) {
        self.blocks = blocks;
    }

    pub(super) fn len(&self) -> usize {
        self.len
    }

    /// The node of a key, if the key is an id.
    pub(super) fn node_of(&self, key: u64) -> Option<u32> {
        let b = self.blocks.get(usize::try_from(key / KEYS_PER_BLOCK).ok()?)?;
        let i = (key % KEYS_PER_BLOCK) as usize;
        let (w, bit) = (i / 64, 1u64 << (i % 64));
        if b.bits[w] & bit == 0 {
            return None;
        }
        Some(b.rank + b.sub[w] as u32 + (b.bits[w] & (bit - 1)).count_ones())
    }

    /// The key of node `v` (`v < len()`).
    pub(super) fn key_of(&self, v: u32) -> u64 {
        let mut b = self.samples[v as usize / NODES_PER_SAMPLE] as usize;
        while b + 1 < self.blocks.len() && self.blocks[b + 1].rank <= v {
            b += 1;
        }
        let block = &self.blocks[b];
        let mut left = v - block.rank;
        for (i, &word) in block.bits.iter().enumerate() {
            let c = word.count_ones();
            if left < c {
                let mut x = word;
                for _ in 0..left {
                    x &= x - 1;
                }
                return b as u64 * KEYS_PER_BLOCK + i as u64 * 64 + x.trailing_zeros() as u64;
            }
            left -= c;
        }
        unreachable!("node {v} beyond the bitmap's {} ids", self.len)
    }
}
