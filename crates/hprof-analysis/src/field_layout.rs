//! Where HotSpot puts an instance's fields, as its field layout builder does since JDK 15
//! (src/hotspot/share/classfile/fieldLayoutBuilder.cpp), so that an instance's size is the VM's and
//! not a sum of field sizes:
//!
//! - the superclass's fields keep their offsets; the gaps between them (and the 4 bytes after a
//!   12-byte header) are holes a subclass may fill;
//! - the class's primitive fields go in from the largest to the smallest, each into the smallest hole
//!   that fits it at its natural alignment, else at the end; then its references, the same way;
//! - `@Contended` fields (a group per annotation value) go after 128 bytes of padding at the end, with
//!   128 more after them; a `@Contended` class is padded before and after its fields, and a subclass of a
//!   class with `@Contended` fields starts after 128 bytes of padding and fills no holes;
//! - the instance ends where its last field ends, rounded up to 8 bytes.
//!
//! A heap dump names fields but says nothing of their offsets, of the fields HotSpot injects (see
//! [`crate::injected`]) nor of `@Contended`; those come from tables per JDK.

/// `ContendedPaddingWidth`'s default.
pub const CONTENDED_PADDING: u32 = 128;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Reserved,
    Field,
    Empty,
    Padding,
}

#[derive(Debug, Clone, Copy)]
struct Block {
    offset: u32,
    size: u32,
    kind: Kind,
}

/// An instance layout: what a subclass inherits.
#[derive(Debug, Clone, Default)]
pub struct InstanceLayout {
    /// (offset, size) of the runs of bytes that instance fields take, inherited ones included: adjacent
    /// fields are one run, since a subclass only looks for the holes between them. A deep hierarchy's
    /// layouts then stay small, where a list of every inherited field per class grew with classes × fields.
    pub fields: Vec<(u32, u32)>,
    /// Where the last field ends.
    pub end: u32,
    /// The class or a superclass has `@Contended` fields (subclasses then only append, after padding).
    pub contended: bool,
}

impl InstanceLayout {
    /// Shallow size of an instance, with `alignment`-byte object alignment (8 by default).
    pub fn instance_size(&self, alignment: u64) -> u64 {
        (self.end as u64).next_multiple_of(alignment)
    }
}

/// A class's own instance fields as the builder sees them.
#[derive(Debug, Clone, Default)]
pub struct OwnFields {
    /// Sizes of the primitive fields (1, 2, 4 or 8).
    pub primitives: Vec<u32>,
    /// How many reference fields.
    pub references: u32,
    /// `@Contended("group")` fields: per group, (primitive sizes, reference count).
    pub contended_groups: Vec<(Vec<u32>, u32)>,
    /// The class itself is `@Contended`.
    pub contended_class: bool,
}

struct Builder {
    blocks: Vec<Block>,
    /// Index of the block where hole searches stop (exclusive): HotSpot's `_start`.
    start: usize,
}

impl Builder {
    fn last(&self) -> usize {
        self.blocks.len() - 1
    }

    /// Puts `size` bytes of `kind` at the start of the empty block `slot`, which shrinks behind it.
    fn insert(&mut self, slot: usize, size: u32, kind: Kind) -> usize {
        let b = self.blocks[slot];
        self.blocks.insert(slot, Block { offset: b.offset, size, kind });
        let rest = &mut self.blocks[slot + 1];
        rest.offset += size;
        rest.size = rest.size.saturating_sub(size);
        // `start` names a block, as HotSpot's pointer does: the split block moved one place on.
        if self.start >= slot {
            self.start += 1;
        }
        slot + 1
    }

    fn insert_field(&mut self, slot: usize, size: u32) {
        let mut slot = slot;
        let off = self.blocks[slot].offset;
        if !off.is_multiple_of(size) {
            slot = self.insert(slot, size - off % size, Kind::Empty);
        }
        slot = self.insert(slot, size, Kind::Field);
        if self.blocks[slot].size == 0 && slot != self.last() {
            self.blocks.remove(slot);
            if self.start > slot {
                self.start -= 1;
            }
        }
    }

    fn fits(b: &Block, size: u32) -> bool {
        let adjust = if !b.offset.is_multiple_of(size) { size - b.offset % size } else { 0 };
        b.size >= size + adjust
    }

    /// HotSpot's `FieldLayout::add`: each field into the smallest hole after `start` that fits, else at
    /// the end. A failed search is not repeated for the next field of the same size.
    fn add(&mut self, sizes: &[u32], start: usize) {
        let mut last_size = 0;
        let mut last_failed = false;
        for &size in sizes {
            let candidate = if start == self.last() || (size == last_size && last_failed) {
                self.last()
            } else {
                last_size = size;
                let mut best: Option<usize> = None;
                let mut i = self.last();
                while i > start {
                    i -= 1;
                    if i == start {
                        break;
                    }
                    let b = &self.blocks[i];
                    if b.kind == Kind::Empty && Self::fits(b, size) && best.is_none_or(|c| b.size < self.blocks[c].size)
                    {
                        best = Some(i);
                    }
                }
                last_failed = best.is_none();
                best.unwrap_or(self.last())
            };
            self.insert_field(candidate, size);
        }
    }
}

/// Lays out a class whose superclass has `super_layout` (`None` for a class without a superclass, whose
/// fields start right after the `header`); references take `ref_size` bytes.
pub fn lay_out(header: u32, ref_size: u32, super_layout: Option<&InstanceLayout>, own: &OwnFields) -> InstanceLayout {
    let mut blocks = vec![Block { offset: 0, size: header, kind: Kind::Reserved }];
    let mut inherited = super_layout.map(|s| s.fields.clone()).unwrap_or_default();
    inherited.sort_unstable();
    let super_contended = super_layout.is_some_and(|s| s.contended);
    let hole = if super_contended { Kind::Padding } else { Kind::Empty };
    let mut end = header;
    for &(offset, size) in &inherited {
        if offset > end {
            blocks.push(Block { offset: end, size: offset - end, kind: hole });
        }
        blocks.push(Block { offset, size, kind: Kind::Field });
        end = end.max(offset + size);
    }
    if super_contended {
        blocks.push(Block { offset: end, size: CONTENDED_PADDING, kind: Kind::Padding });
        end += CONTENDED_PADDING;
    }
    blocks.push(Block { offset: end, size: u32::MAX / 2, kind: Kind::Empty });
    let append_only = super_contended && !inherited.is_empty();
    let mut b = Builder { start: 0, blocks };
    if append_only {
        b.start = b.last();
    }
    if own.contended_class {
        b.start = b.last();
        let last = b.last();
        b.insert(last, CONTENDED_PADDING, Kind::Padding);
        b.start = b.last();
    }
    let mut primitives = own.primitives.clone();
    primitives.sort_unstable_by(|a, b| b.cmp(a));
    b.add(&primitives, b.start);
    b.add(&vec![ref_size; own.references as usize], b.start);
    let mut padded = own.contended_class;
    for (prims, refs) in &own.contended_groups {
        let last = b.last();
        b.insert(last, CONTENDED_PADDING, Kind::Padding);
        let mut prims = prims.clone();
        prims.sort_unstable_by(|a, b| b.cmp(a));
        let start = b.last();
        b.add(&prims, start);
        b.add(&vec![ref_size; *refs as usize], b.last());
        padded = true;
    }
    if padded {
        let last = b.last();
        b.insert(last, CONTENDED_PADDING, Kind::Padding);
    }
    let mut fields: Vec<(u32, u32)> = Vec::new();
    for x in b.blocks.iter().filter(|x| x.kind == Kind::Field) {
        match fields.last_mut() {
            Some((o, s)) if *o + *s == x.offset => *s += x.size,
            _ => fields.push((x.offset, x.size)),
        }
    }
    InstanceLayout {
        fields,
        end: b.blocks[b.last()].offset,
        contended: super_contended || own.contended_class || !own.contended_groups.is_empty(),
    }
}

/// The static fields of a class, laid out behind the `java.lang.Class` instance fields of its mirror
/// (`mirror_instance_size` bytes): the mirror's size, a multiple of `alignment`.
pub fn mirror_size(
    mirror_instance_size: u64,
    static_primitives: &[u32],
    static_references: u32,
    ref_size: u32,
    alignment: u64,
) -> u64 {
    // Statics start 8-byte aligned and go largest first, so the only gap can be before the references.
    let mut own =
        OwnFields { primitives: static_primitives.to_vec(), references: static_references, ..Default::default() };
    own.primitives.retain(|&s| s > 0);
    let l = lay_out(0, ref_size, None, &own);
    (mirror_instance_size + ((l.end as u64 + 7) & !7)).next_multiple_of(alignment)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn own(primitives: &[u32], references: u32) -> OwnFields {
        OwnFields { primitives: primitives.to_vec(), references, ..Default::default() }
    }

    #[test]
    fn fields_fill_the_gap_after_a_12_byte_header() {
        // class A { long l; byte b; }: b at 12, l at 16: 24 bytes.
        let a = lay_out(12, 4, None, &own(&[8, 1], 0));
        assert_eq!(a.instance_size(8), 24);
        assert!(a.fields.contains(&(12, 1)) && a.fields.contains(&(16, 8)));
        // class B extends A { int i; }: the 3 bytes after b are too small; i goes at 24: 32 bytes.
        let b = lay_out(12, 4, Some(&a), &own(&[4], 0));
        assert_eq!(b.instance_size(8), 32);
        // class C extends A { byte c; }: c at 13, in the gap: still 24.
        let c = lay_out(12, 4, Some(&a), &own(&[1], 0));
        assert_eq!(c.instance_size(8), 24);
        // Without compressed class pointers (16-byte header): A is 32 bytes.
        assert_eq!(lay_out(16, 8, None, &own(&[8, 1], 0)).instance_size(8), 32);
        // Compact headers: int at 8, 16 bytes.
        assert_eq!(lay_out(8, 4, None, &own(&[4, 4], 0)).instance_size(8), 16);
    }

    #[test]
    fn references_go_last_and_fill_holes() {
        // class R { Object r; }: 12 + 4 = 16 with compressed oops; 12 -> 16 + 8 = 24 without.
        assert_eq!(lay_out(12, 4, None, &own(&[], 1)).instance_size(8), 16);
        assert_eq!(lay_out(12, 8, None, &own(&[], 1)).instance_size(8), 24);
        // Inherited 1-byte field at 12 leaves [13, 16): a subclass's int cannot fit, goes at 16.
        let a = lay_out(12, 4, None, &own(&[1], 0));
        assert_eq!(lay_out(12, 4, Some(&a), &own(&[4], 0)).instance_size(8), 24);
    }

    #[test]
    fn contended_fields_are_padded() {
        // java.lang.Thread of JDK 17 (compressed oops): 368 bytes and a one-boolean subclass 376 in
        // GC.class_histogram; @Contended("tlr") long threadLocalRandomSeed, int probe, int secondary seed.
        let mut t = own(&[4, 8, 8, 8, 1, 1, 1, 4], 11);
        t.contended_groups.push((vec![8, 4, 4], 0));
        let thread = lay_out(12, 4, None, &t);
        assert_eq!(thread.instance_size(8), 368);
        // A subclass appends after 128 more bytes of padding.
        assert_eq!(lay_out(12, 4, Some(&thread), &own(&[1], 0)).instance_size(8), 376);
    }

    #[test]
    fn mirrors_add_their_statics() {
        assert_eq!(mirror_size(104, &[], 0, 4, 8), 104);
        assert_eq!(mirror_size(104, &[8, 4, 1], 1, 4, 8), 104 + 24);
    }
}
