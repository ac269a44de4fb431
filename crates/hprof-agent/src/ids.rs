//! Identifiers the agent hands out, and the layout of the tags it puts on objects.
//!
//! HPROF identifiers for objects (threads, classes, heap-dump objects) come from one counter so that a
//! thread's `obj=` in THREAD START is the same identifier a heap dump uses for that thread object.

use std::sync::atomic::{AtomicU64, Ordering};

/// The object identifier counter.
#[derive(Debug)]
pub struct ObjectIds(AtomicU64);

impl Default for ObjectIds {
    fn default() -> Self {
        // Start away from zero (the null reference) and from small numbers that look like serials.
        ObjectIds(AtomicU64::new(0x1000))
    }
}

impl ObjectIds {
    pub fn next(&self) -> u64 {
        self.0.fetch_add(1, Ordering::Relaxed)
    }

    /// Reserves `n` consecutive identifiers and returns the first.
    pub fn reserve(&self, n: u64) -> u64 {
        self.0.fetch_add(n, Ordering::Relaxed)
    }
}

/// Tags in the agent's main JVMTI environment.
///
/// Bit 62 marks a class object (the rest is its index in the class table). Any other non-zero tag belongs to
/// the allocation tracker (heap=sites), which encodes the object's site in it. Heap dumps tag objects in a
/// separate JVMTI environment, so their temporary identifiers never collide with these.
pub mod main_tag {
    pub const CLASS_BIT: i64 = 1 << 62;

    pub fn class(index: u32) -> i64 {
        CLASS_BIT | index as i64
    }

    pub fn is_class(tag: i64) -> bool {
        tag & CLASS_BIT != 0
    }

    pub fn class_index(tag: i64) -> Option<u32> {
        is_class(tag).then_some((tag & 0xFFFF_FFFF) as u32)
    }
}
