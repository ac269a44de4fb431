//! JVMPI_EVENT_OBJECT_ALLOC: every allocation, from JVMTI's SampledObjectAlloc at interval 0 (which sees the
//! allocations the interpreter and compiled code make inline) and VMObjectAlloc (what the VM allocates
//! itself, e.g. by reflection). Each allocation is reported on the allocating thread, after the class's
//! CLASS_LOAD. Arena IDs are always 1, as in HotSpot's JVMPI.
//!
//! Allocating threads must not wait on each other. So, where the collector moves objects only inside its
//! pauses, an allocation takes no lock and sets no tag: the class's kind comes from a per-thread cache
//! keyed by the class object's address, the object's ID from a per-thread block of IDs, and the VM's
//! second report of an object it allocated itself is recognised by the object's address among the
//! thread's last sampled ones (`alloc_thread.rs`). The object is tagged with its ID only when the agent
//! can name it again (`ids.rs`): OBJECT_FREE on, or an ID handed back. Otherwise — and always under ZGC
//! and Shenandoah — the first report tags the object and the second finds the tag.

use crate::abi::*;
use crate::alloc_thread::{self, AllocThread};
use crate::classes::AllocKind;
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
    if !layer.is_enabled(JVMPI_EVENT_OBJECT_ALLOC) || object.is_null() || class.is_null() {
        return;
    }
    if !crate::threads::ensure_started(layer, jni, thread) {
        return;
    }
    let tag_all = !alloc_thread::addresses_stable();
    let tagged = || tag_all || layer.is_enabled(JVMPI_EVENT_OBJECT_FREE) || crate::ids::handed_back();
    let fast =
        if tag_all { None } else { alloc_thread::with(|t| untagged(layer, jni, t, object, class, size, sampled)) };
    // A VM report of an object the sampler's report tagged (the slow path below, or tagged after delivery).
    let tagged_before = || !sampled && crate::ids::existing_tag(layer, object) != 0;
    let (kind, id, untagged_id) = match fast {
        Some(Some(Lookup::Duplicate)) => return,
        Some(Some(Lookup::Fresh { kind, id })) if !tagged() => {
            if tagged_before() {
                return;
            }
            (kind, id, true)
        }
        // Tagged: the ID is the object's tag.
        _ => {
            if tagged_before() {
                return;
            }
            (crate::classes::alloc_kind(layer, jni, class), tag_id(layer, object), false)
        }
    };
    let mut ev = JVMPI_Event::new(JVMPI_EVENT_OBJECT_ALLOC, jni.raw());
    ev.u.obj_alloc = ObjAlloc {
        arena_id: 1,
        class_id: kind.class_id,
        is_array: kind.is_array,
        size: size.clamp(0, i32::MAX as i64) as i32,
        obj_id: crate::ids::as_id(id),
    };
    deliver(&mut ev, false);
    // The agent handed an ID back while handling this event: from now on it may name this object too.
    if untagged_id && tagged() {
        let _ = layer.jvmti.set_tag(object, id);
    }
}

enum Lookup {
    /// VMObjectAlloc for an object the sampler reported just before.
    Duplicate,
    Fresh {
        kind: AllocKind,
        id: i64,
    },
}

/// The lock-free path: `None` when it cannot answer (a collection ran while addresses were read).
fn untagged(
    layer: &Layer,
    jni: Jni,
    t: &mut AllocThread,
    object: sys::jobject,
    class: sys::jclass,
    size: i64,
    sampled: bool,
) -> Option<Lookup> {
    let before = crate::gc::epoch();
    // SAFETY: `object` and `class` are the JNI local references this allocation event was given, on this
    // thread, live until it returns.
    let (object_at, class_at) = unsafe {
        (hotspot::jni_handles::slot_word(object as *const _), hotspot::jni_handles::slot_word(class as *const _))
    };
    // An odd epoch: a collection is running and may be moving the objects under us.
    if before % 2 == 1 || crate::gc::epoch() != before || object_at == 0 || class_at == 0 {
        return None;
    }
    t.enter_epoch(before);
    if sampled {
        t.remember_sampled(object_at, size);
    } else if t.was_sampled(object_at, size) {
        return Some(Lookup::Duplicate);
    }
    let class_load_on = layer.is_enabled(JVMPI_EVENT_CLASS_LOAD);
    let kind = match t.kind(class_at, class_load_on) {
        Some(k) => k,
        None => {
            let k = crate::classes::alloc_kind(layer, jni, class);
            t.remember_kind(class_at, k, class_load_on);
            k
        }
    };
    Some(Lookup::Fresh { kind, id: t.fresh_id() })
}

/// The object's tag, set now if it has none; 0 if it cannot be tagged.
fn tag_id(layer: &Layer, object: sys::jobject) -> i64 {
    crate::ids::tag_of_id(crate::ids::id_of(layer, object))
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
