//! EnableEvent, DisableEvent and RequestEvent: which JVMTI events each JVMPI event needs, switched on and
//! off at run time through the jvmti crate's event hub (METHOD_ENTRY and METHOD_ENTRY2 share MethodEntry,
//! for one: it stays on while either is).

use crate::abi::*;
use crate::layer::{Layer, layer};
use jvmti::{Event, HubError, JvmtiError, sys};
use std::sync::atomic::Ordering;

/// Where each JVMPI event comes from. `None`: JVMTI cannot provide it (JVMPI_NOT_AVAILABLE).
/// Events the layer always listens to (VMInit, VMDeath, ThreadStart, ThreadEnd) need nothing more.
fn sources(event_type: sys::jint) -> Option<&'static [Event]> {
    Some(match event_type {
        JVMPI_EVENT_METHOD_ENTRY | JVMPI_EVENT_METHOD_ENTRY2 => &[Event::MethodEntry],
        JVMPI_EVENT_METHOD_EXIT => &[Event::MethodExit],
        // The collection events first: allocation caches are kept per collection epoch (`gc.rs`).
        JVMPI_EVENT_OBJECT_ALLOC => &[
            Event::GarbageCollectionStart,
            Event::GarbageCollectionFinish,
            Event::SampledObjectAlloc,
            Event::VmObjectAlloc,
        ],
        JVMPI_EVENT_OBJECT_FREE | JVMPI_EVENT_CLASS_UNLOAD => &[Event::ObjectFree],
        // IDs are tags and never move: enabling succeeds and no event is ever due.
        JVMPI_EVENT_OBJECT_MOVE => &[],
        JVMPI_EVENT_COMPILED_METHOD_LOAD => &[Event::CompiledMethodLoad],
        JVMPI_EVENT_COMPILED_METHOD_UNLOAD => &[Event::CompiledMethodUnload],
        JVMPI_EVENT_THREAD_START | JVMPI_EVENT_THREAD_END => &[],
        JVMPI_EVENT_CLASS_LOAD_HOOK => &[Event::ClassFileLoadHook],
        JVMPI_EVENT_CLASS_LOAD => &[Event::ClassPrepare],
        JVMPI_EVENT_DATA_DUMP_REQUEST => &[Event::DataDumpRequest],
        JVMPI_EVENT_JVM_INIT_DONE | JVMPI_EVENT_JVM_SHUT_DOWN => &[],
        JVMPI_EVENT_MONITOR_CONTENDED_ENTER => &[Event::MonitorContendedEnter],
        JVMPI_EVENT_MONITOR_CONTENDED_ENTERED => &[Event::MonitorContendedEntered],
        JVMPI_EVENT_MONITOR_WAIT => &[Event::MonitorWait],
        JVMPI_EVENT_MONITOR_WAITED => &[Event::MonitorWait, Event::MonitorWaited],
        JVMPI_EVENT_GC_START => &[Event::GarbageCollectionStart],
        // Sent by the layer's own raw monitors (monitors.rs).
        JVMPI_EVENT_RAW_MONITOR_CONTENDED_ENTER
        | JVMPI_EVENT_RAW_MONITOR_CONTENDED_ENTERED
        | JVMPI_EVENT_RAW_MONITOR_CONTENDED_EXIT => &[],
        // The layer's wrappers of the JNI functions (jni_refs.rs).
        JVMPI_EVENT_JNI_GLOBALREF_ALLOC
        | JVMPI_EVENT_JNI_GLOBALREF_FREE
        | JVMPI_EVENT_JNI_WEAK_GLOBALREF_ALLOC
        | JVMPI_EVENT_JNI_WEAK_GLOBALREF_FREE => &[],
        JVMPI_EVENT_GC_FINISH => &[Event::GarbageCollectionFinish],
        _ => return None,
    })
}

/// Whether any enabled JVMPI event other than `except` comes from `event`.
fn still_wanted(layer: &Layer, event: Event, except: sys::jint) -> bool {
    (1..=JVMPI_MAX_EVENT_TYPE_VAL)
        .filter(|&t| t != except && layer.is_enabled(t))
        .any(|t| sources(t).is_some_and(|src| src.contains(&event)))
}

/// Switches a JVMTI event through the hub, which counts its users. An -Xrun agent's JVM_OnLoad runs in
/// JVMTI's start phase, where events cannot be switched: VMInit switches on whatever is wanted by then
/// (`apply_at_vm_init`).
fn set_jvmti_event(layer: &Layer, event: Event, on: bool) -> bool {
    let Some((hub, me)) = crate::event_hub::get() else { return false };
    let result = if on { hub.enable(layer.jvmti, me, event) } else { hub.disable(layer.jvmti, me, event) };
    match result {
        Ok(()) => true,
        Err(HubError::Jvmti { error: JvmtiError(sys::JVMTI_ERROR_WRONG_PHASE), .. }) => true,
        Err(e) => {
            crate::log::warning(&format!("JVMTI event {}: {e}", event.name()));
            false
        }
    }
}

/// At VMInit: switches on the JVMTI events of everything enabled during the start phase.
pub fn apply_at_vm_init(layer: &Layer) {
    if (JVMPI_EVENT_JNI_GLOBALREF_ALLOC..=JVMPI_EVENT_JNI_WEAK_GLOBALREF_FREE).any(|e| layer.is_enabled(e)) {
        crate::jni_refs::install(layer);
    }
    for t in 1..=JVMPI_MAX_EVENT_TYPE_VAL {
        if layer.is_enabled(t) {
            for &e in sources(t).unwrap_or(&[]) {
                set_jvmti_event(layer, e, true);
            }
        }
    }
}

pub fn enable(event_type: sys::jint, _arg: *mut std::ffi::c_void) -> sys::jint {
    let Some(l) = layer() else { return JVMPI_FAIL };
    let Some(src) = sources(event_type) else { return JVMPI_NOT_AVAILABLE };
    if event_type == JVMPI_EVENT_METHOD_ENTRY2 && !crate::local_access::allow_method_entry2(l) {
        return JVMPI_NOT_AVAILABLE;
    }
    if !l.set_enabled(event_type, true) {
        return JVMPI_SUCCESS; // Already on.
    }
    let mut ok = true;
    for &e in src {
        ok &= set_jvmti_event(l, e, true);
    }
    if !ok {
        crate::log::warning(&format!("event {event_type} could not be enabled: the JVM refused its JVMTI event"));
        l.set_enabled(event_type, false);
        for &e in src {
            if !still_wanted(l, e, event_type) {
                set_jvmti_event(l, e, false);
            }
        }
        return JVMPI_FAIL;
    }
    if (JVMPI_EVENT_JNI_GLOBALREF_ALLOC..=JVMPI_EVENT_JNI_WEAK_GLOBALREF_FREE).contains(&event_type) {
        // Refused in the OnLoad phase: VMInit installs them then.
        crate::jni_refs::install(l);
    }
    if event_type == JVMPI_EVENT_OBJECT_ALLOC
        && l.live.load(Ordering::Acquire)
        && let Some(jni) = l.current_jni()
    {
        crate::alloc::prime_current_thread(jni);
    }
    JVMPI_SUCCESS
}

pub fn disable(event_type: sys::jint, _arg: *mut std::ffi::c_void) -> sys::jint {
    let Some(l) = layer() else { return JVMPI_FAIL };
    let Some(src) = sources(event_type) else { return JVMPI_NOT_AVAILABLE };
    if l.set_enabled(event_type, false) {
        for &e in src {
            // The hub counts subscribers, not JVMPI events: the layer keeps a shared JVMTI event on while
            // another enabled JVMPI event comes from it.
            if !still_wanted(l, e, event_type) {
                set_jvmti_event(l, e, false);
            }
        }
    }
    JVMPI_SUCCESS
}

/// RequestEvent: the event is sent on the calling thread before this returns, with JVMPI_REQUESTED_EVENT.
pub fn request(event_type: sys::jint, arg: *mut std::ffi::c_void) -> sys::jint {
    let Some(l) = layer() else { return JVMPI_FAIL };
    let Some(jni) = l.current_jni() else { return JVMPI_FAIL };
    match event_type {
        JVMPI_EVENT_CLASS_LOAD => {
            let class = crate::ids::object_of(l, arg.cast());
            if class.is_null() {
                return JVMPI_FAIL;
            }
            crate::classes::send_class_load(l, jni, class, arg.cast(), true);
            jni.delete_local_ref(class);
            JVMPI_SUCCESS
        }
        JVMPI_EVENT_THREAD_START => {
            let thread = crate::ids::object_of(l, arg.cast());
            if thread.is_null() {
                return JVMPI_FAIL;
            }
            let record = crate::threads::by_thread_object(jni, thread);
            jni.delete_local_ref(thread);
            match record {
                Some(r) => {
                    crate::threads::send_start(l, jni, &r, true);
                    JVMPI_SUCCESS
                }
                None => JVMPI_FAIL,
            }
        }
        JVMPI_EVENT_OBJECT_ALLOC => crate::alloc::send_requested(l, jni, arg.cast()),
        JVMPI_EVENT_HEAP_DUMP => crate::heap_dump::request(l, jni, arg),
        JVMPI_EVENT_MONITOR_DUMP => crate::monitor_dump::request(l, jni),
        JVMPI_EVENT_OBJECT_DUMP => crate::object_records::request_object_dump(l, jni, arg.cast()),
        _ => JVMPI_NOT_AVAILABLE,
    }
}
