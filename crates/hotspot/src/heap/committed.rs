//! The parts of the Java heap's reserved range that are committed, so that an address is read only where
//! memory is mapped. HotSpot reserves the whole heap at start-up (PROT_NONE) and commits regions as it
//! grows (G1 also uncommits them when it shrinks); a reserved but uncommitted address faults when read.
//!
//! The kernel's list of mappings (`/proc/self/maps`) says which parts are readable. The list is read where
//! the heap cannot change: inside the heap walk's safepoint (collectors commit and uncommit at safepoints or
//! from threads that stop for them, such as G1's uncommit task in the suspendible thread set).

/// At most this many committed pieces are kept; a heap committed in more is refused (the caller then names
/// objects by tags, which reads no heap memory).
pub const MAX_PIECES: usize = 16;

/// Committed, readable pieces of the reserved range, sorted, adjacent pieces merged.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Committed {
    pieces: [(u64, u64); MAX_PIECES],
    count: usize,
    /// The first piece's start and the last one's end: one comparison rules out most foreign addresses.
    low: u64,
    high: u64,
}

impl Committed {
    /// Nothing committed (every check fails).
    pub const EMPTY: Committed = Committed { pieces: [(0, 0); MAX_PIECES], count: 0, low: 0, high: 0 };

    /// The readable parts of `[start, end)` in a `/proc/self/maps` text.
    pub fn from_maps(maps: &str, start: u64, end: u64) -> Result<Committed, String> {
        let mut pieces: Vec<(u64, u64)> = Vec::new();
        for line in maps.lines() {
            let mut words = line.split_ascii_whitespace();
            let (Some(range), Some(perms)) = (words.next(), words.next()) else { continue };
            let Some((lo, hi)) = range.split_once('-') else { continue };
            let (Ok(lo), Ok(hi)) = (u64::from_str_radix(lo, 16), u64::from_str_radix(hi, 16)) else { continue };
            if !perms.starts_with('r') {
                continue;
            }
            let (lo, hi) = (lo.max(start), hi.min(end));
            if lo >= hi {
                continue;
            }
            match pieces.last_mut() {
                Some(last) if last.1 == lo => last.1 = hi,
                _ => pieces.push((lo, hi)),
            }
        }
        if pieces.len() > MAX_PIECES {
            return Err(format!(
                "the heap is committed in {} pieces (at most {MAX_PIECES} are followed)",
                pieces.len()
            ));
        }
        let mut c = Committed::EMPTY;
        for (i, p) in pieces.iter().enumerate() {
            c.pieces[i] = *p;
        }
        c.count = pieces.len();
        c.low = pieces.first().map_or(0, |p| p.0);
        c.high = pieces.last().map_or(0, |p| p.1);
        Ok(c)
    }

    /// Reads the process's mappings now.
    pub fn read(start: u64, end: u64) -> Result<Committed, String> {
        let maps = std::fs::read_to_string("/proc/self/maps").map_err(|e| format!("/proc/self/maps: {e}"))?;
        Committed::from_maps(&maps, start, end)
    }

    /// Whether `[addr, addr + len)` lies in one committed piece.
    #[inline(always)]
    pub fn holds(&self, addr: u64, len: u64) -> bool {
        let Some(last) = addr.checked_add(len) else { return false };
        if addr < self.low || last > self.high {
            return false;
        }
        // The common heap is one piece (or the loop's first); G1's archive regions make a second.
        self.pieces[..self.count].iter().any(|&(lo, hi)| addr >= lo && last <= hi)
    }

    pub fn pieces(&self) -> &[(u64, u64)] {
        &self.pieces[..self.count]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MAPS: &str = "\
0000000600000000-0000000600100000 rw-p 00000000 00:00 0 
0000000600100000-0000000600200000 rw-p 00000000 00:00 0 
0000000600200000-00000007ff000000 ---p 00000000 00:00 0 
00000007ff000000-00000007ff800000 r--p 00000000 00:00 0 
00000007ff800000-0000000800000000 ---p 00000000 00:00 0 
00007f0000000000-00007f0000001000 r-xp 00000000 08:01 1234 /usr/lib/libc.so.6
";

    #[test]
    fn readable_pieces_of_the_reserved_range_are_kept_and_merged() {
        let c = Committed::from_maps(MAPS, 0x6_0000_0000, 0x8_0000_0000).unwrap();
        assert_eq!(c.pieces(), &[(0x6_0000_0000, 0x6_0020_0000), (0x7_ff00_0000, 0x7_ff80_0000)]);
        assert!(c.holds(0x6_0000_0000, 16));
        assert!(c.holds(0x6_001f_fff0, 16), "across two mappings merged into one piece");
        assert!(!c.holds(0x6_001f_fff8, 16), "runs past the committed end");
        assert!(!c.holds(0x6_0020_0000, 8), "reserved, not committed");
        assert!(c.holds(0x7_ff00_0100, 8), "a read-only (archived) piece");
        assert!(!c.holds(0x7f00_0000_0000, 8), "outside the heap");
        assert!(!c.holds(u64::MAX - 4, 8));
        assert!(!Committed::EMPTY.holds(0x6_0000_0000, 8));
    }

    #[test]
    fn too_many_pieces_are_refused() {
        let maps: String = (0..MAX_PIECES as u64 + 1)
            .map(|i| {
                format!("{:016x}-{:016x} rw-p 00000000 00:00 0\n", 0x1000_0000 + i * 0x2000, 0x1000_1000 + i * 0x2000)
            })
            .collect();
        assert!(Committed::from_maps(&maps, 0, u64::MAX).is_err());
    }

    #[test]
    fn this_process_has_readable_memory_where_its_stack_is() {
        let x = 5u64;
        let at = &x as *const u64 as u64;
        let c = Committed::read(at & !0xFFF, (at & !0xFFF) + 0x1000).unwrap();
        assert!(c.holds(at, 8));
    }
}
