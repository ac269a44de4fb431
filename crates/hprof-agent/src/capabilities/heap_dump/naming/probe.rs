//! The check that object addresses can be trusted (`hotspot::heap::ObjectAddresses`), made before each dump: a heap
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
//! JNI local and weak global references hold ([`naming`](super) reads weak global references), each
//! object at one address as referee, as referrer (inner's reference to itself included) and in its field and array value reports, all of them aligned inside the heap, and the
//! array lengths JVMTI reports in the arrays' headers. Reads of the objects themselves are made with
//! [`peek`], which fails instead of faulting, since nothing is trusted yet.
//!
//! Field offsets ([`super::field_offsets`]) are checked on the same walk: `Integer.value` must hold
//! 0x5EED1234 in `boxed`, and the static `Integer.MAX_VALUE` its value in Integer's class object; and
//! the class metadata `hotspot::heap::ObjectSizes` reads: Integer's instances are as large as JVMTI says
//! `boxed` is, int[]'s are arrays, and both class objects are as large as JVMTI says; and the class words
//! in the headers: the two class objects' alike, the other objects' different from theirs.

use hotspot::heap::{FieldOffsets, ObjectAddresses, Shape, peek, shape};
use jvmti::heap_walk::{HeapReference, HeapVisitor, PrimitiveArray, PrimitiveField, VISIT};
use jvmti::{Jni, Jvmti, sys};

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
    size: i64,
    referee_class_word: Option<u64>,
    referee_header: Option<i32>,
    referrer_header: Option<i32>,
    /// What `outer`'s JNI local and weak global references held at that moment.
    outer_handle: Option<u64>,
    outer_global: Option<u64>,
}

/// What one class reference showed: the referrer, the class object and its size as JVMTI reports it, and
/// what the class object holds where [`Seen::max_offset`] and the object sizes' offsets point.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct ClassRef {
    referrer: u64,
    mirror: u64,
    mirror_size: i64,
    max_value: Option<i32>,
    layout_helper: Option<i32>,
    words: Option<i32>,
    class_word: Option<u64>,
}

#[derive(Debug, Default)]
struct Seen {
    addresses: Option<ObjectAddresses>,
    outer: usize,
    outer_global: usize,
    /// The decoded offsets of Integer.value and Integer.MAX_VALUE, if any.
    value_offset: Option<u32>,
    max_offset: Option<u32>,
    elements: Vec<Element>,
    class_refs: Vec<ClassRef>,
    /// (object, value, the int at `value_offset` in it) of each int field reported.
    int_fields: Vec<(u64, i32, Option<i32>)>,
    /// (object, count, values) of each int array reported.
    int_arrays: Vec<(u64, i32, Vec<i32>)>,
}

/// Checks object addresses on a walk of probe objects, and `offsets` if given. The outer error: no probe
/// could be walked this time. The inner result is the verdict: Ok(true) when the field offsets can be
/// trusted too, an error saying what did not hold.
pub fn check(
    jni: Jni,
    env: Jvmti,
    addresses: ObjectAddresses,
    offsets: Option<FieldOffsets>,
) -> Result<Result<bool, String>, String> {
    jni.with_local_frame(16, || {
        let outer = build(jni).map_err(|e| format!("the probe objects cannot be made: {e}"))?;
        let (value_offset, max_offset) = offsets.map_or((None, None), |o| integer_offsets(jni, env, o));
        let global = jni.new_weak_global_ref(outer);
        let mut seen = Seen {
            addresses: Some(addresses),
            outer: outer as usize,
            outer_global: global as usize,
            value_offset,
            max_offset,
            ..Default::default()
        };
        let walked = env.walk_references(outer, true, &mut seen);
        jni.delete_weak_global_ref(global);
        walked.map_err(|e| format!("the probe walk failed: {e}"))?;
        Ok(verify(&seen, &addresses))
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
    if to_inner.outer_handle != Some(outer) || to_inner.outer_global != Some(outer) {
        return fail("outer is not where its JNI references point");
    }
    let (inner, ints) = (to_inner.referee, to_ints.referee);
    let Some(to_boxed) = seen.elements.iter().find(|e| e.referrer == outer && e.index == 1) else {
        return fail("outer's reference to the Integer was not reported");
    };
    let boxed = to_boxed.referee;
    let all = [outer, inner, boxed, ints];
    if all.iter().any(|&a| !addresses.heap().holds(a)) || (1..4).any(|i| all[..i].contains(&all[i])) {
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
    let class_of = |object: u64| seen.class_refs.iter().find(|c| c.referrer == object);
    let (Some(integer), Some(int_array)) = (class_of(boxed), class_of(ints)) else {
        return fail("the probe objects' class references");
    };
    if addresses.heap().sizes.is_some() {
        let sized = |c: &ClassRef| c.words.is_some_and(|w| w as i64 * 8 == c.mirror_size);
        let boxed_size = integer.layout_helper.map(shape) == Some(Shape::Instance(to_boxed.size as u64));
        let int_arrays = int_array.layout_helper.map(shape) == Some(Shape::Array);
        if !boxed_size || !int_arrays || !sized(integer) || !sized(int_array) {
            return fail("the class metadata's sizes");
        }
    }
    if addresses.heap().class_word.is_some() {
        let class_class = integer.class_word.filter(|&w| w != 0 && int_array.class_word == Some(w));
        let others = [to_inner.referee_class_word, to_ints.referee_class_word, to_boxed.referee_class_word];
        if class_class.is_none() || others.iter().any(|w| w.is_none_or(|w| w == 0 || Some(w) == class_class)) {
            return fail("the class words in the headers");
        }
    }
    let value_read = seen.int_fields.iter().any(|&(o, _, read)| o == boxed && read == Some(BOXED));
    Ok(value_read && integer.max_value == Some(i32::MAX))
}

/// What a class reference shows of the class object at `mirror`.
fn class_ref(seen: &Seen, referrer: u64, mirror: u64, mirror_size: i64) -> ClassRef {
    let sizes =
        seen.addresses.and_then(|a| a.heap().sizes).filter(|_| seen.addresses.is_some_and(|a| a.heap().holds(mirror)));
    let layout_helper = sizes.and_then(|s| {
        let klass = peek::<u64>(mirror + s.klass_offset)?;
        peek::<i32>(klass + s.layout_helper)
    });
    ClassRef {
        referrer,
        mirror,
        mirror_size,
        max_value: int_in(seen, mirror, seen.max_offset),
        layout_helper,
        words: sizes.and_then(|s| int_in(seen, mirror, Some(s.oop_size_offset as u32))),
        class_word: class_word_in(seen, mirror),
    }
}

/// The class word in the header of the object that may be at `addr`.
fn class_word_in(seen: &Seen, addr: u64) -> Option<u64> {
    let heap = *seen.addresses?.heap();
    if !heap.holds(addr) {
        return None;
    }
    match heap.class_word? {
        4 => peek::<u32>(addr + 8).map(u64::from),
        _ => peek::<u64>(addr + 8),
    }
}

/// The int at `offset` in the object that may be at `addr`.
fn int_in(seen: &Seen, addr: u64, offset: Option<u32>) -> Option<i32> {
    let heap = *seen.addresses?.heap();
    heap.holds(addr).then(|| peek::<i32>(addr + offset? as u64)).flatten()
}

/// The header length of the array that may be at `addr`, if `addr` can be an object.
fn header_length(seen: &Seen, addr: u64) -> Option<i32> {
    let heap = *seen.addresses?.heap();
    heap.holds(addr).then(|| peek::<i32>(addr + heap.length_offset)).flatten()
}

impl HeapVisitor for Seen {
    fn reference(&mut self, r: HeapReference<'_>) -> i32 {
        let Some(referrer_tag) = r.referrer_tag else { return 0 };
        // Words of the callback wrappers on the VM thread's stack: readable whatever their layout.
        let referee = hotspot::heap::raw_object(&r.tag);
        let to_self = referrer_tag == r.tag;
        let referrer = if to_self { referee } else { hotspot::heap::raw_referrer(&referrer_tag) };
        if r.kind == sys::JVMTI_HEAP_REFERENCE_CLASS {
            let class_ref = class_ref(self, referrer, referee, r.size);
            self.class_refs.push(class_ref);
        }
        let (length, size) = (r.length, r.size);
        let Some(index) = r.info.given_index().filter(|_| r.kind == sys::JVMTI_HEAP_REFERENCE_ARRAY_ELEMENT) else {
            return 0;
        };
        let element = Element {
            index,
            referrer,
            referee,
            to_self,
            length,
            size,
            referee_class_word: class_word_in(self, referee),
            referee_header: if length >= 0 { header_length(self, referee) } else { None },
            referrer_header: header_length(self, referrer),
            // A JNI local reference points to the slot holding the object (the low bits tag a kind).
            outer_handle: peek::<u64>(self.outer as u64 & !3),
            outer_global: peek::<u64>(self.outer_global as u64 & !3),
        };
        self.elements.push(element);
        VISIT
    }

    fn primitive_field(&mut self, f: PrimitiveField<'_>) -> i32 {
        if let (sys::JVMTI_HEAP_REFERENCE_FIELD, Some(value)) = (f.kind, f.value)
            && value.ty == sys::JVMTI_PRIMITIVE_TYPE_INT
        {
            let object = hotspot::heap::raw_object(&f.tag);
            self.int_fields.push((object, value.bits as u32 as i32, int_in(self, object, self.value_offset)));
        }
        0
    }

    fn array_values(&mut self, array: PrimitiveArray<'_>) -> i32 {
        if array.element_type == sys::JVMTI_PRIMITIVE_TYPE_INT && array.count >= 0 {
            let n = (array.count as usize).min(INTS.len());
            let values =
                array.elements.chunks_exact(4).take(n).map(|b| i32::from_ne_bytes([b[0], b[1], b[2], b[3]])).collect();
            self.int_arrays.push((hotspot::heap::raw_object(&array.tag), array.count, values));
        }
        0
    }

    /// The probe's checks then fail on what the walk did not show.
    fn on_panic(&mut self) -> i32 {
        0
    }
}
