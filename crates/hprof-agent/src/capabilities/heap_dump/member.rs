//! The walk's commonest report on a short path: a reference field or array element of the object being
//! visited, to an object named by its address — most of a dump's millions of callbacks. Whatever is not
//! plainly that (a root, the first report of an object, a referee named or tagged before, a class object,
//! an address failing a check, a test failure counting down) goes the general way ([`Walk::reference`]),
//! which decides everything again; so this path only ever answers as the general one would.

use super::callbacks::{ABORT, VISIT};
use super::walk::{Current, Walk, info_index};
use jvmti::sys;

impl Walk<'_> {
    /// The answer to a member's report, or `None` to take the general path.
    #[inline(always)]
    pub(super) fn member(
        &mut self,
        kind: u32,
        info: *const sys::jvmtiHeapReferenceInfo,
        tag_ptr: *mut i64,
        referrer_tag_ptr: *mut i64,
        length: i32,
    ) -> Option<i32> {
        let a = self.members_by_address.as_ref()?;
        let is_field = kind == sys::JVMTI_HEAP_REFERENCE_FIELD;
        // A field of an instance or an element of an object array, before any memory is read.
        let member = match &self.current {
            Current::Instance { .. } => is_field,
            Current::ObjectArray => kind == sys::JVMTI_HEAP_REFERENCE_ARRAY_ELEMENT,
            _ => false,
        };
        if !member {
            return None;
        }
        if self.starting || self.error.is_some() || self.failed.is_some() {
            return None;
        }
        // The referrer: the object being visited (a reference to itself passes one tag pointer twice).
        if referrer_tag_ptr == tag_ptr || referrer_tag_ptr.is_null() {
            return None;
        }
        let current = self.current_owner;
        // SAFETY: this heap callback's own tag pointers, read while it runs (hotspot::heap's contract).
        let referrer = unsafe { hotspot::heap::raw_referrer(referrer_tag_ptr) };
        // SAFETY: a tag pointer JVMTI passed to this callback: valid, ours to read and write, while it runs.
        if current.addr == 0 || referrer != current.addr || unsafe { *referrer_tag_ptr } != current.tag {
            return None;
        }
        // The referee: untagged, checked as `Walk::referee` checks it, neither named nor a class object.
        // SAFETY: this heap callback's own tag pointers, read while it runs (hotspot::heap's contract).
        let addr = unsafe { a.object(tag_ptr) }?;
        // SAFETY: this callback's tag pointer; `addr` passed JavaHeap::holds (header in committed heap) just now.
        if unsafe { *tag_ptr } != 0 || (length >= 0 && unsafe { a.array_length(addr) } != length) {
            return None;
        }
        if self.named.as_ref().is_none_or(|n| n.may_hold(addr)) {
            return None;
        }
        // SAFETY: the address passed JavaHeap::holds (header in committed heap) in this walk's safepoint.
        if unsafe { a.class_word(addr) } == self.class_class_word {
            return None;
        }
        let index = info_index(info);
        match (&self.current, is_field) {
            (Current::Instance { refs, .. }, true) => {
                let at = refs.get(index)? as usize;
                self.values.get_mut(at..at + 8)?.copy_from_slice(&addr.to_be_bytes());
            }
            (Current::ObjectArray, false) => {
                if let Err(e) = self.sink.object_array_element(index as u32, addr) {
                    self.error.get_or_insert(e);
                    return Some(ABORT);
                }
            }
            _ => return None,
        }
        Some(VISIT)
    }
}
