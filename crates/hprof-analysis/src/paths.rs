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
