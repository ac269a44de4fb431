//! JVMPI_EVENT_OBJECT_ALLOC: every allocation, from JVMTI's SampledObjectAlloc at interval 0 (which sees the
//! allocations the interpreter and compiled code make inline) and VMObjectAlloc (what the VM allocates
//! itself, e.g. by reflection).
//!
//! The VM reports its own allocations to both; the first report tags the object (its ID), so the second
//! finds a tag and is dropped. Each allocation is reported on the allocating thread, after the class's
//! CLASS_LOAD. Arena IDs are always 1, as in HotSpot's JVMPI.

use crate::abi::*;
use crate::layer::{Layer, deliver};
use jvmti::{Jni, sys};

/// An allocation JVMTI reported; `sampled` tells the two sources apart.
pub fn on_alloc(
    layer: &Layer,
    jni: Jni,
    thread: sys::jthread,
    object: sys::jobject,
    class: sys::jclass,
    size: i64,
    sampled: bool,
) {
    if sampled && consume_priming_sample() {
        return;
    }
    if !layer.is_enabled(JVMPI_EVENT_OBJECT_ALLOC) || object.is_null() {
        return;
    }
    if !sampled && crate::ids::existing_tag(layer, object) != 0 {
        return; // Already reported by SampledObjectAlloc.
    }
    if !crate::threads::ensure_started(layer, jni, thread) {
        return;
    }
    let kind = crate::classes::alloc_kind(layer, jni, class);
    let obj_id = crate::ids::id_of(layer, object);
    let mut ev = JVMPI_Event::new(JVMPI_EVENT_OBJECT_ALLOC, jni.raw());
    ev.u.obj_alloc = ObjAlloc {
        arena_id: 1,
        class_id: kind.class_id,
        is_array: kind.is_array,
        size: size.clamp(0, i32::MAX as i64) as i32,
        obj_id,
    };
    deliver(&mut ev, false);
}

/// RequestEvent(OBJECT_ALLOC, id): the object's allocation event again, on the calling thread.
pub fn send_requested(layer: &Layer, jni: Jni, id: jobjectID) -> sys::jint {
    let object = crate::ids::object_of(layer, id);
    if object.is_null() {
        return JVMPI_FAIL;
    }
    let class = jni.object_class(object);
    let kind = crate::classes::alloc_kind(layer, jni, class);
    let size = layer.jvmti.object_size(object).unwrap_or(0);
    let mut ev = JVMPI_Event::new(JVMPI_EVENT_OBJECT_ALLOC, jni.raw());
    ev.u.obj_alloc =
        ObjAlloc { arena_id: 1, class_id: kind.class_id, is_array: kind.is_array, size: size as i32, obj_id: id };
    deliver(&mut ev, true);
    jni.delete_local_ref(class);
    jni.delete_local_ref(object);
    JVMPI_SUCCESS
}

// Priming: the main thread's first sample point was drawn before Agent_OnLoad set the interval to 0; the
// shared jvmti::sampler_priming allocates until the sampler reports one (at VMInit and when OBJECT_ALLOC is
// enabled on a live thread), and those reports are dropped.
use jvmti::sampler_priming::consume_priming_sample;
pub use jvmti::sampler_priming::prime_current_thread;
