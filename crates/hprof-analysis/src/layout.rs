//! Object sizes as HotSpot lays objects out. A heap dump stores field values, not the object's memory, so
//! the shallow size is rebuilt: object header + fields (references at the VM's reference size), rounded up
//! to 8 bytes; arrays: header with length, elements aligned to their size, rounded up to 8.
//!
//! | VM | identifiers | object header | array elements start at | reference |
//! |---|---|---|---|---|
//! | 32-bit | 4 bytes | 8 | 12 (16 for long/double) | 4 |
//! | 64-bit, compressed oops | 8 bytes | 12 | 16 | 4 |
//! | 64-bit, uncompressed | 8 bytes | 16 | 24 | 8 |
//!
//! The file does not say whether a 64-bit VM compressed its references, so [`OopVotes`] looks at the
//! addresses: consecutive arrays sit exactly one object size apart, which tells the layouts apart.
//! Fields are summed without HotSpot's gap filling between a class and its superclass, so an instance can
//! come out up to 8 bytes larger than the VM's; every object of a class gets the same size, so histograms
//! and retained sizes stay consistent.

use hprof_format::binary::HeapRecord;
use hprof_format::tags::BasicType;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Layout {
    pub id_size: u32,
    pub compressed_oops: bool,
}

fn align8(n: u64) -> u64 {
    (n + 7) & !7
}

impl Layout {
    pub fn new(id_size: u32, compressed_oops: bool) -> Layout {
        Layout { id_size, compressed_oops: id_size == 8 && compressed_oops }
    }

    pub fn describe(&self) -> &'static str {
        match (self.id_size, self.compressed_oops) {
            (4, _) => "32-bit (8-byte object headers, 4-byte references)",
            (_, true) => "64-bit with compressed oops (12-byte object headers, 4-byte references)",
            _ => "64-bit without compressed oops (16-byte object headers, 8-byte references)",
        }
    }

    pub fn ref_size(&self) -> u64 {
        if self.id_size == 4 || self.compressed_oops { 4 } else { 8 }
    }

    pub fn object_header(&self) -> u64 {
        match (self.id_size, self.compressed_oops) {
            (4, _) => 8,
            (_, true) => 12,
            _ => 16,
        }
    }

    fn array_base(&self, elem: u64) -> u64 {
        match (self.id_size, self.compressed_oops) {
            (4, _) => {
                if elem >= 8 {
                    16
                } else {
                    12
                }
            }
            (_, true) => 16,
            _ => 24,
        }
    }

    /// An instance whose fields take `field_bytes` in the file, `ref_fields` of them references.
    pub fn instance_size(&self, field_bytes: u64, ref_fields: u64) -> u64 {
        let shrink = ref_fields * (self.id_size as u64 - self.ref_size());
        align8(self.object_header() + field_bytes.saturating_sub(shrink))
    }

    pub fn object_array_size(&self, length: u64) -> u64 {
        let r = self.ref_size();
        align8(self.array_base(r) + length * r)
    }

    pub fn primitive_array_size(&self, ty: BasicType, length: u64) -> u64 {
        let e = ty.size(self.id_size) as u64;
        align8(self.array_base(e) + length * e)
    }
}

/// Evidence for and against compressed oops on a 64-bit dump.
#[derive(Debug, Clone, Copy, Default)]
pub struct OopVotes {
    pub compressed: u64,
    pub uncompressed: u64,
}

impl OopVotes {
    /// An array at `id` followed in the file by an object at `next`: if the gap is exactly the array's
    /// size under one layout, that layout gets a vote.
    pub fn observe(&mut self, id: u64, next: u64, size_compressed: u64, size_uncompressed: u64) {
        if next <= id || size_compressed == size_uncompressed {
            return;
        }
        let gap = next - id;
        if gap == size_compressed {
            self.compressed += 1;
        } else if gap == size_uncompressed {
            self.uncompressed += 1;
        }
    }

    pub fn merge(&mut self, o: OopVotes) {
        self.compressed += o.compressed;
        self.uncompressed += o.uncompressed;
    }

    pub fn layout(&self, id_size: u32) -> Layout {
        Layout::new(id_size, self.compressed > self.uncompressed)
    }
}

/// Follows a chunk's records in file order, sizes each array under both layouts and votes with the gap to
/// the object after it. The histogram and the graph's first pass both read records through one of these.
pub struct ArrayVoter {
    compressed: Layout,
    uncompressed: Layout,
    /// The previous record, if it was an array: its id and its sizes (compressed, uncompressed).
    prev: Option<(u64, u64, u64)>,
    pub votes: OopVotes,
}

impl ArrayVoter {
    pub fn new(id_size: u32) -> ArrayVoter {
        ArrayVoter {
            compressed: Layout::new(id_size, true),
            uncompressed: Layout::new(id_size, false),
            prev: None,
            votes: OopVotes::default(),
        }
    }

    /// Takes the next record; for an array returns its size under each layout (compressed, uncompressed).
    pub fn see(&mut self, r: &HeapRecord<'_>) -> Option<(u64, u64)> {
        let id = r.object_id();
        if let (Some((pid, sc, su)), Some(id)) = (self.prev, id) {
            self.votes.observe(pid, id, sc, su);
        }
        let sizes = match r {
            HeapRecord::ObjectArrayDump { length, .. } => Some((
                self.compressed.object_array_size(*length as u64),
                self.uncompressed.object_array_size(*length as u64),
            )),
            HeapRecord::PrimitiveArrayDump { length, element_type, .. }
            | HeapRecord::PrimitiveArrayNoData { length, element_type, .. } => Some((
                self.compressed.primitive_array_size(*element_type, *length as u64),
                self.uncompressed.primitive_array_size(*element_type, *length as u64),
            )),
            _ => None,
        };
        self.prev = match (sizes, id) {
            (Some((sc, su)), Some(id)) => Some((id, sc, su)),
            _ => None,
        };
        sizes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_match_hotspot() {
        let l32 = Layout::new(4, false);
        // java.lang.String of JDK 5/6: value, offset, count, hash.
        assert_eq!(l32.instance_size(16, 1), 24);
        assert_eq!(l32.primitive_array_size(BasicType::Char, 3), 24);
        assert_eq!(l32.primitive_array_size(BasicType::Long, 1), 24);
        let c = Layout::new(8, true);
        assert_eq!(c.instance_size(20, 1), 32);
        assert_eq!(c.object_array_size(3), 32);
        let u = Layout::new(8, false);
        assert_eq!(u.instance_size(20, 1), 40);
        assert_eq!(u.primitive_array_size(BasicType::Int, 0), 24);
    }
}
