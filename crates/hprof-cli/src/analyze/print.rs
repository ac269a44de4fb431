//! `hprof print`: a binary profile as the text report `format=a` writes, record for record (MONITOR TIMES as
//! MONITOR TIME); a text report
//! with a flat profile (`cpu=flat`, `-Xprof`, text only) as that profile; one with CPU TIME sections
//! (`cpu=times`, text only) as those sections and their traces; cpu=old's file as its pairs.

use super::{Bar, damage, open};
use hprof_analysis::Dump;
use hprof_analysis::heap::{ClassTable, histogram_as};
use hprof_analysis::layout::Layout;
use hprof_format::binary::{HeapRecord, HeapRecords, MonitorKind, MonitorTime, Record, Records, Value};
use hprof_format::model::{
    CpuReport, CpuReportKind, CpuRow, MonitorTimeReport, MonitorTimeRow, Site, SiteOrder, SitesReport, ThreadStart,
};
use hprof_format::tags::{BasicType, record as tag};
use hprof_format::text::cpu_time::{parse_cpu_times, parse_old_prof, write_cpu_times, write_old_prof};
use hprof_format::text::flat::parse_flat_profile;
use hprof_format::text::heap::{self as lines, ClassLine, RootLine};
use hprof_format::text::{
    write_cpu_report, write_header_as, write_monitor_time, write_sites, write_thread_end, write_thread_start,
    write_trace,
};
use hprof_format::time::ctime;
use std::io::{self, BufWriter, Write};
use std::path::PathBuf;

/// HPROF's default cutoff for ranked reports.
const CUTOFF: f64 = 0.0001;

#[derive(clap::Args)]
pub struct Args {
    /// A binary HPROF profile (format=b) or heap dump, or a text report with a flat profile (cpu=flat),
    /// CPU TIME (cpu=times) or cpu=old's pairs.
    pub file: PathBuf,
    /// Write to FILE instead of standard output.
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    #[command(flatten)]
    pub layout: super::LayoutArg,
}

/// Prints what a text report holds that has no binary form; false when it holds none of it.
fn print_text_report(a: &Args, text: &str) -> Result<bool, String> {
    let open_output = || -> Result<BufWriter<Box<dyn Write>>, String> {
        let out: Box<dyn Write> = match &a.output {
            Some(p) => Box::new(super::output_file::OutputFile::create(p)?),
            None => Box::new(io::stdout().lock()),
        };
        Ok(BufWriter::new(out))
    };
    let written = if let Some(flat) = parse_flat_profile(text) {
        let mut w = open_output()?;
        super::flat_text::print(&mut w, &flat, CUTOFF).and_then(|_| w.flush())
    } else if let Some(times) = parse_cpu_times(text) {
        let mut w = open_output()?;
        write_cpu_times(&mut w, &times, CUTOFF).and_then(|_| w.flush())
    } else if let Some(old) = parse_old_prof(text) {
        let mut w = open_output()?;
        write_old_prof(&mut w, &old).and_then(|_| w.flush())
    } else {
        return Ok(false);
    };
    written.map_err(|e| e.to_string())?;
    Ok(true)
}

pub fn run(a: &Args) -> Result<(), String> {
    if let Some(text) = super::flat_text::text_report(&a.file) {
        if print_text_report(a, &text)? {
            return Ok(());
        }
        return Err(format!(
            "{}: a text report without a flat profile, CPU TIME or cpu=old's pairs; `hprof print` shows those \
             (the other records of a text report are readable as they are)",
            a.file.display()
        ));
    }
    let bar = Bar::new();
    let d = open(&a.file, &bar)?;
    let layout = match d.heap_dump() {
        Some(_) => histogram_as(&d, a.layout.layout, &bar).map_err(|e| e.to_string())?.layout,
        None => Layout::new(d.id_size(), false),
    };
    let out: Box<dyn Write> = match &a.output {
        Some(p) => Box::new(super::output_file::OutputFile::create(p)?),
        None => Box::new(io::stdout().lock()),
    };
    let mut w = BufWriter::with_capacity(1 << 16, out);
    let heap_err = write_report(&mut w, &d, layout).map_err(|e| e.to_string())?;
    w.flush().map_err(|e| e.to_string())?;
    // The report streams from the mapped file: if it shrank meanwhile, what follows its new end was zeros.
    d.source.check_intact().map_err(|e| e.to_string())?;
    damage(&a.file, &[d.damage.as_ref(), heap_err.as_ref()])
}

fn date(d: &Dump, micros: u32) -> String {
    ctime(d.header.timestamp_ms + micros as u64 / 1000)
}

/// Writes the report; returns the first damage inside a heap dump.
pub fn write_report(w: &mut dyn Write, d: &Dump, layout: Layout) -> io::Result<Option<hprof_analysis::FormatError>> {
    // The file's own version; a binary file does not name its writer, so the guide names none.
    write_header_as(w, &d.header.version, &ctime(d.header.timestamp_ms), None)?;
    let mut heap_err = None;
    let mut segments: Vec<(usize, usize)> = Vec::new();
    let mut seg_micros = 0;
    for raw in Records::new(d.data(), &d.header) {
        let Ok(raw) = raw else { break };
        let body = raw.body_offset() as usize;
        match raw.tag {
            tag::HEAP_DUMP => {
                let e = write_heap(w, d, layout, &[(body, body + raw.body.len())], &date(d, raw.micros), None)?;
                heap_err = heap_err.or(e);
                continue;
            }
            tag::HEAP_DUMP_SEGMENT => {
                if segments.is_empty() {
                    seg_micros = raw.micros;
                }
                segments.push((body, body + raw.body.len()));
                continue;
            }
            tag::HEAP_DUMP_END => {
                let e = write_heap(w, d, layout, &segments, &date(d, seg_micros), None)?;
                heap_err = heap_err.or(e);
                segments.clear();
                continue;
            }
            _ => {}
        }
        let Ok(rec) = Record::decode(&raw, d.id_size()) else { break };
        match rec {
            Record::StartThread { serial, object_id, trace_serial, .. } => {
                let t = d.threads.iter().find(|t| t.serial == serial);
                write_thread_start(
                    w,
                    &ThreadStart {
                        serial,
                        object_id,
                        trace_serial,
                        name: t.map(|t| t.name.clone()).unwrap_or_default(),
                        group_name: t.map(|t| t.group.clone()).unwrap_or_default(),
                        parent_group_name: String::new(),
                    },
                )?;
            }
            Record::EndThread { serial } => write_thread_end(w, serial)?,
            // The "no trace" serial: a text report never prints it.
            Record::Trace { serial, frame_ids, .. }
                if serial == hprof_format::serial_base::TRACE && frame_ids.is_empty() => {}
            Record::Trace { serial, thread_serial, frame_ids } => {
                let frames: Vec<_> = frame_ids.iter().map(|&f| d.frame(f)).collect();
                write_trace(w, serial, (thread_serial != 0).then_some(thread_serial), &frames)?;
            }
            Record::AllocSites {
                flags,
                cutoff,
                total_live_bytes,
                total_live_instances,
                total_alloc_bytes,
                total_alloc_instances,
                sites,
            } => {
                let sites = sites
                    .iter()
                    .map(|s| Site {
                        class_name: d.class_serials.get(&s.class_serial).and_then(|c| d.class_name(*c)).unwrap_or_else(
                            || match BasicType::from_u8(s.array_type) {
                                Some(t) if s.array_type != 0 => format!("{}[]", t.java_name()),
                                _ => format!("<class serial {}>", s.class_serial),
                            },
                        ),
                        class_serial: s.class_serial,
                        array_type: s.array_type,
                        trace_serial: s.trace_serial,
                        live_bytes: s.live_bytes as u64,
                        live_instances: s.live_instances as u64,
                        alloc_bytes: s.alloc_bytes as u64,
                        alloc_instances: s.alloc_instances as u64,
                    })
                    .collect();
                let report = SitesReport {
                    order: if flags & SitesReport::FLAG_SORT_BY_ALLOC != 0 {
                        SiteOrder::AllocatedBytes
                    } else {
                        SiteOrder::LiveBytes
                    },
                    incremental: flags & SitesReport::FLAG_INCREMENTAL != 0,
                    forced_gc: flags & SitesReport::FLAG_FORCE_GC != 0,
                    cutoff: cutoff as f64,
                    total_live_bytes: total_live_bytes as u64,
                    total_live_instances: total_live_instances as u64,
                    total_alloc_bytes,
                    total_alloc_instances,
                    sites,
                    note: None,
                };
                write_sites(w, &report, &date(d, raw.micros))?;
            }
            Record::CpuSamples { total, samples } => {
                let mut rows: Vec<CpuRow> = samples
                    .iter()
                    .map(|&(count, trace)| CpuRow {
                        weight: count as u64,
                        count: count as u64,
                        trace_serial: trace,
                        top_method: d.trace_frames(trace).first().map(|f| f.qualified_method()),
                    })
                    .collect();
                CpuRow::rank(&mut rows);
                let report =
                    CpuReport { kind: CpuReportKind::Samples, total: total as u64, cutoff: CUTOFF, rows, note: None };
                write_cpu_report(w, &report, &date(d, raw.micros))?;
            }
            Record::MonitorTimes { rows } => {
                write_monitor_time(w, &monitor_time(d, &rows), &date(d, raw.micros))?;
            }
            _ => {}
        }
    }
    if !segments.is_empty() {
        // Segments without a HEAP DUMP END (a file cut short): printed, but not closed as if whole.
        let e = write_heap(w, d, layout, &segments, &date(d, seg_micros), d.incomplete_message())?;
        heap_err = heap_err.or(e);
    }
    Ok(heap_err)
}

/// MONITOR TIME, as `monitor=y` writes it in text, from a MONITOR TIMES record's contended entries (its
/// Object.wait rows have no place there: the text prints each wait as it happens).
fn monitor_time(d: &Dump, rows: &[MonitorTime]) -> MonitorTimeReport {
    let mut rows: Vec<MonitorTimeRow> = rows
        .iter()
        .filter(|r| r.kind == MonitorKind::Enter)
        .map(|r| MonitorTimeRow {
            nanos: r.nanos,
            count: r.count,
            trace_serial: r.trace_serial,
            monitor_class: d.string(r.class_name_id).unwrap_or_else(|| "<unknown class>".to_owned()),
        })
        .collect();
    rows.sort_by(|a, b| {
        b.nanos.cmp(&a.nanos).then(a.trace_serial.cmp(&b.trace_serial)).then(a.monitor_class.cmp(&b.monitor_class))
    });
    MonitorTimeReport { total_nanos: rows.iter().map(|r| r.nanos).sum(), cutoff: CUTOFF, rows }
}

/// The sub-records of a heap dump's segments, releasing the mapping's pages behind the reader every few
/// megabytes, so that printing a large dump does not hold it all in memory.
fn sub_records<'a>(
    d: &'a Dump,
    segments: &'a [(usize, usize)],
) -> impl Iterator<Item = Result<HeapRecord<'a>, hprof_analysis::FormatError>> + 'a {
    // The previous segment, released when the next one starts.
    let previous = std::cell::Cell::new(None::<(usize, usize)>);
    segments.iter().flat_map(move |&(s, e)| {
        if let Some((ps, pe)) = previous.replace(Some((s, e))) {
            d.source.release(ps, pe);
        }
        let mut released = s;
        HeapRecords::new(&d.data()[s..e], s as u64, d.id_size()).map(move |r| {
            if let Ok((at, _)) = &r {
                let at = *at as usize;
                if at - released >= 4 << 20 {
                    d.source.release(released, at);
                    released = at;
                }
            }
            r.map(|(_, r)| r)
        })
    })
}

fn write_heap(
    w: &mut dyn Write,
    d: &Dump,
    layout: Layout,
    segments: &[(usize, usize)],
    when: &str,
    incomplete: Option<String>,
) -> io::Result<Option<hprof_analysis::FormatError>> {
    // First pass: classes, and the object count and bytes the BEGIN line announces.
    let mut class_dumps = Vec::new();
    let mut instances: std::collections::HashMap<u64, u64> = std::collections::HashMap::new();
    let (mut objects, mut bytes, mut arrays) = (0u64, 0u64, 0u64);
    let mut err = None;
    for r in sub_records(d, segments) {
        match r {
            Ok(HeapRecord::ClassDump(c)) => class_dumps.push(*c),
            Ok(HeapRecord::InstanceDump { class_id, .. }) => {
                objects += 1;
                *instances.entry(class_id).or_default() += 1;
            }
            Ok(HeapRecord::ObjectArrayDump { length, .. }) => {
                objects += 1;
                arrays += layout.object_array_size(length as u64);
            }
            Ok(HeapRecord::PrimitiveArrayDump { length, element_type, .. }) => {
                objects += 1;
                arrays += layout.primitive_array_size(element_type, length as u64);
            }
            Ok(_) => {}
            Err(e) => {
                err = Some(e);
                break;
            }
        }
    }
    let table = ClassTable::build(d, class_dumps, layout);
    bytes += arrays;
    for (cid, n) in &instances {
        bytes += n * table.get(*cid).map_or(0, |c| c.instance_size);
    }
    drop(instances);
    lines::write_heap_dump_begin(w, objects, bytes, when)?;
    let name = |id: u64| table.get(id).map(|c| c.name.clone()).unwrap_or_else(|| format!("<class 0x{id:x}>"));
    let idn = d.id_size() as usize;
    for r in sub_records(d, segments) {
        let Ok(r) = r else { break };
        use HeapRecord::*;
        match r {
            RootUnknown { id } => lines::write_root(w, &RootLine::Unknown { id })?,
            RootJniGlobal { id, jni_ref } => {
                lines::write_root(w, &RootLine::JniGlobal { id, ref_serial: jni_ref, trace: 300000 })?
            }
            RootJniLocal { id, thread_serial, frame } => {
                lines::write_root(w, &RootLine::JniLocal { id, thread: thread_serial, frame: frame as i32 })?
            }
            RootJavaFrame { id, thread_serial, frame } => {
                lines::write_root(w, &RootLine::JavaFrame { id, thread: thread_serial, frame: frame as i32 })?
            }
            RootNativeStack { id, thread_serial } => {
                lines::write_root(w, &RootLine::NativeStack { id, thread: thread_serial })?
            }
            RootStickyClass { id } => lines::write_root(w, &RootLine::StickyClass { id, name: &name(id) })?,
            RootThreadBlock { id, thread_serial } => {
                lines::write_root(w, &RootLine::ThreadBlock { id, thread: thread_serial })?
            }
            RootMonitorUsed { id } => lines::write_root(w, &RootLine::MonitorUsed { id })?,
            RootThreadObject { id, thread_serial, trace_serial } => {
                lines::write_root(w, &RootLine::ThreadObject { id, thread: thread_serial, trace: trace_serial })?
            }
            ClassDump(c) => {
                let cname = name(c.class_id);
                lines::write_class(
                    w,
                    &ClassLine {
                        id: c.class_id,
                        name: &cname,
                        trace: c.trace_serial,
                        super_id: c.super_id,
                        loader_id: c.loader_id,
                        signers_id: c.signers_id,
                        domain_id: c.protection_domain_id,
                    },
                )?;
                for s in &c.statics {
                    if let Value::Object(id) = s.value
                        && id != 0
                    {
                        let f = d.string(s.name_id).unwrap_or_default();
                        lines::write_class_static(w, &f, id)?;
                    }
                }
                for (index, v) in &c.constant_pool {
                    if let Value::Object(id) = v
                        && *id != 0
                    {
                        lines::write_class_constant(w, *index, *id)?;
                    }
                }
            }
            InstanceDump { id, trace_serial, class_id, values } => {
                let c = table.get(class_id);
                let size = c.map_or(0, |c| c.instance_size);
                lines::write_instance(w, id, size, trace_serial, &name(class_id), class_id)?;
                let blocks = table.get(class_id).map(|_| table.field_blocks(table.index_of(class_id), values.len()));
                for (c, base) in blocks.into_iter().flatten() {
                    for (f, t, off) in &c.own_fields {
                        if *t != BasicType::Object {
                            continue;
                        }
                        let off = base + *off as usize;
                        let Some(b) = values.get(off..off + idn) else { continue };
                        let target = if idn == 4 {
                            u32::from_be_bytes(b.try_into().unwrap_or_default()) as u64
                        } else {
                            u64::from_be_bytes(b.try_into().unwrap_or_default())
                        };
                        if target != 0 {
                            lines::write_instance_field(w, f, target)?;
                        }
                    }
                }
            }
            ObjectArrayDump { id, trace_serial, length, class_id, elements } => {
                let size = layout.object_array_size(length as u64);
                lines::write_object_array(w, id, size, trace_serial, length, &name(class_id), class_id)?;
                for (i, e) in hprof_format::binary::heap::ids(elements, idn as u32).enumerate() {
                    if e != 0 {
                        lines::write_array_element(w, i as u32, e)?;
                    }
                }
            }
            PrimitiveArrayDump { id, trace_serial, length, element_type, .. }
            | PrimitiveArrayNoData { id, trace_serial, length, element_type } => {
                let size = layout.primitive_array_size(element_type, length as u64);
                lines::write_primitive_array(
                    w,
                    id,
                    size,
                    trace_serial,
                    length,
                    &format!("{}[]", element_type.java_name()),
                )?;
            }
            _ => {}
        }
    }
    match incomplete {
        Some(m) => writeln!(w, "HEAP DUMP {}", m.replacen("incomplete:", "INCOMPLETE:", 1))?,
        None => lines::write_heap_dump_end(w)?,
    }
    Ok(err)
}
