//! The Java heap from the inside, for a heap walk that names objects by their addresses: where the heap
//! lies and which parts of it are committed ([`JavaHeap`], [`Committed`]), what a JVMTI heap callback's tag
//! pointers reveal about the objects ([`ObjectAddresses`]), object headers (class words, array lengths),
//! decoded field offsets and primitive values ([`FieldOffsets`], [`bits_at`]), the sizes HotSpot's class
//! metadata gives ([`ObjectSizes`]), the slots where a class's metadata keeps its class object and what its
//! constant pool resolved, reached from a method without reading an object ([`PoolHandles`]), and a read
//! that cannot fault ([`peek()`]).
//!
//! Every raw read of HotSpot's memory the agent makes for a heap dump is here. The rules:
//! - an address taken from the JVM is read only after [`JavaHeap::holds`] (or [`JavaHeap::holds_span`]) has
//!   found it, with the bytes to be read, inside a *committed* piece of the heap — not merely inside the
//!   reserved range, whose uncommitted parts fault;
//! - what is not yet trusted (decoded layouts before the probe has checked them, metadata outside the heap,
//!   the rare copies of late objects) is read with [`peek()`], which fails instead of faulting;
//! - the committed pieces are read inside the walk's safepoint ([`JavaHeap::refresh_committed`]), where
//!   they cannot change.
//!
//! The layouts assumed (CallbackWrapper, jfieldIDs, JNI handles) are those of JDK 17, 21 and 25; the agent's
//! probe walk checks them on objects of known shape before trusting them (see `hprof-agent`'s heap dump).

mod committed;
mod fields;
mod objects;
mod peek;
mod pool_handles;
mod sizes;

pub use committed::{Committed, MAX_PIECES};
pub use fields::{FieldOffsets, bits_at};
pub use objects::{CallbackTag, ObjectAddresses, handle_target, raw_object, raw_referrer};
pub use peek::{peek, peek_bytes};
pub use pool_handles::{ClassSlots, PoolHandles};
pub use sizes::{ObjectSizes, Shape, shape};

use crate::VmStructs;
use crate::object_layout::ObjectLayout;

/// The heap's reserved address range and its committed pieces, the offset of an array's length in its
/// header, the width of the class word after the mark word (none with compact headers, where the class is
/// in the mark word), and where sizes of objects of unknown classes are found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct JavaHeap {
    pub start: u64,
    pub end: u64,
    pub committed: Committed,
    pub length_offset: u64,
    pub class_word: Option<u8>,
    pub sizes: Option<ObjectSizes>,
}

impl JavaHeap {
    /// Reads the heap of the running JVM from its structure tables, and its committed pieces as they are
    /// now. The error says why object addresses cannot be used. (Which collectors hand the walk plain,
    /// unmoving addresses is the caller's judgement.)
    pub fn find(vm: &VmStructs) -> Result<JavaHeap, String> {
        let (start, end) = reserved_range(vm).ok_or("the heap's reserved range is not readable")?;
        if start == 0 || end <= start || start % 8 != 0 {
            return Err(format!("the heap's reserved range {start:#x}..{end:#x} is not usable"));
        }
        let (length_offset, class_word) = ObjectLayout::find(vm)?.array_length_offset_and_class_word();
        let committed = Committed::read(start, end)?;
        Ok(JavaHeap { start, end, committed, length_offset, class_word, sizes: ObjectSizes::find(vm) })
    }

    /// Reads the committed pieces again: call inside the safepoint of the walk that reads the heap.
    pub fn refresh_committed(&mut self) -> Result<(), String> {
        self.committed = Committed::read(self.start, self.end)?;
        Ok(())
    }

    /// Whether `addr` can be an object whose header may be read: 8-byte aligned, its header (up to and with
    /// an array's length) inside a committed piece.
    #[inline(always)]
    pub fn holds(&self, addr: u64) -> bool {
        addr & 7 == 0 && self.committed.holds(addr, self.length_offset + 4)
    }

    /// Whether the `len` bytes at `addr` lie inside one committed piece.
    #[inline(always)]
    pub fn holds_span(&self, addr: u64, len: u64) -> bool {
        self.committed.holds(addr, len)
    }
}

/// `Universe::_collectedHeap->_reserved`, as `[start, end)`, read without faulting.
fn reserved_range(vm: &VmStructs) -> Option<(u64, u64)> {
    let heap_ptr = vm.static_address("Universe", "_collectedHeap").ok()? as u64;
    let reserved = vm.offset("CollectedHeap", "_reserved").ok()? as u64;
    let start_at = vm.offset("MemRegion", "_start").ok()? as u64;
    let words_at = vm.offset("MemRegion", "_word_size").ok()? as u64;
    let heap = peek::<u64>(heap_ptr)?;
    if heap == 0 {
        return None;
    }
    let region = heap.checked_add(reserved)?;
    let start = peek::<u64>(region.checked_add(start_at)?)?;
    let words = peek::<u64>(region.checked_add(words_at)?)?;
    Some((start, start.checked_add(words.checked_mul(8)?)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn objects_lie_aligned_with_their_headers_in_committed_memory() {
        let maps = "0000000700000000-0000000780000000 rw-p 00000000 00:00 0\n";
        let committed = Committed::from_maps(maps, 0x7_0000_0000, 0x8_0000_0000).unwrap();
        let heap = JavaHeap {
            start: 0x7_0000_0000,
            end: 0x8_0000_0000,
            committed,
            length_offset: 12,
            class_word: Some(4),
            sizes: None,
        };
        assert!(heap.holds(0x7_0000_0000));
        assert!(heap.holds(0x7_1234_5678));
        assert!(!heap.holds(0x7_1234_5674), "not 8-byte aligned");
        assert!(!heap.holds(0x6_ffff_fff8));
        assert!(heap.holds(0x7_7fff_fff0));
        assert!(!heap.holds(0x7_7fff_fff8), "its header would run past the committed end");
        assert!(!heap.holds(0x7_8000_0000), "reserved, not committed");
        assert!(!heap.holds(0));
    }
}
