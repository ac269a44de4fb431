//! The tag an allocation-tracked object carries in the agent's main JVMTI environment: its site and its
//! size, so that ObjectFree (which hands back nothing but the tag) can take it off its site's live figures.
//!
//! Layout: bit 63 and bit 62 (the class tag bit, see [`crate::ids::main_tag`]) are clear; bits 32..62 hold
//! the site index + 1; bits 0..32 the size in 8-byte words (HotSpot aligns objects to 8 bytes), so objects
//! up to 32 GiB are recorded exactly.

/// Sites beyond this many are folded into their class's "no trace" site (see `SiteTable`).
pub const MAX_SITES: u32 = (1 << 30) - 2;

const WORD: u64 = 8;

/// The tag for an object of `size` bytes allocated at `site`. Never 0 (0 means "untagged").
pub fn encode(site: u32, size: u64) -> i64 {
    debug_assert!(site <= MAX_SITES);
    let words = size.div_ceil(WORD).min(u32::MAX as u64);
    (((site as u64 + 1) << 32) | words) as i64
}

/// The site and the size in bytes a tag records; `None` for a tag that is not ours.
pub fn decode(tag: i64) -> Option<(u32, u64)> {
    let tag = tag as u64;
    let site_plus_one = (tag >> 32) & ((1 << 30) - 1);
    if tag >> 62 != 0 || site_plus_one == 0 {
        return None;
    }
    Some((site_plus_one as u32 - 1, (tag & 0xFFFF_FFFF) * WORD))
}

/// The size in bytes as the tag will record it: what live and allocated figures are summed from.
pub fn recorded_size(size: i64) -> u64 {
    (size.max(0) as u64).div_ceil(WORD).min(u32::MAX as u64) * WORD
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::main_tag;

    #[test]
    fn round_trips_and_never_collides_with_class_tags() {
        for (site, size) in [(0, 16), (7, 2680), (MAX_SITES, 24), (12345, 8 << 30)] {
            let tag = encode(site, size);
            assert_ne!(tag, 0);
            assert!(!main_tag::is_class(tag));
            assert_eq!(decode(tag), Some((site, size)));
        }
    }

    #[test]
    fn sizes_round_up_to_words() {
        assert_eq!(recorded_size(12), 16);
        assert_eq!(decode(encode(3, recorded_size(12))), Some((3, 16)));
    }

    #[test]
    fn foreign_tags_are_refused() {
        assert_eq!(decode(main_tag::class(5)), None);
        assert_eq!(decode(42), None);
    }
}
