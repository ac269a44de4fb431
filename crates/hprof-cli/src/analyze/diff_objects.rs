//! `hprof diff BASE NEW --objects`: the objects of NEW that BASE lacks, grouped by what keeps them.

use super::dominators::Analysed;
use super::loaders::{path_json, path_lines};
use super::{Bar, human, open, print_json};
use hprof_analysis::heap::HeapGraph;
use hprof_analysis::insight::growth::{GrowthReport, Holder, Match, baseline, describe_match, growth};
use hprof_analysis::insight::root_paths::{LabelledPath, RootForest, class_or_mirror, labelled};
use serde_json::{Value, json};
use std::path::PathBuf;

/// What `hprof diff --objects` was asked.
pub struct Args {
    pub a: PathBuf,
    pub b: PathBuf,
    pub layout: super::LayoutArg,
    pub by: Match,
    pub top: Option<usize>,
    pub json: bool,
}

pub fn run(a: &Args) -> Result<(), String> {
    let by = a.by;
    // The earlier dump only as ids and path names: its graph is gone before the later one is built.
    let base = {
        let bar = Bar::new();
        let d = open(&a.a, &bar)?;
        let g = HeapGraph::build_as(&d, false, a.layout.layout, &bar).map_err(|e| format!("{}: {e}", a.a.display()))?;
        d.source.check_intact().map_err(|e| e.to_string())?;
        baseline(&g)
    };
    let opts = super::GraphArgs { layout: a.layout.clone(), keep_unreachable: false };
    let an = Analysed::load(&a.b, true, &opts)?;
    let top = a.top.unwrap_or(20);
    let r = growth(&base, &an.graph, &an.tree, by, top);
    let forest = RootForest::new(&an.graph);
    let paths: Vec<Option<LabelledPath>> = r
        .groups
        .iter()
        .map(|gr| match gr.holder {
            Holder::Object(v) => forest.path(&an.graph, v).map(|p| labelled(&an.dump, &an.graph, &p)),
            _ => None,
        })
        .collect();
    an.intact()?;
    if a.json {
        let mut v = report_json(&an, &r, &paths);
        v["damage"] = an.damage_json();
        print_json(&v)?;
    } else {
        print_text(&an, &r, &paths);
    }
    an.damage(&a.b)
}

pub(crate) fn holder_text(an: &Analysed, h: Holder) -> String {
    match h {
        Holder::Object(v) => format!("{}@0x{:x}", class_or_mirror(&an.graph, v), an.graph.ids.get(v)),
        Holder::Roots => "<GC roots>".into(),
        Holder::Unreachable => "<unreachable>".into(),
    }
}

/// The JSON of `--json` (and of `hprof serve`'s `/api/diffobjects`).
pub(crate) fn report_json(an: &Analysed, r: &GrowthReport, paths: &[Option<LabelledPath>]) -> Value {
    json!({
        "matched_by": describe_match(r.matched_by),
        "base_objects": r.base_objects,
        "objects": r.objects,
        "new_objects": r.new_objects_total,
        "new_bytes": r.new_bytes_total,
        "groups": r.groups.iter().zip(paths).map(|(gr, p)| json!({
            "holder": holder_text(an, gr.holder),
            "holder_retained_bytes": match gr.holder { Holder::Object(v) => Some(an.tree.retained[v as usize]), _ => None },
            "new_objects": gr.new_objects,
            "new_bytes": gr.new_bytes,
            "retained_bytes": gr.retained_bytes,
            "classes": gr.classes.iter().map(|(c, n, b)| json!({"class": c, "objects": n, "bytes": b})).collect::<Vec<_>>(),
            "path": p.as_ref().map(path_json),
        })).collect::<Vec<_>>(),
    })
}

fn print_text(an: &Analysed, r: &GrowthReport, paths: &[Option<LabelledPath>]) {
    println!(
        "{} new objects ({}) of {} (matched by {}; the earlier dump has {} objects).",
        r.new_objects_total,
        human(r.new_bytes_total),
        r.objects,
        describe_match(r.matched_by),
        r.base_objects
    );
    for (i, (gr, p)) in r.groups.iter().zip(paths).enumerate() {
        println!();
        println!(
            "{}. {} keeps {} new objects ({}), retaining {}",
            i + 1,
            holder_text(an, gr.holder),
            gr.new_objects,
            human(gr.new_bytes),
            human(gr.retained_bytes)
        );
        for (c, n, b) in &gr.classes {
            println!("     {n} × {c} ({})", human(*b));
        }
        if let Some(p) = p {
            for l in path_lines(p) {
                println!("     {l}");
            }
        }
    }
}
