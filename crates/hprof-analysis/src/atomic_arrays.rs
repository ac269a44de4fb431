//! Arrays written from many threads at once, then handed on as plain values.

use rayon::prelude::*;
use std::sync::atomic::{AtomicU32, AtomicU64};

/// A vector of atomics as the plain values, without copying.
pub(crate) fn into_plain_u32(v: Vec<AtomicU32>) -> Vec<u32> {
    let mut v = std::mem::ManuallyDrop::new(v);
    // SAFETY: AtomicU32 has the same size, alignment and bit validity as u32, and the vector is not used
    // through its old type again.
    unsafe { Vec::from_raw_parts(v.as_mut_ptr() as *mut u32, v.len(), v.capacity()) }
}

pub(crate) fn into_plain_u64(v: Vec<AtomicU64>) -> Vec<u64> {
    let mut v = std::mem::ManuallyDrop::new(v);
    // SAFETY: as above, for AtomicU64 and u64.
    unsafe { Vec::from_raw_parts(v.as_mut_ptr() as *mut u64, v.len(), v.capacity()) }
}

pub(crate) fn atomic_u32s(n: usize, value: u32) -> Vec<AtomicU32> {
    (0..n).into_par_iter().with_min_len(1 << 16).map(|_| AtomicU32::new(value)).collect()
}

pub(crate) fn atomic_u64s(n: usize, value: u64) -> Vec<AtomicU64> {
    (0..n).into_par_iter().with_min_len(1 << 16).map(|_| AtomicU64::new(value)).collect()
}

/// `n` atomics of `value` in `v`'s memory, grown if need be (see `Spilled::read_into`).
pub(crate) fn atomic_u32s_in(mut v: Vec<u32>, n: usize, value: u32) -> Vec<AtomicU32> {
    v.truncate(n);
    v.reserve_exact(n - v.len());
    v.par_iter_mut().with_min_len(1 << 16).for_each(|x| *x = value);
    v.resize(n, value);
    from_plain_u32(v)
}

/// Plain values as a vector of atomics, without copying.
pub(crate) fn from_plain_u32(v: Vec<u32>) -> Vec<AtomicU32> {
    let mut v = std::mem::ManuallyDrop::new(v);
    // SAFETY: as above, the other way round.
    unsafe { Vec::from_raw_parts(v.as_mut_ptr() as *mut AtomicU32, v.len(), v.capacity()) }
}
