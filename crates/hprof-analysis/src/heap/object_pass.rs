//! The graph's second pass: each object's class, size and references from one parse of its record.
//!
//! Each chunk keeps the references it read in a buffer of its own, in file order, with the runs of
//! consecutive nodes they belong to. Once every chunk is read, the per-node counts give the final
//! layout (a prefix sum), and each chunk's buffer is copied into place and freed: files list objects in
//! long runs of address order, i.e. node order, so a run is one copy, and the references are held about
//! once at any time.

use super::chunks::Chunk;
use super::references::{GraphCtx, walk_objects};
use crate::atomic_arrays::{atomic_u32s, from_plain_u32, into_plain_u32, into_plain_u64};
use crate::dump::Dump;
use crate::{Error, Progress};
use rayon::prelude::*;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::atomic::{AtomicU32, AtomicU64};

/// Per node: class index, shallow size, file offset (when asked for), and the references as CSR.
pub(super) struct ObjectArrays {
    pub(super) class_of: Vec<u32>,
    pub(super) shallow: Vec<u32>,
    pub(super) offsets: Option<Vec<u64>>,
    pub(super) out_start: Vec<u32>,
    pub(super) out_edges: Vec<u32>,
    pub(super) dangling: u64,
}

/// What one chunk read: its objects' references in file order, and whose they are.
struct ChunkEdges {
    edges: Vec<u32>,
    /// Runs of consecutive nodes `(first, count)` in file order; their references follow one another
    /// in `edges`. Records of an id another record already claimed (hostile files) are left out.
    runs: Vec<(u32, u32)>,
    dangling: u64,
}

/// Marks a node whose class no record gave.
const UNSET: u32 = u32::MAX;

pub(super) fn read_objects(
    dump: &Dump,
    chunks: &[Chunk],
    ctx: &GraphCtx<'_>,
    keep_offsets: bool,
    progress: &dyn Progress,
) -> Result<ObjectArrays, Error> {
    let n = ctx.ids.len();
    let total_bytes: u64 = chunks.iter().map(|c| (c.end - c.start) as u64).sum();
    progress.start("reading references", total_bytes);
    let class_of = atomic_u32s(n, UNSET);
    let shallow = atomic_u32s(n, 0);
    let degree = atomic_u32s(n + 1, 0);
    let offsets: Option<Vec<AtomicU64>> = keep_offsets.then(|| (0..n).map(|_| AtomicU64::new(0)).collect());
    let idn = dump.id_size().max(1) as usize;
    let parts: Vec<ChunkEdges> = chunks
        .par_iter()
        .map(|c| {
            let mut out =
                ChunkEdges { edges: Vec::with_capacity((c.end - c.start) / (4 * idn)), runs: Vec::new(), dangling: 0 };
            out.dangling = walk_objects(dump, c, ctx, |at, node, class, size, edges| {
                let v = node as usize;
                // A duplicated id (hostile files) is claimed by one record; the other is ignored.
                if class_of[v].compare_exchange(UNSET, class, Relaxed, Relaxed).is_err() {
                    return;
                }
                shallow[v].store(size.min(u32::MAX as u64) as u32, Relaxed);
                degree[v].store(edges.len() as u32, Relaxed);
                if let Some(o) = &offsets {
                    o[v].store(at, Relaxed);
                }
                out.edges.extend_from_slice(edges);
                match out.runs.last_mut() {
                    Some((first, count)) if *first + *count == node => *count += 1,
                    _ => out.runs.push((node, 1)),
                }
            });
            out.edges.shrink_to_fit();
            progress.inc((c.end - c.start) as u64);
            out
        })
        .collect();
    progress.finish();
    crate::mem_trace("objects read");

    let mut class_of = into_plain_u32(class_of);
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
    let dangling = parts.iter().map(|p| p.dangling).sum();
    // Zeroed memory is mapped lazily: pages become resident as the chunks are copied in (and theirs freed).
    let out_edges = from_plain_u32(vec![0u32; sum as usize]);
    parts.into_par_iter().for_each(|p| place(p, &out_start, &out_edges));
    let out_edges = into_plain_u32(out_edges);
    // The chunks' buffers were small enough to come from the allocator's arenas, which keep freed memory:
    // give it back.
    // SAFETY: malloc_trim only returns free memory of the C allocator's arenas to the system.
    unsafe { libc::malloc_trim(0) };
    for c in class_of.iter_mut().filter(|c| **c == UNSET) {
        *c = ctx.classes.unknown_class;
    }
    crate::mem_trace("references placed");
    Ok(ObjectArrays { class_of, shallow, offsets, out_start, out_edges, dangling })
}

/// Copies one chunk's references to where their nodes' lists start (each node was claimed by one
/// record, so no two chunks write the same place), then frees the chunk's buffer.
fn place(p: ChunkEdges, out_start: &[u32], out_edges: &[AtomicU32]) {
    let mut from = 0usize;
    for &(first, count) in &p.runs {
        let (s, e) = (out_start[first as usize] as usize, out_start[(first + count) as usize] as usize);
        for (slot, &w) in out_edges[s..e].iter().zip(&p.edges[from..from + (e - s)]) {
            slot.store(w, Relaxed);
        }
        from += e - s;
    }
}
