//! Growth object by object: the objects of a later dump that an earlier one does not have, grouped by the
//! object that keeps them (the nearest dominator that is not new), ranked by what they retain.
//!
//! Two ways to tell an old object from a new one:
//! - by identity, when both dumps come from one JVM run and its objects kept their ids (addresses that
//!   did not move, or tags): an object is old if the earlier dump has an object of the same class and id;
//! - by class and path, otherwise: each object is named by the classes on its shortest path from a GC
//!   root (and the root's kind); where the later dump has more objects of one name than the earlier, the
//!   surplus is new.
//!
//! [`Match::Auto`] takes identity only when the ids evidently still name the same objects: at least 90% of
//! the earlier dump's objects are found by id in the later one, 99% of those with the same class, and 98%
//! of those refer to the same ids as before. A collection that moved objects (compaction, a young
//! collection) between the dumps fails this, and class and path are used.

use crate::dominators::DominatorTree;
use crate::heap::{HeapGraph, root_kind_name};
use rustc_hash::{FxHashMap, FxHasher};
use std::collections::VecDeque;
use std::hash::Hasher;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Match {
    Auto,
    Identity,
    Path,
}

/// What is kept of the earlier dump: ids with their class names' hashes, and path names with counts.
pub struct Baseline {
    objects: u64,
    /// (id, class name hash, hash of the ids it refers to), sorted by id.
    ids: Vec<(u64, u64, u64)>,
    paths: FxHashMap<u64, u32>,
}

fn name_hash(s: &str) -> u64 {
    let mut h = FxHasher::default();
    h.write(s.as_bytes());
    h.write_u8(0xff);
    h.finish()
}

fn mix(a: u64, b: u64) -> u64 {
    let mut h = FxHasher::default();
    h.write_u64(a);
    h.write_u64(b);
    h.finish()
}

fn class_hashes(g: &HeapGraph) -> Vec<u64> {
    g.classes.classes.iter().map(|c| name_hash(&c.name)).collect()
}

/// Each object's path name: the hash of its root's kind and the class names on its shortest path from
/// a root (objects no root reaches: their class alone, marked unreachable).
fn path_names(g: &HeapGraph) -> Vec<u64> {
    const UNSET: u64 = 0;
    let ch = class_hashes(g);
    let class_of = |v: u32| ch[g.class_of[v as usize] as usize];
    let mut sig = vec![UNSET; g.len()];
    let mut queue = VecDeque::new();
    for r in &g.roots {
        let v = r.node as usize;
        if v < sig.len() && sig[v] == UNSET {
            sig[v] = mix(name_hash(root_kind_name(r.kind)), class_of(r.node)) | 1;
            queue.push_back(r.node);
        }
    }
    while let Some(v) = queue.pop_front() {
        for &w in g.refs(v) {
            if sig[w as usize] == UNSET {
                sig[w as usize] = mix(sig[v as usize], class_of(w)) | 1;
                queue.push_back(w);
            }
        }
    }
    let unreachable = name_hash("<unreachable>");
    for (v, s) in sig.iter_mut().enumerate() {
        if *s == UNSET {
            *s = mix(unreachable, class_of(v as u32)) | 1;
        }
    }
    sig
}

/// A hash of the ids `v` refers to, in order.
fn refs_hash(g: &HeapGraph, v: u32) -> u64 {
    g.refs(v).iter().fold(0x9e37_79b9, |h, &w| mix(h, g.ids.get(w)))
}

pub fn baseline(g: &HeapGraph) -> Baseline {
    let ch = class_hashes(g);
    let ids =
        (0..g.len() as u32).map(|v| (g.ids.get(v), ch[g.class_of[v as usize] as usize], refs_hash(g, v))).collect();
    let mut paths: FxHashMap<u64, u32> = FxHashMap::default();
    for s in path_names(g) {
        *paths.entry(s).or_default() += 1;
    }
    Baseline { objects: g.len() as u64, ids, paths }
}

/// What keeps a group of new objects.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Holder {
    /// An object of both dumps (or, by path, one the earlier dump has a match for).
    Object(u32),
    /// New objects that are GC roots themselves or are held by several roots.
    Roots,
    /// New objects no GC root reaches.
    Unreachable,
}

#[derive(Debug, Clone)]
pub struct GrowthGroup {
    pub holder: Holder,
    pub new_objects: u64,
    /// Shallow bytes of the new objects.
    pub new_bytes: u64,
    /// What the new objects directly under the holder retain.
    pub retained_bytes: u64,
    /// (class, new objects, shallow bytes), biggest first.
    pub classes: Vec<(String, u64, u64)>,
}

#[derive(Debug, Clone)]
pub struct GrowthReport {
    pub matched_by: Match,
    pub base_objects: u64,
    pub new_objects_total: u64,
    pub objects: u64,
    pub new_bytes_total: u64,
    pub groups: Vec<GrowthGroup>,
}

/// A group's new objects, their bytes, what the topmost of them retain, and (objects, bytes) per class.
type GroupSums = (u64, u64, u64, FxHashMap<u32, (u64, u64)>);

/// Which objects of `g` are new against `base`, as bits.
fn new_bits(base: &Baseline, g: &HeapGraph, by: Match) -> Vec<u64> {
    let n = g.len();
    let mut bits = vec![0u64; n.div_ceil(64)];
    let mut set = |v: usize| bits[v / 64] |= 1 << (v % 64);
    match by {
        Match::Path => {
            let sig = path_names(g);
            let mut order: Vec<u32> = (0..n as u32).collect();
            order.sort_unstable_by_key(|&v| (sig[v as usize], v));
            for run in order.chunk_by(|&a, &b| sig[a as usize] == sig[b as usize]) {
                let old = base.paths.get(&sig[run[0] as usize]).copied().unwrap_or(0) as usize;
                // The surplus is new: the last ones in id order (allocation usually moves up the heap).
                for &v in run.iter().skip(old) {
                    set(v as usize);
                }
            }
        }
        _ => {
            let ch = class_hashes(g);
            for v in 0..n {
                let id = g.ids.get(v as u32);
                let old = base
                    .ids
                    .binary_search_by_key(&id, |e| e.0)
                    .is_ok_and(|i| base.ids[i].1 == ch[g.class_of[v] as usize]);
                if !old {
                    set(v);
                }
            }
        }
    }
    bits
}

/// Whether identity holds between the dumps (see the module's note).
fn identity_holds(base: &Baseline, g: &HeapGraph) -> bool {
    let ch = class_hashes(g);
    let (mut found, mut same, mut same_refs) = (0u64, 0u64, 0u64);
    for &(id, class, refs) in &base.ids {
        if let Some(v) = g.node(id) {
            found += 1;
            if ch[g.class_of[v as usize] as usize] == class {
                same += 1;
                same_refs += u64::from(refs_hash(g, v) == refs);
            }
        }
    }
    found > 0 && found * 10 >= base.objects * 9 && same * 100 >= found * 99 && same_refs * 100 >= same * 98
}

pub fn growth(base: &Baseline, g: &HeapGraph, tree: &DominatorTree, by: Match, top: usize) -> GrowthReport {
    let by = match by {
        Match::Auto if identity_holds(base, g) => Match::Identity,
        Match::Auto => Match::Path,
        m => m,
    };
    let bits = new_bits(base, g, by);
    let is_new = |v: u32| bits[v as usize / 64] & (1 << (v % 64)) != 0;
    // Each new object's topmost new dominator (itself when its dominator is old): memoised up the tree.
    const UNSET: u32 = u32::MAX;
    let n = g.len();
    let mut top_new = vec![UNSET; n];
    let mut chain = Vec::new();
    let mut groups: FxHashMap<Holder, GroupSums> = FxHashMap::default();
    let (mut total, mut total_bytes) = (0u64, 0u64);
    for v in 0..n as u32 {
        if !is_new(v) {
            continue;
        }
        let mut cur = v;
        let top = loop {
            if top_new[cur as usize] != UNSET {
                break top_new[cur as usize];
            }
            chain.push(cur);
            let d = tree.idom[cur as usize];
            if d >= DominatorTree::ROOT || !is_new(d) {
                break cur;
            }
            cur = d;
        };
        for c in chain.drain(..) {
            top_new[c as usize] = top;
        }
        let holder = match tree.idom[top as usize] {
            DominatorTree::ROOT if tree.is_reachable(top) => Holder::Roots,
            DominatorTree::ROOT | DominatorTree::UNREACHABLE => Holder::Unreachable,
            d => Holder::Object(d),
        };
        let size = g.shallow[v as usize] as u64;
        total += 1;
        total_bytes += size;
        let e = groups.entry(holder).or_default();
        e.0 += 1;
        e.1 += size;
        if top == v {
            e.2 += tree.retained[v as usize];
        }
        let c = e.3.entry(g.class_of[v as usize]).or_default();
        c.0 += 1;
        c.1 += size;
    }
    let mut out: Vec<GrowthGroup> = groups
        .into_iter()
        .map(|(holder, (count, bytes, retained, classes))| {
            let mut classes: Vec<(String, u64, u64)> =
                classes.into_iter().map(|(c, (k, b))| (g.classes.classes[c as usize].name.clone(), k, b)).collect();
            classes.sort_by(|a, b| b.2.cmp(&a.2).then(a.0.cmp(&b.0)));
            classes.truncate(5);
            GrowthGroup { holder, new_objects: count, new_bytes: bytes, retained_bytes: retained, classes }
        })
        .collect();
    out.sort_by(|a, b| {
        b.retained_bytes.cmp(&a.retained_bytes).then(b.new_bytes.cmp(&a.new_bytes)).then(a.holder.cmp(&b.holder))
    });
    out.truncate(top);
    GrowthReport {
        matched_by: by,
        base_objects: base.objects,
        new_objects_total: total,
        objects: n as u64,
        new_bytes_total: total_bytes,
        groups: out,
    }
}

/// The way of matching, as reports name it.
pub fn describe_match(m: Match) -> &'static str {
    match m {
        Match::Auto => "auto",
        Match::Identity => "identity",
        Match::Path => "class and path",
    }
}
