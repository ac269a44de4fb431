//! The oop slots a class's metadata holds, reached without reading any object: from one of its methods'
//! `jmethodID`, which in JDK 17, 21 and 25 is a `Method**` (a slot of the class loader's `JNIMethodBlock`
//! holding the `Method*`), along `Method::_constMethod` → `ConstMethod::_constants` (its `ConstantPool`)
//! → `ConstantPool::_pool_holder` (its `InstanceKlass`) and `ConstantPool::_cache` (its
//! `ConstantPoolCache`). Two slots at the end: `Klass::_java_mirror` (the class object) and
//! `ConstantPoolCache::_resolved_references` (the `Object[]` of what the constant pool has resolved). Both
//! are `OopHandle`s: pointers to slots in the class loader's handle list, each holding an `oop` that HotSpot
//! loads with `NativeAccess<>::oop_load` (`OopHandle::resolve`) — the load JNI uses for a global reference,
//! so a JNI global handle made of the slot's address resolves to the object with the collector's barriers
//! (see [`crate::jni_handles`]); the slot's raw contents, a coloured pointer under ZGC, are never used.
//!
//! Everything is metadata outside the Java heap, read with [`peek()`] so that a wrong guess fails instead
//! of faulting, and checked twice round a cycle before it is believed: the pool's holder must name that
//! pool as its `_constants`, the cache must name it as its `_constant_pool`. (A `jmethodID` of a JVM where
//! it is no longer a `Method**` — JDK 26 makes it a number — fails these checks.) The caller keeps the
//! class alive (a JNI reference to its class object) while it uses the slots.

use super::peek;
use crate::VmStructs;

/// The offsets of the chain, from HotSpot's structure tables.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PoolHandles {
    const_method: u64,
    constants: u64,
    pool_holder: u64,
    holder_constants: u64,
    cache: u64,
    cache_pool: u64,
    resolved: u64,
    java_mirror: u64,
}

/// The slots of one class (addresses of `oop` slots in its class loader's handle list).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClassSlots {
    /// `Klass::_java_mirror`'s slot: the class object, to check the chain against the caller's class.
    pub mirror: u64,
    /// `ConstantPoolCache::_resolved_references`'s slot, if the class has that array (it holds one).
    pub resolved: Option<u64>,
}

impl PoolHandles {
    /// The offsets, or why they are not exported.
    pub fn find(vm: &VmStructs) -> Result<PoolHandles, String> {
        Ok(PoolHandles {
            const_method: vm.offset("Method", "_constMethod")? as u64,
            constants: vm.offset("ConstMethod", "_constants")? as u64,
            pool_holder: vm.offset("ConstantPool", "_pool_holder")? as u64,
            holder_constants: vm.offset("InstanceKlass", "_constants")? as u64,
            cache: vm.offset("ConstantPool", "_cache")? as u64,
            cache_pool: vm.offset("ConstantPoolCache", "_constant_pool")? as u64,
            resolved: vm.offset("ConstantPoolCache", "_resolved_references")? as u64,
            java_mirror: vm.offset("Klass", "_java_mirror")? as u64,
        })
    }

    /// The slots of the class that declares the method `method_id` (a `jmethodID`), if the chain reads and
    /// its checks hold. `None` also for a class not linked yet (no cache).
    pub fn slots(&self, method_id: u64) -> Option<ClassSlots> {
        self.slots_with(method_id, peek::<u64>)
    }

    /// [`Self::slots`] over any memory (`read` fails where the memory is not readable), for tests.
    fn slots_with(&self, method_id: u64, read: impl Fn(u64) -> Option<u64>) -> Option<ClassSlots> {
        let pointer = |addr: u64| read(addr).and_then(nonzero_aligned);
        let at = |base: u64, offset: u64| pointer(base.checked_add(offset)?);
        let method = pointer(nonzero_aligned(method_id)?)?;
        let pool = at(at(method, self.const_method)?, self.constants)?;
        let holder = at(pool, self.pool_holder)?;
        let cache = at(pool, self.cache)?;
        if at(holder, self.holder_constants)? != pool || at(cache, self.cache_pool)? != pool {
            return None;
        }
        // A slot is believed once it reads and holds something (a class object always, the array once
        // allocated: a null slot would give no reference anyway).
        let slot = |s: u64| pointer(s).map(|_| s);
        let mirror = slot(at(holder, self.java_mirror)?)?;
        let resolved = read(cache.checked_add(self.resolved)?)?;
        let resolved = if resolved == 0 { None } else { Some(slot(nonzero_aligned(resolved)?)?) };
        Some(ClassSlots { mirror, resolved })
    }
}

fn nonzero_aligned(p: u64) -> Option<u64> {
    (p != 0 && p & 7 == 0).then_some(p)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    const OFFSETS: PoolHandles = PoolHandles {
        const_method: 8,
        constants: 8,
        pool_holder: 16,
        holder_constants: 0xb0,
        cache: 24,
        cache_pool: 0,
        resolved: 8,
        java_mirror: 0x70,
    };

    /// A jmethodID at 0x1000 → Method 0x2000 → ConstMethod 0x3000 → ConstantPool 0x4000 (holder
    /// InstanceKlass 0x5000, cache 0x6000) → mirror slot 0x7000, resolved-references slot 0x7008.
    fn memory() -> HashMap<u64, u64> {
        HashMap::from([
            (0x1000, 0x2000),
            (0x2008, 0x3000),
            (0x3008, 0x4000),
            (0x4010, 0x5000),
            (0x4018, 0x6000),
            (0x50b0, 0x4000),
            (0x6000, 0x4000),
            (0x6008, 0x7008),
            (0x5070, 0x7000),
            (0x7000, 0xdead_0000),
            (0x7008, 0xbeef_0000),
        ])
    }

    fn slots(memory: &HashMap<u64, u64>) -> Option<ClassSlots> {
        OFFSETS.slots_with(0x1000, |a| memory.get(&a).copied())
    }

    #[test]
    fn the_chain_leads_to_the_mirror_and_resolved_references_slots() {
        assert_eq!(slots(&memory()), Some(ClassSlots { mirror: 0x7000, resolved: Some(0x7008) }));
    }

    #[test]
    fn a_class_without_the_array_has_only_its_mirror() {
        let mut m = memory();
        m.insert(0x6008, 0);
        assert_eq!(slots(&m), Some(ClassSlots { mirror: 0x7000, resolved: None }));
    }

    #[test]
    fn a_broken_cycle_or_unreadable_step_gives_nothing() {
        for (addr, value) in [(0x50b0, 0x4008), (0x6000, 0x9000), (0x3008, 0x4004)] {
            let mut m = memory();
            m.insert(addr, value);
            assert_eq!(slots(&m), None, "{addr:#x} = {value:#x}");
        }
        for addr in [0x1000, 0x2008, 0x4018, 0x5070, 0x7000] {
            let mut m = memory();
            m.remove(&addr);
            assert_eq!(slots(&m), None, "{addr:#x} unreadable");
        }
        // A jmethodID that is a number, not a pointer (JDK 26).
        assert_eq!(OFFSETS.slots_with(0x1d, |a| memory().get(&a).copied()), None);
    }

    #[test]
    fn a_null_array_slot_is_not_believed() {
        let mut m = memory();
        m.insert(0x7008, 0);
        assert_eq!(slots(&m), None);
    }
}
