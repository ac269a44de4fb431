//! The profile's tables: `stacks` (each trace's frames), `samples` (CPU SAMPLES), `sites` (the last ALLOC
//! SITES record), `monitor_time` (the last MONITOR TIMES record, monitor=y) and `threads`. A heap dump has stacks and threads too (jcmd's and the agent's).

use super::writer::{Cell, TableWriter, Ty};
use hprof_analysis::Dump;
use hprof_analysis::stacks::{array_name, lock_rows};
use hprof_format::binary::{Record, Records};
use hprof_format::model::LineNumber;
use std::collections::BTreeMap;
use std::path::Path;

pub const STACKS: &[(&str, Ty, bool)] = &[
    ("trace", Ty::Int, false),
    ("thread_serial", Ty::Int, true),
    ("depth", Ty::Int, false),
    ("method", Ty::Str, false),
    ("class", Ty::Str, false),
    ("method_name", Ty::Str, false),
    ("signature", Ty::Str, false),
    ("source_file", Ty::Str, true),
    ("line", Ty::Int, true),
];

pub const SAMPLES: &[(&str, Ty, bool)] =
    &[("trace", Ty::Int, false), ("thread_serial", Ty::Int, true), ("count", Ty::Int, false)];

pub const SITES: &[(&str, Ty, bool)] = &[
    ("site", Ty::Int, false),
    ("class", Ty::Str, false),
    ("trace", Ty::Int, false),
    ("live_bytes", Ty::Int, false),
    ("live_instances", Ty::Int, false),
    ("alloc_bytes", Ty::Int, false),
    ("alloc_instances", Ty::Int, false),
];

pub const MONITOR_TIME: &[(&str, Ty, bool)] = &[
    ("trace", Ty::Int, false),
    ("thread_serial", Ty::Int, true),
    ("monitor_class", Ty::Str, false),
    ("kind", Ty::Str, false),
    ("count", Ty::Int, false),
    ("nanos", Ty::Int, false),
];

pub const THREADS: &[(&str, Ty, bool)] = &[
    ("serial", Ty::Int, false),
    ("object", Ty::Int, true),
    ("name", Ty::Str, true),
    ("group_name", Ty::Str, true),
    ("ended", Ty::Bool, false),
];

fn thread_of(dump: &Dump, trace: u32) -> Option<i64> {
    dump.traces.get(&trace).map(|t| t.thread_serial).filter(|&s| s != 0).map(i64::from)
}

/// Row counts of (stacks, samples, sites, threads).
pub fn write_profile(dump: &Dump, dir: &Path, redact: bool) -> Result<[u64; 4], String> {
    let mut stacks = TableWriter::create(dir, "stacks", STACKS)?;
    let mut serials: Vec<u32> = dump.traces.keys().copied().collect();
    serials.sort_unstable();
    for serial in serials {
        for (depth, f) in dump.trace_frames(serial).iter().enumerate() {
            let line = match f.line {
                LineNumber::Line(n) => Some(n as i64),
                _ => None,
            };
            stacks.row(&[
                Cell::I(Some(serial as i64)),
                Cell::I(thread_of(dump, serial)),
                Cell::I(Some(depth as i64)),
                Cell::S(Some(&f.qualified_method())),
                Cell::S(Some(&f.class_name)),
                Cell::S(Some(&f.method_name)),
                Cell::S(Some(&f.method_signature)),
                Cell::S(f.source_file.as_deref()),
                Cell::I(line),
            ])?;
        }
    }
    let mut samples = TableWriter::create(dir, "samples", SAMPLES)?;
    // Every CPU SAMPLES record counts, as in `hprof flame`.
    let mut per_trace: BTreeMap<u32, u64> = BTreeMap::new();
    for (_, s) in &dump.cpu_samples {
        for &(count, trace) in s {
            *per_trace.entry(trace).or_default() += count as u64;
        }
    }
    for (trace, count) in per_trace {
        samples.row(&[Cell::I(Some(trace as i64)), Cell::I(thread_of(dump, trace)), Cell::I(Some(count as i64))])?;
    }
    let mut sites = TableWriter::create(dir, "sites", SITES)?;
    let mut last = None;
    for raw in Records::new(dump.data(), &dump.header).flatten() {
        if let Ok(Record::AllocSites { sites, .. }) = Record::decode(&raw, dump.id_size()) {
            last = Some(sites);
        }
    }
    for (rank, s) in last.unwrap_or_default().iter().enumerate() {
        let class = dump
            .class_serials
            .get(&s.class_serial)
            .and_then(|c| dump.class_name(*c))
            .unwrap_or_else(|| array_name(s.array_type));
        sites.row(&[
            Cell::I(Some(rank as i64 + 1)),
            Cell::S(Some(&class)),
            Cell::I(Some(s.trace_serial as i64)),
            Cell::I(Some(s.live_bytes as i64)),
            Cell::I(Some(s.live_instances as i64)),
            Cell::I(Some(s.alloc_bytes as i64)),
            Cell::I(Some(s.alloc_instances as i64)),
        ])?;
    }
    let mut threads = TableWriter::create(dir, "threads", THREADS)?;
    for t in &dump.threads {
        threads.row(&[
            Cell::I(Some(t.serial as i64)),
            Cell::I((t.object_id != 0).then_some(t.object_id as i64)),
            Cell::S((!redact).then_some(t.name.as_str())),
            Cell::S((!redact).then_some(t.group.as_str())),
            Cell::B(Some(t.ended)),
        ])?;
    }
    Ok([stacks.close()?, samples.close()?, sites.close()?, threads.close()?])
}

/// `monitor_time`: per stack, monitor class and kind (`enter`: blocked entering, `wait`: in Object.wait),
/// the count and the nanoseconds, from the file's last MONITOR TIMES record. Its row count.
pub fn write_monitor_time(dump: &Dump, dir: &Path) -> Result<u64, String> {
    let mut table = TableWriter::create(dir, "monitor_time", MONITOR_TIME)?;
    for r in lock_rows(dump) {
        table.row(&[
            Cell::I(Some(r.trace_serial as i64)),
            Cell::I(thread_of(dump, r.trace_serial)),
            Cell::S(Some(&r.class)),
            Cell::S(Some(r.kind.name())),
            Cell::I(Some(r.count.min(i64::MAX as u64) as i64)),
            Cell::I(Some(r.nanos.min(i64::MAX as u64) as i64)),
        ])?;
    }
    table.close()
}
