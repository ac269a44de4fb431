//! The dominator tree of the object graph, by semi-NCA (Georgiadis' simplification of Lengauer–Tarjan:
//! semi-dominators with path compression, then immediate dominators as nearest common ancestors in the
//! DFS tree). A virtual super-root points at every GC root. Everything lives in flat `u32` arrays indexed
//! by DFS preorder; the depth-first search and the path compression use explicit stacks, so a million-long
//! linked list neither recurses nor allocates per object.

use crate::atomic_arrays::{atomic_u32s, atomic_u32s_in, atomic_u64s, from_plain_u32, into_plain_u32, into_plain_u64};
use crate::heap::HeapGraph;
use crate::spill::Spilled;
use crate::{Error, Progress};
use rayon::prelude::*;
use std::sync::atomic::Ordering::Relaxed;

const NONE: u32 = u32::MAX;

/// The depth-first search's results: preorder, DFS-tree parents and predecessor lists.
struct Search {
    vertex: Vec<u32>,
    parent: Vec<u32>,
    /// `parent`, parked on disk while the predecessor lists were built (low-memory mode).
    parked_parent: Option<Spilled>,
    pred_start: Vec<u32>,
    preds: Vec<u32>,
    reachable: usize,
    extra_roots: Vec<u32>,
}

/// What becomes of objects no GC root reaches through strong references (garbage the dump's VM had not
/// collected yet, or objects held by roots the dump does not name).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unreachable {
    /// Out of the tree, as Eclipse MAT leaves them: no retained size, counted apart. The default.
    LeftOut,
    /// Under the super-root, each unreferenced one a root of its own (`--keep-unreachable`).
    Kept,
}

pub struct DominatorTree {
    /// Immediate dominator of each node; [`DominatorTree::ROOT`] for nodes dominated only by the
    /// super-root (GC roots, and objects no root reaches: see [`DominatorTree::is_reachable`]).
    pub idom: Vec<u32>,
    /// Retained size of each node (0 when unreachable).
    pub retained: Vec<u64>,
    /// Children lists (start offsets with n + 2 entries, index n the super-root; items), when kept.
    children: Option<(Vec<u32>, Vec<u32>)>,
    class_retained: Vec<u64>,
    /// Objects and shallow bytes reachable from GC roots through strong references.
    pub reachable_bytes: u64,
    pub reachable: u64,
    /// Shallow bytes of all objects, the unreachable included.
    pub total_bytes: u64,
    /// Shallow bytes of the objects in the tree: the reachable ones, and with [`Unreachable::Kept`] the
    /// rest. Shares of retained sizes are of this.
    pub tree_bytes: u64,
    /// With [`Unreachable::Kept`], objects no GC root reaches, put under the super-root.
    pub unreachable_roots: Vec<u32>,
    gc_reachable: Vec<u64>,
}

impl DominatorTree {
    pub const ROOT: u32 = u32::MAX - 1;
    pub const UNREACHABLE: u32 = u32::MAX;

    pub fn compute(g: &HeapGraph, progress: &dyn Progress) -> Result<DominatorTree, Error> {
        Self::compute_with(g, Unreachable::LeftOut, progress)
    }

    pub fn compute_with(
        g: &HeapGraph,
        unreachable: Unreachable,
        progress: &dyn Progress,
    ) -> Result<DominatorTree, Error> {
        let p = Self::search(g, g.len(), None, unreachable, progress)?;
        Ok(Self::solve(g.len(), p, g, false, progress)?.0)
    }

    /// Like [`DominatorTree::compute`], for when only the tree is wanted, in less memory: the graph's
    /// references are freed once the predecessor lists exist (`refs` is empty afterwards), its ids,
    /// classes and sizes are parked in a temporary file meanwhile, and no children lists are kept
    /// (`children_of` scans).
    pub fn compute_releasing_references(
        g: &mut HeapGraph,
        unreachable: Unreachable,
        progress: &dyn Progress,
    ) -> Result<DominatorTree, Error> {
        let n = g.len();
        let parked = Parked::park(g)?;
        let mut edges = std::mem::take(&mut g.out_edges);
        let p = Self::search(g, n, Some(&mut edges), unreachable, progress)?;
        g.out_start = Vec::new();
        match Self::solve(n, p, &parked, true, progress) {
            Ok((t, spare)) => {
                parked.restore(g, spare)?;
                Ok(t)
            }
            Err(e) => {
                parked.restore(g, Vec::new())?;
                Err(e)
            }
        }
    }

    /// Depth-first search from the super-root, and predecessor lists in preorder space. With `owned`
    /// (the graph's references, taken out of it), the references are renumbered in place to preorder and
    /// freed, so that the node → preorder map is gone before the predecessor lists are allocated.
    fn search(
        g: &HeapGraph,
        n: usize,
        mut owned: Option<&mut Vec<u32>>,
        unreachable: Unreachable,
        progress: &dyn Progress,
    ) -> Result<Search, Error> {
        let out_start = &g.out_start;
        progress.start("dominators", 4);
        // Preorder numbers: 0 is the super-root, node v gets pre[v] in 1..=reached.
        // (Room for m + 1 entries: its memory becomes the predecessor counts in low-memory mode.)
        let mut pre = Vec::with_capacity(n + 2);
        pre.resize(n, NONE);
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
            // With Unreachable::Kept, objects no GC root reaches (garbage not yet collected, or roots the
            // dump does not name) hang under the super-root too: first those nothing points at, then the
            // rest (cycles) in id order. They then also dominate nothing reachable any more: an edge from
            // garbage to a live object makes that object's dominator the super-root.
            if reachable < n && unreachable == Unreachable::Kept {
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
        // With owned references (low memory), the DFS parents wait on disk until the solver needs them.
        let (parent, parked_parent) = if owned.is_some() {
            (Vec::new(), Some(Spilled::park(parent).map_err(|e| Error::Io(format!("temporary file: {e}")))?))
        } else {
            (parent, None)
        };
        let root_pres: Vec<u32> =
            g.roots.iter().map(|r| r.node).chain(extra_roots.iter().copied()).map(|r| pre[r as usize]).collect();
        // Either renumber the (owned) references in place and drop the map now, or map them as we go.
        let mut spare = Vec::new();
        if let Some(edges) = owned.as_deref_mut() {
            edges.par_iter_mut().with_min_len(1 << 16).for_each(|e| *e = pre[*e as usize]);
            spare = std::mem::take(&mut pre);
        }
        let edges: &[u32] = match &owned {
            Some(v) => v,
            None => &g.out_edges,
        };
        let map = |w: u32| if pre.is_empty() { w } else { pre[w as usize] };
        let refs = |v: u32| &edges[out_start[v as usize] as usize..out_start[v as usize + 1] as usize];
        // Predecessors in preorder space, as CSR, counted and filled in parallel. Root edges count as
        // predecessor 0. A list's order depends on the threads, which nothing reads: a semi-dominator
        // is the minimum over the list.
        let counts = atomic_u32s_in(spare, m + 1, 0);
        for &r in &root_pres {
            counts[r as usize + 1].fetch_add(1, Relaxed);
        }
        vertex[1..].par_iter().with_min_len(1 << 12).for_each(|&v| {
            for &w in refs(v) {
                let pw = map(w);
                if pw != NONE {
                    counts[pw as usize + 1].fetch_add(1, Relaxed);
                }
            }
        });
        let mut pred_start = into_plain_u32(counts);
        for i in 1..=m {
            pred_start[i] += pred_start[i - 1];
        }
        // Fill from the end of each list, decrementing its start: no second array of positions.
        let ends = from_plain_u32(pred_start);
        let preds = atomic_u32s(ends[m].load(Relaxed) as usize, 0);
        {
            let put = |w: usize, p: u32| {
                let at = ends[w + 1].fetch_sub(1, Relaxed) - 1;
                preds[at as usize].store(p, Relaxed);
            };
            for &r in &root_pres {
                put(r as usize, 0);
            }
            vertex.par_iter().enumerate().skip(1).with_min_len(1 << 12).for_each(|(pv, &v)| {
                for &w in refs(v) {
                    let pw = map(w);
                    if pw != NONE {
                        put(pw as usize, pv as u32);
                    }
                }
            });
        }
        let mut pred_start = into_plain_u32(ends);
        let preds = into_plain_u32(preds);
        crate::mem_trace("preds");
        // pred_start[w + 1] is now where w's list starts, i.e. pred_start is shifted by one: rotate.
        pred_start.rotate_left(1);
        pred_start[m] = preds.len() as u32;
        drop(pre);
        if let Some(edges) = owned {
            *edges = Vec::new();
        }
        progress.set(2);
        Ok(Search { vertex, parent, parked_parent, pred_start, preds, reachable, extra_roots })
    }

    fn solve(
        n: usize,
        s: Search,
        nodes: &dyn NodeArrays,
        low_memory: bool,
        progress: &dyn Progress,
    ) -> Result<(DominatorTree, Vec<Vec<u32>>), Error> {
        let io = |e: std::io::Error| Error::Io(format!("temporary file: {e}"));
        let Search { vertex, parent, parked_parent, pred_start, preds, reachable, extra_roots } = s;
        let m = vertex.len();
        // In low-memory mode, arrays done with lend their memory to the next ones (memory the kernel need
        // not hand out and zero again): the preorder → node map is not used until the idoms are known, so
        // it is parked and its memory holds the semi-dominators.
        let (mut vertex, parked_vertex, mut semi) = if low_memory {
            let parked = Spilled::copy(&vertex).map_err(io)?;
            let mut semi = vertex;
            semi.par_iter_mut().enumerate().with_min_len(1 << 16).for_each(|(i, x)| *x = i as u32);
            (Vec::new(), Some(parked), semi)
        } else {
            (vertex, None, (0..m as u32).collect())
        };

        // Semi-dominators, in reverse preorder, with eval/link over a path-compressed forest.
        let mut label: Vec<u32> = (0..m as u32).collect();
        // The forest's links are the DFS parents (read back from disk in low-memory mode, where the parent
        // array itself stays there until the idoms need it).
        let mut ancestor = match &parked_parent {
            Some(p) => p.read().map_err(io)?,
            None => parent.clone(),
        };
        let mut path: Vec<u32> = Vec::new();
        for w in (1..m).rev() {
            let mut s = semi[w];
            for &v in &preds[pred_start[w] as usize..pred_start[w + 1] as usize] {
                let u = eval(v, w as u32, &mut ancestor, &mut label, &semi, &mut path);
                if semi[u as usize] < s {
                    s = semi[u as usize];
                }
            }
            semi[w] = s;
        }
        crate::mem_trace("semi");
        let parent = match parked_parent {
            Some(p) => p.read_into(ancestor).map_err(io)?,
            None => {
                drop(ancestor);
                parent
            }
        };
        drop(preds);
        let (mut spare_a, spare_b) = if low_memory { (label, pred_start) } else { (Vec::new(), Vec::new()) };
        // Immediate dominators: walk up the DFS tree from the parent to the first vertex at or above semi.
        let mut idom_pre = parent;
        for w in 1..m {
            let mut d = idom_pre[w];
            while d > semi[w] {
                d = idom_pre[d as usize];
            }
            idom_pre[w] = d;
        }
        crate::mem_trace("idom");
        progress.set(3);
        match parked_vertex {
            Some(p) => vertex = p.read_into(semi).map_err(io)?,
            None => drop(semi),
        }

        // Retained sizes in preorder space: children before parents in reverse preorder.
        let mut ret_pre = vec![0u64; m];
        let mut reachable_bytes = 0u64;
        let mut all_bytes = 0u64;
        nodes.with_shallow(&mut spare_a, &mut |shallow| {
            ret_pre[1..].par_iter_mut().zip(&vertex[1..]).with_min_len(1 << 14).for_each(|(r, &v)| {
                *r = shallow[v as usize] as u64;
            });
            reachable_bytes = ret_pre[1..=reachable].par_iter().sum();
            all_bytes = shallow.par_iter().map(|&s| s as u64).sum();
        })?;
        for w in (1..m).rev() {
            let d = idom_pre[w] as usize;
            ret_pre[d] += ret_pre[w];
        }
        let tree_bytes = ret_pre[0];
        let total_bytes = all_bytes;
        let mut gc_reachable = vec![0u64; n.div_ceil(64)];
        for &v in &vertex[1..=reachable] {
            gc_reachable[v as usize / 64] |= 1 << (v % 64);
        }

        // The dominator tree as children lists in preorder space (the idoms are read back from it).
        crate::mem_trace("retained");
        let (cs, ch) = csr((0..m).skip(1).map(|w| (idom_pre[w] as usize, w as u32)), m, m - 1, spare_b, spare_a);
        let mut spare_c = if low_memory { idom_pre } else { Vec::new() };

        // Retained size per class: the union of what the class's instances retain, each object once even
        // when an instance dominates another of its class. Entering a node adds, leaving removes.
        let mut class_retained = vec![0u64; nodes.class_count()];
        nodes.with_class_of(&mut spare_c, &mut |class_of| {
            let mut active = vec![0u32; class_retained.len()];
            let mut stack: Vec<(u32, u32)> = vec![(0, cs[0])];
            while let Some(top) = stack.last_mut() {
                let (v, pos) = *top;
                if pos < cs[v as usize + 1] {
                    top.1 += 1;
                    let w = ch[pos as usize];
                    let c = class_of[vertex[w as usize] as usize] as usize;
                    if active[c] == 0 {
                        class_retained[c] += ret_pre[w as usize];
                    }
                    active[c] += 1;
                    stack.push((w, cs[w as usize]));
                } else {
                    if v != 0 {
                        active[class_of[vertex[v as usize] as usize] as usize] -= 1;
                    }
                    stack.pop();
                }
            }
        })?;

        crate::mem_trace("class retained");
        // Back to node space, in parallel: `vertex` maps each preorder number to a node of its own.
        let idom = atomic_u32s_in(spare_c, n, Self::UNREACHABLE);
        (0..m).into_par_iter().with_min_len(1 << 12).for_each(|p| {
            let d = if p == 0 { Self::ROOT } else { vertex[p] };
            for &w in &ch[cs[p] as usize..cs[p + 1] as usize] {
                idom[vertex[w as usize] as usize].store(d, Relaxed);
            }
        });
        let idom = into_plain_u32(idom);
        drop(ch);
        drop(cs);
        let retained = atomic_u64s(n, 0);
        (1..m).into_par_iter().with_min_len(1 << 14).for_each(|w| {
            retained[vertex[w] as usize].store(ret_pre[w], Relaxed);
        });
        let retained = into_plain_u64(retained);
        drop(ret_pre);
        // The preorder → node map's memory can take back a parked array.
        let spare = if low_memory { vec![vertex] } else { Vec::new() };

        // Children lists in node space (the super-root's at index n), unless memory is tight: then
        // children_of scans the idoms.
        let children = if low_memory {
            None
        } else {
            Some(csr(
                idom.iter()
                    .enumerate()
                    .filter(|(_, d)| **d != Self::UNREACHABLE)
                    .map(|(v, &d)| (if d == Self::ROOT { n } else { d as usize }, v as u32)),
                n + 1,
                n,
                Vec::new(),
                Vec::new(),
            ))
        };
        progress.finish();
        crate::mem_trace("tree");
        let tree = DominatorTree {
            idom,
            retained,
            children,
            class_retained,
            reachable_bytes,
            reachable: reachable as u64,
            total_bytes,
            tree_bytes,
            unreachable_roots: extra_roots,
            gc_reachable,
        };
        Ok((tree, spare))
    }

    /// Whether a GC root reaches `v` through strong references.
    pub fn is_reachable(&self, v: u32) -> bool {
        self.gc_reachable.get(v as usize / 64).is_some_and(|w| w & (1 << (v % 64)) != 0)
    }

    /// Children of `v` in the dominator tree; `None` for the super-root.
    pub fn children_of(&self, v: Option<u32>) -> Vec<u32> {
        match &self.children {
            Some((start, list)) => {
                let k = v.map_or(self.idom.len(), |v| v as usize);
                list[start[k] as usize..start[k + 1] as usize].to_vec()
            }
            None => {
                let want = v.unwrap_or(Self::ROOT);
                (0..self.idom.len() as u32).filter(|&w| self.idom[w as usize] == want).collect()
            }
        }
    }

    /// Children of `v` (`None`: the super-root) without a copy, when the tree keeps children lists.
    pub fn children_slice(&self, v: Option<u32>) -> Option<&[u32]> {
        let (start, list) = self.children.as_ref()?;
        let k = v.map_or(self.idom.len(), |v| v as usize);
        Some(&list[*start.get(k)? as usize..*start.get(k + 1)? as usize])
    }

    /// How many children `v` has (`None`: the super-root).
    pub fn child_count(&self, v: Option<u32>) -> usize {
        self.children_slice(v).map_or_else(|| self.children_of(v).len(), <[u32]>::len)
    }

    /// Retained size per class index: the union of what the class's instances retain, counting an object
    /// once even when an instance of the same class dominates another.
    pub fn retained_by_class(&self, _g: &HeapGraph) -> Vec<u64> {
        self.class_retained.clone()
    }
}

/// Lists of `(owner, item)` pairs grouped by owner (`0..owners`), as CSR (start offsets, items), each list
/// in the pairs' order. Filled from the end (so that no second array of positions is needed), walking the
/// pairs backwards. The arrays reuse `start` and `list`'s memory when they are big enough.
fn csr(
    pairs: impl DoubleEndedIterator<Item = (usize, u32)> + Clone,
    owners: usize,
    items: usize,
    mut start: Vec<u32>,
    mut list: Vec<u32>,
) -> (Vec<u32>, Vec<u32>) {
    start.clear();
    start.reserve_exact(owners + 1);
    start.resize(owners + 1, 0);
    for (o, _) in pairs.clone() {
        start[o + 1] += 1;
    }
    for i in 1..=owners {
        start[i] += start[i - 1];
    }
    let len = start[owners] as usize;
    list.truncate(len);
    list.reserve_exact(len - list.len());
    list.resize(len, 0);
    debug_assert!(list.len() <= items);
    for (o, item) in pairs.rev() {
        start[o + 1] -= 1;
        list[start[o + 1] as usize] = item;
    }
    start.rotate_left(1);
    start[owners] = list.len() as u32;
    (start, list)
}

/// Per-object arrays the solver reads once it has the tree: in memory, or parked on disk (then read into
/// `spare`'s memory, which keeps them afterwards).
trait NodeArrays {
    fn class_count(&self) -> usize;
    fn with_shallow(&self, spare: &mut Vec<u32>, f: &mut dyn FnMut(&[u32])) -> Result<(), Error>;
    fn with_class_of(&self, spare: &mut Vec<u32>, f: &mut dyn FnMut(&[u32])) -> Result<(), Error>;
}

impl NodeArrays for HeapGraph {
    fn class_count(&self) -> usize {
        self.classes.classes.len()
    }
    fn with_shallow(&self, _: &mut Vec<u32>, f: &mut dyn FnMut(&[u32])) -> Result<(), Error> {
        f(&self.shallow);
        Ok(())
    }
    fn with_class_of(&self, _: &mut Vec<u32>, f: &mut dyn FnMut(&[u32])) -> Result<(), Error> {
        f(&self.class_of);
        Ok(())
    }
}

/// A graph's ids, classes and sizes parked on disk.
struct Parked {
    classes: usize,
    shallow: Spilled,
    class_of: Spilled,
    ids: Option<Spilled>,
    id_bits: Option<Spilled<crate::heap::IdBlock>>,
}

impl Parked {
    fn park(g: &mut HeapGraph) -> Result<Parked, Error> {
        let io = |e: std::io::Error| Error::Io(format!("temporary file: {e}"));
        Ok(Parked {
            classes: g.classes.classes.len(),
            shallow: Spilled::park(std::mem::take(&mut g.shallow)).map_err(io)?,
            class_of: Spilled::park(std::mem::take(&mut g.class_of)).map_err(io)?,
            ids: match g.ids.take_narrow() {
                Some(v) => Some(Spilled::park(v).map_err(io)?),
                None => None,
            },
            id_bits: match g.ids.take_bits() {
                Some(v) => Some(Spilled::park(v).map_err(io)?),
                None => None,
            },
        })
    }

    /// The arrays back, in `spare`'s memory where it is big enough.
    fn restore(self, g: &mut HeapGraph, mut spare: Vec<Vec<u32>>) -> Result<(), Error> {
        let io = |e: std::io::Error| Error::Io(format!("temporary file: {e}"));
        g.shallow = self.shallow.read_into(spare.pop().unwrap_or_default()).map_err(io)?;
        g.class_of = self.class_of.read_into(spare.pop().unwrap_or_default()).map_err(io)?;
        drop(spare);
        if let Some(ids) = self.ids {
            g.ids.put_narrow(ids.read().map_err(io)?);
        }
        if let Some(bits) = self.id_bits {
            g.ids.put_bits(bits.read().map_err(io)?);
        }
        Ok(())
    }
}

impl NodeArrays for Parked {
    fn class_count(&self) -> usize {
        self.classes
    }
    fn with_shallow(&self, spare: &mut Vec<u32>, f: &mut dyn FnMut(&[u32])) -> Result<(), Error> {
        *spare =
            self.shallow.read_into(std::mem::take(spare)).map_err(|e| Error::Io(format!("temporary file: {e}")))?;
        f(spare);
        Ok(())
    }
    fn with_class_of(&self, spare: &mut Vec<u32>, f: &mut dyn FnMut(&[u32])) -> Result<(), Error> {
        *spare =
            self.class_of.read_into(std::mem::take(spare)).map_err(|e| Error::Io(format!("temporary file: {e}")))?;
        f(spare);
        Ok(())
    }
}

/// The vertex with the smallest semi-dominator on the forest path above `v` (path-compressing), while
/// vertex `w` is being processed. `ancestor` starts as the DFS parents; a vertex counts as linked once
/// processed, so no separate parent array is needed while semi-dominators are computed.
fn eval(v: u32, w: u32, ancestor: &mut [u32], label: &mut [u32], semi: &[u32], path: &mut Vec<u32>) -> u32 {
    // Vertices above w (in preorder) are processed and linked to their parents; the others are roots
    // of the forest.
    if v <= w {
        return v;
    }
    // Collect the path up to the vertex whose ancestor is a forest root, then compress top-down.
    path.clear();
    let mut x = v;
    while ancestor[x as usize] > w {
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
