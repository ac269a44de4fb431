//! Sizes of objects whose class the dump's plan lacks (loaded while the dump ran), read from HotSpot's
//! class metadata: a class object holds its `Klass*` (at `java_lang_Class::_klass_offset`), whose
//! `_layout_helper` is its instances' size in bytes (positive; bit 0 a flag) or marks an array (negative);
//! a class object's own size, in words, is at `java_lang_Class::_oop_size_offset`. The offsets come from
//! HotSpot's structure tables; the agent's probe walk checks them on Integer and int[] before they are used.

use super::{JavaHeap, peek};
use crate::VmStructs;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ObjectSizes {
    pub klass_offset: u64,
    pub layout_helper: u64,
    pub oop_size_offset: u64,
}

/// What a class object's layout helper says its instances are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    Instance(u64),
    Array,
}

impl ObjectSizes {
    pub fn find(vm: &VmStructs) -> Option<ObjectSizes> {
        let static_int = |ty: &str, field: &str| -> Option<u64> {
            let v = peek::<i32>(vm.static_address(ty, field).ok()? as u64)?;
            (v > 0).then_some(v as u64)
        };
        Some(ObjectSizes {
            klass_offset: static_int("java_lang_Class", "_klass_offset")?,
            layout_helper: vm.offset("Klass", "_layout_helper").ok()? as u64,
            oop_size_offset: static_int("java_lang_Class", "_oop_size_offset")?,
        })
    }

    /// The shape of the instances of the class whose class object is at `mirror`; `None` if the class
    /// object or its class metadata cannot be read. The metadata lies outside the heap: read without
    /// faulting.
    pub fn shape(&self, heap: &JavaHeap, mirror: u64) -> Option<Shape> {
        let klass = self.klass(heap, mirror)?;
        Some(shape(peek::<i32>(klass + self.layout_helper)?))
    }

    /// The `Klass*` the class object at `mirror` holds; `None` if it cannot be read.
    pub fn klass(&self, heap: &JavaHeap, mirror: u64) -> Option<u64> {
        if !heap.holds_span(mirror + self.klass_offset, 8) {
            return None;
        }
        let klass = peek::<u64>(mirror + self.klass_offset)?;
        (klass != 0 && klass & 7 == 0).then_some(klass)
    }

    /// The size in bytes of the class object at `mirror` (statics included); 0 if it cannot be read.
    pub fn class_object_size(&self, heap: &JavaHeap, mirror: u64) -> u64 {
        let at = mirror + self.oop_size_offset;
        if !heap.holds_span(at, 4) {
            return 0;
        }
        // SAFETY: `holds_span` placed the four bytes in committed heap memory.
        (unsafe { *(at as *const i32) }).max(0) as u64 * 8
    }
}

/// Klass::layout_helper: an instance's size in bytes, with the low bits for flags; negative for arrays.
pub fn shape(layout_helper: i32) -> Shape {
    if layout_helper < 0 { Shape::Array } else { Shape::Instance(layout_helper as u64 & !7) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout_helpers_say_sizes_and_arrays() {
        assert_eq!(shape(16), Shape::Instance(16));
        assert_eq!(shape(24 | 1), Shape::Instance(24), "the slow-path bit");
        assert_eq!(shape(-0x7FF0_0000), Shape::Array);
    }
}
