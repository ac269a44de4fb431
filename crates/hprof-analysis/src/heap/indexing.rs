//! The graph's first pass: every object's id, the class dumps, the GC roots and the layout evidence.

use super::chunks::{Chunk, records};
use super::record_counts::SubRecordCounts;
use super::roots::hprof_kind;
use crate::dump::Dump;
use crate::layout::{EvidenceCollector, LayoutEvidence, alignment_of};
use hprof_format::binary::{ClassDump, FormatError, HeapRecord};

#[derive(Default)]
pub(super) struct Pass1 {
    pub(super) ids: Vec<u64>,
    pub(super) classes: Vec<ClassDump>,
    pub(super) roots: Vec<(u64, u8, u32)>,
    pub(super) evidence: LayoutEvidence,
    pub(super) counts: SubRecordCounts,
    pub(super) damage: Option<FormatError>,
}

pub(super) fn pass1_chunk(dump: &Dump, c: &Chunk) -> Pass1 {
    use HeapRecord::*;
    let mut ev = EvidenceCollector::aligned(dump.id_size(), alignment_of(dump.layout_note.as_ref()));
    let mut p = Pass1 { ids: Vec::with_capacity((c.end - c.start) / 48), ..Default::default() };
    for r in records(dump, c) {
        let (_, r) = match r {
            Ok(r) => r,
            Err(e) => {
                p.damage = Some(e);
                break;
            }
        };
        p.counts.add(&r);
        let oid = r.object_id();
        ev.see(&r);
        let kind = hprof_kind(&r);
        match r {
            ClassDump(cd) => {
                p.ids.push(cd.class_id);
                p.classes.push(*cd);
            }
            InstanceDump { id, .. }
            | ObjectArrayDump { id, .. }
            | PrimitiveArrayDump { id, .. }
            | PrimitiveArrayNoData { id, .. } => p.ids.push(id),
            RootJniLocal { id, thread_serial, .. }
            | RootJavaFrame { id, thread_serial, .. }
            | RootNativeStack { id, thread_serial }
            | RootThreadBlock { id, thread_serial }
            | RootThreadObject { id, thread_serial, .. }
            | RootJniMonitor { id, thread_serial, .. } => p.roots.push((id, kind, thread_serial)),
            ref r if r.is_root() => {
                if let Some(id) = oid {
                    p.roots.push((id, kind, 0));
                }
            }
            _ => {}
        }
    }
    p.evidence = ev.evidence;
    dump.source.release(c.start, c.end);
    p
}
