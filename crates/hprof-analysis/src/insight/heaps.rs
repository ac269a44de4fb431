//! Android's heaps: HEAP DUMP INFO records name the heap (zygote, app, image) of the objects after them,
//! until the next such record or the end of the segment. HotSpot's dumps have none.

use crate::dump::Dump;
use crate::heap::HeapGraph;
use hprof_format::binary::{HeapRecord, HeapRecords};

/// One heap's objects and shallow bytes.
#[derive(Debug, Clone)]
pub struct HeapShare {
    pub name: String,
    pub objects: u64,
    pub bytes: u64,
}

/// The dump's heaps, in the order first seen; empty when the dump names none.
pub fn heaps(dump: &Dump, g: &HeapGraph) -> Vec<HeapShare> {
    let mut out: Vec<HeapShare> = Vec::new();
    // Only Android's records are counted as "other": without them there is nothing to read.
    let Some(hd) = dump.heap_dump().filter(|_| g.counts.other > 0) else { return out };
    let mut named = false;
    let index = |out: &mut Vec<HeapShare>, name: String| match out.iter().position(|h| h.name == name) {
        Some(i) => i,
        None => {
            out.push(HeapShare { name, objects: 0, bytes: 0 });
            out.len() - 1
        }
    };
    for &(s, e) in &hd.segments {
        // Each segment starts in the default heap.
        let mut current: Option<usize> = None;
        for r in HeapRecords::new(&dump.data()[s..e], s as u64, dump.id_size()) {
            let Ok((_, r)) = r else { break };
            let id = match r {
                HeapRecord::HeapDumpInfo { heap_id, name_id } => {
                    named = true;
                    let name = dump.string(name_id).unwrap_or_else(|| format!("heap {heap_id}"));
                    current = Some(index(&mut out, name));
                    continue;
                }
                HeapRecord::ClassDump(cd) => cd.class_id,
                HeapRecord::InstanceDump { id, .. }
                | HeapRecord::ObjectArrayDump { id, .. }
                | HeapRecord::PrimitiveArrayDump { id, .. }
                | HeapRecord::PrimitiveArrayNoData { id, .. } => id,
                _ => continue,
            };
            let Some(v) = g.node(id) else { continue };
            let i = match current {
                Some(i) => i,
                None => *current.insert(index(&mut out, "default".into())),
            };
            let h = &mut out[i];
            h.objects += 1;
            h.bytes += g.shallow[v as usize] as u64;
        }
        dump.source.release(s, e);
    }
    if !named {
        out.clear();
    }
    out
}
