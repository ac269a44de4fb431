//! The JVMTI heap callbacks of every heap walk ([`HeapVisitor`]: the dump's, the probe's), and the
//! conversion of the values they report.

#[cfg(doc)]
use super::Walk;
use crate::panic_guard::guard;
use hprof_format::tags::BasicType;
use jvmti::{HeapCallbacks, sys};
use std::ffi::c_void;

pub const VISIT: i32 = sys::JVMTI_VISIT_OBJECTS as i32;
pub const ABORT: i32 = sys::JVMTI_VISIT_ABORT as i32;

pub fn basic_type(t: u32) -> Option<BasicType> {
    Some(match t {
        sys::JVMTI_PRIMITIVE_TYPE_BOOLEAN => BasicType::Boolean,
        sys::JVMTI_PRIMITIVE_TYPE_BYTE => BasicType::Byte,
        sys::JVMTI_PRIMITIVE_TYPE_CHAR => BasicType::Char,
        sys::JVMTI_PRIMITIVE_TYPE_SHORT => BasicType::Short,
        sys::JVMTI_PRIMITIVE_TYPE_INT => BasicType::Int,
        sys::JVMTI_PRIMITIVE_TYPE_LONG => BasicType::Long,
        sys::JVMTI_PRIMITIVE_TYPE_FLOAT => BasicType::Float,
        sys::JVMTI_PRIMITIVE_TYPE_DOUBLE => BasicType::Double,
        _ => return None,
    })
}

pub fn primitive_array_name(ty: BasicType) -> &'static str {
    match ty {
        BasicType::Boolean => "boolean[]",
        BasicType::Byte => "byte[]",
        BasicType::Char => "char[]",
        BasicType::Short => "short[]",
        BasicType::Int => "int[]",
        BasicType::Long => "long[]",
        BasicType::Float => "float[]",
        BasicType::Double => "double[]",
        BasicType::Object => "java.lang.Object[]",
    }
}

/// A primitive value's type and raw bits, zero-extended.
pub fn primitive_bits(value: sys::jvalue, value_type: u32) -> Option<(BasicType, u64)> {
    let ty = basic_type(value_type)?;
    // SAFETY: the jvalue union is read as the member `value_type` names, as JVMTI filled it.
    let bits = unsafe {
        match ty {
            BasicType::Boolean => value.z as u64,
            BasicType::Byte => value.b as u8 as u64,
            BasicType::Char => value.c as u64,
            BasicType::Short => value.s as u16 as u64,
            BasicType::Int => value.i as u32 as u64,
            BasicType::Long => value.j as u64,
            BasicType::Float => value.f.to_bits() as u64,
            BasicType::Double => value.d.to_bits(),
            BasicType::Object => return None,
        }
    };
    Some((ty, bits))
}

/// What a heap walk does with JVMTI's reports: the dump's walk ([`Walk`]) and the probe's
/// (`naming::probe`). One set of `extern "C"` callbacks serves both: `user_data` is the visitor, and a
/// panic answers [`HeapVisitor::on_panic`] instead of unwinding into the VM.
pub trait HeapVisitor {
    #[allow(clippy::too_many_arguments)]
    fn reference(
        &mut self,
        kind: u32,
        info: *const sys::jvmtiHeapReferenceInfo,
        class_tag: i64,
        referrer_class_tag: i64,
        size: i64,
        tag_ptr: *mut i64,
        referrer_tag_ptr: *mut i64,
        length: i32,
    ) -> i32;

    fn primitive_field(
        &mut self,
        kind: u32,
        info: *const sys::jvmtiHeapReferenceInfo,
        class_tag: i64,
        tag_ptr: *mut i64,
        value: sys::jvalue,
        value_type: u32,
    ) -> i32;

    #[allow(clippy::too_many_arguments)]
    fn array_values(
        &mut self,
        class_tag: i64,
        size: i64,
        tag_ptr: *mut i64,
        count: i32,
        element_type: u32,
        elements: *const c_void,
    ) -> i32;

    /// A callback panicked: the answer to give the walk.
    fn on_panic(&mut self) -> i32;
}

/// The callbacks for visitor `V`; primitive fields reported only if `fields`.
pub fn heap_callbacks<V: HeapVisitor>(fields: bool) -> HeapCallbacks {
    // SAFETY: a C struct of integers and nullable pointers, for which all-zero bytes are a valid value.
    let mut callbacks: HeapCallbacks = unsafe { std::mem::zeroed() };
    callbacks.heap_reference_callback = Some(on_reference::<V>);
    if fields {
        callbacks.primitive_field_callback = Some(on_primitive_field::<V>);
    }
    callbacks.array_primitive_value_callback = Some(on_array_values::<V>);
    callbacks
}

#[allow(clippy::too_many_arguments)]
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
    // SAFETY: user_data is the visitor handed to FollowReferences with these callbacks.
    unsafe {
        visit::<V>(user_data, |v| {
            v.reference(kind, info, class_tag, referrer_class_tag, size, tag_ptr, referrer_tag_ptr, length)
        })
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
    // SAFETY: as in on_reference.
    unsafe {
        visit::<V>(user_data, |v| v.primitive_field(kind, info, object_class_tag, object_tag_ptr, value, value_type))
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
    // SAFETY: as in on_reference.
    unsafe {
        visit::<V>(user_data, |v| v.array_values(class_tag, size, tag_ptr, element_count, element_type, elements))
    }
}

/// Hands a callback to the visitor `user_data` points to; a panic answers [`HeapVisitor::on_panic`] instead
/// of unwinding into the VM.
///
/// # Safety
/// `user_data` is the visitor handed to FollowReferences with these callbacks: it outlives the call, and
/// nothing else borrows it meanwhile (callbacks come on the VM thread, one at a time).
#[inline(always)]
unsafe fn visit<V: HeapVisitor>(user_data: *mut c_void, callback: impl FnOnce(&mut V) -> i32) -> i32 {
    // SAFETY: the caller's contract above.
    let visitor = unsafe { &mut *(user_data as *mut V) };
    guard(|| Some(callback(visitor)), None).unwrap_or_else(|| visitor.on_panic())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn primitive_values_keep_their_bits() {
        let v = sys::jvalue { i: -2 };
        assert_eq!(primitive_bits(v, sys::JVMTI_PRIMITIVE_TYPE_INT), Some((BasicType::Int, 0xFFFF_FFFE)));
        let v = sys::jvalue { d: 1.5 };
        assert_eq!(primitive_bits(v, sys::JVMTI_PRIMITIVE_TYPE_DOUBLE), Some((BasicType::Double, 1.5f64.to_bits())));
        let v = sys::jvalue { b: -1 };
        assert_eq!(primitive_bits(v, sys::JVMTI_PRIMITIVE_TYPE_BYTE), Some((BasicType::Byte, 0xFF)));
    }
}
