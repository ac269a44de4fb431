//! Shortest paths from GC roots: one breadth-first search from all roots at once over strong references
//! (or the edges a caller gives), kept as a forest of parent links — [`RootForest`] — from which each
//! path is read. `shortest_path`, `shortest_paths`, the heap insights (`insight::root_paths`) and the
//! web view's inspector all search with it.

use crate::heap::{HeapGraph, Root};
use std::collections::VecDeque;

const NONE: u32 = u32::MAX;

/// A path from a GC root to an object: `nodes[0]` is held by `root`, the last node is the target.
#[derive(Debug, Clone)]
pub struct RootPath {
    pub root: Root,
    pub nodes: Vec<u32>,
}

/// Each object's parent on a shortest path from the GC roots (as far as the search went).
pub struct RootForest {
    parent: Vec<u32>,
    /// For root nodes, the index of their root record (the first record that names the node).
    root_index: Vec<u32>,
}

/// How far a search goes.
#[derive(Debug, Clone, Copy, Default)]
pub struct Search {
    /// Stop once this object is reached.
    pub until: Option<u32>,
    /// Reach this object but go on through none of its references.
    pub not_through: Option<u32>,
}

impl RootForest {
    /// The whole forest over strong references: every reachable object's path.
    pub fn new(g: &HeapGraph) -> RootForest {
        Self::search(g, Search::default(), |v, add| g.refs(v).iter().for_each(|&w| add(w)))
    }

    /// Breadth-first from every GC root (in the order of their records) over the edges `edges(v, add)` gives
    /// for `v` (each `add(w)` in order), as far as `how` says.
    pub fn search(g: &HeapGraph, how: Search, mut edges: impl FnMut(u32, &mut dyn FnMut(u32))) -> RootForest {
        let n = g.len();
        let mut parent = vec![NONE; n];
        let mut root_index = vec![NONE; n];
        let mut queue = VecDeque::new();
        for (i, r) in g.roots.iter().enumerate() {
            let v = r.node as usize;
            if v < n && parent[v] == NONE {
                parent[v] = r.node;
                root_index[v] = i as u32;
                if how.not_through != Some(r.node) {
                    queue.push_back(r.node);
                }
            }
        }
        let mut found = how.until.is_some_and(|t| parent.get(t as usize).is_some_and(|&p| p != NONE));
        while !found {
            let Some(v) = queue.pop_front() else { break };
            edges(v, &mut |w| {
                let wi = w as usize;
                if found || wi >= n || parent[wi] != NONE {
                    return;
                }
                parent[wi] = v;
                if how.until == Some(w) {
                    found = true;
                } else if how.not_through != Some(w) {
                    queue.push_back(w);
                }
            });
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

    /// The path from a GC root to `target`, `None` if the search did not reach it.
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

/// The shortest path from any GC root to `target`, or `None` if no root reaches it strongly.
pub fn shortest_path(g: &HeapGraph, target: u32) -> Option<RootPath> {
    let how = Search { until: Some(target), not_through: None };
    RootForest::search(g, how, |v, add| g.refs(v).iter().for_each(|&w| add(w))).path(g, target)
}

/// Up to `max` shortest paths from GC roots to `target`, each through a different object that refers to it,
/// shortest first (the target itself first if it is a root). Where [`shortest_path`] shows one way the
/// object is held, these show its holders: what must let go of it before it can be collected.
pub fn shortest_paths(g: &HeapGraph, target: u32, max: usize) -> Vec<RootPath> {
    let n = g.len();
    if target as usize >= n || max == 0 {
        return Vec::new();
    }
    // Breadth-first from every root over the whole graph. The search does not go on through the target: a
    // holder reached only through the target is part of a cycle the target closes, not something that keeps
    // it alive, and no path may pass through its end.
    let how = Search { until: None, not_through: Some(target) };
    let forest = RootForest::search(g, how, |v, add| g.refs(v).iter().for_each(|&w| add(w)));
    if !forest.reachable(target) {
        return Vec::new();
    }
    let depth = |mut v: u32| {
        let mut d = 0usize;
        while let Some(p) = forest.parent(v) {
            d += 1;
            v = p;
        }
        d
    };
    let mut paths = Vec::new();
    if forest.parent(target).is_none() {
        paths.extend(forest.path(g, target));
    }
    let mut holders: Vec<u32> =
        (0..n as u32).filter(|&v| v != target && forest.reachable(v) && g.refs(v).contains(&target)).collect();
    holders.sort_by_cached_key(|&v| (depth(v), v));
    for h in holders.into_iter().take(max.saturating_sub(paths.len())) {
        if let Some(mut p) = forest.path(g, h) {
            p.nodes.push(target);
            paths.push(p);
        }
    }
    paths
}
