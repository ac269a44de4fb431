//! `hprof loaders`: class loaders with their classes, retained bytes and parent; classes that several
//! loaders defined; loaders closed (undeployed) yet still held, with the path that holds each.

use super::dominators::Analysed;
use super::{human, print_json};
use hprof_analysis::insight::loaders::{LoadersReport, loaders};
use hprof_analysis::insight::root_paths::LabelledPath;
use serde_json::{Value, json};
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct Args {
    /// A heap dump (HPROF, gzip is fine).
    pub file: PathBuf,
    /// How many loaders and duplicated classes to list.
    #[arg(long, value_name = "N", default_value_t = 50)]
    pub top: usize,
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub graph: super::GraphArgs,
}

fn hex(id: u64) -> String {
    format!("0x{id:x}")
}

pub fn path_json(p: &LabelledPath) -> Value {
    json!({
        "root_kind": p.root_kind,
        "steps": p.steps.iter().map(|s| json!({"id": hex(s.id), "class": s.class, "field": s.via})).collect::<Vec<_>>(),
    })
}

pub fn path_lines(p: &LabelledPath) -> Vec<String> {
    let mut out = vec![format!("GC root ({})", p.root_kind)];
    for s in &p.steps {
        match &s.via {
            Some(f) => out.push(format!("  .{f} → {}@{}", s.class, hex(s.id))),
            None => out.push(format!("  {}@{}", s.class, hex(s.id))),
        }
    }
    out
}

/// The report as JSON (the schema in docs/frontend.md#loaders).
pub fn report_json(r: &LoadersReport, top: usize) -> Value {
    json!({
        "loaders": r.loaders.iter().take(top).map(|l| json!({
            "id": hex(l.id), "class": l.class, "name": l.name, "parent": l.parent.map(hex),
            "classes": l.classes, "instances": l.instances, "retained_bytes": l.retained_bytes, "closed": l.closed,
            "undeployed": l.undeployed,
        })).collect::<Vec<_>>(),
        "loader_count": r.loaders.len(),
        "duplicate_classes": r.duplicate_classes.iter().take(top).map(|d| json!({
            "class": d.name, "loaders": d.loaders.iter().map(|&l| hex(l)).collect::<Vec<_>>(),
        })).collect::<Vec<_>>(),
        "duplicate_class_count": r.duplicate_classes.len(),
        "held_after_close": r.held.iter().map(|h| json!({
            "loader": hex(h.loader), "why": h.why, "path": h.path.as_ref().map(path_json),
        })).collect::<Vec<_>>(),
    })
}

pub fn run(a: &Args) -> Result<(), String> {
    let an = Analysed::load(&a.file, true, &a.graph)?;
    let r = loaders(&an.dump, &an.graph, &an.tree);
    an.intact()?;
    if a.json {
        let mut v = report_json(&r, a.top);
        v["damage"] = an.damage_json();
        print_json(&v)?;
        return an.damage(&a.file);
    }
    println!("{} class loaders:", r.loaders.len());
    println!("{:>12} {:>8} {:>10}  loader (parent)", "retained", "classes", "instances");
    for l in r.loaders.iter().take(a.top) {
        let name = l.name.as_ref().map(|n| format!(" \"{n}\"")).unwrap_or_default();
        let parent = match l.parent {
            Some(0) => " (parent: bootstrap)".to_owned(),
            Some(p) => format!(" (parent: {})", hex(p)),
            None => String::new(),
        };
        let closed = l.undeployed.as_ref().map(|u| format!("  UNDEPLOYED ({u})")).unwrap_or_default();
        let at = if l.id == 0 { String::new() } else { format!("@{}", hex(l.id)) };
        println!(
            "{:>12} {:>8} {:>10}  {}{at}{name}{parent}{closed}",
            human(l.retained_bytes),
            l.classes,
            l.instances,
            l.class
        );
    }
    println!();
    println!("Classes defined by several loaders: {}", r.duplicate_classes.len());
    for d in r.duplicate_classes.iter().take(a.top) {
        let ls: Vec<String> = d.loaders.iter().map(|&l| hex(l)).collect();
        println!("  {} × {}  ({})", d.loaders.len(), d.name, ls.join(", "));
    }
    println!();
    println!("Loaders undeployed (closed or stopped) yet still held: {}", r.held.len());
    for h in &r.held {
        println!();
        println!("  {} — {}", hex(h.loader), h.why);
        for l in h.path.as_ref().map(path_lines).unwrap_or_default() {
            println!("    {l}");
        }
    }
    an.damage(&a.file)
}
