//! What an object holds that a query may want besides its size: an array's length, a String's text, a
//! boxed primitive's value. Read from the object's record at its offset in the file.

use hprof_analysis::Dump;
use hprof_analysis::heap::{ClassInfo, HeapGraph};
use hprof_format::binary::{HeapRecord, HeapRecords};
use hprof_format::tags::BasicType;

/// The classes whose instances get a `value`: java.lang.String and the boxes, by class index.
pub struct ValueClasses {
    string: Option<u32>,
    boxes: Vec<u32>,
}

const BOXES: [&str; 8] = [
    "java.lang.Integer",
    "java.lang.Long",
    "java.lang.Short",
    "java.lang.Byte",
    "java.lang.Character",
    "java.lang.Boolean",
    "java.lang.Float",
    "java.lang.Double",
];

impl ValueClasses {
    pub fn of(g: &HeapGraph) -> ValueClasses {
        let classes = &g.classes.classes;
        let index = |name: &str| classes.iter().position(|c| c.name == name && c.id != 0).map(|i| i as u32);
        ValueClasses { string: index("java.lang.String"), boxes: BOXES.iter().filter_map(|n| index(n)).collect() }
    }
}

/// An object's record, found by its offset (the graph must keep offsets).
fn record<'a>(dump: &'a Dump, g: &HeapGraph, v: u32) -> Option<HeapRecord<'a>> {
    let at = *g.offsets.as_ref()?.get(v as usize)? as usize;
    let data = dump.data().get(at..)?;
    HeapRecords::new(data, at as u64, dump.id_size()).next()?.ok().map(|(_, r)| r)
}

/// The length of an array object, `None` for other objects.
pub fn array_length(dump: &Dump, g: &HeapGraph, v: u32) -> Option<i64> {
    match record(dump, g, v)? {
        HeapRecord::ObjectArrayDump { length, .. }
        | HeapRecord::PrimitiveArrayDump { length, .. }
        | HeapRecord::PrimitiveArrayNoData { length, .. } => Some(length as i64),
        _ => None,
    }
}

/// A field's value bytes in an instance's values, by name (the class's own fields first, then inherited).
fn field<'v>(g: &HeapGraph, class: u32, values: &'v [u8], name: &str, id_size: u32) -> Option<(BasicType, &'v [u8])> {
    g.classes.field_blocks(class, values.len()).find_map(|(c, base): (&ClassInfo, usize)| {
        c.own_fields.iter().find(|(n, _, _)| n == name).and_then(|(_, t, off)| {
            let s = base + *off as usize;
            values.get(s..s + t.size(id_size) as usize).map(|b| (*t, b))
        })
    })
}

fn be(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0u64, |acc, &b| (acc << 8) | b as u64)
}

/// A String's text or a box's value, as text, exactly (`hprof query` escapes what it prints); `None` for
/// other objects or when the parts are not in the dump.
pub fn value(dump: &Dump, g: &HeapGraph, vc: &ValueClasses, v: u32) -> Option<String> {
    let class = g.class_of[v as usize];
    let is_string = vc.string == Some(class);
    if !is_string && !vc.boxes.contains(&class) {
        return None;
    }
    let HeapRecord::InstanceDump { values, .. } = record(dump, g, v)? else { return None };
    let idn = dump.id_size();
    if !is_string {
        let (t, b) = field(g, class, values, "value", idn)?;
        return Some(primitive_text(t, b));
    }
    let (_, id) = field(g, class, values, "value", idn)?;
    // JDK 9+: byte[] with `coder` 0 (Latin-1) or 1 (UTF-16 in the VM's byte order); JDK 8: char[].
    let coder = field(g, class, values, "coder", idn).map(|(_, b)| b[0]);
    let array = g.node(be(id))?;
    let HeapRecord::PrimitiveArrayDump { element_type, data, .. } = record(dump, g, array)? else { return None };
    let text = match (element_type, coder) {
        (BasicType::Char, _) => String::from_utf16_lossy(
            &data.chunks_exact(2).map(|c| u16::from_be_bytes([c[0], c[1]])).collect::<Vec<_>>(),
        ),
        (BasicType::Byte, Some(1)) => {
            // The little-endian VMs (x86-64, AArch64) that write the dumps we read.
            String::from_utf16_lossy(
                &data.chunks_exact(2).map(|c| u16::from_le_bytes([c[0], c[1]])).collect::<Vec<_>>(),
            )
        }
        (BasicType::Byte, _) => data.iter().map(|&b| b as char).collect(),
        _ => return None,
    };
    Some(text)
}

fn primitive_text(t: BasicType, b: &[u8]) -> String {
    let u = be(b);
    match t {
        BasicType::Boolean => (u != 0).to_string(),
        BasicType::Char => char::from_u32(u as u32).map(String::from).unwrap_or_default(),
        BasicType::Float => f32::from_bits(u as u32).to_string(),
        BasicType::Double => f64::from_bits(u).to_string(),
        BasicType::Byte => (u as u8 as i8).to_string(),
        BasicType::Short => (u as u16 as i16).to_string(),
        BasicType::Int => (u as u32 as i32).to_string(),
        BasicType::Long => (u as i64).to_string(),
        BasicType::Object => format!("0x{u:x}"),
    }
}
