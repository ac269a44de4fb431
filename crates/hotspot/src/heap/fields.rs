//! Where fields lie in objects, from the jfieldIDs JVMTI's GetClassFields hands out, so that a dump naming
//! objects by address can read primitive values from memory instead of being called back for each.
//!
//! HotSpot's jfieldIDs (jfieldIDWorkaround.hpp, the same in JDK 17, 21 and 25): an instance field's is
//! `offset << 2 | 2` (bit 1: instance; bit 0, set only with the debug flag VerifyJNIFields, would add a
//! class hash, which is refused here); a static field's is a pointer to a `JNIid`, whose `_offset` (its
//! place in HotSpot's structure tables) is the field's offset in the class object. The agent's probe walk
//! checks a decoded field of each kind before any is used.

use super::peek;
use crate::VmStructs;

/// Offsets beyond this are not believed (objects are not this large, save arrays, which have no fields).
const MAX_OFFSET: u64 = 1 << 20;

/// Decodes jfieldIDs of the running JVM.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FieldOffsets {
    jniid_offset: u64,
}

impl FieldOffsets {
    pub fn find(vm: &VmStructs) -> Option<FieldOffsets> {
        Some(FieldOffsets { jniid_offset: vm.offset("JNIid", "_offset").ok()? as u64 })
    }

    /// The offset of an instance field in its objects.
    pub fn instance(&self, field: usize) -> Option<u32> {
        let raw = field as u64;
        let offset = raw >> 2;
        (raw & 3 == 2 && (8..MAX_OFFSET).contains(&offset)).then_some(offset as u32)
    }

    /// The offset of a static field in its class object. Reads the JVM's memory without faulting.
    pub fn static_field(&self, field: usize) -> Option<u32> {
        let raw = field as u64;
        if raw == 0 || raw & 7 != 0 {
            return None;
        }
        let offset = peek::<i32>(raw + self.jniid_offset)? as i64 as u64;
        (8..MAX_OFFSET).contains(&offset).then_some(offset as u32)
    }
}

/// The raw bits of a primitive of `size` bytes (1, 2, 4 or 8) in memory at `addr`, zero-extended.
///
/// # Safety
/// The `size` bytes at `addr` must be readable: a field of an object that [`super::JavaHeap::holds_span`]
/// placed in committed memory in this safepoint.
#[inline]
pub unsafe fn bits_at(addr: u64, size: u32) -> u64 {
    // SAFETY: as the caller promises; unaligned reads, as fields of 8 bytes may lie at offset 12.
    unsafe {
        match size {
            1 => *(addr as *const u8) as u64,
            2 => (addr as *const u16).read_unaligned() as u64,
            4 => (addr as *const u32).read_unaligned() as u64,
            _ => (addr as *const u64).read_unaligned(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn instance_ids_carry_the_offset() {
        let d = FieldOffsets { jniid_offset: 16 };
        assert_eq!(d.instance(12 << 2 | 2), Some(12));
        assert_eq!(d.instance(12 << 2 | 3), None, "VerifyJNIFields ids carry a class hash");
        assert_eq!(d.instance(12 << 2), None, "a static field's id");
        assert_eq!(d.instance(2), None, "inside the header");
    }

    #[test]
    fn static_ids_point_to_their_offset() {
        #[repr(C)]
        struct JniId {
            holder: usize,
            next: usize,
            offset: i32,
        }
        let id = JniId { holder: 1, next: 0, offset: 116 };
        let d = FieldOffsets { jniid_offset: 16 };
        assert_eq!(d.static_field(&id as *const JniId as usize), Some(116));
        assert_eq!(d.static_field(0), None);
        assert_eq!(d.static_field(12 << 2 | 2), None);
        assert_eq!(d.static_field(8), None, "unmapped: refused, not a fault");
    }

    #[test]
    fn primitives_are_read_little_endian_and_unaligned() {
        let mut object = [0u8; 32];
        object[12..16].copy_from_slice(&(-2i32).to_le_bytes());
        object[16..24].copy_from_slice(&0x0102_0304_0506_0708u64.to_le_bytes());
        let base = object.as_ptr() as u64;
        // SAFETY: inside `object`.
        unsafe {
            assert_eq!(bits_at(base + 12, 4), 0xFFFF_FFFE);
            assert_eq!(bits_at(base + 16, 8), 0x0102_0304_0506_0708);
            assert_eq!(bits_at(base + 13, 2), 0xFFFF);
        }
    }
}
