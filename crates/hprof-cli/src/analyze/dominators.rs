//! `hprof dominators`: the dominator tree with retained sizes.

use super::{Bar, GraphArgs, damage, damage_json, human, matches, open, parse_id, print_json};
use hprof_analysis::Dump;
use hprof_analysis::dominators::DominatorTree;
use hprof_analysis::heap::HeapGraph;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};

#[derive(clap::Args)]
pub struct Args {
    /// A heap dump (HPROF, gzip is fine).
    pub file: PathBuf,
    /// Every object of the classes matching PATTERN, with shallow and retained size and immediate dominator.
    #[arg(long, value_name = "PATTERN")]
    pub class: Option<String>,
    /// How many rows per table (default 20; with --class, all objects).
    #[arg(long, value_name = "N")]
    pub top: Option<usize>,
    /// The objects that OBJECT-ID immediately dominates (drill down), biggest first.
    #[arg(long, value_name = "OBJECT-ID")]
    pub children: Option<String>,
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub graph: super::GraphArgs,
}

/// A heap dump loaded, indexed and with its dominator tree.
pub struct Analysed {
    pub dump: Dump,
    pub graph: HeapGraph,
    pub tree: DominatorTree,
}

impl Analysed {
    pub fn load(path: &Path, keep_offsets: bool, opts: &GraphArgs) -> Result<Analysed, String> {
        Analysed::load_with(path, keep_offsets, opts, &Bar::new())
    }

    /// `load`, telling its stages to `bar` (`hprof serve` shows them on its page).
    pub fn load_with(
        path: &Path,
        keep_offsets: bool,
        opts: &GraphArgs,
        bar: &dyn hprof_analysis::Progress,
    ) -> Result<Analysed, String> {
        let dump = open(path, bar)?;
        // Without offsets nobody walks references afterwards (dominators alone): free them early.
        Analysed::of_dump(dump, keep_offsets, !keep_offsets, opts, bar)
    }

    /// The graph and dominator tree of an opened dump; `release_references` frees the graph's references
    /// once the tree is built, for callers that never walk them.
    pub fn of_dump(
        dump: Dump,
        keep_offsets: bool,
        release_references: bool,
        opts: &GraphArgs,
        bar: &dyn hprof_analysis::Progress,
    ) -> Result<Analysed, String> {
        let mut graph = HeapGraph::build_as(&dump, keep_offsets, opts.layout.layout, bar).map_err(|e| e.to_string())?;
        let tree = if !release_references {
            DominatorTree::compute_with(&graph, opts.unreachable(), bar)
        } else {
            DominatorTree::compute_releasing_references(&mut graph, opts.unreachable(), bar)
        }
        .map_err(|e| e.to_string())?;
        Ok(Analysed { dump, graph, tree })
    }

    /// The file's damage, or its shrinking while it was read (see `Source::check_intact`).
    pub fn damage(&self, path: &Path) -> Result<(), String> {
        self.intact()?;
        damage(path, &[self.dump.damage.as_ref(), self.graph.damage.as_ref()])
    }

    /// An error if the file shrank while it was read: what was read since are zeros.
    pub fn intact(&self) -> Result<(), String> {
        self.dump.source.check_intact().map_err(|e| e.to_string())
    }

    pub fn damage_json(&self) -> Value {
        damage_json(&[self.dump.damage.as_ref(), self.graph.damage.as_ref()])
    }

    pub fn node_json(&self, v: u32) -> Value {
        let g = &self.graph;
        let t = &self.tree;
        let d = t.idom[v as usize];
        json!({
            "id": format!("0x{:x}", g.ids.get(v)),
            "class": g.class_name(v),
            "shallow_bytes": g.shallow[v as usize],
            "retained_bytes": t.retained[v as usize],
            "reachable": t.is_reachable(v),
            "dominator": match d {
                DominatorTree::ROOT if !t.is_reachable(v) => Value::String("<unreachable>".into()),
                DominatorTree::ROOT => Value::String("<GC roots>".into()),
                DominatorTree::UNREACHABLE => Value::Null,
                d => Value::String(format!("0x{:x}", g.ids.get(d))),
            },
        })
    }

    pub fn dominator_text(&self, v: u32) -> String {
        match self.tree.idom[v as usize] {
            DominatorTree::ROOT if !self.tree.is_reachable(v) => "<unreachable>".into(),
            DominatorTree::ROOT => "<GC roots>".into(),
            DominatorTree::UNREACHABLE => "<unreachable>".into(),
            d => self.graph.describe(d),
        }
    }

    /// The `n` biggest of `nodes` by retained size.
    pub fn biggest(&self, nodes: &[u32], n: usize) -> Vec<u32> {
        let mut v = nodes.to_vec();
        let key = |x: &u32| std::cmp::Reverse(self.tree.retained[*x as usize]);
        if v.len() > n && n > 0 {
            v.select_nth_unstable_by_key(n - 1, key);
            v.truncate(n);
        }
        v.sort_by_key(|x| (key(x), *x));
        v
    }

    /// The objects no GC root reaches, by class: (class index, instances, shallow), biggest first.
    pub fn unreachable_classes(&self) -> Vec<(usize, u64, u64)> {
        let g = &self.graph;
        let mut per = vec![(0u64, 0u64); g.classes.classes.len()];
        for v in 0..g.len() as u32 {
            if !self.tree.is_reachable(v) {
                let e = &mut per[g.class_of[v as usize] as usize];
                e.0 += 1;
                e.1 += g.shallow[v as usize] as u64;
            }
        }
        let mut rows: Vec<_> = per.iter().enumerate().filter(|(_, e)| e.0 > 0).map(|(i, e)| (i, e.0, e.1)).collect();
        rows.sort_by(|a, b| b.2.cmp(&a.2).then(a.0.cmp(&b.0)));
        rows
    }

    /// Classes by retained size: (class index, instances, shallow, retained).
    pub fn class_table(&self) -> Vec<(usize, u64, u64, u64)> {
        let g = &self.graph;
        let retained = self.tree.retained_by_class(g);
        let mut per = vec![(0u64, 0u64); g.classes.classes.len()];
        for v in 0..g.len() {
            let e = &mut per[g.class_of[v] as usize];
            e.0 += 1;
            e.1 += g.shallow[v] as u64;
        }
        let mut rows: Vec<_> =
            per.iter().enumerate().filter(|(_, e)| e.0 > 0).map(|(i, e)| (i, e.0, e.1, retained[i])).collect();
        rows.sort_by(|a, b| b.3.cmp(&a.3).then(b.2.cmp(&a.2)));
        rows
    }
}

pub fn run(a: &Args) -> Result<(), String> {
    let an = Analysed::load(&a.file, false, &a.graph)?;
    let g = &an.graph;
    let t = &an.tree;
    // Shares are of what the tree holds: the reachable heap (and the unreachable with --keep-unreachable).
    let total = t.tree_bytes;
    let pct = |b: u64| if total > 0 { b as f64 * 100.0 / total as f64 } else { 0.0 };
    if let Some(id) = &a.children {
        let id = parse_id(id)?;
        let v = g.node(id).ok_or_else(|| format!("no object 0x{id:x} in this heap dump"))?;
        let kids = an.biggest(&t.children_of(Some(v)), a.top.unwrap_or(usize::MAX));
        if a.json {
            print_json(&json!({
                "object": an.node_json(v),
                "children": kids.iter().map(|&k| an.node_json(k)).collect::<Vec<_>>(),
                "damage": an.damage_json(),
            }))?;
        } else {
            println!(
                "{}  shallow {}  retained {} ({:.2}%)",
                g.describe(v),
                g.shallow[v as usize],
                t.retained[v as usize],
                pct(t.retained[v as usize])
            );
            println!("immediately dominates {} objects:", t.children_of(Some(v)).len());
            println!("{:>14} {:>14} {:>7}  object", "retained", "shallow", "%");
            for &k in &kids {
                println!(
                    "{:>14} {:>14} {:>6.2}%  {}",
                    t.retained[k as usize],
                    g.shallow[k as usize],
                    pct(t.retained[k as usize]),
                    g.describe(k)
                );
            }
        }
        return an.damage(&a.file);
    }
    if let Some(p) = &a.class {
        // Match the classes once, then pick their objects.
        let wanted: Vec<bool> = g.classes.classes.iter().map(|c| matches(p, &c.name)).collect();
        let mut objs: Vec<u32> = (0..g.len() as u32).filter(|&v| wanted[g.class_of[v as usize] as usize]).collect();
        objs.sort_by_key(|&v| (std::cmp::Reverse(t.retained[v as usize]), v));
        if let Some(n) = a.top {
            objs.truncate(n);
        }
        if a.json {
            print_json(&json!({
                "pattern": p,
                "objects": objs.iter().map(|&v| an.node_json(v)).collect::<Vec<_>>(),
                "damage": an.damage_json(),
            }))?;
        } else {
            println!("{:>14} {:>14}  object  (immediate dominator)", "retained", "shallow");
            for &v in &objs {
                println!(
                    "{:>14} {:>14}  {}  ({})",
                    t.retained[v as usize],
                    g.shallow[v as usize],
                    g.describe(v),
                    an.dominator_text(v)
                );
            }
            println!("{} objects", objs.len());
        }
        return an.damage(&a.file);
    }
    let n = a.top.unwrap_or(20);
    let classes = an.class_table();
    let unreachable = an.unreachable_classes();
    let tops = an.biggest(&t.children_of(None), n);
    if a.json {
        print_json(&json!({
            "objects": g.len(),
            "reachable_objects": t.reachable,
            "reachable_bytes": t.reachable_bytes,
            "total_bytes": t.total_bytes,
            "tree_bytes": total,
            "unreachable_objects": g.len() as u64 - t.reachable,
            "unreachable_bytes": t.total_bytes - t.reachable_bytes,
            "unreachable_kept": a.graph.keep_unreachable,
            "unreachable_classes": unreachable.iter().take(n).map(|&(i, cnt, sh)| json!({
                "class": g.classes.classes[i].name, "instances": cnt, "shallow_bytes": sh,
            })).collect::<Vec<_>>(),
            "dangling_references": g.dangling,
            "layout": g.layout_choice.describe(),
            "classes": classes.iter().take(n).map(|&(i, cnt, sh, re)| json!({
                "class": g.classes.classes[i].name, "instances": cnt, "shallow_bytes": sh, "retained_bytes": re,
            })).collect::<Vec<_>>(),
            "dominators": tops.iter().map(|&v| an.node_json(v)).collect::<Vec<_>>(),
            "damage": an.damage_json(),
        }))?;
    } else {
        let where_unreachable = if a.graph.keep_unreachable {
            "listed under <unreachable>"
        } else {
            "left out of the dominator tree; --keep-unreachable keeps them"
        };
        println!(
            "{} objects ({}); {} reachable from GC roots ({}), {} unreachable ({}, {where_unreachable}); {} dangling references",
            g.len(),
            human(t.total_bytes),
            t.reachable,
            human(t.reachable_bytes),
            g.len() as u64 - t.reachable,
            human(t.total_bytes - t.reachable_bytes),
            g.dangling
        );
        if !a.graph.keep_unreachable && !unreachable.is_empty() {
            println!();
            println!("Unreachable objects by class (not in the tree):");
            println!("{:>12} {:>14}  class", "instances", "shallow");
            for &(i, cnt, sh) in unreachable.iter().take(n.min(10)) {
                println!("{:>12} {:>14}  {}", cnt, sh, g.classes.classes[i].name);
            }
        }
        println!();
        println!("Classes by retained size:");
        println!("{:>14} {:>7} {:>12} {:>14}  class", "retained", "%", "instances", "shallow");
        for &(i, cnt, sh, re) in classes.iter().take(n) {
            println!("{:>14} {:>6.2}% {:>12} {:>14}  {}", re, pct(re), cnt, sh, g.classes.classes[i].name);
        }
        println!();
        println!("Biggest objects (top of the dominator tree):");
        println!("{:>14} {:>7} {:>14}  object", "retained", "%", "shallow");
        for &v in &tops {
            let note = if t.is_reachable(v) { "" } else { "  <unreachable>" };
            println!(
                "{:>14} {:>6.2}% {:>14}  {}{note}",
                t.retained[v as usize],
                pct(t.retained[v as usize]),
                g.shallow[v as usize],
                g.describe(v)
            );
        }
    }
    an.damage(&a.file)
}
