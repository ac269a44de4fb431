//! The references each object holds, read from its record (the graph's second and third passes).

use super::chunks::{Chunk, records};
use super::class_table::ClassTable;
use super::object_ids::ObjectIds;
use crate::dump::Dump;
use crate::layout::Layout;
use hprof_format::binary::heap::ids as array_ids;
use hprof_format::binary::{HeapRecord, Value};

/// Reads a reference at `off` in an instance's field values.
pub(super) fn read_id(values: &[u8], off: usize, idn: usize) -> Option<u64> {
    let b = values.get(off..off + idn)?;
    Some(if idn == 4 { u32::from_be_bytes(b.try_into().ok()?) as u64 } else { u64::from_be_bytes(b.try_into().ok()?) })
}

pub(super) struct GraphCtx<'a> {
    pub(super) ids: &'a ObjectIds,
    /// GC root nodes, as bits: references to them are left out (see [`HeapGraph`](super::graph::HeapGraph)).
    pub(super) is_root: &'a [u64],
    pub(super) classes: &'a ClassTable,
    pub(super) layout: Layout,
}

/// Walks the objects of a chunk: for each, its record offset, node, class index, shallow size and the
/// nodes it references (ids not in the dump are counted as dangling).
pub(super) fn walk_objects(
    dump: &Dump,
    c: &Chunk,
    g: &GraphCtx<'_>,
    mut f: impl FnMut(u64, u32, u32, u64, &[u32]),
) -> u64 {
    use HeapRecord::*;
    let idn = dump.id_size() as usize;
    let mut edges: Vec<u32> = Vec::new();
    let mut dangling = 0u64;
    let mut push = |edges: &mut Vec<u32>, id: u64| {
        if id == 0 {
            return;
        }
        match g.ids.find(id) {
            Some(n) if g.is_root[n as usize / 64] & (1 << (n % 64)) != 0 => {}
            Some(n) => edges.push(n),
            None => dangling += 1,
        }
    };
    // Files list objects mostly in address order, i.e. node order: try the node after the last first.
    let mut next = 0u32;
    for r in records(dump, c) {
        let Ok((at, r)) = r else { break };
        edges.clear();
        let (id, class, size) = match r {
            ClassDump(cd) => {
                let info = g.classes.get(cd.class_id);
                for id in [cd.super_id, cd.loader_id, cd.signers_id, cd.protection_domain_id] {
                    push(&mut edges, id);
                }
                for &a in info.map_or(&[][..], |i| &i.array_class_ids[..]) {
                    push(&mut edges, a);
                }
                for s in &cd.statics {
                    if let Value::Object(id) = s.value {
                        push(&mut edges, id);
                    }
                }
                for (_, v) in &cd.constant_pool {
                    if let Value::Object(id) = v {
                        push(&mut edges, *id);
                    }
                }
                (cd.class_id, g.classes.class_class, info.map_or(0, |i| i.class_object_size))
            }
            InstanceDump { id, class_id, values, .. } => {
                let ci = g.classes.index_of(class_id);
                let info = &g.classes.classes[ci as usize];
                push(&mut edges, class_id);
                for (k, base) in g.classes.field_blocks(ci, values.len()) {
                    for &off in &k.own_strong_offsets {
                        if let Some(r) = read_id(values, base + off as usize, idn) {
                            push(&mut edges, r);
                        }
                    }
                }
                let size = if ci == g.classes.unknown_class {
                    g.layout.instance_size(values.len() as u64, 0)
                } else {
                    info.instance_size
                };
                (id, ci, size)
            }
            ObjectArrayDump { id, length, class_id, elements, .. } => {
                push(&mut edges, class_id);
                for e in array_ids(elements, idn as u32) {
                    push(&mut edges, e);
                }
                (id, g.classes.index_of(class_id), g.layout.object_array_size(length as u64))
            }
            PrimitiveArrayDump { id, length, element_type, .. }
            | PrimitiveArrayNoData { id, length, element_type, .. } => (
                id,
                g.classes.primitive_array(element_type),
                g.layout.primitive_array_size(element_type, length as u64),
            ),
            _ => continue,
        };
        let node = g.ids.find_near(next, id);
        if let Some(node) = node {
            next = node.wrapping_add(1);
            f(at, node, class, size, &edges);
        }
    }
    dump.source.release(c.start, c.end);
    dangling
}
