//! Binary heap dump: sub-records packed into HEAP DUMP SEGMENT records of at most 1 MiB (as HotSpot
//! writes them), never straddling two segments; a sub-record larger than that gets a segment of its own,
//! streamed without being assembled in memory; hprof-format's `HeapWriter` encodes each sub-record, this sink
//! decides where segments end. Segments go to a [`RecordBytes`] (a spool, see `sink`); the field names they refer to
//! are STRING records written to the profile beforehand ([`FieldNames`]).

use super::RecordBytes;
use crate::capabilities::heap_dump::plan::layout::{ClassPlan, DumpClass};
use crate::capabilities::heap_dump::walk::heap_sink::{ClassValues, HeapSink, Root};
use crate::output::Output;
use hprof_format::ID_SIZE;
use hprof_format::binary::{ClassDumpOut, HeapWriter, RECORD_HEAD, SubRecordOut};
use hprof_format::serial_base;
use hprof_format::tags::BasicType;
use std::io;

/// Largest segment body assembled in memory.
pub const SEGMENT_LIMIT: usize = 1 << 20;

/// Trace serial on every object: HPROF's "no trace recorded".
const NO_TRACE: u32 = serial_base::TRACE;

/// Per class index: STRING ids of the static (its own, then HotSpot's `vm_statics`) and of the instance
/// field names.
#[derive(Debug, Default)]
pub struct FieldNames(Vec<(Vec<u64>, Vec<u64>)>);

impl FieldNames {
    /// Writes (once per name) the STRING records of the field names of classes `indexes` of `plan`;
    /// `None` if the profile is closed.
    pub fn add(&mut self, output: &Output, plan: &ClassPlan, indexes: impl Iterator<Item = usize>) -> Option<()> {
        self.0.resize(plan.len(), Default::default());
        let indexes: Vec<usize> = indexes.collect();
        // Every class's statics (its own, then HotSpot's), then its instance fields, in one call.
        let names = indexes.iter().flat_map(|&k| {
            let class = &plan.classes[k];
            let statics = class.statics.iter().map(|d| &*d.name);
            let vm_statics = class.vm_statics.iter().map(|(name, _)| &**name);
            statics.chain(vm_statics).chain(class.fields.iter().map(|d| &*d.name))
        });
        let mut ids = output.string_ids(names)?.into_iter();
        for k in indexes {
            let class = &plan.classes[k];
            let statics = ids.by_ref().take(class.statics.len() + class.vm_statics.len()).collect();
            self.0[k] = (statics, ids.by_ref().take(class.fields.len()).collect());
        }
        Some(())
    }
}

pub struct BinarySink<W> {
    spool: W,
    pub names: FieldNames,
    /// The segment being filled.
    pending: Vec<u8>,
    /// Bytes of a standalone sub-record still to stream.
    direct_left: u64,
    /// Elements of the object array being streamed: the next index and the length.
    array: Option<(u32, u32)>,
    pub segments: u64,
}

impl<W: RecordBytes> BinarySink<W> {
    pub fn new(spool: W, names: FieldNames) -> BinarySink<W> {
        BinarySink {
            spool,
            names,
            pending: segment_start(Vec::with_capacity(SEGMENT_HEAD + SEGMENT_LIMIT)),
            direct_left: 0,
            array: None,
            segments: 0,
        }
    }

    /// Writes the last segment and hands back the spool, which then holds the whole dump but its END.
    pub fn finish(mut self) -> io::Result<W> {
        self.flush_segment()?;
        Ok(self.spool)
    }

    fn segment_header(&mut self, len: u64) -> io::Result<()> {
        let head = HeapWriter::segment_head(len)?;
        self.segments += 1;
        self.spool.write_all(&head)
    }

    /// Bytes of sub-records in the segment being filled.
    fn body_len(&self) -> usize {
        self.pending.len() - SEGMENT_HEAD
    }

    /// Hands the segment being filled, its header written in the room kept for it, to the spool whole.
    fn flush_segment(&mut self) -> io::Result<()> {
        if self.body_len() > 0 {
            let head = HeapWriter::segment_head(self.body_len() as u64)?;
            self.pending[..SEGMENT_HEAD].copy_from_slice(&head);
            self.segments += 1;
            self.spool.write_chunk(&mut self.pending)?;
            self.pending = segment_start(std::mem::take(&mut self.pending));
        }
        Ok(())
    }

    /// Makes room for a sub-record of exactly `len` bytes.
    fn begin(&mut self, len: u64) -> io::Result<()> {
        debug_assert_eq!(self.direct_left, 0, "previous sub-record not complete");
        if len as usize > SEGMENT_LIMIT {
            self.flush_segment()?;
            self.segment_header(len)?;
            self.direct_left = len;
        } else if self.body_len() + len as usize > SEGMENT_LIMIT {
            self.flush_segment()?;
        }
        Ok(())
    }

    fn put(&mut self, bytes: &[u8]) -> io::Result<()> {
        if self.direct_left > 0 {
            self.direct_left -= bytes.len() as u64;
            self.spool.write_all(bytes)
        } else {
            self.pending.extend_from_slice(bytes);
            Ok(())
        }
    }
}

/// Bytes of a HEAP DUMP SEGMENT record's header.
const SEGMENT_HEAD: usize = RECORD_HEAD;

/// An empty segment: room for its header.
fn segment_start(mut buf: Vec<u8>) -> Vec<u8> {
    buf.clear();
    buf.resize(SEGMENT_HEAD, 0);
    buf
}

/// The sink decides where segments end; hprof-format's [`HeapWriter`] encodes the sub-records.
impl<W: RecordBytes> SubRecordOut for BinarySink<W> {
    fn begin(&mut self, len: u64) -> io::Result<()> {
        BinarySink::<W>::begin(self, len)
    }
    fn put(&mut self, bytes: &[u8]) -> io::Result<()> {
        BinarySink::<W>::put(self, bytes)
    }
}

const WRITER: HeapWriter = HeapWriter { id_size: ID_SIZE };

impl<W: RecordBytes> HeapSink for BinarySink<W> {
    fn root(&mut self, root: &Root<'_>) -> io::Result<()> {
        WRITER.root(self, root)
    }

    fn class_dump(&mut self, index: u32, class: &DumpClass, values: &ClassValues) -> io::Result<()> {
        let (static_names, field_names) = self.names.0.get(index as usize).cloned().unwrap_or_default();
        let own = class.statics.iter().enumerate().map(|(i, s)| (s.ty, values.statics.get(i).copied().unwrap_or(0)));
        let vm = class.vm_statics.iter().map(|&(_, id)| (BasicType::Object, id));
        let statics: Vec<(u64, BasicType, u64)> = own
            .chain(vm)
            .enumerate()
            .map(|(i, (ty, value))| (static_names.get(i).copied().unwrap_or(0), ty, value))
            .collect();
        let fields: Vec<(u64, BasicType)> =
            class.fields.iter().enumerate().map(|(i, f)| (field_names.get(i).copied().unwrap_or(0), f.ty)).collect();
        let c = ClassDumpOut {
            class_id: class.id(),
            trace: NO_TRACE,
            super_id: class.super_id,
            loader_id: values.loader,
            signers_id: values.signers,
            domain_id: values.domain,
            instance_size: class.instance_size,
            constants: &values.constants,
            statics: &statics,
            fields: &fields,
        };
        WRITER.class_dump(self, &c)
    }

    fn instance(&mut self, id: u64, class: &DumpClass, _size: u64, values: &[u8]) -> io::Result<()> {
        self.begin(WRITER.instance_len(values.len()))?;
        if self.direct_left == 0 {
            // The common case, millions of times: one header, one copy into the segment.
            const _: () = assert!(ID_SIZE == 8);
            let head = HeapWriter::instance_head8(id, NO_TRACE, class.id(), values.len() as u32);
            self.pending.extend_from_slice(&head);
            self.pending.extend_from_slice(values);
            return Ok(());
        }
        // Too large for a segment (its begin is done): the same bytes, streamed.
        self.put(&HeapWriter::instance_head8(id, NO_TRACE, class.id(), values.len() as u32))?;
        self.put(values)
    }

    fn object_array_begin(&mut self, id: u64, class: &DumpClass, _size: u64, length: u32) -> io::Result<()> {
        let length = length.min(HeapWriter::max_elements(ID_SIZE));
        WRITER.object_array_head(self, id, NO_TRACE, length, class.id())?;
        self.array = Some((0, length));
        Ok(())
    }

    fn object_array_element(&mut self, index: u32, id: u64) -> io::Result<()> {
        let Some((next, length)) = self.array else { return Ok(()) };
        if index < next || index >= length {
            return Ok(());
        }
        WRITER.null_elements(self, (index - next) as u64)?;
        WRITER.element(self, id)?;
        self.array = Some((index + 1, length));
        Ok(())
    }

    fn object_array_end(&mut self) -> io::Result<()> {
        if let Some((next, length)) = self.array.take() {
            WRITER.null_elements(self, (length - next) as u64)?;
        }
        Ok(())
    }

    fn primitive_array(
        &mut self,
        id: u64,
        _class_name: &str,
        _size: u64,
        ty: BasicType,
        length: u32,
        elements: &[u8],
    ) -> io::Result<()> {
        WRITER.primitive_array(self, id, NO_TRACE, ty, length, elements)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::capabilities::heap_dump::plan::layout::ClassKind;
    use hprof_format::binary::{HeapRecord, HeapRecords, heap::ids};
    use hprof_format::tags::record;

    /// Splits spooled segments into (body length, sub-records).
    fn segments(bytes: &[u8]) -> Vec<(usize, Vec<HeapRecord<'_>>)> {
        let mut out = Vec::new();
        let mut at = 0;
        while at < bytes.len() {
            assert_eq!(bytes[at], record::HEAP_DUMP_SEGMENT);
            let len = u32::from_be_bytes(bytes[at + 5..at + 9].try_into().unwrap()) as usize;
            let body = &bytes[at + 9..at + 9 + len];
            let subs = HeapRecords::new(body, 0, 8).map(|r| r.unwrap().1).collect();
            out.push((len, subs));
            at += 9 + len;
        }
        out
    }

    #[test]
    fn sub_records_never_straddle_segments_and_huge_ones_stand_alone() {
        let mut sink = BinarySink::new(Vec::new(), FieldNames::default());
        for id in 0..100_000u64 {
            sink.root(&Root::JavaFrame { id: id + 1, thread: 200001, frame: 3 }).unwrap();
        }
        // 2 MiB of ints: a segment of its own, converted to big-endian on the way.
        let ints: Vec<u8> = (0..(1u32 << 19)).flat_map(|v| v.to_ne_bytes()).collect();
        sink.primitive_array(7, "int[]", 0, BasicType::Int, 1 << 19, &ints).unwrap();
        let class = DumpClass::bare(0x55, "java.lang.Object[]", ClassKind::ObjectArray);
        sink.object_array_begin(8, &class, 0, 200_000).unwrap();
        sink.object_array_element(3, 0x99).unwrap();
        sink.object_array_element(199_998, 0x98).unwrap();
        sink.object_array_end().unwrap();
        sink.root(&Root::StickyClass { id: 0x55, name: "x" }).unwrap();
        let bytes = sink.finish().unwrap();

        let segs = segments(&bytes);
        let mut frames = 0;
        for (len, subs) in &segs {
            assert!(*len <= SEGMENT_LIMIT || subs.len() == 1, "a segment over 1 MiB holds one sub-record");
            frames += subs.iter().filter(|s| matches!(s, HeapRecord::RootJavaFrame { frame: 3, .. })).count();
        }
        assert_eq!(frames, 100_000, "every root, whole");
        let all: Vec<&HeapRecord<'_>> = segs.iter().flat_map(|(_, s)| s).collect();
        let Some(HeapRecord::PrimitiveArrayDump { length, data, .. }) =
            all.iter().find(|s| matches!(s, HeapRecord::PrimitiveArrayDump { .. })).copied()
        else {
            panic!("no primitive array")
        };
        assert_eq!(*length, 1 << 19);
        assert_eq!(&data[4..8], &1u32.to_be_bytes());
        assert_eq!(&data[data.len() - 4..], &((1u32 << 19) - 1).to_be_bytes());
        let Some(HeapRecord::ObjectArrayDump { length, class_id, elements, .. }) =
            all.iter().find(|s| matches!(s, HeapRecord::ObjectArrayDump { .. })).copied()
        else {
            panic!("no object array")
        };
        assert_eq!((*length, *class_id), (200_000, 0x55));
        let e: Vec<u64> = ids(elements, 8).collect();
        assert_eq!((e[3], e[199_998], e[199_999], e.iter().filter(|&&x| x != 0).count()), (0x99, 0x98, 0, 2));
        assert!(matches!(all.last(), Some(HeapRecord::RootStickyClass { id: 0x55 })));
    }
}
