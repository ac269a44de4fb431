//! `hprof threads`: each thread's stack with the objects each frame's locals hold, and what each thread
//! and frame retains.

use super::dominators::Analysed;
use super::{human, print_json};
use hprof_analysis::insight::threads::{HeldObject, ThreadInfo, threads};
use hprof_format::model::Frame;
use serde_json::{Value, json};
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct Args {
    /// A heap dump (HPROF, gzip is fine).
    pub file: PathBuf,
    /// How many objects to list per frame.
    #[arg(long, value_name = "N", default_value_t = 10)]
    pub objects: usize,
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub graph: super::GraphArgs,
}

fn obj_json(o: &HeldObject) -> Value {
    json!({"id": format!("0x{:x}", o.id), "class": o.class, "shallow_bytes": o.shallow_bytes, "retained_bytes": o.retained_bytes})
}

fn frame_text(f: &Frame) -> String {
    use hprof_format::model::LineNumber;
    let file = f.source_file.as_deref().unwrap_or("Unknown Source");
    let at = match f.line {
        LineNumber::Line(n) => format!("{file}:{n}"),
        LineNumber::Native => "Native Method".into(),
        LineNumber::Compiled => format!("{file}, compiled"),
        _ => file.to_owned(),
    };
    format!("{}.{}({at})", f.class_name, f.method_name)
}

/// The threads as JSON (the schema in docs/frontend.md#threads).
pub fn threads_json(ts: &[ThreadInfo], per_frame: usize) -> Value {
    Value::Array(
        ts.iter()
            .map(|t| {
                json!({
                    "serial": t.serial,
                    "name": t.name,
                    "object": t.object.as_ref().map(obj_json),
                    "retained_bytes": t.retained_bytes,
                    "frames": t.frames.iter().map(|f| json!({
                        "depth": f.depth,
                        "method": f.frame.as_ref().map(|fr| format!("{}.{}", fr.class_name, fr.method_name)),
                        "frame": f.frame.as_ref().map(frame_text),
                        "retained_bytes": f.retained_bytes,
                        "object_count": f.objects.len(),
                        "objects": f.objects.iter().take(per_frame).map(obj_json).collect::<Vec<_>>(),
                    })).collect::<Vec<_>>(),
                    "other_roots": t.other_roots.iter().map(obj_json).collect::<Vec<_>>(),
                })
            })
            .collect(),
    )
}

pub fn run(a: &Args) -> Result<(), String> {
    let an = Analysed::load(&a.file, true, &a.graph)?;
    let ts = threads(&an.dump, &an.graph, &an.tree);
    an.intact()?;
    if a.json {
        print_json(&json!({"threads": threads_json(&ts, a.objects), "damage": an.damage_json()}))?;
        return an.damage(&a.file);
    }
    for t in &ts {
        let name = t.name.as_deref().map(|n| format!(" \"{n}\"")).unwrap_or_default();
        println!("Thread {}{name}: retains {} ({} bytes)", t.serial, human(t.retained_bytes), t.retained_bytes);
        for f in &t.frames {
            let at = f.frame.as_ref().map_or_else(|| "<no frame in the stack trace>".into(), frame_text);
            let held = if f.objects.is_empty() {
                String::new()
            } else {
                format!("  — {} objects, retaining {}", f.objects.len(), human(f.retained_bytes))
            };
            println!("  #{:<3} {at}{held}", f.depth);
            for o in f.objects.iter().take(a.objects) {
                println!(
                    "         {}@0x{:x}  shallow {}  retained {}",
                    o.class, o.id, o.shallow_bytes, o.retained_bytes
                );
            }
        }
        if !t.other_roots.is_empty() {
            println!("  other roots of this thread (JNI, native stack, thread block): {}", t.other_roots.len());
        }
        println!();
    }
    an.damage(&a.file)
}
