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

/// `CallbackWrapper::_o`, two words below a heap callback's `tag_ptr` (as read, unchecked).
///
/// # Safety
/// `tag_ptr` must be a heap callback's tag pointer, read during that callback.
#[inline(always)]
pub unsafe fn raw_object(tag_ptr: *const i64) -> u64 {
    // SAFETY: `tag_ptr` points at `_obj_tag` of a CallbackWrapper on the VM thread's stack, two words above
    // `_o` in every layout we accept; whatever the layout, those words are the same live stack frame's.
    unsafe { *(tag_ptr as *const u64).sub(2) }
}

/// `TwoOopCallbackWrapper::_referrer`, one word below a reference callback's `referrer_tag_ptr` (unless it
/// is a reference to itself, when both tag pointers are the same).
///
/// # Safety
/// `referrer_tag_ptr` must be a reference callback's, not null, read during that callback.
#[inline(always)]
pub unsafe fn raw_referrer(referrer_tag_ptr: *const i64) -> u64 {
    // SAFETY: `referrer_tag_ptr` points at `_referrer_obj_tag` in a TwoOopCallbackWrapper on the VM
    // thread's stack; the word below it is `_referrer` (or another word of that live frame).
    unsafe { *(referrer_tag_ptr as *const u64).sub(1) }
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

    /// The address a callback's `tag_ptr` belongs to (`CallbackWrapper::_o`), if it can be an object.
    ///
    /// # Safety
    /// `tag_ptr` must be a heap callback's tag pointer.
    #[inline]
    pub unsafe fn object(&self, tag_ptr: *const i64) -> Option<u64> {
        // SAFETY: as the caller promises.
        let addr = unsafe { raw_object(tag_ptr) };
        self.heap.holds(addr).then_some(addr)
    }

    /// The referrer of a reference callback (`TwoOopCallbackWrapper::_referrer`), or for a reference to
    /// itself the object; `None` for a root (no referrer) or an address that cannot be an object.
    ///
    /// # Safety
    /// `referrer_tag_ptr` and `tag_ptr` must be a reference callback's.
    #[inline]
    pub unsafe fn referrer(&self, referrer_tag_ptr: *const i64, tag_ptr: *const i64) -> Option<u64> {
        if referrer_tag_ptr.is_null() {
            return None;
        }
        if referrer_tag_ptr == tag_ptr {
            // SAFETY: as the caller promises.
            return unsafe { self.object(tag_ptr) };
        }
        // SAFETY: as the caller promises; not null.
        let addr = unsafe { raw_referrer(referrer_tag_ptr) };
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
