//! Building the object graph: three parallel passes over the chunks, writing straight into the final arrays.

use super::chunks::{chunks, heap_dump_of};
use super::class_table::ClassTable;
use super::graph::HeapGraph;
use super::indexing::{Pass1, pass1_chunk};
use super::layout_choice::{evidence_in_address_order, settle_layout};
use super::object_ids::ObjectIds;
use super::record_counts::SubRecordCounts;
use super::references::{GraphCtx, walk_objects};
use super::roots::Root;
use crate::atomic_arrays::{atomic_u32s, into_plain_u32, into_plain_u64};
use crate::dump::Dump;
use crate::layout::{LayoutEvidence, LayoutKind};
use crate::{Error, Progress};
use rayon::prelude::*;
use std::sync::atomic::AtomicU64;
use std::sync::atomic::Ordering::Relaxed;

impl HeapGraph {
    /// Builds the graph of the dump's last heap dump. `keep_offsets` keeps each object's file offset (for
    /// field names on paths); dominators alone do not need it.
    pub fn build(dump: &Dump, keep_offsets: bool, progress: &dyn Progress) -> Result<HeapGraph, Error> {
        HeapGraph::build_as(dump, keep_offsets, None, progress)
    }

    /// [`HeapGraph::build`] under a layout the user gave (`Some`), or the detected one.
    pub fn build_as(
        dump: &Dump,
        keep_offsets: bool,
        forced: Option<LayoutKind>,
        progress: &dyn Progress,
    ) -> Result<HeapGraph, Error> {
        crate::mem_trace("graph");
        let hd = heap_dump_of(dump)?;
        let (chunks, walk_damage) = chunks(dump, hd);
        let total_bytes: u64 = chunks.iter().map(|c| (c.end - c.start) as u64).sum();

        progress.start("indexing objects", total_bytes);
        let parts: Vec<Pass1> = chunks
            .par_iter()
            .map(|c| {
                let p = pass1_chunk(dump, c);
                progress.inc((c.end - c.start) as u64);
                p
            })
            .collect();
        progress.finish();
        let n: usize = parts.iter().map(|p| p.ids.len()).sum();
        let mut ids = Vec::with_capacity(n);
        let mut classes = Vec::new();
        let mut raw_roots = Vec::new();
        let mut evidence = LayoutEvidence::default();
        let mut counts = SubRecordCounts::default();
        let mut damage = None;
        for p in parts {
            ids.extend_from_slice(&p.ids);
            drop(p.ids);
            classes.extend(p.classes);
            raw_roots.extend(p.roots);
            evidence.merge(p.evidence);
            counts.merge(&p.counts);
            if damage.is_none() {
                damage = p.damage;
            }
        }
        let damage = damage.or(walk_damage);
        crate::mem_trace("pass 1 done");
        // Stable and adaptive: files list objects mostly in address order, in long sorted runs.
        ids.par_sort();
        ids.dedup();
        ids.shrink_to_fit();
        if ids.len() >= u32::MAX as usize {
            return Err(Error::Missing(format!("{} objects: more than this analyser's 4 billion", ids.len())));
        }
        let n = ids.len();
        let ids = ObjectIds::new(ids);
        crate::mem_trace("ids");
        let evidence = evidence_in_address_order(dump, &chunks, evidence, counts.objects());
        let (layout_choice, sizes, _) = settle_layout(dump, &classes, &evidence, forced);
        let layout = layout_choice.layout;
        let table = ClassTable::build_sized(dump, classes, layout, &sizes);
        drop(sizes);

        // Two more passes, writing straight into the final arrays (no per-chunk buffers): the first sets
        // each node's class, size and reference count; the second, after the prefix sum, its references.
        // A duplicated id (hostile files) is claimed by one record; the other is ignored.
        crate::mem_trace("classes");
        progress.start("reading references", total_bytes * 2);
        let mut is_root = vec![0u64; n.div_ceil(64)];
        for &(id, _, _) in &raw_roots {
            if let Some(v) = ids.find(id) {
                is_root[v as usize / 64] |= 1 << (v % 64);
            }
        }
        let count = GraphCtx { ids: &ids, is_root: &is_root, classes: &table, layout, resolve: false };
        let ctx = GraphCtx { resolve: true, ..count };
        const UNSET: u32 = u32::MAX;
        const UNUSED: u32 = u32::MAX;
        let class_of = atomic_u32s(n, UNSET);
        let shallow = atomic_u32s(n, 0);
        let degree = atomic_u32s(n + 1, 0);
        let offsets: Option<Vec<AtomicU64>> = keep_offsets.then(|| (0..n).map(|_| AtomicU64::new(0)).collect());
        chunks.par_iter().for_each(|c| {
            walk_objects(dump, c, &count, |at, node, class, size, edges| {
                let v = node as usize;
                if class_of[v].compare_exchange(UNSET, class, Relaxed, Relaxed).is_ok() {
                    shallow[v].store(size.min(u32::MAX as u64) as u32, Relaxed);
                    degree[v].store(edges.len() as u32, Relaxed);
                    if let Some(o) = &offsets {
                        o[v].store(at, Relaxed);
                    }
                }
            });
            progress.inc((c.end - c.start) as u64);
        });
        let mut class_of = into_plain_u32(class_of);
        for c in class_of.iter_mut().filter(|c| **c == UNSET) {
            *c = table.unknown_class;
        }
        let shallow = into_plain_u32(shallow);
        let offsets = offsets.map(into_plain_u64);
        // Degrees become start offsets in place.
        let mut out_start = into_plain_u32(degree);
        let mut sum = 0u64;
        for d in out_start.iter_mut() {
            let k = *d as u64;
            *d = sum.min(u32::MAX as u64) as u32;
            sum += k;
        }
        if sum >= u32::MAX as u64 {
            return Err(Error::Missing(format!("{sum} references: more than this analyser's 4 billion")));
        }
        crate::mem_trace("pass 2a");
        let out_edges = atomic_u32s(sum as usize, 0);
        let written: Vec<AtomicU64> = (0..n.div_ceil(64)).map(|_| AtomicU64::new(0)).collect();
        let mut dangling: u64 = chunks
            .par_iter()
            .map(|c| {
                let d = walk_objects(dump, c, &ctx, |_, node, _, _, edges| {
                    let v = node as usize;
                    let bit = 1u64 << (v % 64);
                    if written[v / 64].fetch_or(bit, Relaxed) & bit != 0 {
                        return;
                    }
                    let (s, e) = (out_start[v] as usize, out_start[v + 1] as usize);
                    // The first pass counted at least these references (the same record's, or with a
                    // duplicated id another's): the rest of the room is marked unused.
                    for (i, slot) in out_edges[s..e].iter().enumerate() {
                        slot.store(edges.get(i).copied().unwrap_or(UNUSED), Relaxed);
                    }
                });
                progress.inc((c.end - c.start) as u64);
                d
            })
            .sum();
        progress.finish();
        drop(written);
        let mut out_edges = into_plain_u32(out_edges);
        crate::mem_trace("pass 2b walked");
        squeeze_out_unused(&mut out_start, &mut out_edges);
        crate::mem_trace("pass 2b");

        let mut roots = Vec::with_capacity(raw_roots.len());
        for (id, kind, thread_serial) in raw_roots {
            match ids.find(id) {
                Some(node) => roots.push(Root { node, kind, thread_serial }),
                None => dangling += 1,
            }
        }
        dump.source.check_intact()?;
        Ok(HeapGraph {
            layout,
            layout_choice,
            classes: table,
            ids,
            class_of,
            shallow,
            out_start,
            out_edges,
            roots,
            offsets,
            dangling,
            counts,
            damage,
        })
    }
}

/// Room left unused in the references (dangling ones, those to roots, nulls counted on a duplicated id):
/// moves each list down over it, in place, and gives the memory back.
fn squeeze_out_unused(out_start: &mut [u32], out_edges: &mut Vec<u32>) {
    let n = out_start.len() - 1;
    let mut to = 0usize;
    for v in 0..n {
        let (s, e) = (out_start[v] as usize, out_start[v + 1] as usize);
        out_start[v] = to as u32;
        for i in s..e {
            let w = out_edges[i];
            if w != u32::MAX {
                out_edges[to] = w;
                to += 1;
            }
        }
    }
    out_start[n] = to as u32;
    out_edges.truncate(to);
    out_edges.shrink_to_fit();
}
