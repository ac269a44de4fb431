//! `hprof summary`: what a file holds.

use super::{Bar, damage, damage_json, human, open, print_json, record_label};
use hprof_analysis::heap::histogram_as;
use hprof_format::time::ctime;
use serde_json::json;
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct Args {
    /// An HPROF file (binary profile or heap dump; gzip is fine).
    pub file: PathBuf,
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub layout: super::LayoutArg,
}

pub fn run(a: &Args) -> Result<(), String> {
    let bar = Bar::new();
    let d = open(&a.file, &bar)?;
    let h = &d.header;
    let histo = if d.heap_dump().is_some() {
        Some(histogram_as(&d, a.layout.layout, &bar).map_err(|e| e.to_string())?)
    } else {
        None
    };
    let records: Vec<_> = d
        .tag_counts
        .iter()
        .map(|(t, c)| json!({"tag": t, "name": record_label(*t), "count": c.count, "bytes": c.bytes}))
        .collect();
    let threads: Vec<_> = d
        .threads
        .iter()
        .map(|t| json!({"serial": t.serial, "object_id": format!("0x{:x}", t.object_id), "name": t.name, "group": t.group, "ended": t.ended}))
        .collect();
    let cpu_total: u64 = d.cpu_samples.iter().map(|(t, _)| *t as u64).sum();
    // Stack traces that belong to a thread (heap dumps write one per thread), in serial order.
    let mut stacks: Vec<(u32, u32)> = d
        .traces
        .iter()
        .filter(|(_, t)| t.thread_serial != 0 && !t.frame_ids.is_empty())
        .map(|(s, t)| (t.thread_serial, *s))
        .collect();
    stacks.sort();
    let frame_text = |f: &hprof_format::model::Frame| {
        let src = f.source_file.clone().unwrap_or_else(|| "Unknown Source".into());
        match f.line {
            hprof_format::model::LineNumber::Line(n) => format!("{}.{} ({src}:{n})", f.class_name, f.method_name),
            hprof_format::model::LineNumber::Native => {
                format!("{}.{} ({src}:native method)", f.class_name, f.method_name)
            }
            _ => format!("{}.{} ({src})", f.class_name, f.method_name),
        }
    };
    let thread_stacks: Vec<_> = stacks
        .iter()
        .map(|&(thread, trace)| {
            let frames: Vec<String> = d.trace_frames(trace).iter().map(frame_text).collect();
            json!({"thread_serial": thread, "trace_serial": trace, "frames": frames})
        })
        .collect();
    let heap = histo.as_ref().map(|hi| {
        json!({
            "dumps_in_file": d.heap_dumps.len(),
            "segments": d.heap_dump().map_or(0, |x| x.segments.len()),
            "objects": hi.counts.objects(),
            "instances": hi.counts.instances,
            "object_arrays": hi.counts.object_arrays,
            "primitive_arrays": hi.counts.primitive_arrays,
            "classes": hi.counts.classes,
            "gc_roots": hi.counts.roots,
            "shallow_bytes": hi.total_bytes(),
            "layout": hi.layout.describe(),
            "layout_name": hi.layout.kind.name(),
            "layout_detection": hi.layout_choice.describe(),
            "layout_source": hi.layout_choice.source(),
            "layout_fit": hi.layout_choice.fit,
            "layout_telling_pairs": hi.layout_choice.telling_pairs,
        })
    });
    let dmg = [d.damage.as_ref(), histo.as_ref().and_then(|x| x.damage.as_ref())];
    if a.json {
        print_json(&json!({
            "file": a.file.display().to_string(),
            "gzip": d.source.was_gzip,
            "compression": d.source.compression,
            "file_bytes": d.source.file_size,
            "version": h.version,
            "id_size": h.id_size,
            "timestamp_ms": h.timestamp_ms,
            "records": records,
            "strings": d.string_count(),
            "classes_loaded": d.class_name_ids.len(),
            "stack_traces": d.traces.len(),
            "stack_frames": d.frames.len(),
            "threads": threads,
            "thread_stacks": thread_stacks,
            "cpu_samples": cpu_total,
            "heap": heap,
            "notes": d.notes,
            "incomplete": d.incomplete_message(),
            "damage": damage_json(&dmg),
        }))?;
    } else {
        println!(
            "file:        {}{}",
            a.file.display(),
            d.source.compression.map(|c| format!(" ({c})")).unwrap_or_default()
        );
        println!("size:        {} ({} bytes)", human(d.source.bytes().len() as u64), d.source.bytes().len());
        println!("format:      {}, {}-byte identifiers", h.version, h.id_size);
        println!("written:     {}", ctime(h.timestamp_ms));
        println!();
        println!("records:");
        for (t, c) in &d.tag_counts {
            println!("  {:<20} {:>10}  {:>12}", record_label(*t), c.count, human(c.bytes));
        }
        println!();
        println!(
            "strings: {}, classes loaded: {}, stack traces: {}, stack frames: {}",
            d.string_count(),
            d.class_name_ids.len(),
            d.traces.len(),
            d.frames.len()
        );
        if cpu_total > 0 {
            println!("CPU samples: {cpu_total}");
        }
        if let Some(hi) = &histo {
            println!();
            println!(
                "heap dump{}:",
                if d.heap_dumps.len() > 1 { format!(" (the last of {})", d.heap_dumps.len()) } else { String::new() }
            );
            println!(
                "  objects:    {} ({} instances, {} object arrays, {} primitive arrays, {} classes)",
                hi.counts.objects(),
                hi.counts.instances,
                hi.counts.object_arrays,
                hi.counts.primitive_arrays,
                hi.counts.classes
            );
            println!("  GC roots:   {}", hi.counts.roots);
            println!("  shallow:    {} ({} bytes)", human(hi.total_bytes()), hi.total_bytes());
            println!("  layout:     {}", hi.layout_choice.describe());
            if let Some(m) = d.incomplete_message() {
                println!("  {m}");
            }
        }
        if !stacks.is_empty() {
            println!();
            println!("thread stacks ({}):", stacks.len());
            for &(thread, trace) in &stacks {
                println!("  thread {thread} (trace {trace})");
                for f in d.trace_frames(trace) {
                    println!("    at {}", frame_text(&f));
                }
            }
        }
        if !d.threads.is_empty() {
            println!();
            println!("threads:");
            for t in &d.threads {
                println!(
                    "  {:>7} {:<30} group={}{}",
                    t.serial,
                    format!("\"{}\"", t.name),
                    t.group,
                    if t.ended { " (ended)" } else { "" }
                );
            }
        }
    }
    damage(&a.file, &dmg)
}
