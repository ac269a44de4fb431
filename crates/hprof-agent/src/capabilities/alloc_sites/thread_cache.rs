//! Each thread remembers which site a stack maps to, so that a repeated allocation site costs one hash
//! lookup instead of a JVMTI stack trace and the trace and site tables' locks.
//!
//! The key is the class followed by the stack's frame identities (see `site_finder`). Identities that name
//! a `Method*` or an object address are only valid until the next garbage collection, so a cache filled
//! before the collection counter moved is emptied first. The cache is bounded and simply starts over when
//! full.
//!
//! Entries are found by a well-mixed 64-bit hash of the key and then compared in full, so a lookup costs
//! one comparison; two keys with the same hash (not expected in a program's lifetime) share no entry: the
//! second is simply not cached.

use rustc_hash::FxHashMap;
use std::cell::RefCell;

const MAX_ENTRIES: usize = 1 << 16;

struct Entry {
    key: Box<[u64]>,
    site: u32,
}

#[derive(Default)]
struct Cache {
    epoch: u64,
    sites: FxHashMap<u64, Entry>,
}

thread_local! {
    static SITES_BY_STACK: RefCell<Cache> = RefCell::new(Cache::default());
}

/// A 64-bit hash whose every bit depends on every word (a multiply-xorshift per word, then a finaliser).
fn stack_hash(key: &[u64]) -> u64 {
    let mut h = 0x9E37_79B9_7F4A_7C15u64 ^ key.len() as u64;
    for &w in key {
        h = (h ^ w).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        h ^= h >> 31;
    }
    h ^= h >> 30;
    h = h.wrapping_mul(0x94D0_49BB_1331_11EB);
    h ^ (h >> 31)
}

/// The cached site for `key` in collection epoch `epoch`, or `compute`'s answer (cached when it has one).
pub fn site_for(epoch: u64, key: &[u64], compute: impl FnOnce() -> Option<u32>) -> Option<u32> {
    let hash = stack_hash(key);
    let cached = SITES_BY_STACK
        .try_with(|c| {
            let mut c = c.try_borrow_mut().ok()?;
            if c.epoch != epoch {
                c.epoch = epoch;
                c.sites.clear();
            }
            c.sites.get(&hash).filter(|e| *e.key == *key).map(|e| e.site)
        })
        .ok()
        .flatten();
    if cached.is_some() {
        return cached;
    }
    let site = compute()?;
    let _ = SITES_BY_STACK.try_with(|c| {
        if let Ok(mut c) = c.try_borrow_mut() {
            if c.sites.len() >= MAX_ENTRIES {
                c.sites.clear();
            }
            c.sites.entry(hash).or_insert_with(|| Entry { key: key.into(), site });
        }
    });
    Some(site)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn computes_once_per_key_and_epoch() {
        let mut calls = 0;
        for _ in 0..3 {
            let s = site_for(0, &[1, 2, 3], || {
                calls += 1;
                Some(7)
            });
            assert_eq!(s, Some(7));
        }
        assert_eq!(calls, 1);
        assert_eq!(site_for(0, &[1, 2, 4], || None), None);
        // A new collection epoch empties the cache.
        assert_eq!(site_for(1, &[1, 2, 3], || Some(8)), Some(8));
    }

    #[test]
    fn hashes_differ_for_nearby_keys() {
        let mut seen = std::collections::HashSet::new();
        for a in 0..64u64 {
            for b in 0..64u64 {
                assert!(seen.insert(stack_hash(&[a * 8, 0x7f00_0000_0000 + b * 8])));
            }
        }
        assert_ne!(stack_hash(&[1, 2]), stack_hash(&[2, 1]));
        assert_ne!(stack_hash(&[0]), stack_hash(&[0, 0]));
    }
}
