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

/// A heap callback's tag slot, as the crate that runs heap walks hands it out (`jvmti`'s `TagSlot`): the
/// proof that a heap callback is running, inside its walk's safepoint.
///
/// # Safety
/// Implementors promise that `tag_address` is a tag pointer JVMTI passed to the heap callback that is running
/// now, that a value of theirs lives no longer than that callback, and that `walk` is the same for every
/// callback of one heap walk (FollowReferences call) and different for any two walks of the process (never 0).
pub unsafe trait CallbackTag {
    fn tag_address(&self) -> *const i64;
    fn walk(&self) -> u64;
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

/// Reads object addresses out of heap callbacks' arguments, and the objects' headers and fields. Headers
/// and fields are read only in the callbacks of the walk whose safepoint last read the heap's committed
/// pieces ([`ObjectAddresses::refresh_committed`]), at addresses inside them: the callback's tag proves which
/// walk is running.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ObjectAddresses {
    heap: JavaHeap,
    /// The walk (see [`CallbackTag::walk`]) in whose safepoint `heap.committed` was read; 0: none.
    committed_in: u64,
}

impl ObjectAddresses {
    pub fn new(heap: JavaHeap) -> ObjectAddresses {
        ObjectAddresses { heap, committed_in: 0 }
    }

    #[inline]
    pub fn heap(&self) -> &JavaHeap {
        &self.heap
    }

    /// Reads the committed pieces again, in a callback of the walk that will read the heap: its safepoint
    /// keeps them as they are until the walk ends.
    pub fn refresh_committed(&mut self, callback: &impl CallbackTag) -> Result<(), String> {
        self.committed_in = 0;
        self.heap.refresh_committed()?;
        self.committed_in = callback.walk();
        Ok(())
    }

    /// Whether the heap may be read in `callback`: its walk read the committed pieces.
    #[inline(always)]
    fn in_walk(&self, callback: &impl CallbackTag) -> bool {
        self.committed_in != 0 && callback.walk() == self.committed_in
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
    /// objects of one class, different for objects of two classes. `None` if `addr` cannot be an object or the
    /// heap may not be read in this callback.
    #[inline]
    pub fn class_word(&self, addr: u64, callback: &impl CallbackTag) -> Option<u64> {
        if !(self.in_walk(callback) && self.heap.holds(addr)) {
            return None;
        }
        // `holds` placed the header, up to the class word's end, in committed memory, which this walk's
        // safepoint keeps committed.
        Some(match self.heap.class_word {
            // SAFETY: see above; a compressed class word is the 4 bytes after the mark word.
            Some(4) => unsafe { *((addr + 8) as *const u32) as u64 },
            // SAFETY: see above; an uncompressed class word is the 8 bytes after the mark word.
            Some(_) => unsafe { *((addr + 8) as *const u64) },
            None => 0,
        })
    }

    /// The length in the header of the array at `addr` (`None` as for [`ObjectAddresses::class_word`]).
    #[inline]
    pub fn array_length(&self, addr: u64, callback: &impl CallbackTag) -> Option<i32> {
        if !(self.in_walk(callback) && self.heap.holds(addr)) {
            return None;
        }
        // SAFETY: `holds` placed the header, the length's four bytes included, in committed memory, which this
        // walk's safepoint keeps committed.
        Some(unsafe { *((addr + self.heap.length_offset) as *const i32) })
    }

    /// The `len` bytes at `addr` (an object, or a field of one), for as long as the callback runs; `None` if
    /// they are not all in committed heap memory or the heap may not be read in this callback.
    #[inline]
    pub fn bytes<'cb>(&self, addr: u64, len: u64, callback: &'cb impl CallbackTag) -> Option<&'cb [u8]> {
        if !(self.in_walk(callback) && self.heap.holds_span(addr, len)) {
            return None;
        }
        // SAFETY: the bytes lie in committed heap memory, which the walk's safepoint keeps committed and which
        // no Java thread writes while it lasts; the slice lives no longer than the callback.
        Some(unsafe { std::slice::from_raw_parts(addr as *const u8, len as usize) })
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::heap::Committed;

    /// A stand-in for a heap callback's tag of walk `.1`, pointing at `.0`.
    struct Tag(i64, u64);

    // SAFETY: for these tests only: the "callback" is the test itself, and the words below the tag are never
    // read through this stand-in.
    unsafe impl CallbackTag for Tag {
        fn tag_address(&self) -> *const i64 {
            &self.0
        }
        fn walk(&self) -> u64 {
            self.1
        }
    }

    /// Headers and fields are read only in callbacks of the walk that read the committed pieces, and only
    /// inside them.
    #[test]
    fn the_heap_is_read_only_in_the_walk_that_read_what_is_committed() {
        // An "array" in our own memory: mark word, a compressed class word, a length of 3, then elements.
        let mut object = vec![0u64; 4].into_boxed_slice();
        object[1] = 0x0000_0003_1234_5678;
        object[2] = 0x0102_0304_0506_0708;
        let addr = object.as_ptr() as u64;
        let (start, end) = (addr, addr + 32);
        let heap =
            JavaHeap { start, end, committed: Committed::EMPTY, length_offset: 12, class_word: Some(4), sizes: None };
        let mut addresses = ObjectAddresses::new(heap);
        let (walk_1, walk_2) = (Tag(0, 1), Tag(0, 2));
        assert_eq!(addresses.array_length(addr, &walk_1), None, "nothing read before the committed pieces");
        addresses.refresh_committed(&walk_1).unwrap();
        assert_eq!(addresses.class_word(addr, &walk_1), Some(0x1234_5678));
        assert_eq!(addresses.array_length(addr, &walk_1), Some(3));
        assert_eq!(addresses.bytes(addr + 16, 8, &walk_1), Some(&0x0102_0304_0506_0708u64.to_le_bytes()[..]));
        assert_eq!(addresses.bytes(addr + 16, 24, &walk_1), None, "past the heap's end");
        assert_eq!(addresses.class_word(addr + 4, &walk_1), None, "unaligned");
        assert_eq!(addresses.class_word(addr, &walk_2), None, "another walk's callback");
        assert_eq!(addresses.bytes(addr, 8, &walk_2), None);
    }
}
