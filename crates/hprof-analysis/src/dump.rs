//! The first, sequential pass over the top-level records: names, classes, stack frames and traces,
//! threads, CPU samples, and where each heap dump's segments lie. Heap segments are not read here.

use crate::source::Source;
use crate::{Error, Progress};
use hprof_format::binary::{FormatError, Header, MonitorTime, RawRecord, Record, Records, parse_header};
use hprof_format::layout_note::LayoutNote;
use hprof_format::model::{Frame, LineNumber};
use hprof_format::names::{java_name_from_internal, printable};
use hprof_format::tags::record as tag;
use rustc_hash::FxHashMap;
use std::collections::BTreeMap;
use std::path::Path;

/// A hidden class (a lambda's) is `Foo$$Lambda$26+0x…` inside HotSpot (jcmd's dumps) and
/// `Foo$$Lambda$26/0x…` in JVMTI (our agent's, which the dotted form turns into `.0x…`); Java, jcmd's
/// histogram included, shows `Foo$$Lambda$26/0x…`. No package name starts with a digit, so a last
/// segment `0x` + hex digits is that suffix.
fn hidden_class_suffix(name: String) -> String {
    let Some(at) = name.rfind(['+', '.']) else { return name };
    let tail = &name[at + 1..];
    let hex = tail.strip_prefix("0x").is_some_and(|h| !h.is_empty() && h.bytes().all(|b| b.is_ascii_hexdigit()));
    if hex && at > 0 { format!("{}/{tail}", &name[..at]) } else { name }
}

/// One heap dump: a HEAP DUMP record, or HEAP DUMP SEGMENTs up to a HEAP DUMP END.
#[derive(Debug, Clone, Default)]
pub struct HeapDumpSegments {
    /// (body start, body end) in the file, in file order.
    pub segments: Vec<(usize, usize)>,
    /// Offset of the first record of this dump.
    pub offset: u64,
    pub micros: u32,
}

impl HeapDumpSegments {
    pub fn bytes(&self) -> u64 {
        self.segments.iter().map(|(s, e)| (e - s) as u64).sum()
    }
}

#[derive(Debug, Clone)]
pub struct FrameRecord {
    pub method_name_id: u64,
    pub signature_id: u64,
    pub source_file_id: u64,
    pub class_serial: u32,
    pub line: i32,
}

#[derive(Debug, Clone)]
pub struct TraceRecord {
    pub thread_serial: u32,
    pub frame_ids: Vec<u64>,
}

#[derive(Debug, Clone)]
pub struct ThreadRecord {
    pub serial: u32,
    pub object_id: u64,
    pub trace_serial: u32,
    pub name: String,
    pub group: String,
    pub ended: bool,
    name_id: u64,
    group_id: u64,
}

/// Counts and bytes of one record kind.
#[derive(Debug, Clone, Copy, Default)]
pub struct TagCount {
    pub count: u64,
    pub bytes: u64,
}

/// A whole file after the first pass.
pub struct Dump {
    pub source: Source,
    pub header: Header,
    pub tag_counts: BTreeMap<u8, TagCount>,
    strings: FxHashMap<u64, (usize, usize)>,
    /// class object id → name string id, from LOAD CLASS.
    pub class_name_ids: FxHashMap<u64, u64>,
    /// class serial → class object id.
    pub class_serials: FxHashMap<u32, u64>,
    pub frames: FxHashMap<u64, FrameRecord>,
    pub traces: FxHashMap<u32, TraceRecord>,
    pub threads: Vec<ThreadRecord>,
    /// Each CPU SAMPLES record: total, then (count, trace serial).
    pub cpu_samples: Vec<(u32, Vec<(u32, u32)>)>,
    /// hprof-rs's SAMPLE TIMES, every record's entries: (ms since the session started, trace serial, samples).
    pub sample_times: Vec<(u32, u32, u32)>,
    /// hprof-rs's MONITOR TIMES (monitor=y): the last record's rows, the totals at the last dump.
    pub monitor_times: Vec<MonitorTime>,
    pub heap_dumps: Vec<HeapDumpSegments>,
    /// The first damage found; everything before it was read.
    pub damage: Option<FormatError>,
    /// What was skipped or guessed, for the user.
    pub notes: Vec<String>,
    /// The object layout the writer stated (our agent does, see [`LayoutNote`]), the first if several.
    pub layout_note: Option<LayoutNote>,
    /// Where the file ends inside a heap dump that has no HEAP DUMP END (a dump cut off by a kill or a
    /// full disk): its objects up to there are read, and every report says it is partial.
    pub incomplete: Option<u64>,
}

impl Dump {
    pub fn open(path: &Path, progress: &dyn Progress) -> Result<Dump, Error> {
        let source = Source::open_with(path, progress)?;
        Dump::from_source(source, progress)
    }

    pub fn from_source(source: Source, progress: &dyn Progress) -> Result<Dump, Error> {
        let data = source.bytes();
        let head = &data[..data.len().min(80)];
        if head.starts_with(b"JAVA PROFILE") && !head.contains(&0) && head.windows(9).any(|w| w == b", created") {
            return Err(Error::NotHprof(format!(
                "{}: this is an HPROF text report (format=a); hprof reads binary files (format=b) and heap dumps",
                source.path.display()
            )));
        }
        let header = parse_header(data).map_err(|e| Error::NotHprof(format!("{}: {e}", source.path.display())))?;
        let mut d = Dump {
            header: header.clone(),
            tag_counts: BTreeMap::new(),
            strings: FxHashMap::default(),
            class_name_ids: FxHashMap::default(),
            class_serials: FxHashMap::default(),
            frames: FxHashMap::default(),
            traces: FxHashMap::default(),
            threads: Vec::new(),
            cpu_samples: Vec::new(),
            sample_times: Vec::new(),
            monitor_times: Vec::new(),
            heap_dumps: Vec::new(),
            damage: None,
            notes: Vec::new(),
            layout_note: None,
            incomplete: None,
            source: Source::empty(),
        };
        let total = data.len() as u64;
        progress.start("reading records", total);
        let mut open_segments: Option<HeapDumpSegments> = None;
        let mut unknown: BTreeMap<u8, u64> = BTreeMap::new();
        let mut n = 0u64;
        for r in Records::new(data, &header) {
            let raw = match r {
                Ok(raw) => raw,
                Err(e) => {
                    // A heap dump cut short still has its first part: read what is there.
                    let at = e.offset as usize;
                    if at + 9 <= data.len() && matches!(data[at], tag::HEAP_DUMP | tag::HEAP_DUMP_SEGMENT) {
                        let seg = (at + 9, data.len());
                        match data[at] {
                            tag::HEAP_DUMP => d.heap_dumps.push(HeapDumpSegments {
                                segments: vec![seg],
                                offset: at as u64,
                                micros: 0,
                            }),
                            _ => {
                                open_segments
                                    .get_or_insert_with(|| HeapDumpSegments { offset: at as u64, ..Default::default() })
                                    .segments
                                    .push(seg);
                                d.incomplete = Some(total);
                            }
                        }
                        d.notes.push(
                            "the last heap dump record is cut short; its objects are read up to the end of the file"
                                .into(),
                        );
                    }
                    d.damage = Some(e);
                    break;
                }
            };
            n += 1;
            if n.is_multiple_of(4096) {
                progress.set(raw.offset);
            }
            let c = d.tag_counts.entry(raw.tag).or_default();
            c.count += 1;
            c.bytes += raw.body.len() as u64;
            if let Err(e) = d.take(&raw, &mut open_segments, &mut unknown) {
                d.damage = Some(e);
                break;
            }
        }
        if let Some(open) = open_segments.take().filter(|o| !o.segments.is_empty()) {
            d.incomplete = d.incomplete.or(Some(d.damage.as_ref().map_or(total, |e| e.offset)));
            d.heap_dumps.push(open);
        }
        for (t, count) in unknown {
            d.notes.push(format!("skipped {count} record(s) of unknown tag 0x{t:02X} (a vendor extension)"));
        }
        progress.finish();
        d.source = source;
        for i in 0..d.threads.len() {
            d.threads[i].name = d.string(d.threads[i].name_id).unwrap_or_default();
            d.threads[i].group = d.string(d.threads[i].group_id).unwrap_or_default();
        }
        d.source.check_intact()?;
        Ok(d)
    }

    fn take(
        &mut self,
        raw: &RawRecord<'_>,
        open: &mut Option<HeapDumpSegments>,
        unknown: &mut BTreeMap<u8, u64>,
    ) -> Result<(), FormatError> {
        let body_start = raw.body_offset() as usize;
        match raw.tag {
            tag::HEAP_DUMP => {
                self.heap_dumps.push(HeapDumpSegments {
                    segments: vec![(body_start, body_start + raw.body.len())],
                    offset: raw.offset,
                    micros: raw.micros,
                });
                return Ok(());
            }
            tag::HEAP_DUMP_SEGMENT => {
                open.get_or_insert_with(|| HeapDumpSegments {
                    offset: raw.offset,
                    micros: raw.micros,
                    ..Default::default()
                })
                .segments
                .push((body_start, body_start + raw.body.len()));
                return Ok(());
            }
            tag::HEAP_DUMP_END => {
                if let Some(o) = open.take() {
                    self.heap_dumps.push(o);
                }
                return Ok(());
            }
            _ => {}
        }
        match Record::decode(raw, self.header.id_size)? {
            Record::Utf8 { id, text } => {
                self.strings.insert(id, (body_start + self.header.id_size as usize, text.len()));
                if self.layout_note.is_none() {
                    self.layout_note = LayoutNote::parse(text);
                }
            }
            Record::LoadClass { serial, class_id, name_id, .. } => {
                self.class_name_ids.insert(class_id, name_id);
                self.class_serials.insert(serial, class_id);
            }
            Record::Frame { id, method_name_id, signature_id, source_file_id, class_serial, line } => {
                self.frames
                    .insert(id, FrameRecord { method_name_id, signature_id, source_file_id, class_serial, line });
            }
            Record::Trace { serial, thread_serial, frame_ids } => {
                self.traces.insert(serial, TraceRecord { thread_serial, frame_ids });
            }
            Record::StartThread { serial, object_id, trace_serial, name_id, group_name_id, .. } => {
                self.threads.push(ThreadRecord {
                    serial,
                    object_id,
                    trace_serial,
                    name: String::new(),
                    group: String::new(),
                    ended: false,
                    name_id,
                    group_id: group_name_id,
                });
            }
            Record::EndThread { serial } => {
                if let Some(t) = self.threads.iter_mut().rev().find(|t| t.serial == serial) {
                    t.ended = true;
                }
            }
            Record::CpuSamples { total, samples } => self.cpu_samples.push((total, samples)),
            Record::SampleTimes { samples } => self.sample_times.extend(samples),
            Record::MonitorTimes { rows } => self.monitor_times = rows,
            Record::Unknown { tag, .. } => *unknown.entry(tag).or_default() += 1,
            _ => {}
        }
        Ok(())
    }

    pub fn data(&self) -> &[u8] {
        self.source.bytes()
    }

    pub fn id_size(&self) -> u32 {
        self.header.id_size
    }

    /// A STRING record's text, as it may be shown: every name (class, field, method, file, thread) is read
    /// through here, so control characters are escaped here once (see [`printable`]) and reach no terminal.
    pub fn string(&self, id: u64) -> Option<String> {
        let &(s, len) = self.strings.get(&id)?;
        let bytes = self.source_or_none(s, len)?;
        let text = String::from_utf8_lossy(bytes);
        Some(printable(&text).into_owned())
    }

    fn source_or_none(&self, s: usize, len: usize) -> Option<&[u8]> {
        self.source.bytes().get(s..s + len)
    }

    pub fn string_count(&self) -> usize {
        self.strings.len()
    }

    /// A class's name in Java source form, from LOAD CLASS; `None` when no LOAD CLASS names it.
    pub fn class_name(&self, class_id: u64) -> Option<String> {
        let name_id = self.class_name_ids.get(&class_id)?;
        self.string(*name_id).map(|n| hidden_class_suffix(java_name_from_internal(&n)))
    }

    /// A stack frame resolved to names.
    pub fn frame(&self, id: u64) -> Frame {
        let Some(f) = self.frames.get(&id) else {
            return Frame::pseudo(&format!("<unknown frame 0x{id:x}>"));
        };
        // No class: a pseudo-frame of hprof-rs (`[sleeping]`, `[truncated]`, `[GC active]`, …).
        if f.class_serial == 0 {
            return Frame::pseudo(&self.string(f.method_name_id).unwrap_or_default());
        }
        let class_name = self
            .class_serials
            .get(&f.class_serial)
            .and_then(|c| self.class_name(*c))
            .unwrap_or_else(|| format!("<class serial {}>", f.class_serial));
        Frame {
            class_name,
            method_name: self.string(f.method_name_id).unwrap_or_default(),
            method_signature: self.string(f.signature_id).unwrap_or_default(),
            source_file: self.string(f.source_file_id).filter(|s| !s.is_empty()),
            line: LineNumber::from_raw(f.line),
        }
    }

    /// A trace's frames, top first.
    pub fn trace_frames(&self, serial: u32) -> Vec<Frame> {
        self.traces.get(&serial).map(|t| t.frame_ids.iter().map(|&f| self.frame(f)).collect()).unwrap_or_default()
    }

    /// What every report of a cut-off dump says (see [`Dump::incomplete`]).
    pub fn incomplete_message(&self) -> Option<String> {
        self.incomplete.map(|at| {
            format!(
                "incomplete: the dump ends without HEAP DUMP END at offset {at}; \
                 the numbers cover only the objects written before it"
            )
        })
    }

    /// The heap dump to analyse: the last complete one (a file can hold several).
    pub fn heap_dump(&self) -> Option<&HeapDumpSegments> {
        self.heap_dumps.last()
    }
}

#[cfg(test)]
mod tests {
    use super::hidden_class_suffix as h;

    #[test]
    fn hidden_classes_are_named_as_java_names_them() {
        assert_eq!(h("Foo$$Lambda$26+0x00007fe86c007860".into()), "Foo$$Lambda$26/0x00007fe86c007860");
        assert_eq!(h("a.Foo$$Lambda$1.0x0000ab".into()), "a.Foo$$Lambda$1/0x0000ab");
        assert_eq!(h("java.lang.String".into()), "java.lang.String");
        assert_eq!(h("a.b.0xyz".into()), "a.b.0xyz");
    }
}
