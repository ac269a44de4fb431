//! Building the object graph: two parallel passes over the chunks (ids first, then everything else).

use super::chunks::{chunks, heap_dump_of};
use super::class_table::ClassTable;
use super::graph::HeapGraph;
use super::indexing::{Pass1, pass1_chunk};
use super::layout_choice::{evidence_in_address_order, settle_layout};
use super::object_ids::ObjectIds;
use super::object_pass::{ObjectArrays, read_objects};
use super::record_counts::SubRecordCounts;
use super::references::GraphCtx;
use super::roots::Root;
use crate::dump::Dump;
use crate::layout::{LayoutEvidence, LayoutKind};
use crate::{Error, Progress};
use rayon::prelude::*;

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
        crate::mem_trace("chunks");
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
        if n >= u32::MAX as usize {
            return Err(Error::Missing(format!("{n} objects: more than this analyser's 4 billion")));
        }
        let mut id_runs = Vec::with_capacity(parts.len());
        let mut classes = Vec::new();
        let mut raw_roots = Vec::new();
        let mut evidence = LayoutEvidence::default();
        let mut counts = SubRecordCounts::default();
        let mut damage = None;
        for p in parts {
            id_runs.push(p.ids);
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
        let ids = ObjectIds::from_chunks(id_runs);
        let n = ids.len();
        crate::mem_trace("ids");
        let evidence = evidence_in_address_order(dump, &chunks, evidence, counts.objects());
        let (layout_choice, sizes, _) = settle_layout(dump, &classes, &evidence, forced);
        let layout = layout_choice.layout;
        let table = ClassTable::build_sized(dump, classes, layout, &sizes);
        drop(sizes);

        // One more pass: each object's class, size and references (see `object_pass`).
        crate::mem_trace("classes");
        let mut is_root = vec![0u64; n.div_ceil(64)];
        for &(id, _, _) in &raw_roots {
            if let Some(v) = ids.find(id) {
                is_root[v as usize / 64] |= 1 << (v % 64);
            }
        }
        let ctx = GraphCtx { ids: &ids, is_root: &is_root, classes: &table, layout };
        let ObjectArrays { class_of, shallow, offsets, out_start, out_edges, mut dangling } =
            read_objects(dump, &chunks, &ctx, keep_offsets, progress)?;

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
