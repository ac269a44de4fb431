//! The dominator tree of the object graph, by semi-NCA (Georgiadis' simplification of Lengauer–Tarjan:
//! semi-dominators with path compression, then immediate dominators as nearest common ancestors in the
//! DFS tree). A virtual super-root points at every GC root. Everything lives in flat `u32` arrays indexed
//! by DFS preorder; the depth-first search and the path compression use explicit stacks, so a million-long
//! linked list neither recurses nor allocates per object.

use crate::heap::HeapGraph;
use crate::{Error, Progress};

const NONE: u32 = u32::MAX;

/// The depth-first search's results: preorder, DFS-tree parents and predecessor lists.
struct Search {
    vertex: Vec<u32>,
    parent: Vec<u32>,
    pred_start: Vec<u32>,
    preds: Vec<u32>,
    reachable: usize,
    extra_roots: Vec<u32>,
}

pub struct DominatorTree {
    /// Immediate dominator of each node; [`DominatorTree::ROOT`] for nodes dominated only by the
    /// super-root (GC roots, and objects no root reaches: see [`DominatorTree::is_reachable`]).
    pub idom: Vec<u32>,
    /// Retained size of each node (0 when unreachable).
    pub retained: Vec<u64>,
    /// Children of each node in the dominator tree (`child_start` has n + 2 entries; index n is the
    /// super-root).
    pub child_start: Vec<u32>,
    pub children: Vec<u32>,
    /// Objects and shallow bytes reachable from GC roots through strong references.
    pub reachable_bytes: u64,
    pub reachable: u64,
    /// Shallow bytes of all objects, the unreachable included.
    pub total_bytes: u64,
    /// Objects no GC root reaches, put under the super-root so that they are not lost from view.
    pub unreachable_roots: Vec<u32>,
    gc_reachable: Vec<u64>,
}

impl DominatorTree {
    pub const ROOT: u32 = u32::MAX - 1;
    pub const UNREACHABLE: u32 = u32::MAX;

    pub fn compute(g: &HeapGraph, progress: &dyn Progress) -> Result<DominatorTree, Error> {
        let p = Self::search(g, None, progress);
        Ok(Self::solve(g, p, progress))
    }

    /// Like [`DominatorTree::compute`], but frees the graph's references as soon as the predecessor
    /// lists are built (the graph keeps its objects, classes and sizes; `refs` is empty afterwards). For
    /// when only the tree is wanted: peak memory drops by the size of the reference array.
    pub fn compute_releasing_references(g: &mut HeapGraph, progress: &dyn Progress) -> Result<DominatorTree, Error> {
        let mut edges = std::mem::take(&mut g.out_edges);
        let p = Self::search(g, Some(&mut edges), progress);
        g.out_start = Vec::new();
        Ok(Self::solve(g, p, progress))
    }

    /// Depth-first search from the super-root, and predecessor lists in preorder space. With `owned`
    /// (the graph's references, taken out of it), the references are renumbered in place to preorder and
    /// freed, so that the node → preorder map is gone before the predecessor lists are allocated.
    fn search(g: &HeapGraph, mut owned: Option<&mut Vec<u32>>, progress: &dyn Progress) -> Search {
        let n = g.len();
        let out_start = &g.out_start;
        progress.start("dominators", 4);
        // Preorder numbers: 0 is the super-root, node v gets pre[v] in 1..=reached.
        let mut pre = vec![NONE; n];
        let mut vertex: Vec<u32> = Vec::with_capacity(n + 1);
        let mut parent: Vec<u32> = Vec::with_capacity(n + 1);
        vertex.push(NONE);
        parent.push(NONE);
        let mut extra_roots: Vec<u32> = Vec::new();
        let reachable;
        {
            let out_edges: &[u32] = match &owned {
                Some(v) => v,
                None => &g.out_edges,
            };
            // Explicit DFS stack of (node, next edge position).
            let mut stack: Vec<(u32, u32)> = Vec::new();
            let mut dfs = |start: u32, pre: &mut Vec<u32>, vertex: &mut Vec<u32>, parent: &mut Vec<u32>| {
                if pre[start as usize] != NONE {
                    return false;
                }
                pre[start as usize] = vertex.len() as u32;
                vertex.push(start);
                parent.push(0);
                stack.push((start, out_start[start as usize]));
                while let Some(top) = stack.last_mut() {
                    let (v, pos) = *top;
                    let end = out_start[v as usize + 1];
                    if pos < end {
                        top.1 += 1;
                        let w = out_edges[pos as usize];
                        if pre[w as usize] == NONE {
                            pre[w as usize] = vertex.len() as u32;
                            vertex.push(w);
                            parent.push(pre[v as usize]);
                            stack.push((w, out_start[w as usize]));
                        }
                    } else {
                        stack.pop();
                    }
                }
                true
            };
            for r in &g.roots {
                dfs(r.node, &mut pre, &mut vertex, &mut parent);
            }
            reachable = vertex.len() - 1;
            // Objects no GC root reaches (garbage not yet collected, or roots the dump does not name) hang
            // under the super-root too, so that they are seen: first those nothing points at, then the rest
            // (cycles) in id order.
            if reachable < n {
                let mut pointed = vec![false; n];
                for &w in out_edges {
                    pointed[w as usize] = true;
                }
                for pass in 0..2 {
                    for v in 0..n as u32 {
                        if (pass == 1 || !pointed[v as usize]) && dfs(v, &mut pre, &mut vertex, &mut parent) {
                            extra_roots.push(v);
                        }
                    }
                }
            }
        }
        progress.set(1);
        crate::mem_trace("dfs");
        let m = vertex.len();
        let root_pres: Vec<u32> =
            g.roots.iter().map(|r| r.node).chain(extra_roots.iter().copied()).map(|r| pre[r as usize]).collect();
        // Either renumber the (owned) references in place and drop the map now, or map them as we go.
        if let Some(edges) = owned.as_deref_mut() {
            for e in edges.iter_mut() {
                *e = pre[*e as usize];
            }
            pre = Vec::new();
        }
        let edges: &[u32] = match &owned {
            Some(v) => v,
            None => &g.out_edges,
        };
        let map = |w: u32| if pre.is_empty() { w } else { pre[w as usize] };
        let refs = |v: u32| &edges[out_start[v as usize] as usize..out_start[v as usize + 1] as usize];
        // Predecessors in preorder space, as CSR. Root edges count as predecessor 0.
        let mut pred_start = vec![0u32; m + 1];
        for &r in &root_pres {
            pred_start[r as usize + 1] += 1;
        }
        for &v in &vertex[1..] {
            for &w in refs(v) {
                let pw = map(w);
                if pw != NONE {
                    pred_start[pw as usize + 1] += 1;
                }
            }
        }
        for i in 1..=m {
            pred_start[i] += pred_start[i - 1];
        }
        // Fill from the end of each list, decrementing its start: no second array of positions.
        let mut preds = vec![0u32; pred_start[m] as usize];
        {
            let mut put = |w: usize, p: u32| {
                pred_start[w + 1] -= 1;
                preds[pred_start[w + 1] as usize] = p;
            };
            for &r in &root_pres {
                put(r as usize, 0);
            }
            for (pv, &v) in vertex.iter().enumerate().skip(1) {
                for &w in refs(v) {
                    let pw = map(w);
                    if pw != NONE {
                        put(pw as usize, pv as u32);
                    }
                }
            }
        }
        crate::mem_trace("preds");
        // pred_start[w + 1] is now where w's list starts, i.e. pred_start is shifted by one: rotate.
        pred_start.rotate_left(1);
        pred_start[m] = preds.len() as u32;
        drop(pre);
        if let Some(edges) = owned {
            *edges = Vec::new();
        }
        progress.set(2);
        Search { vertex, parent, pred_start, preds, reachable, extra_roots }
    }

    fn solve(g: &HeapGraph, s: Search, progress: &dyn Progress) -> DominatorTree {
        let n = g.len();
        let Search { vertex, parent, pred_start, preds, reachable, extra_roots } = s;
        let m = vertex.len();

        // Semi-dominators, in reverse preorder, with eval/link over a path-compressed forest.
        let mut semi: Vec<u32> = (0..m as u32).collect();
        let mut label: Vec<u32> = (0..m as u32).collect();
        let mut ancestor = vec![NONE; m];
        let mut path: Vec<u32> = Vec::new();
        for w in (1..m).rev() {
            let mut s = semi[w];
            for &v in &preds[pred_start[w] as usize..pred_start[w + 1] as usize] {
                let u = eval(v, &mut ancestor, &mut label, &semi, &mut path);
                if semi[u as usize] < s {
                    s = semi[u as usize];
                }
            }
            semi[w] = s;
            ancestor[w] = parent[w];
        }
        crate::mem_trace("semi");
        drop(ancestor);
        drop(label);
        drop(preds);
        drop(pred_start);
        // Immediate dominators: walk up the DFS tree from the parent to the first vertex at or above semi.
        let mut idom_pre = parent;
        for w in 1..m {
            let mut d = idom_pre[w];
            while d > semi[w] {
                d = idom_pre[d as usize];
            }
            idom_pre[w] = d;
        }
        drop(semi);
        progress.set(3);

        // Retained sizes, in node space: children before parents in reverse preorder.
        let mut retained: Vec<u64> = g.shallow.iter().map(|&x| x as u64).collect();
        let mut total_bytes = 0u64;
        for w in (1..m).rev() {
            let r = retained[vertex[w] as usize];
            match idom_pre[w] {
                0 => total_bytes += r,
                d => retained[vertex[d as usize] as usize] += r,
            }
        }
        let mut idom = vec![Self::UNREACHABLE; n];
        for w in 1..m {
            let d = idom_pre[w];
            idom[vertex[w] as usize] = if d == 0 { Self::ROOT } else { vertex[d as usize] };
        }
        drop(idom_pre);
        let reachable_bytes: u64 = vertex[1..=reachable].iter().map(|&v| g.shallow[v as usize] as u64).sum();
        let mut gc_reachable = vec![0u64; n.div_ceil(64)];
        for &v in &vertex[1..=reachable] {
            gc_reachable[v as usize / 64] |= 1 << (v % 64);
        }
        drop(vertex);

        // Children lists; the super-root's at index n.
        let mut child_start = vec![0u32; n + 2];
        for &d in &idom {
            if d != Self::UNREACHABLE {
                let k = if d == Self::ROOT { n } else { d as usize };
                child_start[k + 1] += 1;
            }
        }
        for i in 1..n + 2 {
            child_start[i] += child_start[i - 1];
        }
        let mut children = vec![0u32; child_start[n + 1] as usize];
        for (v, &d) in idom.iter().enumerate().rev() {
            if d != Self::UNREACHABLE {
                let k = if d == Self::ROOT { n } else { d as usize };
                child_start[k + 1] -= 1;
                children[child_start[k + 1] as usize] = v as u32;
            }
        }
        child_start.rotate_left(1);
        child_start[n + 1] = children.len() as u32;
        progress.finish();
        crate::mem_trace("tree");
        DominatorTree {
            idom,
            retained,
            child_start,
            children,
            reachable_bytes,
            reachable: reachable as u64,
            total_bytes,
            unreachable_roots: extra_roots,
            gc_reachable,
        }
    }

    /// Whether a GC root reaches `v` through strong references.
    pub fn is_reachable(&self, v: u32) -> bool {
        self.gc_reachable.get(v as usize / 64).is_some_and(|w| w & (1 << (v % 64)) != 0)
    }

    /// Children of `v` in the dominator tree; `None` for the super-root.
    pub fn children_of(&self, v: Option<u32>) -> &[u32] {
        let k = v.map_or(self.idom.len(), |v| v as usize);
        &self.children[self.child_start[k] as usize..self.child_start[k + 1] as usize]
    }

    /// Retained size per class: the union of what the class's instances retain, counting an object once
    /// even when an instance of the same class dominates another.
    pub fn retained_by_class(&self, g: &HeapGraph) -> Vec<u64> {
        let nc = g.classes.classes.len();
        let mut total = vec![0u64; nc];
        let mut active = vec![0u32; nc];
        // Iterative DFS over the dominator tree: (node, child position), entering adds, leaving removes.
        let mut stack: Vec<(u32, u32)> = Vec::new();
        for &r in self.children_of(None) {
            let enter = |v: u32, active: &mut Vec<u32>, total: &mut Vec<u64>| {
                let c = g.class_of[v as usize] as usize;
                if active[c] == 0 {
                    total[c] += self.retained[v as usize];
                }
                active[c] += 1;
            };
            enter(r, &mut active, &mut total);
            stack.push((r, self.child_start[r as usize]));
            while let Some(top) = stack.last_mut() {
                let (v, pos) = *top;
                if pos < self.child_start[v as usize + 1] {
                    top.1 += 1;
                    let w = self.children[pos as usize];
                    enter(w, &mut active, &mut total);
                    stack.push((w, self.child_start[w as usize]));
                } else {
                    active[g.class_of[v as usize] as usize] -= 1;
                    stack.pop();
                }
            }
        }
        total
    }
}

/// The vertex with the smallest semi-dominator on the forest path above `v` (path-compressing).
fn eval(v: u32, ancestor: &mut [u32], label: &mut [u32], semi: &[u32], path: &mut Vec<u32>) -> u32 {
    if ancestor[v as usize] == NONE {
        return v;
    }
    // Collect the path up to the vertex whose ancestor is a forest root, then compress top-down.
    path.clear();
    let mut x = v;
    while ancestor[ancestor[x as usize] as usize] != NONE {
        path.push(x);
        x = ancestor[x as usize];
    }
    while let Some(y) = path.pop() {
        let a = ancestor[y as usize] as usize;
        if semi[label[a] as usize] < semi[label[y as usize] as usize] {
            label[y as usize] = label[a];
        }
        ancestor[y as usize] = ancestor[a];
    }
    label[v as usize]
}
