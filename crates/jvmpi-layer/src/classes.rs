//! Classes: their IDs, whether the agent has had their CLASS_LOAD, and what an allocation of one reports.
//!
//! A class is announced once, on the first of: its JVMTI ClassPrepare, the first allocation of an instance
//! (or of an array of it), and the replay at VMInit of every class loaded before the agent could hear of
//! it. An allocation of a class that another thread is announcing waits until that announcement has been
//! delivered, so that the agent always has a class's CLASS_LOAD before its first OBJECT_ALLOC.

use crate::abi::*;
use crate::class_load::ClassLoadData;
use crate::layer::{Layer, deliver};
use jvmti::{Jni, sys};
use rustc_hash::FxHashMap;
use std::sync::{Condvar, Mutex, MutexGuard};
use std::thread::ThreadId;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Announced {
    No,
    InProgress(ThreadId),
    Yes,
}

/// What an allocation of an instance of this class reports.
#[derive(Debug, Clone, Copy)]
pub struct AllocKind {
    pub is_array: sys::jint,
    /// The class itself for an instance; the element class for an object array; null for primitive arrays.
    pub class_id: jobjectID,
}

// SAFETY: a jobjectID is a number (a tag) in pointer clothing, not a pointer to anything.
unsafe impl Send for AllocKind {}

struct ClassEntry {
    announced: Announced,
    kind: Option<AllocKind>,
}

struct ClassTable {
    map: Mutex<Option<FxHashMap<i64, ClassEntry>>>,
    announced: Condvar,
}

static CLASSES: ClassTable = ClassTable { map: Mutex::new(None), announced: Condvar::new() };

fn lock() -> MutexGuard<'static, Option<FxHashMap<i64, ClassEntry>>> {
    CLASSES.map.lock().unwrap_or_else(|e| e.into_inner())
}

/// The class's ID (its tag), registering it as a class.
pub fn class_id(layer: &Layer, class: sys::jclass) -> jobjectID {
    let id = crate::ids::id_of(layer, class);
    if !id.is_null() {
        lock()
            .get_or_insert_with(FxHashMap::default)
            .entry(crate::ids::tag_of_id(id))
            .or_insert(ClassEntry { announced: Announced::No, kind: None });
    }
    id
}

/// Whether a tag names a class (for ObjectFree: CLASS_UNLOAD rather than OBJECT_FREE). Forgets it.
pub fn take_class_tag(tag: i64) -> bool {
    lock().as_mut().is_some_and(|m| m.remove(&tag).is_some())
}

/// Sends CLASS_LOAD for `class` unless it has been sent; waits if another thread is sending it.
pub fn ensure_announced(layer: &Layer, jni: Jni, class: sys::jclass) {
    if !layer.is_enabled(JVMPI_EVENT_CLASS_LOAD) || class.is_null() {
        return;
    }
    let id = class_id(layer, class);
    if id.is_null() {
        return;
    }
    let tag = crate::ids::tag_of_id(id);
    let me = std::thread::current().id();
    {
        let mut guard = lock();
        loop {
            let entry = guard
                .get_or_insert_with(FxHashMap::default)
                .entry(tag)
                .or_insert(ClassEntry { announced: Announced::No, kind: None });
            match entry.announced {
                Announced::Yes => return,
                // Our own announcement allocates an instance of the class: let it through.
                Announced::InProgress(t) if t == me => return,
                Announced::InProgress(_) => {
                    guard = CLASSES.announced.wait(guard).unwrap_or_else(|e| e.into_inner());
                }
                Announced::No => {
                    entry.announced = Announced::InProgress(me);
                    break;
                }
            }
        }
    }
    send_class_load(layer, jni, class, id, false);
    if let Some(e) = lock().as_mut().and_then(|m| m.get_mut(&tag)) {
        e.announced = Announced::Yes;
    }
    CLASSES.announced.notify_all();
}

/// Builds and delivers CLASS_LOAD for `class` on the calling thread.
pub fn send_class_load(layer: &Layer, jni: Jni, class: sys::jclass, id: jobjectID, requested: bool) {
    let mut data = ClassLoadData::read(layer.jvmti, class);
    let mut ev = data.event(jni.raw(), id);
    deliver(&mut ev, requested);
}

/// Announces every class loaded so far (at VMInit, for the classes loaded before the agent was told).
pub fn announce_loaded(layer: &Layer, jni: Jni) {
    if !layer.is_enabled(JVMPI_EVENT_CLASS_LOAD) {
        return;
    }
    let Ok(classes) = layer.jvmti.loaded_classes() else { return };
    for class in classes {
        let status = layer.jvmti.class_status(class).unwrap_or(0);
        // Unprepared classes get theirs at ClassPrepare; array classes when an allocation needs them.
        if status & sys::JVMTI_CLASS_STATUS_PREPARED != 0 && status & sys::JVMTI_CLASS_STATUS_ARRAY == 0 {
            ensure_announced(layer, jni, class);
        }
        jni.delete_local_ref(class);
    }
}

/// What an allocation of `class` reports, cached per class; announces the class (or element class) first.
pub fn alloc_kind(layer: &Layer, jni: Jni, class: sys::jclass) -> AllocKind {
    let id = class_id(layer, class);
    let tag = crate::ids::tag_of_id(id);
    let cached = lock().as_ref().and_then(|m| m.get(&tag)).and_then(|e| e.kind);
    let kind = match cached {
        Some(k) => k,
        None => {
            let k = compute_kind(layer, jni, class, id);
            if let Some(e) = lock().as_mut().and_then(|m| m.get_mut(&tag)) {
                e.kind = Some(k);
            }
            k
        }
    };
    // An object array's element class was announced when its kind was computed; a primitive array names
    // no class.
    if kind.class_id == id {
        ensure_announced(layer, jni, class);
    }
    kind
}

fn compute_kind(layer: &Layer, jni: Jni, class: sys::jclass, id: jobjectID) -> AllocKind {
    let sig = layer.jvmti.class_signature(class).unwrap_or_default();
    let b = sig.as_bytes();
    if b.first() != Some(&b'[') {
        return AllocKind { is_array: JVMPI_NORMAL_OBJECT, class_id: id };
    }
    let prim = match b.get(1) {
        Some(b'Z') => JVMPI_BOOLEAN,
        Some(b'B') => JVMPI_BYTE,
        Some(b'C') => JVMPI_CHAR,
        Some(b'S') => JVMPI_SHORT,
        Some(b'I') => JVMPI_INT,
        Some(b'J') => JVMPI_LONG,
        Some(b'F') => JVMPI_FLOAT,
        Some(b'D') => JVMPI_DOUBLE,
        _ => JVMPI_CLASS,
    };
    if prim != JVMPI_CLASS {
        return AllocKind { is_array: prim, class_id: std::ptr::null_mut() };
    }
    let element = component_type(jni, class);
    let element_id = if element.is_null() {
        std::ptr::null_mut()
    } else {
        ensure_announced(layer, jni, element);
        let id = class_id(layer, element);
        jni.delete_local_ref(element);
        id
    };
    AllocKind { is_array: JVMPI_CLASS, class_id: element_id }
}

/// `Class.getComponentType()` through the `componentType` field (a plain field read, JDK 9 and newer).
fn component_type(jni: Jni, class: sys::jclass) -> sys::jclass {
    let Ok(class_class) = jni.find_class(c"java/lang/Class") else {
        jni.exception_clear();
        return std::ptr::null_mut();
    };
    let field = jni.field_id(class_class, c"componentType", c"Ljava/lang/Class;");
    jni.delete_local_ref(class_class);
    match field {
        Ok(f) => jni.object_field(class, f),
        Err(_) => {
            jni.exception_clear();
            std::ptr::null_mut()
        }
    }
}
