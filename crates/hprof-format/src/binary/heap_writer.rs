//! Heap-dump sub-records written: the counterpart of [`super::heap`]'s reader, byte for byte what it reads
//! (round-trip tests below). A writer streams sub-records of known length into an [`SubRecordOut`], which
//! decides where segments end (a sub-record never straddles two HEAP DUMP SEGMENTs): `begin(len)` announces
//! each, then its bytes follow in pieces. Objects arrays are streamed too — the head, then the elements
//! ([`HeapWriter::element`], [`HeapWriter::null_elements`]) in index order. A writer that cuts segments
//! itself heads each with [`HeapWriter::segment_head`]; instance values are assembled with
//! [`HeapWriter::place_value`].

use super::writer::{RECORD_HEAD, record_head};
use crate::tags::{BasicType, heap as sub, record};
use crate::text::heap::RootLine;
use std::io;

/// Where sub-records go.
pub trait SubRecordOut {
    /// A sub-record of exactly `len` bytes follows.
    fn begin(&mut self, len: u64) -> io::Result<()>;
    fn put(&mut self, bytes: &[u8]) -> io::Result<()>;
}

/// Sub-records back to back, with no segment headers (a HEAP DUMP body; tests).
impl SubRecordOut for Vec<u8> {
    fn begin(&mut self, _len: u64) -> io::Result<()> {
        Ok(())
    }
    fn put(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.extend_from_slice(bytes);
        Ok(())
    }
}

/// Writes sub-records with identifiers of `id_size` (4 or 8) bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HeapWriter {
    pub id_size: u32,
}

/// A CLASS DUMP's contents. Statics carry raw bits (an identifier for references).
#[derive(Debug, Clone, Copy)]
pub struct ClassDumpOut<'a> {
    pub class_id: u64,
    pub trace: u32,
    pub super_id: u64,
    pub loader_id: u64,
    pub signers_id: u64,
    pub domain_id: u64,
    pub instance_size: u32,
    /// Resolved constant pool entries that are references: index and identifier.
    pub constants: &'a [(u16, u64)],
    /// Name identifier, type, value bits.
    pub statics: &'a [(u64, BasicType, u64)],
    /// Name identifier, type.
    pub fields: &'a [(u64, BasicType)],
}

impl HeapWriter {
    pub fn new(id_size: u32) -> HeapWriter {
        assert!(id_size == 4 || id_size == 8, "identifiers are 4 or 8 bytes");
        HeapWriter { id_size }
    }

    #[inline]
    fn id(&self, out: &mut dyn SubRecordOut, v: u64) -> io::Result<()> {
        out.put(&v.to_be_bytes()[8 - self.id_size as usize..])
    }

    /// A value of `ty` from raw bits, at its size in the file.
    pub fn value(&self, out: &mut dyn SubRecordOut, ty: BasicType, bits: u64) -> io::Result<()> {
        let size = ty.size(self.id_size) as usize;
        out.put(&bits.to_be_bytes()[8 - size..])
    }

    /// Places a field value of `ty`, from raw bits, in an INSTANCE DUMP's `values` at byte `at`, big-endian
    /// at its size in the file; a value that would not fit in `values` is left out.
    #[inline]
    pub fn place_value(&self, values: &mut [u8], at: u32, ty: BasicType, bits: u64) {
        let size = ty.size(self.id_size) as usize;
        let at = at as usize;
        if let Some(dst) = values.get_mut(at..at + size) {
            dst.copy_from_slice(&bits.to_be_bytes()[8 - size..]);
        }
    }

    /// The header of a HEAP DUMP SEGMENT whose body of `len` bytes follows; its time is 0, as HotSpot
    /// writes it. Bodies over 4 GiB are refused.
    pub fn segment_head(len: u64) -> io::Result<[u8; RECORD_HEAD]> {
        record_head(record::HEAP_DUMP_SEGMENT, 0, len)
    }

    /// Elements of `elem_size` bytes that fit in one sub-record (whose length is a u4); HotSpot truncates
    /// larger arrays the same way.
    pub fn max_elements(elem_size: u32) -> u32 {
        ((u32::MAX as u64 - 64) / elem_size as u64).min(u32::MAX as u64) as u32
    }

    pub fn root(&self, out: &mut dyn SubRecordOut, root: &RootLine<'_>) -> io::Result<()> {
        let id = self.id_size as u64;
        let (tag, oid, extra): (u8, u64, [Option<u64>; 2]) = match *root {
            RootLine::Unknown { id } => (sub::ROOT_UNKNOWN, id, [None, None]),
            // The JNI global's trace is the text format's only.
            RootLine::JniGlobal { id, ref_serial, .. } => (sub::ROOT_JNI_GLOBAL, id, [Some(ref_serial), None]),
            RootLine::JniLocal { id, thread, frame } => {
                (sub::ROOT_JNI_LOCAL, id, [Some(thread as u64), Some(frame as u32 as u64)])
            }
            RootLine::JavaFrame { id, thread, frame } => {
                (sub::ROOT_JAVA_FRAME, id, [Some(thread as u64), Some(frame as u32 as u64)])
            }
            RootLine::NativeStack { id, thread } => (sub::ROOT_NATIVE_STACK, id, [Some(thread as u64), None]),
            RootLine::StickyClass { id, .. } => (sub::ROOT_STICKY_CLASS, id, [None, None]),
            RootLine::ThreadBlock { id, thread } => (sub::ROOT_THREAD_BLOCK, id, [Some(thread as u64), None]),
            RootLine::MonitorUsed { id } => (sub::ROOT_MONITOR_USED, id, [None, None]),
            RootLine::ThreadObject { id, thread, trace } => {
                (sub::ROOT_THREAD_OBJECT, id, [Some(thread as u64), Some(trace as u64)])
            }
        };
        // A JNI global's second field is an identifier; every other extra field is a u4.
        let extra_len = |v: &Option<u64>| match v {
            None => 0,
            Some(_) if tag == sub::ROOT_JNI_GLOBAL => id,
            Some(_) => 4,
        };
        out.begin(1 + id + extra.iter().map(extra_len).sum::<u64>())?;
        out.put(&[tag])?;
        self.id(out, oid)?;
        for v in extra.iter().flatten() {
            if tag == sub::ROOT_JNI_GLOBAL {
                self.id(out, *v)?;
            } else {
                out.put(&(*v as u32).to_be_bytes())?;
            }
        }
        Ok(())
    }

    /// The byte size of a CLASS DUMP.
    pub fn class_dump_len(&self, c: &ClassDumpOut<'_>) -> u64 {
        let id = self.id_size as u64;
        let head = 1 + id + 4 + 6 * id + 4;
        let constants = 2 + c.constants.len() as u64 * (2 + 1 + id);
        let statics: u64 = 2 + c.statics.iter().map(|s| id + 1 + s.1.size(self.id_size) as u64).sum::<u64>();
        let fields = 2 + c.fields.len() as u64 * (id + 1);
        head + constants + statics + fields
    }

    pub fn class_dump(&self, out: &mut dyn SubRecordOut, c: &ClassDumpOut<'_>) -> io::Result<()> {
        out.begin(self.class_dump_len(c))?;
        out.put(&[sub::CLASS_DUMP])?;
        self.id(out, c.class_id)?;
        out.put(&c.trace.to_be_bytes())?;
        for v in [c.super_id, c.loader_id, c.signers_id, c.domain_id, 0, 0] {
            self.id(out, v)?;
        }
        out.put(&c.instance_size.to_be_bytes())?;
        out.put(&(c.constants.len() as u16).to_be_bytes())?;
        for &(index, id) in c.constants {
            out.put(&index.to_be_bytes())?;
            out.put(&[BasicType::Object as u8])?;
            self.id(out, id)?;
        }
        out.put(&(c.statics.len() as u16).to_be_bytes())?;
        for &(name, ty, bits) in c.statics {
            self.id(out, name)?;
            out.put(&[ty as u8])?;
            self.value(out, ty, bits)?;
        }
        out.put(&(c.fields.len() as u16).to_be_bytes())?;
        for &(name, ty) in c.fields {
            self.id(out, name)?;
            out.put(&[ty as u8])?;
        }
        Ok(())
    }

    /// The head of an INSTANCE DUMP with 8-byte identifiers, for the walk's millions of instances: one
    /// copy of these 25 bytes and one of the values.
    pub fn instance_head8(id: u64, trace: u32, class_id: u64, values_len: u32) -> [u8; 25] {
        let mut head = [0u8; 25];
        head[0] = sub::INSTANCE_DUMP;
        head[1..9].copy_from_slice(&id.to_be_bytes());
        head[9..13].copy_from_slice(&trace.to_be_bytes());
        head[13..21].copy_from_slice(&class_id.to_be_bytes());
        head[21..25].copy_from_slice(&values_len.to_be_bytes());
        head
    }

    /// The byte size of an INSTANCE DUMP with `values_len` bytes of values.
    pub fn instance_len(&self, values_len: usize) -> u64 {
        1 + 2 * self.id_size as u64 + 8 + values_len as u64
    }

    /// INSTANCE DUMP; `values` are the field values, big-endian, own class's first.
    pub fn instance(
        &self,
        out: &mut dyn SubRecordOut,
        id: u64,
        trace: u32,
        class_id: u64,
        values: &[u8],
    ) -> io::Result<()> {
        out.begin(self.instance_len(values.len()))?;
        out.put(&[sub::INSTANCE_DUMP])?;
        self.id(out, id)?;
        out.put(&trace.to_be_bytes())?;
        self.id(out, class_id)?;
        out.put(&(values.len() as u32).to_be_bytes())?;
        out.put(values)
    }

    /// The head of an OBJECT ARRAY DUMP of `length` elements (at most [`HeapWriter::max_elements`]); the
    /// caller then puts exactly `length` elements ([`HeapWriter::element`], [`HeapWriter::null_elements`]).
    pub fn object_array_head(
        &self,
        out: &mut dyn SubRecordOut,
        id: u64,
        trace: u32,
        length: u32,
        class_id: u64,
    ) -> io::Result<()> {
        let idn = self.id_size as u64;
        out.begin(1 + idn + 8 + idn + length as u64 * idn)?;
        out.put(&[sub::OBJECT_ARRAY_DUMP])?;
        self.id(out, id)?;
        out.put(&trace.to_be_bytes())?;
        out.put(&length.to_be_bytes())?;
        self.id(out, class_id)
    }

    /// The next element of the OBJECT ARRAY DUMP begun by [`HeapWriter::object_array_head`].
    #[inline]
    pub fn element(&self, out: &mut dyn SubRecordOut, id: u64) -> io::Result<()> {
        self.id(out, id)
    }

    /// The next `n` elements of that array, all null.
    pub fn null_elements(&self, out: &mut dyn SubRecordOut, n: u64) -> io::Result<()> {
        const ZEROS: [u8; 4096] = [0; 4096];
        let mut bytes = n * self.id_size as u64;
        while bytes > 0 {
            let k = bytes.min(ZEROS.len() as u64) as usize;
            out.put(&ZEROS[..k])?;
            bytes -= k as u64;
        }
        Ok(())
    }

    /// PRIMITIVE ARRAY DUMP of `length` elements of `ty`; `elements` holds them in the machine's byte order
    /// (as JVMTI reports them) and are written big-endian. Arrays too long for one sub-record are cut, as
    /// HotSpot cuts them.
    pub fn primitive_array(
        &self,
        out: &mut dyn SubRecordOut,
        id: u64,
        trace: u32,
        ty: BasicType,
        length: u32,
        elements: &[u8],
    ) -> io::Result<()> {
        let size = ty.size(self.id_size);
        let length = length.min(Self::max_elements(size));
        let data = &elements[..(length as usize * size as usize).min(elements.len())];
        out.begin(1 + self.id_size as u64 + 9 + data.len() as u64)?;
        out.put(&[sub::PRIMITIVE_ARRAY_DUMP])?;
        self.id(out, id)?;
        out.put(&trace.to_be_bytes())?;
        out.put(&length.to_be_bytes())?;
        out.put(&[ty as u8])?;
        put_big_endian(out, data, size as usize)
    }
}

/// Writes machine-order elements of `size` bytes big-endian, a chunk at a time.
fn put_big_endian(out: &mut dyn SubRecordOut, data: &[u8], size: usize) -> io::Result<()> {
    if size == 1 || cfg!(target_endian = "big") {
        return out.put(data);
    }
    let mut chunk = [0u8; 8192];
    for part in data.chunks(chunk.len()) {
        let dst = &mut chunk[..part.len()];
        for (src, dst) in part.chunks_exact(size).zip(dst.chunks_exact_mut(size)) {
            for k in 0..size {
                dst[k] = src[size - 1 - k];
            }
        }
        out.put(dst)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::binary::{HeapRecord, HeapRecords, Value};

    fn read(body: &[u8], id_size: u32) -> Vec<HeapRecord<'_>> {
        HeapRecords::new(body, 0, id_size).map(|r| r.expect("sub-record").1).collect()
    }

    #[test]
    fn roots_round_trip() {
        for id_size in [4, 8] {
            let w = HeapWriter::new(id_size);
            let roots = [
                RootLine::Unknown { id: 0x10 },
                RootLine::JniGlobal { id: 0x11, ref_serial: 7, trace: 3 },
                RootLine::JniLocal { id: 0x12, thread: 2, frame: 1 },
                RootLine::JavaFrame { id: 0x13, thread: 2, frame: -1 },
                RootLine::NativeStack { id: 0x14, thread: 3 },
                RootLine::StickyClass { id: 0x15, name: "java.lang.Object" },
                RootLine::ThreadBlock { id: 0x16, thread: 4 },
                RootLine::MonitorUsed { id: 0x17 },
                RootLine::ThreadObject { id: 0x18, thread: 5, trace: 300001 },
            ];
            let mut body = Vec::new();
            for r in &roots {
                w.root(&mut body, r).unwrap();
            }
            let got = read(&body, id_size);
            use HeapRecord::*;
            assert!(matches!(got[0], RootUnknown { id: 0x10 }));
            assert!(matches!(got[1], RootJniGlobal { id: 0x11, jni_ref: 7 }));
            assert!(matches!(got[2], RootJniLocal { id: 0x12, thread_serial: 2, frame: 1 }));
            assert!(matches!(got[3], RootJavaFrame { id: 0x13, thread_serial: 2, frame: u32::MAX }));
            assert!(matches!(got[4], RootNativeStack { id: 0x14, thread_serial: 3 }));
            assert!(matches!(got[5], RootStickyClass { id: 0x15 }));
            assert!(matches!(got[6], RootThreadBlock { id: 0x16, thread_serial: 4 }));
            assert!(matches!(got[7], RootMonitorUsed { id: 0x17 }));
            assert!(matches!(got[8], RootThreadObject { id: 0x18, thread_serial: 5, trace_serial: 300001 }));
            assert_eq!(got.len(), roots.len(), "id size {id_size}");
        }
    }

    #[test]
    fn class_dumps_round_trip_with_every_value_type() {
        for id_size in [4, 8] {
            let w = HeapWriter::new(id_size);
            let statics = [
                (1, BasicType::Object, 0x99),
                (2, BasicType::Boolean, 1),
                (3, BasicType::Char, 0x263A),
                (4, BasicType::Float, 1.5f32.to_bits() as u64),
                (5, BasicType::Double, (-2.25f64).to_bits()),
                (6, BasicType::Byte, 0x80),
                (7, BasicType::Short, 0xFFFE),
                (8, BasicType::Int, 0xFFFF_FFF9),
                (9, BasicType::Long, 0x0102_0304_0506_0708),
            ];
            let fields = [(10, BasicType::Int), (11, BasicType::Object)];
            let c = ClassDumpOut {
                class_id: 0x100,
                trace: 300000,
                super_id: 0x101,
                loader_id: 0x102,
                signers_id: 0x103,
                domain_id: 0x104,
                instance_size: 4 + id_size,
                constants: &[(3, 0x200), (9, 0x201)],
                statics: &statics,
                fields: &fields,
            };
            let mut body = Vec::new();
            w.class_dump(&mut body, &c).unwrap();
            assert_eq!(body.len() as u64, w.class_dump_len(&c));
            let got = read(&body, id_size);
            let HeapRecord::ClassDump(d) = &got[0] else { panic!("{got:?}") };
            assert_eq!(
                (d.class_id, d.trace_serial, d.super_id, d.loader_id, d.signers_id, d.protection_domain_id),
                (0x100, 300000, 0x101, 0x102, 0x103, 0x104)
            );
            assert_eq!(d.instance_size, 4 + id_size);
            assert_eq!(d.constant_pool, vec![(3, Value::Object(0x200)), (9, Value::Object(0x201))]);
            let values: Vec<Value> = d.statics.iter().map(|s| s.value).collect();
            assert_eq!(
                values,
                vec![
                    Value::Object(0x99),
                    Value::Boolean(true),
                    Value::Char(0x263A),
                    Value::Float(1.5),
                    Value::Double(-2.25),
                    Value::Byte(-128),
                    Value::Short(-2),
                    Value::Int(-7),
                    Value::Long(0x0102_0304_0506_0708),
                ]
            );
            assert_eq!(d.statics.iter().map(|s| s.name_id).collect::<Vec<_>>(), (1..=9).collect::<Vec<u64>>());
            let decls: Vec<(u64, BasicType)> = d.fields.iter().map(|f| (f.name_id, f.ty)).collect();
            assert_eq!(decls, fields);
        }
    }

    #[test]
    fn objects_and_arrays_round_trip() {
        for id_size in [4u32, 8] {
            let w = HeapWriter::new(id_size);
            let mut body = Vec::new();
            let values = [0, 0, 0, 42, 0xAB, 0xCD, 0xEF, 0x01];
            w.instance(&mut body, 0x300, 300000, 0x100, &values).unwrap();
            if id_size == 8 {
                body.extend_from_slice(&HeapWriter::instance_head8(0x301, 300000, 0x100, 8));
                body.extend_from_slice(&values);
            }
            w.object_array_head(&mut body, 0x302, 300000, 6, 0x110).unwrap();
            w.element(&mut body, 0x300).unwrap();
            w.null_elements(&mut body, 1).unwrap();
            w.element(&mut body, 0x301).unwrap();
            w.null_elements(&mut body, 0).unwrap();
            w.null_elements(&mut body, 3).unwrap();
            let ints: Vec<u8> = [1i32, -1, 0x0102_0304].iter().flat_map(|v| v.to_ne_bytes()).collect();
            w.primitive_array(&mut body, 0x303, 300000, BasicType::Int, 3, &ints).unwrap();
            let chars: Vec<u8> = [0x41u16, 0x263A].iter().flat_map(|v| v.to_ne_bytes()).collect();
            w.primitive_array(&mut body, 0x304, 300000, BasicType::Char, 2, &chars).unwrap();
            w.primitive_array(&mut body, 0x305, 300000, BasicType::Byte, 0, &[]).unwrap();
            let got = read(&body, id_size);
            let mut at = 0;
            let mut instance = |expect_id: u64| {
                let HeapRecord::InstanceDump { id, trace_serial, class_id, values: v } = &got[at] else {
                    panic!("{:?}", got[at])
                };
                assert_eq!((*id, *trace_serial, *class_id, *v), (expect_id, 300000, 0x100, &values[..]));
                at += 1;
            };
            instance(0x300);
            if id_size == 8 {
                instance(0x301);
            }
            let HeapRecord::ObjectArrayDump { id, length, class_id, elements, .. } = &got[at] else { panic!() };
            let ids: Vec<u64> = crate::binary::heap::ids(elements, id_size).collect();
            assert_eq!((*id, *length, *class_id, ids), (0x302, 6, 0x110, vec![0x300, 0, 0x301, 0, 0, 0]));
            let HeapRecord::PrimitiveArrayDump { id, length, element_type, data, .. } = &got[at + 1] else { panic!() };
            assert_eq!((*id, *length, *element_type), (0x303, 3, BasicType::Int));
            assert_eq!(*data, &[0, 0, 0, 1, 0xFF, 0xFF, 0xFF, 0xFF, 1, 2, 3, 4][..], "big-endian in the file");
            let HeapRecord::PrimitiveArrayDump { data, .. } = &got[at + 2] else { panic!() };
            assert_eq!(*data, &[0, 0x41, 0x26, 0x3A][..]);
            let HeapRecord::PrimitiveArrayDump { length, data, .. } = &got[at + 3] else { panic!() };
            assert_eq!((*length, data.len()), (0, 0));
            assert_eq!(got.len(), at + 4);
        }
    }

    #[test]
    fn placed_values_read_back_as_their_types() {
        for id_size in [4u32, 8] {
            let w = HeapWriter::new(id_size);
            let fields = [
                (BasicType::Object, 0x1234_5678u64, Value::Object(0x1234_5678)),
                (BasicType::Boolean, 1, Value::Boolean(true)),
                (BasicType::Char, 0x263A, Value::Char(0x263A)),
                (BasicType::Float, 1.5f32.to_bits() as u64, Value::Float(1.5)),
                (BasicType::Double, (-2.25f64).to_bits(), Value::Double(-2.25)),
                (BasicType::Byte, 0xFF, Value::Byte(-1)),
                (BasicType::Short, 0xFFFE, Value::Short(-2)),
                (BasicType::Int, 0xFFFF_FFFD, Value::Int(-3)),
                (BasicType::Long, u64::MAX - 3, Value::Long(-4)),
            ];
            let len: u32 = fields.iter().map(|f| f.0.size(id_size)).sum();
            // Placed in reverse, as the walk places fields in the order the JVM reports them.
            let mut values = vec![0u8; len as usize];
            let mut at = len;
            for &(ty, bits, _) in fields.iter().rev() {
                at -= ty.size(id_size);
                w.place_value(&mut values, at, ty, bits);
            }
            let mut body = Vec::new();
            w.instance(&mut body, 0x300, 300000, 0x100, &values).unwrap();
            let got = read(&body, id_size);
            let HeapRecord::InstanceDump { values, .. } = &got[0] else { panic!("{:?}", got[0]) };
            let mut c = crate::binary::Cursor::new(values, 0, id_size, "instance values");
            for &(ty, _, expect) in &fields {
                assert_eq!(Value::read(&mut c, ty).unwrap(), expect, "{ty:?} with {id_size}-byte ids");
            }
            assert!(c.is_empty());
            // A value that would not fit is left out, not written short.
            let mut short = [0u8; 3];
            w.place_value(&mut short, 0, BasicType::Int, 0xFFFF_FFFF);
            assert_eq!(short, [0; 3]);
        }
    }

    #[test]
    fn segments_headed_here_read_back_as_heap_dump_segments() {
        let w = HeapWriter::new(8);
        let mut body = Vec::new();
        w.root(&mut body, &RootLine::StickyClass { id: 0x55, name: "x" }).unwrap();
        w.instance(&mut body, 0x300, 300000, 0x55, &[1, 2, 3, 4]).unwrap();
        let mut rw = crate::binary::RecordWriter::new(Vec::new(), crate::PROFILE_1_0_2, 8, 0).unwrap();
        rw.utf8(1, "before").unwrap();
        let mut data = rw.into_inner();
        data.extend_from_slice(&HeapWriter::segment_head(body.len() as u64).unwrap());
        data.extend_from_slice(&body);
        let h = crate::binary::parse_header(&data).unwrap();
        let raws: Vec<_> = crate::binary::Records::new(&data, &h).map(|r| r.unwrap()).collect();
        assert_eq!(raws.len(), 2);
        assert_eq!((raws[1].tag, raws[1].micros), (record::HEAP_DUMP_SEGMENT, 0), "time 0, as HotSpot writes it");
        let crate::binary::Record::HeapDump { segment: true, body: got } =
            crate::binary::Record::decode(&raws[1], 8).unwrap()
        else {
            panic!("not a segment")
        };
        assert_eq!(got, &body[..]);
        assert_eq!(read(got, 8).len(), 2);
        assert!(HeapWriter::segment_head(1 << 32).is_err(), "a body over 4 GiB cannot be expressed");
    }

    #[test]
    fn begin_announces_each_sub_record_length() {
        struct Lengths(Vec<u64>, u64);
        impl SubRecordOut for Lengths {
            fn begin(&mut self, len: u64) -> io::Result<()> {
                self.0.push(len);
                Ok(())
            }
            fn put(&mut self, bytes: &[u8]) -> io::Result<()> {
                self.1 += bytes.len() as u64;
                Ok(())
            }
        }
        let w = HeapWriter::new(8);
        let mut out = Lengths(Vec::new(), 0);
        w.root(&mut out, &RootLine::JniGlobal { id: 1, ref_serial: 2, trace: 0 }).unwrap();
        w.instance(&mut out, 1, 0, 2, &[0; 12]).unwrap();
        w.primitive_array(&mut out, 1, 0, BasicType::Long, 2, &[0; 16]).unwrap();
        assert_eq!(out.0, vec![17, 37, 34]);
        assert_eq!(out.0.iter().sum::<u64>(), out.1, "announced lengths are what was put");
    }
}
