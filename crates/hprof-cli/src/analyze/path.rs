//! `hprof path`: the shortest path from a GC root to an object, or (`--max N`) the shortest path through
//! each of its holders.

use super::dominators::Analysed;
use super::{parse_id, print_json};
use hprof_analysis::heap::root_kind_name;
use hprof_analysis::paths::{RootPath, shortest_path, shortest_paths};
use serde_json::{Value, json};
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct Args {
    /// A heap dump (HPROF, gzip is fine).
    pub file: PathBuf,
    /// The object, by id (hexadecimal: 0x7f3a8c10).
    pub object_id: String,
    /// Show up to N paths, the shortest through each object that holds this one (1: the shortest path).
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub max: usize,
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub graph: super::GraphArgs,
}

/// The path as JSON: the root and each step with the field that leads to it.
pub fn path_json(an: &Analysed, p: &RootPath) -> Value {
    let g = &an.graph;
    let steps: Vec<Value> = p
        .nodes
        .iter()
        .enumerate()
        .map(|(i, &v)| {
            let via = if i == 0 { None } else { g.edge_label(&an.dump, p.nodes[i - 1], v) };
            json!({"id": format!("0x{:x}", g.ids.get(v)), "class": g.class_name(v), "field": via,
                   "shallow_bytes": g.shallow[v as usize], "retained_bytes": an.tree.retained[v as usize]})
        })
        .collect();
    json!({"root_kind": root_kind_name(p.root.kind), "thread_serial": p.root.thread_serial, "steps": steps})
}

/// Steps are indented by their depth up to this many levels; deeper ones keep that indentation and show
/// their step number instead, so a path of a million steps prints a million short lines, not a triangle.
const MAX_INDENT: usize = 16;

/// The text of a path: the root, then one line per step (linear in the path's length).
pub fn path_text(an: &Analysed, p: &RootPath) -> Vec<String> {
    let g = &an.graph;
    let mut out = Vec::new();
    let thread = if p.root.thread_serial != 0 {
        let name =
            an.dump.threads.iter().find(|t| t.serial == p.root.thread_serial).map(|t| format!(" \"{}\"", t.name));
        format!(" of thread {}{}", p.root.thread_serial, name.unwrap_or_default())
    } else {
        String::new()
    };
    out.push(format!("GC root ({}{thread})", root_kind_name(p.root.kind)));
    for (i, &v) in p.nodes.iter().enumerate() {
        let via = if i == 0 {
            String::new()
        } else {
            g.edge_label(&an.dump, p.nodes[i - 1], v).map(|l| format!(".{l} ")).unwrap_or_default()
        };
        let depth = i + 1;
        let step = if depth > MAX_INDENT { format!("[{depth}] ") } else { String::new() };
        out.push(format!(
            "{}{step}{}{}  (retained {})",
            "  ".repeat(depth.min(MAX_INDENT)),
            via.replace(".[", "["),
            g.describe(v),
            an.tree.retained[v as usize]
        ));
    }
    out
}

pub fn run(a: &Args) -> Result<(), String> {
    let id = parse_id(&a.object_id)?;
    let an = Analysed::load(&a.file, true, &a.graph)?;
    let v = an.graph.node(id).ok_or_else(|| format!("no object 0x{id:x} in this heap dump"))?;
    let paths =
        if a.max > 1 { shortest_paths(&an.graph, v, a.max) } else { shortest_path(&an.graph, v).into_iter().collect() };
    if a.json {
        let all: Vec<Value> = paths.iter().map(|p| path_json(&an, p)).collect();
        an.intact()?;
        print_json(&json!({"object": an.node_json(v), "path": all.first(), "paths": all, "damage": an.damage_json()}))?;
    } else if paths.is_empty() {
        println!("{} is not reachable from any GC root through strong references", an.graph.describe(v));
    } else {
        // Field names are read from the file: made before anything is shown, checked, then shown.
        let texts: Vec<Vec<String>> = paths.iter().map(|p| path_text(&an, p)).collect();
        an.intact()?;
        for (i, lines) in texts.iter().enumerate() {
            if paths.len() > 1 {
                println!("{}path {} of {}:", if i > 0 { "\n" } else { "" }, i + 1, paths.len());
            }
            lines.iter().for_each(|l| println!("{l}"));
        }
    }
    an.damage(&a.file)
}
