//! The check that object addresses can be trusted ([`super::addresses`]), made before each dump: a heap
//! walk over a few objects of known shape, made for the purpose, must show every address the callbacks
//! yield where it has to be.
//!
//! ```text
//! outer = Object[3] { inner, boxed, ints }      reached through a JNI local reference: its address is
//! inner = Object[2] { inner, boxed }              also read from that reference, independently
//! boxed = Integer(0x5EED1234)                   a primitive field
//! ints  = int[5] { 11, 22, 33, 44, 55 }         primitive array values
//! ```
//!
//! The walk starts at `outer` and follows array elements only. It must see `outer` at the address its
//! JNI reference holds, each object at one address as referee, as referrer (inner's reference to itself
//! included) and in its field and array value reports, all of them aligned inside the heap, and the
//! array lengths JVMTI reports in the arrays' headers. Reads of the objects themselves are made with
//! [`peek`], which fails instead of faulting, since nothing is trusted yet.
//!
//! Field offsets ([`super::field_offsets`]) are checked on the same walk: `Integer.value` must hold
//! 0x5EED1234 in `boxed`, and the static `Integer.MAX_VALUE` its value in Integer's class object.

use super::addresses::{ObjectAddresses, peek};
use super::callbacks::VISIT;
use super::field_offsets::FieldOffsets;
use crate::panic_guard::guard;
use jvmti::{HeapCallbacks, Jni, Jvmti, sys};
use std::ffi::c_void;

const BOXED: i32 = 0x5EED_1234;
const INTS: [i32; 5] = [11, 22, 33, 44, 55];

/// What one reference callback showed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Element {
    index: i32,
    referrer: u64,
    referee: u64,
    to_self: bool,
    /// The length JVMTI reports for the referee (-1: not an array), and the ones the headers hold.
    length: i32,
    referee_header: Option<i32>,
    referrer_header: Option<i32>,
    /// What `outer`'s JNI reference held at that moment.
    outer_handle: Option<u64>,
}

#[derive(Debug, Default)]
struct Seen {
    addresses: Option<ObjectAddresses>,
    outer: usize,
    /// The decoded offsets of Integer.value and Integer.MAX_VALUE, if any.
    value_offset: Option<u32>,
    max_offset: Option<u32>,
    elements: Vec<Element>,
    /// (referrer, class object, the int at `max_offset` in it) of each class reference.
    class_refs: Vec<(u64, u64, Option<i32>)>,
    /// (object, value, the int at `value_offset` in it) of each int field reported.
    int_fields: Vec<(u64, i32, Option<i32>)>,
    /// (object, count, values) of each int array reported.
    int_arrays: Vec<(u64, i32, Vec<i32>)>,
}

/// Checks object addresses on a walk of probe objects, and `offsets` if given; the error says what did
/// not hold. Ok(true): the field offsets can be trusted too.
pub fn check(jni: Jni, env: Jvmti, addresses: ObjectAddresses, offsets: Option<FieldOffsets>) -> Result<bool, String> {
    jni.with_local_frame(16, || {
        let outer = build(jni).map_err(|e| format!("the probe objects cannot be made: {e}"))?;
        let (value_offset, max_offset) = offsets.map_or((None, None), |o| integer_offsets(jni, env, o));
        let mut seen =
            Seen { addresses: Some(addresses), outer: outer as usize, value_offset, max_offset, ..Default::default() };
        let mut callbacks: HeapCallbacks = unsafe { std::mem::zeroed() };
        callbacks.heap_reference_callback = Some(on_reference);
        callbacks.primitive_field_callback = Some(on_field);
        callbacks.array_primitive_value_callback = Some(on_values);
        let user_data = &mut seen as *mut Seen as *const c_void;
        unsafe { env.follow_references(0, std::ptr::null_mut(), outer, &callbacks, user_data) }
            .map_err(|e| format!("the probe walk failed: {e}"))?;
        verify(&seen, &addresses)
    })
}

/// The offsets `offsets` decodes for Integer.value and Integer.MAX_VALUE.
fn integer_offsets(jni: Jni, env: Jvmti, offsets: FieldOffsets) -> (Option<u32>, Option<u32>) {
    let Ok(integer) = jni.find_class(c"java/lang/Integer") else { return (None, None) };
    let fields = env.field_infos(integer).unwrap_or_default();
    let field = |name: &str| fields.iter().find(|f| f.name == name && f.signature == "I").map(|f| f.field as usize);
    (field("value").and_then(|f| offsets.instance(f)), field("MAX_VALUE").and_then(|f| offsets.static_field(f)))
}

fn build(jni: Jni) -> Result<sys::jobject, jvmti::JniError> {
    let object = jni.find_class(c"java/lang/Object")?;
    let integer = jni.find_class(c"java/lang/Integer")?;
    let value_of = jni.static_method_id(integer, c"valueOf", c"(I)Ljava/lang/Integer;")?;
    let boxed = jni.call_static_object(integer, value_of, &[sys::jvalue { i: BOXED }])?;
    let ints = jni.new_int_array(&INTS)?;
    let inner = jni.new_object_array(2, object)?;
    jni.set_object_array_element(inner, 0, inner)?;
    jni.set_object_array_element(inner, 1, boxed)?;
    let outer = jni.new_object_array(3, object)?;
    for (i, o) in [inner, boxed, ints].into_iter().enumerate() {
        jni.set_object_array_element(outer, i as i32, o)?;
    }
    Ok(outer)
}

/// What the walk must have shown, given what it did show. Ok(true): the field offsets hold too.
fn verify(seen: &Seen, addresses: &ObjectAddresses) -> Result<bool, String> {
    let fail = |what: &str| Err(format!("object addresses failed the probe: {what} ({seen:?})"));
    let from =
        |index: i32, length: i32| seen.elements.iter().find(|e| !e.to_self && e.index == index && e.length == length);
    let (Some(to_inner), Some(to_ints)) = (from(0, 2), from(2, 5)) else {
        return fail("the probe arrays were not reported");
    };
    let outer = to_inner.referrer;
    if to_inner.outer_handle != Some(outer) {
        return fail("outer is not where its JNI reference points");
    }
    let (inner, ints) = (to_inner.referee, to_ints.referee);
    let Some(to_boxed) = seen.elements.iter().find(|e| e.referrer == outer && e.index == 1) else {
        return fail("outer's reference to the Integer was not reported");
    };
    let boxed = to_boxed.referee;
    let all = [outer, inner, boxed, ints];
    if all.iter().any(|&a| !addresses.heap.holds(a)) || (1..4).any(|i| all[..i].contains(&all[i])) {
        return fail("addresses outside the heap, misaligned or shared");
    }
    let from_outer: Vec<_> = seen.elements.iter().filter(|e| e.referrer == outer && !e.to_self).collect();
    if from_outer.len() != 3 || from_outer.iter().any(|e| e.referrer_header != Some(3)) {
        return fail("outer's element reports or length");
    }
    if to_inner.referee_header != Some(2) || to_ints.referee_header != Some(5) || to_boxed.length != -1 {
        return fail("array lengths in the headers");
    }
    let self_ref = seen.elements.iter().any(|e| e.to_self && e.index == 0 && e.referee == inner && e.referrer == inner);
    let inner_to_boxed =
        seen.elements.iter().any(|e| !e.to_self && e.index == 1 && e.referrer == inner && e.referee == boxed);
    if !self_ref || !inner_to_boxed {
        return fail("inner's references (to itself and to the Integer)");
    }
    if !seen.int_fields.iter().any(|&(o, v, _)| o == boxed && v == BOXED) {
        return fail("the Integer's value field");
    }
    if !seen.int_arrays.iter().any(|(o, n, v)| *o == ints && *n == INTS.len() as i32 && v[..] == INTS) {
        return fail("the int[]'s values");
    }
    let value_read = seen.int_fields.iter().any(|&(o, _, read)| o == boxed && read == Some(BOXED));
    let max_read = seen.class_refs.iter().any(|&(from, _, read)| from == boxed && read == Some(i32::MAX));
    Ok(value_read && max_read)
}

/// The int at `offset` in the object that may be at `addr`.
fn int_in(seen: &Seen, addr: u64, offset: Option<u32>) -> Option<i32> {
    let heap = seen.addresses?.heap;
    heap.holds(addr).then(|| peek::<i32>(addr + offset? as u64)).flatten()
}

/// The header length of the array that may be at `addr`, if `addr` can be an object.
fn header_length(seen: &Seen, addr: u64) -> Option<i32> {
    let heap = seen.addresses?.heap;
    heap.holds(addr).then(|| peek::<i32>(addr + heap.length_offset)).flatten()
}

#[allow(clippy::too_many_arguments)]
unsafe extern "C" fn on_reference(
    kind: sys::jvmtiHeapReferenceKind,
    info: *const sys::jvmtiHeapReferenceInfo,
    _class_tag: sys::jlong,
    _referrer_class_tag: sys::jlong,
    _size: sys::jlong,
    tag_ptr: *mut sys::jlong,
    referrer_tag_ptr: *mut sys::jlong,
    length: sys::jint,
    user_data: *mut c_void,
) -> sys::jint {
    let seen = unsafe { &mut *(user_data as *mut Seen) };
    guard(
        || {
            if referrer_tag_ptr.is_null() {
                return 0;
            }
            // Words of the callback wrappers on the VM thread's stack: readable whatever their layout.
            let referee = unsafe { *(tag_ptr as *const u64).sub(2) };
            let to_self = referrer_tag_ptr == tag_ptr;
            let referrer = if to_self { referee } else { unsafe { *(referrer_tag_ptr as *const u64).sub(1) } };
            if kind == sys::JVMTI_HEAP_REFERENCE_CLASS {
                seen.class_refs.push((referrer, referee, int_in(seen, referee, seen.max_offset)));
            }
            if kind != sys::JVMTI_HEAP_REFERENCE_ARRAY_ELEMENT || info.is_null() {
                return 0;
            }
            let element = Element {
                index: unsafe { (*info).array.index },
                referrer,
                referee,
                to_self,
                length,
                referee_header: if length >= 0 { header_length(seen, referee) } else { None },
                referrer_header: header_length(seen, referrer),
                // A JNI local reference points to the slot holding the object (the low bits tag a kind).
                outer_handle: peek::<u64>(seen.outer as u64 & !3),
            };
            seen.elements.push(element);
            VISIT
        },
        0,
    )
}

unsafe extern "C" fn on_field(
    kind: sys::jvmtiHeapReferenceKind,
    _info: *const sys::jvmtiHeapReferenceInfo,
    _class_tag: sys::jlong,
    tag_ptr: *mut sys::jlong,
    value: sys::jvalue,
    value_type: sys::jvmtiPrimitiveType,
    user_data: *mut c_void,
) -> sys::jint {
    let seen = unsafe { &mut *(user_data as *mut Seen) };
    guard(
        || {
            if kind == sys::JVMTI_HEAP_REFERENCE_FIELD && value_type == sys::JVMTI_PRIMITIVE_TYPE_INT {
                let object = unsafe { *(tag_ptr as *const u64).sub(2) };
                seen.int_fields.push((object, unsafe { value.i }, int_in(seen, object, seen.value_offset)));
            }
            0
        },
        0,
    )
}

unsafe extern "C" fn on_values(
    _class_tag: sys::jlong,
    _size: sys::jlong,
    tag_ptr: *mut sys::jlong,
    count: sys::jint,
    element_type: sys::jvmtiPrimitiveType,
    elements: *const c_void,
    user_data: *mut c_void,
) -> sys::jint {
    let seen = unsafe { &mut *(user_data as *mut Seen) };
    guard(
        || {
            if element_type == sys::JVMTI_PRIMITIVE_TYPE_INT && !elements.is_null() && count >= 0 {
                let n = (count as usize).min(INTS.len());
                let values = unsafe { std::slice::from_raw_parts(elements as *const i32, n) }.to_vec();
                seen.int_arrays.push((unsafe { *(tag_ptr as *const u64).sub(2) }, count, values));
            }
            0
        },
        0,
    )
}
