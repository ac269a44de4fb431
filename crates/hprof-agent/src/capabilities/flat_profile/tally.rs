//! The counts: per thread, ticks per table row (code and native) and the thread-local ticks; for the whole
//! VM, the global summary's ticks.

use super::classify::{Bucket, Row, Side};
use rustc_hash::FxHashMap;

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counts {
    pub code: u64,
    pub native: u64,
}

#[derive(Debug, Default, Clone)]
pub struct ThreadTally {
    pub rows: FxHashMap<Row, Counts>,
    pub blocked: u64,
    pub class_loader: u64,
    pub interpreter: u64,
    pub compilation: u64,
    pub unknown: u64,
}

impl ThreadTally {
    /// Counts one CPU tick.
    pub fn add(&mut self, bucket: &Bucket) {
        match bucket {
            Bucket::Method(row, side) => {
                let c = self.rows.entry(row.clone()).or_default();
                match side {
                    Side::Code => c.code += 1,
                    Side::Native => c.native += 1,
                }
            }
            Bucket::Interpreter => self.interpreter += 1,
            Bucket::ClassLoader => self.class_loader += 1,
            Bucket::Unknown => self.unknown += 1,
        }
    }
}

/// The global summary: wall-clock ticks of the profiler's own timer and what the VM did at each.
#[derive(Debug, Default, Clone, Copy)]
pub struct GlobalTally {
    pub received: u64,
    pub gc: u64,
    pub compilation: u64,
    pub vm_operations: u64,
}
