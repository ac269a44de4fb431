//! Heap-dump sub-records (the body of HEAP DUMP 0x0C and HEAP DUMP SEGMENT 0x1C records), zero-copy:
//! instance field bytes and array elements stay slices of the file.

use super::cursor::{Cursor, FormatError};
use crate::tags::{BasicType, heap as sub};

/// A field or constant value.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Value {
    Object(u64),
    Boolean(bool),
    Char(u16),
    Float(f32),
    Double(f64),
    Byte(i8),
    Short(i16),
    Int(i32),
    Long(i64),
}

impl Value {
    pub fn read(c: &mut Cursor<'_>, ty: BasicType) -> Result<Value, FormatError> {
        Ok(match ty {
            BasicType::Object => Value::Object(c.id()?),
            BasicType::Boolean => Value::Boolean(c.u1()? != 0),
            BasicType::Char => Value::Char(c.u2()?),
            BasicType::Float => Value::Float(f32::from_bits(c.u4()?)),
            BasicType::Double => Value::Double(f64::from_bits(c.u8()?)),
            BasicType::Byte => Value::Byte(c.u1()? as i8),
            BasicType::Short => Value::Short(c.u2()? as i16),
            BasicType::Int => Value::Int(c.u4()? as i32),
            BasicType::Long => Value::Long(c.u8()? as i64),
        })
    }

    /// The referenced object, for reference values.
    pub fn object_id(self) -> Option<u64> {
        match self {
            Value::Object(id) => Some(id),
            _ => None,
        }
    }
}

/// A static field of a CLASS DUMP, with its value.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StaticField {
    pub name_id: u64,
    pub ty: BasicType,
    pub value: Value,
}

/// An instance field declaration of a CLASS DUMP (values are in each INSTANCE DUMP).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FieldDecl {
    pub name_id: u64,
    pub ty: BasicType,
}

#[derive(Debug, Clone, PartialEq)]
pub struct ClassDump {
    pub class_id: u64,
    pub trace_serial: u32,
    pub super_id: u64,
    pub loader_id: u64,
    pub signers_id: u64,
    pub protection_domain_id: u64,
    /// HPROF's instance size: the sum of the field sizes in the file, not the object's real size.
    pub instance_size: u32,
    pub constant_pool: Vec<(u16, Value)>,
    pub statics: Vec<StaticField>,
    /// This class's own instance fields, in the order their values appear in INSTANCE DUMPs.
    pub fields: Vec<FieldDecl>,
}

/// One heap-dump sub-record.
#[derive(Debug, Clone, PartialEq)]
pub enum HeapRecord<'a> {
    RootUnknown {
        id: u64,
    },
    RootJniGlobal {
        id: u64,
        jni_ref: u64,
    },
    RootJniLocal {
        id: u64,
        thread_serial: u32,
        frame: u32,
    },
    RootJavaFrame {
        id: u64,
        thread_serial: u32,
        frame: u32,
    },
    RootNativeStack {
        id: u64,
        thread_serial: u32,
    },
    RootStickyClass {
        id: u64,
    },
    RootThreadBlock {
        id: u64,
        thread_serial: u32,
    },
    RootMonitorUsed {
        id: u64,
    },
    RootThreadObject {
        id: u64,
        thread_serial: u32,
        trace_serial: u32,
    },
    ClassDump(Box<ClassDump>),
    /// Field values: this class's fields, then the superclass's, and so on.
    InstanceDump {
        id: u64,
        trace_serial: u32,
        class_id: u64,
        values: &'a [u8],
    },
    /// `elements` holds `length` identifiers.
    ObjectArrayDump {
        id: u64,
        trace_serial: u32,
        length: u32,
        class_id: u64,
        elements: &'a [u8],
    },
    /// `data` holds `length` big-endian elements of `element_type`.
    PrimitiveArrayDump {
        id: u64,
        trace_serial: u32,
        length: u32,
        element_type: BasicType,
        data: &'a [u8],
    },
    // Android (JAVA PROFILE 1.0.3) sub-records.
    RootInternedString {
        id: u64,
    },
    RootFinalizing {
        id: u64,
    },
    RootDebugger {
        id: u64,
    },
    RootReferenceCleanup {
        id: u64,
    },
    RootVmInternal {
        id: u64,
    },
    RootJniMonitor {
        id: u64,
        thread_serial: u32,
        frame: u32,
    },
    Unreachable {
        id: u64,
    },
    PrimitiveArrayNoData {
        id: u64,
        trace_serial: u32,
        length: u32,
        element_type: BasicType,
    },
    /// Switches the current heap (Android: 0 default, 'Z' zygote, 'A' app, 'I' image).
    HeapDumpInfo {
        heap_id: u32,
        name_id: u64,
    },
}

impl HeapRecord<'_> {
    /// The object the record is about (for roots, the object held).
    pub fn object_id(&self) -> Option<u64> {
        use HeapRecord::*;
        match self {
            RootUnknown { id }
            | RootJniGlobal { id, .. }
            | RootJniLocal { id, .. }
            | RootJavaFrame { id, .. }
            | RootNativeStack { id, .. }
            | RootStickyClass { id }
            | RootThreadBlock { id, .. }
            | RootMonitorUsed { id }
            | RootThreadObject { id, .. }
            | InstanceDump { id, .. }
            | ObjectArrayDump { id, .. }
            | PrimitiveArrayDump { id, .. }
            | RootInternedString { id }
            | RootFinalizing { id }
            | RootDebugger { id }
            | RootReferenceCleanup { id }
            | RootVmInternal { id }
            | RootJniMonitor { id, .. }
            | Unreachable { id }
            | PrimitiveArrayNoData { id, .. } => Some(*id),
            ClassDump(c) => Some(c.class_id),
            HeapDumpInfo { .. } => None,
        }
    }

    pub fn is_root(&self) -> bool {
        use HeapRecord::*;
        !matches!(
            self,
            ClassDump(_)
                | InstanceDump { .. }
                | ObjectArrayDump { .. }
                | PrimitiveArrayDump { .. }
                | Unreachable { .. }
                | PrimitiveArrayNoData { .. }
                | HeapDumpInfo { .. }
        )
    }
}

/// Iterates over the sub-records of one heap-dump record body. An unknown sub-record tag ends the walk
/// with an error (its length cannot be known), naming the tag and its file offset.
pub struct HeapRecords<'a> {
    cursor: Cursor<'a>,
    failed: bool,
}

impl<'a> HeapRecords<'a> {
    /// `body_offset` is the body's offset in the file, so that errors name file offsets.
    pub fn new(body: &'a [u8], body_offset: u64, id_size: u32) -> HeapRecords<'a> {
        HeapRecords { cursor: Cursor::new(body, body_offset, id_size, "heap dump sub-record"), failed: false }
    }

    fn basic_type(c: &Cursor<'_>, b: u8, what: &str) -> Result<BasicType, FormatError> {
        BasicType::from_u8(b).ok_or_else(|| FormatError::new(c.offset() - 1, format!("{what}: bad basic type {b}")))
    }

    fn parse_class(c: &mut Cursor<'a>) -> Result<ClassDump, FormatError> {
        let idn = c.id_size() as usize;
        let class_id = c.id()?;
        let trace_serial = c.u4()?;
        let super_id = c.id()?;
        let loader_id = c.id()?;
        let signers_id = c.id()?;
        let protection_domain_id = c.id()?;
        c.id()?;
        c.id()?;
        let instance_size = c.u4()?;
        let n = c.u2()? as u64;
        let n = c.checked_count(n, 3, "constant pool size")?;
        let mut constant_pool = Vec::with_capacity(n);
        for _ in 0..n {
            let index = c.u2()?;
            let b = c.u1()?;
            let ty = Self::basic_type(c, b, "CLASS DUMP constant")?;
            constant_pool.push((index, Value::read(c, ty)?));
        }
        let n = c.u2()? as u64;
        let n = c.checked_count(n, idn + 1, "static field count")?;
        let mut statics = Vec::with_capacity(n);
        for _ in 0..n {
            let name_id = c.id()?;
            let b = c.u1()?;
            let ty = Self::basic_type(c, b, "CLASS DUMP static field")?;
            statics.push(StaticField { name_id, ty, value: Value::read(c, ty)? });
        }
        let n = c.u2()? as u64;
        let n = c.checked_count(n, idn + 1, "instance field count")?;
        let mut fields = Vec::with_capacity(n);
        for _ in 0..n {
            let name_id = c.id()?;
            let b = c.u1()?;
            fields.push(FieldDecl { name_id, ty: Self::basic_type(c, b, "CLASS DUMP instance field")? });
        }
        Ok(ClassDump {
            class_id,
            trace_serial,
            super_id,
            loader_id,
            signers_id,
            protection_domain_id,
            instance_size,
            constant_pool,
            statics,
            fields,
        })
    }

    fn parse_one(c: &mut Cursor<'a>) -> Result<HeapRecord<'a>, FormatError> {
        let at = c.offset();
        let tag = c.u1()?;
        let idn = c.id_size() as usize;
        Ok(match tag {
            sub::ROOT_UNKNOWN => HeapRecord::RootUnknown { id: c.id()? },
            sub::ROOT_JNI_GLOBAL => HeapRecord::RootJniGlobal { id: c.id()?, jni_ref: c.id()? },
            sub::ROOT_JNI_LOCAL => HeapRecord::RootJniLocal { id: c.id()?, thread_serial: c.u4()?, frame: c.u4()? },
            sub::ROOT_JAVA_FRAME => HeapRecord::RootJavaFrame { id: c.id()?, thread_serial: c.u4()?, frame: c.u4()? },
            sub::ROOT_NATIVE_STACK => HeapRecord::RootNativeStack { id: c.id()?, thread_serial: c.u4()? },
            sub::ROOT_STICKY_CLASS => HeapRecord::RootStickyClass { id: c.id()? },
            sub::ROOT_THREAD_BLOCK => HeapRecord::RootThreadBlock { id: c.id()?, thread_serial: c.u4()? },
            sub::ROOT_MONITOR_USED => HeapRecord::RootMonitorUsed { id: c.id()? },
            sub::ROOT_THREAD_OBJECT => {
                HeapRecord::RootThreadObject { id: c.id()?, thread_serial: c.u4()?, trace_serial: c.u4()? }
            }
            sub::CLASS_DUMP => HeapRecord::ClassDump(Box::new(Self::parse_class(c)?)),
            sub::INSTANCE_DUMP => {
                let id = c.id()?;
                let trace_serial = c.u4()?;
                let class_id = c.id()?;
                let n = c.u4()? as u64;
                let n = c.checked_count(n, 1, "INSTANCE DUMP field bytes")?;
                HeapRecord::InstanceDump { id, trace_serial, class_id, values: c.bytes(n)? }
            }
            sub::OBJECT_ARRAY_DUMP => {
                let id = c.id()?;
                let trace_serial = c.u4()?;
                let length = c.u4()?;
                let class_id = c.id()?;
                let n = c.checked_count(length as u64, idn, "OBJECT ARRAY DUMP length")?;
                HeapRecord::ObjectArrayDump { id, trace_serial, length, class_id, elements: c.bytes(n * idn)? }
            }
            sub::PRIMITIVE_ARRAY_DUMP => {
                let id = c.id()?;
                let trace_serial = c.u4()?;
                let length = c.u4()?;
                let b = c.u1()?;
                let element_type = Self::basic_type(c, b, "PRIMITIVE ARRAY DUMP")?;
                let size = element_type.size(c.id_size()) as usize;
                let n = c.checked_count(length as u64, size, "PRIMITIVE ARRAY DUMP length")?;
                HeapRecord::PrimitiveArrayDump { id, trace_serial, length, element_type, data: c.bytes(n * size)? }
            }
            sub::ROOT_INTERNED_STRING => HeapRecord::RootInternedString { id: c.id()? },
            sub::ROOT_FINALIZING => HeapRecord::RootFinalizing { id: c.id()? },
            sub::ROOT_DEBUGGER => HeapRecord::RootDebugger { id: c.id()? },
            sub::ROOT_REFERENCE_CLEANUP => HeapRecord::RootReferenceCleanup { id: c.id()? },
            sub::ROOT_VM_INTERNAL => HeapRecord::RootVmInternal { id: c.id()? },
            sub::ROOT_JNI_MONITOR => HeapRecord::RootJniMonitor { id: c.id()?, thread_serial: c.u4()?, frame: c.u4()? },
            sub::UNREACHABLE => HeapRecord::Unreachable { id: c.id()? },
            sub::PRIMITIVE_ARRAY_NODATA => {
                let id = c.id()?;
                let trace_serial = c.u4()?;
                let length = c.u4()?;
                let b = c.u1()?;
                HeapRecord::PrimitiveArrayNoData {
                    id,
                    trace_serial,
                    length,
                    element_type: Self::basic_type(c, b, "PRIMITIVE ARRAY NODATA")?,
                }
            }
            sub::HEAP_DUMP_INFO => HeapRecord::HeapDumpInfo { heap_id: c.u4()?, name_id: c.id()? },
            other => {
                return Err(FormatError::new(
                    at,
                    format!("unknown heap dump sub-record tag 0x{other:02X}: cannot continue this segment"),
                ));
            }
        })
    }
}

impl<'a> Iterator for HeapRecords<'a> {
    /// The sub-record's file offset and the sub-record.
    type Item = Result<(u64, HeapRecord<'a>), FormatError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.failed || self.cursor.is_empty() {
            return None;
        }
        let at = self.cursor.offset();
        match Self::parse_one(&mut self.cursor) {
            Ok(r) => Some(Ok((at, r))),
            Err(e) => {
                self.failed = true;
                Some(Err(e))
            }
        }
    }
}

/// Reads the identifiers packed in an OBJECT ARRAY DUMP's elements.
pub fn ids(elements: &[u8], id_size: u32) -> impl Iterator<Item = u64> + '_ {
    elements.chunks_exact(id_size as usize).map(move |b| {
        if id_size == 4 {
            u32::from_be_bytes(b.try_into().unwrap()) as u64
        } else {
            u64::from_be_bytes(b.try_into().unwrap())
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::binary::Body;

    #[test]
    fn sub_records_round_trip() {
        let mut b = Body::new(8);
        b.u1(sub::ROOT_JAVA_FRAME).id(0x10).u4(200001).u4(2);
        b.u1(sub::CLASS_DUMP).id(0x20).u4(1).id(0x21).id(0).id(0).id(0).id(0).id(0).u4(12);
        b.u2(0); // constant pool
        b.u2(1).id(5).u1(BasicType::Int as u8).u4(42); // one static int
        b.u2(2).id(6).u1(BasicType::Object as u8).id(7).u1(BasicType::Int as u8);
        b.u1(sub::INSTANCE_DUMP).id(0x30).u4(1).id(0x20).u4(12).id(0x31).u4(9);
        b.u1(sub::OBJECT_ARRAY_DUMP).id(0x40).u4(1).u4(2).id(0x41).id(0x30).id(0);
        b.u1(sub::PRIMITIVE_ARRAY_DUMP).id(0x50).u4(1).u4(3).u1(BasicType::Char as u8).u2(65).u2(66).u2(67);
        let recs: Vec<_> = HeapRecords::new(b.as_slice(), 100, 8).map(|r| r.unwrap().1).collect();
        assert_eq!(recs[0], HeapRecord::RootJavaFrame { id: 0x10, thread_serial: 200001, frame: 2 });
        let HeapRecord::ClassDump(c) = &recs[1] else { panic!() };
        assert_eq!(c.statics[0].value, Value::Int(42));
        assert_eq!(c.fields.len(), 2);
        assert!(matches!(recs[2], HeapRecord::InstanceDump { id: 0x30, values, .. } if values.len() == 12));
        let HeapRecord::ObjectArrayDump { elements, .. } = &recs[3] else { panic!() };
        assert_eq!(ids(elements, 8).collect::<Vec<_>>(), vec![0x30, 0]);
        assert!(
            matches!(recs[4], HeapRecord::PrimitiveArrayDump { length: 3, data, .. } if data == [0, 65, 0, 66, 0, 67])
        );
    }

    #[test]
    fn unknown_tag_and_hostile_length_are_errors_with_offsets() {
        let mut b = Body::new(4);
        b.u1(0x77);
        let e = HeapRecords::new(b.as_slice(), 1000, 4).next().unwrap().unwrap_err();
        assert_eq!(e.offset, 1000);
        assert!(e.message.contains("0x77"));

        let mut b = Body::new(4);
        b.u1(sub::PRIMITIVE_ARRAY_DUMP).id(1).u4(1).u4(0x7fff_ffff).u1(BasicType::Long as u8);
        let e = HeapRecords::new(b.as_slice(), 0, 4).next().unwrap().unwrap_err();
        assert!(e.message.contains("PRIMITIVE ARRAY DUMP length"), "{e}");
    }
}
