//! JNI global handles made of HotSpot's own oop slots. A JNI reference is the address of an `oop` slot
//! with its kind in the low two bits (jniHandles.inline.hpp): JDK 17 leaves a global (and a local)
//! untagged and tags a weak global with 1; JDK 21 onwards tags a local 0, a weak global 1, a global 2.
//! A global one is resolved with `NativeAccess<>::oop_load` of the slot — in JDK 17 and in JDK 21+ alike,
//! and the very load `OopHandle::resolve` makes of the slots class metadata holds (the class object, the
//! resolved references). So `NewGlobalRef` of such a slot's address, tagged as a global, gives a proper
//! global reference to the object, through whatever barrier the collector needs (ZGC's coloured pointers,
//! Shenandoah's forwarding), without our reading the slot.
//!
//! The tags are not assumed: [`ForeignHandles::calibrate`] reads them off a global and a weak global
//! reference the caller has just made, and accepts only the two schemes above. Checked JNI
//! (`-Xcheck:jni`) looks every reference up in the JVM's own handle storages first and ends the VM with
//! "Bad global or local ref passed to JNI" for any other, so there the route is refused
//! ([`checked_jni`]).

use crate::VmStructs;
use std::ffi::c_void;

/// How this JVM tags a global JNI reference.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ForeignHandles {
    global_tag: usize,
}

impl ForeignHandles {
    /// From a live global reference and a live weak global reference of this JVM (to any object).
    pub fn calibrate(global: *const c_void, weak: *const c_void) -> Result<ForeignHandles, String> {
        match (global as usize & 3, weak as usize & 3) {
            (global_tag @ (0 | 2), 1) => Ok(ForeignHandles { global_tag }),
            (g, w) => Err(format!("JNI references are tagged {g} (global) and {w} (weak global), as no JDK we know")),
        }
    }

    /// A global JNI handle for the `oop` slot at `slot` (8-byte aligned), to be passed to `NewGlobalRef`
    /// and nothing else; only while what holds the slot (its class) is kept alive.
    pub fn global(&self, slot: u64) -> Option<*mut c_void> {
        (slot != 0 && slot & 7 == 0).then_some((slot as usize | self.global_tag) as *mut c_void)
    }
}

/// The word in a JNI reference's slot, read once: the object's address for a local or global reference, 0
/// for a weak global one whose object died (a collector that clears references only inside its pauses
/// stores null there; a concurrent one may leave colour bits, so ask JNI there). The reference's low two
/// bits are its kind's tag, not part of the slot's address.
///
/// # Safety
/// `handle` must be a live JNI reference of this JVM (a local one only on its thread, before the native
/// frame that owns it returns): its slot stays allocated while the reference lives.
#[inline]
pub unsafe fn slot_word(handle: *const c_void) -> u64 {
    // SAFETY: the caller's contract: a live reference, whose untagged value is its slot's address.
    unsafe { std::ptr::read_volatile((handle as usize & !3) as *const u64) }
}

/// Whether JNI calls are checked (`-Xcheck:jni` sets `CheckJNICalls`): foreign handles would be fatal.
/// Unreadable counts as checked.
pub fn checked_jni(vm: &VmStructs) -> bool {
    vm.bool_flag("CheckJNICalls").unwrap_or(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn h(v: usize) -> *const c_void {
        v as *const c_void
    }

    #[test]
    fn both_tag_schemes_are_recognised() {
        let jdk17 = ForeignHandles::calibrate(h(0x7f00_1000), h(0x7f00_2001)).unwrap();
        assert_eq!(jdk17.global(0x7f00_3008), Some(0x7f00_3008 as *mut c_void));
        let jdk21 = ForeignHandles::calibrate(h(0x7f00_1002), h(0x7f00_2001)).unwrap();
        assert_eq!(jdk21.global(0x7f00_3008), Some(0x7f00_300a as *mut c_void));
        assert_eq!(jdk21.global(0x7f00_3004), None, "not a slot");
        assert_eq!(jdk21.global(0), None);
    }

    #[test]
    fn other_schemes_are_refused() {
        assert!(ForeignHandles::calibrate(h(0x1001), h(0x2001)).is_err());
        assert!(ForeignHandles::calibrate(h(0x1000), h(0x2000)).is_err());
        assert!(ForeignHandles::calibrate(h(0x1003), h(0x2001)).is_err());
    }
}
