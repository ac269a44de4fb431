//! Object sizes as HotSpot lays objects out. A heap dump stores field values, not the objects' memory, so
//! shallow sizes are rebuilt from the VM's object layout, which the file does not name:
//!
//! | layout (`--layout`) | VM flags | header | reference | array elements start at |
//! |---|---|---|---|---|
//! | `32-bit` | a 32-bit VM | 8 | 4 | 12 (16 for long/double) |
//! | `compressed-oops` | 64-bit default (heaps below 32 GB) | 12 | 4 | 16 |
//! | `compressed-class-pointers` | `-XX:-UseCompressedOops`, heaps of 32 GB and more, ZGC | 12 | 8 | 16 |
//! | `uncompressed` | `-XX:-UseCompressedOops -XX:-UseCompressedClassPointers` | 16 | 8 | 24; JDK 22+: 20 (24 for 8-byte elements) |
//! | `compressed-oops-only` | `-XX:-UseCompressedClassPointers` | 16 | 4 | as `uncompressed` |
//! | `compact-headers` | JDK 24+ `-XX:+UseCompactObjectHeaders` | 8 | 4 | 12 (16 for long/double) |
//! | `compact-headers-uncompressed-oops` | the same with `-XX:-UseCompressedOops` or ZGC | 8 | 8 | 12 (16 for 8-byte elements) |
//!
//! [`LayoutEvidence`] tells them apart from the addresses: consecutive objects in a heap dump mostly sit
//! exactly one object size apart (HotSpot walks the heap in address order), so every pair of neighbours
//! whose gap equals an object's size under one layout and not another is a vote. Instances vote too, by
//! class, once the classes' sizes are known. Addresses above 32 GB rule compressed oops out (ZGC's
//! heap lives at 4 TB and above); identifiers above any user-space address are no addresses (a writer's
//! own numbers) and say nothing. A layout the file states ([`LayoutNote`], our agent's) decides over the
//! evidence, and `--layout` over both. Instance sizes follow [`crate::field_layout`].

use hprof_format::binary::HeapRecord;
use hprof_format::layout_note::LayoutNote;
use hprof_format::tags::BasicType;
use rustc_hash::FxHashMap;

/// The layouts a 64-bit HotSpot can use (plus the 32-bit one).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LayoutKind {
    Bits32,
    CompressedOops,
    CompressedClassPointers,
    CompressedOopsOnly,
    Uncompressed,
    CompactHeaders,
    CompactHeadersUncompressedOops,
}

impl LayoutKind {
    pub const ALL: [LayoutKind; 7] = [
        LayoutKind::Bits32,
        LayoutKind::CompressedOops,
        LayoutKind::CompressedClassPointers,
        LayoutKind::CompressedOopsOnly,
        LayoutKind::Uncompressed,
        LayoutKind::CompactHeaders,
        LayoutKind::CompactHeadersUncompressedOops,
    ];

    /// The name `--layout` takes.
    pub fn name(self) -> &'static str {
        match self {
            LayoutKind::Bits32 => "32-bit",
            LayoutKind::CompressedOops => "compressed-oops",
            LayoutKind::CompressedClassPointers => "compressed-class-pointers",
            LayoutKind::CompressedOopsOnly => "compressed-oops-only",
            LayoutKind::Uncompressed => "uncompressed",
            LayoutKind::CompactHeaders => "compact-headers",
            LayoutKind::CompactHeadersUncompressedOops => "compact-headers-uncompressed-oops",
        }
    }

    pub fn from_name(s: &str) -> Option<LayoutKind> {
        LayoutKind::ALL.into_iter().find(|k| k.name() == s)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Layout {
    pub id_size: u32,
    pub kind: LayoutKind,
    /// Array elements start right after the length, aligned to their own size (JDK 22+, JDK-8139457);
    /// before, at the next 8 bytes. Matters for 16-byte headers only.
    pub packed_arrays: bool,
    /// Objects' sizes are multiples of this (`-XX:ObjectAlignmentInBytes`, 8 unless a file states more).
    pub alignment: u64,
}

fn align8(n: u64) -> u64 {
    (n + 7) & !7
}

/// HotSpot's object alignment is a power of two from 8 up, and 8 on a 32-bit VM; anything else is taken
/// as 8.
fn usable_alignment(id_size: u32, alignment: u64) -> u64 {
    if id_size == 8 && alignment.is_power_of_two() && alignment >= 8 { alignment } else { 8 }
}

/// `n` rounded up to a multiple of `alignment`, a power of two (a mask, not a division: histograms size
/// every array with it).
#[inline]
pub fn align_to(n: u64, alignment: u64) -> u64 {
    (n + alignment - 1) & !(alignment - 1)
}

impl Layout {
    pub fn of(id_size: u32, kind: LayoutKind, packed_arrays: bool) -> Layout {
        let kind = if id_size == 4 { LayoutKind::Bits32 } else { kind };
        Layout { id_size, kind, packed_arrays, alignment: 8 }
    }

    /// `n` bytes rounded up to a whole object.
    #[inline]
    pub fn align(&self, n: u64) -> u64 {
        align_to(n, self.alignment)
    }

    /// The pre-JDK-24 layouts: compressed oops and class pointers, or neither.
    pub fn new(id_size: u32, compressed_oops: bool) -> Layout {
        let kind = if compressed_oops { LayoutKind::CompressedOops } else { LayoutKind::Uncompressed };
        Layout::of(id_size, kind, false)
    }

    /// The layout a file states. Arrays' elements are packed or not only with 16-byte headers (as in
    /// [`Layout::candidates`]).
    pub fn from_note(id_size: u32, note: &LayoutNote) -> Layout {
        let kind = match (note.compact_headers, note.compressed_oops, note.compressed_class_pointers) {
            (true, true, _) => LayoutKind::CompactHeaders,
            (true, false, _) => LayoutKind::CompactHeadersUncompressedOops,
            (false, true, true) => LayoutKind::CompressedOops,
            (false, false, true) => LayoutKind::CompressedClassPointers,
            (false, true, false) => LayoutKind::CompressedOopsOnly,
            (false, false, false) => LayoutKind::Uncompressed,
        };
        let layout = Layout::of(id_size, kind, false);
        let alignment = usable_alignment(id_size, note.object_alignment as u64);
        Layout { packed_arrays: note.packed_arrays && layout.object_header() == 16, alignment, ..layout }
    }

    /// [`Layout::candidates`] with objects aligned to `alignment` bytes (what a file states, or 8).
    pub fn candidates_aligned(id_size: u32, alignment: u64) -> Vec<Layout> {
        let alignment = usable_alignment(id_size, alignment);
        Layout::candidates(id_size).into_iter().map(|l| Layout { alignment, ..l }).collect()
    }

    /// Every layout a dump with `id_size`-byte identifiers may have been written under (8-byte aligned).
    pub fn candidates(id_size: u32) -> Vec<Layout> {
        if id_size == 4 {
            return vec![Layout::of(4, LayoutKind::Bits32, true)];
        }
        let mut v = Vec::new();
        for kind in LayoutKind::ALL.into_iter().skip(1) {
            v.push(Layout::of(id_size, kind, false));
            if matches!(kind, LayoutKind::Uncompressed | LayoutKind::CompressedOopsOnly) {
                v.push(Layout::of(id_size, kind, true));
            }
        }
        v
    }

    pub fn compressed_oops(&self) -> bool {
        self.ref_size() == 4 && self.id_size == 8
    }

    pub fn describe(&self) -> String {
        let what = match self.kind {
            LayoutKind::Bits32 => "32-bit",
            LayoutKind::CompressedOops => "64-bit with compressed oops and class pointers",
            LayoutKind::CompressedClassPointers => "64-bit with compressed class pointers, without compressed oops",
            LayoutKind::CompressedOopsOnly => "64-bit with compressed oops, without compressed class pointers",
            LayoutKind::Uncompressed => "64-bit without compressed oops or class pointers",
            LayoutKind::CompactHeaders => "64-bit with compact object headers and compressed oops",
            LayoutKind::CompactHeadersUncompressedOops => "64-bit with compact object headers, without compressed oops",
        };
        let arrays = if self.object_header() == 16 {
            if self.packed_arrays { ", JDK 22+ arrays" } else { ", JDK 21- arrays" }
        } else {
            ""
        };
        let aligned =
            if self.alignment != 8 { format!(", {}-byte object alignment", self.alignment) } else { String::new() };
        format!(
            "{what} ({}-byte object headers, {}-byte references{arrays}{aligned})",
            self.object_header(),
            self.ref_size()
        )
    }

    pub fn ref_size(&self) -> u64 {
        match self.kind {
            LayoutKind::Bits32 | LayoutKind::CompressedOops | LayoutKind::CompressedOopsOnly => 4,
            LayoutKind::CompactHeaders => 4,
            _ => 8,
        }
    }

    pub fn object_header(&self) -> u64 {
        match self.kind {
            LayoutKind::Bits32 | LayoutKind::CompactHeaders | LayoutKind::CompactHeadersUncompressedOops => 8,
            LayoutKind::CompressedOops | LayoutKind::CompressedClassPointers => 12,
            LayoutKind::Uncompressed | LayoutKind::CompressedOopsOnly => 16,
        }
    }

    pub fn array_base(&self, elem: u64) -> u64 {
        let after_length = self.object_header() + 4;
        let packed = self.packed_arrays || self.object_header() != 16;
        if packed { after_length.next_multiple_of(elem.max(1)) } else { align8(after_length) }
    }

    /// An instance whose fields take `field_bytes` in the file, `ref_fields` of them references, summed
    /// without HotSpot's field layout (for objects whose class the dump lacks).
    pub fn instance_size(&self, field_bytes: u64, ref_fields: u64) -> u64 {
        let shrink = ref_fields * (self.id_size as u64).saturating_sub(self.ref_size());
        self.align(self.object_header() + field_bytes.saturating_sub(shrink))
    }

    pub fn object_array_size(&self, length: u64) -> u64 {
        let r = self.ref_size();
        self.align(self.array_base(r) + length * r)
    }

    pub fn primitive_array_size(&self, ty: BasicType, length: u64) -> u64 {
        let e = ty.size(self.id_size) as u64;
        self.align(self.array_base(e) + length * e)
    }

    /// An array record's size, or `None` for other records.
    pub fn array_size(&self, r: &HeapRecord<'_>) -> Option<u64> {
        match r {
            HeapRecord::ObjectArrayDump { length, .. } => Some(self.object_array_size(*length as u64)),
            HeapRecord::PrimitiveArrayDump { length, element_type, .. }
            | HeapRecord::PrimitiveArrayNoData { length, element_type, .. } => {
                Some(self.primitive_array_size(*element_type, *length as u64))
            }
            _ => None,
        }
    }
}

/// Array sizes under every candidate at once. Candidates share array layouts (seven of eight start byte
/// arrays at 12, 16, 20 or 24), so an array is sized once per distinct (start, element size), a *slot*,
/// and the histogram sums slots; [`ArraySizer::slot`] maps a candidate to its slot at the end.
#[derive(Debug, Clone)]
pub struct ArraySizer {
    /// Per element kind (1, 2, 4, 8 bytes, reference): the distinct (start, element size) pairs.
    slots: [Vec<(u64, u64)>; 5],
    /// Per element kind and candidate: the slot.
    slot_of: [[u8; 9]; 5],
    n: usize,
    /// The candidates' object alignment (they share it).
    alignment: u64,
}

/// At most this many distinct array layouts per element kind.
pub const ARRAY_SLOTS: usize = 6;

impl ArraySizer {
    pub fn new(candidates: &[Layout]) -> ArraySizer {
        let alignment = candidates.first().map_or(8, |l| l.alignment);
        let mut s =
            ArraySizer { slots: Default::default(), slot_of: [[0; 9]; 5], n: candidates.len().min(9), alignment };
        for (i, l) in candidates.iter().take(9).enumerate() {
            for kind in 0..5 {
                let e = if kind == 4 { l.ref_size() } else { 1 << kind };
                let key = (l.array_base(e), e);
                let slot = match s.slots[kind].iter().position(|k| *k == key) {
                    Some(p) => p,
                    None => {
                        s.slots[kind].push(key);
                        s.slots[kind].len() - 1
                    }
                };
                s.slot_of[kind][i] = slot.min(ARRAY_SLOTS - 1) as u8;
            }
        }
        s
    }

    fn kind(shape: Shape, id_size: u32) -> Option<(usize, u64)> {
        match shape {
            Shape::ObjectArray(n) => Some((4, n)),
            Shape::PrimitiveArray(t, n) => Some(((t.size(id_size) as u64).trailing_zeros().min(3) as usize, n)),
            _ => None,
        }
    }

    /// An array's size in each slot of its kind.
    #[inline]
    pub fn slot_sizes(&self, shape: Shape, id_size: u32) -> [u64; ARRAY_SLOTS] {
        let mut out = [0u64; ARRAY_SLOTS];
        if let Some((kind, n)) = Self::kind(shape, id_size) {
            for (o, &(base, e)) in out.iter_mut().zip(&self.slots[kind]) {
                *o = align_to(base + n * e, self.alignment);
            }
        }
        out
    }

    /// Sizes under each candidate, from the slot sizes.
    #[inline]
    pub fn expand(&self, shape: Shape, id_size: u32, slot_sizes: &[u64; ARRAY_SLOTS]) -> [u64; 9] {
        let mut out = [0u64; 9];
        if let Some((kind, _)) = Self::kind(shape, id_size) {
            for (o, &slot) in out.iter_mut().zip(&self.slot_of[kind]).take(self.n) {
                *o = slot_sizes[slot as usize];
            }
        }
        out
    }

    /// Sizes under each candidate.
    pub fn sizes(&self, shape: Shape, id_size: u32) -> [u64; 9] {
        self.expand(shape, id_size, &self.slot_sizes(shape, id_size))
    }

    /// The slot of `candidate` for arrays of primitive `ty` (`None`: object arrays).
    pub fn slot(&self, ty: Option<BasicType>, id_size: u32, candidate: usize) -> usize {
        let kind = match ty {
            None => 4,
            Some(t) => (t.size(id_size) as u64).trailing_zeros().min(3) as usize,
        };
        self.slot_of[kind][candidate] as usize
    }
}

/// How many objects of a chunk vote (enough for a verdict, bounded work on big dumps).
const VOTING_OBJECTS_PER_CHUNK: u32 = 8192;

/// How many instance neighbours a chunk keeps for voting (enough for a verdict, bounded work).
const INSTANCE_SAMPLES_PER_CHUNK: u32 = 2048;
/// Gaps above this are not an object's size in any layout worth voting on.
const MAX_GAP: u64 = 1 << 16;
/// Addresses from here on cannot hold compressed oops (they reach 32 GB with 8-byte alignment).
const COMPRESSED_OOPS_LIMIT: u64 = 32 << 30;
/// Identifiers from here on are no user-space addresses (x86-64's end below 2^47, or 2^56 with 5-level
/// paging; AArch64's below 2^52): numbers of the writer's own, which say nothing about compressed oops.
const NO_ADDRESS_FROM: u64 = 1 << 56;

/// What a chunk of records says about the layout: array neighbours already scored per candidate;
/// instance neighbours as (class, gap) counts, scored once the classes are known.
#[derive(Debug, Clone, Default)]
pub struct LayoutEvidence {
    /// Per candidate (in [`Layout::candidates`] order): array neighbours whose gap is the array's size.
    pub array_votes: Vec<u64>,
    /// Array neighbours seen with a usable gap.
    pub array_pairs: u64,
    /// (class id, gap to the next object) → count.
    pub instance_gaps: FxHashMap<(u64, u32), u32>,
    pub highest_id: u64,
    pub lowest_id: u64,
    /// Objects seen, and consecutive pairs in rising and falling address order.
    pub objects: u64,
    /// Objects at addresses compressed oops cannot reach.
    pub above_compressed_oops: u64,
    pub ascending: u64,
    pub descending: u64,
}

impl LayoutEvidence {
    pub fn merge(&mut self, o: LayoutEvidence) {
        if self.array_votes.len() < o.array_votes.len() {
            self.array_votes.resize(o.array_votes.len(), 0);
        }
        for (a, b) in self.array_votes.iter_mut().zip(&o.array_votes) {
            *a += b;
        }
        self.array_pairs += o.array_pairs;
        for (k, v) in o.instance_gaps {
            *self.instance_gaps.entry(k).or_default() += v;
        }
        self.lowest_id = if self.objects == 0 { o.lowest_id } else { self.lowest_id.min(o.lowest_id) };
        self.highest_id = self.highest_id.max(o.highest_id);
        self.objects += o.objects;
        self.above_compressed_oops += o.above_compressed_oops;
        self.ascending += o.ascending;
        self.descending += o.descending;
    }
}

/// The previous object of a chunk, waiting for its neighbour's address.
enum Pending {
    None,
    Array { id: u64, sizes: [u64; 9] },
    Instance { id: u64, class_id: u64 },
}

/// Follows a chunk's records in file order and gathers [`LayoutEvidence`]. The histogram and the graph's
/// first pass both read records through one of these, so they reach the same verdict.
pub struct EvidenceCollector {
    sizer: ArraySizer,
    id_size: u32,
    pending: Pending,
    previous: Option<u64>,
    samples_left: u32,
    /// Objects that may still vote in this chunk.
    budget: u32,
    pub evidence: LayoutEvidence,
}

impl EvidenceCollector {
    pub fn new(id_size: u32) -> EvidenceCollector {
        EvidenceCollector::aligned(id_size, 8)
    }

    /// For objects aligned to `alignment` bytes (what a file states).
    pub fn aligned(id_size: u32, alignment: u64) -> EvidenceCollector {
        let candidates = Layout::candidates_aligned(id_size, alignment);
        let n = candidates.len();
        EvidenceCollector {
            sizer: ArraySizer::new(&candidates),
            id_size,
            pending: Pending::None,
            previous: None,
            samples_left: INSTANCE_SAMPLES_PER_CHUNK,
            budget: VOTING_OBJECTS_PER_CHUNK,
            evidence: LayoutEvidence { array_votes: vec![0; n], ..Default::default() },
        }
    }

    /// Takes the next record (the first `VOTING_OBJECTS_PER_CHUNK` objects of the chunk vote).
    #[inline]
    pub fn see(&mut self, r: &HeapRecord<'_>) {
        if self.budget == 0 || r.is_root() {
            return;
        }
        if let Some(id) = r.object_id() {
            self.see_shape(id, Shape::of(r));
        }
    }

    /// Takes the next object, by address and shape.
    pub fn see_shape(&mut self, id: u64, shape: Shape) {
        let sizes = match shape {
            Shape::ObjectArray(_) | Shape::PrimitiveArray(..) => self.sizer.sizes(shape, self.id_size),
            _ => [0; 9],
        };
        self.see_sized(id, shape, &sizes);
    }

    /// Takes the next array, by address, shape and slot sizes ([`ArraySizer::slot_sizes`]).
    #[inline]
    pub fn see_array(&mut self, id: u64, shape: Shape, slot_sizes: &[u64; ARRAY_SLOTS]) {
        if self.budget == 0 {
            return;
        }
        let sizes = self.sizer.expand(shape, self.id_size, slot_sizes);
        self.see_sized(id, shape, &sizes);
    }

    /// Takes the next object, by address, shape and (for arrays) its sizes under each candidate.
    pub fn see_sized(&mut self, id: u64, shape: Shape, sizes: &[u64; 9]) {
        if self.budget == 0 {
            return;
        }
        self.budget -= 1;
        let ev = &mut self.evidence;
        ev.highest_id = ev.highest_id.max(id);
        ev.lowest_id = if ev.objects == 0 { id } else { ev.lowest_id.min(id) };
        ev.objects += 1;
        ev.above_compressed_oops += (COMPRESSED_OOPS_LIMIT..NO_ADDRESS_FROM).contains(&id) as u64;
        if let Some(prev) = self.previous {
            if id > prev {
                ev.ascending += 1;
            } else {
                ev.descending += 1;
            }
        }
        self.previous = Some(id);
        let gap = |prev: u64| id.checked_sub(prev).filter(|g| *g > 0 && *g <= MAX_GAP);
        match std::mem::replace(&mut self.pending, Pending::None) {
            Pending::Array { id: prev, sizes } => {
                if let Some(g) = gap(prev) {
                    ev.array_pairs += 1;
                    for (v, s) in ev.array_votes.iter_mut().zip(&sizes) {
                        *v += (*s == g) as u64;
                    }
                }
            }
            Pending::Instance { id: prev, class_id } => {
                if let Some(g) = gap(prev) {
                    *ev.instance_gaps.entry((class_id, g as u32)).or_default() += 1;
                }
            }
            Pending::None => {}
        }
        self.pending = match shape {
            Shape::Instance(class_id) if self.samples_left > 0 => {
                self.samples_left -= 1;
                Pending::Instance { id, class_id }
            }
            Shape::ObjectArray(_) | Shape::PrimitiveArray(..) => Pending::Array { id, sizes: *sizes },
            _ => Pending::None,
        };
    }

    /// No instance sample limit (for objects already sampled by address).
    pub fn unlimited(mut self) -> EvidenceCollector {
        self.samples_left = u32::MAX;
        self.budget = u32::MAX;
        self
    }

    /// Whether objects still vote (the caller may skip computing what only the vote needs).
    pub fn wants_more(&self) -> bool {
        self.budget > 0
    }

    pub fn sizer(&self) -> &ArraySizer {
        &self.sizer
    }
}

/// What sizes an object, for voting.
#[derive(Debug, Clone, Copy)]
pub enum Shape {
    Instance(u64),
    ObjectArray(u64),
    PrimitiveArray(BasicType, u64),
    Other,
}

impl Shape {
    pub fn of(r: &HeapRecord<'_>) -> Shape {
        match r {
            HeapRecord::InstanceDump { class_id, .. } => Shape::Instance(*class_id),
            HeapRecord::ObjectArrayDump { length, .. } => Shape::ObjectArray(*length as u64),
            HeapRecord::PrimitiveArrayDump { length, element_type, .. }
            | HeapRecord::PrimitiveArrayNoData { length, element_type, .. } => {
                Shape::PrimitiveArray(*element_type, *length as u64)
            }
            _ => Shape::Other,
        }
    }
}

impl LayoutEvidence {
    /// The file does not list objects in address order (the agent's dumps follow references): its
    /// neighbours in the file are not neighbours in memory, and the evidence must come from objects
    /// sorted by address.
    pub fn out_of_address_order(&self) -> bool {
        self.descending * 10 > self.ascending + self.descending
    }

    /// The address window holding about `wanted` objects, from the lowest address.
    pub fn window(&self, wanted: u64) -> (u64, u64) {
        let span = self.highest_id.saturating_sub(self.lowest_id);
        if self.objects <= wanted {
            return (self.lowest_id, self.highest_id);
        }
        let width = (span as u128 * wanted as u128 / self.objects.max(1) as u128) as u64;
        (self.lowest_id, self.lowest_id + width)
    }
}

/// The verdict: the layout, and how sure.
#[derive(Debug, Clone)]
pub struct LayoutChoice {
    pub layout: Layout,
    /// Neighbour pairs that fit some layouts and not others.
    pub telling_pairs: u64,
    /// Of those, the share that fits the chosen layout.
    pub fit: f64,
    /// The runner-up and its share, when there is one.
    pub runner_up: Option<(Layout, f64)>,
    /// Given with `--layout`, not detected.
    pub forced: bool,
    /// Stated in the file ([`LayoutNote`]), not detected.
    pub stated: bool,
    /// What else decided it (addresses).
    pub note: Option<String>,
}

impl LayoutChoice {
    /// Where the layout came from: `given` (`--layout`), `file` (stated in it) or `detected`.
    pub fn source(&self) -> &'static str {
        if self.forced {
            "given"
        } else if self.stated {
            "file"
        } else {
            "detected"
        }
    }

    pub fn describe(&self) -> String {
        if self.forced {
            return format!("{}, given with --layout", self.layout.describe());
        }
        if self.stated {
            return format!("{}, as the file states (its writer read the JVM's flags)", self.layout.describe());
        }
        if self.telling_pairs == 0 {
            return format!("{}, assumed: no neighbouring objects tell the layouts apart", self.layout.describe());
        }
        let mut s = format!(
            "{}: {:.1}% of {} neighbouring objects that tell the layouts apart fit it",
            self.layout.describe(),
            self.fit * 100.0,
            self.telling_pairs
        );
        if let Some((l, f)) = &self.runner_up {
            s.push_str(&format!("; next best: {} at {:.1}%", l.kind.name(), f * 100.0));
        }
        if let Some(n) = &self.note {
            s.push_str("; ");
            s.push_str(n);
        }
        s
    }
}

/// Scores every candidate on the evidence; `instance_size(layout, class_id)` sizes an instance under a
/// candidate (`None` for classes the dump lacks). `forced` is the user's `--layout`, `stated` what the file
/// says; either decides (`forced` first). The file's object alignment holds under `--layout` too.
pub fn choose(
    id_size: u32,
    ev: &LayoutEvidence,
    forced: Option<LayoutKind>,
    stated: Option<&LayoutNote>,
    instance_size: &dyn Fn(&Layout, u64) -> Option<u64>,
) -> LayoutChoice {
    let candidates = Layout::candidates_aligned(id_size, alignment_of(stated));
    let mut votes: Vec<u64> = (0..candidates.len()).map(|i| ev.array_votes.get(i).copied().unwrap_or(0)).collect();
    let mut telling = 0u64;
    // A pair tells the layouts apart when some candidates fit it and others do not.
    let mut fits = vec![false; candidates.len()];
    for (&(class_id, gap), &n) in &ev.instance_gaps {
        for (f, l) in fits.iter_mut().zip(&candidates) {
            *f = instance_size(l, class_id) == Some(gap as u64);
        }
        if fits.iter().any(|f| *f) && !fits.iter().all(|f| *f) {
            telling += n as u64;
            for (v, f) in votes.iter_mut().zip(&fits) {
                *v += *f as u64 * n as u64;
            }
        }
    }
    // Array pairs: counted as telling when they fit some candidate and not all. The per-pair detail is
    // gone, so count the pairs that fit the best and the worst candidates apart.
    let array_best = ev.array_votes.iter().copied().max().unwrap_or(0);
    let array_worst = ev.array_votes.iter().copied().min().unwrap_or(0);
    telling += array_best - array_worst;
    // Most objects, not just some: a dump may name a few objects by numbers of its own (our agent does).
    let high = ev.above_compressed_oops * 2 > ev.objects && id_size == 8;
    let allowed = |l: &Layout| match forced {
        Some(k) => l.kind == k || (id_size == 4),
        None => !(high && l.compressed_oops()),
    };
    let default = |l: &Layout| match (high, l.kind) {
        (false, LayoutKind::CompressedOops | LayoutKind::Bits32) => 1,
        (true, LayoutKind::CompressedClassPointers) => 1,
        _ => 0,
    };
    let mut order: Vec<usize> = (0..candidates.len()).filter(|&i| allowed(&candidates[i])).collect();
    if order.is_empty() {
        order = (0..candidates.len()).collect();
    }
    order.sort_by_key(|&i| std::cmp::Reverse((votes[i], default(&candidates[i]))));
    let stated = stated.filter(|_| forced.is_none() && id_size == 8);
    let stated_at = stated.and_then(|n| candidates.iter().position(|c| *c == Layout::from_note(id_size, n)));
    let best = stated_at.unwrap_or(order[0]);
    // Each candidate's share of the telling pairs: its votes beyond what every candidate got.
    let floor = votes.iter().copied().min().unwrap_or(0);
    let share = |i: usize| if telling == 0 { 0.0 } else { ((votes[i] - floor) as f64 / telling as f64).min(1.0) };
    let runner_up = order.get(1).map(|&i| (candidates[i], share(i)));
    LayoutChoice {
        layout: candidates[best],
        telling_pairs: telling,
        fit: share(best),
        runner_up: if forced.is_some() || stated_at.is_some() { None } else { runner_up },
        forced: forced.is_some(),
        stated: stated_at.is_some(),
        note: (high && forced.is_none() && stated_at.is_none())
            .then(|| format!("most objects at 0x{:x} and above: no compressed oops", COMPRESSED_OOPS_LIMIT)),
    }
}

/// The object alignment a file states, else HotSpot's default, 8.
pub fn alignment_of(stated: Option<&LayoutNote>) -> u64 {
    stated.map_or(8, |n| n.object_alignment as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn array_sizes_match_hotspot() {
        let l32 = Layout::new(4, false);
        assert_eq!(l32.primitive_array_size(BasicType::Char, 3), 24);
        assert_eq!(l32.primitive_array_size(BasicType::Long, 1), 24);
        let c = Layout::new(8, true);
        assert_eq!(c.object_array_size(3), 32);
        assert_eq!(c.primitive_array_size(BasicType::Byte, 0), 16);
        let u = Layout::new(8, false);
        assert_eq!(u.primitive_array_size(BasicType::Int, 0), 24);
        assert_eq!(u.primitive_array_size(BasicType::Int, 1), 32);
        let u22 = Layout::of(8, LayoutKind::Uncompressed, true);
        assert_eq!(u22.primitive_array_size(BasicType::Int, 1), 24);
        assert_eq!(u22.primitive_array_size(BasicType::Long, 1), 32);
        let ccp = Layout::of(8, LayoutKind::CompressedClassPointers, false);
        assert_eq!(ccp.object_array_size(1), 24);
        let compact = Layout::of(8, LayoutKind::CompactHeaders, false);
        assert_eq!(compact.primitive_array_size(BasicType::Byte, 4), 16);
        assert_eq!(compact.primitive_array_size(BasicType::Int, 1), 16);
        assert_eq!(compact.primitive_array_size(BasicType::Long, 1), 24);
        assert_eq!(compact.object_array_size(1), 16);
        let compact8 = Layout::of(8, LayoutKind::CompactHeadersUncompressedOops, false);
        assert_eq!(compact8.object_array_size(1), 24);
    }
}

#[cfg(test)]
mod choice_tests {
    use super::*;

    fn note(compressed_oops: bool) -> LayoutNote {
        LayoutNote {
            compressed_oops,
            compressed_class_pointers: true,
            compact_headers: false,
            object_alignment: 8,
            packed_arrays: true,
        }
    }

    /// Evidence of `n` objects at `first`, `first + 16`, … (no arrays, no instance gaps to vote).
    fn objects_from(first: u64, n: u64) -> LayoutEvidence {
        let mut c = EvidenceCollector::new(8);
        for i in 0..n {
            c.see_shape(first + 16 * i, Shape::Other);
        }
        c.evidence
    }

    #[test]
    fn a_stated_layout_decides_and_layout_given_overrides_it() {
        let ev = objects_from(0x7_0000_0000, 100);
        let none = |_: &Layout, _| None;
        let stated = choose(8, &ev, None, Some(&note(false)), &none);
        assert_eq!(stated.layout.kind, LayoutKind::CompressedClassPointers);
        assert_eq!(stated.source(), "file");
        assert!(stated.describe().contains("as the file states"), "{}", stated.describe());
        let given = choose(8, &ev, Some(LayoutKind::Uncompressed), Some(&note(false)), &none);
        assert_eq!((given.layout.kind, given.source()), (LayoutKind::Uncompressed, "given"));
        let detected = choose(8, &ev, None, None, &none);
        assert_eq!((detected.layout.kind, detected.source()), (LayoutKind::CompressedOops, "detected"));
    }

    #[test]
    fn identifiers_above_every_address_do_not_rule_compressed_oops_out() {
        let none = |_: &Layout, _| None;
        // ZGC's heap, at 4 TB: real addresses beyond compressed oops' reach.
        let zgc = choose(8, &objects_from(4 << 40, 100), None, None, &none);
        assert_eq!(zgc.layout.kind, LayoutKind::CompressedClassPointers);
        // A writer's own numbers (our agent's tags start at 2^61).
        let numbers = choose(8, &objects_from(1 << 61, 100), None, None, &none);
        assert_eq!(numbers.layout.kind, LayoutKind::CompressedOops, "{}", numbers.describe());
        assert!(numbers.note.is_none());
    }

    #[test]
    fn a_stated_alignment_rounds_every_size() {
        let n = LayoutNote { object_alignment: 16, ..note(true) };
        let choice = choose(8, &objects_from(0x7_0000_0000, 10), None, Some(&n), &|_, _| None);
        let l = choice.layout;
        assert_eq!((l.kind, l.alignment), (LayoutKind::CompressedOops, 16));
        assert_eq!(l.object_array_size(1), 32, "16 + 4, rounded to 16");
        assert_eq!(l.primitive_array_size(BasicType::Byte, 0), 16);
        assert_eq!(l.instance_size(4, 0), 16);
        assert!(l.describe().contains("16-byte object alignment"), "{}", l.describe());
        let candidates = Layout::candidates_aligned(8, 16);
        let sizer = ArraySizer::new(&candidates);
        for len in [0u64, 1, 3, 5] {
            let by_candidate = sizer.sizes(Shape::PrimitiveArray(BasicType::Int, len), 8);
            for (i, c) in candidates.iter().enumerate() {
                assert_eq!(by_candidate[i], c.primitive_array_size(BasicType::Int, len), "{c:?} int[{len}]");
            }
        }
        let given = choose(8, &objects_from(0x7_0000_0000, 10), Some(LayoutKind::Uncompressed), Some(&n), &|_, _| None);
        assert_eq!(given.layout.alignment, 16, "--layout keeps the file's alignment");
    }

    #[test]
    fn stated_flags_map_to_the_layouts() {
        let l = |oops, ccp, compact, packed| {
            let n = LayoutNote {
                compressed_oops: oops,
                compressed_class_pointers: ccp,
                compact_headers: compact,
                object_alignment: 8,
                packed_arrays: packed,
            };
            Layout::from_note(8, &n)
        };
        assert_eq!(l(true, true, false, true), Layout::of(8, LayoutKind::CompressedOops, false));
        assert_eq!(l(false, false, false, true), Layout::of(8, LayoutKind::Uncompressed, true));
        assert_eq!(l(false, false, false, false), Layout::of(8, LayoutKind::Uncompressed, false));
        assert_eq!(l(true, false, false, false), Layout::of(8, LayoutKind::CompressedOopsOnly, false));
        assert_eq!(l(true, true, true, true), Layout::of(8, LayoutKind::CompactHeaders, false));
        assert_eq!(l(false, true, true, true), Layout::of(8, LayoutKind::CompactHeadersUncompressedOops, false));
        for flags in [(true, true, false), (false, true, false), (true, false, false), (false, false, false)] {
            for packed in [false, true] {
                let layout = l(flags.0, flags.1, flags.2, packed);
                assert!(Layout::candidates(8).contains(&layout), "{layout:?} is no candidate");
            }
        }
    }
}

#[cfg(test)]
mod sizer_tests {
    use super::*;

    #[test]
    fn slots_size_arrays_as_each_layout_does() {
        for id_size in [4, 8] {
            let candidates = Layout::candidates(id_size);
            let sizer = ArraySizer::new(&candidates);
            assert!(sizer.slots.iter().all(|s| s.len() <= ARRAY_SLOTS), "{:?}", sizer.slots);
            for n in [0u64, 1, 2, 3, 5, 7, 100] {
                let by_candidate = sizer.sizes(Shape::ObjectArray(n), id_size);
                for (i, l) in candidates.iter().enumerate() {
                    assert_eq!(by_candidate[i], l.object_array_size(n), "{l:?} Object[{n}]");
                }
                for t in [BasicType::Boolean, BasicType::Char, BasicType::Short, BasicType::Int, BasicType::Double] {
                    let by_candidate = sizer.sizes(Shape::PrimitiveArray(t, n), id_size);
                    for (i, l) in candidates.iter().enumerate() {
                        assert_eq!(by_candidate[i], l.primitive_array_size(t, n), "{l:?} {t:?}[{n}]");
                    }
                }
            }
        }
    }
}
