//! DisableGC / EnableGC / RunGC, and the GC_START / GC_FINISH events.
//!
//! JVMTI cannot stop the collector, and the layer does not need it to: object IDs are tags, which the
//! collector keeps with their objects (see `ids.rs`). DisableGC and EnableGC keep the nesting count the
//! specification describes; RunGC forces a full collection.

use crate::abi::*;
use crate::layer::{deliver, layer};
use std::sync::atomic::{AtomicU64, Ordering};

/// Collection epochs: moved at the start and at the end of every collection pause, so odd while one runs.
/// Object addresses read within one even epoch name the same objects (`alloc_thread.rs`).
static EPOCH: AtomicU64 = AtomicU64::new(0);

/// The current collection epoch; odd while a collection runs.
pub fn epoch() -> u64 {
    EPOCH.load(Ordering::Acquire)
}

pub fn disable() {
    if let Some(l) = layer() {
        l.gc_disabled.fetch_add(1, Ordering::SeqCst);
    }
}

pub fn enable() {
    if let Some(l) = layer() {
        let _ = l.gc_disabled.fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| (n > 0).then_some(n - 1));
    }
}

pub fn run() {
    if let Some(l) = layer() {
        let _ = l.jvmti.force_garbage_collection();
    }
}

/// GarbageCollectionStart, on the thread doing the collection (not a Java thread: env_id is null).
pub fn on_start() {
    EPOCH.fetch_add(1, Ordering::AcqRel);
    let Some(l) = layer() else { return };
    if l.is_enabled(JVMPI_EVENT_GC_START) {
        let mut ev = JVMPI_Event::new(JVMPI_EVENT_GC_START, std::ptr::null_mut());
        deliver(&mut ev, false);
    }
}

/// GarbageCollectionFinish, with the heap figures `heap_figures` can read (-1 where unknown).
pub fn on_finish() {
    EPOCH.fetch_add(1, Ordering::AcqRel);
    let Some(l) = layer() else { return };
    if l.is_enabled(JVMPI_EVENT_GC_FINISH) {
        let mut ev = JVMPI_Event::new(JVMPI_EVENT_GC_FINISH, std::ptr::null_mut());
        let (used_objects, used_object_space, total_object_space) = crate::heap_figures::snapshot();
        ev.u.gc_info = GcInfo { used_objects, used_object_space, total_object_space };
        deliver(&mut ev, false);
    }
}
