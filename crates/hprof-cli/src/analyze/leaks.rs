//! `hprof leaks`: leak suspects, as a heap analyser's report shows them: single objects or classes
//! retaining a large share of the heap, where the memory accumulates below them, and the path from a GC root.

use super::dominators::Analysed;
use super::path::{path_json, path_text};
use super::{human, print_json};
use hprof_analysis::paths::shortest_path;
use serde_json::{Value, json};
use std::collections::HashMap;
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct Args {
    /// A heap dump (HPROF, gzip is fine).
    pub file: PathBuf,
    /// Report what retains at least PERCENT of the reachable heap.
    #[arg(long, value_name = "PERCENT", default_value_t = 10.0)]
    pub threshold: f64,
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub graph: super::GraphArgs,
}

/// A suspect and where its memory accumulates.
pub struct Suspect {
    pub node: u32,
    pub accumulation: u32,
    /// Below the accumulation point: (class name, objects, retained bytes), biggest first.
    pub content: Vec<(String, u64, u64)>,
}

/// A class row: (class index, instances, shallow bytes, retained bytes).
pub type ClassRow = (usize, u64, u64, u64);

pub fn suspects(an: &Analysed, threshold: f64) -> (Vec<Suspect>, Vec<ClassRow>) {
    let g = &an.graph;
    let t = &an.tree;
    let limit = (t.tree_bytes as f64 * threshold / 100.0) as u64;
    let mut out = Vec::new();
    for v in an.biggest(&t.children_of(None), 50) {
        if t.retained[v as usize] < limit.max(1) {
            break;
        }
        // Accumulation point: follow the biggest child while it holds most of what its parent retains
        // and is not a leaf itself (a big array is the content, its holder the accumulation point).
        let mut cur = v;
        loop {
            let kids = t.children_of(Some(cur));
            let Some(&big) = kids.iter().max_by_key(|&&k| t.retained[k as usize]) else { break };
            if t.retained[big as usize] * 10 < t.retained[cur as usize] * 8 || t.children_of(Some(big)).is_empty() {
                break;
            }
            cur = big;
        }
        let mut per: HashMap<u32, (u64, u64)> = HashMap::new();
        for &k in &t.children_of(Some(cur)) {
            let e = per.entry(g.class_of[k as usize]).or_default();
            e.0 += 1;
            e.1 += t.retained[k as usize];
        }
        let mut content: Vec<_> =
            per.into_iter().map(|(c, (n, b))| (g.classes.classes[c as usize].name.clone(), n, b)).collect();
        content.sort_by_key(|c| std::cmp::Reverse(c.2));
        content.truncate(5);
        out.push(Suspect { node: v, accumulation: cur, content });
    }
    // Classes whose instances together retain a large share, with no single instance that big.
    let classes: Vec<_> = an
        .class_table()
        .into_iter()
        .filter(|&(i, n, _, re)| {
            re >= limit.max(1) && n > 1 && !out.iter().any(|s| g.class_of[s.node as usize] as usize == i)
        })
        .take(10)
        .collect();
    (out, classes)
}

pub fn run(a: &Args) -> Result<(), String> {
    let an = Analysed::load(&a.file, true, &a.graph)?;
    let g = &an.graph;
    let t = &an.tree;
    let total = t.tree_bytes;
    let pct = |b: u64| if total > 0 { b as f64 * 100.0 / total as f64 } else { 0.0 };
    let (objs, classes) = suspects(&an, a.threshold);
    if a.json {
        let objs: Vec<Value> = objs
            .iter()
            .map(|s| {
                json!({
                    "object": an.node_json(s.node),
                    "share": pct(t.retained[s.node as usize]) / 100.0,
                    "accumulation_point": an.node_json(s.accumulation),
                    "content": s.content.iter().map(|(c, n, b)| json!({"class": c, "objects": n, "retained_bytes": b})).collect::<Vec<_>>(),
                    "path": shortest_path(g, s.node).map(|p| path_json(&an, &p)),
                })
            })
            .collect();
        let classes: Vec<Value> = classes
            .iter()
            .map(|&(i, n, sh, re)| json!({"class": g.classes.classes[i].name, "instances": n, "shallow_bytes": sh, "retained_bytes": re, "share": pct(re) / 100.0}))
            .collect();
        print_json(
            &json!({"total_bytes": total, "reachable_bytes": t.reachable_bytes, "threshold_percent": a.threshold, "objects": objs, "classes": classes, "damage": an.damage_json()}),
        )?;
    } else {
        println!(
            "Heap: {} ({total} bytes), {} reachable from GC roots. Suspects retain at least {}% of the heap.",
            human(total),
            human(t.reachable_bytes),
            a.threshold
        );
        if objs.is_empty() && classes.is_empty() {
            println!("No leak suspects.");
        }
        for (i, s) in objs.iter().enumerate() {
            let r = t.retained[s.node as usize];
            println!();
            let note = if t.is_reachable(s.node) {
                ""
            } else {
                " — unreachable from GC roots (garbage, or a root the dump does not name)"
            };
            println!("Suspect {}: {} retains {} ({:.1}%){note}", i + 1, g.describe(s.node), human(r), pct(r));
            if s.accumulation != s.node {
                println!(
                    "  accumulation point: {} retains {}",
                    g.describe(s.accumulation),
                    human(t.retained[s.accumulation as usize])
                );
            }
            for (c, n, b) in &s.content {
                println!("    {n} × {c} retaining {}", human(*b));
            }
            if let Some(p) = shortest_path(g, s.node) {
                println!("  path from GC root:");
                for l in path_text(&an, &p) {
                    println!("    {l}");
                }
            }
        }
        for (k, &(i, n, _, re)) in classes.iter().enumerate() {
            println!();
            println!(
                "Class suspect {}: {n} instances of {} retain {} ({:.1}%)",
                k + 1,
                g.classes.classes[i].name,
                human(re),
                pct(re)
            );
        }
    }
    an.damage(&a.file)
}
