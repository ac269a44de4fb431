//! What a JVMTI heap callback's arguments reveal about its objects, and their headers.
//!
//! JVMTI hands out no addresses, but each heap callback's `tag_ptr` points into a HotSpot `CallbackWrapper`
//! on the VM thread's stack (jvmtiTagMap.cpp), laid out alike in JDK 17, 21 and 25:
//!
//! ```text
//! class CallbackWrapper {           // JDK 17 has a JvmtiTagMapEntry* before _o
//!   JvmtiTagMap* _tag_map; JvmtiTagMapTable* _hashmap; oop _o; jlong _obj_size; jlong _obj_tag; … }
//! class TwoOopCallbackWrapper : CallbackWrapper {   // JDK 17: a JvmtiTagMapEntry* before _referrer
//!   bool _is_reference_to_self; JvmtiTagMapTable* _referrer_hashmap; oop _referrer;
//!   jlong _referrer_obj_tag; … }
//! ```
//!
//! `tag_ptr` is `&_obj_tag`, so the object (an uncompressed pointer) is two words before it; a reference's
//! `referrer_tag_ptr` is `&_referrer_obj_tag`, the referrer one word before it — except for a reference
//! from an object to itself, where `referrer_tag_ptr` is `tag_ptr` (and `_referrer` is never set).
//! Nothing read this way is trusted before [`super::JavaHeap::holds`] has placed it in committed memory.

use super::JavaHeap;

/// A heap callback's tag slot, as the crate that runs heap walks hands it out (`jvmti`'s `TagSlot`).
///
/// # Safety
/// Implementors promise that `tag_address` is a tag pointer JVMTI passed to the heap callback that is running
/// now, and that a value of theirs lives no longer than that callback.
pub unsafe trait CallbackTag {
    fn tag_address(&self) -> *const i64;
}

/// `CallbackWrapper::_o`, two words below a heap callback's `tag_ptr` (as read, unchecked).
#[inline(always)]
pub fn raw_object(tag: &impl CallbackTag) -> u64 {
    // SAFETY: `tag` is a running callback's tag pointer (the trait's contract), which points at `_obj_tag` of a
    // CallbackWrapper on the VM thread's stack, two words above `_o` in every layout we accept; whatever the
    // layout, those words are the same live stack frame's.
    unsafe { *(tag.tag_address() as *const u64).sub(2) }
}

/// `TwoOopCallbackWrapper::_referrer`, one word below a reference callback's `referrer_tag_ptr` (unless it
/// is a reference to itself, when both tag pointers are the same and this reads `_obj_size`).
#[inline(always)]
pub fn raw_referrer(referrer_tag: &impl CallbackTag) -> u64 {
    // SAFETY: a running callback's tag pointer (the trait's contract), at `_referrer_obj_tag` in a
    // TwoOopCallbackWrapper on the VM thread's stack; the word below it is `_referrer` (or another word of that
    // live frame).
    unsafe { *(referrer_tag.tag_address() as *const u64).sub(1) }
}

/// The object a JNI reference (local, global or weak global) refers to: a JNI handle points to the slot
/// holding its object's address, its low two bits tag its kind. 0 for a cleared weak reference.
///
/// # Safety
/// `handle` must be a live JNI reference of this JVM, and the caller inside a safepoint (or otherwise sure
/// that the object cannot move while the address is used).
#[inline]
pub unsafe fn handle_target(handle: *const std::ffi::c_void) -> u64 {
    // SAFETY: a live JNI reference, untagged, points to an oop slot in HotSpot's handle storage.
    unsafe { *((handle as usize & !3) as *const u64) }
}

/// Reads object addresses out of heap callbacks' arguments, and the objects' headers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ObjectAddresses {
    pub heap: JavaHeap,
}

impl ObjectAddresses {
    pub fn new(heap: JavaHeap) -> ObjectAddresses {
        ObjectAddresses { heap }
    }

    /// The address a callback's tag belongs to (`CallbackWrapper::_o`), if it can be an object.
    #[inline]
    pub fn object(&self, tag: &impl CallbackTag) -> Option<u64> {
        let addr = raw_object(tag);
        self.heap.holds(addr).then_some(addr)
    }

    /// The referrer of a reference callback (`TwoOopCallbackWrapper::_referrer`), or for a reference to
    /// itself the object; `None` for a root (no referrer) or an address that cannot be an object.
    #[inline]
    pub fn referrer<T: CallbackTag>(&self, referrer_tag: Option<&T>, tag: &T) -> Option<u64> {
        let referrer_tag = referrer_tag?;
        if referrer_tag.tag_address() == tag.tag_address() {
            return self.object(tag);
        }
        let addr = raw_referrer(referrer_tag);
        self.heap.holds(addr).then_some(addr)
    }

    /// The class word in the header of the object at `addr` (0 with compact headers): equal for any two
    /// objects of one class, different for objects of two classes.
    ///
    /// # Safety
    /// `addr` must have passed [`JavaHeap::holds`] in this safepoint.
    #[inline]
    pub unsafe fn class_word(&self, addr: u64) -> u64 {
        // `holds` placed the header, up to the class word's end, in committed memory.
        match self.heap.class_word {
            // SAFETY: see above; a compressed class word is the 4 bytes after the mark word.
            Some(4) => unsafe { *((addr + 8) as *const u32) as u64 },
            // SAFETY: see above; an uncompressed class word is the 8 bytes after the mark word.
            Some(_) => unsafe { *((addr + 8) as *const u64) },
            None => 0,
        }
    }

    /// The length in the header of the array at `addr`.
    ///
    /// # Safety
    /// `addr` must have passed [`JavaHeap::holds`] in this safepoint.
    #[inline]
    pub unsafe fn array_length(&self, addr: u64) -> i32 {
        // SAFETY: `holds` placed the header, the length's four bytes included, in committed memory.
        unsafe { *((addr + self.heap.length_offset) as *const i32) }
    }

    /// A copy of the `size` bytes of the object at `addr`, read without faulting (`None` if not readable).
    /// For the few objects kept for after the walk.
    pub fn copy(&self, addr: u64, size: u64) -> Option<Box<[u8]>> {
        if !self.heap.holds_span(addr, size) {
            return None;
        }
        super::peek_bytes(addr, size as usize)
    }
}
