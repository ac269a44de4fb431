//! Field values of single objects, read from their records (the graph keeps each object's offset), and
//! `java.lang.String` values as text.

use crate::dump::Dump;
use crate::heap::{ClassTable, HeapGraph, NO_CLASS};
use hprof_format::binary::{HeapRecord, HeapRecords, Value};
use hprof_format::tags::BasicType;

/// Where a field sits in an instance's values: the byte offset from the start and its type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FieldAt {
    pub offset: usize,
    pub ty: BasicType,
}

/// The field `name` of instances of class `class` (its own or inherited; the most derived wins).
pub fn field_at(classes: &ClassTable, class: u32, name: &str) -> Option<FieldAt> {
    let c = classes.classes.get(class as usize)?;
    classes.field_blocks(class, c.field_bytes as usize).find_map(|(k, base)| {
        k.own_fields.iter().find(|(n, _, _)| n == name).map(|&(_, ty, off)| FieldAt { offset: base + off as usize, ty })
    })
}

/// Reads one value of type `ty` at `off` in an instance's values (big-endian, as HPROF writes them).
pub fn value_at(values: &[u8], off: usize, ty: BasicType, id_size: u32) -> Option<Value> {
    let n = ty.size(id_size) as usize;
    let b = values.get(off..off + n)?;
    let mut w = [0u8; 8];
    w[8 - n..].copy_from_slice(b);
    let x = u64::from_be_bytes(w);
    Some(match ty {
        BasicType::Object => Value::Object(x),
        BasicType::Boolean => Value::Boolean(x != 0),
        BasicType::Char => Value::Char(x as u16),
        BasicType::Float => Value::Float(f32::from_bits(x as u32)),
        BasicType::Double => Value::Double(f64::from_bits(x)),
        BasicType::Byte => Value::Byte(x as u8 as i8),
        BasicType::Short => Value::Short(x as u16 as i16),
        BasicType::Int => Value::Int(x as u32 as i32),
        BasicType::Long => Value::Long(x as i64),
    })
}

/// A value as a whole number (booleans, bytes, chars, shorts, ints, longs), for sizes and flags.
pub fn as_int(v: Value) -> Option<i64> {
    Some(match v {
        Value::Boolean(b) => b as i64,
        Value::Byte(x) => x as i64,
        Value::Char(x) => x as i64,
        Value::Short(x) => x as i64,
        Value::Int(x) => x as i64,
        Value::Long(x) => x,
        _ => return None,
    })
}

/// Reads objects of a graph built with offsets.
pub struct ObjectReader<'a> {
    pub dump: &'a Dump,
    pub graph: &'a HeapGraph,
}

impl<'a> ObjectReader<'a> {
    pub fn new(dump: &'a Dump, graph: &'a HeapGraph) -> ObjectReader<'a> {
        ObjectReader { dump, graph }
    }

    /// The record of node `v` (`None` without offsets).
    pub fn record(&self, v: u32) -> Option<HeapRecord<'a>> {
        let at = *self.graph.offsets.as_ref()?.get(v as usize)? as usize;
        let data = self.dump.data();
        let (_, r) = HeapRecords::new(data.get(at..)?, at as u64, self.dump.id_size()).next()?.ok()?;
        Some(r)
    }

    /// Field `name` of instance `v`.
    pub fn field(&self, v: u32, name: &str) -> Option<Value> {
        let HeapRecord::InstanceDump { class_id, values, .. } = self.record(v)? else { return None };
        let class = self.graph.classes.find(class_id)?;
        let f = field_at(&self.graph.classes, class, name)?;
        value_at(values, f.offset, f.ty, self.dump.id_size())
    }

    /// The node an object field of `v` refers to.
    pub fn field_node(&self, v: u32, name: &str) -> Option<u32> {
        match self.field(v, name)? {
            Value::Object(id) if id != 0 => self.graph.node(id),
            _ => None,
        }
    }

    /// Element count of an array node.
    pub fn array_length(&self, v: u32) -> Option<u32> {
        match self.record(v)? {
            HeapRecord::ObjectArrayDump { length, .. }
            | HeapRecord::PrimitiveArrayDump { length, .. }
            | HeapRecord::PrimitiveArrayNoData { length, .. } => Some(length),
            _ => None,
        }
    }

    /// The text of a `java.lang.String` (compact Latin-1 or UTF-16 `byte[]`, or a `char[]` on JDK 8 and
    /// Android), at most `max_chars` characters; `None` for other objects.
    pub fn string_text(&self, v: u32, max_chars: usize) -> Option<String> {
        let coder = self.field(v, "coder").and_then(as_int).unwrap_or(0);
        let arr = self.field_node(v, "value")?;
        let (offset, count) = match (self.field(v, "offset"), self.field(v, "count")) {
            // JDK 6 and Android: a window into the array.
            (Some(o), Some(c)) => (as_int(o).unwrap_or(0).max(0) as usize, as_int(c).map(|c| c.max(0) as usize)),
            _ => (0, None),
        };
        let HeapRecord::PrimitiveArrayDump { element_type, data, .. } = self.record(arr)? else { return None };
        Some(decode_text(element_type, data, coder, offset, count, max_chars))
    }

    /// Text of a `String`, or of a `char[]`/`byte[]` held directly (JDK 8's `Thread.name`).
    pub fn text_of(&self, v: u32, max_chars: usize) -> Option<String> {
        match self.record(v)? {
            HeapRecord::PrimitiveArrayDump { element_type, data, .. } => {
                Some(decode_text(element_type, data, 0, 0, None, max_chars))
            }
            HeapRecord::InstanceDump { .. } => self.string_text(v, max_chars),
            _ => None,
        }
    }

    /// The class index of the class `class` extends, if it has a CLASS DUMP.
    pub fn super_of(&self, class: u32) -> u32 {
        let c = &self.graph.classes.classes[class as usize];
        if c.super_id == 0 { NO_CLASS } else { self.graph.classes.find(c.super_id).unwrap_or(NO_CLASS) }
    }

    /// Whether class `class` is `ancestor` or extends it.
    pub fn is_subclass(&self, mut class: u32, ancestor: u32) -> bool {
        for _ in 0..64 {
            if class == ancestor {
                return true;
            }
            if class == NO_CLASS {
                return false;
            }
            class = self.super_of(class);
        }
        false
    }
}

/// Decodes a string's array: `char[]` (big-endian in the file), or `byte[]` Latin-1 (`coder` 0) or UTF-16 in
/// the JVM's byte order (`coder` 1; little-endian on the machines HotSpot dumps come from).
pub fn decode_text(
    ty: BasicType,
    data: &[u8],
    coder: i64,
    offset: usize,
    count: Option<usize>,
    max_chars: usize,
) -> String {
    let units: Vec<u16> = match ty {
        BasicType::Char => data.chunks_exact(2).map(|c| u16::from_be_bytes([c[0], c[1]])).collect(),
        BasicType::Byte if coder == 1 => data.chunks_exact(2).map(|c| u16::from_le_bytes([c[0], c[1]])).collect(),
        BasicType::Byte => data.iter().map(|&b| b as u16).collect(),
        _ => Vec::new(),
    };
    let end = count.map_or(units.len(), |c| offset.saturating_add(c).min(units.len()));
    let units = units.get(offset.min(end)..end).unwrap_or(&[]);
    char::decode_utf16(units.iter().copied())
        .map(|c| c.unwrap_or(char::REPLACEMENT_CHARACTER))
        .take(max_chars)
        .collect()
}
