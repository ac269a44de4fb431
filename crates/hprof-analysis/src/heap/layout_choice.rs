//! Settling the object layout from evidence gathered while reading the records.

use super::chunks::{Chunk, records};
use crate::class_sizes::{ClassShapes, ClassSizes};
use crate::dump::Dump;
use crate::layout::{EvidenceCollector, Layout, LayoutChoice, LayoutEvidence, LayoutKind, Shape, alignment_of, choose};
use hprof_format::binary::ClassDump;
use rayon::prelude::*;

/// How many objects, sorted by address, vote when the file is out of address order.
pub(super) const SORTED_SAMPLE: u64 = 1 << 20;

/// When the file does not list objects in address order, evidence from the objects of an address window
/// (about a million, the lowest addresses) sorted by address: one more pass over the records.
pub(super) fn evidence_in_address_order(
    dump: &Dump,
    chunks: &[Chunk],
    ev: LayoutEvidence,
    objects: u64,
) -> LayoutEvidence {
    if !ev.out_of_address_order() {
        return ev;
    }
    // The evidence saw a sample of each chunk; the window is sized on all objects.
    let (lo, hi) = LayoutEvidence { objects, ..ev.clone() }.window(SORTED_SAMPLE);
    let mut objects: Vec<(u64, Shape)> = chunks
        .par_iter()
        .flat_map_iter(|c| {
            let mut v = Vec::new();
            for (_, r) in records(dump, c).map_while(Result::ok) {
                if let Some(id) = r.object_id().filter(|id| !r.is_root() && (lo..=hi).contains(id)) {
                    v.push((id, Shape::of(&r)));
                }
            }
            dump.source.release(c.start, c.end);
            v
        })
        .collect();
    objects.par_sort_unstable_by_key(|o| o.0);
    let mut sorted = EvidenceCollector::aligned(dump.id_size(), alignment_of(dump.layout_note.as_ref())).unlimited();
    for (id, shape) in objects {
        sorted.see_shape(id, shape);
    }
    let mut out = sorted.evidence;
    // Addresses and counts stay those of the whole dump.
    out.highest_id = ev.highest_id;
    out.lowest_id = ev.lowest_id;
    out.objects = ev.objects;
    out.above_compressed_oops = ev.above_compressed_oops;
    out
}

/// Chooses the layout from the evidence and sizes every class under it; returns the index of the chosen
/// candidate too.
pub(super) fn settle_layout(
    dump: &Dump,
    classes: &[ClassDump],
    evidence: &LayoutEvidence,
    forced: Option<LayoutKind>,
) -> (LayoutChoice, ClassSizes, usize) {
    let candidates = Layout::candidates_aligned(dump.id_size(), alignment_of(dump.layout_note.as_ref()));
    let shapes = ClassShapes::new(dump, classes);
    let mut sizes: Vec<ClassSizes> = candidates.iter().map(|l| shapes.sizes(l)).collect();
    let choice = choose(dump.id_size(), evidence, forced, dump.layout_note.as_ref(), &|l, class_id| {
        let i = candidates.iter().position(|c| c == l)?;
        sizes[i].instance.get(&class_id).copied()
    });
    let i = candidates.iter().position(|c| *c == choice.layout).unwrap_or(0);
    (choice, sizes.swap_remove(i), i)
}
