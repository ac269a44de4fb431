//! `hprof waste`: memory spent on nothing (duplicate strings, empty and underused collections, boxed
//! primitives in collections, zero-filled and duplicate primitive arrays), each with its share of the heap.

use super::{Bar, damage, damage_json, human, open, print_json};
use hprof_analysis::heap::HeapGraph;
use hprof_analysis::insight::waste::{Cost, WasteOptions, WasteReport, waste};
use serde_json::{Value, json};
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct Args {
    /// A heap dump (HPROF, gzip is fine).
    pub file: PathBuf,
    /// How many duplicated strings and arrays to list.
    #[arg(long, value_name = "N", default_value_t = 20)]
    pub top: usize,
    /// Show no string values (only their lengths and counts).
    #[arg(long)]
    pub redact: bool,
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub layout: super::LayoutArg,
}

pub fn run(a: &Args) -> Result<(), String> {
    let bar = Bar::new();
    let dump = open(&a.file, &bar)?;
    let g = HeapGraph::build_as(&dump, true, a.layout.layout, &bar).map_err(|e| e.to_string())?;
    let opts = WasteOptions { top: a.top, redact: a.redact, ..WasteOptions::default() };
    let w = waste(&dump, &g, &opts);
    dump.source.check_intact().map_err(|e| e.to_string())?;
    let dmg = [dump.damage.as_ref(), g.damage.as_ref()];
    if a.json {
        let mut v = report_json(&w);
        v["damage"] = damage_json(&dmg);
        print_json(&v)?;
    } else {
        print_text(&w);
    }
    damage(&a.file, &dmg)
}

fn cost_json(w: &WasteReport, c: &Cost) -> Value {
    json!({"objects": c.objects, "bytes": c.bytes, "share": w.share(c.bytes)})
}

/// The report as JSON (the schema in docs/frontend.md#waste).
pub fn report_json(w: &WasteReport) -> Value {
    json!({
        "heap_bytes": w.heap_bytes,
        "heaps": w.heaps.iter().map(|h| json!({
            "name": h.name, "objects": h.objects, "bytes": h.bytes, "share": w.share(h.bytes),
        })).collect::<Vec<_>>(),
        "wasted_bytes": w.total_wasted(),
        "wasted_share": w.share(w.total_wasted()),
        "strings": cost_json(w, &w.strings),
        "duplicate_strings": {
            "strings": w.duplicate_strings.objects,
            "wasted_bytes": w.duplicate_string_wasted,
            "share": w.share(w.duplicate_string_wasted),
            "top": w.top_duplicate_strings.iter().map(|d| json!({
                "value": d.text, "length": d.length, "strings": d.strings, "arrays": d.arrays,
                "wasted_bytes": d.wasted_bytes, "share": w.share(d.wasted_bytes),
            })).collect::<Vec<_>>(),
        },
        "collections": w.collections.iter().map(|c| json!({
            "class": c.class, "instances": c.instances, "empty": c.empty, "empty_bytes": c.empty_bytes,
            "underused": c.underused, "unused_slot_bytes": c.unused_slot_bytes, "elements": c.elements,
            "capacity": c.capacity, "wasted_bytes": c.wasted_bytes(), "share": w.share(c.wasted_bytes()),
        })).collect::<Vec<_>>(),
        "boxed_in_collections": w.boxed.iter().map(|b| json!({
            "class": b.class, "objects": b.objects, "bytes": b.bytes, "wasted_bytes": b.wasted_bytes,
            "share": w.share(b.wasted_bytes),
            "holders": b.holders.iter().map(|(c, k)| json!({"class": c, "objects": k})).collect::<Vec<_>>(),
        })).collect::<Vec<_>>(),
        "zero_filled_arrays": w.zero_arrays.iter().map(|(c, k)| json!({
            "class": c, "arrays": k.objects, "bytes": k.bytes, "share": w.share(k.bytes),
        })).collect::<Vec<_>>(),
        "duplicate_arrays": {
            "copies": w.duplicate_arrays.objects,
            "wasted_bytes": w.duplicate_arrays.bytes,
            "share": w.share(w.duplicate_arrays.bytes),
            "top": w.top_duplicate_arrays.iter().map(|d| json!({
                "class": d.class, "length": d.length, "copies": d.copies, "wasted_bytes": d.wasted_bytes,
            })).collect::<Vec<_>>(),
        },
    })
}

fn print_text(w: &WasteReport) {
    let pct = |b: u64| w.share(b) * 100.0;
    println!(
        "Heap: {} ({} bytes). Wasted: {} ({:.1}%).",
        human(w.heap_bytes),
        w.heap_bytes,
        human(w.total_wasted()),
        pct(w.total_wasted())
    );
    if !w.heaps.is_empty() {
        let hs: Vec<String> =
            w.heaps.iter().map(|h| format!("{} {} ({:.1}%)", h.name, human(h.bytes), pct(h.bytes))).collect();
        println!("Heaps: {}.", hs.join(", "));
    }
    println!();
    println!(
        "Duplicate strings: {} of {} strings hold a value another string holds; the copies cost {} ({:.1}%).",
        w.duplicate_strings.objects,
        w.strings.objects,
        human(w.duplicate_string_wasted),
        pct(w.duplicate_string_wasted)
    );
    if !w.top_duplicate_strings.is_empty() {
        println!("{:>10} {:>8} {:>8} {:>7}  value", "wasted", "strings", "length", "%");
        for d in &w.top_duplicate_strings {
            let v = match &d.text {
                Some(t) => format!("\"{}\"", t.escape_debug()),
                None => "<redacted>".into(),
            };
            println!("{:>10} {:>8} {:>8} {:>6.2}%  {v}", d.wasted_bytes, d.strings, d.length, pct(d.wasted_bytes));
        }
    }
    println!();
    println!("Collections (empty: the collection and its array; unused: empty slots in the others):");
    println!(
        "{:>10} {:>7} {:>10} {:>8} {:>10} {:>10} {:>10}  class",
        "wasted", "%", "instances", "empty", "empty B", "underused", "unused B"
    );
    for c in &w.collections {
        println!(
            "{:>10} {:>6.2}% {:>10} {:>8} {:>10} {:>10} {:>10}  {}",
            c.wasted_bytes(),
            pct(c.wasted_bytes()),
            c.instances,
            c.empty,
            c.empty_bytes,
            c.underused,
            c.unused_slot_bytes,
            c.class
        );
    }
    println!();
    println!("Boxed primitives held in collections (wasted: box and reference beyond the value):");
    for b in &w.boxed {
        println!(
            "{:>10} {:>6.2}%  {} × {} ({} bytes)",
            b.wasted_bytes,
            pct(b.wasted_bytes),
            b.objects,
            b.class,
            b.bytes
        );
        let held: Vec<String> = b.holders.iter().take(5).map(|(c, k)| format!("{k} in {c}")).collect();
        println!("{:>19}held: {}", "", held.join(", "));
    }
    println!();
    println!("Zero-filled primitive arrays:");
    for (c, k) in &w.zero_arrays {
        println!("{:>10} {:>6.2}%  {} × {c}", k.bytes, pct(k.bytes), k.objects);
    }
    println!();
    println!(
        "Duplicate primitive arrays (not string values): {} copies cost {} ({:.1}%)",
        w.duplicate_arrays.objects,
        human(w.duplicate_arrays.bytes),
        pct(w.duplicate_arrays.bytes)
    );
    for d in &w.top_duplicate_arrays {
        println!("{:>10} {:>8} copies  {}[{}]", d.wasted_bytes, d.copies, d.class.trim_end_matches("[]"), d.length);
    }
}
