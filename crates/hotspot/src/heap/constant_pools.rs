//! Where a class's constant pool keeps the objects it has resolved: `InstanceKlass::_constants` →
//! `ConstantPool::_cache` → `ConstantPoolCache::_resolved_references`, an `OopHandle` (a pointer to the
//! slot in HotSpot's handle storage that holds the address of an `Object[]`). That array holds the
//! resolved String, MethodHandle and MethodType constants and the `invokedynamic` call sites (and through
//! them, for example, the instances of non-capturing lambdas). JVMTI's heap walk reports the Strings of
//! a constant pool, not that array nor what else it holds; HotSpot's own dumper writes it as a static
//! field `<resolved_references>`. The offsets come from HotSpot's structure tables (exported since JDK 11);
//! the metadata lies outside the heap and is read without faulting.

use super::{JavaHeap, ObjectSizes, Shape, peek};
use crate::VmStructs;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ResolvedReferences {
    constants: u64,
    cache: u64,
    resolved: u64,
}

impl ResolvedReferences {
    pub fn find(vm: &VmStructs) -> Option<ResolvedReferences> {
        Some(ResolvedReferences {
            constants: vm.offset("InstanceKlass", "_constants").ok()? as u64,
            cache: vm.offset("ConstantPool", "_cache").ok()? as u64,
            resolved: vm.offset("ConstantPoolCache", "_resolved_references").ok()? as u64,
        })
    }

    /// The address of the resolved-references array of the class whose class object is at `mirror`, if it
    /// has one (a class not linked yet has no cache, an array class no constant pool). Only inside a
    /// safepoint, where the array cannot move; the address is checked to be in the committed heap.
    pub fn array_of(&self, heap: &JavaHeap, sizes: &ObjectSizes, mirror: u64) -> Option<u64> {
        if !matches!(sizes.shape(heap, mirror)?, Shape::Instance(_)) {
            return None;
        }
        let klass = sizes.klass(heap, mirror)?;
        let pool = nonzero_aligned(peek::<u64>(klass.checked_add(self.constants)?)?)?;
        let cache = nonzero_aligned(peek::<u64>(pool.checked_add(self.cache)?)?)?;
        let slot = nonzero_aligned(peek::<u64>(cache.checked_add(self.resolved)?)?)?;
        let array = peek::<u64>(slot)?;
        heap.holds(array).then_some(array)
    }
}

fn nonzero_aligned(p: u64) -> Option<u64> {
    (p != 0 && p & 7 == 0).then_some(p)
}
