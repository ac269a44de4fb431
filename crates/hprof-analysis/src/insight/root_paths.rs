//! Paths from GC roots as labelled steps, for the heap insights. The paths of many objects come from one
//! search, [`RootForest`] (crate::paths), each read off its parent links.

use crate::dump::Dump;
use crate::heap::{HeapGraph, root_kind_name};
pub use crate::paths::RootForest;
use crate::paths::RootPath;

/// One step of a path as text: `java.util.ArrayList@0x… .elementData`.
#[derive(Debug, Clone)]
pub struct PathStep {
    pub id: u64,
    pub class: String,
    /// How the previous step refers to this one (a field, `[index]`, `static name`), `None` for the first.
    pub via: Option<String>,
}

/// A path as labelled steps, and the kind of root it starts from.
#[derive(Debug, Clone)]
pub struct LabelledPath {
    pub root_kind: &'static str,
    pub steps: Vec<PathStep>,
}

pub fn labelled(dump: &Dump, g: &HeapGraph, p: &RootPath) -> LabelledPath {
    let steps = p
        .nodes
        .iter()
        .enumerate()
        .map(|(i, &v)| PathStep {
            id: g.ids.get(v),
            class: class_or_mirror(g, v),
            via: (i > 0).then(|| g.edge_label(dump, p.nodes[i - 1], v).unwrap_or_else(|| "?".into())),
        })
        .collect();
    LabelledPath { root_kind: root_kind_name(p.root.kind), steps }
}

/// A node's class name, or `class Foo` for a class object.
pub fn class_or_mirror(g: &HeapGraph, v: u32) -> String {
    if g.class_of[v as usize] == g.classes.class_class
        && let Some(c) = g.classes.get(g.ids.get(v))
    {
        return format!("class {}", c.name);
    }
    g.class_name(v).to_owned()
}
