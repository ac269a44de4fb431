use super::body::Body;
use super::records::MonitorTime;
use crate::model::{Site, SitesReport};
use crate::tags::record as tag;
use std::io::{self, Write};
use std::time::Instant;

/// Writes the header and then records. Knows nothing of interning: callers hand it identifiers and
/// serials they have already assigned (the agent's output layer keeps those tables).
/// A FRAME record's fields: the frame's identifier, its method's name, signature and source file as
/// STRING identifiers (0: no source file), its class's serial and its line (HPROF's negative codes included).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FrameRecord {
    pub frame_id: u64,
    pub method_name_id: u64,
    pub signature_id: u64,
    pub source_file_id: u64,
    pub class_serial: u32,
    pub line: i32,
}

pub struct RecordWriter<W: Write> {
    out: W,
    id_size: u32,
    started: Instant,
    scratch: Body,
}

impl<W: Write> RecordWriter<W> {
    /// Writes the header: version string and NUL, identifier size, milliseconds since the epoch.
    pub fn new(mut out: W, version: &str, id_size: u32, timestamp_ms: u64) -> io::Result<RecordWriter<W>> {
        out.write_all(version.as_bytes())?;
        out.write_all(&[0])?;
        out.write_all(&id_size.to_be_bytes())?;
        out.write_all(&((timestamp_ms >> 32) as u32).to_be_bytes())?;
        out.write_all(&(timestamp_ms as u32).to_be_bytes())?;
        Ok(RecordWriter { out, id_size, started: Instant::now(), scratch: Body::new(id_size) })
    }

    pub fn id_size(&self) -> u32 {
        self.id_size
    }

    pub fn get_mut(&mut self) -> &mut W {
        &mut self.out
    }

    pub fn into_inner(self) -> W {
        self.out
    }

    pub fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }

    fn micros(&self) -> u32 {
        self.started.elapsed().as_micros().min(u32::MAX as u128) as u32
    }

    /// A record from a finished body. Bodies over 4 GiB cannot be expressed and are refused.
    pub fn record(&mut self, tag: u8, body: &[u8]) -> io::Result<()> {
        let head = record_head(tag, self.micros(), body.len() as u64)?;
        self.out.write_all(&head)?;
        self.out.write_all(body)
    }

    fn emit(&mut self, tag: u8, build: impl FnOnce(&mut Body)) -> io::Result<()> {
        let mut body = std::mem::replace(&mut self.scratch, Body::new(self.id_size));
        body.clear();
        build(&mut body);
        let r = self.record(tag, body.as_slice());
        self.scratch = body;
        r
    }

    pub fn utf8(&mut self, id: u64, text: &str) -> io::Result<()> {
        self.emit(tag::UTF8, |b| {
            b.id(id).bytes(text.as_bytes());
        })
    }

    pub fn load_class(&mut self, serial: u32, class_id: u64, trace_serial: u32, name_id: u64) -> io::Result<()> {
        self.emit(tag::LOAD_CLASS, |b| {
            b.u4(serial).id(class_id).u4(trace_serial).id(name_id);
        })
    }

    pub fn unload_class(&mut self, serial: u32) -> io::Result<()> {
        self.emit(tag::UNLOAD_CLASS, |b| {
            b.u4(serial);
        })
    }

    pub fn frame(&mut self, frame: &FrameRecord) -> io::Result<()> {
        let FrameRecord { frame_id, method_name_id, signature_id, source_file_id, class_serial, line } = *frame;
        self.emit(tag::FRAME, |b| {
            b.id(frame_id).id(method_name_id).id(signature_id).id(source_file_id).u4(class_serial).u4(line as u32);
        })
    }

    pub fn trace(&mut self, serial: u32, thread_serial: u32, frame_ids: &[u64]) -> io::Result<()> {
        self.emit(tag::TRACE, |b| {
            b.u4(serial).u4(thread_serial).u4(frame_ids.len() as u32);
            for &f in frame_ids {
                b.id(f);
            }
        })
    }

    pub fn start_thread(
        &mut self,
        serial: u32,
        object_id: u64,
        trace_serial: u32,
        name_id: u64,
        group_name_id: u64,
        parent_group_name_id: u64,
    ) -> io::Result<()> {
        self.emit(tag::START_THREAD, |b| {
            b.u4(serial).id(object_id).u4(trace_serial).id(name_id).id(group_name_id).id(parent_group_name_id);
        })
    }

    pub fn end_thread(&mut self, serial: u32) -> io::Result<()> {
        self.emit(tag::END_THREAD, |b| {
            b.u4(serial);
        })
    }

    /// ALLOC SITES for the sites above the report's cutoff. Counts saturate at the u4 fields' limit.
    pub fn alloc_sites(&mut self, report: &SitesReport) -> io::Result<()> {
        let sites: Vec<&Site> = report.ranked().map(|r| r.row).collect();
        self.emit(tag::ALLOC_SITES, |b| {
            b.u2(report.flags())
                .u4((report.cutoff as f32).to_bits())
                .u4(sat32(report.total_live_bytes))
                .u4(sat32(report.total_live_instances))
                .u8(report.total_alloc_bytes)
                .u8(report.total_alloc_instances)
                .u4(sites.len() as u32);
            for s in sites {
                b.u1(s.array_type)
                    .u4(s.class_serial)
                    .u4(s.trace_serial)
                    .u4(sat32(s.live_bytes))
                    .u4(sat32(s.live_instances))
                    .u4(sat32(s.alloc_bytes))
                    .u4(sat32(s.alloc_instances));
            }
        })
    }

    pub fn heap_summary(
        &mut self,
        live_bytes: u64,
        live_instances: u64,
        alloc_bytes: u64,
        alloc_instances: u64,
    ) -> io::Result<()> {
        self.emit(tag::HEAP_SUMMARY, |b| {
            b.u4(sat32(live_bytes)).u4(sat32(live_instances)).u8(alloc_bytes).u8(alloc_instances);
        })
    }

    /// CPU SAMPLES: the total and `(count, trace serial)` pairs.
    pub fn cpu_samples(&mut self, total: u64, samples: &[(u64, u32)]) -> io::Result<()> {
        self.emit(tag::CPU_SAMPLES, |b| {
            b.u4(sat32(total)).u4(samples.len() as u32);
            for &(count, trace) in samples {
                b.u4(sat32(count)).u4(trace);
            }
        })
    }

    /// SAMPLE TIMES (hprof-rs's): `(ms since the session started, trace serial, samples)` per entry.
    pub fn sample_times(&mut self, samples: &[(u32, u32, u32)]) -> io::Result<()> {
        self.emit(tag::SAMPLE_TIMES, |b| {
            b.u4(samples.len() as u32);
            for &(ms, trace, weight) in samples {
                b.u4(ms).u4(trace).u4(weight);
            }
        })
    }

    /// MONITOR TIMES (hprof-rs's): per row the kind, trace serial, class name STRING id, count and ns.
    pub fn monitor_times(&mut self, rows: &[MonitorTime]) -> io::Result<()> {
        self.emit(tag::MONITOR_TIMES, |b| {
            b.u4(rows.len() as u32);
            for r in rows {
                b.u1(r.kind.code()).u4(r.trace_serial).id(r.class_name_id).u8(r.count).u8(r.nanos);
            }
        })
    }

    /// CONTROL SETTINGS: flag 0x1 allocation traces on, 0x2 CPU sampling on; the stack depth.
    pub fn control_settings(&mut self, flags: u32, depth: u16) -> io::Result<()> {
        self.emit(tag::CONTROL_SETTINGS, |b| {
            b.u4(flags).u2(depth);
        })
    }

    /// One HEAP DUMP SEGMENT holding complete sub-records.
    pub fn heap_dump_segment(&mut self, sub_records: &[u8]) -> io::Result<()> {
        self.record(tag::HEAP_DUMP_SEGMENT, sub_records)
    }

    pub fn heap_dump_end(&mut self) -> io::Result<()> {
        self.record(tag::HEAP_DUMP_END, &[])
    }
}

/// Bytes of a record's header: `u1 tag, u4 microseconds, u4 length`.
pub const RECORD_HEAD: usize = 9;

/// The header of a record whose body of `len` bytes follows, for writers that stream or assemble bodies
/// themselves (a heap dump's segments). Bodies over 4 GiB cannot be expressed and are refused.
pub fn record_head(tag: u8, micros: u32, len: u64) -> io::Result<[u8; RECORD_HEAD]> {
    let len =
        u32::try_from(len).map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "HPROF record body over 4 GiB"))?;
    let mut head = [0u8; RECORD_HEAD];
    head[0] = tag;
    head[1..5].copy_from_slice(&micros.to_be_bytes());
    head[5..9].copy_from_slice(&len.to_be_bytes());
    Ok(head)
}

fn sat32(v: u64) -> u32 {
    v.min(u32::MAX as u64) as u32
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::binary::{Record, Records, parse_header};

    #[test]
    fn written_records_read_back() {
        let mut w = RecordWriter::new(Vec::new(), crate::PROFILE_1_0_1, 8, 0x0000_0123_4567_89AB).unwrap();
        w.utf8(1, "main").unwrap();
        w.load_class(100001, 0x42, 300000, 1).unwrap();
        w.frame(&FrameRecord {
            frame_id: 7,
            method_name_id: 1,
            signature_id: 1,
            source_file_id: 0,
            class_serial: 100001,
            line: -3,
        })
        .unwrap();
        w.trace(300001, 200001, &[7]).unwrap();
        w.start_thread(200001, 0x99, 300000, 1, 1, 0).unwrap();
        w.cpu_samples(10, &[(7, 300001), (3, 300000)]).unwrap();
        w.control_settings(2, 4).unwrap();
        let data = w.into_inner();

        let h = parse_header(&data).unwrap();
        assert_eq!(h.version, "JAVA PROFILE 1.0.1");
        assert_eq!(h.id_size, 8);
        assert_eq!(h.timestamp_ms, 0x0000_0123_4567_89AB);
        let recs: Vec<Record> =
            Records::new(&data, &h).map(|r| Record::decode(&r.unwrap(), h.id_size).unwrap()).collect();
        assert_eq!(recs[0], Record::Utf8 { id: 1, text: b"main" });
        assert_eq!(recs[1], Record::LoadClass { serial: 100001, class_id: 0x42, trace_serial: 300000, name_id: 1 });
        assert_eq!(
            recs[2],
            Record::Frame {
                id: 7,
                method_name_id: 1,
                signature_id: 1,
                source_file_id: 0,
                class_serial: 100001,
                line: -3
            }
        );
        assert_eq!(recs[3], Record::Trace { serial: 300001, thread_serial: 200001, frame_ids: vec![7] });
        assert_eq!(recs[5], Record::CpuSamples { total: 10, samples: vec![(7, 300001), (3, 300000)] });
        assert_eq!(recs[6], Record::ControlSettings { flags: 2, depth: 4 });
    }

    #[test]
    fn monitor_times_read_back_with_either_id_size_and_a_bad_kind_is_refused() {
        use crate::binary::{MonitorKind, MonitorTime};
        let rows = [
            MonitorTime { kind: MonitorKind::Enter, trace_serial: 300007, class_name_id: 9, count: 3, nanos: 1 << 40 },
            MonitorTime { kind: MonitorKind::Wait, trace_serial: 300008, class_name_id: 0, count: 1, nanos: 5 },
        ];
        for id_size in [4, 8] {
            let mut w = RecordWriter::new(Vec::new(), crate::PROFILE_1_0_2, id_size, 0).unwrap();
            w.monitor_times(&rows).unwrap();
            let data = w.into_inner();
            let h = parse_header(&data).unwrap();
            let raw = Records::new(&data, &h).next().unwrap().unwrap();
            assert_eq!(raw.body.len(), 4 + 2 * (1 + 4 + id_size as usize + 16));
            assert_eq!(Record::decode(&raw, id_size).unwrap(), Record::MonitorTimes { rows: rows.to_vec() });

            let mut bad = data.clone();
            bad[h.records_offset + 9 + 4] = 7;
            let raw = Records::new(&bad, &h).next().unwrap().unwrap();
            let err = Record::decode(&raw, id_size).unwrap_err();
            assert!(err.message.contains("monitor kind 7"), "{err}");
        }
    }

    #[test]
    fn truncated_record_names_offset() {
        let mut w = RecordWriter::new(Vec::new(), crate::PROFILE_1_0_1, 4, 0).unwrap();
        w.utf8(1, "hello world").unwrap();
        let mut data = w.into_inner();
        data.truncate(data.len() - 3);
        let h = parse_header(&data).unwrap();
        let err = Records::new(&data, &h).next().unwrap().unwrap_err();
        assert_eq!(err.offset, h.records_offset as u64);
        assert!(err.message.contains("STRING record"), "{err}");
    }

    #[test]
    fn hostile_count_is_refused_without_allocating() {
        let mut w = RecordWriter::new(Vec::new(), crate::PROFILE_1_0_1, 8, 0).unwrap();
        let mut body = Body::new(8);
        body.u4(1).u4(2).u4(0x7fff_ffff);
        w.record(crate::tags::record::TRACE, body.as_slice()).unwrap();
        let data = w.into_inner();
        let h = parse_header(&data).unwrap();
        let raw = Records::new(&data, &h).next().unwrap().unwrap();
        let err = Record::decode(&raw, 8).unwrap_err();
        assert!(err.message.contains("frame count"), "{err}");
    }

    #[test]
    fn non_hprof_is_refused_clearly() {
        let e = parse_header(b"\x00\x12portable heap dump\x00\x00").unwrap_err();
        assert!(e.message.contains("Portable Heap Dump"), "{e}");
        let e = parse_header(&[0x1f, 0x8b, 8, 0]).unwrap_err();
        assert!(e.message.contains("gzip"), "{e}");
    }
}
