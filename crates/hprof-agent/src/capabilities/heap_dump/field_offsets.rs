//! Where fields lie in objects, from the jfieldIDs JVMTI's GetClassFields hands out, so that a dump
//! naming objects by address can read primitive values from memory instead of being called back for each
//! (a JVMTI primitive field callback costs the JVM two tag look-ups and the agent a call, per field).
//!
//! HotSpot's jfieldIDs (jfieldIDWorkaround.hpp, the same in JDK 17, 21 and 25): an instance field's is
//! `offset << 2 | 2` (bit 1: instance; bit 0, set only with the debug flag VerifyJNIFields, would add a
//! class hash, which is refused here); a static field's is a pointer to a `JNIid`, whose `_offset` (its
//! place in HotSpot's tables, [`super::vm_structs`]) is the field's offset in the class object. As with
//! addresses, [`super::probe`] checks a decoded field of each kind before any is used.

use super::addresses::peek;
use super::layout::Prim;
use hotspot::VmStructs;
use hprof_format::tags::BasicType;

/// Offsets beyond this are not believed (objects are not this large, save arrays, which have no fields).
const MAX_OFFSET: u64 = 1 << 20;

/// Decodes jfieldIDs of the running JVM.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FieldOffsets {
    jniid_offset: u64,
}

impl FieldOffsets {
    pub fn find() -> Option<FieldOffsets> {
        let vm = VmStructs::get()?;
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

/// The raw bits of a primitive of type `ty` in memory at `addr`, zero-extended.
///
/// # Safety
/// `addr` must be a field of a live object, read inside the heap walk.
#[inline]
pub unsafe fn bits_at(addr: u64, ty: BasicType) -> u64 {
    unsafe {
        match ty.size(8) {
            1 => *(addr as *const u8) as u64,
            2 => (addr as *const u16).read_unaligned() as u64,
            4 => (addr as *const u32).read_unaligned() as u64,
            _ => (addr as *const u64).read_unaligned(),
        }
    }
}

/// Copies the primitive instance values `prims` of the object at `object` into `values`, big-endian.
///
/// # Safety
/// `object` must be a live object of the class `prims` describe, read inside the heap walk.
#[inline]
pub unsafe fn read_values(object: u64, prims: &[Prim], values: &mut [u8]) {
    for p in prims {
        put(values, p, unsafe { bits_at(object + p.vm as u64, p.ty) });
    }
}

/// The same from a copy of the object's bytes.
pub fn copy_values(object: &[u8], prims: &[Prim], values: &mut [u8]) {
    for p in prims {
        if let Some(bits) = bits_in(object, p) {
            put(values, p, bits);
        }
    }
}

/// The bits of `p` in a copy of its object's bytes.
pub fn bits_in(object: &[u8], p: &Prim) -> Option<u64> {
    let at = p.vm as usize;
    let field = object.get(at..at + p.ty.size(8) as usize)?;
    let mut le = [0u8; 8];
    le[..field.len()].copy_from_slice(field);
    Some(u64::from_le_bytes(le))
}

fn put(values: &mut [u8], p: &Prim, bits: u64) {
    super::binary::put_value(values, p.at, p.ty, bits);
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
    }

    #[test]
    fn values_are_read_little_endian_and_stored_big_endian() {
        // An object: header, an int at 12, a long at 16, a byte at 24.
        let mut object = [0u8; 32];
        object[12..16].copy_from_slice(&(-2i32).to_le_bytes());
        object[16..24].copy_from_slice(&0x0102_0304_0506_0708u64.to_le_bytes());
        object[24] = 0x7F;
        let prims = [
            Prim { vm: 16, at: 0, ty: BasicType::Long },
            Prim { vm: 12, at: 8, ty: BasicType::Int },
            Prim { vm: 24, at: 12, ty: BasicType::Byte },
        ];
        let expected = [1, 2, 3, 4, 5, 6, 7, 8, 0xFF, 0xFF, 0xFF, 0xFE, 0x7F];
        let mut values = [0u8; 13];
        unsafe { read_values(object.as_ptr() as u64, &prims, &mut values) };
        assert_eq!(values, expected);
        let mut copied = [0u8; 13];
        copy_values(&object, &prims, &mut copied);
        assert_eq!(copied, expected);
        assert_eq!(bits_in(&object[..20], &prims[0]), None, "a cut copy");
    }
}
