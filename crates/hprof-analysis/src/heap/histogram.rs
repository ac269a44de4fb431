//! The class histogram, in one streaming pass without an object index.

use super::chunks::{Chunk, chunks, heap_dump_of, records};
use super::class_table::ClassTable;
use super::layout_choice::{evidence_in_address_order, settle_layout};
use super::primitives::{PRIMITIVES, type_slot};
use super::record_counts::SubRecordCounts;
use crate::dump::Dump;
use crate::layout::{
    ARRAY_SLOTS, ArraySizer, EvidenceCollector, Layout, LayoutChoice, LayoutEvidence, LayoutKind, Shape, alignment_of,
};
use crate::{Error, Progress};
use hprof_format::binary::{ClassDump, FormatError, HeapRecord};
use hprof_format::tags::BasicType;
use rayon::prelude::*;
use rustc_hash::FxHashMap;

/// One row of a class histogram.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HistoRow {
    pub class_name: String,
    pub class_id: u64,
    pub instances: u64,
    pub shallow_bytes: u64,
}

#[derive(Debug, Clone)]
pub struct Histogram {
    pub rows: Vec<HistoRow>,
    pub layout: Layout,
    /// How the layout was chosen, and how sure.
    pub layout_choice: LayoutChoice,
    pub counts: SubRecordCounts,
    pub damage: Option<FormatError>,
}

impl Histogram {
    pub fn total_instances(&self) -> u64 {
        self.rows.iter().map(|r| r.instances).sum()
    }

    pub fn total_bytes(&self) -> u64 {
        self.rows.iter().map(|r| r.shallow_bytes).sum()
    }
}

/// Count, then bytes in each slot of the array's kind ([`ArraySizer`]).
pub(super) type ArrayTally = [u64; 1 + ARRAY_SLOTS];

#[derive(Default)]
pub(super) struct HistoPart {
    classes: Vec<ClassDump>,
    instances: FxHashMap<u64, u64>,
    obj_arrays: FxHashMap<u64, ArrayTally>,
    prim_arrays: [ArrayTally; 12],
    counts: SubRecordCounts,
    evidence: LayoutEvidence,
    damage: Option<FormatError>,
}

pub(super) fn tally(t: &mut ArrayTally, sizes: &[u64; ARRAY_SLOTS]) {
    t[0] += 1;
    for (b, s) in t[1..].iter_mut().zip(sizes) {
        *b += s;
    }
}

pub(super) fn histo_chunk(dump: &Dump, c: &Chunk) -> HistoPart {
    let idn = dump.id_size();
    let mut ev = EvidenceCollector::aligned(idn, alignment_of(dump.layout_note.as_ref()));
    let mut p = HistoPart::default();
    for r in records(dump, c) {
        let (_, r) = match r {
            Ok(r) => r,
            Err(e) => {
                p.damage = Some(e);
                break;
            }
        };
        p.counts.add(&r);
        match r {
            HeapRecord::ClassDump(cd) => {
                if ev.wants_more() {
                    ev.see_shape(cd.class_id, Shape::Other);
                }
                p.classes.push(*cd);
            }
            HeapRecord::InstanceDump { id, class_id, .. } => {
                if ev.wants_more() {
                    ev.see_shape(id, Shape::Instance(class_id));
                }
                *p.instances.entry(class_id).or_default() += 1
            }
            HeapRecord::ObjectArrayDump { id, class_id, .. } => {
                let shape = Shape::of(&r);
                let sizes = ev.sizer().slot_sizes(shape, idn);
                ev.see_array(id, shape, &sizes);
                tally(p.obj_arrays.entry(class_id).or_default(), &sizes)
            }
            HeapRecord::PrimitiveArrayDump { id, element_type, .. }
            | HeapRecord::PrimitiveArrayNoData { id, element_type, .. } => {
                let shape = Shape::of(&r);
                let sizes = ev.sizer().slot_sizes(shape, idn);
                ev.see_array(id, shape, &sizes);
                tally(&mut p.prim_arrays[type_slot(element_type)], &sizes)
            }
            _ => {}
        }
    }
    p.evidence = ev.evidence;
    dump.source.release(c.start, c.end);
    p
}

/// The class histogram of the dump's last heap dump, from one parallel streaming pass.
pub fn histogram(dump: &Dump, progress: &dyn Progress) -> Result<Histogram, Error> {
    histogram_as(dump, None, progress)
}

/// [`histogram`] under a layout the user gave (`Some`), or the detected one.
pub fn histogram_as(dump: &Dump, forced: Option<LayoutKind>, progress: &dyn Progress) -> Result<Histogram, Error> {
    let hd = heap_dump_of(dump)?;
    progress.start("histogram", hd.bytes());
    let (chunks, walk_damage) = chunks(dump, hd);
    let parts: Vec<HistoPart> = chunks
        .par_iter()
        .map(|c| {
            let p = histo_chunk(dump, c);
            progress.inc((c.end - c.start) as u64);
            p
        })
        .collect();
    progress.finish();
    let mut total = HistoPart::default();
    let mut damage = None;
    for p in parts {
        total.classes.extend(p.classes);
        for (k, v) in p.instances {
            *total.instances.entry(k).or_default() += v;
        }
        for (k, v) in p.obj_arrays {
            let e = total.obj_arrays.entry(k).or_default();
            for i in 0..e.len() {
                e[i] += v[i];
            }
        }
        for t in 0..12 {
            for i in 0..total.prim_arrays[t].len() {
                total.prim_arrays[t][i] += p.prim_arrays[t][i];
            }
        }
        total.counts.merge(&p.counts);
        total.evidence.merge(p.evidence);
        if damage.is_none() {
            damage = p.damage;
        }
    }
    let damage = damage.or(walk_damage);
    let evidence =
        evidence_in_address_order(dump, &chunks, std::mem::take(&mut total.evidence), total.counts.objects());
    let (choice, sizes, pick) = settle_layout(dump, &total.classes, &evidence, forced);
    let layout = choice.layout;
    let sizer = ArraySizer::new(&Layout::candidates_aligned(dump.id_size(), alignment_of(dump.layout_note.as_ref())));
    let slot = |ty: Option<BasicType>| 1 + sizer.slot(ty, dump.id_size(), pick);
    let table = ClassTable::build_sized(dump, std::mem::take(&mut total.classes), layout, &sizes);
    let mut rows: FxHashMap<u32, HistoRow> = FxHashMap::default();
    let mut add = |idx: u32, n: u64, bytes: u64| {
        let c = &table.classes[idx as usize];
        let row = rows.entry(idx).or_insert_with(|| HistoRow {
            class_name: c.name.clone(),
            class_id: c.id,
            instances: 0,
            shallow_bytes: 0,
        });
        row.instances += n;
        row.shallow_bytes += bytes;
    };
    for (class_id, n) in &total.instances {
        let idx = table.index_of(*class_id);
        add(idx, *n, n * table.classes[idx as usize].instance_size);
    }
    for (class_id, v) in &total.obj_arrays {
        add(table.index_of(*class_id), v[0], v[slot(None)]);
    }
    for t in PRIMITIVES {
        let v = total.prim_arrays[type_slot(t)];
        if v[0] > 0 {
            add(table.primitive_array(t), v[0], v[slot(Some(t))]);
        }
    }
    for c in &table.classes {
        if c.id != 0 {
            add(table.class_class, 1, c.class_object_size);
        }
    }
    let mut rows: Vec<HistoRow> = rows.into_values().collect();
    rows.sort_by(|a, b| b.shallow_bytes.cmp(&a.shallow_bytes).then_with(|| a.class_name.cmp(&b.class_name)));
    dump.source.check_intact()?;
    Ok(Histogram { rows, layout, layout_choice: choice, counts: total.counts, damage })
}
