//! Object addresses as the dump's identifiers, as HotSpot's own dumper names objects.
//!
//! The whole heap walk is one VM operation at one safepoint: no object moves while it runs, so an object's
//! address names it uniquely and the same way in every report. JVMTI hands out no addresses, but each heap
//! callback's `tag_ptr` points into a HotSpot `CallbackWrapper` on the VM thread's stack (jvmtiTagMap.cpp),
//! laid out alike in JDK 17, 21 and 25:
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
//!
//! That is an assumption about the JVM's internals, so nothing here is trusted until [`super::probe`] has
//! checked it on objects of known shape, and every address read is checked again as the walk goes
//! (8-byte aligned, inside the heap's reserved range; arrays: the length in the header is the one JVMTI
//! reports). A failed check stops the walk, and the dump is made again with tags.

use super::java_heap::JavaHeap;

/// Reads object addresses out of heap callbacks' arguments.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ObjectAddresses {
    pub heap: JavaHeap,
}

/// `CallbackWrapper::_o`, two words below a heap callback's `tag_ptr` (as read, unchecked): the one place
/// the walk and the probe that validates it decode the wrapper.
///
/// # Safety
/// `tag_ptr` must be a heap callback's tag pointer.
#[inline(always)]
pub unsafe fn raw_object(tag_ptr: *const i64) -> u64 {
    // Two words below a field of an object on the VM thread's stack: readable whatever its layout.
    unsafe { *(tag_ptr as *const u64).sub(2) }
}

/// `TwoOopCallbackWrapper::_referrer`, one word below a reference callback's `referrer_tag_ptr` (unless it
/// is a reference to itself, when both tag pointers are the same).
///
/// # Safety
/// `referrer_tag_ptr` must be a reference callback's, not null.
#[inline(always)]
pub unsafe fn raw_referrer(referrer_tag_ptr: *const i64) -> u64 {
    unsafe { *(referrer_tag_ptr as *const u64).sub(1) }
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
            return unsafe { self.object(tag_ptr) };
        }
        let addr = unsafe { raw_referrer(referrer_tag_ptr) };
        self.heap.holds(addr).then_some(addr)
    }

    /// The class word in the header of the object at `addr` (0 with compact headers): equal for any two
    /// objects of one class, different for objects of two classes.
    ///
    /// # Safety
    /// `addr` must be an object's address that [`JavaHeap::holds`], read inside the walk.
    #[inline]
    pub unsafe fn class_word(&self, addr: u64) -> u64 {
        match self.heap.class_word {
            Some(4) => unsafe { *((addr + 8) as *const u32) as u64 },
            Some(_) => unsafe { *((addr + 8) as *const u64) },
            None => 0,
        }
    }

    /// The length in the header of the array at `addr`.
    ///
    /// # Safety
    /// `addr` must be an array's address that [`JavaHeap::holds`], read inside the walk.
    #[inline]
    pub unsafe fn array_length(&self, addr: u64) -> i32 {
        unsafe { *((addr + self.heap.length_offset) as *const i32) }
    }
}

/// Reads a value of the process's own memory, failing instead of faulting on an unmapped address (for
/// what is not yet trusted).
pub fn peek<T: Copy + Default>(addr: u64) -> Option<T> {
    let mut value = T::default();
    let size = std::mem::size_of::<T>();
    let local = libc::iovec { iov_base: &mut value as *mut T as *mut libc::c_void, iov_len: size };
    let remote = libc::iovec { iov_base: addr as *mut libc::c_void, iov_len: size };
    let n = unsafe { libc::process_vm_readv(libc::getpid(), &local, 1, &remote, 1, 0) };
    (n == size as isize).then_some(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn own_memory_is_peeked_and_unmapped_memory_is_not() {
        let x: u64 = 0x1234_5678_9ABC_DEF0;
        assert_eq!(peek::<u64>(&x as *const u64 as u64), Some(x));
        assert_eq!(peek::<u64>(8), None);
    }

    /// The two wrappers as JDK 21 and 25 lay them out (JDK 17's extra pointers come before the oops).
    #[repr(C)]
    struct TwoOop {
        tag_map: usize,
        hashmap: usize,
        o: u64,
        obj_size: i64,
        obj_tag: i64,
        klass_tag: i64,
        is_reference_to_self: bool,
        referrer_hashmap: usize,
        referrer: u64,
        referrer_obj_tag: i64,
    }

    fn wrapper(o: u64, referrer: u64) -> TwoOop {
        TwoOop {
            tag_map: 1,
            hashmap: 2,
            o,
            obj_size: 16,
            obj_tag: 0,
            klass_tag: 5,
            is_reference_to_self: false,
            referrer_hashmap: 3,
            referrer,
            referrer_obj_tag: 0,
        }
    }

    #[test]
    fn objects_and_referrers_come_from_the_wrapper() {
        let heap = JavaHeap { start: 0x1000, end: 0x10_0000, length_offset: 12, class_word: None, sizes: None };
        let a = ObjectAddresses::new(heap);
        let w = wrapper(0x2000, 0x3008);
        let tag_ptr = &w.obj_tag as *const i64;
        let referrer_tag_ptr = &w.referrer_obj_tag as *const i64;
        unsafe {
            assert_eq!(a.object(tag_ptr), Some(0x2000));
            assert_eq!(a.referrer(referrer_tag_ptr, tag_ptr), Some(0x3008));
            // A reference to itself passes the object's own tag pointer twice.
            assert_eq!(a.referrer(tag_ptr, tag_ptr), Some(0x2000));
            assert_eq!(a.referrer(std::ptr::null(), tag_ptr), None);
        }
        let outside = wrapper(0x20_0000, 0x3004);
        unsafe {
            assert_eq!(a.object(&outside.obj_tag), None, "outside the heap");
            assert_eq!(a.referrer(&outside.referrer_obj_tag, &outside.obj_tag), None, "misaligned");
        }
    }

    #[test]
    fn array_lengths_are_read_at_the_header_offset() {
        let words: [u32; 6] = [1, 0, 0xCAFE, 7, 0, 0];
        let addr = words.as_ptr() as u64;
        let heap = JavaHeap { start: addr, end: addr + 24, length_offset: 12, class_word: None, sizes: None };
        assert_eq!(unsafe { ObjectAddresses::new(heap).array_length(addr) }, 7);
    }
}
