//! Memory spent on nothing: duplicate strings, empty and underused collections, boxed primitives held in
//! collections, zero-filled and duplicate primitive arrays. One parallel pass over the records reads what
//! the graph does not keep (array contents, sizes, the fields of strings and collections); the rest is
//! joins on the graph's nodes.

use super::fields::{FieldAt, ObjectReader, as_int, field_at, value_at};
use crate::dump::Dump;
use crate::heap::{HeapGraph, chunks};
use hprof_format::binary::{HeapRecord, HeapRecords, Value};
use rayon::prelude::*;
use rustc_hash::{FxHashMap, FxHasher};
use std::hash::Hasher;

/// Bytes and a share of the heap.
#[derive(Debug, Clone, Copy, Default)]
pub struct Cost {
    pub objects: u64,
    pub bytes: u64,
}

/// One value held by several `String`s.
#[derive(Debug, Clone)]
pub struct DuplicateString {
    /// The text, at most [`WasteOptions::max_chars`] characters; `None` when redacted.
    pub text: Option<String>,
    pub length: u64,
    pub strings: u64,
    /// Distinct value arrays among them (G1's string deduplication shares them).
    pub arrays: u64,
    /// What all but one of them cost: the extra `String` objects and the extra arrays.
    pub wasted_bytes: u64,
}

/// A collection class's instances.
#[derive(Debug, Clone, Default)]
pub struct CollectionWaste {
    pub class: String,
    pub instances: u64,
    /// Holding nothing: the collection and its backing array cost `empty_bytes`.
    pub empty: u64,
    pub empty_bytes: u64,
    /// Holding less than half their capacity.
    pub underused: u64,
    /// Unused slots in the backing arrays of non-empty instances, in bytes.
    pub unused_slot_bytes: u64,
    pub elements: u64,
    pub capacity: u64,
}

impl CollectionWaste {
    pub fn wasted_bytes(&self) -> u64 {
        self.empty_bytes + self.unused_slot_bytes
    }
}

/// Boxes of one class held in collections.
#[derive(Debug, Clone)]
pub struct BoxedWaste {
    pub class: String,
    pub objects: u64,
    pub bytes: u64,
    /// What the boxes cost beyond the primitive values themselves (box plus reference, less the value).
    pub wasted_bytes: u64,
    /// Boxes per class of the collection (or map entry) that holds them, most first.
    pub holders: Vec<(String, u64)>,
}

/// Primitive arrays of one element type with the same contents.
#[derive(Debug, Clone)]
pub struct DuplicateArray {
    pub class: String,
    pub length: u64,
    pub copies: u64,
    pub wasted_bytes: u64,
}

#[derive(Debug, Clone)]
pub struct WasteReport {
    /// Shallow bytes of every object in the dump: what shares are of.
    pub heap_bytes: u64,
    pub strings: Cost,
    pub duplicate_strings: Cost,
    pub duplicate_string_wasted: u64,
    pub top_duplicate_strings: Vec<DuplicateString>,
    pub collections: Vec<CollectionWaste>,
    pub boxed: Vec<BoxedWaste>,
    /// Primitive arrays of length ≥ 1 holding only zeros, per class (`byte[]`…): (class, cost).
    pub zero_arrays: Vec<(String, Cost)>,
    /// Primitive arrays (other than strings' values) equal to another: copies beyond the first.
    pub duplicate_arrays: Cost,
    pub top_duplicate_arrays: Vec<DuplicateArray>,
    /// Android's heaps (zygote, app, image) with what each holds; empty for other dumps.
    pub heaps: Vec<super::heaps::HeapShare>,
}

impl WasteReport {
    pub fn share(&self, bytes: u64) -> f64 {
        if self.heap_bytes == 0 { 0.0 } else { bytes as f64 / self.heap_bytes as f64 }
    }

    pub fn total_wasted(&self) -> u64 {
        self.duplicate_string_wasted
            + self.collections.iter().map(|c| c.wasted_bytes()).sum::<u64>()
            + self.boxed.iter().map(|b| b.wasted_bytes).sum::<u64>()
            + self.zero_arrays.iter().map(|(_, c)| c.bytes).sum::<u64>()
            + self.duplicate_arrays.bytes
    }
}

#[derive(Debug, Clone, Copy)]
pub struct WasteOptions {
    /// How many duplicate strings and arrays to list.
    pub top: usize,
    /// How much of each duplicated string to show.
    pub max_chars: usize,
    /// Show no string values.
    pub redact: bool,
}

impl Default for WasteOptions {
    fn default() -> Self {
        WasteOptions { top: 20, max_chars: 60, redact: false }
    }
}

/// How a collection class keeps its elements: the backing array's field and the element count's field
/// (`None`: counted from the array's non-null slots).
struct CollectionShape {
    array: &'static str,
    size: Option<&'static str>,
}

/// The collections looked at, by class name; subclasses (LinkedHashMap, Properties…) inherit the shape.
const COLLECTIONS: [(&str, CollectionShape); 9] = [
    ("java.util.HashMap", CollectionShape { array: "table", size: Some("size") }),
    ("java.util.ArrayList", CollectionShape { array: "elementData", size: Some("size") }),
    ("java.util.concurrent.ConcurrentHashMap", CollectionShape { array: "table", size: None }),
    ("java.util.Hashtable", CollectionShape { array: "table", size: Some("count") }),
    ("java.util.Vector", CollectionShape { array: "elementData", size: Some("elementCount") }),
    ("java.util.WeakHashMap", CollectionShape { array: "table", size: Some("size") }),
    ("java.util.IdentityHashMap", CollectionShape { array: "table", size: Some("size") }),
    ("java.util.ArrayDeque", CollectionShape { array: "elements", size: None }),
    ("java.util.concurrent.CopyOnWriteArrayList", CollectionShape { array: "array", size: None }),
];

/// Sets are maps inside: reported as the set, their map left out of the map's row.
const SETS: [&str; 1] = ["java.util.HashSet"];

/// Classes of map entries, whose fields hold keys and values.
const ENTRIES: [&str; 6] = [
    "java.util.HashMap$Node",
    "java.util.HashMap$TreeNode",
    "java.util.LinkedHashMap$Entry",
    "java.util.concurrent.ConcurrentHashMap$Node",
    "java.util.Hashtable$Entry",
    "java.util.TreeMap$Entry",
];

/// Box classes and the size of the value they hold.
const BOXES: [(&str, u64); 8] = [
    ("java.lang.Integer", 4),
    ("java.lang.Long", 8),
    ("java.lang.Short", 2),
    ("java.lang.Byte", 1),
    ("java.lang.Character", 2),
    ("java.lang.Boolean", 1),
    ("java.lang.Float", 4),
    ("java.lang.Double", 8),
];

/// What the pass reads from each class's instances.
#[derive(Clone, Copy)]
enum Role {
    None,
    /// `offset` and `count`: a window into a shared array (JDK 6, Android).
    String {
        value: FieldAt,
        coder: Option<FieldAt>,
        window: Option<(FieldAt, FieldAt)>,
    },
    /// Index into `COLLECTIONS` (the shape of the class or of its nearest listed ancestor).
    Collection {
        shape: usize,
        array: FieldAt,
        size: Option<FieldAt>,
    },
    Set {
        map: FieldAt,
    },
}

/// A primitive array's content, hashed.
#[derive(Clone, Copy)]
struct ArrayPrint {
    node: u32,
    hash: u64,
    length: u32,
    zero: bool,
}

struct CollectionSeen {
    node: u32,
    shape: usize,
    array: u64,
    size: Option<i64>,
}

#[derive(Default)]
struct Pass {
    arrays: Vec<ArrayPrint>,
    /// (string, value array id, coder, offset << 32 | count when a window).
    strings: Vec<(u32, u64, u8, u64)>,
    collections: Vec<CollectionSeen>,
    sets: Vec<(u32, u64)>,
}

fn roles(r: &ObjectReader<'_>) -> Vec<Role> {
    let classes = &r.graph.classes;
    let index = |name: &str| classes.classes.iter().position(|c| c.name == name).map(|i| i as u32);
    let string = index("java.lang.String");
    let shapes: Vec<(usize, u32)> =
        COLLECTIONS.iter().enumerate().filter_map(|(i, (n, _))| index(n).map(|c| (i, c))).collect();
    let sets: Vec<u32> = SETS.iter().filter_map(|n| index(n)).collect();
    (0..classes.classes.len() as u32)
        .map(|c| {
            if Some(c) == string {
                return match field_at(classes, c, "value") {
                    Some(value) => Role::String {
                        value,
                        coder: field_at(classes, c, "coder"),
                        window: field_at(classes, c, "offset").zip(field_at(classes, c, "count")),
                    },
                    None => Role::None,
                };
            }
            if sets.iter().any(|&s| r.is_subclass(c, s)) {
                return field_at(classes, c, "map").map_or(Role::None, |map| Role::Set { map });
            }
            for &(i, base) in &shapes {
                if r.is_subclass(c, base) {
                    let shape = &COLLECTIONS[i].1;
                    let Some(array) = field_at(classes, c, shape.array) else { return Role::None };
                    let size = shape.size.and_then(|s| field_at(classes, c, s));
                    return Role::Collection { shape: i, array, size };
                }
            }
            Role::None
        })
        .collect()
}

fn object(values: &[u8], f: FieldAt, idn: u32) -> u64 {
    match value_at(values, f.offset, f.ty, idn) {
        Some(Value::Object(id)) => id,
        _ => 0,
    }
}

fn read_pass(dump: &Dump, g: &HeapGraph, roles: &[Role]) -> Pass {
    let Some(hd) = dump.heap_dump() else { return Pass::default() };
    let (cs, _) = chunks(dump, hd);
    let idn = dump.id_size();
    let parts: Vec<Pass> = cs
        .par_iter()
        .map(|c| {
            let mut p = Pass::default();
            for r in HeapRecords::new(&dump.data()[c.start..c.end], c.start as u64, idn) {
                let Ok((_, r)) = r else { break };
                match r {
                    HeapRecord::PrimitiveArrayDump { id, length, data, .. } if length > 0 => {
                        let Some(node) = g.node(id) else { continue };
                        let mut h = FxHasher::default();
                        h.write(data);
                        let zero = data.iter().all(|&b| b == 0);
                        p.arrays.push(ArrayPrint {
                            node,
                            hash: h.finish() ^ (data.len() as u64).rotate_left(32),
                            length,
                            zero,
                        });
                    }
                    HeapRecord::InstanceDump { id, class_id, values, .. } => {
                        let Some(class) = g.classes.find(class_id) else { continue };
                        match roles[class as usize] {
                            Role::None => {}
                            Role::String { value, coder, window } => {
                                if let Some(node) = g.node(id) {
                                    let int = |f: FieldAt| value_at(values, f.offset, f.ty, idn).and_then(as_int);
                                    let coder = coder.and_then(int).unwrap_or(0);
                                    let window = window.map_or(0, |(o, n)| {
                                        (int(o).unwrap_or(0) as u32 as u64) << 32 | int(n).unwrap_or(0) as u32 as u64
                                    });
                                    p.strings.push((node, object(values, value, idn), coder as u8, window));
                                }
                            }
                            Role::Collection { shape, array, size } => {
                                if let Some(node) = g.node(id) {
                                    let size =
                                        size.and_then(|f| value_at(values, f.offset, f.ty, idn)).and_then(as_int);
                                    p.collections.push(CollectionSeen {
                                        node,
                                        shape,
                                        array: object(values, array, idn),
                                        size,
                                    });
                                }
                            }
                            Role::Set { map } => {
                                if let Some(node) = g.node(id) {
                                    p.sets.push((node, object(values, map, idn)));
                                }
                            }
                        }
                    }
                    _ => {}
                }
            }
            dump.source.release(c.start, c.end);
            p
        })
        .collect();
    let mut all = Pass::default();
    for p in parts {
        all.arrays.extend(p.arrays);
        all.strings.extend(p.strings);
        all.collections.extend(p.collections);
        all.sets.extend(p.sets);
    }
    all.arrays.sort_unstable_by_key(|a| a.node);
    all.arrays.dedup_by_key(|a| a.node);
    all
}

/// What makes two strings equal here: their array's (content hash, length, class), coder and window.
type StringKey = (u64, u32, u32, u8, u64);

pub fn waste(dump: &Dump, g: &HeapGraph, opts: &WasteOptions) -> WasteReport {
    let r = ObjectReader::new(dump, g);
    let roles = roles(&r);
    let pass = read_pass(dump, g, &roles);
    let heap_bytes: u64 = g.shallow.iter().map(|&s| s as u64).sum();
    let print_of = |node: u32| pass.arrays.binary_search_by_key(&node, |a| a.node).ok().map(|i| pass.arrays[i]);
    let mut is_string_value = vec![0u64; g.len().div_ceil(64)];

    // Duplicate strings: by the content of their value arrays.
    let mut keyed: Vec<(StringKey, u32, u32)> = Vec::with_capacity(pass.strings.len());
    let mut strings = Cost::default();
    for &(s, value, coder, window) in &pass.strings {
        strings.objects += 1;
        strings.bytes += g.shallow[s as usize] as u64;
        let Some(a) = g.node(value) else { continue };
        is_string_value[a as usize / 64] |= 1 << (a % 64);
        strings.bytes += g.shallow[a as usize] as u64;
        let key = match print_of(a) {
            Some(p) => (p.hash, p.length, g.class_of[a as usize], coder, window),
            None => (0, 0, g.class_of[a as usize], coder, window),
        };
        keyed.push((key, s, a));
    }
    keyed.sort_unstable();
    let mut groups: Vec<DuplicateString> = Vec::new();
    let mut reps: Vec<u32> = Vec::new();
    let mut duplicate_strings = Cost::default();
    let mut duplicate_string_wasted = 0;
    for run in keyed.chunk_by(|a, b| a.0 == b.0) {
        if run.len() < 2 {
            continue;
        }
        let arrays = 1 + run.windows(2).filter(|w| w[0].2 != w[1].2).count() as u64;
        let wasted = run[1..].iter().map(|x| g.shallow[x.1 as usize] as u64).sum::<u64>()
            + (arrays - 1) * g.shallow[run[0].2 as usize] as u64;
        duplicate_strings.objects += run.len() as u64;
        duplicate_strings.bytes += wasted;
        duplicate_string_wasted += wasted;
        groups.push(DuplicateString { text: None, length: 0, strings: run.len() as u64, arrays, wasted_bytes: wasted });
        reps.push(run[0].1);
    }
    let mut order: Vec<usize> = (0..groups.len()).collect();
    order.sort_by_key(|&i| (std::cmp::Reverse(groups[i].wasted_bytes), std::cmp::Reverse(groups[i].strings)));
    order.truncate(opts.top);
    let top_duplicate_strings = order
        .into_iter()
        .map(|i| {
            let mut d = groups[i].clone();
            let full = r.string_text(reps[i], usize::MAX).unwrap_or_default();
            d.length = full.chars().count() as u64;
            if !opts.redact {
                d.text = Some(shorten(&full, opts.max_chars));
            }
            d
        })
        .collect();

    // Zero-filled and duplicate primitive arrays.
    let mut zero: FxHashMap<u32, Cost> = FxHashMap::default();
    let mut other: Vec<((u32, u32, u64), u32)> = Vec::new();
    for a in &pass.arrays {
        let class = g.class_of[a.node as usize];
        let size = g.shallow[a.node as usize] as u64;
        if a.zero {
            let z = zero.entry(class).or_default();
            z.objects += 1;
            z.bytes += size;
        }
        if is_string_value[a.node as usize / 64] & (1 << (a.node % 64)) == 0 && !a.zero {
            other.push(((class, a.length, a.hash), a.node));
        }
    }
    let mut zero_arrays: Vec<(String, Cost)> =
        zero.into_iter().map(|(c, cost)| (g.classes.classes[c as usize].name.clone(), cost)).collect();
    zero_arrays.sort_by(|a, b| b.1.bytes.cmp(&a.1.bytes).then(a.0.cmp(&b.0)));
    other.sort_unstable();
    let mut duplicate_arrays = Cost::default();
    let mut dup_groups: Vec<DuplicateArray> = Vec::new();
    for run in other.chunk_by(|a, b| a.0 == b.0) {
        if run.len() < 2 {
            continue;
        }
        let wasted: u64 = run[1..].iter().map(|x| g.shallow[x.1 as usize] as u64).sum();
        duplicate_arrays.objects += run.len() as u64 - 1;
        duplicate_arrays.bytes += wasted;
        dup_groups.push(DuplicateArray {
            class: g.classes.classes[run[0].0.0 as usize].name.clone(),
            length: run[0].0.1 as u64,
            copies: run.len() as u64,
            wasted_bytes: wasted,
        });
    }
    dup_groups.sort_by(|a, b| b.wasted_bytes.cmp(&a.wasted_bytes).then(b.copies.cmp(&a.copies)));
    dup_groups.truncate(opts.top);

    let (collections, holders) = collections(&r, &pass);
    let boxed = boxed(g, &holders);
    WasteReport {
        heap_bytes,
        strings,
        duplicate_strings,
        duplicate_string_wasted,
        top_duplicate_strings,
        collections,
        boxed,
        zero_arrays,
        duplicate_arrays,
        top_duplicate_arrays: dup_groups,
        heaps: super::heaps::heaps(dump, g),
    }
}

/// Per collection class: sizes against capacities. Also returns the backing arrays (which hold elements).
fn collections(r: &ObjectReader<'_>, pass: &Pass) -> (Vec<CollectionWaste>, Vec<(u32, u32)>) {
    let g = r.graph;
    let ref_size = g.layout.ref_size();
    let mut owned_by_set: FxHashMap<u32, u32> = FxHashMap::default();
    for &(set, map) in &pass.sets {
        if let Some(m) = g.node(map) {
            owned_by_set.insert(m, set);
        }
    }
    let mut rows: FxHashMap<u32, CollectionWaste> = FxHashMap::default();
    let mut holders = Vec::new();
    for c in &pass.collections {
        let array = if c.array == 0 { None } else { g.node(c.array) };
        let capacity = array.and_then(|a| r.array_length(a)).unwrap_or(0) as u64;
        if let Some(a) = array {
            let owner = owned_by_set.get(&c.node).copied().unwrap_or(c.node);
            holders.push((a, g.class_of[owner as usize]));
        }
        let size = match c.size {
            Some(s) => s.max(0) as u64,
            None => array.map_or(0, |a| occupied(r, a, COLLECTIONS[c.shape].0)),
        };
        // A set is its map: counted on the set's row, with the set's own shallow size.
        let (row_node, extra) = match owned_by_set.get(&c.node) {
            Some(&set) => (set, g.shallow[set as usize] as u64),
            None => (c.node, 0),
        };
        let e = rows.entry(g.class_of[row_node as usize]).or_default();
        e.instances += 1;
        e.elements += size;
        e.capacity += capacity;
        let array_bytes = array.map_or(0, |a| g.shallow[a as usize] as u64);
        if size == 0 {
            e.empty += 1;
            e.empty_bytes += g.shallow[c.node as usize] as u64 + extra + array_bytes;
        } else {
            if size * 2 < capacity {
                e.underused += 1;
            }
            e.unused_slot_bytes += capacity.saturating_sub(size) * ref_size;
        }
    }
    let mut out: Vec<CollectionWaste> = rows
        .into_iter()
        .map(|(class, mut w)| {
            w.class = g.classes.classes[class as usize].name.clone();
            w
        })
        .collect();
    out.sort_by(|a, b| b.wasted_bytes().cmp(&a.wasted_bytes()).then(a.class.cmp(&b.class)));
    (out, holders)
}

/// Elements of a collection that keeps no count: its array's non-null slots (for an ArrayDeque or a
/// CopyOnWriteArrayList exact; for a ConcurrentHashMap, its bins, a lower bound under collisions).
fn occupied(r: &ObjectReader<'_>, array: u32, _kind: &str) -> u64 {
    match r.record(array) {
        Some(HeapRecord::ObjectArrayDump { elements, .. }) => {
            let idn = r.dump.id_size() as usize;
            elements.chunks_exact(idn).filter(|e| e.iter().any(|&b| b != 0)).count() as u64
        }
        _ => 0,
    }
}

/// Boxes referenced from collections' backing arrays (with the collection's class) or from map entries,
/// each counted once.
fn boxed(g: &HeapGraph, holders: &[(u32, u32)]) -> Vec<BoxedWaste> {
    let classes = &g.classes.classes;
    let box_of: FxHashMap<u32, usize> = classes
        .iter()
        .enumerate()
        .filter_map(|(i, c)| BOXES.iter().position(|(n, _)| *n == c.name).map(|b| (i as u32, b)))
        .collect();
    if box_of.is_empty() {
        return Vec::new();
    }
    let entry_classes: Vec<bool> = classes.iter().map(|c| ENTRIES.contains(&c.name.as_str())).collect();
    let mut seen = vec![0u64; g.len().div_ceil(64)];
    let mut per = vec![(0u64, 0u64); BOXES.len()];
    let mut by_holder: FxHashMap<(usize, u32), u64> = FxHashMap::default();
    let mut visit = |v: u32, holder: u32| {
        for &w in g.refs(v) {
            let Some(&b) = box_of.get(&g.class_of[w as usize]) else { continue };
            let bit = 1u64 << (w % 64);
            if seen[w as usize / 64] & bit == 0 {
                seen[w as usize / 64] |= bit;
                per[b].0 += 1;
                per[b].1 += g.shallow[w as usize] as u64;
                *by_holder.entry((b, holder)).or_default() += 1;
            }
        }
    };
    for &(h, class) in holders {
        visit(h, class);
    }
    for v in 0..g.len() as u32 {
        let class = g.class_of[v as usize];
        if entry_classes[class as usize] {
            visit(v, class);
        }
    }
    let ref_size = g.layout.ref_size();
    let mut out: Vec<BoxedWaste> = per
        .iter()
        .enumerate()
        .filter(|(_, p)| p.0 > 0)
        .map(|(b, &(objects, bytes))| BoxedWaste {
            class: BOXES[b].0.to_owned(),
            objects,
            bytes,
            wasted_bytes: (bytes + objects * ref_size).saturating_sub(objects * BOXES[b].1),
            holders: {
                let mut h: Vec<(String, u64)> = by_holder
                    .iter()
                    .filter(|((bb, _), _)| *bb == b)
                    .map(|(&(_, c), &k)| (classes[c as usize].name.clone(), k))
                    .collect();
                h.sort_by(|x, y| y.1.cmp(&x.1).then(x.0.cmp(&y.0)));
                h
            },
        })
        .collect();
    out.sort_by_key(|b| std::cmp::Reverse(b.bytes));
    out
}

/// At most `max` characters, with `…` when cut.
pub fn shorten(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_owned();
    }
    let mut t: String = s.chars().take(max.saturating_sub(1)).collect();
    t.push('…');
    t
}
