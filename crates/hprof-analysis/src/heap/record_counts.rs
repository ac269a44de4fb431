//! How many sub-records of each kind a heap dump holds.

use hprof_format::binary::HeapRecord;

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
    pub(super) fn add(&mut self, r: &HeapRecord<'_>) {
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

    pub(super) fn merge(&mut self, o: &SubRecordCounts) {
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
