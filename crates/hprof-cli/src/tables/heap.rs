//! The heap's tables from the analysed graph: `objects` (one row per object, with its retained size and
//! immediate dominator) and `classes`.

use super::values::{ValueClasses, array_length, value};
use super::writer::{Cell, TableWriter, Ty};
use crate::analyze::dominators::Analysed;
use hprof_analysis::dominators::DominatorTree;
use std::path::Path;

pub const OBJECTS: &[(&str, Ty, bool)] = &[
    ("id", Ty::Int, false),
    ("class_id", Ty::Int, true),
    ("class", Ty::Str, false),
    ("shallow", Ty::Int, false),
    ("retained", Ty::Int, false),
    ("dominator", Ty::Int, true),
    ("reachable", Ty::Bool, false),
    ("length", Ty::Int, true),
    ("value", Ty::Str, true),
];

pub const CLASSES: &[(&str, Ty, bool)] = &[
    ("id", Ty::Int, true),
    ("name", Ty::Str, false),
    ("loader_id", Ty::Int, true),
    ("super_id", Ty::Int, true),
    ("instance_size", Ty::Int, false),
];

/// A class object id, or NULL for the pseudo-classes (primitive arrays, unknown class) that have none.
fn id_or_null(id: u64) -> Option<i64> {
    (id != 0).then_some(id as i64)
}

pub fn write_objects(an: &Analysed, dir: &Path, redact: bool) -> Result<u64, String> {
    let (d, g, t) = (&an.dump, &an.graph, &an.tree);
    let vc = ValueClasses::of(g);
    let mut w = TableWriter::create(dir, "objects", OBJECTS)?;
    for v in 0..g.len() as u32 {
        let ci = g.class_of[v as usize] as usize;
        let class = &g.classes.classes[ci];
        let dominator = match t.idom[v as usize] {
            DominatorTree::ROOT | DominatorTree::UNREACHABLE => None,
            d => Some(g.ids.get(d) as i64),
        };
        let text = if redact { None } else { value(d, g, &vc, v) };
        w.row(&[
            Cell::I(Some(g.ids.get(v) as i64)),
            Cell::I(id_or_null(class.id)),
            Cell::S(Some(&class.name)),
            Cell::I(Some(g.shallow[v as usize] as i64)),
            Cell::I(Some(t.retained[v as usize] as i64)),
            Cell::I(dominator),
            Cell::B(Some(t.is_reachable(v))),
            Cell::I(if class.id == 0 || class.name.ends_with("[]") { array_length(d, g, v) } else { None }),
            Cell::S(text.as_deref()),
        ])?;
    }
    w.close()
}

pub fn write_classes(an: &Analysed, dir: &Path) -> Result<u64, String> {
    let g = &an.graph;
    let mut w = TableWriter::create(dir, "classes", CLASSES)?;
    for c in &g.classes.classes {
        w.row(&[
            Cell::I(id_or_null(c.id)),
            Cell::S(Some(&c.name)),
            Cell::I(id_or_null(c.loader_id)),
            Cell::I(id_or_null(c.super_id)),
            Cell::I(Some(c.instance_size as i64)),
        ])?;
    }
    w.close()
}
