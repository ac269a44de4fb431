//! Shortest paths from GC roots to many objects at once: one breadth-first search, then each path read
//! off the parent links (where [`crate::paths::shortest_path`] searches again for every object).

use crate::dump::Dump;
use crate::heap::{HeapGraph, root_kind_name};
use crate::paths::RootPath;
use std::collections::VecDeque;

const NONE: u32 = u32::MAX;

/// Each reachable object's parent on a shortest path from the roots.
pub struct RootForest {
    parent: Vec<u32>,
    /// For root nodes, the index of their root record.
    root_index: Vec<u32>,
}

impl RootForest {
    pub fn new(g: &HeapGraph) -> RootForest {
        let n = g.len();
        let mut parent = vec![NONE; n];
        let mut root_index = vec![NONE; n];
        let mut queue = VecDeque::new();
        for (i, r) in g.roots.iter().enumerate() {
            let v = r.node as usize;
            if v < n && parent[v] == NONE {
                parent[v] = r.node;
                root_index[v] = i as u32;
                queue.push_back(r.node);
            }
        }
        while let Some(v) = queue.pop_front() {
            for &w in g.refs(v) {
                if parent[w as usize] == NONE {
                    parent[w as usize] = v;
                    queue.push_back(w);
                }
            }
        }
        RootForest { parent, root_index }
    }

    pub fn reachable(&self, v: u32) -> bool {
        self.parent.get(v as usize).is_some_and(|&p| p != NONE)
    }

    /// The parent of `v` on its path, `None` for roots and unreachable objects.
    pub fn parent(&self, v: u32) -> Option<u32> {
        self.parent.get(v as usize).copied().filter(|&p| p != NONE && p != v)
    }

    pub fn path(&self, g: &HeapGraph, target: u32) -> Option<RootPath> {
        if !self.reachable(target) {
            return None;
        }
        let mut nodes = vec![target];
        let mut v = target;
        while let Some(p) = self.parent(v) {
            if nodes.len() > self.parent.len() {
                return None;
            }
            nodes.push(p);
            v = p;
        }
        nodes.reverse();
        let root = g.roots[*self.root_index.get(nodes[0] as usize)? as usize];
        Some(RootPath { root, nodes })
    }
}

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
