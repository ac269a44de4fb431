//! The allocation sites: a (class, trace) pair interned into a dense index, and four counters per site that
//! allocating threads bump with atomics (no lock on the hot path once a thread knows its site's index).
//!
//! Counters live in fixed-size chunks that are allocated on first use and never move, so an index stays
//! valid without a lock. The table is bounded: past [`CAPACITY`] sites, allocations at new sites are
//! counted as dropped and the report says so.

use super::weight::Weight;
use rustc_hash::FxHashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};

const CHUNK: usize = 1 << 14;
const CHUNKS: usize = 1 << 10;
/// At most this many distinct sites (16 Mi; 32 bytes of counters each).
pub const CAPACITY: usize = CHUNK * CHUNKS;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SiteKey {
    pub class_serial: u32,
    pub trace_serial: u32,
}

#[derive(Debug, Default)]
struct Counters {
    alloc_units: AtomicU64,
    alloc_bytes: AtomicU64,
    live_units: AtomicU64,
    live_bytes: AtomicU64,
}

/// One site's figures at a moment (object counts still in weight units).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SiteFigures {
    pub key: SiteKey,
    pub alloc_units: u64,
    pub alloc_bytes: u64,
    pub live_units: u64,
    pub live_bytes: u64,
}

#[derive(Default)]
struct Index {
    by_key: FxHashMap<SiteKey, u32>,
    keys: Vec<SiteKey>,
}

pub struct SiteTable {
    index: Mutex<Index>,
    chunks: Box<[OnceLock<Box<[Counters]>>]>,
    dropped: AtomicU64,
}

impl Default for SiteTable {
    fn default() -> Self {
        SiteTable { index: Mutex::default(), chunks: (0..CHUNKS).map(|_| OnceLock::new()).collect(), dropped: 0.into() }
    }
}

impl SiteTable {
    fn lock(&self) -> std::sync::MutexGuard<'_, Index> {
        self.index.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The index of a site, adding it if new; `None` when the table is full.
    pub fn intern(&self, key: SiteKey) -> Option<u32> {
        let mut index = self.lock();
        if let Some(&i) = index.by_key.get(&key) {
            return Some(i);
        }
        let i = index.keys.len();
        if i >= CAPACITY {
            return None;
        }
        self.chunks[i / CHUNK].get_or_init(|| (0..CHUNK).map(|_| Counters::default()).collect());
        index.keys.push(key);
        index.by_key.insert(key, i as u32);
        Some(i as u32)
    }

    fn counters(&self, site: u32) -> Option<&Counters> {
        let site = site as usize;
        self.chunks.get(site / CHUNK)?.get().map(|chunk| &chunk[site % CHUNK])
    }

    pub fn record_alloc(&self, site: u32, w: Weight) {
        if let Some(c) = self.counters(site) {
            c.alloc_units.fetch_add(w.count_units, Ordering::Relaxed);
            c.alloc_bytes.fetch_add(w.bytes, Ordering::Relaxed);
            c.live_units.fetch_add(w.count_units, Ordering::Relaxed);
            c.live_bytes.fetch_add(w.bytes, Ordering::Relaxed);
        }
    }

    /// An allocation that found no room in the table.
    pub fn record_dropped(&self) {
        self.dropped.fetch_add(1, Ordering::Relaxed);
    }

    pub fn dropped(&self) -> u64 {
        self.dropped.load(Ordering::Relaxed)
    }

    /// A tracked object died. Saturates at zero: a reset may have run in between.
    pub fn record_free(&self, site: u32, w: Weight) {
        if let Some(c) = self.counters(site) {
            saturating_sub(&c.live_units, w.count_units);
            saturating_sub(&c.live_bytes, w.bytes);
        }
    }

    /// The (class, trace) of a site.
    pub fn key(&self, site: u32) -> Option<SiteKey> {
        self.lock().keys.get(site as usize).copied()
    }

    /// Every site's figures, in index order.
    pub fn snapshot(&self) -> Vec<SiteFigures> {
        let keys = self.lock().keys.clone();
        keys.iter()
            .enumerate()
            .filter_map(|(i, &key)| {
                let c = self.counters(i as u32)?;
                Some(SiteFigures {
                    key,
                    alloc_units: c.alloc_units.load(Ordering::Relaxed),
                    alloc_bytes: c.alloc_bytes.load(Ordering::Relaxed),
                    live_units: c.live_units.load(Ordering::Relaxed),
                    live_bytes: c.live_bytes.load(Ordering::Relaxed),
                })
            })
            .collect()
    }

    /// Forgets what was allocated so far; live objects stay live.
    pub fn reset_allocated(&self) {
        let n = self.lock().keys.len();
        for i in 0..n {
            if let Some(c) = self.counters(i as u32) {
                c.alloc_units.store(0, Ordering::Relaxed);
                c.alloc_bytes.store(0, Ordering::Relaxed);
            }
        }
        self.dropped.store(0, Ordering::Relaxed);
    }
}

fn saturating_sub(a: &AtomicU64, n: u64) {
    let _ = a.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |v| Some(v.saturating_sub(n)));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(c: u32, t: u32) -> SiteKey {
        SiteKey { class_serial: c, trace_serial: t }
    }

    #[test]
    fn interns_once_and_counts_live_and_allocated() {
        let t = SiteTable::default();
        let a = t.intern(key(100001, 300001)).unwrap();
        assert_eq!(t.intern(key(100001, 300001)), Some(a));
        let b = t.intern(key(100002, 300001)).unwrap();
        assert_ne!(a, b);
        for _ in 0..3 {
            t.record_alloc(a, Weight { count_units: 1, bytes: 24 });
        }
        t.record_free(a, Weight { count_units: 1, bytes: 24 });
        let s = t.snapshot();
        assert_eq!((s[0].alloc_units, s[0].alloc_bytes, s[0].live_units, s[0].live_bytes), (3, 72, 2, 48));
        assert_eq!(s[1].alloc_units, 0);
        t.reset_allocated();
        t.record_free(a, Weight { count_units: 5, bytes: 500 });
        let s = t.snapshot();
        assert_eq!((s[0].alloc_units, s[0].live_units, s[0].live_bytes), (0, 0, 0));
    }
}
