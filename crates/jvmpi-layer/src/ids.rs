//! Object IDs are JVMTI tags.
//!
//! A `jobjectID` is the object's tag, a number from a counter that the layer sets on the object the first
//! time it names it (at its allocation, or when a class, thread or monitor object first appears in an
//! event). A tag moves with its object, so IDs stay valid across garbage collections: JVMPI_EVENT_OBJECT_MOVE
//! is never needed and never sent, and an ID is undefined only by OBJECT_FREE (or CLASS_UNLOAD for a class).
//! The agent's DisableGC therefore only protects what the specification lets it protect, never an ID.

use crate::abi::jobjectID;
use crate::layer::Layer;
use jvmti::sys;
use std::sync::atomic::{AtomicI64, Ordering};

/// Tags are handed out from 1 up; 0 means "untagged" to JVMTI.
static NEXT_TAG: AtomicI64 = AtomicI64::new(1);

pub fn fresh_tag() -> i64 {
    NEXT_TAG.fetch_add(1, Ordering::Relaxed)
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
    let tag = tag_of_id(id);
    if tag <= 0 {
        return std::ptr::null_mut();
    }
    match layer.jvmti.objects_with_tags(&[tag]) {
        Ok(found) => found.first().map(|(o, _)| *o).unwrap_or(std::ptr::null_mut()),
        Err(_) => std::ptr::null_mut(),
    }
}
