//! Object identifiers of one heap dump that live in the dump's JVMTI tags.
//!
//! Objects the dump tags (in its own JVMTI environment) carry their identifiers in their tags, so that a
//! reference to one and its own record agree: class objects and thread objects the identifiers the class
//! and thread tables gave them (those of LOAD CLASS and THREAD START), class loaders and held monitors
//! (tagged before the walk) and, when objects are named by tags rather than addresses
//! (`naming`), every other object, one from a range of the dump's own: [`DUMP_BASE`] onwards,
//! above any address and far above any identifier of the class and thread tables.
//!
//! Object arrays are the exception: the heap walk reports an array's elements but never its length, and the
//! tag is the only thing about the array it hands back. So an object array's tag holds the length too:
//! bit 63 set, bits 32..63 the length, bits 0..32 the array's number in the range. Tags are never written
//! to the file; [`DumpIds::id_of`] turns a tag into the identifier.

mod named;

pub use named::{Kind, Named};

use jvmti::{Jni, Jvmti, sys};

/// The first identifier of every dump's range.
pub const DUMP_BASE: u64 = 1 << 61;

/// Identifiers in a dump's range: far more than any heap holds objects.
pub const RESERVED: u64 = 1 << 40;

const ARRAY_BIT: u64 = 1 << 63;
const SEQ_MASK: u64 = 0xFFFF_FFFF;
const LENGTH_MASK: u64 = 0x7FFF_FFFF;

/// Hands out the identifiers of one dump.
#[derive(Debug)]
pub struct DumpIds {
    base: u64,
    next: u64,
    /// Where the objects tagged are also remembered, for a walk by address ([`Named`]).
    pub named: Option<Named>,
}

impl DumpIds {
    /// `base` is the first of [`RESERVED`] identifiers for this dump.
    pub fn new(base: u64) -> DumpIds {
        DumpIds { base, next: 0, named: None }
    }

    /// Notes that `object` was tagged with `id` (a class object's LOAD CLASS identifier if `is_class`).
    pub fn tagged(&mut self, jni: Jni, object: sys::jobject, id: u64, is_class: bool) {
        if let Some(named) = &mut self.named {
            named.object(jni, object, id, is_class);
        }
    }

    /// Notes that the object array `array` was tagged with `tag`, which carries `id` and its length.
    pub fn tagged_array(&mut self, jni: Jni, array: sys::jobject, id: u64, tag: i64) {
        if let Some(named) = &mut self.named {
            named.object_array(jni, array, id, tag);
        }
    }

    /// A fresh identifier and the tag that carries it.
    pub fn plain(&mut self) -> (i64, u64) {
        let id = self.base + self.next;
        self.next += 1;
        (id as i64, id)
    }

    /// A fresh identifier for an object array of `length` elements, and a tag that also carries the
    /// length. `None` once the numbers outgrow the tag's 32 bits: the caller then stores the length aside.
    pub fn object_array(&mut self, length: u32) -> Option<(i64, u64)> {
        if self.next > SEQ_MASK || length as u64 > LENGTH_MASK {
            return None;
        }
        let seq = self.next;
        self.next += 1;
        let tag = ARRAY_BIT | ((length as u64) << 32) | seq;
        Some((tag as i64, self.base + seq))
    }

    /// The identifier a tag stands for.
    pub fn id_of(&self, tag: i64) -> u64 {
        let t = tag as u64;
        if t & ARRAY_BIT != 0 { self.base + (t & SEQ_MASK) } else { t }
    }

    /// The identifier the next object will get.
    pub fn next_id(&self) -> u64 {
        self.base + self.next
    }

    /// Whether `id` lies in this dump's reserved range.
    pub fn is_reserved(&self, id: u64) -> bool {
        id >= self.base && id - self.base < RESERVED
    }
}

/// The identifier of an object that is not an object array, tagging it if the dump has not yet.
pub fn tag_object(jni: Jni, dump_env: Jvmti, ids: &mut DumpIds, object: sys::jobject) -> u64 {
    match dump_env.tag(object) {
        Ok(t) if t != 0 => ids.id_of(t),
        _ => {
            let (tag, id) = ids.plain();
            if dump_env.set_tag(object, tag).is_err() {
                return 0;
            }
            ids.tagged(jni, object, id, false);
            id
        }
    }
}

/// The length an object array's tag carries, if it carries one.
pub fn array_length(tag: i64) -> Option<u32> {
    let t = tag as u64;
    (t & ARRAY_BIT != 0).then_some(((t >> 32) & LENGTH_MASK) as u32)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_tags_are_the_identifiers() {
        let mut ids = DumpIds::new(0x1_0000_0000);
        let (tag, id) = ids.plain();
        assert_eq!(tag as u64, id);
        assert_eq!(id, 0x1_0000_0000);
        assert_eq!(ids.id_of(tag), id);
        assert_eq!(array_length(tag), None);
        // Identifiers from the class and thread tables pass through unchanged.
        assert_eq!(ids.id_of(0x1234), 0x1234);
    }

    #[test]
    fn object_array_tags_carry_the_length() {
        let mut ids = DumpIds::new(5000);
        ids.plain();
        let (tag, id) = ids.object_array(i32::MAX as u32).unwrap();
        assert_eq!(id, 5001);
        assert_eq!(ids.id_of(tag), 5001);
        assert_eq!(array_length(tag), Some(i32::MAX as u32));
        let (tag, _) = ids.object_array(0).unwrap();
        assert_eq!(array_length(tag), Some(0));
        assert_eq!(ids.next_id(), 5003);
    }

    #[test]
    fn past_32_bit_numbers_arrays_get_plain_tags() {
        let mut ids = DumpIds { base: 10, next: SEQ_MASK + 1, named: None };
        assert!(ids.object_array(3).is_none());
        let (tag, id) = ids.plain();
        assert_eq!(id, 10 + SEQ_MASK + 1);
        assert_eq!(array_length(tag), None);
    }
}
