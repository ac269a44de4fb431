//! What HeapDumpGraph (java/programs) builds, checked in a dump: counts, the list, field and static values
//! of every type, arrays. Shared by the tests that dump it.

use super::{Dump, HeapFile};
use hprof_format::binary::Value;
use hprof_format::tags::BasicType;

pub const NODES: u64 = 123_457;
pub const NODE: &str = "HeapDumpGraph$Node";

pub fn assert_sound(file: &HeapFile, dump: &Dump, what: &str) {
    let problems = dump.problems(file);
    assert!(problems.is_empty(), "{what}: the dump is not sound:\n{}", problems.join("\n"));
}

pub fn object_of(v: Option<Value>) -> u64 {
    match v {
        Some(Value::Object(id)) => id,
        other => panic!("expected a reference, got {other:?}"),
    }
}

/// Checks everything HeapDumpGraph built: counts, the list, field and static values, arrays.
pub fn assert_graph(file: &HeapFile, d: &Dump, what: &str) {
    let counts = d.counts(file);
    assert_eq!(counts.get(NODE), Some(&NODES), "{what}: Node instances");
    assert_eq!(counts.get("HeapDumpGraph"), None, "{what}: no instance of the main class was made");

    let head = object_of(d.static_value(file, "HeapDumpGraph", "head"));
    let mut node = head;
    let mut expected = NODES;
    while node != 0 {
        expected -= 1;
        assert_eq!(d.field_u64(file, node, "value"), Some(expected), "{what}: value of node {node:x}");
        node = d.field_u64(file, node, "next").unwrap();
    }
    assert_eq!(expected, 0, "{what}: the list must hold every node");

    // Every field type, own class and superclass, at the right place.
    let field = |name: &str| d.field_u64(file, head, name).unwrap_or_else(|| panic!("{what}: field {name}"));
    assert_eq!(field("b"), 0xF9, "{what}: byte -7");
    assert_eq!(field("c"), 'Z' as u64);
    assert_eq!(field("s"), 0xFFFE, "{what}: short -2");
    assert_eq!(field("f"), 1.5f32.to_bits() as u64);
    assert_eq!(field("d"), (-2.25f64).to_bits());
    assert_eq!(field("z"), 1);
    assert_eq!(field("baseLong"), 0x1122334455667788);
    let base_ref = field("baseRef");
    let string_class = d.instances[&base_ref].class_id;
    assert_eq!(file.class_name(string_class), Some("java.lang.String"), "{what}: baseRef is a String");

    // Statics of every type.
    let s = |name: &str| d.static_value(file, "HeapDumpGraph", name).unwrap_or_else(|| panic!("{what}: static {name}"));
    assert_eq!(s("staticBoolean"), Value::Boolean(true));
    assert_eq!(s("staticByte"), Value::Byte(-5));
    assert_eq!(s("staticChar"), Value::Char('q' as u16));
    assert_eq!(s("staticShort"), Value::Short(1234));
    assert_eq!(s("staticInt"), Value::Int(-123456));
    assert_eq!(s("staticLong"), Value::Long(i64::MIN + 1));
    assert_eq!(s("staticFloat"), Value::Float(3.25));
    assert_eq!(s("staticDouble"), Value::Double(6.5e300));
    assert_eq!(d.static_value(file, "HeapDumpGraph$Base", "baseStatic"), Some(Value::Int(99)));
    assert_eq!(
        d.static_value(file, "HeapDumpGraph$Labeled", "LABEL_SEED"),
        Some(Value::Long(7)),
        "{what}: interface static"
    );

    // Primitive arrays, big-endian.
    let prim = |name: &str| &d.primitive_arrays[&object_of(d.static_value(file, "HeapDumpGraph", name))];
    let ints = prim("ints");
    assert_eq!((ints.ty, ints.length), (BasicType::Int, 5));
    assert_eq!(ints.data, [1i32, 2, 3, i32::MAX, -1].iter().flat_map(|v| v.to_be_bytes()).collect::<Vec<u8>>());
    assert_eq!(prim("longs").data, [i64::MAX, -2].iter().flat_map(|v| v.to_be_bytes()).collect::<Vec<u8>>());
    assert_eq!(prim("doubles").data, [0.5f64, -1e-300].iter().flat_map(|v| v.to_be_bytes()).collect::<Vec<u8>>());
    assert_eq!(prim("chars").data, [0, b'h', 0, b'i', 0, 0xE9]);
    assert_eq!(prim("bytes").data, [1, 0x80, 0x7F]);
    assert_eq!(prim("booleans").data, [1, 0, 1]);
    assert_eq!(prim("shorts").ty, BasicType::Short);
    assert_eq!(prim("floats").data, [-0.0f32, 2.5].iter().flat_map(|v| v.to_be_bytes()).collect::<Vec<u8>>());

    // Object arrays: nulls inside and at the end keep their places.
    let mixed_id = object_of(d.static_value(file, "HeapDumpGraph", "mixed"));
    let mixed = &d.object_arrays[&mixed_id];
    assert_eq!(file.class_name(mixed.class_id), Some("java.lang.Object[]"));
    assert_eq!(mixed.elements.len(), 10, "{what}: trailing nulls count");
    assert_eq!(mixed.elements[5], head);
    assert_eq!(mixed.elements[6], object_of(d.static_value(file, "HeapDumpGraph", "ints")));
    assert!(d.instances.contains_key(&mixed.elements[2]));
    for i in [0, 1, 3, 4, 7, 8, 9] {
        assert_eq!(mixed.elements[i], 0, "{what}: mixed[{i}] is null");
    }
    // Arrays over 1 MiB: segments of their own, elements in place.
    let big = prim("bigLongs");
    assert_eq!(big.length, 300_000);
    assert_eq!(&big.data[299_999 * 8..], &42i64.to_be_bytes());
    let wide = &d.object_arrays[&object_of(d.static_value(file, "HeapDumpGraph", "wide"))];
    assert_eq!(wide.elements.len(), 200_000);
    assert!(wide.elements[0] != 0 && wide.elements[199_998] != 0 && wide.elements[199_999] == 0);
    assert_eq!(wide.elements.iter().filter(|&&e| e != 0).count(), 2);
    let nested = &d.object_arrays[&object_of(d.static_value(file, "HeapDumpGraph", "nested"))];
    assert_eq!(file.class_name(nested.class_id), Some("java.lang.String[][]"));
    assert_eq!(nested.elements.len(), 3);
    assert_eq!(nested.elements[1], 0);
    assert_eq!(d.object_arrays[&nested.elements[0]].elements.len(), 3);
    assert_eq!(d.object_arrays[&nested.elements[0]].elements[1], 0);
    assert_eq!(d.object_arrays[&nested.elements[2]].elements.len(), 0);
}
