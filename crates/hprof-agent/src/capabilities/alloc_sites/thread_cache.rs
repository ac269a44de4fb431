//! Each thread remembers which site a (class, raw stack) pair maps to, so that a repeated allocation site
//! costs one hash lookup instead of the trace and site tables' locks and a name resolution.
//!
//! The key is the class serial followed by the raw `(jmethodID, bci)` frames; jmethodIDs are never reused
//! by HotSpot, so a key cannot come to mean another site. The cache is bounded and simply starts over when
//! full.

use rustc_hash::FxHashMap;
use std::cell::RefCell;

const MAX_ENTRIES: usize = 1 << 16;

thread_local! {
    static SITES_BY_STACK: RefCell<FxHashMap<Box<[u64]>, u32>> = RefCell::new(FxHashMap::default());
}

/// The cached site for `key`, or `compute`'s answer (cached when it has one).
pub fn site_for(key: &[u64], compute: impl FnOnce() -> Option<u32>) -> Option<u32> {
    let cached = SITES_BY_STACK.try_with(|c| c.try_borrow().ok().and_then(|m| m.get(key).copied())).ok().flatten();
    if cached.is_some() {
        return cached;
    }
    let site = compute()?;
    let _ = SITES_BY_STACK.try_with(|c| {
        if let Ok(mut m) = c.try_borrow_mut() {
            if m.len() >= MAX_ENTRIES {
                m.clear();
            }
            m.insert(key.into(), site);
        }
    });
    Some(site)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn computes_once_per_key() {
        let mut calls = 0;
        for _ in 0..3 {
            let s = site_for(&[1, 2, 3], || {
                calls += 1;
                Some(7)
            });
            assert_eq!(s, Some(7));
        }
        assert_eq!(calls, 1);
        assert_eq!(site_for(&[1, 2, 4], || None), None);
    }
}
