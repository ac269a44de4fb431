//! Object array sizes for the text output's `sz=`. The walk sees an object array's size only where the
//! array is reported as a referee, so it learns the VM's array layout (header bytes, bytes per element)
//! from those reports and computes the size of the array it visits from its length.

/// The array layouts still consistent with every report seen.
#[derive(Debug, Clone, Copy)]
pub struct ArraySizes {
    candidates: u8,
}

const ARRAY_LAYOUTS: [(u64, u64); 8] = [(16, 4), (16, 8), (12, 4), (12, 8), (20, 4), (20, 8), (24, 4), (24, 8)];

impl ArraySizes {
    fn size(layout: (u64, u64), length: u64) -> u64 {
        (layout.0 + layout.1 * length).div_ceil(8) * 8
    }

    pub fn observe(&mut self, size: u64, length: u64) {
        if self.candidates.count_ones() <= 1 {
            return;
        }
        let mut kept = self.candidates;
        for (i, &layout) in ARRAY_LAYOUTS.iter().enumerate() {
            if kept & (1 << i) != 0 && Self::size(layout, length) != size {
                kept &= !(1 << i);
            }
        }
        if kept != 0 {
            self.candidates = kept;
        }
    }

    pub fn estimate(&self, length: u32) -> u64 {
        let i = self.candidates.trailing_zeros().min(7) as usize;
        Self::size(ARRAY_LAYOUTS[i], length as u64)
    }
}

impl Default for ArraySizes {
    fn default() -> Self {
        ArraySizes { candidates: u8::MAX }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn array_layout_is_learned_from_sizes() {
        let mut a = ArraySizes { candidates: u8::MAX };
        // Compressed oops: 16-byte header, 4-byte elements.
        a.observe(16, 0);
        a.observe(24, 1);
        a.observe(32, 3);
        a.observe(56, 10);
        assert_eq!(a.estimate(100), 416);
        let mut b = ArraySizes { candidates: u8::MAX };
        b.observe(24, 1);
        b.observe(96, 10);
        assert_eq!(b.estimate(2), 32);
    }
}
