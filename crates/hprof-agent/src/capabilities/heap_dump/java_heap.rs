//! Where the Java heap lies and how arrays are laid out in it, read from HotSpot's own tables
//! (the `hotspot` crate) — what the walk needs to trust object addresses ([`super::addresses`]).
//!
//! Only the collectors verified to hand the heap walk plain, unmoving object addresses are accepted:
//! Serial, Parallel and G1 stop the world for the walk's VM operation and move nothing in it. ZGC and
//! Shenandoah (coloured or forwarded pointers, concurrent relocation) and any other are refused, and the
//! dump then names objects by tags.

use super::object_sizes::ObjectSizes;
use crate::collector::{self, Collector};
use hotspot::VmStructs;

/// The heap's reserved address range, the offset of an array's length in its header, the width of the
/// class word after the mark word (none with compact headers, where the class is in the mark word), and
/// where sizes of objects of unknown classes are found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct JavaHeap {
    pub start: u64,
    pub end: u64,
    pub length_offset: u64,
    pub class_word: Option<u8>,
    pub sizes: Option<ObjectSizes>,
}

impl JavaHeap {
    /// Reads the heap of the running JVM. The error says why object addresses cannot be used.
    pub fn find() -> Result<JavaHeap, String> {
        let vm = VmStructs::get().ok_or("the JVM exports no HotSpot structure tables")?;
        // The collectors whose heap walk was verified with object addresses.
        match collector::current() {
            Some(Collector::Serial | Collector::Parallel | Collector::G1) => {}
            other => {
                let gc = other.map_or("the collector", Collector::name);
                return Err(format!("{gc} is not a collector verified with object addresses"));
            }
        }
        let (start, end) = reserved_range(vm).ok_or("the heap's reserved range is not readable")?;
        if start == 0 || end <= start || start % 8 != 0 {
            return Err(format!("the heap's reserved range {start:#x}..{end:#x} is not usable"));
        }
        // As arrayOopDesc::length_offset_in_bytes(): the length follows the mark word and the class word.
        let compact = vm.bool_flag("UseCompactObjectHeaders") == Ok(true);
        let compressed =
            vm.bool_flag("UseCompressedClassPointers").map_err(|e| format!("UseCompressedClassPointers: {e}"))?;
        let (length_offset, class_word) = match (compact, compressed) {
            (true, _) => (8, None),
            (false, true) => (12, Some(4)),
            (false, false) => (16, Some(8)),
        };
        Ok(JavaHeap { start, end, length_offset, class_word, sizes: ObjectSizes::find(vm) })
    }

    /// Whether `addr` can be an object: 8-byte aligned, inside the reserved range.
    pub fn holds(&self, addr: u64) -> bool {
        addr & 7 == 0 && addr >= self.start && addr < self.end
    }
}

/// `Universe::_collectedHeap->_reserved`, as `[start, end)`.
fn reserved_range(vm: &VmStructs) -> Option<(u64, u64)> {
    let heap_ptr = vm.static_address("Universe", "_collectedHeap").ok()? as *const *const u8;
    let reserved = vm.offset("CollectedHeap", "_reserved").ok()?;
    let start_at = vm.offset("MemRegion", "_start").ok()?;
    let words_at = vm.offset("MemRegion", "_word_size").ok()?;
    let heap = unsafe { *heap_ptr };
    if heap.is_null() {
        return None;
    }
    let region = heap.wrapping_add(reserved);
    let start = unsafe { *(region.add(start_at) as *const u64) };
    let words = unsafe { *(region.add(words_at) as *const u64) };
    Some((start, start.checked_add(words.checked_mul(8)?)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn objects_lie_aligned_inside_the_range() {
        let heap =
            JavaHeap { start: 0x7_0000_0000, end: 0x8_0000_0000, length_offset: 12, class_word: None, sizes: None };
        assert!(heap.holds(0x7_0000_0000));
        assert!(heap.holds(0x7_1234_5678));
        assert!(!heap.holds(0x7_1234_5674), "not 8-byte aligned");
        assert!(!heap.holds(0x6_ffff_fff8));
        assert!(!heap.holds(0x8_0000_0000));
        assert!(heap.holds(0x7_ffff_fff8));
        assert!(!heap.holds(0));
    }
}
