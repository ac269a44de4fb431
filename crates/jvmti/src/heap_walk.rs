//! Heap walks as a safe visitor: [`Jvmti::walk_references`] runs FollowReferences with the callbacks of a
//! [`HeapVisitor`], whose methods receive typed views of what JVMTI reports — the tag slots ([`TagSlot`]),
//! the reference's details ([`ReferenceInfo`]), primitive values with their bits, a primitive array's
//! elements as bytes — valid for the callback's duration. The raw `extern "C"` trampolines are here, and a
//! panic in a visitor answers [`HeapVisitor::on_panic`] instead of unwinding into the VM.
//!
//! Callbacks run inside a VM operation: a visitor must not call JNI or most JVMTI functions, and must not
//! block on a lock that a Java thread might hold.

use crate::env::Jvmti;
use crate::error::Result;
use crate::heap::HeapCallbacks;
use crate::panic_guard::guard;
use jvmti_sys as sys;
use std::ffi::c_void;
use std::marker::PhantomData;
use std::sync::atomic::{AtomicU64, Ordering};

/// A heap callback's tag slot (`tag_ptr`, `referrer_tag_ptr`): the object's tag, to read and to set, for
/// the duration of the callback that got it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TagSlot<'cb> {
    ptr: *mut i64,
    /// Which walk the callback belongs to (see `walk_references`).
    walk: u64,
    _callback: PhantomData<&'cb mut i64>,
}

impl TagSlot<'_> {
    /// # Safety
    /// `ptr` must be non-null and a tag pointer JVMTI passed to the heap callback that is running, which the
    /// slot must not outlive; `walk` the number of the walk it belongs to.
    #[inline(always)]
    unsafe fn new(ptr: *mut i64, walk: u64) -> TagSlot<'static> {
        TagSlot { ptr, walk, _callback: PhantomData }
    }

    #[inline(always)]
    pub fn get(self) -> i64 {
        // SAFETY: a tag pointer of the running callback (see `new`), readable and writable while it runs; the
        // VM thread runs one callback at a time.
        unsafe { *self.ptr }
    }

    #[inline(always)]
    pub fn set(self, tag: i64) {
        // SAFETY: as in `get`.
        unsafe { *self.ptr = tag }
    }
}

// SAFETY: a TagSlot exists only inside the heap callback that received it (its constructor is private to the
// trampolines, and the visitor's methods get it for the callback's lifetime), so its address is a live tag
// pointer of that callback, as the trait asks.
unsafe impl hotspot::heap::CallbackTag for TagSlot<'_> {
    #[inline(always)]
    fn tag_address(&self) -> *const i64 {
        self.ptr
    }

    #[inline(always)]
    fn walk(&self) -> u64 {
        self.walk
    }
}

/// What JVMTI says about a reference beside its kind: the field, array or constant pool index (they share
/// one place), or a stack or JNI local's thread and frame.
#[derive(Clone, Copy)]
pub struct ReferenceInfo<'cb> {
    info: Option<&'cb sys::jvmtiHeapReferenceInfo>,
    kind: u32,
}

impl ReferenceInfo<'_> {
    /// The field, array or constant pool index; -1 for kinds that come without info.
    #[inline(always)]
    pub fn index(&self) -> i32 {
        // SAFETY: the union's field, array and constant pool members all begin with their index, a jint, which
        // JVMTI sets for the kinds that carry info; all bytes of the union are initialised C data.
        self.info.map_or(-1, |i| unsafe { i.field.index })
    }

    /// The index, when JVMTI gave info at all (`None`: it passed none).
    #[inline(always)]
    pub fn given_index(&self) -> Option<i32> {
        self.info.map(|_| self.index())
    }

    /// A stack local's thread, frame and location (for `JVMTI_HEAP_REFERENCE_STACK_LOCAL`).
    #[inline(always)]
    pub fn stack_local(&self) -> Option<sys::jvmtiHeapReferenceInfoStackLocal> {
        let info = self.info.filter(|_| self.kind == sys::JVMTI_HEAP_REFERENCE_STACK_LOCAL)?;
        // SAFETY: JVMTI fills the stack_local member for this kind.
        Some(unsafe { info.stack_local })
    }

    /// A JNI local's thread and frame (for `JVMTI_HEAP_REFERENCE_JNI_LOCAL`).
    #[inline(always)]
    pub fn jni_local(&self) -> Option<sys::jvmtiHeapReferenceInfoJniLocal> {
        let info = self.info.filter(|_| self.kind == sys::JVMTI_HEAP_REFERENCE_JNI_LOCAL)?;
        // SAFETY: JVMTI fills the jni_local member for this kind.
        Some(unsafe { info.jni_local })
    }
}

/// A reference callback's report: the referee's tag slot and, unless it is a root, the referrer's (the same
/// slot for a reference from an object to itself).
#[derive(Clone, Copy)]
pub struct HeapReference<'cb> {
    pub kind: u32,
    pub info: ReferenceInfo<'cb>,
    pub class_tag: i64,
    pub referrer_class_tag: i64,
    pub size: i64,
    pub tag: TagSlot<'cb>,
    pub referrer_tag: Option<TagSlot<'cb>>,
    /// The array's length, or -1 for an object that is no array.
    pub length: i32,
}

/// A primitive value's JVMTI type (`JVMTI_PRIMITIVE_TYPE_*`) and its bits, zero-extended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PrimitiveValue {
    pub ty: u32,
    pub bits: u64,
}

impl PrimitiveValue {
    /// Reads the union as the member `ty` names; `None` for a type that is no primitive.
    #[inline(always)]
    pub fn of(value: sys::jvalue, ty: u32) -> Option<PrimitiveValue> {
        // SAFETY: the jvalue union is read as the member `ty` names, as JVMTI filled it.
        let bits = unsafe {
            match ty {
                sys::JVMTI_PRIMITIVE_TYPE_BOOLEAN => value.z as u64,
                sys::JVMTI_PRIMITIVE_TYPE_BYTE => value.b as u8 as u64,
                sys::JVMTI_PRIMITIVE_TYPE_CHAR => value.c as u64,
                sys::JVMTI_PRIMITIVE_TYPE_SHORT => value.s as u16 as u64,
                sys::JVMTI_PRIMITIVE_TYPE_INT => value.i as u32 as u64,
                sys::JVMTI_PRIMITIVE_TYPE_LONG => value.j as u64,
                sys::JVMTI_PRIMITIVE_TYPE_FLOAT => value.f.to_bits() as u64,
                sys::JVMTI_PRIMITIVE_TYPE_DOUBLE => value.d.to_bits(),
                _ => return None,
            }
        };
        Some(PrimitiveValue { ty, bits })
    }
}

/// Bytes per element of a JVMTI primitive type (0 for none).
#[inline(always)]
pub fn primitive_size(ty: u32) -> usize {
    match ty {
        sys::JVMTI_PRIMITIVE_TYPE_BOOLEAN | sys::JVMTI_PRIMITIVE_TYPE_BYTE => 1,
        sys::JVMTI_PRIMITIVE_TYPE_CHAR | sys::JVMTI_PRIMITIVE_TYPE_SHORT => 2,
        sys::JVMTI_PRIMITIVE_TYPE_INT | sys::JVMTI_PRIMITIVE_TYPE_FLOAT => 4,
        sys::JVMTI_PRIMITIVE_TYPE_LONG | sys::JVMTI_PRIMITIVE_TYPE_DOUBLE => 8,
        _ => 0,
    }
}

/// A primitive field callback's report (only asked for when the walk wants fields reported).
#[derive(Clone, Copy)]
pub struct PrimitiveField<'cb> {
    pub kind: u32,
    pub info: ReferenceInfo<'cb>,
    pub class_tag: i64,
    pub tag: TagSlot<'cb>,
    /// `None` for a value of no primitive type.
    pub value: Option<PrimitiveValue>,
}

/// A primitive array callback's report: the elements as the bytes they are in the heap (native order).
#[derive(Debug, Clone, Copy)]
pub struct PrimitiveArray<'cb> {
    pub class_tag: i64,
    pub size: i64,
    pub tag: TagSlot<'cb>,
    pub count: i32,
    pub element_type: u32,
    pub elements: &'cb [u8],
}

/// What a heap walk does with JVMTI's reports. Each method answers with JVMTI's visit control bits
/// ([`VISIT`], [`ABORT`], 0).
pub trait HeapVisitor {
    fn reference(&mut self, reference: HeapReference<'_>) -> i32;
    fn primitive_field(&mut self, field: PrimitiveField<'_>) -> i32;
    fn array_values(&mut self, array: PrimitiveArray<'_>) -> i32;
    /// A callback panicked: the answer to give the walk.
    fn on_panic(&mut self) -> i32;
}

pub const VISIT: i32 = sys::JVMTI_VISIT_OBJECTS as i32;
pub const ABORT: i32 = sys::JVMTI_VISIT_ABORT as i32;

impl Jvmti {
    /// FollowReferences from the roots (or from `initial_object`, if not null) with `visitor`'s callbacks;
    /// primitive fields are reported only if `fields`. Returns when the walk is over.
    pub fn walk_references<V: HeapVisitor>(
        self,
        initial_object: sys::jobject,
        fields: bool,
        visitor: &mut V,
    ) -> Result<()> {
        // SAFETY: a C struct of integers and nullable pointers, for which all-zero bytes are a valid value.
        let mut callbacks: HeapCallbacks = unsafe { std::mem::zeroed() };
        callbacks.heap_reference_callback = Some(on_reference::<V>);
        if fields {
            callbacks.primitive_field_callback = Some(on_primitive_field::<V>);
        }
        callbacks.array_primitive_value_callback = Some(on_array_values::<V>);
        static WALKS: AtomicU64 = AtomicU64::new(0);
        let mut walk = Walking { visitor, walk: WALKS.fetch_add(1, Ordering::Relaxed) + 1 };
        let user_data = &mut walk as *mut Walking<V> as *const c_void;
        // SAFETY: the callbacks read `user_data` as a `Walking<V>`, which lives (and the exclusive borrow keeps
        // the visitor unaliased) until FollowReferences returns; they keep to the restrictions of heap
        // callbacks (the visitor's contract above).
        unsafe { self.follow_references(0, std::ptr::null_mut(), initial_object, &callbacks, user_data) }
    }
}

/// What the callbacks' `user_data` points to: the visitor and the number of its walk (from 1, one per
/// `walk_references` call of the process).
struct Walking<'v, V> {
    visitor: &'v mut V,
    walk: u64,
}

/// The views of one callback's info pointer.
///
/// # Safety
/// `info` must be null or the reference info JVMTI passed to the running callback.
#[inline(always)]
unsafe fn reference_info<'cb>(kind: u32, info: *const sys::jvmtiHeapReferenceInfo) -> ReferenceInfo<'cb> {
    // SAFETY: as the caller promises; null becomes None.
    ReferenceInfo { info: unsafe { info.as_ref() }, kind }
}

// The C signature FollowReferences calls (clippy leaves `extern "C"` functions' argument counts alone).
unsafe extern "C" fn on_reference<V: HeapVisitor>(
    kind: sys::jvmtiHeapReferenceKind,
    info: *const sys::jvmtiHeapReferenceInfo,
    class_tag: sys::jlong,
    referrer_class_tag: sys::jlong,
    size: sys::jlong,
    tag_ptr: *mut sys::jlong,
    referrer_tag_ptr: *mut sys::jlong,
    length: sys::jint,
    user_data: *mut c_void,
) -> sys::jint {
    if tag_ptr.is_null() {
        return 0;
    }
    // SAFETY: JVMTI's arguments to this running callback, tag pointers non-null (checked, the referrer's by
    // `then`), and `user_data` the `Walking` that `walk_references` passed.
    unsafe {
        let walk = walk_of::<V>(user_data);
        let reference = HeapReference {
            kind,
            info: reference_info(kind, info),
            class_tag,
            referrer_class_tag,
            size,
            tag: TagSlot::new(tag_ptr, walk),
            referrer_tag: (!referrer_tag_ptr.is_null()).then(|| TagSlot::new(referrer_tag_ptr, walk)),
            length,
        };
        visit::<V>(user_data, |v| v.reference(reference))
    }
}

unsafe extern "C" fn on_primitive_field<V: HeapVisitor>(
    kind: sys::jvmtiHeapReferenceKind,
    info: *const sys::jvmtiHeapReferenceInfo,
    object_class_tag: sys::jlong,
    object_tag_ptr: *mut sys::jlong,
    value: sys::jvalue,
    value_type: sys::jvmtiPrimitiveType,
    user_data: *mut c_void,
) -> sys::jint {
    if object_tag_ptr.is_null() {
        return 0;
    }
    // SAFETY: as in on_reference.
    unsafe {
        let walk = walk_of::<V>(user_data);
        let field = PrimitiveField {
            kind,
            info: reference_info(kind, info),
            class_tag: object_class_tag,
            tag: TagSlot::new(object_tag_ptr, walk),
            value: PrimitiveValue::of(value, value_type),
        };
        visit::<V>(user_data, |v| v.primitive_field(field))
    }
}

unsafe extern "C" fn on_array_values<V: HeapVisitor>(
    class_tag: sys::jlong,
    size: sys::jlong,
    tag_ptr: *mut sys::jlong,
    element_count: sys::jint,
    element_type: sys::jvmtiPrimitiveType,
    elements: *const c_void,
    user_data: *mut c_void,
) -> sys::jint {
    if tag_ptr.is_null() {
        return 0;
    }
    let bytes = element_count.max(0) as usize * primitive_size(element_type);
    // SAFETY: as in on_reference; JVMTI passes `element_count` elements of `element_type` at `elements`,
    // readable while the callback runs (none: an empty slice, without touching the pointer).
    unsafe {
        let walk = walk_of::<V>(user_data);
        let elements = if bytes == 0 || elements.is_null() {
            &[][..]
        } else {
            std::slice::from_raw_parts(elements as *const u8, bytes)
        };
        let array = PrimitiveArray {
            class_tag,
            size,
            tag: TagSlot::new(tag_ptr, walk),
            count: element_count,
            element_type,
            elements,
        };
        visit::<V>(user_data, |v| v.array_values(array))
    }
}

/// The number of the walk `user_data` belongs to.
///
/// # Safety
/// As for [`visit`].
#[inline(always)]
unsafe fn walk_of<V>(user_data: *mut c_void) -> u64 {
    // SAFETY: the caller's contract: `user_data` is the live `Walking<V>` of this walk.
    unsafe { (*(user_data as *const Walking<V>)).walk }
}

/// Hands a callback to the visitor `user_data` points to; a panic answers [`HeapVisitor::on_panic`] instead
/// of unwinding into the VM.
///
/// # Safety
/// `user_data` is the `Walking` handed to FollowReferences with these callbacks: it outlives the call, and
/// nothing else borrows it meanwhile (callbacks come on the VM thread, one at a time).
#[inline(always)]
unsafe fn visit<V: HeapVisitor>(user_data: *mut c_void, callback: impl FnOnce(&mut V) -> i32) -> i32 {
    // SAFETY: the caller's contract above.
    let visitor = unsafe { &mut *(*(user_data as *mut Walking<V>)).visitor };
    guard(|| Some(callback(visitor)), None).unwrap_or_else(|| visitor.on_panic())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn primitive_values_keep_their_bits() {
        let v = sys::jvalue { i: -2 };
        assert_eq!(PrimitiveValue::of(v, sys::JVMTI_PRIMITIVE_TYPE_INT).map(|p| p.bits), Some(0xFFFF_FFFE));
        let v = sys::jvalue { d: 1.5 };
        assert_eq!(PrimitiveValue::of(v, sys::JVMTI_PRIMITIVE_TYPE_DOUBLE).map(|p| p.bits), Some(1.5f64.to_bits()));
        let v = sys::jvalue { b: -1 };
        assert_eq!(PrimitiveValue::of(v, sys::JVMTI_PRIMITIVE_TYPE_BYTE).map(|p| p.bits), Some(0xFF));
        assert_eq!(PrimitiveValue::of(v, 0), None);
    }
}
