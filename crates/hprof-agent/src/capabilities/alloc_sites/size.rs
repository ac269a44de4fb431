//! Object sizes as the figures record them: whole 8-byte words (HotSpot aligns objects to 8 bytes), so
//! that a tracked object's size fits 32 bits (objects up to 32 GiB are recorded exactly).

const WORD: u64 = 8;

/// The size in words of an object of `size` bytes.
pub fn words(size: i64) -> u32 {
    (size.max(0) as u64).div_ceil(WORD).min(u32::MAX as u64) as u32
}

/// The size in bytes as the figures record it.
pub fn bytes(words: u32) -> u64 {
    words as u64 * WORD
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_round_up_to_words() {
        assert_eq!(words(12), 2);
        assert_eq!(bytes(words(12)), 16);
        assert_eq!(bytes(words(2680)), 2680);
        assert_eq!(words(-1), 0);
    }
}
