//! From the threads' trees to the two reports: CPU TIME (rows per trace of depth= frames: exact calls and
//! self time) and cpu=old's `count callee caller time` lines (per caller/callee pair, time inclusive).

use super::method_table::{MethodEntry, MethodTable};
use super::recorder::{ROOT, Snapshot};
use crate::context::Context;
use hprof_format::model::{CpuReport, CpuReportKind, CpuRow, Frame, LineNumber};
use hprof_format::text::cpu_time::{CallPair, OldProf};
use rustc_hash::FxHashMap;

fn frame_of(methods: &MethodTable, id: u32) -> Frame {
    match methods.get(id) {
        Some(MethodEntry { class_name, name, descriptor, source_file }) => Frame {
            class_name: class_name.to_string(),
            method_name: name,
            method_signature: descriptor,
            source_file: source_file.map(|s| s.to_string()),
            // The shadow stack knows methods, not bytecode positions (HPROF printed the same).
            line: LineNumber::Unknown,
        },
        None => Frame::pseudo("<unknown method>"),
    }
}

pub fn cpu_time(
    ctx: &Context,
    methods: &MethodTable,
    threads: &[Snapshot],
    cutoff: f64,
    note: Option<String>,
) -> CpuReport {
    let depth = ctx.depth();
    let mut frame_index: FxHashMap<u32, u32> = FxHashMap::default();
    let mut by_trace: FxHashMap<u32, (u64, f64)> = FxHashMap::default();
    let mut total = 0.0;
    let mut trace = Vec::with_capacity(depth);
    for snap in threads {
        // The root is the time before a thread's first probe: no method's.
        for (i, &(_, _, calls, self_ns)) in snap.nodes.iter().enumerate().skip(1) {
            if calls == 0 && self_ns <= 0.0 {
                continue;
            }
            trace.clear();
            let mut n = i as u32;
            while n != ROOT && trace.len() < depth {
                let m = snap.nodes[n as usize].1;
                let f = *frame_index.entry(m).or_insert_with(|| ctx.traces().named_frame(frame_of(methods, m)));
                trace.push(f);
                n = snap.nodes[n as usize].0;
            }
            let serial = ctx.intern_trace(snap.thread_serial, &trace);
            let e = by_trace.entry(serial).or_default();
            e.0 += calls;
            e.1 += self_ns.max(0.0);
            total += self_ns.max(0.0);
        }
    }
    let mut rows: Vec<CpuRow> = by_trace
        .into_iter()
        .map(|(serial, (count, ns))| CpuRow {
            weight: ns as u64,
            count,
            trace_serial: serial,
            top_method: ctx.traces().top_method(serial),
        })
        .collect();
    CpuRow::rank(&mut rows);
    CpuReport { kind: CpuReportKind::Times, total: total as u64, cutoff, rows, note }
}

fn qualified(methods: &MethodTable, id: u32, unknown: &str) -> String {
    match methods.get(id) {
        Some(m) => format!("{}.{}{}", m.class_name, m.name, m.descriptor),
        None => unknown.to_owned(),
    }
}

/// The methods left without probes, for the report: how many native ones, then each other method or class
/// with its reason, `(not timed: …)` a line, as SITES prints its notes. `notes` are the ones no earlier
/// report listed.
pub fn not_timed(native_methods: u64, notes: &[String]) -> Option<String> {
    let mut lines = Vec::with_capacity(notes.len() + 1);
    if native_methods > 0 {
        lines.push(format!("(not timed: {native_methods} native methods, which have no bytecode)"));
    }
    lines.extend(notes.iter().map(|n| format!("(not timed: {n})")));
    if lines.is_empty() { None } else { Some(lines.join("\n")) }
}

/// cpu=old: `count callee caller time`, one line per (callee, caller) pair, most calls first; time is the
/// callee's inclusive CPU time in milliseconds. The methods not timed follow the pairs, as `(not timed: …)`
/// lines (the old format has no header to put them under).
pub fn old_prof(methods: &MethodTable, threads: &[Snapshot], note: Option<&str>) -> OldProf {
    let mut pairs: FxHashMap<(u32, u32), (u64, f64)> = FxHashMap::default();
    for snap in threads {
        let mut inclusive: Vec<f64> = snap.nodes.iter().map(|n| n.3.max(0.0)).collect();
        // Children always come after their parents in the node list.
        for i in (1..snap.nodes.len()).rev() {
            let parent = snap.nodes[i].0 as usize;
            if parent != ROOT as usize {
                inclusive[parent] += inclusive[i];
            }
        }
        for (i, &(parent, method, calls, _)) in snap.nodes.iter().enumerate().skip(1) {
            let caller = if parent == ROOT { 0 } else { snap.nodes[parent as usize].1 };
            let e = pairs.entry((method, caller)).or_default();
            e.0 += calls;
            e.1 += inclusive[i];
        }
    }
    let mut rows: Vec<_> = pairs.into_iter().collect();
    rows.sort_by(|a, b| b.1.0.cmp(&a.1.0).then(b.1.1.total_cmp(&a.1.1)).then(a.0.cmp(&b.0)));
    OldProf {
        pairs: rows
            .into_iter()
            .map(|((callee, caller), (count, ns))| CallPair {
                count,
                callee: qualified(methods, callee, "<unknown callee>"),
                caller: qualified(methods, caller, "<unknown caller>"),
                ms: (ns / 1e6) as u64,
            })
            .collect(),
        notes: note.into_iter().flat_map(str::lines).map(str::to_owned).collect(),
    }
}
