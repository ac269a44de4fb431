//! Primitive values of the plan's classes read from objects' memory during a walk by address, into
//! INSTANCE DUMP order, or from copies of late objects' bytes after it. The offsets come from
//! `hotspot::heap::FieldOffsets` (decoded jfieldIDs, checked by [`super::probe`]); every read is checked
//! against the heap's committed pieces first ([`hotspot::heap::JavaHeap::holds_span`]).

use crate::capabilities::heap_dump::plan::layout::{Prim, put_value};
use hotspot::heap::{CallbackTag, ObjectAddresses};

/// Copies the primitive instance values `prims` of the object at `object` into `values`, big-endian, in
/// `callback` of the walk. False (nothing read) if the fields do not all lie in committed heap memory.
#[inline]
pub fn read_values(
    addresses: &ObjectAddresses,
    object: u64,
    prims: &[Prim],
    values: &mut [u8],
    callback: &impl CallbackTag,
) -> bool {
    let end = prims.iter().map(|p| p.vm as u64 + p.ty.size(8) as u64).max().unwrap_or(0);
    let Some(bytes) = addresses.bytes(object, end, callback) else { return false };
    copy_values(bytes, prims, values);
    true
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
    put_value(values, p.at, p.ty, bits);
}

#[cfg(test)]
mod tests {
    use super::*;
    use hprof_format::tags::BasicType;

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
        let mut copied = [0u8; 13];
        copy_values(&object, &prims, &mut copied);
        assert_eq!(copied, expected);
        assert_eq!(bits_in(&object[..20], &prims[0]), None, "a cut copy");
    }
}
