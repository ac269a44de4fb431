//! A file's CPU samples, allocation sites or lock times as a neutral [`Profile`], for `hprof export --format pprof|otlp`.

use hprof_analysis::Dump;
use hprof_analysis::stacks::{ResolvedStack, StackKind, array_name, lock_rows};
use hprof_format::binary::{Record, Records};
use hprof_format::model::Frame as HprofFrame;
use hprof_format::profiles::{Frame, Label, Profile, Sample, ValueType, lock_profile};
use std::collections::HashMap;

/// A profile frame for one HPROF frame.
pub fn frame(f: &HprofFrame) -> Frame {
    Frame::of(f)
}

fn thread_labels(d: &Dump, trace_serial: u32) -> Vec<Label> {
    let Some(t) = d.traces.get(&trace_serial).filter(|t| t.thread_serial != 0) else { return Vec::new() };
    let mut labels = vec![Label::num("thread.id", t.thread_serial as i64)];
    if let Some(th) = d.threads.iter().find(|th| th.serial == t.thread_serial) {
        labels.push(Label::str("thread.name", &th.name));
    }
    labels
}

/// CPU samples: one value, the sample count, per stack; thread.id and thread.name when the trace has them.
pub fn cpu(d: &Dump, stacks: &[ResolvedStack]) -> Profile {
    Profile {
        sample_types: vec![ValueType::new("samples", "count")],
        time_nanos: d.header.timestamp_ms.saturating_mul(1_000_000),
        samples: stacks
            .iter()
            .map(|s| Sample {
                stack: s.frames.iter().rev().map(frame).collect(),
                values: vec![s.weight as i64],
                labels: thread_labels(d, s.trace_serial),
            })
            .collect(),
        ..Default::default()
    }
}

/// The last ALLOC SITES record: alloc_objects, alloc_space, inuse_objects, inuse_space per site, the
/// allocated class as the leaf frame.
pub fn alloc(d: &Dump) -> Profile {
    let mut last = None;
    for raw in Records::new(d.data(), &d.header).flatten() {
        if let Ok(Record::AllocSites { sites, .. }) = Record::decode(&raw, d.id_size()) {
            last = Some(sites);
        }
    }
    let mut by_site: HashMap<(u32, String), [i64; 4]> = HashMap::new();
    for s in last.unwrap_or_default() {
        let class = d
            .class_serials
            .get(&s.class_serial)
            .and_then(|c| d.class_name(*c))
            .unwrap_or_else(|| array_name(s.array_type));
        let v = by_site.entry((s.trace_serial, class)).or_default();
        v[0] += s.alloc_instances as i64;
        v[1] += s.alloc_bytes as i64;
        v[2] += s.live_instances as i64;
        v[3] += s.live_bytes as i64;
    }
    let mut sites: Vec<_> = by_site.into_iter().collect();
    sites.sort_by(|a, b| b.1[3].cmp(&a.1[3]).then_with(|| a.0.cmp(&b.0)));
    Profile {
        sample_types: ["alloc_objects", "alloc_space", "inuse_objects", "inuse_space"]
            .iter()
            .zip(["count", "bytes", "count", "bytes"])
            .map(|(k, u)| ValueType::new(k, u))
            .collect(),
        time_nanos: d.header.timestamp_ms.saturating_mul(1_000_000),
        samples: sites
            .into_iter()
            .map(|((trace, class), values)| {
                let mut stack = vec![frame(&HprofFrame::pseudo(&class))];
                stack.extend(d.trace_frames(trace).iter().map(frame));
                Sample { stack, values: values.to_vec(), labels: thread_labels(d, trace) }
            })
            .collect(),
        ..Default::default()
    }
}

/// The last MONITOR TIMES record: contentions and delay (nanoseconds) per row, `[lock:CLASS]` (blocked
/// entering) or `[wait:CLASS]` (Object.wait) as the leaf frame, heaviest first.
pub fn lock(d: &Dump) -> Profile {
    let mut rows = lock_rows(d);
    rows.sort_by(|a, b| b.nanos.cmp(&a.nanos).then(a.trace_serial.cmp(&b.trace_serial)));
    let samples = rows
        .iter()
        .map(|r| {
            let mut stack = vec![frame(&HprofFrame::pseudo(&r.leaf()))];
            stack.extend(d.trace_frames(r.trace_serial).iter().map(frame));
            Sample { stack, values: vec![r.count as i64, r.nanos as i64], labels: thread_labels(d, r.trace_serial) }
        })
        .collect();
    Profile { time_nanos: d.header.timestamp_ms.saturating_mul(1_000_000), ..lock_profile(samples) }
}

/// The profile of what `load` found.
pub fn profile(d: &Dump, kind: StackKind, stacks: &[ResolvedStack]) -> Profile {
    match kind {
        StackKind::CpuSamples => cpu(d, stacks),
        StackKind::AllocSites => alloc(d),
        StackKind::Locks => lock(d),
    }
}
