//! Shortest paths from GC roots, by breadth-first search from all roots at once over strong references.

use crate::heap::{HeapGraph, Root};
use std::collections::VecDeque;

const NONE: u32 = u32::MAX;

/// A path from a GC root to an object: `nodes[0]` is held by `root`, the last node is the target.
#[derive(Debug, Clone)]
pub struct RootPath {
    pub root: Root,
    pub nodes: Vec<u32>,
}

/// The shortest path from any GC root to `target`, or `None` if no root reaches it strongly.
pub fn shortest_path(g: &HeapGraph, target: u32) -> Option<RootPath> {
    let n = g.len();
    let mut parent = vec![NONE; n];
    // Which root record started the search at each root node.
    let mut queue = VecDeque::new();
    let mut root_of_start: Vec<(u32, usize)> = Vec::new();
    for (i, r) in g.roots.iter().enumerate() {
        if parent[r.node as usize] == NONE {
            parent[r.node as usize] = r.node;
            root_of_start.push((r.node, i));
            queue.push_back(r.node);
        }
    }
    let mut found = parent.get(target as usize).is_some_and(|&p| p != NONE);
    while !found {
        let Some(v) = queue.pop_front() else { break };
        for &w in g.refs(v) {
            if parent[w as usize] == NONE {
                parent[w as usize] = v;
                if w == target {
                    found = true;
                    break;
                }
                queue.push_back(w);
            }
        }
    }
    if !found {
        return None;
    }
    let mut nodes = vec![target];
    let mut v = target;
    while parent[v as usize] != v {
        v = parent[v as usize];
        nodes.push(v);
    }
    nodes.reverse();
    let start = nodes[0];
    let root = root_of_start.iter().find(|(n, _)| *n == start).map(|&(_, i)| g.roots[i])?;
    Some(RootPath { root, nodes })
}

/// Up to `max` shortest paths from GC roots to `target`, each through a different object that refers to it,
/// shortest first (the target itself first if it is a root). Where [`shortest_path`] shows one way the
/// object is held, these show its holders: what must let go of it before it can be collected.
pub fn shortest_paths(g: &HeapGraph, target: u32, max: usize) -> Vec<RootPath> {
    let n = g.len();
    if target as usize >= n || max == 0 {
        return Vec::new();
    }
    // Breadth-first from every root over the whole graph: each reachable node's parent and root record.
    // The search does not go on through the target: a holder reached only through the target is part of a
    // cycle the target closes, not something that keeps it alive, and no path may pass through its end.
    let mut parent = vec![NONE; n];
    let mut depth = vec![NONE; n];
    let mut root_index = vec![NONE; n];
    let mut queue = VecDeque::new();
    for (i, r) in g.roots.iter().enumerate() {
        let v = r.node as usize;
        if v < n && parent[v] == NONE {
            parent[v] = r.node;
            depth[v] = 0;
            root_index[v] = i as u32;
            if r.node != target {
                queue.push_back(r.node);
            }
        }
    }
    while let Some(v) = queue.pop_front() {
        for &w in g.refs(v) {
            let wi = w as usize;
            if wi < n && parent[wi] == NONE {
                parent[wi] = v;
                depth[wi] = depth[v as usize] + 1;
                root_index[wi] = root_index[v as usize];
                if w != target {
                    queue.push_back(w);
                }
            }
        }
    }
    if parent[target as usize] == NONE {
        return Vec::new();
    }
    let path_to = |mut v: u32| {
        let mut nodes = vec![v];
        while parent[v as usize] != v {
            v = parent[v as usize];
            nodes.push(v);
        }
        nodes.reverse();
        let root = g.roots[root_index[nodes[0] as usize] as usize];
        RootPath { root, nodes }
    };
    let mut paths = Vec::new();
    if parent[target as usize] == target {
        paths.push(RootPath { root: g.roots[root_index[target as usize] as usize], nodes: vec![target] });
    }
    let mut holders: Vec<u32> =
        (0..n as u32).filter(|&v| v != target && parent[v as usize] != NONE && g.refs(v).contains(&target)).collect();
    holders.sort_by_key(|&v| (depth[v as usize], v));
    for h in holders.into_iter().take(max.saturating_sub(paths.len())) {
        let mut p = path_to(h);
        p.nodes.push(target);
        paths.push(p);
    }
    paths
}
