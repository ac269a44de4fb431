//! CPU samples, allocation sites and lock times as weighted stacks (root frame first), the input of flame graphs,
//! collapsed stacks and pprof.

use crate::Dump;
use hprof_format::binary::{MonitorKind, Record, Records};
use hprof_format::flame::WeightedStack;
use hprof_format::model::Frame;
use rustc_hash::FxHashMap;

/// What a stack's weight counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StackKind {
    CpuSamples,
    /// Live bytes at allocation sites (ALLOC SITES), the allocated class as the leaf frame.
    AllocSites,
    /// Nanoseconds on monitors (hprof-rs's MONITOR TIMES, monitor=y): blocked entering one, the leaf frame
    /// `[lock:CLASS]`, or in Object.wait on one, `[wait:CLASS]`.
    Locks,
}

impl StackKind {
    pub fn unit(self) -> &'static str {
        match self {
            StackKind::CpuSamples => "samples",
            StackKind::AllocSites => "bytes",
            StackKind::Locks => "ns",
        }
    }
}

/// `Class.method` for a flame graph frame.
pub fn frame_label(f: &Frame) -> String {
    f.qualified_method()
}

/// One stack per trace: frames root first, with the trace's frames resolved.
pub struct ResolvedStack {
    pub frames: Vec<Frame>,
    pub weight: u64,
    pub trace_serial: u32,
}

/// The stacks of the file's CPU SAMPLES (all records summed) or of its last ALLOC SITES record.
pub fn stacks(dump: &Dump, kind: StackKind) -> Vec<ResolvedStack> {
    let mut by_trace: FxHashMap<(u32, Option<String>), u64> = FxHashMap::default();
    match kind {
        StackKind::CpuSamples => {
            for (_, samples) in &dump.cpu_samples {
                for &(count, trace) in samples {
                    *by_trace.entry((trace, None)).or_default() += count as u64;
                }
            }
        }
        StackKind::AllocSites => {
            let data = dump.data();
            let mut last = None;
            for raw in Records::new(data, &dump.header).flatten() {
                if let Ok(Record::AllocSites { sites, .. }) = Record::decode(&raw, dump.id_size()) {
                    last = Some(sites);
                }
            }
            for s in last.unwrap_or_default() {
                let class = dump
                    .class_serials
                    .get(&s.class_serial)
                    .and_then(|c| dump.class_name(*c))
                    .unwrap_or_else(|| array_name(s.array_type));
                *by_trace.entry((s.trace_serial, Some(class))).or_default() += s.live_bytes as u64;
            }
        }
        StackKind::Locks => {
            for r in lock_rows(dump) {
                *by_trace.entry((r.trace_serial, Some(r.leaf()))).or_default() += r.nanos;
            }
        }
    }
    resolve(dump, by_trace)
}

/// One row of a file's lock profile, its class named.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LockRow {
    pub kind: MonitorKind,
    pub trace_serial: u32,
    /// The monitor's class, Java source form.
    pub class: String,
    pub count: u64,
    pub nanos: u64,
}

impl LockRow {
    /// The leaf frame a stack of this row gets: `[lock:java.lang.Object]`, `[wait:java.lang.Object]`.
    pub fn leaf(&self) -> String {
        let kind = match self.kind {
            MonitorKind::Enter => "lock",
            MonitorKind::Wait => "wait",
        };
        format!("[{kind}:{}]", self.class)
    }
}

/// The rows of the file's last MONITOR TIMES record (empty if it has none).
pub fn lock_rows(dump: &Dump) -> Vec<LockRow> {
    dump.monitor_times
        .iter()
        .map(|r| LockRow {
            kind: r.kind,
            trace_serial: r.trace_serial,
            class: dump.string(r.class_name_id).unwrap_or_else(|| "<unknown class>".to_owned()),
            count: r.count,
            nanos: r.nanos,
        })
        .collect()
}

/// The CPU samples taken from `from_ms` (inclusive) to `to_ms` (exclusive), in ms since the session
/// started, from hprof-rs's SAMPLE TIMES records; `None` if the file has none (not written by hprof-rs with
/// format=b).
pub fn cpu_stacks_between(dump: &Dump, from_ms: u64, to_ms: u64) -> Option<Vec<ResolvedStack>> {
    if dump.sample_times.is_empty() {
        return None;
    }
    let mut by_trace: FxHashMap<(u32, Option<String>), u64> = FxHashMap::default();
    for &(ms, trace, weight) in &dump.sample_times {
        if (from_ms..to_ms).contains(&(ms as u64)) {
            *by_trace.entry((trace, None)).or_default() += weight as u64;
        }
    }
    Some(resolve(dump, by_trace))
}

/// Traces (and an allocation site's class, as the leaf) with their weights, as stacks, heaviest first.
fn resolve(dump: &Dump, by_trace: FxHashMap<(u32, Option<String>), u64>) -> Vec<ResolvedStack> {
    let mut out: Vec<ResolvedStack> = by_trace
        .into_iter()
        .map(|((trace, leaf), weight)| {
            let mut frames = dump.trace_frames(trace);
            frames.reverse();
            if let Some(leaf) = leaf {
                frames.push(Frame::pseudo(&leaf));
            }
            if frames.is_empty() {
                frames.push(Frame::pseudo("<empty trace>"));
            }
            ResolvedStack { frames, weight, trace_serial: trace }
        })
        .collect();
    out.sort_by(|a, b| b.weight.cmp(&a.weight).then(a.trace_serial.cmp(&b.trace_serial)));
    out
}

/// `int[]` for an array site's basic type, as HPROF names a site without a class.
pub fn array_name(t: u8) -> String {
    match hprof_format::tags::BasicType::from_u8(t) {
        Some(b) if t != 0 => format!("{}[]", b.java_name()),
        _ => "<unknown class>".to_owned(),
    }
}

pub fn weighted(stacks: &[ResolvedStack]) -> Vec<WeightedStack> {
    stacks
        .iter()
        .map(|s| WeightedStack { frames: s.frames.iter().map(frame_label).collect(), weight: s.weight })
        .collect()
}
