//! Object IDs are JVMTI tags.
//!
//! A `jobjectID` is the object's tag, a number from a counter that the layer sets on the object the first
//! time it names it (at its allocation, or when a class, thread or monitor object first appears in an
//! event). A tag moves with its object, so IDs stay valid across garbage collections: JVMPI_EVENT_OBJECT_MOVE
//! is never needed and never sent, and an ID is undefined only by OBJECT_FREE (or CLASS_UNLOAD for a class).
//! The agent's DisableGC therefore only protects what the specification lets it protect, never an ID.
//!
//! An allocated object is tagged only when the agent can name it again: while OBJECT_FREE is enabled, or
//! once the agent has handed any ID back to the layer ([`object_of`]). Before that its OBJECT_ALLOC
//! carries a fresh number from the same counter, set on no object (`alloc.rs`): a tag per allocation is a
//! lock and a hash-table entry in the JVM, and would serialize every allocating thread.

use crate::abi::jobjectID;
use crate::layer::Layer;
use jvmti::sys;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};

/// Tags are handed out from 1 up; 0 means "untagged" to JVMTI.
static NEXT_TAG: AtomicI64 = AtomicI64::new(1);

/// Set once the agent has handed an ID back to the layer: from then on every allocated object is tagged.
static HANDED_BACK: AtomicBool = AtomicBool::new(false);

pub fn fresh_tag() -> i64 {
    NEXT_TAG.fetch_add(1, Ordering::Relaxed)
}

/// The first of `n` consecutive fresh tags.
pub fn fresh_tags(n: i64) -> i64 {
    NEXT_TAG.fetch_add(n, Ordering::Relaxed)
}

/// Whether the agent has ever handed an ID back (RequestEvent, GetThreadObject's and GetMethodClass's
/// inverse, a dump's argument): then it may hand back any allocation's ID.
pub fn handed_back() -> bool {
    HANDED_BACK.load(Ordering::Relaxed)
}

pub fn as_id(tag: i64) -> jobjectID {
    tag as usize as jobjectID
}

pub fn tag_of_id(id: jobjectID) -> i64 {
    id as usize as i64
}

/// The object's tag, or 0 when it has none (or is null).
pub fn existing_tag(layer: &Layer, object: sys::jobject) -> i64 {
    if object.is_null() {
        return 0;
    }
    layer.jvmti.tag(object).unwrap_or(0)
}

/// The object's ID, tagging it now if it has none. Null gives null.
pub fn id_of(layer: &Layer, object: sys::jobject) -> jobjectID {
    if object.is_null() {
        return std::ptr::null_mut();
    }
    let tag = existing_tag(layer, object);
    if tag != 0 {
        return as_id(tag);
    }
    let tag = fresh_tag();
    match layer.jvmti.set_tag(object, tag) {
        Ok(()) => as_id(tag),
        Err(_) => std::ptr::null_mut(),
    }
}

/// A local reference to the object an ID names, or null if it is unknown or was collected.
pub fn object_of(layer: &Layer, id: jobjectID) -> sys::jobject {
    HANDED_BACK.store(true, Ordering::Relaxed);
    let tag = tag_of_id(id);
    if tag <= 0 {
        return std::ptr::null_mut();
    }
    match layer.jvmti.objects_with_tags(&[tag]) {
        Ok(found) => found.first().map(|(o, _)| *o).unwrap_or(std::ptr::null_mut()),
        Err(_) => std::ptr::null_mut(),
    }
}
