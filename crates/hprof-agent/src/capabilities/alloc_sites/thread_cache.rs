//! Each thread remembers which site a stack maps to, so that a repeated allocation site costs one hash
//! lookup instead of a JVMTI stack trace and the trace and site tables' locks.
//!
//! The key is the class followed by the stack's frame identities (see `site_finder`). Identities that name
//! a `Method*` or an object address are only valid until the next garbage collection, so a cache filled
//! before the collection counter moved is emptied first. The cache is bounded and simply starts over when
//! full.
//!
//! An open-addressing table of (hash, key position, site) with the keys in one arena: a lookup hashes the
//! key, probes a slot or two and compares the words in place, with no allocation. Two keys with the same
//! 64-bit hash (not expected in a program's lifetime) never share an entry: the second is not cached.

/// Entries before the cache starts over.
const MAX_ENTRIES: usize = 1 << 16;
const INITIAL_SLOTS: usize = 1 << 10;

#[derive(Debug, Clone, Copy, Default)]
struct Slot {
    /// 0: empty (real hashes have their low bit set).
    hash: u64,
    key_at: u32,
    key_len: u32,
    site: u32,
}

pub struct StackCache {
    epoch: u64,
    slots: Vec<Slot>,
    keys: Vec<u64>,
    entries: usize,
}

impl Default for StackCache {
    fn default() -> Self {
        StackCache { epoch: 0, slots: vec![Slot::default(); INITIAL_SLOTS], keys: Vec::new(), entries: 0 }
    }
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
    (h ^ (h >> 31)) | 1
}

/// Slice equality without a call to `memcmp`: keys are a few words long.
fn same_words(a: &[u64], b: &[u64]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0, |diff, (x, y)| diff | (x ^ y)) == 0
}

impl StackCache {
    /// The cached site for `key` in collection epoch `epoch`, or `compute`'s answer (cached when it has
    /// one).
    pub fn site_for(&mut self, epoch: u64, key: &[u64], compute: impl FnOnce() -> Option<u32>) -> Option<u32> {
        if self.epoch != epoch {
            self.epoch = epoch;
            self.clear();
        }
        let hash = stack_hash(key);
        let mask = self.slots.len() - 1;
        let mut i = hash as usize & mask;
        loop {
            let slot = self.slots[i];
            if slot.hash == 0 {
                break;
            }
            if slot.hash == hash {
                let stored = &self.keys[slot.key_at as usize..][..slot.key_len as usize];
                return if same_words(stored, key) { Some(slot.site) } else { compute() };
            }
            i = (i + 1) & mask;
        }
        let site = compute()?;
        self.insert(hash, key, site);
        Some(site)
    }

    fn insert(&mut self, hash: u64, key: &[u64], site: u32) {
        if self.entries >= MAX_ENTRIES {
            self.clear();
        }
        if (self.entries + 1) * 2 > self.slots.len() {
            self.grow();
        }
        let at = self.keys.len() as u32;
        self.keys.extend_from_slice(key);
        self.place(Slot { hash, key_at: at, key_len: key.len() as u32, site });
        self.entries += 1;
    }

    fn place(&mut self, slot: Slot) {
        let mask = self.slots.len() - 1;
        let mut i = slot.hash as usize & mask;
        while self.slots[i].hash != 0 {
            i = (i + 1) & mask;
        }
        self.slots[i] = slot;
    }

    fn grow(&mut self) {
        let doubled = vec![Slot::default(); self.slots.len() * 2];
        let old = std::mem::replace(&mut self.slots, doubled);
        for slot in old.into_iter().filter(|s| s.hash != 0) {
            self.place(slot);
        }
    }

    fn clear(&mut self) {
        if self.entries > 0 {
            self.slots.fill(Slot::default());
            self.keys.clear();
            self.entries = 0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn computes_once_per_key_and_epoch() {
        let mut cache = StackCache::default();
        let mut calls = 0;
        for _ in 0..3 {
            let s = cache.site_for(0, &[1, 2, 3], || {
                calls += 1;
                Some(7)
            });
            assert_eq!(s, Some(7));
        }
        assert_eq!(calls, 1);
        assert_eq!(cache.site_for(0, &[1, 2, 4], || None), None);
        // A new collection epoch empties the cache.
        assert_eq!(cache.site_for(1, &[1, 2, 3], || Some(8)), Some(8));
    }

    #[test]
    fn grows_and_keeps_every_entry() {
        let mut cache = StackCache::default();
        for i in 0..10_000u64 {
            assert_eq!(cache.site_for(0, &[i, i * 3], || Some(i as u32)), Some(i as u32));
        }
        for i in 0..10_000u64 {
            assert_eq!(cache.site_for(0, &[i, i * 3], || panic!("{i} was cached")), Some(i as u32));
        }
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
