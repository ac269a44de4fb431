//! What one recorded allocation adds to its site: one object and its bytes when every allocation is seen,
//! or an unbiased estimate of the allocations it stands for when the JVM samples them (`alloc_interval=`).
//!
//! HotSpot picks the next sampled allocation after a geometrically distributed number of bytes with mean
//! `interval`, so an object of `size` bytes is sampled with probability `p = 1 - exp(-size / interval)`.
//! Counting it as `1/p` objects and `size/p` bytes makes the sums unbiased (Horvitz–Thompson), for small
//! objects and for arrays larger than the interval alike. The same weight is taken off when the object is
//! freed, so live figures are estimated the same way.

/// Object counts are kept in fixed point so that fractional estimates add up without floating atomics.
pub const COUNT_SCALE_SAMPLED: u64 = 1024;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Weight {
    /// Objects, in units of [`Weighting::count_scale`].
    pub count_units: u64,
    pub bytes: u64,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Weighting {
    /// Every allocation is reported: each counts as itself.
    Exact,
    /// Allocations are sampled every `interval` bytes on average.
    Sampled { interval: f64 },
}

impl Weighting {
    pub fn for_interval(alloc_interval: Option<u32>) -> Weighting {
        match alloc_interval {
            None | Some(0) => Weighting::Exact,
            Some(n) => Weighting::Sampled { interval: n as f64 },
        }
    }

    pub fn is_exact(self) -> bool {
        self == Weighting::Exact
    }

    /// The divisor that turns `count_units` into objects.
    pub fn count_scale(self) -> u64 {
        match self {
            Weighting::Exact => 1,
            Weighting::Sampled { .. } => COUNT_SCALE_SAMPLED,
        }
    }

    /// The mean bytes between samples (0: every allocation is counted).
    pub fn interval_bytes(self) -> i64 {
        match self {
            Weighting::Exact => 0,
            Weighting::Sampled { interval } => interval as i64,
        }
    }

    pub fn of(self, size: u64) -> Weight {
        match self {
            Weighting::Exact => Weight { count_units: 1, bytes: size },
            Weighting::Sampled { interval } => {
                let p = -(-(size.max(1) as f64) / interval).exp_m1();
                let p = p.max(f64::MIN_POSITIVE);
                Weight {
                    count_units: (COUNT_SCALE_SAMPLED as f64 / p).round() as u64,
                    bytes: (size as f64 / p).round() as u64,
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_counts_each_object_once() {
        assert_eq!(Weighting::Exact.of(24), Weight { count_units: 1, bytes: 24 });
        assert_eq!(Weighting::for_interval(Some(0)), Weighting::Exact);
    }

    #[test]
    fn sampled_small_objects_stand_for_interval_bytes() {
        let w = Weighting::for_interval(Some(512 * 1024)).of(16);
        // p ≈ 16/524288: one sample stands for about 32768 objects and 512 KiB.
        let objects = w.count_units as f64 / COUNT_SCALE_SAMPLED as f64;
        assert!((objects - 32768.5).abs() < 1.0, "{objects}");
        assert!((w.bytes as f64 - 524_296.0).abs() < 16.0, "{}", w.bytes);
    }

    #[test]
    fn sampled_huge_arrays_count_about_once() {
        let w = Weighting::for_interval(Some(1024)).of(1 << 20);
        assert_eq!(w.count_units, COUNT_SCALE_SAMPLED);
        assert_eq!(w.bytes, 1 << 20);
    }
}
