//! The heap dump's sub-records, read in parallel. Segments are cut into chunks of a few megabytes at
//! sub-record boundaries (a 500 MB single-segment dump still spreads over every core), and each chunk is
//! parsed on its own. Pages of the mapping are released once a chunk is done, so the resident set stays
//! near what the results need, not the file's size.

use crate::class_sizes::{ClassShapes, ClassSizes};
use crate::dump::{Dump, HeapDumpSegments};
use crate::layout::{
    ARRAY_SLOTS, ArraySizer, EvidenceCollector, Layout, LayoutChoice, LayoutEvidence, LayoutKind, Shape, alignment_of,
    choose,
};
use crate::{Error, Progress};
use hprof_format::binary::heap::ids as array_ids;
use hprof_format::binary::{ClassDump, FormatError, HeapRecord, HeapRecords, Value};
use hprof_format::tags::BasicType;
use rayon::prelude::*;
use rustc_hash::FxHashMap;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::atomic::{AtomicU32, AtomicU64};

/// The heap dump to read, or why there is none.
fn heap_dump_of(dump: &Dump) -> Result<&HeapDumpSegments, Error> {
    dump.heap_dump().ok_or_else(|| match &dump.damage {
        Some(e) => Error::Missing(format!("no heap dump before the file's damage: {e}")),
        None => Error::Missing("the file holds no heap dump".into()),
    })
}

/// Target chunk size: large enough to amortise, small enough to balance two to sixteen cores.
const CHUNK: usize = 4 << 20;

/// A run of whole sub-records: `[start, end)` in the file.
#[derive(Debug, Clone, Copy)]
pub struct Chunk {
    pub start: usize,
    pub end: usize,
}

/// Cuts the segments into chunks. Segments larger than `CHUNK` are walked once to find sub-record
/// boundaries; damage stops the walk and is returned (the chunks before it are still good).
pub fn chunks(dump: &Dump, hd: &HeapDumpSegments) -> (Vec<Chunk>, Option<FormatError>) {
    let data = dump.data();
    let idn = dump.id_size();
    let mut out = Vec::new();
    for &(s, e) in &hd.segments {
        if e - s <= CHUNK {
            out.push(Chunk { start: s, end: e });
            continue;
        }
        let mut chunk_start = s;
        let mut it = HeapRecords::new(&data[s..e], s as u64, idn);
        loop {
            match it.next() {
                None => break,
                Some(Ok((at, _))) => {
                    let at = at as usize;
                    if at - chunk_start >= CHUNK {
                        out.push(Chunk { start: chunk_start, end: at });
                        dump.source.release(chunk_start, at);
                        chunk_start = at;
                    }
                }
                Some(Err(err)) => {
                    // The chunk ends where the damage starts; its reader will not see the bad bytes.
                    let at = (err.offset as usize).clamp(chunk_start, e);
                    if at > chunk_start {
                        out.push(Chunk { start: chunk_start, end: at });
                    }
                    dump.source.release(s, e);
                    return (out, Some(err));
                }
            }
        }
        out.push(Chunk { start: chunk_start, end: e });
        dump.source.release(chunk_start, e);
    }
    (out, None)
}

fn records<'a>(dump: &'a Dump, c: &Chunk) -> HeapRecords<'a> {
    HeapRecords::new(&dump.data()[c.start..c.end], c.start as u64, dump.id_size())
}

/// Index of a basic type in small per-type tables.
fn type_slot(t: BasicType) -> usize {
    t as usize
}

const PRIMITIVES: [BasicType; 8] = [
    BasicType::Boolean,
    BasicType::Char,
    BasicType::Float,
    BasicType::Double,
    BasicType::Byte,
    BasicType::Short,
    BasicType::Int,
    BasicType::Long,
];

/// Counts of sub-records by kind.
#[derive(Debug, Clone, Default)]
pub struct SubRecordCounts {
    pub roots: u64,
    pub classes: u64,
    pub instances: u64,
    pub object_arrays: u64,
    pub primitive_arrays: u64,
    /// Android's HEAP DUMP INFO, UNREACHABLE and the like.
    pub other: u64,
}

impl SubRecordCounts {
    fn add(&mut self, r: &HeapRecord<'_>) {
        match r {
            HeapRecord::ClassDump(_) => self.classes += 1,
            HeapRecord::InstanceDump { .. } => self.instances += 1,
            HeapRecord::ObjectArrayDump { .. } => self.object_arrays += 1,
            HeapRecord::PrimitiveArrayDump { .. } | HeapRecord::PrimitiveArrayNoData { .. } => {
                self.primitive_arrays += 1
            }
            r if r.is_root() => self.roots += 1,
            _ => self.other += 1,
        }
    }

    fn merge(&mut self, o: &SubRecordCounts) {
        self.roots += o.roots;
        self.classes += o.classes;
        self.instances += o.instances;
        self.object_arrays += o.object_arrays;
        self.primitive_arrays += o.primitive_arrays;
        self.other += o.other;
    }

    pub fn objects(&self) -> u64 {
        self.classes + self.instances + self.object_arrays + self.primitive_arrays
    }
}

// ---------------------------------------------------------------------------------------------------------
// Classes

/// A class as the analysis sees it.
#[derive(Debug, Clone)]
pub struct ClassInfo {
    /// The class object's id; 0 for the primitive array pseudo-classes.
    pub id: u64,
    /// Java source form: `java.lang.String`, `int[]`.
    pub name: String,
    pub super_id: u64,
    pub loader_id: u64,
    /// Shallow size of one instance under the dump's layout (0 for array classes: their sizes vary).
    pub instance_size: u64,
    /// Bytes of field values in an INSTANCE DUMP (own and inherited fields).
    pub field_bytes: u64,
    /// The class's own instance fields as (name, type, offset in its own block of the values). An
    /// instance's values hold its class's block first, then each superclass's: walk them with
    /// [`ClassTable::field_blocks`]. Lists are not flattened per class, so a deep hierarchy with many
    /// fields costs memory linear in the file, not in classes × inherited fields.
    pub own_fields: Vec<(String, BasicType, u32)>,
    /// Offsets (in its own block) of its own reference fields that retain (the weak `referent` of
    /// java.lang.ref.Reference is left out).
    pub own_strong_offsets: Vec<u32>,
    /// Bytes of its own block.
    pub own_bytes: u32,
    /// The nearest superclass that declares instance fields (a class index), `NO_CLASS` at the top. The
    /// links never form a cycle (a hostile file's superclass cycle is cut where it closes).
    pub fields_super: u32,
    /// Static fields as (name, value).
    pub statics: Vec<(String, Value)>,
    pub constant_pool_refs: Vec<u64>,
    pub signers_id: u64,
    pub protection_domain_id: u64,
    /// Shallow size of the class object itself: header and static fields.
    pub class_object_size: u64,
    /// The array classes whose element type this class is (`Foo[]` for `Foo`): the VM's element class
    /// holds them, so the graph gets an edge from each class to them.
    pub array_class_ids: Vec<u64>,
}

/// All classes of a dump, plus pseudo-classes for primitive arrays and for objects of unknown class.
#[derive(Debug, Clone)]
pub struct ClassTable {
    pub classes: Vec<ClassInfo>,
    by_id: FxHashMap<u64, u32>,
    prim_array: [u32; 12],
    /// The class of class objects (`java.lang.Class`).
    pub class_class: u32,
    /// Objects whose class has no CLASS DUMP.
    pub unknown_class: u32,
    /// A `java.lang.Class` instance without statics (HotSpot dumps the primitive types' mirrors as such
    /// instances).
    pub bare_mirror: u64,
}

impl ClassTable {
    /// The classes of `dumps`, sized by `sizes` (see [`ClassSizes`]).
    pub fn build_sized(dump: &Dump, dumps: Vec<ClassDump>, layout: Layout, sizes: &ClassSizes) -> ClassTable {
        let mut classes = Vec::with_capacity(dumps.len() + 10);
        let mut by_id = FxHashMap::default();
        let name_of = |id: u64| dump.class_name(id).unwrap_or_else(|| format!("<class 0x{id:x}>"));
        let string = |id: u64| dump.string(id).unwrap_or_else(|| format!("<field 0x{id:x}>"));
        let mut sorted: Vec<&ClassDump> = dumps.iter().collect();
        sorted.sort_by_key(|c| c.class_id);
        sorted.dedup_by_key(|c| c.class_id);
        for c in &sorted {
            by_id.insert(c.class_id, classes.len() as u32);
            let name = name_of(c.class_id);
            let is_reference = name == "java.lang.ref.Reference";
            let mut own_fields = Vec::with_capacity(c.fields.len());
            let mut own_strong = Vec::new();
            let mut off = 0u32;
            for f in &c.fields {
                let fname = string(f.name_id);
                if f.ty == BasicType::Object && !(is_reference && fname == "referent") {
                    own_strong.push(off);
                }
                own_fields.push((fname, f.ty, off));
                off = off.saturating_add(f.ty.size(layout.id_size));
            }
            let own_refs = c.fields.iter().filter(|f| f.ty == BasicType::Object).count() as u64;
            let statics: Vec<(String, Value)> = c.statics.iter().map(|s| (string(s.name_id), s.value)).collect();
            let static_bytes: u64 = c
                .statics
                .iter()
                .map(|s| if s.ty == BasicType::Object { layout.ref_size() } else { s.ty.size(layout.id_size) as u64 })
                .sum();
            classes.push(ClassInfo {
                id: c.class_id,
                // Set below, once the whole hierarchy is known.
                instance_size: own_refs,
                field_bytes: 0,
                own_fields,
                own_strong_offsets: own_strong,
                own_bytes: off,
                fields_super: NO_CLASS,
                name,
                super_id: c.super_id,
                loader_id: c.loader_id,
                statics,
                constant_pool_refs: c.constant_pool.iter().filter_map(|(_, v)| v.object_id()).collect(),
                signers_id: c.signers_id,
                protection_domain_id: c.protection_domain_id,
                class_object_size: sizes
                    .mirror
                    .get(&c.class_id)
                    .copied()
                    .unwrap_or_else(|| layout.align(layout.instance_size(0, 0) + static_bytes)),
                array_class_ids: Vec::new(),
            });
        }
        link_superclasses(&mut classes, &by_id, layout, sizes);
        let pseudo = |classes: &mut Vec<ClassInfo>, name: String| {
            classes.push(ClassInfo {
                id: 0,
                name,
                super_id: 0,
                loader_id: 0,
                instance_size: 0,
                field_bytes: 0,
                own_fields: Vec::new(),
                own_strong_offsets: Vec::new(),
                own_bytes: 0,
                fields_super: NO_CLASS,
                statics: Vec::new(),
                constant_pool_refs: Vec::new(),
                signers_id: 0,
                protection_domain_id: 0,
                class_object_size: 0,
                array_class_ids: Vec::new(),
            });
            (classes.len() - 1) as u32
        };
        {
            let mut by_name: FxHashMap<(&str, u64), usize> = FxHashMap::default();
            for (i, c) in classes.iter().enumerate() {
                by_name.insert((c.name.as_str(), c.loader_id), i);
            }
            let links: Vec<(usize, u64)> = classes
                .iter()
                .filter_map(|c| {
                    let elem = c.name.strip_suffix("[]")?;
                    by_name.get(&(elem, c.loader_id)).map(|&e| (e, c.id))
                })
                .collect();
            for (e, a) in links {
                classes[e].array_class_ids.push(a);
            }
        }
        let mut prim_array = [u32::MAX; 12];
        for t in PRIMITIVES {
            prim_array[type_slot(t)] = pseudo(&mut classes, format!("{}[]", t.java_name()));
        }
        let class_class = match classes.iter().position(|c| c.name == "java.lang.Class") {
            Some(i) => i as u32,
            None => pseudo(&mut classes, "java.lang.Class".into()),
        };
        let unknown_class = pseudo(&mut classes, "<unknown class>".into());
        ClassTable { classes, by_id, prim_array, class_class, unknown_class, bare_mirror: sizes.bare_mirror }
    }

    /// The blocks of an instance's field values, its class's first: each class that declares fields, with
    /// where its block starts. Stops once a block would start at or past `values_len` (each block holds
    /// at least one byte, so the walk is never longer than the values it reads).
    pub fn field_blocks(&self, class: u32, values_len: usize) -> impl Iterator<Item = (&ClassInfo, usize)> + '_ {
        let mut next = Some((class, 0usize));
        std::iter::from_fn(move || {
            let (ci, base) = next?;
            let c = self.classes.get(ci as usize)?;
            let after = base + c.own_bytes as usize;
            next = (c.fields_super != NO_CLASS && after < values_len).then_some((c.fields_super, after));
            Some((c, base))
        })
        .filter(move |&(c, base)| c.own_bytes > 0 && base < values_len)
    }

    /// The classes of `dumps` with HotSpot's sizes under `layout`.
    pub fn build(dump: &Dump, dumps: Vec<ClassDump>, layout: Layout) -> ClassTable {
        let sizes = ClassShapes::new(dump, &dumps).sizes(&layout);
        ClassTable::build_sized(dump, dumps, layout, &sizes)
    }

    /// The class index of a class object id (or the unknown-class pseudo-class).
    pub fn index_of(&self, class_id: u64) -> u32 {
        self.by_id.get(&class_id).copied().unwrap_or(self.unknown_class)
    }

    pub fn get(&self, class_id: u64) -> Option<&ClassInfo> {
        self.by_id.get(&class_id).map(|&i| &self.classes[i as usize])
    }

    pub fn primitive_array(&self, t: BasicType) -> u32 {
        self.prim_array[type_slot(t)]
    }
}

/// No class (the end of a superclass chain).
pub const NO_CLASS: u32 = u32::MAX;

/// Links each class to its superclass's fields and sums what it inherits (field bytes and references,
/// for its size), in one pass over the hierarchy whatever its depth. A superclass cycle (hostile files)
/// is cut where it closes. `instance_size` holds the class's own reference count on entry.
fn link_superclasses(classes: &mut [ClassInfo], by_id: &FxHashMap<u64, u32>, layout: Layout, sizes: &ClassSizes) {
    const NEW: u8 = 0;
    const OPEN: u8 = 1;
    const DONE: u8 = 2;
    let n = classes.len();
    let mut state = vec![NEW; n];
    let mut refs = vec![0u64; n];
    let mut stack: Vec<usize> = Vec::new();
    for first in 0..n {
        let mut cur = first;
        while state[cur] == NEW {
            state[cur] = OPEN;
            stack.push(cur);
            match by_id.get(&classes[cur].super_id) {
                Some(&s) if classes[cur].super_id != 0 => cur = s as usize,
                _ => break,
            }
        }
        while let Some(c) = stack.pop() {
            let own_refs = classes[c].instance_size;
            let sup = by_id
                .get(&classes[c].super_id)
                .map(|&s| s as usize)
                .filter(|&s| classes[c].super_id != 0 && state[s] == DONE);
            let (bytes, inherited_refs, link) = match sup {
                Some(s) => {
                    let link = if classes[s].own_bytes > 0 { s as u32 } else { classes[s].fields_super };
                    (classes[s].field_bytes, refs[s], link)
                }
                None => (0, 0, NO_CLASS),
            };
            let k = &mut classes[c];
            k.field_bytes = bytes.saturating_add(k.own_bytes as u64);
            refs[c] = inherited_refs + own_refs;
            k.fields_super = link;
            k.instance_size = if k.name.ends_with("[]") {
                0
            } else {
                sizes.instance.get(&k.id).copied().unwrap_or_else(|| layout.instance_size(k.field_bytes, refs[c]))
            };
            state[c] = DONE;
        }
    }
}

// ---------------------------------------------------------------------------------------------------------
// Histogram, in one streaming pass without an object index.

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
type ArrayTally = [u64; 1 + ARRAY_SLOTS];

#[derive(Default)]
struct HistoPart {
    classes: Vec<ClassDump>,
    instances: FxHashMap<u64, u64>,
    obj_arrays: FxHashMap<u64, ArrayTally>,
    prim_arrays: [ArrayTally; 12],
    counts: SubRecordCounts,
    evidence: LayoutEvidence,
    damage: Option<FormatError>,
}

fn tally(t: &mut ArrayTally, sizes: &[u64; ARRAY_SLOTS]) {
    t[0] += 1;
    for (b, s) in t[1..].iter_mut().zip(sizes) {
        *b += s;
    }
}

fn histo_chunk(dump: &Dump, c: &Chunk) -> HistoPart {
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

/// How many objects, sorted by address, vote when the file is out of address order.
const SORTED_SAMPLE: u64 = 1 << 20;

/// When the file does not list objects in address order, evidence from the objects of an address window
/// (about a million, the lowest addresses) sorted by address: one more pass over the records.
fn evidence_in_address_order(dump: &Dump, chunks: &[Chunk], ev: LayoutEvidence, objects: u64) -> LayoutEvidence {
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
fn settle_layout(
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

// ---------------------------------------------------------------------------------------------------------
// The object graph.

/// The sorted object ids: node `i` is the `i`-th. Stored as 32-bit offsets from the smallest id (in units
/// of the ids' common alignment, 8 bytes in HotSpot dumps) whenever they fit, which halves the array for
/// heaps up to 32 GB; a bucket table over the range makes a lookup a short binary search.
pub struct ObjectIds {
    min: u64,
    /// log2 of the alignment all ids share relative to `min`.
    align: u32,
    narrow: Vec<u32>,
    wide: Vec<u64>,
    shift: u32,
    buckets: Vec<u32>,
}

impl ObjectIds {
    fn new(ids: Vec<u64>) -> ObjectIds {
        let (Some(&min), Some(&max)) = (ids.first(), ids.last()) else {
            return ObjectIds { min: 0, align: 0, narrow: Vec::new(), wide: Vec::new(), shift: 0, buckets: vec![0, 0] };
        };
        let mut align = 3;
        while align > 0 && ids.iter().any(|&i| (i - min) & ((1 << align) - 1) != 0) {
            align -= 1;
        }
        let span = (max - min) >> align;
        let (narrow, wide) = if span <= u32::MAX as u64 {
            (ids.iter().map(|&i| ((i - min) >> align) as u32).collect(), Vec::new())
        } else {
            align = 0;
            (Vec::new(), ids)
        };
        let span = if narrow.is_empty() { max - min } else { span };
        let n = narrow.len().max(wide.len());
        let want = (n.next_power_of_two() / 8).clamp(1, 1 << 22) as u64;
        let mut shift = 0;
        while shift < 63 && (span >> shift) >= want {
            shift += 1;
        }
        let mut out = ObjectIds { min, align, narrow, wide, shift, buckets: Vec::new() };
        let nb = (span >> shift) as usize + 2;
        let mut buckets = vec![0u32; nb];
        let mut i = 0usize;
        for (b, slot) in buckets.iter_mut().enumerate() {
            while i < n && (out.key_at(i) >> shift) < b as u64 {
                i += 1;
            }
            *slot = i as u32;
        }
        out.buckets = buckets;
        out
    }

    /// Takes the 32-bit storage out (for parking it on disk); `None` when the ids are 64-bit.
    pub(crate) fn take_narrow(&mut self) -> Option<Vec<u32>> {
        if self.narrow.is_empty() { None } else { Some(std::mem::take(&mut self.narrow)) }
    }

    pub(crate) fn put_narrow(&mut self, v: Vec<u32>) {
        self.narrow = v;
    }

    fn key_at(&self, i: usize) -> u64 {
        if self.wide.is_empty() { self.narrow[i] as u64 } else { self.wide[i] - self.min }
    }

    pub fn len(&self) -> usize {
        self.narrow.len().max(self.wide.len())
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The id of node `v`.
    pub fn get(&self, v: u32) -> u64 {
        let v = v as usize;
        if self.wide.is_empty() { self.min + ((self.narrow[v] as u64) << self.align) } else { self.wide[v] }
    }

    /// The node of an id.
    pub fn find(&self, id: u64) -> Option<u32> {
        if id < self.min || (id - self.min) & ((1u64 << self.align) - 1) != 0 {
            return None;
        }
        let key = (id - self.min) >> self.align;
        let b = key >> self.shift;
        if b >= self.buckets.len().saturating_sub(1) as u64 {
            return None;
        }
        let b = b as usize;
        let (lo, hi) = (self.buckets[b] as usize, self.buckets[b + 1] as usize);
        let found = if self.wide.is_empty() {
            self.narrow[lo..hi].binary_search(&(key as u32)).ok()
        } else {
            self.wide[lo..hi].binary_search(&id).ok()
        };
        found.map(|i| (lo + i) as u32)
    }
}

/// A GC root.
#[derive(Debug, Clone, Copy)]
pub struct Root {
    pub node: u32,
    /// The sub-record tag (hprof_format::tags::heap).
    pub kind: u8,
    pub thread_serial: u32,
}

pub fn root_kind_name(kind: u8) -> &'static str {
    use hprof_format::tags::heap as h;
    match kind {
        h::ROOT_UNKNOWN => "unknown",
        h::ROOT_JNI_GLOBAL => "JNI global",
        h::ROOT_JNI_LOCAL => "JNI local",
        h::ROOT_JAVA_FRAME => "Java frame",
        h::ROOT_NATIVE_STACK => "native stack",
        h::ROOT_STICKY_CLASS => "system class",
        h::ROOT_THREAD_BLOCK => "thread block",
        h::ROOT_MONITOR_USED => "busy monitor",
        h::ROOT_THREAD_OBJECT => "thread",
        h::ROOT_INTERNED_STRING => "interned string",
        h::ROOT_FINALIZING => "finalizing",
        h::ROOT_DEBUGGER => "debugger",
        h::ROOT_REFERENCE_CLEANUP => "reference cleanup",
        h::ROOT_VM_INTERNAL => "VM internal",
        h::ROOT_JNI_MONITOR => "JNI monitor",
        _ => "root",
    }
}

/// The heap as flat arrays: node `i` is the object with the i-th smallest id.
///
/// References to GC roots are left out: a root is reached from the super-root directly, so an edge into
/// it changes neither the dominator of any object (every path through it has a shortcut through the same
/// objects) nor any shortest path from the roots. On HotSpot dumps this drops every instance's reference
/// to its class when the class is a system class, about a third of all references.
pub struct HeapGraph {
    pub layout: Layout,
    pub layout_choice: LayoutChoice,
    pub classes: ClassTable,
    pub ids: ObjectIds,
    pub class_of: Vec<u32>,
    /// Shallow size, saturating at 4 GiB.
    pub shallow: Vec<u32>,
    /// Outgoing references of node i: `out_edges[out_start[i]..out_start[i + 1]]`.
    pub out_start: Vec<u32>,
    pub out_edges: Vec<u32>,
    pub roots: Vec<Root>,
    /// Each node's sub-record offset in the file, when asked for.
    pub offsets: Option<Vec<u64>>,
    /// References to ids that are not in the dump (normal in jcmd dumps).
    pub dangling: u64,
    pub counts: SubRecordCounts,
    pub damage: Option<FormatError>,
}

#[derive(Default)]
struct Pass1 {
    ids: Vec<u64>,
    classes: Vec<ClassDump>,
    roots: Vec<(u64, u8, u32)>,
    evidence: LayoutEvidence,
    counts: SubRecordCounts,
    damage: Option<FormatError>,
}

fn pass1_chunk(dump: &Dump, c: &Chunk) -> Pass1 {
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

fn hprof_kind(r: &HeapRecord<'_>) -> u8 {
    use HeapRecord::*;
    use hprof_format::tags::heap as h;
    match r {
        RootUnknown { .. } => h::ROOT_UNKNOWN,
        RootJniGlobal { .. } => h::ROOT_JNI_GLOBAL,
        RootJniLocal { .. } => h::ROOT_JNI_LOCAL,
        RootJavaFrame { .. } => h::ROOT_JAVA_FRAME,
        RootNativeStack { .. } => h::ROOT_NATIVE_STACK,
        RootStickyClass { .. } => h::ROOT_STICKY_CLASS,
        RootThreadBlock { .. } => h::ROOT_THREAD_BLOCK,
        RootMonitorUsed { .. } => h::ROOT_MONITOR_USED,
        RootThreadObject { .. } => h::ROOT_THREAD_OBJECT,
        RootInternedString { .. } => h::ROOT_INTERNED_STRING,
        RootFinalizing { .. } => h::ROOT_FINALIZING,
        RootDebugger { .. } => h::ROOT_DEBUGGER,
        RootReferenceCleanup { .. } => h::ROOT_REFERENCE_CLEANUP,
        RootVmInternal { .. } => h::ROOT_VM_INTERNAL,
        RootJniMonitor { .. } => h::ROOT_JNI_MONITOR,
        _ => 0,
    }
}

/// Reads a reference at `off` in an instance's field values.
fn read_id(values: &[u8], off: usize, idn: usize) -> Option<u64> {
    let b = values.get(off..off + idn)?;
    Some(if idn == 4 { u32::from_be_bytes(b.try_into().ok()?) as u64 } else { u64::from_be_bytes(b.try_into().ok()?) })
}

struct GraphCtx<'a> {
    ids: &'a ObjectIds,
    /// GC root nodes, as bits: references to them are left out (see [`HeapGraph`]).
    is_root: &'a [u64],
    classes: &'a ClassTable,
    layout: Layout,
}

/// Walks the objects of a chunk: for each, its record offset, node, class index, shallow size and the
/// nodes it references (ids not in the dump are counted as dangling).
fn walk_objects(dump: &Dump, c: &Chunk, g: &GraphCtx<'_>, mut f: impl FnMut(u64, u32, u32, u64, &[u32])) -> u64 {
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
        if let Some(node) = g.ids.find(id) {
            f(at, node, class, size, &edges);
        }
    }
    dump.source.release(c.start, c.end);
    dangling
}

/// A vector of atomics as the plain values, without copying.
fn into_plain_u32(v: Vec<AtomicU32>) -> Vec<u32> {
    let mut v = std::mem::ManuallyDrop::new(v);
    // SAFETY: AtomicU32 has the same size, alignment and bit validity as u32, and the vector is not used
    // through its old type again.
    unsafe { Vec::from_raw_parts(v.as_mut_ptr() as *mut u32, v.len(), v.capacity()) }
}

fn into_plain_u64(v: Vec<AtomicU64>) -> Vec<u64> {
    let mut v = std::mem::ManuallyDrop::new(v);
    // SAFETY: as above, for AtomicU64 and u64.
    unsafe { Vec::from_raw_parts(v.as_mut_ptr() as *mut u64, v.len(), v.capacity()) }
}

fn atomic_u32s(n: usize, value: u32) -> Vec<AtomicU32> {
    (0..n).map(|_| AtomicU32::new(value)).collect()
}

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
        ids.par_sort_unstable();
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
        progress.start("reading references", total_bytes * 2);
        let mut is_root = vec![0u64; n.div_ceil(64)];
        for &(id, _, _) in &raw_roots {
            if let Some(v) = ids.find(id) {
                is_root[v as usize / 64] |= 1 << (v % 64);
            }
        }
        let ctx = GraphCtx { ids: &ids, is_root: &is_root, classes: &table, layout };
        const UNSET: u32 = u32::MAX;
        let class_of = atomic_u32s(n, UNSET);
        let shallow = atomic_u32s(n, 0);
        let degree = atomic_u32s(n + 1, 0);
        let offsets: Option<Vec<AtomicU64>> = keep_offsets.then(|| (0..n).map(|_| AtomicU64::new(0)).collect());
        let mut dangling: u64 = chunks
            .par_iter()
            .map(|c| {
                let d = walk_objects(dump, c, &ctx, |at, node, class, size, edges| {
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
                d
            })
            .sum();
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
        chunks.par_iter().for_each(|c| {
            walk_objects(dump, c, &ctx, |_, node, _, _, edges| {
                let v = node as usize;
                let bit = 1u64 << (v % 64);
                if written[v / 64].fetch_or(bit, Relaxed) & bit != 0 {
                    return;
                }
                let (s, e) = (out_start[v] as usize, out_start[v + 1] as usize);
                // Same record, same references as the first pass; a self-reference pads if not.
                for (i, slot) in out_edges[s..e].iter().enumerate() {
                    slot.store(edges.get(i).copied().unwrap_or(node), Relaxed);
                }
            });
            progress.inc((c.end - c.start) as u64);
        });
        progress.finish();
        drop(written);
        let out_edges = into_plain_u32(out_edges);
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

    pub fn len(&self) -> usize {
        self.ids.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }

    pub fn node(&self, id: u64) -> Option<u32> {
        self.ids.find(id)
    }

    /// The objects `v` references (empty once the references were released).
    pub fn refs(&self, v: u32) -> &[u32] {
        let v = v as usize;
        let (Some(&s), Some(&e)) = (self.out_start.get(v), self.out_start.get(v + 1)) else { return &[] };
        self.out_edges.get(s as usize..e as usize).unwrap_or(&[])
    }

    pub fn class_name(&self, v: u32) -> &str {
        &self.classes.classes[self.class_of[v as usize] as usize].name
    }

    /// `java.lang.String@0x7f00a1b8`, or for a class object `class java.lang.String@0x…`.
    pub fn describe(&self, v: u32) -> String {
        let id = self.ids.get(v);
        let class = (self.class_of[v as usize] == self.classes.class_class).then(|| self.classes.get(id)).flatten();
        if let Some(c) = class {
            return format!("class {}@0x{id:x}", c.name);
        }
        format!("{}@0x{id:x}", self.class_name(v))
    }

    /// How `from` refers to `to`: a field name, `[index]`, or `static name`. Needs offsets.
    pub fn edge_label(&self, dump: &Dump, from: u32, to: u32) -> Option<String> {
        let offsets = self.offsets.as_ref()?;
        let target = self.ids.get(to);
        let at = offsets[from as usize] as usize;
        let data = dump.data();
        let (_, r) = HeapRecords::new(data.get(at..)?, at as u64, dump.id_size()).next()?.ok()?;
        let idn = dump.id_size() as usize;
        match r {
            HeapRecord::InstanceDump { class_id, values, .. } => {
                if class_id == target {
                    return Some("<class>".into());
                }
                let ci = *self.classes.by_id.get(&class_id)?;
                self.classes.field_blocks(ci, values.len()).find_map(|(c, base)| {
                    c.own_fields
                        .iter()
                        .find(|(_, t, off)| {
                            *t == BasicType::Object && read_id(values, base + *off as usize, idn) == Some(target)
                        })
                        .map(|(name, _, _)| name.clone())
                })
            }
            HeapRecord::ObjectArrayDump { elements, class_id, .. } => {
                if class_id == target {
                    return Some("<class>".into());
                }
                array_ids(elements, idn as u32).position(|e| e == target).map(|i| format!("[{i}]"))
            }
            HeapRecord::ClassDump(cd) => {
                let c = self.classes.get(cd.class_id)?;
                if let Some((name, _)) = c.statics.iter().find(|(_, v)| v.object_id() == Some(target)) {
                    return Some(format!("static {name}"));
                }
                Some(
                    match target {
                        t if t == cd.super_id => "<super>",
                        t if t == cd.loader_id => "<classloader>",
                        _ => "<constant pool>",
                    }
                    .into(),
                )
            }
            _ => None,
        }
    }

    /// The class histogram from the graph (same figures as the streaming [`histogram`]).
    pub fn histogram(&self) -> Vec<HistoRow> {
        let mut per = vec![(0u64, 0u64); self.classes.classes.len()];
        for v in 0..self.len() {
            let e = &mut per[self.class_of[v] as usize];
            e.0 += 1;
            e.1 += self.shallow[v] as u64;
        }
        let mut rows: Vec<HistoRow> = per
            .iter()
            .enumerate()
            .filter(|(_, e)| e.0 > 0)
            .map(|(i, e)| HistoRow {
                class_name: self.classes.classes[i].name.clone(),
                class_id: self.classes.classes[i].id,
                instances: e.0,
                shallow_bytes: e.1,
            })
            .collect();
        rows.sort_by(|a, b| b.shallow_bytes.cmp(&a.shallow_bytes).then_with(|| a.class_name.cmp(&b.class_name)));
        rows
    }
}
